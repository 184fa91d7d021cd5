// ioctl and v4l2_open/v4l2_ioctl are variadic and VIDIOC_* / v4l2_fourcc are function-like
// macros: Swift can call none of them, so they are re-exported here.
#include "dl_platform.h"
#include <errno.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <fcntl.h>
#include <libv4l2.h>

int dl_ioctl(int fd, unsigned long request, void *arg) {
    int r;
    do { r = ioctl(fd, request, arg); } while (r == -1 && errno == EINTR);
    return r;
}
int dl_v4l2_open(const char *path, int flags) { return v4l2_open(path, flags); }
int dl_v4l2_ioctl(int fd, unsigned long request, void *arg) {
    int r;
    do { r = v4l2_ioctl(fd, request, arg); } while (r == -1 && errno == EINTR);
    return r;
}
int dl_v4l2_close(int fd) { return v4l2_close(fd); }
void *dl_v4l2_mmap(void *start, size_t length, int prot, int flags, int fd, int64_t offset) {
    return v4l2_mmap(start, length, prot, flags, fd, offset);
}
int dl_v4l2_munmap(void *start, size_t length) { return v4l2_munmap(start, length); }

const unsigned long DL_VIDIOC_QUERYCAP = VIDIOC_QUERYCAP;
const unsigned long DL_VIDIOC_ENUM_FMT = VIDIOC_ENUM_FMT;
const unsigned long DL_VIDIOC_ENUM_FRAMESIZES = VIDIOC_ENUM_FRAMESIZES;
const unsigned long DL_VIDIOC_ENUM_FRAMEINTERVALS = VIDIOC_ENUM_FRAMEINTERVALS;
const unsigned long DL_VIDIOC_G_FMT = VIDIOC_G_FMT;
const unsigned long DL_VIDIOC_S_FMT = VIDIOC_S_FMT;
const unsigned long DL_VIDIOC_G_PARM = VIDIOC_G_PARM;
const unsigned long DL_VIDIOC_S_PARM = VIDIOC_S_PARM;
const unsigned long DL_VIDIOC_REQBUFS = VIDIOC_REQBUFS;
const unsigned long DL_VIDIOC_QUERYBUF = VIDIOC_QUERYBUF;
const unsigned long DL_VIDIOC_QBUF = VIDIOC_QBUF;
const unsigned long DL_VIDIOC_DQBUF = VIDIOC_DQBUF;
const unsigned long DL_VIDIOC_STREAMON = VIDIOC_STREAMON;
const unsigned long DL_VIDIOC_STREAMOFF = VIDIOC_STREAMOFF;
const unsigned long DL_VIDIOC_QUERY_EXT_CTRL = VIDIOC_QUERY_EXT_CTRL;
const unsigned long DL_VIDIOC_QUERYMENU = VIDIOC_QUERYMENU;
const unsigned long DL_VIDIOC_G_EXT_CTRLS = VIDIOC_G_EXT_CTRLS;
const unsigned long DL_VIDIOC_S_EXT_CTRLS = VIDIOC_S_EXT_CTRLS;

const uint32_t DL_V4L2_PIX_FMT_YUYV = V4L2_PIX_FMT_YUYV;
const uint32_t DL_V4L2_PIX_FMT_MJPEG = V4L2_PIX_FMT_MJPEG;
const uint32_t DL_V4L2_PIX_FMT_RGB24 = V4L2_PIX_FMT_RGB24;
const uint32_t DL_V4L2_PIX_FMT_BGR24 = V4L2_PIX_FMT_BGR24;
const uint32_t DL_V4L2_PIX_FMT_GREY = V4L2_PIX_FMT_GREY;
const uint32_t DL_V4L2_PIX_FMT_Z16 = V4L2_PIX_FMT_Z16;
const uint32_t DL_V4L2_PIX_FMT_Y16 = V4L2_PIX_FMT_Y16;
const uint32_t DL_V4L2_PIX_FMT_UYVY = V4L2_PIX_FMT_UYVY;
const uint32_t DL_V4L2_PIX_FMT_NV12 = V4L2_PIX_FMT_NV12;
const uint32_t DL_V4L2_PIX_FMT_Y10 = V4L2_PIX_FMT_Y10;
const uint32_t DL_V4L2_PIX_FMT_Y12 = V4L2_PIX_FMT_Y12;
const uint32_t DL_V4L2_PIX_FMT_Y8I = V4L2_PIX_FMT_Y8I;
const uint32_t DL_V4L2_PIX_FMT_Y12I = V4L2_PIX_FMT_Y12I;
