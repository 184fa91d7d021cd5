#ifndef DL_PLATFORM_H
#define DL_PLATFORM_H
// The C that Capture and the Viewer call: what Swift cannot call directly (variadic ioctl and
// libv4l2, function-like VIDIOC_* macros, signal handlers, inotify), the lz4/bzip2/zstd chunk
// decompressors of recordings, the allocation counter (a malloc interposer) and the viewer's
// readout lines formatted on the stack. Every symbol is prefixed `dl_`. Links libv4l2, liblz4,
// libbz2 and libzstd; not glslang (that is CGlslang, for GPUKit).

#include <stddef.h>
#include <stdint.h>
#include <linux/videodev2.h>
#include "dl_decompress.h"  // recordings' chunks: LZ4 frames, bzip2, zstd (decompress.c)
#include "dl_inotify.h"   // camera nodes coming and going: inotify on /dev (inotify.c)

#ifdef __cplusplus
extern "C" {
#endif

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
/// under 1 m) or "(320, 240)  no depth", after `prefix`, into `out` (readout_text.c); with
/// `relative` (a portrait photo's depth, `DepthData.Accuracy.relative`) a depth and position end in
/// "  (relative depth, not meters)". Returns snprintf's length.
int dl_format_readout(char *out, size_t size, const char *prefix, long x, long y, int has_depth,
                      float z, float px, float py, float pz, int relative);
/// The viewer's readout of a point of a loaded cloud (the 3D view's hover on a PLY point list):
/// "point 12  2.000 m  x -0.300 y 0.050 z 2.000 m  rgb 255 0 0" — its index in the file, its depth
/// along the view (millimeters under 1 m), its position, and its color when the cloud has colors
/// (`has_color` 0: no rgb part), after `prefix`, into `out` (readout_text.c). Returns snprintf's length.
int dl_format_point_readout(char *out, size_t size, const char *prefix, long index, float depth,
                            float px, float py, float pz, int has_color, int r, int g, int b);
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

#ifdef __cplusplus
}
#endif
#endif
