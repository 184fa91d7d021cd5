#ifndef DL_INOTIFY_H
#define DL_INOTIFY_H
// A directory watch over Linux inotify (inotify.c), for the camera watcher (Capture/DeviceWatcher.swift):
// the reader blocks in poll on the inotify descriptor and a wake-up eventfd, so an idle watcher
// costs nothing and another thread can end the wait.

#include <stddef.h>
#include <stdint.h>

/// What happened to a directory entry (a normalized inotify mask).
typedef enum {
    DL_NODE_CREATED = 1,   ///< IN_CREATE, IN_MOVED_TO
    DL_NODE_DELETED = 2,   ///< IN_DELETE, IN_MOVED_FROM
    DL_NODE_ATTRIB = 3,    ///< IN_ATTRIB (udev fixed the node's owner or mode)
    DL_NODE_OVERFLOW = 4,  ///< IN_Q_OVERFLOW: events were lost; rescan the directory
    DL_NODE_GONE = 5,      ///< IN_IGNORED, IN_DELETE_SELF: the watched directory went away
    DL_NODE_OTHER = 6,     ///< anything else (skipped)
} dl_node_change;

/// Watches `directory` (IN_CREATE | IN_DELETE | IN_ATTRIB | IN_MOVED_TO | IN_MOVED_FROM), non-blocking and
/// close-on-exec, and makes an eventfd to wake the reader. 0, or -errno (both descriptors closed).
int dl_inotify_open(const char *directory, int *inotify_fd, int *wake_fd);
/// Blocks in poll until events arrive or `dl_inotify_wake` is called (EINTR retried). Returns the
/// bytes of events read into `buffer` (> 0), 0 when woken, -errno on error.
/// `buffer` should hold at least sizeof(struct inotify_event) + NAME_MAX + 1 bytes, aligned for it.
long dl_inotify_wait(int inotify_fd, int wake_fd, void *buffer, size_t length);
/// Makes a blocked (or the next) `dl_inotify_wait` return 0; any thread. 0 or -errno.
int dl_inotify_wake(int wake_fd);
/// The event at `offset` in what `dl_inotify_wait` read: its change and entry name (pointing into
/// `buffer`, "" when the event has none). Returns the next event's offset, or -1 when `offset` is at the end.
long dl_inotify_next(const void *buffer, long length, long offset, dl_node_change *change, const char **name);
/// Closes both descriptors.
void dl_inotify_close(int inotify_fd, int wake_fd);

#endif
