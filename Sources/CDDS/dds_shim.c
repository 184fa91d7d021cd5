// Raw-CDR topics for Eclipse Cyclone DDS 0.10 (see include/dds_shim.h).
//
// A sertype whose samples are byte blobs: what arrives over the network (the DDSI fragment chain,
// reassembled) is kept as the bytes it is, encapsulation header first, and handed to Swift by
// dds_takecdr; what Swift writes goes out as the bytes it gave. Cyclone never interprets the data:
// no key (ROS 2 messages have none), no type information (so no XTypes type lookup is started for
// these topics), only the type name, which must equal the peer's for the endpoints to match.
// The same shape as rmw_cyclonedds' serdata.cpp, in C.
#include "dds_shim.h"

#include <dds/dds.h>
#include <dds/ddsi/ddsi_sertype.h>
#include <dds/ddsi/ddsi_serdata.h>
#include <dds/ddsi/q_radmin.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

struct blob_serdata {
    struct ddsi_serdata c;
    uint32_t size;       // bytes of CDR including the 4-byte encapsulation header
    int64_t seq;         // the writer's sequence number when it came over the network, else 0
    int64_t received_ns; // when Cyclone handed over the reassembled sample (CLOCK_REALTIME, ns), else 0
    unsigned char *data; // size rounded up to 4, zero padded (to_ser may read up to alignup4(size))
    uint32_t cap;        // bytes allocated at data (at least alignup4(size) + 4)
};

/// The sertype, and the data buffers of its samples that were let go, kept for the next ones: a
/// 2.7 MB image buffer that is freed goes back to the system, and a new one is 660 fresh pages to
/// fault in (on the receive path, between a sample's last fragment and its reader: ~1 ms here);
/// a kept one is already mapped. Only buffers of BLOB_SPARE_MIN bytes and more are kept.
enum { BLOB_SPARES = 4, BLOB_SPARE_MIN = 65536 };
struct blob_sertype {
    struct ddsi_sertype c;
    pthread_mutex_t lock;
    unsigned char *spare[BLOB_SPARES];
    uint32_t spare_cap[BLOB_SPARES];
};

/// What dds_write takes as its "sample" for these topics: the bytes, and (dl_dds_write_buffer) a
/// dl_dds_buffer the sample may take over instead of copying them.
struct blob_sample {
    const void *data;
    uint32_t size;
    unsigned char *adopt;
    int adopted;
};

static uint32_t align4(uint32_t n) { return (n + 3u) & ~3u; }

/// A buffer of at least `need` bytes: a spare of `type`'s that fits (not more than twice as big),
/// else a new one. `*cap` is its size.
static unsigned char *blob_alloc(const struct ddsi_sertype *type, uint32_t need, uint32_t *cap) {
    if (type && need >= BLOB_SPARE_MIN) {
        struct blob_sertype *st = (struct blob_sertype *)type;
        unsigned char *b = NULL;
        pthread_mutex_lock(&st->lock);
        for (int i = 0; i < BLOB_SPARES; i++) {
            if (st->spare[i] && st->spare_cap[i] >= need && st->spare_cap[i] / 2 <= need) {
                b = st->spare[i];
                *cap = st->spare_cap[i];
                st->spare[i] = NULL;
                break;
            }
        }
        pthread_mutex_unlock(&st->lock);
        if (b) return b;
    }
    *cap = need;
    return malloc(need);
}

/// Gives a buffer back: kept as a spare of `type`'s when it is big and a place is free, else freed.
static void blob_recycle(const struct ddsi_sertype *type, unsigned char *b, uint32_t cap) {
    if (type && b && cap >= BLOB_SPARE_MIN) {
        struct blob_sertype *st = (struct blob_sertype *)type;
        pthread_mutex_lock(&st->lock);
        for (int i = 0; i < BLOB_SPARES; i++) {
            if (!st->spare[i]) {
                st->spare[i] = b;
                st->spare_cap[i] = cap;
                b = NULL;
                break;
            }
        }
        pthread_mutex_unlock(&st->lock);
    }
    free(b);
}

static struct blob_serdata *blob_new(const struct ddsi_sertype *type, enum ddsi_serdata_kind kind, size_t size) {
    if (size > UINT32_MAX - 8) return NULL;
    struct blob_serdata *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    ddsi_serdata_init(&d->c, type, kind);
    d->size = (uint32_t)size;
    // Not cleared: a 2.7 MB block would be cleared only to be overwritten on the receive path.
    // Every op fills [0, size) (or clears what it could not fill); the padding is cleared here.
    d->data = blob_alloc(type, align4((uint32_t)size) + 4, &d->cap);
    if (!d->data) { free(d); return NULL; }
    memset(d->data + size, 0, align4((uint32_t)size) + 4 - size);
    return d;
}

// MARK: serdata ops

static bool sd_eqkey(const struct ddsi_serdata *a, const struct ddsi_serdata *b) { (void)a; (void)b; return true; }

static uint32_t sd_get_size(const struct ddsi_serdata *d) { return ((const struct blob_serdata *)d)->size; }

static void sd_free(struct ddsi_serdata *d) {
    struct blob_serdata *b = (struct blob_serdata *)d;
    blob_recycle(b->c.type, b->data, b->cap);
    free(b);
}

/// The writer sequence number of the DATA or DATA_FRAG submessage `rdata` came in (RTPS 9.4.5.3/9.4.5.4:
/// id, flags (bit 0: little-endian), length, extraFlags, octetsToInlineQos, readerId, writerId, then
/// writerSN as a high int32 and a low uint32, 16 bytes into the submessage), or 0 when unknown.
static int64_t rdata_sequence(const struct nn_rdata *rdata) {
    uint32_t off = NN_RDATA_SUBMSG_OFF(rdata);
    // The submessage header precedes the payload in the same packet.
    if (rdata->submsg_zoff == 0 || rdata->rmsg == NULL || off + 24 > NN_RDATA_PAYLOAD_OFF(rdata)) return 0;
    const unsigned char *sm = NN_RMSG_PAYLOADOFF(rdata->rmsg, off);
    if (sm[0] != 0x15 && sm[0] != 0x16) return 0; // DATA, DATA_FRAG
    uint64_t hi = 0, lo = 0;
    for (int i = 0; i < 4; i++) {
        int k = (sm[1] & 1) ? 3 - i : i; // little-endian: most significant byte last
        hi = hi << 8 | sm[16 + k];
        lo = lo << 8 | sm[20 + k];
    }
    int64_t seq = (int64_t)(hi << 32 | lo);
    return seq > 0 ? seq : 0;
}

static int64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static struct ddsi_serdata *sd_from_ser(const struct ddsi_sertype *type, enum ddsi_serdata_kind kind,
                                        const struct nn_rdata *fragchain, size_t size) {
    // Every fragment is here (Cyclone reassembled them): the sample's arrival, before its copy.
    int64_t received = now_ns();
    struct blob_serdata *d = blob_new(type, kind, size);
    if (!d) return NULL;
    d->received_ns = received;
    if (fragchain) d->seq = rdata_sequence(fragchain);
    uint32_t off = 0;
    while (fragchain) {
        if (fragchain->maxp1 > off) {
            // Only the part this fragment adds (fragments may overlap); never past `size`.
            uint32_t end = fragchain->maxp1 < size ? fragchain->maxp1 : (uint32_t)size;
            if (end > off && fragchain->min <= off) {
                const unsigned char *payload = NN_RMSG_PAYLOADOFF(fragchain->rmsg, NN_RDATA_PAYLOAD_OFF(fragchain));
                memcpy(d->data + off, payload + (off - fragchain->min), end - off);
                off = end;
            }
        }
        fragchain = fragchain->nextfrag;
    }
    if (off < size) memset(d->data + off, 0, size - off); // a gap in the chain (never for a complete sample)
    return &d->c;
}

static struct ddsi_serdata *sd_from_ser_iov(const struct ddsi_sertype *type, enum ddsi_serdata_kind kind,
                                            ddsrt_msg_iovlen_t niov, const ddsrt_iovec_t *iov, size_t size) {
    struct blob_serdata *d = blob_new(type, kind, size);
    if (!d) return NULL;
    size_t off = 0;
    for (ddsrt_msg_iovlen_t i = 0; i < niov && off < size; i++) {
        size_t n = iov[i].iov_len;
        if (n > size - off) n = size - off;
        memcpy(d->data + off, iov[i].iov_base, n);
        off += n;
    }
    if (off < size) memset(d->data + off, 0, size - off);
    return &d->c;
}

static struct ddsi_serdata *sd_from_keyhash(const struct ddsi_sertype *type, const struct ddsi_keyhash *keyhash) {
    (void)keyhash;
    // No key: an empty little-endian CDR blob.
    struct blob_serdata *d = blob_new(type, SDK_KEY, 4);
    if (!d) return NULL;
    memcpy(d->data, (const unsigned char[]){ 0, 1, 0, 0 }, 4);
    return &d->c;
}

static struct ddsi_serdata *sd_from_sample(const struct ddsi_sertype *type, enum ddsi_serdata_kind kind, const void *sample) {
    struct blob_sample *s = (struct blob_sample *)sample; // depthlens' own sample: `adopted` is written back
    if (kind != SDK_DATA) return sd_from_keyhash(type, NULL);
    if (s->adopt && !s->adopted) {
        // The bytes are already in a buffer laid out as blob_new's (dl_dds_buffer): take it over.
        struct blob_serdata *d = calloc(1, sizeof *d);
        if (!d) return NULL;
        ddsi_serdata_init(&d->c, type, kind);
        d->size = s->size;
        d->data = s->adopt;
        d->cap = 0; // freed, not kept as a spare: dl_dds_buffer does not take spares (it has no sertype)
        s->adopted = 1;
        return &d->c;
    }
    struct blob_serdata *d = blob_new(type, kind, s->size);
    if (!d) return NULL;
    memcpy(d->data, s->data, s->size);
    return &d->c;
}

static void sd_to_ser(const struct ddsi_serdata *d, size_t off, size_t sz, void *buf) {
    const struct blob_serdata *b = (const struct blob_serdata *)d;
    size_t limit = align4(b->size);
    if (off >= limit) return;
    if (sz > limit - off) sz = limit - off;
    memcpy(buf, b->data + off, sz);
}

static struct ddsi_serdata *sd_to_ser_ref(const struct ddsi_serdata *d, size_t off, size_t sz, ddsrt_iovec_t *ref) {
    const struct blob_serdata *b = (const struct blob_serdata *)d;
    ref->iov_base = b->data + off;
    ref->iov_len = (ddsrt_iov_len_t)sz;
    return ddsi_serdata_ref(d);
}

static void sd_to_ser_unref(struct ddsi_serdata *d, const ddsrt_iovec_t *ref) { (void)ref; ddsi_serdata_unref(d); }

static bool sd_to_sample(const struct ddsi_serdata *d, void *sample, void **bufptr, void *buflim) {
    (void)bufptr; (void)buflim;
    // Only for dds_read/dds_take with sample pointers, which depthlens does not use: a view of the bytes.
    const struct blob_serdata *b = (const struct blob_serdata *)d;
    struct blob_sample *s = sample;
    s->data = b->data;
    s->size = b->size;
    return true;
}

static struct ddsi_serdata *sd_to_untyped(const struct ddsi_serdata *d) {
    struct blob_serdata *u = blob_new(d->type, SDK_KEY, 4);
    if (!u) return NULL;
    memcpy(u->data, (const unsigned char[]){ 0, 1, 0, 0 }, 4);
    u->c.type = NULL;
    return &u->c;
}

static bool sd_untyped_to_sample(const struct ddsi_sertype *type, const struct ddsi_serdata *d, void *sample, void **bufptr, void *buflim) {
    (void)type; (void)d; (void)bufptr; (void)buflim;
    struct blob_sample *s = sample;
    s->data = NULL;
    s->size = 0;
    return true;
}

static size_t sd_print(const struct ddsi_sertype *type, const struct ddsi_serdata *d, char *buf, size_t size) {
    (void)type;
    int n = snprintf(buf, size, "(%u bytes of CDR)", ((const struct blob_serdata *)d)->size);
    return n < 0 ? 0 : (size_t)n;
}

static void sd_get_keyhash(const struct ddsi_serdata *d, struct ddsi_keyhash *buf, bool force_md5) {
    (void)d; (void)force_md5;
    memset(buf, 0, sizeof *buf);
}

static const struct ddsi_serdata_ops blob_serdata_ops = {
    .eqkey = sd_eqkey,
    .get_size = sd_get_size,
    .from_ser = sd_from_ser,
    .from_ser_iov = sd_from_ser_iov,
    .from_keyhash = sd_from_keyhash,
    .from_sample = sd_from_sample,
    .to_ser = sd_to_ser,
    .to_ser_ref = sd_to_ser_ref,
    .to_ser_unref = sd_to_ser_unref,
    .to_sample = sd_to_sample,
    .to_untyped = sd_to_untyped,
    .untyped_to_sample = sd_untyped_to_sample,
    .free = sd_free,
    .print = sd_print,
    .get_keyhash = sd_get_keyhash,
};

// MARK: sertype ops

static void st_free(struct ddsi_sertype *tp) {
    struct blob_sertype *st = (struct blob_sertype *)tp;
    for (int i = 0; i < BLOB_SPARES; i++) free(st->spare[i]);
    pthread_mutex_destroy(&st->lock);
    ddsi_sertype_fini(tp);
    free(st);
}

static void st_zero_samples(const struct ddsi_sertype *d, void *samples, size_t count) {
    (void)d;
    memset(samples, 0, count * sizeof(struct blob_sample));
}

static void st_realloc_samples(void **ptrs, const struct ddsi_sertype *d, void *old, size_t oldcount, size_t count) {
    (void)d;
    struct blob_sample *s = realloc(old, count * sizeof *s);
    if (s && count > oldcount) memset(s + oldcount, 0, (count - oldcount) * sizeof *s);
    for (size_t i = 0; i < count; i++) ptrs[i] = s ? &s[i] : NULL;
}

static void st_free_samples(const struct ddsi_sertype *d, void **ptrs, size_t count, dds_free_op_t op) {
    (void)d;
    // The samples are views (to_sample copies nothing); only the array itself may be owned.
    if (count > 0 && (op & DDS_FREE_ALL_BIT)) free(ptrs[0]);
}

static bool st_equal(const struct ddsi_sertype *a, const struct ddsi_sertype *b) { (void)a; (void)b; return true; }
static uint32_t st_hash(const struct ddsi_sertype *tp) { (void)tp; return 0x64656c6eu; }

static const struct ddsi_sertype_ops blob_sertype_ops = {
    .version = ddsi_sertype_v0,
    .arg = NULL,
    .free = st_free,
    .zero_samples = st_zero_samples,
    .realloc_samples = st_realloc_samples,
    .free_samples = st_free_samples,
    .equal = st_equal,
    .hash = st_hash,
    // No type identifiers, map or information: endpoints match by type name (as rmw_cyclonedds'
    // do), and no XTypes type lookup is made for these topics.
    .type_id = NULL,
    .type_map = NULL,
    .type_info = NULL,
    .derive_sertype = NULL,
    .get_serialized_size = NULL,
    .serialize_into = NULL,
};

// MARK: API

int32_t dl_dds_participant(int32_t domain, const char *config) {
    // Big blocks freed stay mapped for the next ones. Cyclone receives into 1 MB buffers that it
    // allocates while a sample's fragments arrive and frees once the sample is delivered: with
    // glibc's defaults every one went back to the system (unmapped, or trimmed off the receive
    // thread's arena) and the next was fresh pages to fault in as recvmsg filled them, ~800 faults
    // a 1280x720 rgb8 frame, on the receive path. Process-wide: a process that joins DDS keeps up
    // to 256 MB of freed memory per arena.
    mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);
    mallopt(M_TRIM_THRESHOLD, 256 * 1024 * 1024);
    dds_domainid_t id = domain < 0 ? DDS_DOMAIN_DEFAULT : (dds_domainid_t)domain;
    if (config && *config) {
        if (domain < 0) id = 0;
        const char *env = getenv("CYCLONEDDS_URI");
        size_t n = (env ? strlen(env) : 0) + strlen(config) + 2;
        char *all = malloc(n);
        if (!all) return DDS_RETCODE_OUT_OF_RESOURCES;
        snprintf(all, n, "%s%s%s", env && *env ? env : "", env && *env ? "," : "", config);
        dds_entity_t d = dds_create_domain(id, all);
        free(all);
        // A domain this process made before keeps its configuration.
        if (d < 0 && d != DDS_RETCODE_PRECONDITION_NOT_MET) return d;
    }
    return dds_create_participant(id, NULL, NULL);
}

int32_t dl_dds_topic(int32_t participant, const char *topic, const char *type_name) {
    struct blob_sertype *bst = calloc(1, sizeof *bst);
    if (!bst) return DDS_RETCODE_OUT_OF_RESOURCES;
    if (pthread_mutex_init(&bst->lock, NULL) != 0) { free(bst); return DDS_RETCODE_OUT_OF_RESOURCES; }
    struct ddsi_sertype *st = &bst->c;
    ddsi_sertype_init(st, type_name, &blob_sertype_ops, &blob_serdata_ops, true);
    st->allowed_data_representation = DDS_DATA_REPRESENTATION_FLAG_XCDR1;
    struct ddsi_sertype *stp = st;
    dds_entity_t t = dds_create_topic_sertype(participant, topic, &stp, NULL, NULL, NULL);
    // On success the topic owns the sertype (or an equal one it already had, freeing ours).
    if (t < 0) st_free(st);
    return t;
}

static dds_qos_t *make_qos(dl_dds_qos q) {
    dds_qos_t *qos = dds_create_qos();
    dds_qset_reliability(qos, q.reliable ? DDS_RELIABILITY_RELIABLE : DDS_RELIABILITY_BEST_EFFORT, DDS_MSECS(100));
    dds_qset_durability(qos, q.transient_local ? DDS_DURABILITY_TRANSIENT_LOCAL : DDS_DURABILITY_VOLATILE);
    dds_qset_history(qos, DDS_HISTORY_KEEP_LAST, q.depth > 0 ? q.depth : 1);
    dds_qset_data_representation(qos, 1, (dds_data_representation_id_t[]){ DDS_DATA_REPRESENTATION_XCDR1 });
    return qos;
}

int32_t dl_dds_reader(int32_t participant, int32_t topic, dl_dds_qos q) {
    dds_qos_t *qos = make_qos(q);
    dds_entity_t r = dds_create_reader(participant, topic, qos, NULL);
    dds_delete_qos(qos);
    return r;
}

int32_t dl_dds_writer(int32_t participant, int32_t topic, dl_dds_qos q) {
    dds_qos_t *qos = make_qos(q);
    dds_entity_t w = dds_create_writer(participant, topic, qos, NULL);
    dds_delete_qos(qos);
    return w;
}

int32_t dl_dds_write(int32_t writer, const void *cdr, uint32_t size, int64_t timestamp_ns) {
    struct blob_sample s = { cdr, size, NULL, 0 };
    return timestamp_ns < 0 ? dds_write(writer, &s) : dds_write_ts(writer, &s, timestamp_ns);
}

uint8_t *dl_dds_buffer(uint32_t size) {
    if (size > UINT32_MAX - 8) return NULL;
    unsigned char *b = malloc(align4(size) + 4);
    if (b) memset(b + size, 0, align4(size) + 4 - size);
    return b;
}

int32_t dl_dds_write_buffer(int32_t writer, uint8_t *buffer, uint32_t size) {
    struct blob_sample s = { buffer, size, buffer, 0 };
    dds_return_t rc = dds_write(writer, &s);
    if (!s.adopted) free(buffer);
    return rc;
}

int32_t dl_dds_take(int32_t reader, dl_dds_sample *out) {
    for (;;) {
        struct ddsi_serdata *sd = NULL;
        dds_sample_info_t info;
        dds_return_t n = dds_takecdr(reader, &sd, 1, &info, DDS_ANY_STATE);
        if (n <= 0) return n;
        if (!info.valid_data || sd->ops != &blob_serdata_ops) {
            ddsi_serdata_unref(sd);
            continue;
        }
        struct blob_serdata *b = (struct blob_serdata *)sd;
        out->data = b->data;
        out->size = b->size;
        out->source_timestamp_ns = info.source_timestamp;
        out->sequence = b->seq;
        out->received_ns = b->received_ns;
        out->writer = info.publication_handle;
        out->handle = sd;
        return 1;
    }
}

void dl_dds_release(dl_dds_sample *sample) {
    if (sample->handle) ddsi_serdata_unref(sample->handle);
    sample->handle = NULL;
    sample->data = NULL;
    sample->size = 0;
}

int32_t dl_dds_on_data(int32_t reader, dl_dds_data_fn fn, void *ctx) {
    dds_listener_t *l = dds_create_listener(ctx);
    if (!l) return DDS_RETCODE_OUT_OF_RESOURCES;
    dds_lset_data_available(l, fn);
    dds_return_t rc = dds_set_listener(reader, l);
    dds_delete_listener(l);
    return rc;
}

int32_t dl_dds_waitset(int32_t participant) { return dds_create_waitset(participant); }

int32_t dl_dds_waitset_attach(int32_t waitset, int32_t reader) {
    dds_entity_t cond = dds_create_readcondition(reader, DDS_ANY_STATE);
    if (cond < 0) return cond;
    return dds_waitset_attach(waitset, cond, (dds_attach_t)reader);
}

int32_t dl_dds_waitset_wait(int32_t waitset, int64_t timeout_ns) {
    return dds_waitset_wait(waitset, NULL, 0, timeout_ns);
}

int32_t dl_dds_waitset_wake(int32_t waitset) { return dds_waitset_set_trigger(waitset, true); }

int32_t dl_dds_matched_writers(int32_t reader) {
    dds_subscription_matched_status_t s;
    dds_return_t rc = dds_get_subscription_matched_status(reader, &s);
    return rc < 0 ? rc : (int32_t)s.current_count;
}

int32_t dl_dds_matched_readers(int32_t writer) {
    dds_publication_matched_status_t s;
    dds_return_t rc = dds_get_publication_matched_status(writer, &s);
    return rc < 0 ? rc : (int32_t)s.current_count;
}

int32_t dl_dds_samples_lost(int32_t reader) {
    dds_sample_lost_status_t s;
    dds_return_t rc = dds_get_sample_lost_status(reader, &s);
    return rc < 0 ? rc : (int32_t)s.total_count;
}

int32_t dl_dds_publications_reader(int32_t participant) {
    return dds_create_reader(participant, DDS_BUILTIN_TOPIC_DCPSPUBLICATION, NULL, NULL);
}

int32_t dl_dds_publications(int32_t reader, char *buf, size_t cap) {
    enum { MAX = 256 };
    void *samples[MAX] = { NULL };
    dds_sample_info_t infos[MAX];
    dds_return_t n = dds_read(reader, samples, infos, MAX, MAX);
    if (n < 0) return n;
    size_t used = 0;
    int32_t count = 0;
    if (cap > 0) buf[0] = 0;
    for (dds_return_t i = 0; i < n; i++) {
        if (!infos[i].valid_data || infos[i].instance_state != DDS_IST_ALIVE) continue;
        const dds_builtintopic_endpoint_t *e = samples[i];
        dds_reliability_kind_t rel = DDS_RELIABILITY_BEST_EFFORT;
        dds_duration_t blocking;
        if (e->qos) (void)dds_qget_reliability(e->qos, &rel, &blocking);
        if (cap > used) {
            int k = snprintf(buf + used, cap - used, "%s\t%s\t%d\n", e->topic_name ? e->topic_name : "",
                             e->type_name ? e->type_name : "", rel == DDS_RELIABILITY_RELIABLE);
            if (k > 0) used += (size_t)k < cap - used ? (size_t)k : cap - used - 1;
        }
        count++;
    }
    dds_return_loan(reader, samples, n);
    return count;
}

int32_t dl_dds_delete(int32_t entity) { return dds_delete(entity); }

const char *dl_dds_error(int32_t code) { return dds_strretcode(code); }
