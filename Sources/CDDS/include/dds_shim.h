#ifndef DL_DDS_SHIM_H
#define DL_DDS_SHIM_H
// A small C surface over Eclipse Cyclone DDS for depthlens (`dl_dds_`): topics whose samples are
// raw CDR bytes (the 4-byte encapsulation header and the serialized message, as on the wire),
// so Swift encodes and decodes ROS 2 messages itself and no IDL code is generated.
// Entities are Cyclone's int32 handles; a negative value is a DDS_RETCODE_* error (dl_dds_error).
#include <stdint.h>
#include <stddef.h>

/// Creates a domain participant. `config` (nullable): Cyclone configuration XML appended to the
/// one CYCLONEDDS_URI names; `domain` < 0 takes the default domain (0).
int32_t dl_dds_participant(int32_t domain, const char *config);
/// A topic of raw CDR samples with ROS 2's DDS type name (e.g. "sensor_msgs::msg::dds_::Image_").
int32_t dl_dds_topic(int32_t participant, const char *topic, const char *type_name);

/// QoS: reliable (else best effort), transient-local (else volatile), keep-last `depth`.
typedef struct dl_dds_qos {
    int reliable;
    int transient_local;
    int depth;
} dl_dds_qos;

int32_t dl_dds_reader(int32_t participant, int32_t topic, dl_dds_qos qos);
int32_t dl_dds_writer(int32_t participant, int32_t topic, dl_dds_qos qos);

/// Writes one sample: `size` bytes of CDR, encapsulation header included; `timestamp_ns` is the
/// source timestamp (ns since the Unix epoch; < 0: now). Returns 0 or a negative DDS_RETCODE_.
int32_t dl_dds_write(int32_t writer, const void *cdr, uint32_t size, int64_t timestamp_ns);

/// A buffer for a sample of `size` bytes (the encapsulation header and the CDR), to fill and hand to
/// dl_dds_write_buffer; NULL when out of memory.
uint8_t *dl_dds_buffer(uint32_t size);
/// Writes the `size` bytes `buffer` (from dl_dds_buffer) holds without copying them: the sample
/// takes the buffer over (it is freed with the sample, or here when the write fails before that).
/// The source timestamp is the time of this call, after the message was made. Returns 0 or a
/// negative DDS_RETCODE_.
int32_t dl_dds_write_buffer(int32_t writer, uint8_t *buffer, uint32_t size);

/// One taken sample: its bytes stay valid until dl_dds_release.
typedef struct dl_dds_sample {
    const uint8_t *data;
    uint32_t size;
    /// Source timestamp (ns since the Unix epoch) the writer stamped it with.
    int64_t source_timestamp_ns;
    /// The writer's sequence number (RTPS writerSN) when the sample came over the network, else 0:
    /// a gap between two samples of one writer is samples lost on the way.
    int64_t sequence;
    /// When the last of its fragments had arrived and Cyclone handed the reassembled sample to the
    /// sertype (CLOCK_REALTIME, ns since the Unix epoch), or 0 when it did not come over the network.
    int64_t received_ns;
    /// The writer (its instance handle on this participant).
    uint64_t writer;
    void *handle;
} dl_dds_sample;

/// Takes the next sample of `reader`: 1 when one was taken, 0 when none waits, < 0 on error.
/// Samples without data (a writer's disposal) are skipped.
int32_t dl_dds_take(int32_t reader, dl_dds_sample *out);
void dl_dds_release(dl_dds_sample *sample);

/// Called with the reader and `ctx` when `reader` has new data, on the thread that delivered it
/// (Cyclone's receive thread for a sample from the network).
typedef void (*dl_dds_data_fn)(int32_t reader, void *ctx);
/// Sets `reader`'s data-available listener. Deleting the reader (or its participant) waits for a
/// call in progress. Returns 0 or < 0.
int32_t dl_dds_on_data(int32_t reader, dl_dds_data_fn fn, void *ctx);

/// A waitset woken by data on any of the readers attached with dl_dds_waitset_attach, or by
/// dl_dds_waitset_wake from another thread.
int32_t dl_dds_waitset(int32_t participant);
int32_t dl_dds_waitset_attach(int32_t waitset, int32_t reader);
/// Waits up to `timeout_ns`; returns the number of triggered conditions (0 on timeout) or < 0.
int32_t dl_dds_waitset_wait(int32_t waitset, int64_t timeout_ns);
int32_t dl_dds_waitset_wake(int32_t waitset);

/// How many writers are matched with `reader` now (publication_matched's current_count), or < 0.
int32_t dl_dds_matched_writers(int32_t reader);
/// How many readers are matched with `writer` now, or < 0.
int32_t dl_dds_matched_readers(int32_t writer);

/// Samples Cyclone knows `reader` lost (sample_lost's total_count: gaps in a writer's sequence,
/// e.g. a best-effort sample whose fragments did not all arrive), or < 0.
int32_t dl_dds_samples_lost(int32_t reader);

/// A reader of the built-in DCPSPublication topic (every writer discovered on the domain).
int32_t dl_dds_publications_reader(int32_t participant);
/// Reads (without taking) the discovered writers into `buf` as lines "TOPIC\tTYPE\tRELIABLE\n"
/// (RELIABLE: 1 or 0), nul-terminated, truncated to `cap`. Returns the number of writers or < 0.
int32_t dl_dds_publications(int32_t reader, char *buf, size_t cap);

/// Deletes an entity and its children (a participant: everything it made).
int32_t dl_dds_delete(int32_t entity);
/// Cyclone's text for a negative return value.
const char *dl_dds_error(int32_t code);

#endif
