#ifndef DL_SHIM_H
#define DL_SHIM_H
// depthlens' thin C layer: only what Swift cannot call directly.
// Every symbol is prefixed `dl_`.

#include <stddef.h>
#include <stdint.h>
#include <linux/videodev2.h>
#include "dl_kernels.h"  // the CPU kernels' loops (kernels.c)
#include "../../../Shaders/dl_codes.h"  // codes shared with GLSL (colormaps, color-by, flags, sizes)
#include "dl_decompress.h"  // ROS bag chunks: LZ4 frames and bzip2 (decompress.c)
#include "dl_align.h"    // depth aligned to color (align.c)
#include "dl_points.h"   // the CPU point renderer (points.c)
#include "dl_inotify.h"   // camera nodes coming and going: inotify on /dev (inotify.c)
// glslang's C interface is plain C and callable from Swift; it is re-exported here so
// GPUKit needs no module of its own for it.
#include <glslang/Include/glslang_c_interface.h>
#include <glslang/Public/resource_limits_c.h>

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

/// The most pixels a PNG or JPEG header may claim (2^28, as for PGM/PPM/PFM): a lying header
/// gets an error, not a multi-gigabyte allocation.
#define DL_MAX_IMAGE_PIXELS ((uint64_t)1 << 28)

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

// MARK: V4L2 (ioctl is variadic, VIDIOC_* are function-like macros)

/// `ioctl(fd, request, arg)`, retried on EINTR. Returns -1 with errno set on failure.
int dl_ioctl(int fd, unsigned long request, void *arg);
/// libv4l2's `v4l2_open(path, flags)` (variadic in C).
int dl_v4l2_open(const char *path, int flags);
/// libv4l2's `v4l2_ioctl(fd, request, arg)` (variadic in C), retried on EINTR.
int dl_v4l2_ioctl(int fd, unsigned long request, void *arg);
int dl_v4l2_close(int fd);
void *dl_v4l2_mmap(void *start, size_t length, int prot, int flags, int fd, int64_t offset);
int dl_v4l2_munmap(void *start, size_t length);

extern const unsigned long DL_VIDIOC_QUERYCAP;
extern const unsigned long DL_VIDIOC_ENUM_FMT;
extern const unsigned long DL_VIDIOC_ENUM_FRAMESIZES;
extern const unsigned long DL_VIDIOC_ENUM_FRAMEINTERVALS;
extern const unsigned long DL_VIDIOC_G_FMT;
extern const unsigned long DL_VIDIOC_S_FMT;
extern const unsigned long DL_VIDIOC_G_PARM;
extern const unsigned long DL_VIDIOC_S_PARM;
extern const unsigned long DL_VIDIOC_REQBUFS;
extern const unsigned long DL_VIDIOC_QUERYBUF;
extern const unsigned long DL_VIDIOC_QBUF;
extern const unsigned long DL_VIDIOC_DQBUF;
extern const unsigned long DL_VIDIOC_STREAMON;
extern const unsigned long DL_VIDIOC_STREAMOFF;
/// Camera controls (V4L2Controls.swift).
extern const unsigned long DL_VIDIOC_QUERY_EXT_CTRL;
extern const unsigned long DL_VIDIOC_QUERYMENU;
extern const unsigned long DL_VIDIOC_G_EXT_CTRLS;
extern const unsigned long DL_VIDIOC_S_EXT_CTRLS;

/// V4L2 fourcc pixel formats depthlens understands (v4l2_fourcc is a function-like macro).
extern const uint32_t DL_V4L2_PIX_FMT_YUYV;
extern const uint32_t DL_V4L2_PIX_FMT_MJPEG;
extern const uint32_t DL_V4L2_PIX_FMT_RGB24;
extern const uint32_t DL_V4L2_PIX_FMT_BGR24;
extern const uint32_t DL_V4L2_PIX_FMT_GREY;
extern const uint32_t DL_V4L2_PIX_FMT_Z16;
extern const uint32_t DL_V4L2_PIX_FMT_Y16;
extern const uint32_t DL_V4L2_PIX_FMT_UYVY;
extern const uint32_t DL_V4L2_PIX_FMT_NV12;
extern const uint32_t DL_V4L2_PIX_FMT_Y10;
extern const uint32_t DL_V4L2_PIX_FMT_Y12;
/// RealSense interleaved IR pairs: Y8I 2 bytes a pixel (left, right), Y12I 3 bytes a pixel pair.
extern const uint32_t DL_V4L2_PIX_FMT_Y8I;
extern const uint32_t DL_V4L2_PIX_FMT_Y12I;

// MARK: Allocation counter (alloc_count.c)

/// Counts the calling thread's heap allocations (malloc, calloc, realloc, aligned allocs) while on.
void dl_alloc_counting(int on);
/// The calling thread's count so far (only calls made while counting was on): depthlens' own
/// allocations plus the driver's (`dl_alloc_count_driver`).
uint64_t dl_alloc_count(void);
/// Of `dl_alloc_count`, those made by the Vulkan driver, the Vulkan loader, GLFW and X11 (the
/// first caller, past the Swift and C/C++ runtimes and ImGui, lies in a shared library that is not
/// one of those runtimes). The rest were made by depthlens' own code.
uint64_t dl_alloc_count_driver(void);
/// From now on, prints a backtrace to stderr for each of the next `limit` own allocations that
/// this thread counts (and the driver's too with `driver_too`), each marked own or driver:
/// `DEPTHLENS_ALLOC_TRACE=K` (`DEPTHLENS_ALLOC_TRACE_DRIVER=1`) after warm-up.
void dl_alloc_trace(int limit, int driver_too);

/// The viewer's depth readout, "(320, 240)  1.234 m  x -0.012 y 0.034 z 1.234 m" (millimeters
/// under 1 m) or "(320, 240)  no depth", after `prefix`, into `out` (readout_text.c). Returns
/// snprintf's length.
int dl_format_readout(char *out, size_t size, const char *prefix, long x, long y, int has_depth,
                      float z, float px, float py, float pz);
/// The viewer's readout of a point of a loaded cloud (the 3D view's hover on a PLY point list):
/// "point 12  2.000 m  x -0.300 y 0.050 z 2.000 m  rgb 255 0 0" — its index in the file, its depth
/// along the view (millimeters under 1 m), its position, and its color when the cloud has colors
/// (`has_color` 0: no rgb part), after `prefix`, into `out` (readout_text.c). Returns snprintf's length.
int dl_format_point_readout(char *out, size_t size, const char *prefix, long index, float depth,
                            float px, float py, float pz, int has_color, int r, int g, int b);
/// The hover readout's id map of a point list (point_id_map.c, Viewer's `PointIDMap`): fills the
/// `width`×`height` `keys` with, per pixel, (bits of the clip w << 32 | index) of the point nearest
/// the eye whose projection through the column-major 4×4 `m` lands on that pixel (pixel centers on
/// integers: u = ⌊(x/w + 1)/2·width⌋), UINT64_MAX where none. `xyz`: `count` points, point i's
/// x y z at `xyz + i·stride`. At most 2³² − 1 points are mapped.
void dl_point_id_map(const float *xyz, size_t count, size_t stride, const float *m, long width, long height,
                     uint64_t *keys);
/// The 3D overlay's camera line: "distance 1.50 m, yaw 30 deg, pitch 0 deg, roll 0 deg, points 2 px".
int dl_format_camera_line(char *out, size_t size, float distance, float yaw_deg, float pitch_deg, float roll_deg,
                          float point_size);
/// "drawing 123,456 of 2,000,000 points (moving)" (" (moving)" when drawn < total).
int dl_format_drawn_points(char *out, size_t size, long drawn, long total);
// The playback timeline's line: frame index of count, the frame's timestamp (the recording's own
// clock), and seconds since the first frame of the recording's duration (duration ≤ 0: unknown).
int dl_format_timeline(char *out, size_t size, long index, long count, double timestamp, double elapsed, double duration);

// stop_signals.c: SIGINT/SIGTERM/SIGHUP recorded for polling (writers finish, then exit 128+N).
void dl_stop_signals_install(void);
int dl_stop_signal(void);
void dl_stop_signal_clear(void);

// select.c: the k-th smallest of n floats (quickselect; reorders v). n > 0, k < n, no NaN.
float dl_select_float(float *v, size_t n, size_t k);

#ifdef __cplusplus
}
#endif
#endif
