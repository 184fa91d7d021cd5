// JPEG decoding for files (dl_jpeg_read reads the file first) and MJPEG camera frames: libjpeg
// reports errors by longjmp (or exit), so the decode stays behind setjmp here.
#include "dl_depthkit.h"
#include <stdio.h>  // jpeglib.h needs FILE
#include <jpeglib.h>
#include <jerror.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    struct jpeg_error_mgr mgr;
    jmp_buf jump;
    char *buf; size_t len;
} mem_err_ctx;

static void mem_set_error(char *buf, size_t len, const char *msg) {
    if (buf && len) { strncpy(buf, msg, len - 1); buf[len - 1] = 0; }
}

static void mem_error_exit(j_common_ptr cinfo) {
    mem_err_ctx *ctx = (mem_err_ctx *)cinfo->err;
    char msg[JMSG_LENGTH_MAX];
    if (cinfo->err->msg_code == JERR_NO_BACKING_STORE) {
        // The whole-image coefficient buffers of a progressive (or multi-scan) JPEG are over
        // max_memory_to_use (jmemnobs has no disk to spill to): say what that means.
        snprintf(msg, sizeof msg, "decoding needs more than %d MB of working memory (a progressive JPEG this large)",
                 (int)(DL_JPEG_MAX_MEMORY >> 20));
    } else {
        (*cinfo->err->format_message)(cinfo, msg);
    }
    mem_set_error(ctx->buf, ctx->len, msg);
    longjmp(ctx->jump, 1);
}

static void mem_output_message(j_common_ptr cinfo) { (void)cinfo; }

// Warnings are silent, but for scan data that ends before the image does (a truncated file or
// frame: the decoder needed bits past the end, JWRN_HIT_MARKER): that is an error, not a picture
// whose rest libjpeg made up. Data that only lacks its end-of-image marker (JWRN_JPEG_EOF alone)
// decodes whole and is accepted.
static void mem_emit_message(j_common_ptr cinfo, int level) {
    if (level < 0 && cinfo->err->msg_code == JWRN_HIT_MARKER) cinfo->err->error_exit(cinfo);
}

// The error manager every decode here uses: messages into `error`, a longjmp to the caller's
// setjmp on errors, truncated scan data an error.
static struct jpeg_error_mgr *mem_errors(mem_err_ctx *ctx, char *error, size_t error_len) {
    ctx->buf = error; ctx->len = error_len;
    struct jpeg_error_mgr *mgr = jpeg_std_error(&ctx->mgr);
    ctx->mgr.error_exit = mem_error_exit;
    ctx->mgr.output_message = mem_output_message;
    ctx->mgr.emit_message = mem_emit_message;
    return mgr;
}

// A decompressor over `data`, its working memory capped: libjpeg's whole-image buffers (a
// progressive JPEG keeps every coefficient, 2 bytes a sample: 1.5 GB for a 16384x16384 one whose
// header alone is 600 bytes) are refused past DL_JPEG_MAX_MEMORY before they are allocated.
static void mem_source(struct jpeg_decompress_struct *cinfo, const uint8_t *data, size_t size) {
    jpeg_create_decompress(cinfo);
    cinfo->mem->max_memory_to_use = DL_JPEG_MAX_MEMORY;
    jpeg_mem_src(cinfo, (unsigned char *)data, (unsigned long)size);
}

// A header claiming more than DL_MAX_IMAGE_PIXELS (said in `error`): refused before anything is allocated.
static int too_many_pixels(const struct jpeg_decompress_struct *cinfo, char *error, size_t error_len) {
    if ((uint64_t)cinfo->image_width * cinfo->image_height <= DL_MAX_IMAGE_PIXELS) return 0;
    snprintf(error, error_len, "image size %ux%u is more than %llu pixels", cinfo->image_width,
             cinfo->image_height, (unsigned long long)DL_MAX_IMAGE_PIXELS);
    return 1;
}

int dl_jpeg_decode(const uint8_t *data, size_t size, uint32_t expect_width, uint32_t expect_height, dl_image *out,
                   char *error, size_t error_len) {
    memset(out, 0, sizeof(*out));
    if (!data || size == 0) { mem_set_error(error, error_len, "empty JPEG data"); return -1; }
    struct jpeg_decompress_struct cinfo;
    mem_err_ctx ctx;
    cinfo.err = mem_errors(&ctx, error, error_len);
    uint8_t *volatile pixels = NULL;
    if (setjmp(ctx.jump)) {
        free(pixels);
        jpeg_destroy_decompress(&cinfo);
        return -1;
    }
    mem_source(&cinfo, data, size);
    jpeg_read_header(&cinfo, TRUE);
    if (expect_width && (cinfo.image_width != expect_width || cinfo.image_height != expect_height)) {
        snprintf(error, error_len, "frame is %ux%u, expected %ux%u", cinfo.image_width, cinfo.image_height,
                 expect_width, expect_height);
        jpeg_destroy_decompress(&cinfo);
        return -2;
    }
    if (too_many_pixels(&cinfo, error, error_len)) longjmp(ctx.jump, 1);
    if (cinfo.jpeg_color_space != JCS_GRAYSCALE) cinfo.out_color_space = JCS_RGB;
    jpeg_start_decompress(&cinfo);
    size_t row_bytes = (size_t)cinfo.output_width * cinfo.output_components;
    pixels = malloc(row_bytes * cinfo.output_height);
    if (!pixels) { mem_set_error(error, error_len, "out of memory"); longjmp(ctx.jump, 1); }
    while (cinfo.output_scanline < cinfo.output_height) {
        JSAMPROW row = pixels + (size_t)cinfo.output_scanline * row_bytes;
        jpeg_read_scanlines(&cinfo, &row, 1);
    }
    jpeg_finish_decompress(&cinfo);
    out->width = cinfo.output_width; out->height = cinfo.output_height;
    out->channels = (uint32_t)cinfo.output_components; out->bit_depth = 8;
    out->row_bytes = row_bytes; out->pixels = pixels;
    jpeg_destroy_decompress(&cinfo);
    return 0;
}

// The header (dst NULL: the size and whether it is gray into *width, *height, *gray) or the
// pixels as RGBA into dst, which must be *width x *height (-2 otherwise); either way a size over
// DL_MAX_IMAGE_PIXELS is an error (-1).
static int jpeg_rgba(const uint8_t *data, size_t size, uint8_t *dst, size_t dst_stride, uint32_t *width, uint32_t *height,
                     int *gray, char *error, size_t error_len) {
    if (!data || size == 0) { mem_set_error(error, error_len, "empty JPEG data"); return -1; }
    if (dst && dst_stride < (size_t)*width * 4) { mem_set_error(error, error_len, "no room for the RGBA pixels"); return -1; }
    struct jpeg_decompress_struct cinfo;
    mem_err_ctx ctx;
    cinfo.err = mem_errors(&ctx, error, error_len);
    if (setjmp(ctx.jump)) {
        jpeg_destroy_decompress(&cinfo);
        return -1;
    }
    mem_source(&cinfo, data, size);
    jpeg_read_header(&cinfo, TRUE);
    if (too_many_pixels(&cinfo, error, error_len)) longjmp(ctx.jump, 1);
    if (!dst) {
        *width = cinfo.image_width; *height = cinfo.image_height;
        *gray = cinfo.jpeg_color_space == JCS_GRAYSCALE;
        jpeg_destroy_decompress(&cinfo);
        return 0;
    }
    if (cinfo.image_width != *width || cinfo.image_height != *height) {
        snprintf(error, error_len, "frame is %ux%u, expected %ux%u", cinfo.image_width, cinfo.image_height, *width, *height);
        jpeg_destroy_decompress(&cinfo);
        return -2;
    }
    // libjpeg-turbo's extended color space: the RGB libjpeg converts to (gray spread to R, G and
    // B) with the fourth byte 0xFF, written straight into the caller's rows.
    cinfo.out_color_space = JCS_EXT_RGBA;
    jpeg_start_decompress(&cinfo);
    while (cinfo.output_scanline < cinfo.output_height) {
        JSAMPROW row = dst + (size_t)cinfo.output_scanline * dst_stride;
        jpeg_read_scanlines(&cinfo, &row, 1);
    }
    jpeg_finish_decompress(&cinfo);
    jpeg_destroy_decompress(&cinfo);
    return 0;
}

int dl_jpeg_info(const uint8_t *data, size_t size, uint32_t *width, uint32_t *height, int *gray,
                 char *error, size_t error_len) {
    *width = 0; *height = 0; *gray = 0;
    return jpeg_rgba(data, size, NULL, 0, width, height, gray, error, error_len);
}

int dl_jpeg_decode_rgba(const uint8_t *data, size_t size, uint8_t *dst, size_t dst_stride, uint32_t width, uint32_t height,
                        char *error, size_t error_len) {
    if (!dst) { mem_set_error(error, error_len, "no room for the RGBA pixels"); return -1; }
    int gray = 0;
    return jpeg_rgba(data, size, dst, dst_stride, &width, &height, &gray, error, error_len);
}

int dl_jpeg_encode(const uint8_t *pixels, uint32_t width, uint32_t height, uint32_t channels, size_t row_bytes,
                   int quality, uint8_t **out, size_t *out_size, char *error, size_t error_len) {
    *out = NULL;
    *out_size = 0;
    if (!pixels || width == 0 || height == 0 || (channels != 1 && channels != 3 && channels != 4)) {
        mem_set_error(error, error_len, "JPEG: no pixels, a zero size or an unsupported channel count");
        return -1;
    }
    struct jpeg_compress_struct cinfo;
    mem_err_ctx ctx;
    ctx.buf = error; ctx.len = error_len;
    cinfo.err = jpeg_std_error(&ctx.mgr);
    ctx.mgr.error_exit = mem_error_exit;
    ctx.mgr.output_message = mem_output_message;
    unsigned char *volatile buf = NULL;
    volatile unsigned long len = 0;
    if (setjmp(ctx.jump)) {
        // Not freed: libjpeg's memory destination may already have replaced (and freed) the
        // buffer `buf` last saw. Encoding valid pixels does not fail; this path is for safety.
        jpeg_destroy_compress(&cinfo);
        return -1;
    }
    jpeg_create_compress(&cinfo);
    jpeg_mem_dest(&cinfo, (unsigned char **)&buf, (unsigned long *)&len);
    cinfo.image_width = width;
    cinfo.image_height = height;
    cinfo.input_components = channels == 1 ? 1 : 3;
    cinfo.in_color_space = channels == 1 ? JCS_GRAYSCALE : (channels == 4 ? JCS_EXT_RGBA : JCS_RGB);
    if (channels == 4) cinfo.input_components = 4;
    jpeg_set_defaults(&cinfo);
    jpeg_set_quality(&cinfo, quality < 1 ? 1 : (quality > 100 ? 100 : quality), TRUE);
    jpeg_start_compress(&cinfo, TRUE);
    while (cinfo.next_scanline < cinfo.image_height) {
        JSAMPROW row = (JSAMPROW)(pixels + (size_t)cinfo.next_scanline * row_bytes);
        jpeg_write_scanlines(&cinfo, &row, 1);
    }
    jpeg_finish_compress(&cinfo);
    jpeg_destroy_compress(&cinfo);
    *out = buf;
    *out_size = len;
    return 0;
}

void dl_jpeg_free(uint8_t *data) { free(data); }
