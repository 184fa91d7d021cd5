#ifndef DL_CSQLITE_SHIM_H
#define DL_CSQLITE_SHIM_H
// SQLite 3 (Debian's libsqlite3-dev): rosbag2 `.db3` recordings (ROS2Recording).
#include <sqlite3.h>
#endif
