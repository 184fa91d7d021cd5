// Linux inotify for the camera watcher: Swift's Glibc module does not promise sys/inotify.h or
// sys/eventfd.h, and the events are variable-length structs, so both are wrapped here.
#include "dl_inotify.h"
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>

int dl_inotify_open(const char *directory, int *inotify_fd, int *wake_fd) {
    *inotify_fd = -1;
    *wake_fd = -1;
    int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (fd < 0) return -errno;
    if (inotify_add_watch(fd, directory, IN_CREATE | IN_DELETE | IN_ATTRIB | IN_MOVED_TO | IN_MOVED_FROM
                                             | IN_DELETE_SELF | IN_ONLYDIR) < 0) {
        int e = errno;
        close(fd);
        return -e;
    }
    int w = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (w < 0) {
        int e = errno;
        close(fd);
        return -e;
    }
    *inotify_fd = fd;
    *wake_fd = w;
    return 0;
}

long dl_inotify_wait(int inotify_fd, int wake_fd, void *buffer, size_t length) {
    for (;;) {
        struct pollfd p[2] = {{.fd = inotify_fd, .events = POLLIN}, {.fd = wake_fd, .events = POLLIN}};
        int r = poll(p, 2, -1);
        if (r < 0) {
            if (errno == EINTR) continue;
            return -errno;
        }
        if (p[1].revents) return 0;   // woken: the eventfd stays readable, so every later wait returns 0 too
        if (p[0].revents & (POLLERR | POLLNVAL)) return -EBADF;
        ssize_t n = read(inotify_fd, buffer, length);
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN) continue;
            return -errno;
        }
        if (n > 0) return (long)n;
    }
}

int dl_inotify_wake(int wake_fd) {
    uint64_t one = 1;
    return write(wake_fd, &one, sizeof one) == (ssize_t)sizeof one ? 0 : -errno;
}

long dl_inotify_next(const void *buffer, long length, long offset, dl_node_change *change, const char **name) {
    if (offset < 0 || offset + (long)sizeof(struct inotify_event) > length) return -1;
    const struct inotify_event *e = (const struct inotify_event *)((const char *)buffer + offset);
    long next = offset + (long)sizeof(struct inotify_event) + (long)e->len;
    if (next > length) return -1;
    *name = e->len > 0 ? e->name : "";
    if (e->mask & IN_Q_OVERFLOW) *change = DL_NODE_OVERFLOW;
    else if (e->mask & (IN_IGNORED | IN_DELETE_SELF)) *change = DL_NODE_GONE;
    else if (e->mask & (IN_CREATE | IN_MOVED_TO)) *change = DL_NODE_CREATED;
    else if (e->mask & (IN_DELETE | IN_MOVED_FROM)) *change = DL_NODE_DELETED;
    else if (e->mask & IN_ATTRIB) *change = DL_NODE_ATTRIB;
    else *change = DL_NODE_OTHER;
    return next;
}

void dl_inotify_close(int inotify_fd, int wake_fd) {
    if (inotify_fd >= 0) close(inotify_fd);
    if (wake_fd >= 0) close(wake_fd);
}
