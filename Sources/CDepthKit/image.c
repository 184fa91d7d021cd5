// libpng reports fatal errors by longjmp; it is wrapped here, behind setjmp in C frames, so Swift
// only ever sees a return code and a message. (JPEG: jpeg_mem.c.)
#include "dl_depthkit.h"
#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>

void dl_image_free(dl_image *image) {
    if (image && image->pixels) { free(image->pixels); image->pixels = NULL; }
}

static void set_error(char *error, size_t len, const char *msg) {
    if (error && len) { snprintf(error, len, "%s", msg); }
}

typedef struct { char *buf; size_t len; } png_err_ctx;

static void png_error_fn(png_structp png, png_const_charp msg) {
    png_err_ctx *ctx = (png_err_ctx *)png_get_error_ptr(png);
    if (ctx) set_error(ctx->buf, ctx->len, msg);
    png_longjmp(png, 1);
}
static void png_warning_fn(png_structp png, png_const_charp msg) { (void)png; (void)msg; }

// Limits set before anything is read: a side over 2^20 pixels fails at IHDR ("Invalid IHDR data");
// an ancillary chunk (or its zlib-inflated contents) over 8 MB is not kept, nor more than 1000 of
// them; text, ICC profiles, sPLT and eXIf (which depthlens never reads) are skipped unread instead
// of inflated, so a small PNG cannot make libpng allocate what it claims.
static void png_limits(png_structp png) {
    png_set_user_limits(png, 1u << 20, 1u << 20);
    png_set_chunk_malloc_max(png, 8u << 20);
    png_set_chunk_cache_max(png, 1000);
    static const png_byte skipped[] = "tEXt\0zTXt\0iTXt\0iCCP\0sPLT\0eXIf";
    png_set_keep_unknown_chunks(png, PNG_HANDLE_CHUNK_NEVER, skipped, (int)(sizeof skipped / 5));
}

// The part of reading a PNG after its source is set up (file or memory): expansions, size checks,
// the rows. Called under the caller's setjmp; `pixels` and `rows` are the caller's so that a
// longjmp out of here leaves them for the caller to free.
static void png_decode_rows(png_structp png, png_infop info, dl_image *out,
                            uint8_t *volatile *pixels, png_bytep *volatile *rows) {
    png_read_info(png, info);
    png_uint_32 w = png_get_image_width(png, info), h = png_get_image_height(png, info);
    // The size against the limit before libpng's row buffers (png_read_update_info) or ours.
    if (w == 0 || h == 0) png_error(png, "bad image size");
    if ((uint64_t)w * h > DL_MAX_IMAGE_PIXELS) png_error(png, "image size is more than 2^28 pixels");
    int color = png_get_color_type(png, info), depth = png_get_bit_depth(png, info);
    if (color == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
    if (color == PNG_COLOR_TYPE_GRAY && depth < 8) png_set_expand_gray_1_2_4_to_8(png);
    if (png_get_valid(png, info, PNG_INFO_tRNS)) png_set_tRNS_to_alpha(png);
    if (depth == 16) {
        // PNG stores 16-bit samples big-endian; hand them over in host order.
        uint16_t probe = 1;
        if (*(uint8_t *)&probe == 1) png_set_swap(png);
    }
    png_set_interlace_handling(png);
    png_read_update_info(png, info);
    size_t row_bytes = png_get_rowbytes(png, info);
    uint32_t channels = png_get_channels(png, info);
    uint32_t bit_depth = png_get_bit_depth(png, info);
    if ((size_t)h > SIZE_MAX / row_bytes) png_error(png, "bad image size");
    *pixels = malloc(row_bytes * h);
    *rows = malloc(sizeof(png_bytep) * h);
    if (!*pixels || !*rows) png_error(png, "out of memory");
    for (png_uint_32 y = 0; y < h; y++) (*rows)[y] = *pixels + y * row_bytes;
    png_read_image(png, *rows);
    png_read_end(png, NULL);
    free(*rows); *rows = NULL;
    out->width = w; out->height = h; out->channels = channels; out->bit_depth = bit_depth;
    out->row_bytes = row_bytes; out->pixels = *pixels;
}

int dl_png_read(const char *path, dl_image *out, char *error, size_t error_len) {
    memset(out, 0, sizeof(*out));
    FILE *fp = fopen(path, "rb");
    if (!fp) { set_error(error, error_len, strerror(errno)); return -1; }
    unsigned char sig[8];
    if (fread(sig, 1, 8, fp) != 8 || png_sig_cmp(sig, 0, 8) != 0) {
        fclose(fp); set_error(error, error_len, "not a PNG file (bad signature)"); return -1;
    }
    png_err_ctx ctx = { error, error_len };
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &ctx, png_error_fn, png_warning_fn);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!png || !info) {
        if (png) png_destroy_read_struct(&png, NULL, NULL);
        fclose(fp); set_error(error, error_len, "out of memory"); return -1;
    }
    // volatile: modified between setjmp and a possible longjmp.
    uint8_t *volatile pixels = NULL;
    png_bytep *volatile rows = NULL;
    if (setjmp(png_jmpbuf(png))) {
        free(pixels); free(rows);
        memset(out, 0, sizeof(*out));
        png_destroy_read_struct(&png, &info, NULL);
        fclose(fp);
        return -1;
    }
    png_init_io(png, fp);
    png_set_sig_bytes(png, 8);
    png_limits(png);
    png_decode_rows(png, info, out, &pixels, &rows);
    png_destroy_read_struct(&png, &info, NULL);
    fclose(fp);
    return 0;
}

// libpng's read callback over a byte buffer: a read past its end is a libpng error (longjmp).
typedef struct { const uint8_t *data; size_t size; size_t at; } png_memory;
static void png_memory_read(png_structp png, png_bytep dst, size_t n) {
    png_memory *m = (png_memory *)png_get_io_ptr(png);
    if (n > m->size - m->at) png_error(png, "PNG data ends early");
    memcpy(dst, m->data + m->at, n);
    m->at += n;
}

int dl_png_decode(const uint8_t *data, size_t size, dl_image *out, char *error, size_t error_len) {
    memset(out, 0, sizeof(*out));
    if (size < 8 || png_sig_cmp(data, 0, 8) != 0) { set_error(error, error_len, "not a PNG (bad signature)"); return -1; }
    png_err_ctx ctx = { error, error_len };
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &ctx, png_error_fn, png_warning_fn);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!png || !info) {
        if (png) png_destroy_read_struct(&png, NULL, NULL);
        set_error(error, error_len, "out of memory"); return -1;
    }
    png_memory source = { data, size, 8 };
    uint8_t *volatile pixels = NULL;
    png_bytep *volatile rows = NULL;
    if (setjmp(png_jmpbuf(png))) {
        free(pixels); free(rows);
        memset(out, 0, sizeof(*out));
        png_destroy_read_struct(&png, &info, NULL);
        return -1;
    }
    png_set_read_fn(png, &source, png_memory_read);
    png_set_sig_bytes(png, 8);
    png_limits(png);
    png_decode_rows(png, info, out, &pixels, &rows);
    png_destroy_read_struct(&png, &info, NULL);
    return 0;
}

int dl_png_write(const char *path, uint32_t width, uint32_t height, uint32_t channels,
                 uint32_t bit_depth, size_t row_bytes, const uint8_t *data,
                 char *error, size_t error_len) {
    // Level 1: fast (depthlens writes many frames); libpng's adaptive filter choice.
    return dl_png_write_options(path, width, height, channels, bit_depth, row_bytes, data, 1, 0, -1, 0, error, error_len);
}

/// True when every pixel of 8-bit RGBA rows has alpha 255.
static int rgba_opaque(uint32_t width, uint32_t height, size_t row_bytes, const uint8_t *data) {
    for (uint32_t y = 0; y < height; y++) {
        const uint8_t *r = data + (size_t)y * row_bytes;
        uint8_t all = 255;
        for (uint32_t x = 0; x < width; x++) all &= r[4 * x + 3];
        if (all != 255) return 0;
    }
    return 1;
}

int dl_png_write_options(const char *path, uint32_t width, uint32_t height, uint32_t channels,
                         uint32_t bit_depth, size_t row_bytes, const uint8_t *data,
                         int level, int strategy, int filter, int drop_opaque_alpha,
                         char *error, size_t error_len) {
    int color;
    switch (channels) {
        case 1: color = PNG_COLOR_TYPE_GRAY; break;
        case 2: color = PNG_COLOR_TYPE_GRAY_ALPHA; break;
        case 3: color = PNG_COLOR_TYPE_RGB; break;
        case 4: color = PNG_COLOR_TYPE_RGBA; break;
        default: set_error(error, error_len, "unsupported channel count"); return -1;
    }
    if (bit_depth != 8 && bit_depth != 16) { set_error(error, error_len, "unsupported bit depth"); return -1; }
    if (level < 0 || level > 9 || strategy < 0 || strategy > 3 || filter < -1 || filter > 4) { set_error(error, error_len, "bad encoder options"); return -1; }
    int strip = drop_opaque_alpha && channels == 4 && bit_depth == 8 && rgba_opaque(width, height, row_bytes, data);
    if (strip) color = PNG_COLOR_TYPE_RGB;
    FILE *fp = fopen(path, "wb");
    if (!fp) { set_error(error, error_len, strerror(errno)); return -1; }
    png_err_ctx ctx = { error, error_len };
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &ctx, png_error_fn, png_warning_fn);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!png || !info) {
        if (png) png_destroy_write_struct(&png, NULL);
        fclose(fp); set_error(error, error_len, "out of memory"); return -1;
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        fclose(fp);
        return -1;
    }
    png_init_io(png, fp);
    png_set_compression_level(png, level);
    png_set_compression_strategy(png, strategy);
    if (filter >= 0) {
        static const int filters[] = { PNG_FILTER_NONE, PNG_FILTER_SUB, PNG_FILTER_UP, PNG_FILTER_AVG, PNG_FILTER_PAETH };
        png_set_filter(png, PNG_FILTER_TYPE_BASE, filters[filter]);
    }
    png_set_IHDR(png, info, width, height, (int)bit_depth, color, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    if (strip) png_set_filler(png, 0, PNG_FILLER_AFTER);   // rows hold RGBX: libpng drops the X
    if (bit_depth == 16) {
        uint16_t probe = 1;
        if (*(uint8_t *)&probe == 1) png_set_swap(png);
    }
    for (uint32_t y = 0; y < height; y++) png_write_row(png, (png_const_bytep)(data + (size_t)y * row_bytes));
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    if (fclose(fp) != 0) { set_error(error, error_len, strerror(errno)); return -1; }
    return 0;
}

int dl_jpeg_read(const char *path, dl_image *out, char *error, size_t error_len) {
    // Read the whole file, then decode it from memory: one decoder for files and camera frames.
    memset(out, 0, sizeof(*out));
    FILE *fp = fopen(path, "rb");
    if (!fp) { set_error(error, error_len, strerror(errno)); return -1; }
    uint8_t *data = NULL;
    size_t size = 0, cap = 0;
    for (;;) {
        if (size == cap) {
            size_t ncap = cap ? cap * 2 : 1 << 16;
            uint8_t *n = realloc(data, ncap);
            if (!n) { free(data); fclose(fp); set_error(error, error_len, "out of memory"); return -1; }
            data = n; cap = ncap;
        }
        size_t got = fread(data + size, 1, cap - size, fp);
        size += got;
        if (got == 0) break;
    }
    int read_error = ferror(fp);
    fclose(fp);
    if (read_error) { free(data); set_error(error, error_len, "read error"); return -1; }
    int r = dl_jpeg_decode(data, size, 0, 0, out, error, error_len);
    free(data);
    return r;
}
