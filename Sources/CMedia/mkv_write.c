// depthlens' Matroska writer (see include/dl_media.h, "Writing depthlens' Matroska recordings"):
// COLOR (H.264 through libx264, or FFV1 bgr0), DEPTH and IR (FFV1 gray16le) tracks, microsecond
// timestamps, tags and attachments, through libavformat / libavcodec / libswscale in-process.
// The same writer makes MP4 files of one H.264 COLOR track (`convert --video FILE.mp4`).
#include "dl_media.h"

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/avutil.h>
#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void dl_media_log_begin(void);
const char *dl_media_last_log(void);

#define DL_MKV_MAX_ATTACHMENTS 8

typedef struct dl_mkv_track {
    int present;
    int width, height, lossless, crf;
    char preset[32];
    AVCodecContext *enc;
    AVStream *st;
    AVFrame *frame;
    struct SwsContext *sws;
    int64_t packets;
    int64_t last_pts;
} dl_mkv_track;

typedef struct dl_mkv_attachment {
    char *filename, *mimetype;
    uint8_t *data;
    size_t size;
} dl_mkv_attachment;

struct dl_mkv_writer {
    char *path;
    AVFormatContext *fmt;
    AVPacket *packet;
    dl_mkv_track tracks[3];
    AVDictionary *tags;
    dl_mkv_attachment attachments[DL_MKV_MAX_ATTACHMENTS];
    int attachment_count;
    int begun, finished;
    /// libavformat's muxer: "matroska" (default) or "mp4" (dl_mkv_writer_set_container).
    char container[16];
    /// The time base the pts of dl_mkv_writer_write_* count in (1/1000000 unless set).
    AVRational time_base;
    /// The nominal frame rate (0/0 unknown), written as each video stream's average rate.
    AVRational frame_rate;
    /// 1 when the muxer's streams are in milliseconds and microseconds are given as its units
    /// (TimestampScale rewritten to 1000 ns at the end).
    int micro_as_milli;
    int64_t header_end;
};

static const char *dl_mkv_titles[3] = { "COLOR", "DEPTH", "IR" };

static int dl_mkv_fail(int code, char *error, size_t error_len, const char *what, int averr) {
    if (error && error_len) {
        char reason[AV_ERROR_MAX_STRING_SIZE] = "";
        const char *log = dl_media_last_log();
        if (averr) av_strerror(averr, reason, sizeof reason);
        if (averr && log && log[0]) snprintf(error, error_len, "%s: %s (%s)", what, reason, log);
        else if (averr) snprintf(error, error_len, "%s: %s", what, reason);
        else snprintf(error, error_len, "%s", what);
    }
    return code;
}

static int dl_mkv_failf(int code, char *error, size_t error_len, const char *fmt, ...) {
    if (error && error_len) {
        va_list args;
        va_start(args, fmt);
        vsnprintf(error, error_len, fmt, args);
        va_end(args);
    }
    return code;
}

int dl_mkv_writer_create(const char *path, dl_mkv_writer **out, char *error, size_t error_len) {
    dl_media_log_begin();
    *out = NULL;
    if (!path || !path[0]) return dl_mkv_failf(DL_MEDIA_BAD_ARG, error, error_len, "no file name");
    dl_mkv_writer *w = av_mallocz(sizeof *w);
    if (!w || !(w->path = av_strdup(path))) {
        av_free(w);
        return dl_mkv_fail(DL_MEDIA_ERROR, error, error_len, "out of memory", AVERROR(ENOMEM));
    }
    snprintf(w->container, sizeof w->container, "matroska");
    w->time_base = (AVRational){ 1, 1000000 };
    *out = w;
    return 0;
}

int dl_mkv_writer_set_container(dl_mkv_writer *w, const char *format, char *error, size_t error_len) {
    if (w->begun) return dl_mkv_failf(DL_MEDIA_BAD_ARG, error, error_len, "the container must be chosen before the header is written");
    if (!format || (strcmp(format, "matroska") && strcmp(format, "mp4")))
        return dl_mkv_failf(DL_MEDIA_BAD_ARG, error, error_len, "unknown container %s (matroska or mp4)", format ? format : "(none)");
    snprintf(w->container, sizeof w->container, "%s", format);
    return 0;
}

static int dl_mkv_is_mp4(const dl_mkv_writer *w) { return !strcmp(w->container, "mp4"); }

int dl_mkv_writer_set_time_base(dl_mkv_writer *w, int num, int den, char *error, size_t error_len) {
    if (w->begun) return dl_mkv_failf(DL_MEDIA_BAD_ARG, error, error_len, "the time base must be set before the header is written");
    if (num < 1 || den < 1) return dl_mkv_failf(DL_MEDIA_BAD_ARG, error, error_len, "bad time base %d/%d", num, den);
    w->time_base = (AVRational){ num, den };
    return 0;
}

int dl_mkv_writer_set_frame_rate(dl_mkv_writer *w, int num, int den, char *error, size_t error_len) {
    if (w->begun) return dl_mkv_failf(DL_MEDIA_BAD_ARG, error, error_len, "the frame rate must be set before the header is written");
    if (num < 1 || den < 1) return dl_mkv_failf(DL_MEDIA_BAD_ARG, error, error_len, "bad frame rate %d/%d", num, den);
    w->frame_rate = (AVRational){ num, den };
    return 0;
}

static int dl_mkv_micro(const dl_mkv_writer *w) { return w->time_base.num == 1 && w->time_base.den == 1000000; }

int dl_mkv_writer_add_track(dl_mkv_writer *w, int role, int width, int height, int lossless, int crf,
                            const char *preset, char *error, size_t error_len) {
    if (role < 0 || role > 2) return dl_mkv_failf(DL_MEDIA_BAD_ARG, error, error_len, "unknown track role %d", role);
    if (w->begun) return dl_mkv_failf(DL_MEDIA_BAD_ARG, error, error_len, "tracks must be added before the header is written");
    if (w->tracks[role].present) return dl_mkv_failf(DL_MEDIA_BAD_ARG, error, error_len, "a %s track was already added", dl_mkv_titles[role]);
    if (width < 1 || height < 1 || width > 16384 || height > 16384)
        return dl_mkv_failf(DL_MEDIA_BAD_ARG, error, error_len, "cannot record a %dx%d %s track", width, height, dl_mkv_titles[role]);
    if (crf < 0 || crf > 51) return dl_mkv_failf(DL_MEDIA_BAD_ARG, error, error_len, "crf %d is outside 0…51", crf);
    dl_mkv_track *t = &w->tracks[role];
    t->present = 1;
    t->width = width;
    t->height = height;
    t->lossless = lossless;
    t->crf = crf;
    snprintf(t->preset, sizeof t->preset, "%s", preset && preset[0] ? preset : "veryfast");
    t->last_pts = INT64_MIN;
    return 0;
}

int dl_mkv_writer_set_tag(dl_mkv_writer *w, const char *key, const char *value, char *error, size_t error_len) {
    if (w->begun) return dl_mkv_failf(DL_MEDIA_BAD_ARG, error, error_len, "tags must be set before the header is written");
    if (!key || !key[0] || !value) return dl_mkv_failf(DL_MEDIA_BAD_ARG, error, error_len, "empty tag");
    if (av_dict_set(&w->tags, key, value, 0) < 0) return dl_mkv_fail(DL_MEDIA_ERROR, error, error_len, "out of memory", AVERROR(ENOMEM));
    return 0;
}

int dl_mkv_writer_add_attachment(dl_mkv_writer *w, const char *filename, const char *mimetype,
                                 const uint8_t *data, size_t size, char *error, size_t error_len) {
    if (w->begun) return dl_mkv_failf(DL_MEDIA_BAD_ARG, error, error_len, "attachments must be added before the header is written");
    if (w->attachment_count >= DL_MKV_MAX_ATTACHMENTS) return dl_mkv_failf(DL_MEDIA_BAD_ARG, error, error_len, "too many attachments");
    if (!filename || !filename[0] || !mimetype || !mimetype[0]) return dl_mkv_failf(DL_MEDIA_BAD_ARG, error, error_len, "an attachment needs a file name and a MIME type");
    if (size == 0 || size > (size_t)INT_MAX - AV_INPUT_BUFFER_PADDING_SIZE) return dl_mkv_failf(DL_MEDIA_BAD_ARG, error, error_len, "attachment %s: bad size %zu", filename, size);
    dl_mkv_attachment *a = &w->attachments[w->attachment_count];
    a->filename = av_strdup(filename);
    a->mimetype = av_strdup(mimetype);
    a->data = av_malloc(size);
    if (!a->filename || !a->mimetype || !a->data) {
        av_freep(&a->filename); av_freep(&a->mimetype); av_freep(&a->data);
        return dl_mkv_fail(DL_MEDIA_ERROR, error, error_len, "out of memory", AVERROR(ENOMEM));
    }
    memcpy(a->data, data, size);
    a->size = size;
    w->attachment_count++;
    return 0;
}

// MARK: - Opening

static int dl_mkv_open_encoder(dl_mkv_writer *w, int role, char *error, size_t error_len) {
    dl_mkv_track *t = &w->tracks[role];
    int h264 = role == DL_MKV_COLOR && !t->lossless;
    const AVCodec *codec = h264 ? avcodec_find_encoder_by_name("libx264") : avcodec_find_encoder(AV_CODEC_ID_FFV1);
    if (!codec) return dl_mkv_failf(DL_MEDIA_ERROR, error, error_len, "libavcodec has no %s encoder", h264 ? "libx264" : "FFV1");
    AVCodecContext *c = avcodec_alloc_context3(codec);
    if (!c) return dl_mkv_fail(DL_MEDIA_ERROR, error, error_len, "out of memory", AVERROR(ENOMEM));
    t->enc = c;
    c->width = t->width;
    c->height = t->height;
    c->time_base = w->time_base;
    if (!dl_mkv_micro(w)) c->framerate = av_inv_q(w->time_base);   // constant rate: one frame a tick
    c->sample_aspect_ratio = (AVRational){ 1, 1 };
    if (w->fmt->oformat->flags & AVFMT_GLOBALHEADER) c->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
    AVDictionary *opts = NULL;
    if (h264) {
        // yuv420p needs even sizes; odd ones keep every pixel in yuv444p.
        c->pix_fmt = (t->width % 2 || t->height % 2) ? AV_PIX_FMT_YUV444P : AV_PIX_FMT_YUV420P;
        c->colorspace = AVCOL_SPC_SMPTE170M;   // BT.601, what libswscale converts with by default
        c->color_range = AVCOL_RANGE_MPEG;
        c->max_b_frames = 0;                   // pts = dts: no reordering in the file
        c->gop_size = 60;
        char crf[16];
        snprintf(crf, sizeof crf, "%d", t->crf);
        av_dict_set(&opts, "crf", crf, 0);
        av_dict_set(&opts, "preset", t->preset, 0);
    } else {
        c->pix_fmt = role == DL_MKV_COLOR ? AV_PIX_FMT_BGR0 : AV_PIX_FMT_GRAY16LE;
        c->gop_size = 1;                       // every frame decodes on its own
        c->thread_count = 2;
        av_dict_set(&opts, "level", "3", 0);
        av_dict_set(&opts, "slices", "4", 0);
        av_dict_set(&opts, "coder", "range_def", 0);
    }
    int r = avcodec_open2(c, codec, &opts);
    av_dict_free(&opts);
    if (r < 0) return dl_mkv_fail(DL_MEDIA_ERROR, error, error_len, h264 ? "cannot open the H.264 encoder" : "cannot open the FFV1 encoder", r);
    t->frame = av_frame_alloc();
    if (!t->frame) return dl_mkv_fail(DL_MEDIA_ERROR, error, error_len, "out of memory", AVERROR(ENOMEM));
    t->frame->format = c->pix_fmt;
    t->frame->width = c->width;
    t->frame->height = c->height;
    if ((r = av_frame_get_buffer(t->frame, 0)) < 0) return dl_mkv_fail(DL_MEDIA_ERROR, error, error_len, "out of memory", r);
    if (h264) {
        t->sws = sws_getContext(t->width, t->height, AV_PIX_FMT_RGBA, t->width, t->height, c->pix_fmt,
                                SWS_BILINEAR | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT, NULL, NULL, NULL);
        if (!t->sws) return dl_mkv_failf(DL_MEDIA_ERROR, error, error_len, "cannot convert rgba to %s", av_get_pix_fmt_name(c->pix_fmt));
    }
    AVStream *st = avformat_new_stream(w->fmt, NULL);
    if (!st) return dl_mkv_fail(DL_MEDIA_ERROR, error, error_len, "out of memory", AVERROR(ENOMEM));
    if ((r = avcodec_parameters_from_context(st->codecpar, c)) < 0) return dl_mkv_fail(DL_MEDIA_ERROR, error, error_len, "out of memory", r);
    st->time_base = c->time_base;
    // Matroska's DefaultDuration (and MP4's average rate): without it ffmpeg takes an H.264 track
    // of a microsecond time base for 1000000 fps (the SPS timing) and converts it to that rate.
    if (w->frame_rate.num > 0) st->avg_frame_rate = w->frame_rate;
    av_dict_set(&st->metadata, "title", dl_mkv_titles[role], 0);
    if (role == DL_MKV_COLOR) st->disposition = AV_DISPOSITION_DEFAULT;   // the track players show
    t->st = st;
    return 0;
}

/// Rewrites the 3-byte TimestampScale 1000000 (2AD7B1 83 0F4240) as 1000 (2AD7B1 83 0003E8) and
/// the tracks' DURATION tag strings (written in milliseconds-as-microseconds) in the file's head.
static int dl_mkv_patch(dl_mkv_writer *w, char *error, size_t error_len) {
    int fd = open(w->path, O_RDWR | O_CLOEXEC);
    if (fd < 0) return dl_mkv_failf(DL_MEDIA_ERROR, error, error_len, "cannot reopen to finish: %s", strerror(errno));
    size_t len = (size_t)(w->header_end > 0 ? w->header_end : 4096) + 4096;
    if (len > (1u << 24)) len = 1u << 24;
    uint8_t *b = malloc(len);
    ssize_t n = b ? pread(fd, b, len, 0) : -1;
    int found = 0;
    for (ssize_t i = 0; n > 0 && i + 7 <= n; i++) {
        static const uint8_t scale[7] = { 0x2A, 0xD7, 0xB1, 0x83, 0x0F, 0x42, 0x40 };
        if (!found && !memcmp(b + i, scale, 7)) {
            b[i + 4] = 0x00; b[i + 5] = 0x03; b[i + 6] = 0xE8;
            found = 1;
            continue;
        }
        static const uint8_t name[11] = { 0x45, 0xA3, 0x88, 'D', 'U', 'R', 'A', 'T', 'I', 'O', 'N' };
        if (i + 11 + 3 <= n && !memcmp(b + i, name, 11) && b[i + 11] == 0x44 && b[i + 12] == 0x87 && (b[i + 13] & 0x80)) {
            size_t size = b[i + 13] & 0x7F;
            uint8_t *s = b + i + 14;
            if (size < 12 || size > 40 || (ssize_t)(i + 14 + size) > n) continue;
            char text[48];
            memcpy(text, s, size);
            text[size] = 0;
            int hours, minutes;
            double seconds;
            if (sscanf(text, "%d:%d:%lf", &hours, &minutes, &seconds) != 3) continue;
            double total = ((double)hours * 3600 + minutes * 60 + seconds) / 1000;
            int h = (int)(total / 3600), m = ((int)(total / 60)) % 60;
            char fixed[48];
            snprintf(fixed, sizeof fixed, "%02d:%02d:%012.9f", h, m, total - 3600.0 * h - 60.0 * m);
            size_t k = strlen(fixed);
            memset(s, 0, size);
            memcpy(s, fixed, k < size ? k : size);
        }
    }
    int r = 0;
    if (!found) r = dl_mkv_failf(DL_MEDIA_ERROR, error, error_len, "the Matroska header has no TimestampScale to set");
    else if (pwrite(fd, b, (size_t)n, 0) != n) r = dl_mkv_failf(DL_MEDIA_ERROR, error, error_len, "cannot finish the header: %s", strerror(errno));
    free(b);
    if (close(fd) != 0 && r == 0) r = dl_mkv_failf(DL_MEDIA_ERROR, error, error_len, "cannot finish the header: %s", strerror(errno));
    return r;
}

int dl_mkv_writer_begin(dl_mkv_writer *w, char *error, size_t error_len) {
    dl_media_log_begin();
    if (w->begun) return dl_mkv_failf(DL_MEDIA_BAD_ARG, error, error_len, "already begun");
    if (!w->tracks[0].present && !w->tracks[1].present && !w->tracks[2].present)
        return dl_mkv_failf(DL_MEDIA_BAD_ARG, error, error_len, "no tracks to record");
    int mp4 = dl_mkv_is_mp4(w);
    if (mp4) {
        // MP4 carries H.264 only here: FFV1 and 16-bit tracks and attachments need Matroska.
        if (w->tracks[DL_MKV_DEPTH].present || w->tracks[DL_MKV_IR].present || w->tracks[DL_MKV_COLOR].lossless)
            return dl_mkv_failf(DL_MEDIA_BAD_ARG, error, error_len, "MP4 holds an H.264 COLOR track only (FFV1 needs Matroska: .mkv)");
        if (w->attachment_count) return dl_mkv_failf(DL_MEDIA_BAD_ARG, error, error_len, "MP4 holds no attachments (Matroska does: .mkv)");
    }
    int r = avformat_alloc_output_context2(&w->fmt, NULL, w->container, w->path);
    if (r < 0 || !w->fmt) return dl_mkv_fail(DL_MEDIA_ERROR, error, error_len, mp4 ? "libavformat has no MP4 muxer" : "libavformat has no Matroska muxer", r);
    w->packet = av_packet_alloc();
    if (!w->packet) return dl_mkv_fail(DL_MEDIA_ERROR, error, error_len, "out of memory", AVERROR(ENOMEM));
    for (int role = 0; role < 3; role++)
        if (w->tracks[role].present && (r = dl_mkv_open_encoder(w, role, error, error_len))) return r;
    for (int i = 0; i < w->attachment_count; i++) {
        dl_mkv_attachment *a = &w->attachments[i];
        AVStream *st = avformat_new_stream(w->fmt, NULL);
        if (!st) return dl_mkv_fail(DL_MEDIA_ERROR, error, error_len, "out of memory", AVERROR(ENOMEM));
        st->codecpar->codec_type = AVMEDIA_TYPE_ATTACHMENT;
        st->codecpar->codec_id = AV_CODEC_ID_BIN_DATA;
        st->codecpar->extradata = av_mallocz(a->size + AV_INPUT_BUFFER_PADDING_SIZE);
        if (!st->codecpar->extradata) return dl_mkv_fail(DL_MEDIA_ERROR, error, error_len, "out of memory", AVERROR(ENOMEM));
        memcpy(st->codecpar->extradata, a->data, a->size);
        st->codecpar->extradata_size = (int)a->size;
        av_dict_set(&st->metadata, "filename", a->filename, 0);
        av_dict_set(&st->metadata, "mimetype", a->mimetype, 0);
    }
    av_dict_copy(&w->fmt->metadata, w->tags, 0);
    if ((r = avio_open(&w->fmt->pb, w->path, AVIO_FLAG_WRITE)) < 0) return dl_mkv_fail(DL_MEDIA_ERROR, error, error_len, "cannot write", r);
    w->begun = 1;
    AVDictionary *opts = NULL;
    if (mp4) {
        // The index (moov) moved to the front when finishing (players start at once), and the
        // container tags kept as metadata (ffprobe shows them as format tags).
        av_dict_set(&opts, "movflags", "+faststart+use_metadata_tags", 0);
    } else {
        av_dict_set(&opts, "write_crc32", "0", 0);   // the head is patched after writing (TimestampScale)
    }
    r = avformat_write_header(w->fmt, &opts);
    av_dict_free(&opts);
    if (r < 0) return dl_mkv_fail(DL_MEDIA_ERROR, error, error_len, mp4 ? "cannot write the MP4 header" : "cannot write the Matroska header", r);
    AVRational tb = { 0, 1 };
    for (int role = 0; role < 3; role++) if (w->tracks[role].present) { tb = w->tracks[role].st->time_base; break; }
    w->micro_as_milli = !mp4 && dl_mkv_micro(w) && tb.num == 1 && tb.den == 1000;
    avio_flush(w->fmt->pb);
    w->header_end = avio_tell(w->fmt->pb);
    if (w->micro_as_milli && (r = dl_mkv_patch(w, error, error_len))) return r;
    return 0;
}

// MARK: - Frames

static int dl_mkv_drain(dl_mkv_writer *w, dl_mkv_track *t, char *error, size_t error_len) {
    for (;;) {
        int r = avcodec_receive_packet(t->enc, w->packet);
        if (r == AVERROR(EAGAIN) || r == AVERROR_EOF) return 0;
        if (r < 0) return dl_mkv_fail(DL_MEDIA_ERROR, error, error_len, "encoding failed", r);
        w->packet->stream_index = t->st->index;
        if (!w->packet->duration && !dl_mkv_micro(w)) w->packet->duration = 1;   // constant rate: one tick a frame
        if (!w->micro_as_milli) av_packet_rescale_ts(w->packet, t->enc->time_base, t->st->time_base);
        r = av_interleaved_write_frame(w->fmt, w->packet);
        av_packet_unref(w->packet);
        if (r < 0) return dl_mkv_fail(DL_MEDIA_ERROR, error, error_len, "cannot write", r);
        t->packets++;
    }
}

static int dl_mkv_send(dl_mkv_writer *w, dl_mkv_track *t, int64_t pts_us, char *error, size_t error_len) {
    t->frame->pts = pts_us;
    t->last_pts = pts_us;
    int r = avcodec_send_frame(t->enc, t->frame);
    if (r < 0) return dl_mkv_fail(DL_MEDIA_ERROR, error, error_len, "encoding failed", r);
    return dl_mkv_drain(w, t, error, error_len);
}

static int dl_mkv_ready(dl_mkv_writer *w, int role, int64_t pts_us, char *error, size_t error_len) {
    if (role < 0 || role > 2 || !w->tracks[role].present) return dl_mkv_failf(DL_MEDIA_BAD_ARG, error, error_len, "no such track");
    if (!w->begun || w->finished || !w->fmt->pb) return dl_mkv_failf(DL_MEDIA_BAD_ARG, error, error_len, "the file is not open for writing");
    dl_mkv_track *t = &w->tracks[role];
    if (pts_us < 0) return dl_mkv_failf(DL_MEDIA_BAD_ARG, error, error_len, "negative timestamp %lld us", (long long)pts_us);
    if (t->last_pts != INT64_MIN && pts_us <= t->last_pts)
        return dl_mkv_failf(DL_MEDIA_BAD_ARG, error, error_len, "%s timestamp %lld us is not after the previous one (%lld us)",
                            dl_mkv_titles[role], (long long)pts_us, (long long)t->last_pts);
    int r = av_frame_make_writable(t->frame);
    if (r < 0) return dl_mkv_fail(DL_MEDIA_ERROR, error, error_len, "out of memory", r);
    return 0;
}

int dl_mkv_writer_write_rgba(dl_mkv_writer *w, const uint8_t *rgba, size_t stride, int64_t pts_us,
                             char *error, size_t error_len) {
    dl_media_log_begin();
    int r = dl_mkv_ready(w, DL_MKV_COLOR, pts_us, error, error_len);
    if (r) return r;
    dl_mkv_track *t = &w->tracks[DL_MKV_COLOR];
    if (stride < (size_t)t->width * 4 || stride > INT_MAX) return dl_mkv_failf(DL_MEDIA_BAD_ARG, error, error_len, "bad row stride %zu", stride);
    if (t->sws) {
        const uint8_t *src[4] = { rgba, NULL, NULL, NULL };
        int strides[4] = { (int)stride, 0, 0, 0 };
        if (sws_scale(t->sws, src, strides, 0, t->height, t->frame->data, t->frame->linesize) != t->height)
            return dl_mkv_failf(DL_MEDIA_ERROR, error, error_len, "converting the frame to YUV failed");
    } else {
        for (int y = 0; y < t->height; y++) {
            const uint8_t *s = rgba + (size_t)y * stride;
            uint8_t *d = t->frame->data[0] + (size_t)y * (size_t)t->frame->linesize[0];
            for (int x = 0; x < t->width; x++) {
                d[4 * x] = s[4 * x + 2];
                d[4 * x + 1] = s[4 * x + 1];
                d[4 * x + 2] = s[4 * x];
                d[4 * x + 3] = 0;
            }
        }
    }
    return dl_mkv_send(w, t, pts_us, error, error_len);
}

int dl_mkv_writer_write_gray16(dl_mkv_writer *w, int role, const uint16_t *data, size_t stride, int64_t pts_us,
                               char *error, size_t error_len) {
    dl_media_log_begin();
    if (role == DL_MKV_COLOR) return dl_mkv_failf(DL_MEDIA_BAD_ARG, error, error_len, "the COLOR track takes rgba8 frames");
    int r = dl_mkv_ready(w, role, pts_us, error, error_len);
    if (r) return r;
    dl_mkv_track *t = &w->tracks[role];
    if (stride < (size_t)t->width * 2) return dl_mkv_failf(DL_MEDIA_BAD_ARG, error, error_len, "bad row stride %zu", stride);
    for (int y = 0; y < t->height; y++)
        memcpy(t->frame->data[0] + (size_t)y * (size_t)t->frame->linesize[0], (const uint8_t *)data + (size_t)y * stride,
               (size_t)t->width * 2);
    return dl_mkv_send(w, t, pts_us, error, error_len);
}

// MARK: - Finishing

int dl_mkv_writer_finish(dl_mkv_writer *w, char *error, size_t error_len) {
    dl_media_log_begin();
    if (!w || w->finished) return 0;
    w->finished = 1;
    if (!w->begun || !w->fmt || !w->fmt->pb) return 0;
    int r = 0;
    char ignored[256];
    for (int role = 0; role < 3; role++) {
        dl_mkv_track *t = &w->tracks[role];
        if (!t->present || !t->enc) continue;
        int e = avcodec_send_frame(t->enc, NULL);
        if (e >= 0) e = dl_mkv_drain(w, t, r ? ignored : error, r ? sizeof ignored : error_len);
        else e = dl_mkv_fail(DL_MEDIA_ERROR, r ? ignored : error, r ? sizeof ignored : error_len, "encoding failed", e);
        if (e && !r) r = e;
    }
    int e = av_write_trailer(w->fmt);
    if (e < 0 && !r) r = dl_mkv_fail(DL_MEDIA_ERROR, error, error_len, dl_mkv_is_mp4(w) ? "cannot finish the MP4 file" : "cannot finish the Matroska file", e);
    e = avio_closep(&w->fmt->pb);
    if (e < 0 && !r) r = dl_mkv_fail(DL_MEDIA_ERROR, error, error_len, "cannot write", e);
    if (w->micro_as_milli) {
        e = dl_mkv_patch(w, r ? ignored : error, r ? sizeof ignored : error_len);
        if (e && !r) r = e;
    }
    return r;
}

int64_t dl_mkv_writer_packets(const dl_mkv_writer *w, int role) {
    return role >= 0 && role < 3 ? w->tracks[role].packets : 0;
}

int64_t dl_mkv_writer_bytes(const dl_mkv_writer *w) {
    if (!w->fmt || !w->fmt->pb) return w->header_end;
    return avio_tell(w->fmt->pb);
}

void dl_mkv_writer_free(dl_mkv_writer *w) {
    if (!w) return;
    char ignored[256];
    dl_mkv_writer_finish(w, ignored, sizeof ignored);
    for (int role = 0; role < 3; role++) {
        dl_mkv_track *t = &w->tracks[role];
        avcodec_free_context(&t->enc);
        av_frame_free(&t->frame);
        sws_freeContext(t->sws);
    }
    for (int i = 0; i < w->attachment_count; i++) {
        av_free(w->attachments[i].filename);
        av_free(w->attachments[i].mimetype);
        av_free(w->attachments[i].data);
    }
    av_packet_free(&w->packet);
    if (w->fmt) {
        if (w->fmt->pb) avio_closep(&w->fmt->pb);
        avformat_free_context(w->fmt);
    }
    av_dict_free(&w->tags);
    av_free(w->path);
    av_free(w);
}
