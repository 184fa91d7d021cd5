// depthlens' libavformat / libavcodec / libswscale wrapper (see include/dl_media.h).
#include "dl_media.h"

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/avutil.h>
#include <libavutil/imgutils.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <limits.h>
#include <string.h>

/// The most pixels a decoder may allocate for one frame (2^26: 8192 × 8192), so that a lying
/// header gets an error, not a gigabyte allocation.
#define DL_MEDIA_MAX_PIXELS ((int64_t)1 << 26)

typedef struct dl_memory_io {
    uint8_t *data;
    size_t size;
    size_t pos;
} dl_memory_io;

typedef struct dl_decoder {
    AVCodecContext *codec;
    struct SwsContext *sws;
    // What `sws` was made for.
    int sws_width, sws_height, sws_in, sws_out, sws_colorspace, sws_range;
} dl_decoder;

struct dl_media {
    AVFormatContext *format;
    AVIOContext *custom_io;     // memory IO (NULL for files)
    AVIOContext *file_io;       // the file, opened here (NULL for memory)
    dl_memory_io memory;
    AVPacket *packet;           // the last packet read
    AVFrame *frame;
    dl_decoder *decoders;       // one slot per stream
    unsigned stream_count;
};

// MARK: - Logging: libav's messages never reach stderr; the last error-level one is kept (per thread)
// and added to the next error message.

static __thread char dl_last_log[256];

static void dl_log_callback(void *avcl, int level, const char *fmt, va_list args) {
    (void)avcl;
    if (level > AV_LOG_ERROR) return;
    vsnprintf(dl_last_log, sizeof dl_last_log, fmt, args);
    size_t n = strlen(dl_last_log);
    while (n > 0 && (dl_last_log[n - 1] == '\n' || dl_last_log[n - 1] == '\r')) dl_last_log[--n] = 0;
}

static pthread_once_t dl_log_once = PTHREAD_ONCE_INIT;
static void dl_log_install(void) { av_log_set_callback(dl_log_callback); }

static void dl_begin(void) {
    pthread_once(&dl_log_once, dl_log_install);
    dl_last_log[0] = 0;
}

// For mkv_write.c (same library): libav's logging routed here, and the last error-level line.
void dl_media_log_begin(void);
const char *dl_media_last_log(void);
void dl_media_log_begin(void) { dl_begin(); }
const char *dl_media_last_log(void) { return dl_last_log; }

/// "<what>: <libav's message for code>[ (<last logged error>)]".
static int dl_fail(int code, char *error, size_t error_len, const char *what, int averr) {
    if (error && error_len) {
        char reason[AV_ERROR_MAX_STRING_SIZE] = "";
        if (averr) av_strerror(averr, reason, sizeof reason);
        if (dl_last_log[0] && averr)
            snprintf(error, error_len, "%s: %s (%s)", what, reason, dl_last_log);
        else if (averr)
            snprintf(error, error_len, "%s: %s", what, reason);
        else
            snprintf(error, error_len, "%s", what);
    }
    return code;
}

static int dl_failf(int code, char *error, size_t error_len, const char *fmt, ...) {
    if (error && error_len) {
        va_list args;
        va_start(args, fmt);
        vsnprintf(error, error_len, fmt, args);
        va_end(args);
    }
    return code;
}

// MARK: - Memory IO

static int dl_memory_read(void *opaque, uint8_t *buf, int size) {
    dl_memory_io *io = opaque;
    if (io->pos >= io->size) return AVERROR_EOF;
    size_t n = io->size - io->pos;
    if (n > (size_t)size) n = (size_t)size;
    memcpy(buf, io->data + io->pos, n);
    io->pos += n;
    return (int)n;
}

static int64_t dl_memory_seek(void *opaque, int64_t offset, int whence) {
    dl_memory_io *io = opaque;
    if (whence & AVSEEK_SIZE) return (int64_t)io->size;
    int64_t base;
    switch (whence & ~AVSEEK_FORCE) {
    case SEEK_SET: base = 0; break;
    case SEEK_CUR: base = (int64_t)io->pos; break;
    case SEEK_END: base = (int64_t)io->size; break;
    default: return AVERROR(EINVAL);
    }
    if ((offset > 0 && base > INT64_MAX - offset)) return AVERROR(EINVAL);
    int64_t target = base + offset;
    if (target < 0 || target > (int64_t)io->size) return AVERROR(EINVAL);
    io->pos = (size_t)target;
    return target;
}

// MARK: - Open / close

void dl_media_close(dl_media *m) {
    if (!m) return;
    if (m->decoders) {
        for (unsigned i = 0; i < m->stream_count; i++) {
            avcodec_free_context(&m->decoders[i].codec);
            sws_freeContext(m->decoders[i].sws);
        }
        av_free(m->decoders);
    }
    av_packet_free(&m->packet);
    av_frame_free(&m->frame);
    avformat_close_input(&m->format);
    if (m->custom_io) {
        av_freep(&m->custom_io->buffer);
        avio_context_free(&m->custom_io);
    }
    avio_closep(&m->file_io);
    av_free(m->memory.data);
    av_free(m);
}

/// AVFormatContext.io_open for every container depthlens opens: refuses. The one input (the file,
/// or the bytes in memory) is opened by dl_media_open_* before the demuxer sees it; anything the
/// demuxer would open on the data's say-so — an HLS playlist's segments, a QuickTime data
/// reference, a concat or tee list, a URL — is another input, and no input names another.
static int dl_refuse_io_open(AVFormatContext *s, AVIOContext **pb, const char *url, int flags, AVDictionary **options) {
    (void)s; (void)flags; (void)options;
    *pb = NULL;
    av_log(NULL, AV_LOG_ERROR, "refused to open '%.160s' named inside the file", url ? url : "");
    return AVERROR(EPERM);
}

/// A person's word for a demuxer, for "not a … file".
static const char *dl_format_noun(const char *format) {
    if (!strcmp(format, "matroska")) return "a Matroska";
    if (!strcmp(format, "mov")) return "an MP4 / QuickTime";
    return NULL;
}

/// Opens the demuxer `format` (required: the kind of container the caller expects, never a probe
/// over every demuxer libavformat has) over `m->custom_io` (memory) or `m->file_io` (a file),
/// with nested opens refused (dl_refuse_io_open) and, for good measure, only the `file` protocol
/// allowed.
static int dl_open(dl_media *m, const char *format, char *error, size_t error_len) {
    if (!format || !*format) return dl_failf(DL_MEDIA_BAD_ARG, error, error_len, "no demuxer named");
    const AVInputFormat *input = av_find_input_format(format);
    if (!input) return dl_failf(DL_MEDIA_ERROR, error, error_len, "libavformat has no '%s' demuxer", format);
    m->format = avformat_alloc_context();
    m->packet = av_packet_alloc();
    m->frame = av_frame_alloc();
    if (!m->format || !m->packet || !m->frame) return dl_fail(DL_MEDIA_ERROR, error, error_len, "out of memory", AVERROR(ENOMEM));
    m->format->pb = m->custom_io ? m->custom_io : m->file_io;
    m->format->flags |= AVFMT_FLAG_CUSTOM_IO;
    m->format->io_open = dl_refuse_io_open;
    m->format->protocol_whitelist = av_strdup("file");
    if (!m->format->protocol_whitelist) return dl_fail(DL_MEDIA_ERROR, error, error_len, "out of memory", AVERROR(ENOMEM));
    int r = avformat_open_input(&m->format, NULL, input, NULL);
    if (r < 0) {
        // avformat_open_input freed the context on failure (not the custom IO: dl_media_close does).
        m->format = NULL;
        const char *noun = dl_format_noun(format);
        if (r == AVERROR_INVALIDDATA) {
            char what[96];
            if (noun) snprintf(what, sizeof what, "not %s file", noun);
            else snprintf(what, sizeof what, "not a '%s' file", format);
            return dl_fail(DL_MEDIA_ERROR, error, error_len, what, r);
        }
        return dl_fail(DL_MEDIA_ERROR, error, error_len, "cannot open", r);
    }
    m->stream_count = m->format->nb_streams;
    m->decoders = av_calloc(m->stream_count ? m->stream_count : 1, sizeof(dl_decoder));
    if (!m->decoders) return dl_fail(DL_MEDIA_ERROR, error, error_len, "out of memory", AVERROR(ENOMEM));
    return 0;
}

int dl_media_open_file(const char *path, const char *format, dl_media **out, char *error, size_t error_len) {
    dl_begin();
    *out = NULL;
    if (!format || !*format) return dl_failf(DL_MEDIA_BAD_ARG, error, error_len, "no demuxer named");
    dl_media *m = av_mallocz(sizeof *m);
    if (!m) return dl_fail(DL_MEDIA_ERROR, error, error_len, "out of memory", AVERROR(ENOMEM));
    // The path as a `file:` URL (the file protocol takes the rest as it is, so a name with a colon
    // is never read as another protocol), through the file protocol only.
    size_t n = strlen(path) + sizeof "file:";
    char *url = av_malloc(n);
    AVDictionary *options = NULL;
    int r = url ? av_dict_set(&options, "protocol_whitelist", "file", 0) : AVERROR(ENOMEM);
    if (r >= 0) {
        snprintf(url, n, "file:%s", path);
        r = avio_open2(&m->file_io, url, AVIO_FLAG_READ, NULL, &options);
    }
    av_dict_free(&options);
    av_free(url);
    if (r < 0) {
        dl_media_close(m);
        return dl_fail(DL_MEDIA_ERROR, error, error_len, "cannot open", r);
    }
    r = dl_open(m, format, error, error_len);
    if (r) { dl_media_close(m); return r; }
    *out = m;
    return 0;
}

int dl_media_open_memory(const uint8_t *data, size_t size, const char *format, dl_media **out,
                         char *error, size_t error_len) {
    dl_begin();
    *out = NULL;
    if (!format || !*format) return dl_failf(DL_MEDIA_BAD_ARG, error, error_len, "no demuxer named");
    dl_media *m = av_mallocz(sizeof *m);
    if (!m) return dl_fail(DL_MEDIA_ERROR, error, error_len, "out of memory", AVERROR(ENOMEM));
    m->memory.data = av_malloc(size ? size : 1);
    const int buffer_size = 65536;
    uint8_t *buffer = av_malloc(buffer_size);
    if (!m->memory.data || !buffer) {
        av_free(buffer);
        dl_media_close(m);
        return dl_fail(DL_MEDIA_ERROR, error, error_len, "out of memory", AVERROR(ENOMEM));
    }
    if (size) memcpy(m->memory.data, data, size);
    m->memory.size = size;
    m->custom_io = avio_alloc_context(buffer, buffer_size, 0, &m->memory, dl_memory_read, NULL, dl_memory_seek);
    if (!m->custom_io) {
        av_free(buffer);
        dl_media_close(m);
        return dl_fail(DL_MEDIA_ERROR, error, error_len, "out of memory", AVERROR(ENOMEM));
    }
    int r = dl_open(m, format, error, error_len);
    if (r) { dl_media_close(m); return r; }
    *out = m;
    return 0;
}

const char *dl_media_format_name(const dl_media *m) { return m->format->iformat->name; }

int64_t dl_media_duration_us(const dl_media *m) {
    return m->format->duration == AV_NOPTS_VALUE ? INT64_MIN : m->format->duration;
}

// MARK: - Streams, attachments, tags

int dl_media_stream_count(const dl_media *m) { return (int)m->stream_count; }

static void dl_copy(char *dst, size_t len, const char *src) {
    snprintf(dst, len, "%s", src ? src : "");
}

int dl_media_stream_info_get(const dl_media *m, int stream, dl_media_stream_info *out) {
    if (stream < 0 || (unsigned)stream >= m->stream_count) return DL_MEDIA_BAD_ARG;
    const AVStream *st = m->format->streams[stream];
    const AVCodecParameters *par = st->codecpar;
    memset(out, 0, sizeof *out);
    out->index = stream;
    switch (par->codec_type) {
    case AVMEDIA_TYPE_VIDEO: out->kind = DL_MEDIA_VIDEO; break;
    case AVMEDIA_TYPE_AUDIO: out->kind = DL_MEDIA_AUDIO; break;
    case AVMEDIA_TYPE_DATA: out->kind = DL_MEDIA_DATA; break;
    case AVMEDIA_TYPE_SUBTITLE: out->kind = DL_MEDIA_SUBTITLE; break;
    case AVMEDIA_TYPE_ATTACHMENT: out->kind = DL_MEDIA_ATTACHMENT; break;
    default: out->kind = DL_MEDIA_OTHER; break;
    }
    out->codec_id = (int32_t)par->codec_id;
    dl_copy(out->codec_name, sizeof out->codec_name, avcodec_get_name(par->codec_id));
    out->codec_tag = par->codec_tag;
    if (par->codec_type == AVMEDIA_TYPE_VIDEO) {
        out->width = par->width;
        out->height = par->height;
    }
    out->pixel_format = par->codec_type == AVMEDIA_TYPE_VIDEO ? par->format : -1;
    const char *pf = out->pixel_format >= 0 ? av_get_pix_fmt_name((enum AVPixelFormat)out->pixel_format) : NULL;
    dl_copy(out->pixel_format_name, sizeof out->pixel_format_name, pf);
    const AVCodecDescriptor *desc = avcodec_descriptor_get(par->codec_id);
    out->intra_only = desc && (desc->props & AV_CODEC_PROP_INTRA_ONLY) ? 1 : 0;
    const AVDictionaryEntry *title = av_dict_get(st->metadata, "title", NULL, 0);
    dl_copy(out->title, sizeof out->title, title ? title->value : NULL);
    out->time_base_num = st->time_base.num;
    out->time_base_den = st->time_base.den;
    out->start_pts = st->start_time == AV_NOPTS_VALUE ? INT64_MIN : st->start_time;
    out->duration = st->duration == AV_NOPTS_VALUE ? INT64_MIN : st->duration;
    out->frame_count = st->nb_frames;
    out->average_fps = st->avg_frame_rate.den > 0 && st->avg_frame_rate.num > 0 ? av_q2d(st->avg_frame_rate) : 0;
    if (par->codec_type == AVMEDIA_TYPE_ATTACHMENT) {
        const AVDictionaryEntry *fn = av_dict_get(st->metadata, "filename", NULL, 0);
        const AVDictionaryEntry *mt = av_dict_get(st->metadata, "mimetype", NULL, 0);
        dl_copy(out->filename, sizeof out->filename, fn ? fn->value : NULL);
        dl_copy(out->mimetype, sizeof out->mimetype, mt ? mt->value : NULL);
        out->attachment_size = par->extradata ? par->extradata_size : 0;
    }
    return 0;
}

int dl_media_attachment_data(const dl_media *m, int stream, const uint8_t **data, size_t *size) {
    if (stream < 0 || (unsigned)stream >= m->stream_count) return DL_MEDIA_BAD_ARG;
    const AVCodecParameters *par = m->format->streams[stream]->codecpar;
    if (par->codec_type != AVMEDIA_TYPE_ATTACHMENT) return DL_MEDIA_BAD_ARG;
    *data = par->extradata;
    *size = par->extradata && par->extradata_size > 0 ? (size_t)par->extradata_size : 0;
    return 0;
}

static AVDictionary *dl_tags(const dl_media *m, int stream) {
    if (stream == -1) return m->format->metadata;
    if (stream < 0 || (unsigned)stream >= m->stream_count) return NULL;
    return m->format->streams[stream]->metadata;
}

int dl_media_tag_count(const dl_media *m, int stream) {
    AVDictionary *d = dl_tags(m, stream);
    return d ? av_dict_count(d) : 0;
}

int dl_media_tag_at(const dl_media *m, int stream, int i, const char **key, const char **value) {
    AVDictionary *d = dl_tags(m, stream);
    if (!d || i < 0) return DL_MEDIA_BAD_ARG;
    const AVDictionaryEntry *e = NULL;
    for (int k = 0; k <= i; k++) {
        e = av_dict_get(d, "", e, AV_DICT_IGNORE_SUFFIX);
        if (!e) return DL_MEDIA_BAD_ARG;
    }
    *key = e->key;
    *value = e->value;
    return 0;
}

const char *dl_media_tag_get(const dl_media *m, int stream, const char *key) {
    AVDictionary *d = dl_tags(m, stream);
    if (!d) return NULL;
    const AVDictionaryEntry *e = av_dict_get(d, key, NULL, AV_DICT_MATCH_CASE);
    return e ? e->value : NULL;
}

// MARK: - Packets and seeking

int dl_media_read_packet(dl_media *m, dl_media_packet *out, char *error, size_t error_len) {
    dl_begin();
    av_packet_unref(m->packet);
    int r = av_read_frame(m->format, m->packet);
    if (r == AVERROR_EOF) return DL_MEDIA_EOF;
    if (r < 0) return dl_fail(DL_MEDIA_ERROR, error, error_len, "reading failed", r);
    const AVPacket *p = m->packet;
    if (p->stream_index < 0 || (unsigned)p->stream_index >= m->stream_count) {
        // A stream the demuxer added after opening: not one the caller knows.
        return dl_failf(DL_MEDIA_ERROR, error, error_len, "packet of an unknown stream %d", p->stream_index);
    }
    const AVStream *st = m->format->streams[p->stream_index];
    out->stream = p->stream_index;
    out->keyframe = (p->flags & AV_PKT_FLAG_KEY) ? 1 : 0;
    out->pts = p->pts == AV_NOPTS_VALUE ? (p->dts == AV_NOPTS_VALUE ? INT64_MIN : p->dts) : p->pts;
    out->pts_ns = out->pts == INT64_MIN ? INT64_MIN
        : av_rescale_q(out->pts, st->time_base, (AVRational){1, 1000000000});
    out->duration = p->duration;
    out->position = p->pos;
    out->data = p->data;
    out->size = p->data ? (size_t)p->size : 0;
    return 0;
}

int dl_media_seek(dl_media *m, int stream, int64_t timestamp, char *error, size_t error_len) {
    dl_begin();
    if (stream < 0 || (unsigned)stream >= m->stream_count) return dl_failf(DL_MEDIA_BAD_ARG, error, error_len, "no stream %d", stream);
    av_packet_unref(m->packet);
    int r = av_seek_frame(m->format, stream, timestamp, AVSEEK_FLAG_BACKWARD);
    for (unsigned i = 0; i < m->stream_count; i++)
        if (m->decoders[i].codec) avcodec_flush_buffers(m->decoders[i].codec);
    if (r < 0) return dl_fail(DL_MEDIA_ERROR, error, error_len, "seeking failed", r);
    return 0;
}

// MARK: - Decoding

/// Opens `d`'s codec context from a stream's parameters (one thread, frames in step with packets).
static int dl_decoder_open(dl_decoder *d, const AVCodecParameters *par, AVRational time_base, int stream,
                           char *error, size_t error_len) {
    if (par->codec_type != AVMEDIA_TYPE_VIDEO) return dl_failf(DL_MEDIA_BAD_ARG, error, error_len, "stream %d is not video", stream);
    const AVCodec *codec = avcodec_find_decoder(par->codec_id);
    if (!codec) return dl_failf(DL_MEDIA_ERROR, error, error_len, "libavcodec has no decoder for codec '%s'", avcodec_get_name(par->codec_id));
    AVCodecContext *c = avcodec_alloc_context3(codec);
    if (!c) return dl_fail(DL_MEDIA_ERROR, error, error_len, "out of memory", AVERROR(ENOMEM));
    int r = avcodec_parameters_to_context(c, par);
    if (r >= 0) {
        c->thread_count = 1;  // frames come out in step with packets (frame threads would delay them)
        c->max_pixels = DL_MEDIA_MAX_PIXELS;
        c->pkt_timebase = time_base;
        r = avcodec_open2(c, codec, NULL);
    }
    if (r < 0) {
        avcodec_free_context(&c);
        return dl_fail(DL_MEDIA_ERROR, error, error_len, "cannot open the decoder", r);
    }
    d->codec = c;
    return 0;
}

int dl_media_decoder_open(dl_media *m, int stream, char *error, size_t error_len) {
    dl_begin();
    if (stream < 0 || (unsigned)stream >= m->stream_count) return dl_failf(DL_MEDIA_BAD_ARG, error, error_len, "no stream %d", stream);
    dl_decoder *d = &m->decoders[stream];
    if (d->codec) return 0;
    return dl_decoder_open(d, m->format->streams[stream]->codecpar, m->format->streams[stream]->time_base, stream, error, error_len);
}

static int dl_decoder_send(dl_decoder *d, const AVPacket *p, char *error, size_t error_len) {
    int r = avcodec_send_packet(d->codec, p);
    if (r == AVERROR(EAGAIN)) return DL_MEDIA_AGAIN;
    if (r == AVERROR_EOF) return DL_MEDIA_EOF;
    if (r < 0) return dl_fail(DL_MEDIA_ERROR, error, error_len, "corrupt frame", r);
    return 0;
}

static int dl_send(dl_media *m, int stream, const AVPacket *p, char *error, size_t error_len) {
    if (stream < 0 || (unsigned)stream >= m->stream_count || !m->decoders[stream].codec)
        return dl_failf(DL_MEDIA_BAD_ARG, error, error_len, "no decoder open for stream %d", stream);
    return dl_decoder_send(&m->decoders[stream], p, error, error_len);
}

/// A packet holding a copy of `data` (libav pads and owns it); NULL when out of memory.
static AVPacket *dl_packet(const uint8_t *data, size_t size, int64_t pts, int keyframe) {
    AVPacket *p = av_packet_alloc();
    if (!p || av_new_packet(p, (int)size) < 0) {
        av_packet_free(&p);
        return NULL;
    }
    if (size) memcpy(p->data, data, size);
    p->pts = p->dts = pts == INT64_MIN ? AV_NOPTS_VALUE : pts;
    if (keyframe) p->flags |= AV_PKT_FLAG_KEY;
    return p;
}

int dl_media_send_packet(dl_media *m, int stream, const uint8_t *data, size_t size, int64_t pts,
                         int keyframe, char *error, size_t error_len) {
    dl_begin();
    if (size > INT_MAX - AV_INPUT_BUFFER_PADDING_SIZE) return dl_failf(DL_MEDIA_BAD_ARG, error, error_len, "packet too large");
    AVPacket *p = dl_packet(data, size, pts, keyframe);
    if (!p) return dl_fail(DL_MEDIA_ERROR, error, error_len, "out of memory", AVERROR(ENOMEM));
    int r = dl_send(m, stream, p, error, error_len);
    av_packet_free(&p);
    return r;
}

int dl_media_send_eof(dl_media *m, int stream, char *error, size_t error_len) {
    dl_begin();
    return dl_send(m, stream, NULL, error, error_len);
}

void dl_media_decoder_flush(dl_media *m, int stream) {
    if (stream >= 0 && (unsigned)stream < m->stream_count && m->decoders[stream].codec)
        avcodec_flush_buffers(m->decoders[stream].codec);
}

static int dl_decoder_receive(dl_decoder *d, AVFrame *frame, int64_t *pts, int *width, int *height,
                              char *error, size_t error_len) {
    av_frame_unref(frame);
    int r = avcodec_receive_frame(d->codec, frame);
    if (r == AVERROR(EAGAIN)) return DL_MEDIA_AGAIN;
    if (r == AVERROR_EOF) return DL_MEDIA_EOF;
    if (r < 0) return dl_fail(DL_MEDIA_ERROR, error, error_len, "corrupt frame", r);
    *pts = frame->best_effort_timestamp != AV_NOPTS_VALUE ? frame->best_effort_timestamp
         : (frame->pts != AV_NOPTS_VALUE ? frame->pts : INT64_MIN);
    *width = frame->width;
    *height = frame->height;
    return 0;
}

int dl_media_receive_frame(dl_media *m, int stream, int64_t *pts, int *width, int *height,
                           char *error, size_t error_len) {
    dl_begin();
    *pts = INT64_MIN;
    *width = *height = 0;
    if (stream < 0 || (unsigned)stream >= m->stream_count || !m->decoders[stream].codec)
        return dl_failf(DL_MEDIA_BAD_ARG, error, error_len, "no decoder open for stream %d", stream);
    return dl_decoder_receive(&m->decoders[stream], m->frame, pts, width, height, error, error_len);
}

/// Converts `f` (the frame `d` gave back) through `d`'s scaler, made again when the frame's size,
/// format, matrix or range changed.
static int dl_decoder_convert(dl_decoder *d, const AVFrame *f, int format, uint8_t *dst, size_t dst_stride,
                              int width, int height, char *error, size_t error_len) {
    if (format != DL_MEDIA_RGBA8 && format != DL_MEDIA_GRAY16)
        return dl_failf(DL_MEDIA_BAD_ARG, error, error_len, "unknown output format %d", format);
    if (f->format < 0 || !f->data[0]) return dl_failf(DL_MEDIA_ERROR, error, error_len, "no decoded frame to convert");
    if (f->width != width || f->height != height)
        return dl_failf(DL_MEDIA_BAD_SIZE, error, error_len, "frame is %dx%d, expected %dx%d", f->width, f->height, width, height);
    if ((uint64_t)dst_stride > INT_MAX) return dl_failf(DL_MEDIA_BAD_ARG, error, error_len, "row stride too large");
    enum AVPixelFormat out = format == DL_MEDIA_RGBA8 ? AV_PIX_FMT_RGBA : AV_PIX_FMT_GRAY16;
    // The stream's YUV matrix (BT.709 / BT.2020 when it says so, else BT.601) and range (full for the
    // JPEG formats or when the stream says so, else limited); RGB out is full range.
    int colorspace = f->colorspace == AVCOL_SPC_BT709 ? SWS_CS_ITU709
                   : (f->colorspace == AVCOL_SPC_BT2020_NCL || f->colorspace == AVCOL_SPC_BT2020_CL) ? SWS_CS_BT2020
                   : SWS_CS_ITU601;
    int range = f->color_range == AVCOL_RANGE_JPEG;
    if (!d->sws || d->sws_width != width || d->sws_height != height || d->sws_in != f->format || d->sws_out != (int)out
        || d->sws_colorspace != colorspace || d->sws_range != range) {
        sws_freeContext(d->sws);
        d->sws = sws_getContext(width, height, (enum AVPixelFormat)f->format, width, height, out, SWS_BILINEAR, NULL, NULL, NULL);
        if (!d->sws) {
            const char *name = av_get_pix_fmt_name((enum AVPixelFormat)f->format);
            return dl_failf(DL_MEDIA_ERROR, error, error_len, "cannot convert %s to %s", name ? name : "?", av_get_pix_fmt_name(out));
        }
        int *inv_table, *table, src_range, dst_range, brightness, contrast, saturation;
        if (sws_getColorspaceDetails(d->sws, &inv_table, &src_range, &table, &dst_range, &brightness, &contrast, &saturation) >= 0) {
            // The yuvj formats are full range whatever the frame says.
            const char *name = av_get_pix_fmt_name((enum AVPixelFormat)f->format);
            int jpeg = name && !strncmp(name, "yuvj", 4);
            sws_setColorspaceDetails(d->sws, sws_getCoefficients(colorspace), jpeg || range, table, dst_range,
                                     brightness, contrast, saturation);
        }
        d->sws_width = width; d->sws_height = height; d->sws_in = f->format; d->sws_out = (int)out;
        d->sws_colorspace = colorspace; d->sws_range = range;
    }
    uint8_t *planes[4] = { dst, NULL, NULL, NULL };
    int strides[4] = { (int)dst_stride, 0, 0, 0 };
    int rows = sws_scale(d->sws, (const uint8_t *const *)f->data, f->linesize, 0, height, planes, strides);
    if (rows != height) return dl_failf(DL_MEDIA_ERROR, error, error_len, "converting the frame failed");
    return 0;
}

int dl_media_convert_frame(dl_media *m, int stream, int format, uint8_t *dst, size_t dst_stride,
                           int width, int height, char *error, size_t error_len) {
    dl_begin();
    if (stream < 0 || (unsigned)stream >= m->stream_count || !m->decoders[stream].codec)
        return dl_failf(DL_MEDIA_BAD_ARG, error, error_len, "no decoder open for stream %d", stream);
    return dl_decoder_convert(&m->decoders[stream], m->frame, format, dst, dst_stride, width, height, error, error_len);
}

// MARK: - Decoders apart from the container (dl_stream_params, dl_frame_decoder)

struct dl_stream_params {
    AVCodecParameters *par;
    AVRational time_base;
    int stream;
};

int dl_media_stream_params(const dl_media *m, int stream, dl_stream_params **out, char *error, size_t error_len) {
    dl_begin();
    *out = NULL;
    if (stream < 0 || (unsigned)stream >= m->stream_count) return dl_failf(DL_MEDIA_BAD_ARG, error, error_len, "no stream %d", stream);
    dl_stream_params *p = av_mallocz(sizeof *p);
    if (p) p->par = avcodec_parameters_alloc();
    int r = p && p->par ? avcodec_parameters_copy(p->par, m->format->streams[stream]->codecpar) : AVERROR(ENOMEM);
    if (r < 0) {
        dl_stream_params_free(p);
        return dl_fail(DL_MEDIA_ERROR, error, error_len, "copying the stream's parameters", r);
    }
    p->time_base = m->format->streams[stream]->time_base;
    p->stream = stream;
    *out = p;
    return 0;
}

void dl_stream_params_free(dl_stream_params *p) {
    if (!p) return;
    avcodec_parameters_free(&p->par);
    av_free(p);
}

struct dl_frame_decoder {
    dl_decoder decoder;
    AVFrame *frame;
};

int dl_frame_decoder_open(const dl_stream_params *p, dl_frame_decoder **out, char *error, size_t error_len) {
    dl_begin();
    *out = NULL;
    dl_frame_decoder *d = av_mallocz(sizeof *d);
    if (!d || !(d->frame = av_frame_alloc())) {
        dl_frame_decoder_close(d);
        return dl_fail(DL_MEDIA_ERROR, error, error_len, "out of memory", AVERROR(ENOMEM));
    }
    int r = dl_decoder_open(&d->decoder, p->par, p->time_base, p->stream, error, error_len);
    if (r != 0) {
        dl_frame_decoder_close(d);
        return r;
    }
    *out = d;
    return 0;
}

int dl_frame_send_packet(dl_frame_decoder *d, const uint8_t *data, size_t size, int64_t pts, int keyframe,
                         char *error, size_t error_len) {
    dl_begin();
    if (size > INT_MAX - AV_INPUT_BUFFER_PADDING_SIZE) return dl_failf(DL_MEDIA_BAD_ARG, error, error_len, "packet too large");
    AVPacket *p = dl_packet(data, size, pts, keyframe);
    if (!p) return dl_fail(DL_MEDIA_ERROR, error, error_len, "out of memory", AVERROR(ENOMEM));
    int r = dl_decoder_send(&d->decoder, p, error, error_len);
    av_packet_free(&p);
    return r;
}

int dl_frame_send_eof(dl_frame_decoder *d, char *error, size_t error_len) {
    dl_begin();
    return dl_decoder_send(&d->decoder, NULL, error, error_len);
}

int dl_frame_receive(dl_frame_decoder *d, int64_t *pts, int *width, int *height, char *error, size_t error_len) {
    dl_begin();
    *pts = INT64_MIN;
    *width = *height = 0;
    return dl_decoder_receive(&d->decoder, d->frame, pts, width, height, error, error_len);
}

int dl_frame_convert(dl_frame_decoder *d, int format, uint8_t *dst, size_t dst_stride, int width, int height,
                     char *error, size_t error_len) {
    dl_begin();
    return dl_decoder_convert(&d->decoder, d->frame, format, dst, dst_stride, width, height, error, error_len);
}

void dl_frame_flush(dl_frame_decoder *d) { avcodec_flush_buffers(d->decoder.codec); }

void dl_frame_decoder_close(dl_frame_decoder *d) {
    if (!d) return;
    avcodec_free_context(&d->decoder.codec);
    sws_freeContext(d->decoder.sws);
    av_frame_free(&d->frame);
    av_free(d);
}

int dl_media_b16g_to_gray16(const uint8_t *data, size_t size, int width, int height, uint16_t *dst,
                            size_t dst_stride, char *error, size_t error_len) {
    if (width <= 0 || height <= 0) return dl_failf(DL_MEDIA_BAD_ARG, error, error_len, "bad size %dx%d", width, height);
    size_t expected = (size_t)width * (size_t)height * 2;
    if (size != expected || !data)
        return dl_failf(DL_MEDIA_BAD_SIZE, error, error_len, "packet holds %zu bytes, expected %zu (%dx%d 16-bit)",
                        size, expected, width, height);
    for (int y = 0; y < height; y++) {
        const uint8_t *s = data + (size_t)y * (size_t)width * 2;
        uint16_t *d = (uint16_t *)((uint8_t *)dst + (size_t)y * dst_stride);
        for (int x = 0; x < width; x++) d[x] = (uint16_t)(s[2 * x] << 8 | s[2 * x + 1]);
    }
    return 0;
}
