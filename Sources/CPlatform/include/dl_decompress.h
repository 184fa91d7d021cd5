#ifndef DL_DECOMPRESS_H
#define DL_DECOMPRESS_H
// Chunk decompression for ROS bags (decompress.c): ROS's roslz4 writes the LZ4 *frame* format,
// bz2 chunks are plain bzip2 streams. Both decoders are told the exact uncompressed size the
// chunk header records and fail, rather than guess, when the data disagrees.
// ROS 2 recordings (ROS2Recording): MCAP chunks in zstd or LZ4 frames (exact size known, as above),
// rosbag2's per-message and per-file zstd (size not recorded: the `_alloc` variants grow their
// output up to a limit), and MCAP's CRC-32 (zlib's). The MCAP writer compresses its chunks with
// dl_zstd_compress.

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Results of the decompressors: 0 success, negative an error (`dl_decompress_error` names it).
enum {
    DL_DECOMPRESS_OK = 0,
    DL_DECOMPRESS_CORRUPT = -1,     // the decoder rejected the data
    DL_DECOMPRESS_TOO_LONG = -2,    // it decodes to more than `out_size` bytes
    DL_DECOMPRESS_TOO_SHORT = -3,   // it ends (or its input runs out) before `out_size` bytes
    DL_DECOMPRESS_NO_MEMORY = -4,   // the decoder could not allocate its state
    DL_DECOMPRESS_OVER_LIMIT = -5,  // (`_alloc` variants) it decodes to more than `max_out` bytes
};

/// Decodes one LZ4 frame (or several concatenated frames) of `in_size` bytes into exactly
/// `out_size` bytes at `out`. Returns DL_DECOMPRESS_OK or an error above.
int dl_lz4_decompress_frame(const uint8_t *in, size_t in_size, uint8_t *out, size_t out_size);

/// Decodes a bzip2 stream of `in_size` bytes into exactly `out_size` bytes at `out` (libbz2's
/// BZ2_bzBuffToBuffDecompress). Returns DL_DECOMPRESS_OK or an error above.
int dl_bz2_decompress(const uint8_t *in, size_t in_size, uint8_t *out, size_t out_size);

/// Decodes a zstd stream (one frame or several concatenated) of `in_size` bytes into exactly
/// `out_size` bytes at `out`. Returns DL_DECOMPRESS_OK or an error above.
int dl_zstd_decompress(const uint8_t *in, size_t in_size, uint8_t *out, size_t out_size);

/// Decodes a zstd stream whose decompressed size is not known in advance into a buffer it
/// allocates with malloc (`*out`, `*out_size`; the caller frees it with `dl_decompress_free`),
/// at most `max_out` bytes. When every frame declares its content size, the output is exactly
/// their sum (more is DL_DECOMPRESS_TOO_LONG, checked as it is decoded; less DL_DECOMPRESS_TOO_SHORT),
/// and a sum over `max_out` is DL_DECOMPRESS_OVER_LIMIT before anything is allocated. The buffer
/// starts at no more than 64 MiB and doubles as data is decoded: memory follows the data, not
/// what a header claims. On an error `*out` is NULL.
int dl_zstd_decompress_alloc(const uint8_t *in, size_t in_size, size_t max_out, uint8_t **out, size_t *out_size);

/// The sum of the content sizes the zstd frames in `in` declare (`*size`; saturating at
/// ULLONG_MAX): 1 when every frame declares one, 0 when one does not or the frames cannot be
/// walked (a stream cut short). Reads frame headers only.
int dl_zstd_declared_size(const uint8_t *in, size_t in_size, unsigned long long *size);

/// The same for LZ4 frames (one or several concatenated).
int dl_lz4_decompress_frame_alloc(const uint8_t *in, size_t in_size, size_t max_out, uint8_t **out, size_t *out_size);

/// Frees what an `_alloc` decoder returned.
void dl_decompress_free(uint8_t *p);

/// Compresses `in_size` bytes into one zstd frame (its content size recorded) at `level` (1…19;
/// 3 is zstd's default) in a buffer it allocates (`*out`, `*out_size`; freed with
/// `dl_decompress_free`). Returns DL_DECOMPRESS_OK, DL_DECOMPRESS_NO_MEMORY, or
/// DL_DECOMPRESS_CORRUPT when libzstd reports another error. (The MCAP writer's chunks.)
int dl_zstd_compress(const uint8_t *in, size_t in_size, int level, uint8_t **out, size_t *out_size);

/// CRC-32 (ISO-HDLC, zlib's `crc32`) of `size` bytes, continuing from `crc` (0 to start).
uint32_t dl_crc32(uint32_t crc, const uint8_t *data, size_t size);

/// A short English description of a result code ("corrupt data", …).
const char *dl_decompress_error(int code);

#ifdef __cplusplus
}
#endif
#endif
