// ROS bag chunk decompression: liblz4's frame API and libbz2; ROS 2 recordings: libzstd, and
// zlib's CRC-32. See include/dl_decompress.h.
#include "dl_decompress.h"

#include <bzlib.h>
#include <lz4frame.h>
#include <limits.h>
#include <stdlib.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

int dl_lz4_decompress_frame(const uint8_t *in, size_t in_size, uint8_t *out, size_t out_size) {
    LZ4F_dctx *dctx = NULL;
    if (LZ4F_isError(LZ4F_createDecompressionContext(&dctx, LZ4F_VERSION)) || dctx == NULL) {
        return DL_DECOMPRESS_NO_MEMORY;
    }
    size_t in_pos = 0, out_pos = 0;
    int result = DL_DECOMPRESS_TOO_SHORT;
    // LZ4F_decompress returns 0 at the end of a frame; a following frame starts a new one.
    for (;;) {
        if (in_pos == in_size) {
            // Input exhausted: fine only when every byte was produced and the last frame ended.
            break;
        }
        size_t src = in_size - in_pos;
        size_t dst = out_size - out_pos;
        uint8_t scratch[1];
        // With no room left, a 1-byte scratch buffer catches any further output (too long).
        uint8_t *dst_ptr = dst > 0 ? out + out_pos : scratch;
        size_t dst_cap = dst > 0 ? dst : sizeof scratch;
        size_t hint = LZ4F_decompress(dctx, dst_ptr, &dst_cap, in + in_pos, &src, NULL);
        if (LZ4F_isError(hint)) { result = DL_DECOMPRESS_CORRUPT; goto done; }
        if (dst == 0 && dst_cap > 0) { result = DL_DECOMPRESS_TOO_LONG; goto done; }
        in_pos += src;
        out_pos += dst_cap;
        if (src == 0 && dst_cap == 0) {
            // No progress: the decoder wants more input than there is.
            break;
        }
        if (hint == 0 && out_pos == out_size && in_pos == in_size) { result = DL_DECOMPRESS_OK; goto done; }
    }
done:
    LZ4F_freeDecompressionContext(dctx);
    return result;
}

int dl_bz2_decompress(const uint8_t *in, size_t in_size, uint8_t *out, size_t out_size) {
    if (in_size > UINT_MAX || out_size > UINT_MAX) return DL_DECOMPRESS_CORRUPT;
    unsigned int dest_len = (unsigned int)out_size;
    int r = BZ2_bzBuffToBuffDecompress((char *)out, &dest_len, (char *)in, (unsigned int)in_size, 0, 0);
    switch (r) {
    case BZ_OK:
        return dest_len == out_size ? DL_DECOMPRESS_OK : DL_DECOMPRESS_TOO_SHORT;
    case BZ_OUTBUFF_FULL: return DL_DECOMPRESS_TOO_LONG;
    case BZ_UNEXPECTED_EOF: return DL_DECOMPRESS_TOO_SHORT;
    case BZ_MEM_ERROR: return DL_DECOMPRESS_NO_MEMORY;
    default: return DL_DECOMPRESS_CORRUPT;  // BZ_DATA_ERROR, BZ_DATA_ERROR_MAGIC, BZ_PARAM_ERROR
    }
}

int dl_zstd_decompress(const uint8_t *in, size_t in_size, uint8_t *out, size_t out_size) {
    ZSTD_DCtx *dctx = ZSTD_createDCtx();
    if (dctx == NULL) return DL_DECOMPRESS_NO_MEMORY;
    uint8_t scratch[1];
    ZSTD_inBuffer src = {in, in_size, 0};
    ZSTD_outBuffer dst = {out_size > 0 ? out : scratch, out_size, 0};
    int result = DL_DECOMPRESS_TOO_SHORT;
    size_t hint = 1;
    // A zero hint ends a frame; a following frame starts a new one (the context resets itself).
    for (;;) {
        size_t before_in = src.pos, before_out = dst.pos;
        hint = ZSTD_decompressStream(dctx, &dst, &src);
        if (ZSTD_isError(hint)) { result = DL_DECOMPRESS_CORRUPT; goto done; }
        if (src.pos == src.size && hint == 0) break;
        if (dst.pos == dst.size) {
            // Output full but the stream goes on: a 1-byte probe tells whether it holds more bytes.
            ZSTD_outBuffer probe = {scratch, sizeof scratch, 0};
            hint = ZSTD_decompressStream(dctx, &probe, &src);
            if (ZSTD_isError(hint)) { result = DL_DECOMPRESS_CORRUPT; goto done; }
            if (probe.pos > 0) { result = DL_DECOMPRESS_TOO_LONG; goto done; }
            if (src.pos == src.size && hint == 0) break;
        }
        if (src.pos == before_in && dst.pos == before_out) break;  // no progress: the input runs out
    }
    if (hint == 0 && src.pos == in_size && dst.pos == out_size) result = DL_DECOMPRESS_OK;
done:
    ZSTD_freeDCtx(dctx);
    return result;
}

/// Grows `*buf` (capacity `*cap`) so that at least one more byte fits, up to `max_out`.
static int grow(uint8_t **buf, size_t *cap, size_t used, size_t max_out) {
    if (used < *cap) return DL_DECOMPRESS_OK;
    if (*cap >= max_out) return DL_DECOMPRESS_OVER_LIMIT;
    size_t next = *cap < 65536 ? 65536 : *cap * 2;
    if (next > max_out || next < *cap) next = max_out;
    uint8_t *p = realloc(*buf, next);
    if (p == NULL) return DL_DECOMPRESS_NO_MEMORY;
    *buf = p;
    *cap = next;
    return DL_DECOMPRESS_OK;
}

int dl_zstd_declared_size(const uint8_t *in, size_t in_size, unsigned long long *size) {
    unsigned long long total = 0;
    size_t pos = 0;
    *size = 0;
    if (in_size == 0) return 0;
    while (pos < in_size) {
        unsigned long long n = ZSTD_getFrameContentSize(in + pos, in_size - pos);
        if (n == ZSTD_CONTENTSIZE_UNKNOWN || n == ZSTD_CONTENTSIZE_ERROR) return 0;
        size_t frame = ZSTD_findFrameCompressedSize(in + pos, in_size - pos);
        if (ZSTD_isError(frame) || frame == 0) return 0;
        total = total + n < total ? ULLONG_MAX : total + n;  // saturates: a sum past 2^64 is "too much" all the same
        pos += frame;
    }
    *size = total;
    return 1;
}

/// The first buffer an `_alloc` decoder takes for a stream that declares `declared` bytes: no more
/// than 64 MiB whatever it declares, so that memory is committed as data is actually decoded.
static size_t first_capacity(unsigned long long declared) {
    const unsigned long long most = 64ull << 20;
    return (size_t)(declared < most ? declared : most);
}

int dl_zstd_decompress_alloc(const uint8_t *in, size_t in_size, size_t max_out, uint8_t **out, size_t *out_size) {
    *out = NULL;
    *out_size = 0;
    // Frames that all declare their content size bound the output by what they declare (more is
    // DL_DECOMPRESS_TOO_LONG, checked as it is decoded); a declaration over `max_out` is refused
    // before anything is allocated.
    unsigned long long declared = 0;
    int sized = dl_zstd_declared_size(in, in_size, &declared);
    if (sized && declared > max_out) return DL_DECOMPRESS_OVER_LIMIT;
    size_t limit = sized ? (size_t)declared : max_out;
    ZSTD_DCtx *dctx = ZSTD_createDCtx();
    if (dctx == NULL) return DL_DECOMPRESS_NO_MEMORY;
    uint8_t *buf = NULL;
    size_t cap = 0, used = 0;
    if (sized && declared > 0) {
        cap = first_capacity(declared);
        buf = malloc(cap);
        if (buf == NULL) { ZSTD_freeDCtx(dctx); return DL_DECOMPRESS_NO_MEMORY; }
    }
    ZSTD_inBuffer src = {in, in_size, 0};
    int result = DL_DECOMPRESS_TOO_SHORT;
    size_t hint = 1;
    for (;;) {
        if (src.pos == src.size && hint == 0) { result = DL_DECOMPRESS_OK; break; }
        int g = grow(&buf, &cap, used, limit);
        if (g != DL_DECOMPRESS_OK) {
            // Full at the limit: fine only if the stream has nothing more to give.
            if (g == DL_DECOMPRESS_OVER_LIMIT && src.pos == src.size && hint == 0) { result = DL_DECOMPRESS_OK; break; }
            if (g == DL_DECOMPRESS_OVER_LIMIT && sized) {
                // At what the frames declare: a 1-byte probe tells whether the stream holds more.
                uint8_t scratch[1];
                ZSTD_outBuffer probe = {scratch, sizeof scratch, 0};
                size_t probed_from = src.pos;
                hint = ZSTD_decompressStream(dctx, &probe, &src);
                if (ZSTD_isError(hint)) { result = DL_DECOMPRESS_CORRUPT; break; }
                if (probe.pos > 0) { result = DL_DECOMPRESS_TOO_LONG; break; }
                if (src.pos == src.size && hint == 0) { result = DL_DECOMPRESS_OK; break; }
                if (src.pos == probed_from) { result = hint == 0 ? DL_DECOMPRESS_OK : DL_DECOMPRESS_TOO_SHORT; break; }
                continue;
            }
            result = g;
            break;
        }
        ZSTD_outBuffer dst = {buf, cap, used};
        size_t before_in = src.pos;
        hint = ZSTD_decompressStream(dctx, &dst, &src);
        if (ZSTD_isError(hint)) { result = DL_DECOMPRESS_CORRUPT; break; }
        size_t produced = dst.pos - used;
        used = dst.pos;
        if (src.pos == before_in && produced == 0) {
            result = hint == 0 ? DL_DECOMPRESS_OK : DL_DECOMPRESS_TOO_SHORT;
            break;
        }
    }
    ZSTD_freeDCtx(dctx);
    if (result == DL_DECOMPRESS_OK && sized && used != declared) result = DL_DECOMPRESS_TOO_SHORT;
    if (result != DL_DECOMPRESS_OK) { free(buf); return result; }
    if (buf == NULL) buf = malloc(1);  // an empty result is still a buffer to free
    if (buf == NULL) return DL_DECOMPRESS_NO_MEMORY;
    *out = buf;
    *out_size = used;
    return DL_DECOMPRESS_OK;
}

int dl_lz4_decompress_frame_alloc(const uint8_t *in, size_t in_size, size_t max_out, uint8_t **out, size_t *out_size) {
    *out = NULL;
    *out_size = 0;
    LZ4F_dctx *dctx = NULL;
    if (LZ4F_isError(LZ4F_createDecompressionContext(&dctx, LZ4F_VERSION)) || dctx == NULL) {
        return DL_DECOMPRESS_NO_MEMORY;
    }
    uint8_t *buf = NULL;
    size_t cap = 0, used = 0, in_pos = 0;
    size_t hint = 1;
    int result = DL_DECOMPRESS_TOO_SHORT;
    for (;;) {
        if (in_pos == in_size) { result = hint == 0 ? DL_DECOMPRESS_OK : DL_DECOMPRESS_TOO_SHORT; break; }
        int g = grow(&buf, &cap, used, max_out);
        if (g != DL_DECOMPRESS_OK) { result = g; break; }
        size_t src = in_size - in_pos, dst = cap - used;
        hint = LZ4F_decompress(dctx, buf + used, &dst, in + in_pos, &src, NULL);
        if (LZ4F_isError(hint)) { result = DL_DECOMPRESS_CORRUPT; break; }
        in_pos += src;
        used += dst;
        if (src == 0 && dst == 0) break;
    }
    LZ4F_freeDecompressionContext(dctx);
    if (result != DL_DECOMPRESS_OK) { free(buf); return result; }
    if (buf == NULL) buf = malloc(1);
    if (buf == NULL) return DL_DECOMPRESS_NO_MEMORY;
    *out = buf;
    *out_size = used;
    return DL_DECOMPRESS_OK;
}

int dl_zstd_compress(const uint8_t *in, size_t in_size, int level, uint8_t **out, size_t *out_size) {
    *out = NULL;
    *out_size = 0;
    size_t cap = ZSTD_compressBound(in_size);
    if (ZSTD_isError(cap)) return DL_DECOMPRESS_CORRUPT;
    uint8_t *buf = malloc(cap > 0 ? cap : 1);
    if (buf == NULL) return DL_DECOMPRESS_NO_MEMORY;
    size_t n = ZSTD_compress(buf, cap, in_size > 0 ? in : (const uint8_t *)"", in_size, level);
    if (ZSTD_isError(n)) {
        free(buf);
        return ZSTD_getErrorCode(n) == ZSTD_error_memory_allocation ? DL_DECOMPRESS_NO_MEMORY : DL_DECOMPRESS_CORRUPT;
    }
    *out = buf;
    *out_size = n;
    return DL_DECOMPRESS_OK;
}

void dl_decompress_free(uint8_t *p) { free(p); }

uint32_t dl_crc32(uint32_t crc, const uint8_t *data, size_t size) {
    // zlib takes uInt lengths: feed it in pieces.
    uLong c = crc;
    while (size > 0) {
        uInt n = size > (1u << 30) ? (1u << 30) : (uInt)size;
        c = crc32(c, data, n);
        data += n;
        size -= n;
    }
    return (uint32_t)c;
}

const char *dl_decompress_error(int code) {
    switch (code) {
    case DL_DECOMPRESS_OK: return "ok";
    case DL_DECOMPRESS_CORRUPT: return "corrupt data";
    case DL_DECOMPRESS_TOO_LONG: return "decompresses to more bytes than the chunk header says";
    case DL_DECOMPRESS_TOO_SHORT: return "decompresses to fewer bytes than the chunk header says (truncated)";
    case DL_DECOMPRESS_NO_MEMORY: return "out of memory";
    case DL_DECOMPRESS_OVER_LIMIT: return "decompresses to more bytes than depthlens accepts";
    default: return "unknown error";
    }
}
