#ifndef DL_MEDIA_H
#define DL_MEDIA_H
// depthlens' C surface over libavformat / libavcodec / libswscale (FFmpeg, Debian's -dev packages):
// containers opened in-process (Matroska: Azure Kinect recordings and depthlens' own), their
// streams, attachments and tags, packets in file order, seeking, and decoding into rgba8 or
// 16-bit gray. Every symbol is prefixed `dl_`. Errors are negative return codes with a message
// written into the caller's buffer; bad data never crashes (fuzzed through dl_media_open_memory).

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// An open container: the demuxer, its IO (file or memory), one decoder per stream that was
/// asked to decode, and the last packet read. Not thread-safe; one thread at a time.
typedef struct dl_media dl_media;

/// Return codes besides 0 (success).
#define DL_MEDIA_EOF 1          ///< dl_media_read_packet: no more packets
#define DL_MEDIA_AGAIN 2        ///< dl_media_receive_frame: the decoder needs more packets
#define DL_MEDIA_ERROR (-1)     ///< anything libav reported; the message says what
#define DL_MEDIA_BAD_SIZE (-2)  ///< a frame or packet whose size differs from the one expected
#define DL_MEDIA_BAD_ARG (-3)   ///< a stream index out of range, a stream that is not video…

/// Kinds of streams.
#define DL_MEDIA_VIDEO 0
#define DL_MEDIA_AUDIO 1
#define DL_MEDIA_DATA 2
#define DL_MEDIA_SUBTITLE 3
#define DL_MEDIA_ATTACHMENT 4
#define DL_MEDIA_OTHER 5

/// What the container says about one stream. Strings are copied (truncated to fit).
typedef struct dl_media_stream_info {
    int32_t index;
    int32_t kind;              ///< DL_MEDIA_VIDEO…
    int32_t codec_id;          ///< libavcodec's AVCodecID
    char codec_name[32];       ///< "mjpeg", "rawvideo", "ffv1", "h264"… ("none" when libavcodec has none)
    uint32_t codec_tag;        ///< the FourCC as libavformat reports it, first character in the low byte ('b16g' = 0x67363162)
    int32_t width, height;     ///< 0 for streams that are not video
    int32_t pixel_format;      ///< AVPixelFormat the stream decodes to (-1 unknown)
    char pixel_format_name[32];///< "gray16be", "yuvj422p"… ("" unknown)
    int32_t intra_only;        ///< 1 when every packet decodes on its own (MJPEG, raw, FFV1…)
    char title[128];           ///< the track name (Matroska TrackName, metadata "title"); "" none
    int32_t time_base_num, time_base_den;
    int64_t start_pts;         ///< INT64_MIN when unknown
    int64_t duration;          ///< in time_base units; INT64_MIN when unknown
    int64_t frame_count;       ///< 0 when the container does not say (Matroska never does)
    double average_fps;        ///< 0 when unknown
    char filename[256];        ///< attachments: the file name
    char mimetype[128];        ///< attachments: the MIME type
    int64_t attachment_size;   ///< attachments: the number of bytes
} dl_media_stream_info;

/// One packet as read, in file order. `data` is owned by the dl_media and valid until the next
/// read, seek or close.
typedef struct dl_media_packet {
    int32_t stream;
    int32_t keyframe;
    int64_t pts;               ///< in the stream's time base; INT64_MIN when unknown
    int64_t pts_ns;            ///< pts in nanoseconds (rescaled exactly when the time base allows); INT64_MIN when unknown
    int64_t duration;          ///< in the stream's time base; 0 unknown
    int64_t position;          ///< byte offset in the file; -1 unknown
    const uint8_t *data;
    size_t size;
} dl_media_packet;

/// Output formats of dl_media_receive_frame.
#define DL_MEDIA_RGBA8 0       ///< 4 bytes a pixel, r g b a (a = 255)
#define DL_MEDIA_GRAY16 1      ///< 2 bytes a pixel, host byte order

/// Opens a file with the demuxer `format` names ("matroska", "mov" for MP4): required, never a
/// probe over every demuxer. The file is opened here through libavformat's `file` protocol only
/// (`protocol_whitelist=file`), and the demuxer may open nothing else: its `io_open` refuses every
/// nested open (an HLS playlist's segments, a QuickTime data reference, a URL), so a file cannot
/// name another input. Returns 0 and sets *out (close with dl_media_close), or a negative code with
/// `error` filled ("not a Matroska file: …" when the bytes are not of that kind).
int dl_media_open_file(const char *path, const char *format, dl_media **out, char *error, size_t error_len);
/// The same from bytes in memory, read through a custom AVIOContext (the bytes are copied first);
/// no nested open at all.
int dl_media_open_memory(const uint8_t *data, size_t size, const char *format, dl_media **out,
                         char *error, size_t error_len);
/// Frees everything (decoders, packet, IO, demuxer). NULL is fine.
void dl_media_close(dl_media *media);

/// The demuxer's name ("matroska,webm").
const char *dl_media_format_name(const dl_media *media);
/// Container duration in microseconds; INT64_MIN when unknown.
int64_t dl_media_duration_us(const dl_media *media);

int dl_media_stream_count(const dl_media *media);
int dl_media_stream_info_get(const dl_media *media, int stream, dl_media_stream_info *out);
/// An attachment's bytes (valid until close); 0, or DL_MEDIA_BAD_ARG when `stream` is no attachment.
int dl_media_attachment_data(const dl_media *media, int stream, const uint8_t **data, size_t *size);

/// Tags: `stream` -1 for the container's, else that stream's (Matroska tags targeted at the track
/// or attachment). dl_media_tag_at gives the i-th key and value (valid until close); 0, or
/// DL_MEDIA_BAD_ARG past the end.
int dl_media_tag_count(const dl_media *media, int stream);
int dl_media_tag_at(const dl_media *media, int stream, int i, const char **key, const char **value);
/// The value of one tag (exact, case-sensitive key), or NULL.
const char *dl_media_tag_get(const dl_media *media, int stream, const char *key);

/// Reads the next packet of any stream. 0 with *out filled, DL_MEDIA_EOF at the end, or a negative
/// code with `error` filled.
int dl_media_read_packet(dl_media *media, dl_media_packet *out, char *error, size_t error_len);

/// Seeks so that the next packets read start at or before `timestamp` (in `stream`'s time base)
/// on a keyframe of that stream (AVSEEK_FLAG_BACKWARD); every decoder is flushed.
int dl_media_seek(dl_media *media, int stream, int64_t timestamp, char *error, size_t error_len);

/// Opens libavcodec's decoder for a video stream (once; later calls do nothing).
int dl_media_decoder_open(dl_media *media, int stream, char *error, size_t error_len);
/// Gives one packet's bytes (`pts` in the stream's time base, INT64_MIN unknown) to the stream's
/// decoder. 0, DL_MEDIA_AGAIN when the decoder must first give frames back, or an error (a corrupt
/// frame: the caller warns and goes on).
int dl_media_send_packet(dl_media *media, int stream, const uint8_t *data, size_t size, int64_t pts,
                         int keyframe, char *error, size_t error_len);
/// Signals the end of the stream to its decoder (frames it holds come out of receive).
int dl_media_send_eof(dl_media *media, int stream, char *error, size_t error_len);
/// Takes the next decoded frame of the stream and holds it: *pts gets its timestamp in the stream's
/// time base (INT64_MIN unknown), *width and *height its size. 0, DL_MEDIA_AGAIN (needs more
/// packets), DL_MEDIA_EOF (drained after dl_media_send_eof), or an error.
int dl_media_receive_frame(dl_media *media, int stream, int64_t *pts, int *width, int *height,
                           char *error, size_t error_len);
/// Converts the frame dl_media_receive_frame holds into `dst` (`format`, rows `dst_stride` bytes
/// apart, width × height, which must be the frame's size, else DL_MEDIA_BAD_SIZE with "frame is
/// WxH, expected WxH"), through libswscale (bilinear; YUV → RGB with the stream's matrix, BT.709 or
/// BT.2020 when it says so, else BT.601, and its range: full for the yuvj formats or when it says
/// so, else limited).
int dl_media_convert_frame(dl_media *media, int stream, int format, uint8_t *dst, size_t dst_stride,
                           int width, int height, char *error, size_t error_len);
/// Drops whatever a decoder holds (after a seek dl_media_seek does this itself).
void dl_media_decoder_flush(dl_media *media, int stream);

/// A stream's decoding parameters copied out of an open container, so that decoders for its
/// packets can be made on any thread while the container goes on reading (`convert` decodes an
/// intra-only track's packets on several threads at once). Immutable once made; free it with
/// dl_stream_params_free after every decoder made from it is closed or not (decoders copy it).
typedef struct dl_stream_params dl_stream_params;
int dl_media_stream_params(const dl_media *media, int stream, dl_stream_params **out, char *error, size_t error_len);
void dl_stream_params_free(dl_stream_params *params);

/// A decoder of one stream's packets apart from its container: the same codec context (one
/// thread), the same conversion (dl_media_convert_frame's) and the same return codes and messages
/// as the dl_media_* calls above, with its own frame and scaler. Not thread-safe; several decoders
/// made from the same parameters may run on several threads at once.
typedef struct dl_frame_decoder dl_frame_decoder;
int dl_frame_decoder_open(const dl_stream_params *params, dl_frame_decoder **out, char *error, size_t error_len);
int dl_frame_send_packet(dl_frame_decoder *d, const uint8_t *data, size_t size, int64_t pts, int keyframe,
                         char *error, size_t error_len);
int dl_frame_send_eof(dl_frame_decoder *d, char *error, size_t error_len);
int dl_frame_receive(dl_frame_decoder *d, int64_t *pts, int *width, int *height, char *error, size_t error_len);
int dl_frame_convert(dl_frame_decoder *d, int format, uint8_t *dst, size_t dst_stride, int width, int height,
                     char *error, size_t error_len);
void dl_frame_flush(dl_frame_decoder *d);
/// Frees the decoder. NULL is fine.
void dl_frame_decoder_close(dl_frame_decoder *d);

/// 16-bit big-endian samples (Azure Kinect `b16g` depth and IR) → host order, row by row:
/// `size` must be exactly width·height·2, else DL_MEDIA_BAD_SIZE with "packet holds N bytes,
/// expected N (WxH 16-bit)".
int dl_media_b16g_to_gray16(const uint8_t *data, size_t size, int width, int height, uint16_t *dst,
                            size_t dst_stride, char *error, size_t error_len);


// MARK: - Still images: one coded picture in memory (image_decode.c)

/// A decoder for single coded pictures (HEIF's HEVC items and grid tiles, PNG or JPEG payloads
/// inside depth photos), without a container: the caller hands it the codec's configuration
/// (`extradata`: an HEVC item's hvcC box payload; none for PNG and JPEG) and one picture's bytes
/// (for HEVC: length-prefixed NAL units, as HEIF stores them). Not thread-safe.
typedef struct dl_picture_decoder dl_picture_decoder;

/// 1 byte a pixel: the first plane as decoded (HEVC monochrome or the luma of YUV; no conversion,
/// so an 8-bit depth or matte item keeps its exact values).
#define DL_MEDIA_GRAY8 2

/// A decoded picture: `pixels` (av_malloc'ed, rows `stride` bytes apart) in the format asked for.
typedef struct dl_picture {
    int32_t width, height;
    size_t stride;
    uint8_t *pixels;
    char pixel_format_name[32];  ///< what the decoder produced ("yuv420p", "gray", "gray16be"…)
} dl_picture;

/// Opens libavcodec's decoder `codec` ("hevc", "png", "mjpeg") with `extradata` (copied; NULL / 0
/// for none). `matrix` / `full_range` override the bitstream's YUV matrix (ISO/IEC 23091-2
/// matrix_coefficients: 1 BT.709, 5/6 BT.601, 9 BT.2020) and range (0/1) for rgba8 output (a HEIF
/// `colr` nclx box), -1 to use the stream's. Pictures larger than 2^26 pixels are refused.
int dl_picture_decoder_open(const char *codec, const uint8_t *extradata, size_t extradata_size,
                            int matrix, int full_range, dl_picture_decoder **out, char *error, size_t error_len);
/// Decodes one picture (the decoder is drained and flushed after it, so pictures are independent)
/// into `out` as DL_MEDIA_RGBA8, DL_MEDIA_GRAY8 (8-bit formats only) or DL_MEDIA_GRAY16 (host
/// order). 0, or a negative code with `error` filled (free nothing then).
int dl_picture_decode(dl_picture_decoder *d, const uint8_t *data, size_t size, int format, dl_picture *out,
                      char *error, size_t error_len);
/// Frees a picture's pixels (NULL pixels are fine).
void dl_picture_free(dl_picture *picture);
/// Frees the decoder. NULL is fine.
void dl_picture_decoder_close(dl_picture_decoder *d);


// MARK: - Writing depthlens' Matroska recordings (mkv_write.c)

/// A Matroska file being written: one encoder per track, the muxer, its file. Not thread-safe.
typedef struct dl_mkv_writer dl_mkv_writer;

/// Track roles (the track's title: COLOR, DEPTH, IR).
#define DL_MKV_COLOR 0
#define DL_MKV_DEPTH 1
#define DL_MKV_IR 2

/// Creates the writer for `path` (nothing is written before dl_mkv_writer_begin). 0 or an error.
int dl_mkv_writer_create(const char *path, dl_mkv_writer **out, char *error, size_t error_len);
/// Chooses the container (before begin): "matroska" (the default) or "mp4" (ISO BMFF, one H.264
/// COLOR track and no attachments — anything else is refused at begin; microsecond time base; the
/// index moved to the front when finishing; tags kept as `use_metadata_tags` metadata).
int dl_mkv_writer_set_container(dl_mkv_writer *w, const char *format, char *error, size_t error_len);
/// Sets the time base the pts given to dl_mkv_writer_write_* count in (before begin; default
/// 1/1000000: microseconds). Another one means a constant frame rate of one frame a tick
/// (`record --video`: 100/2997 for 29.97 fps, pts = the frame's number).
int dl_mkv_writer_set_time_base(dl_mkv_writer *w, int num, int den, char *error, size_t error_len);
/// Sets the nominal frame rate num/den (before begin): each video stream's average rate, which
/// Matroska stores as the tracks' DefaultDuration. Players and ffmpeg take a variable-rate H.264
/// track's rate from it (else from the SPS timing of a microsecond time base: 1000000 fps).
int dl_mkv_writer_set_frame_rate(dl_mkv_writer *w, int num, int den, char *error, size_t error_len);
/// Adds a track (before begin; one per role). COLOR: rgba8 frames, H.264 (libx264, yuv420p, BT.601
/// limited range; yuv444p for odd sizes; `crf` 0–51, `preset` e.g. "veryfast", NULL for defaults
/// 23 / veryfast; no B-frames; a keyframe every 60 frames) or, with `lossless`, FFV1 bgr0 (bit-exact).
/// DEPTH and IR: 16-bit FFV1 gray16le (bit-exact; `lossless`, `crf`, `preset` unused).
int dl_mkv_writer_add_track(dl_mkv_writer *w, int role, int width, int height, int lossless, int crf,
                            const char *preset, char *error, size_t error_len);
/// A container tag (before begin).
int dl_mkv_writer_set_tag(dl_mkv_writer *w, const char *key, const char *value, char *error, size_t error_len);
/// An attachment (before begin): file name, MIME type, bytes (copied).
int dl_mkv_writer_add_attachment(dl_mkv_writer *w, const char *filename, const char *mimetype,
                                 const uint8_t *data, size_t size, char *error, size_t error_len);
/// Opens the encoders and the file and writes the header.
int dl_mkv_writer_begin(dl_mkv_writer *w, char *error, size_t error_len);
/// Encodes one COLOR frame (rgba8, rows `stride` bytes apart, the track's size) at `pts_us`
/// microseconds (from the recording's start; strictly increasing per track), or ticks of the
/// time base dl_mkv_writer_set_time_base set.
int dl_mkv_writer_write_rgba(dl_mkv_writer *w, const uint8_t *rgba, size_t stride, int64_t pts_us,
                             char *error, size_t error_len);
/// Encodes one DEPTH or IR frame (16-bit, host order, rows `stride` bytes apart).
int dl_mkv_writer_write_gray16(dl_mkv_writer *w, int role, const uint16_t *data, size_t stride, int64_t pts_us,
                               char *error, size_t error_len);
/// Drains the encoders, writes the trailer (cues, durations) and closes the file. Safe to call
/// after an error: whatever was written is finished into a file ffprobe reads. Later calls do nothing.
/// Timestamps are microseconds: libavformat's Matroska muxer (FFmpeg 5/6) writes millisecond
/// units only, so the microsecond values are given to it as its units and the file's
/// TimestampScale (and the tracks' DURATION tags) are then rewritten to 1000 ns.
int dl_mkv_writer_finish(dl_mkv_writer *w, char *error, size_t error_len);
/// Packets written per role so far.
int64_t dl_mkv_writer_packets(const dl_mkv_writer *w, int role);
/// Bytes written to the file so far (approximate until finish).
int64_t dl_mkv_writer_bytes(const dl_mkv_writer *w);
/// Finishes (if begun and not finished) and frees. NULL is fine.
void dl_mkv_writer_free(dl_mkv_writer *w);

#ifdef __cplusplus
}
#endif

#endif
