#ifndef DL_DEPTHKIT_H
#define DL_DEPTHKIT_H
// The C half of DepthKit: the CPU kernels' pixel loops (kernels.c, align.c, points.c), the worker
// pool they run on (parallel.c), quickselect (select.c), the point-id map of the hover readout
// (point_id_map.c), and libpng / libjpeg-turbo behind setjmp (image.c, jpeg_mem.c). Every symbol
// is prefixed `dl_`. Links libpng and libjpeg only.

#include <stddef.h>
#include <stdint.h>
#include "dl_kernels.h"  // the CPU kernels' loops (kernels.c)
#include "../../../Shaders/dl_codes.h"  // codes shared with GLSL (colormaps, color-by, flags, sizes)
#include "dl_align.h"    // depth aligned to color (align.c)
#include "dl_points.h"   // the CPU point renderer (points.c)

#ifdef __cplusplus
extern "C" {
#endif

// MARK: Images (libpng, libjpeg-turbo)

/// A decoded image. `pixels` is malloc'ed and owned by the caller (free with `dl_image_free`).
/// 16-bit samples are in host byte order.
typedef struct dl_image {
    uint32_t width;
    uint32_t height;
    uint32_t channels;   // 1 gray, 2 gray+alpha, 3 rgb, 4 rgba
    uint32_t bit_depth;  // 8 or 16
    size_t row_bytes;
    uint8_t *pixels;
} dl_image;

void dl_image_free(dl_image *image);

/// Reads a PNG. libpng reports errors by longjmp; this wrapper keeps the setjmp in C so a corrupt
/// file becomes a return value of -1 with `error` filled, never a jump through Swift frames.
/// Palette and sub-byte gray are expanded to 8 bits, tRNS to an alpha channel.
int dl_png_read(const char *path, dl_image *out, char *error, size_t error_len);
/// Decodes a PNG held in memory (a ROS CompressedImage), as `dl_png_read`: -1 with `error` filled
/// for corrupt data or data that ends early.
int dl_png_decode(const uint8_t *data, size_t size, dl_image *out, char *error, size_t error_len);

/// Writes `data` (rows `row_bytes` apart, 16-bit samples in host order) as a PNG to `path`.
/// Returns 0, or -1 with `error` filled (again behind setjmp).
int dl_png_write(const char *path, uint32_t width, uint32_t height, uint32_t channels,
                 uint32_t bit_depth, size_t row_bytes, const uint8_t *data,
                 char *error, size_t error_len);

/// `dl_png_write` with the encoder's choices: zlib `level` (0–9) and `strategy` (0 default, 1
/// filtered, 2 Huffman only, 3 RLE), `filter` (-1: libpng's adaptive choice per row; 0–4: none,
/// sub, up, average, Paeth on every row), and `drop_opaque_alpha` (8-bit RGBA whose alpha is 255
/// everywhere is written as RGB, a quarter less to compress).
int dl_png_write_options(const char *path, uint32_t width, uint32_t height, uint32_t channels,
                         uint32_t bit_depth, size_t row_bytes, const uint8_t *data,
                         int level, int strategy, int filter, int drop_opaque_alpha,
                         char *error, size_t error_len);

/// The most pixels a PNG or JPEG header may claim (2^28, as for PGM/PPM/PFM): a lying header
/// gets an error, not a multi-gigabyte allocation.
/// Memory follows the data: the decoders commit the pixels' memory as rows are decoded
/// (`PixelBuffer`'s lazily zeroed pages, malloc's untouched pages), so a lying header costs the
/// rows its data fills, not this limit; 2^28 is the format limit (16384x16384, 268 megapixels:
/// large photos and panoramas), and smaller limits for network images are the source's (`--max-image`).
#define DL_MAX_IMAGE_PIXELS ((uint64_t)1 << 28)

/// libjpeg's working memory per decode (`max_memory_to_use`, 256 MB): baseline JPEGs of any
/// allowed size need a few rows of it; progressive ones keep every coefficient (2 bytes a sample),
/// so up to about 85 megapixels (4:2:0) or 42 (4:4:4) decode, and larger ones are an error before
/// anything is allocated ("decoding needs more than 256 MB of working memory…").
#define DL_JPEG_MAX_MEMORY ((long)256 << 20)

/// Reads a JPEG as 8-bit RGB or gray. libjpeg's default error handler calls exit(); this one
/// longjmps back into C and returns -1 with `error` filled.
int dl_jpeg_read(const char *path, dl_image *out, char *error, size_t error_len);
/// Decodes a JPEG held in memory (an MJPEG camera frame) as 8-bit RGB or gray, behind setjmp
/// `dl_jpeg_read` uses it too. Returns 0, or -1 with `error` filled: libjpeg's errors, a size
/// over DL_MAX_IMAGE_PIXELS, and scan data that ends before the image does (libjpeg only warns
/// and fills the rest with gray; a missing end-of-image marker alone is fine). (jpeg_mem.c)
/// With `expect_width` non-zero, a frame of another size is refused before anything is allocated:
/// -2, with `error` "frame is WxH, expected WxH".
int dl_jpeg_decode(const uint8_t *data, size_t size, uint32_t expect_width, uint32_t expect_height, dl_image *out,
                   char *error, size_t error_len);

/// Reads a JPEG's header held in memory: its size, and whether it is gray (one component).
/// Returns 0, or -1 with `error` filled (a bad header, a size over DL_MAX_IMAGE_PIXELS). (jpeg_mem.c)
int dl_jpeg_info(const uint8_t *data, size_t size, uint32_t *width, uint32_t *height, int *gray,
                 char *error, size_t error_len);
/// Decodes a JPEG held in memory straight into `dst` as 8-bit RGBA (the RGB `dl_jpeg_decode`
/// gives, alpha 255), rows `dst_stride` apart, behind setjmp: no buffer of its own and no
/// conversion pass. `width`×`height` must be the JPEG's size (-2 otherwise, with `error` "frame is
/// WxH, expected WxH"); errors as `dl_jpeg_decode` (-1). (jpeg_mem.c)
int dl_jpeg_decode_rgba(const uint8_t *data, size_t size, uint8_t *dst, size_t dst_stride, uint32_t width, uint32_t height,
                        char *error, size_t error_len);

/// Encodes 8-bit gray (1), RGB (3) or RGBA (4, alpha dropped) pixels, rows `row_bytes` apart, as a
/// baseline JPEG at `quality` (1…100) into a buffer it allocates (`*out`, `*out_size`; free with
/// `dl_jpeg_free`), behind setjmp. Returns 0, or -1 with `error` filled. (jpeg_mem.c)
int dl_jpeg_encode(const uint8_t *pixels, uint32_t width, uint32_t height, uint32_t channels, size_t row_bytes,
                   int quality, uint8_t **out, size_t *out_size, char *error, size_t error_len);
void dl_jpeg_free(uint8_t *data);

/// The hover readout's id map of a point list (point_id_map.c, Viewer's `PointIDMap`): fills the
/// `width`×`height` `keys` with, per pixel, (bits of the clip w << 32 | index) of the point nearest
/// the eye whose projection through the column-major 4×4 `m` lands on that pixel (pixel centers on
/// integers: u = ⌊(x/w + 1)/2·width⌋), UINT64_MAX where none. `xyz`: `count` points, point i's
/// x y z at `xyz + i·stride`. At most 2³² − 1 points are mapped.
void dl_point_id_map(const float *xyz, size_t count, size_t stride, const float *m, long width, long height,
                     uint64_t *keys);
// select.c: the k-th smallest of n floats (quickselect; reorders v). n > 0, k < n, no NaN.
float dl_select_float(float *v, size_t n, size_t k);

#ifdef __cplusplus
}
#endif
#endif
