// Single coded pictures (HEIF items, PNG/JPEG payloads of depth photos) through libavcodec
// (see include/dl_media.h, "Still images").
#include "dl_media.h"

#include <libavcodec/avcodec.h>
#include <libavutil/avutil.h>
#include <libavutil/imgutils.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

// media.c's logging (libav's messages kept, never printed).
void dl_media_log_begin(void);
const char *dl_media_last_log(void);

#define DL_PICTURE_MAX_PIXELS ((int64_t)1 << 26)

struct dl_picture_decoder {
    AVCodecContext *codec;
    AVFrame *frame;
    int matrix, full_range;
};

static int dl_pfail(int code, char *error, size_t error_len, const char *what, int averr) {
    if (error && error_len) {
        char reason[AV_ERROR_MAX_STRING_SIZE] = "";
        if (averr) av_strerror(averr, reason, sizeof reason);
        const char *log = dl_media_last_log();
        if (averr && log[0]) snprintf(error, error_len, "%s: %s (%s)", what, reason, log);
        else if (averr) snprintf(error, error_len, "%s: %s", what, reason);
        else snprintf(error, error_len, "%s", what);
    }
    return code;
}

static int dl_pfailf(int code, char *error, size_t error_len, const char *fmt, ...) {
    if (error && error_len) {
        va_list args;
        va_start(args, fmt);
        vsnprintf(error, error_len, fmt, args);
        va_end(args);
    }
    return code;
}

void dl_picture_decoder_close(dl_picture_decoder *d) {
    if (!d) return;
    avcodec_free_context(&d->codec);
    av_frame_free(&d->frame);
    av_free(d);
}

int dl_picture_decoder_open(const char *name, const uint8_t *extradata, size_t extradata_size,
                            int matrix, int full_range, dl_picture_decoder **out, char *error, size_t error_len) {
    dl_media_log_begin();
    *out = NULL;
    const AVCodec *codec = avcodec_find_decoder_by_name(name);
    if (!codec) return dl_pfailf(DL_MEDIA_ERROR, error, error_len, "libavcodec has no decoder '%s'", name);
    if (extradata_size > (size_t)(INT_MAX - AV_INPUT_BUFFER_PADDING_SIZE))
        return dl_pfailf(DL_MEDIA_BAD_ARG, error, error_len, "codec configuration too large");
    dl_picture_decoder *d = av_mallocz(sizeof *d);
    if (!d) return dl_pfail(DL_MEDIA_ERROR, error, error_len, "out of memory", AVERROR(ENOMEM));
    d->matrix = matrix;
    d->full_range = full_range;
    d->codec = avcodec_alloc_context3(codec);
    d->frame = av_frame_alloc();
    if (!d->codec || !d->frame) {
        dl_picture_decoder_close(d);
        return dl_pfail(DL_MEDIA_ERROR, error, error_len, "out of memory", AVERROR(ENOMEM));
    }
    if (extradata_size) {
        d->codec->extradata = av_mallocz(extradata_size + AV_INPUT_BUFFER_PADDING_SIZE);
        if (!d->codec->extradata) {
            dl_picture_decoder_close(d);
            return dl_pfail(DL_MEDIA_ERROR, error, error_len, "out of memory", AVERROR(ENOMEM));
        }
        memcpy(d->codec->extradata, extradata, extradata_size);
        d->codec->extradata_size = (int)extradata_size;
    }
    d->codec->thread_count = 1;
    d->codec->max_pixels = DL_PICTURE_MAX_PIXELS;
    int r = avcodec_open2(d->codec, codec, NULL);
    if (r < 0) {
        dl_picture_decoder_close(d);
        return dl_pfail(DL_MEDIA_ERROR, error, error_len, "cannot open the decoder", r);
    }
    *out = d;
    return 0;
}

void dl_picture_free(dl_picture *p) {
    if (p) av_freep(&p->pixels);
}

/// swscale's matrix for ISO/IEC 23091-2 matrix_coefficients (or the frame's own when -1).
static int dl_sws_matrix(int matrix, const AVFrame *f) {
    int m = matrix >= 0 ? matrix : (int)f->colorspace;
    switch (m) {
    case AVCOL_SPC_BT709: return SWS_CS_ITU709;
    case AVCOL_SPC_BT2020_NCL: case AVCOL_SPC_BT2020_CL: return SWS_CS_BT2020;
    case AVCOL_SPC_FCC: return SWS_CS_FCC;
    case AVCOL_SPC_SMPTE240M: return SWS_CS_SMPTE240M;
    default: return SWS_CS_ITU601;
    }
}

static int dl_convert(dl_picture_decoder *d, const AVFrame *f, int format, dl_picture *out, char *error, size_t error_len) {
    int w = f->width, h = f->height;
    const AVPixFmtDescriptor *desc = av_pix_fmt_desc_get((enum AVPixelFormat)f->format);
    if (!desc || w <= 0 || h <= 0 || !f->data[0]) return dl_pfailf(DL_MEDIA_ERROR, error, error_len, "the decoder gave no picture");
    size_t bpp = format == DL_MEDIA_RGBA8 ? 4 : format == DL_MEDIA_GRAY16 ? 2 : 1;
    size_t stride = (size_t)w * bpp;
    uint8_t *pixels = av_malloc(stride * (size_t)h);
    if (!pixels) return dl_pfail(DL_MEDIA_ERROR, error, error_len, "out of memory", AVERROR(ENOMEM));
    if (format == DL_MEDIA_GRAY8) {
        // The first plane as it is: 8-bit gray or the luma of a planar YUV format.
        if (desc->comp[0].depth != 8 || desc->comp[0].plane != 0 || desc->comp[0].step != 1 || (desc->flags & AV_PIX_FMT_FLAG_RGB)) {
            av_free(pixels);
            return dl_pfailf(DL_MEDIA_BAD_ARG, error, error_len, "picture is %s, not 8-bit gray or YUV", desc->name);
        }
        for (int y = 0; y < h; y++) memcpy(pixels + (size_t)y * stride, f->data[0] + (ptrdiff_t)y * f->linesize[0], (size_t)w);
    } else {
        enum AVPixelFormat dst = format == DL_MEDIA_RGBA8 ? AV_PIX_FMT_RGBA : AV_PIX_FMT_GRAY16;
        struct SwsContext *sws = sws_getContext(w, h, (enum AVPixelFormat)f->format, w, h, dst, SWS_BILINEAR | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT,
                                                NULL, NULL, NULL);
        if (!sws) {
            av_free(pixels);
            return dl_pfailf(DL_MEDIA_ERROR, error, error_len, "cannot convert %s to %s", desc->name, av_get_pix_fmt_name(dst));
        }
        int *inv_table, *table, src_range, dst_range, brightness, contrast, saturation;
        if (sws_getColorspaceDetails(sws, &inv_table, &src_range, &table, &dst_range, &brightness, &contrast, &saturation) >= 0) {
            int jpeg = !strncmp(desc->name, "yuvj", 4);
            int range = d->full_range >= 0 ? d->full_range : (jpeg || f->color_range == AVCOL_RANGE_JPEG);
            sws_setColorspaceDetails(sws, sws_getCoefficients(dl_sws_matrix(d->matrix, f)), range, table, dst_range,
                                     brightness, contrast, saturation);
        }
        uint8_t *planes[4] = { pixels, NULL, NULL, NULL };
        int strides[4] = { (int)stride, 0, 0, 0 };
        int rows = sws_scale(sws, (const uint8_t *const *)f->data, f->linesize, 0, h, planes, strides);
        sws_freeContext(sws);
        if (rows != h) {
            av_free(pixels);
            return dl_pfailf(DL_MEDIA_ERROR, error, error_len, "converting the picture failed");
        }
    }
    out->width = w;
    out->height = h;
    out->stride = stride;
    out->pixels = pixels;
    snprintf(out->pixel_format_name, sizeof out->pixel_format_name, "%s", desc->name);
    return 0;
}

int dl_picture_decode(dl_picture_decoder *d, const uint8_t *data, size_t size, int format, dl_picture *out,
                      char *error, size_t error_len) {
    dl_media_log_begin();
    memset(out, 0, sizeof *out);
    if (format != DL_MEDIA_RGBA8 && format != DL_MEDIA_GRAY8 && format != DL_MEDIA_GRAY16)
        return dl_pfailf(DL_MEDIA_BAD_ARG, error, error_len, "unknown output format %d", format);
    if (!data || size == 0) return dl_pfailf(DL_MEDIA_BAD_ARG, error, error_len, "empty picture");
    if (size > (size_t)(INT_MAX - AV_INPUT_BUFFER_PADDING_SIZE)) return dl_pfailf(DL_MEDIA_BAD_ARG, error, error_len, "picture too large");
    AVPacket *p = av_packet_alloc();
    if (!p || av_new_packet(p, (int)size) < 0) {
        av_packet_free(&p);
        return dl_pfail(DL_MEDIA_ERROR, error, error_len, "out of memory", AVERROR(ENOMEM));
    }
    memcpy(p->data, data, size);
    p->flags |= AV_PKT_FLAG_KEY;
    int r = avcodec_send_packet(d->codec, p);
    av_packet_free(&p);
    if (r >= 0) r = avcodec_send_packet(d->codec, NULL);
    int got = 0;
    if (r >= 0) {
        av_frame_unref(d->frame);
        r = avcodec_receive_frame(d->codec, d->frame);
        got = r >= 0;
    }
    int result;
    if (!got) {
        result = r == AVERROR_EOF ? dl_pfailf(DL_MEDIA_ERROR, error, error_len, "the decoder gave no picture (corrupt or cut data)")
                                  : dl_pfail(DL_MEDIA_ERROR, error, error_len, "corrupt picture", r);
    } else if ((int64_t)d->frame->width * d->frame->height > DL_PICTURE_MAX_PIXELS) {
        result = dl_pfailf(DL_MEDIA_BAD_SIZE, error, error_len, "picture of %dx%d pixels", d->frame->width, d->frame->height);
    } else if (d->frame->decode_error_flags || (d->frame->flags & AV_FRAME_FLAG_CORRUPT)) {
        result = dl_pfailf(DL_MEDIA_ERROR, error, error_len, "corrupt picture (the decoder concealed errors)");
    } else {
        result = dl_convert(d, d->frame, format, out, error, error_len);
    }
    av_frame_unref(d->frame);
    avcodec_flush_buffers(d->codec);
    return result;
}
