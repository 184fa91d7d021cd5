#ifndef DL_LZFSE_H
#define DL_LZFSE_H
// Apple's LZFSE stream format, decoding only (lzfse.c): Record3D's `.r3d` frames (`rgbd/N.depth`
// float32 meters, `rgbd/N.conf` uint8) are LZFSE streams, and LZFSE has no Debian package.
// A header of its own (CDepthKit's module map takes every header in include/), so the umbrella
// dl_depthkit.h needs no edit.

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The number of bytes an LZFSE stream decodes to, as its block headers declare it: walks the
/// headers only (each header and payload must lie inside `size`, each header's fields must be
/// in range), nothing allocated. Returns 0 with `*decoded` set, or -1 with `error` filled
/// ("block 2 (bvx2) at byte 4100: …"). Callers allocate from this, capped by what they expect.
int dl_lzfse_decoded_size(const uint8_t *src, size_t size, uint64_t *decoded, char *error, size_t error_len);

/// Decodes an LZFSE stream into `dst` (`capacity` bytes), every read and write bounds-checked:
/// a block that would write past `capacity` or decode to another size than its header says, a
/// match before the start of the output, a literal run past the block's literals, a bit stream
/// read past its payload, an undefined LZVN opcode, a stream without its end-of-stream block —
/// each is -1 with `error` filled. Returns 0 with `*written` set. Bytes after the end-of-stream
/// block are ignored, as Apple's decoder does. Working memory: one 48 KB block state (malloc).
int dl_lzfse_decode(const uint8_t *src, size_t size, uint8_t *dst, size_t capacity, size_t *written,
                    char *error, size_t error_len);

#ifdef __cplusplus
}
#endif
#endif
