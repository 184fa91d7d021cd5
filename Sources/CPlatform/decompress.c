// ROS bag chunk decompression: liblz4's frame API and libbz2. See include/dl_decompress.h.
#include "dl_decompress.h"

#include <bzlib.h>
#include <lz4frame.h>
#include <limits.h>

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

const char *dl_decompress_error(int code) {
    switch (code) {
    case DL_DECOMPRESS_OK: return "ok";
    case DL_DECOMPRESS_CORRUPT: return "corrupt data";
    case DL_DECOMPRESS_TOO_LONG: return "decompresses to more bytes than the chunk header says";
    case DL_DECOMPRESS_TOO_SHORT: return "decompresses to fewer bytes than the chunk header says (truncated)";
    case DL_DECOMPRESS_NO_MEMORY: return "out of memory";
    default: return "unknown error";
    }
}
