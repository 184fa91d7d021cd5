#ifndef DL_CSQLITE_SHIM_H
#define DL_CSQLITE_SHIM_H
// SQLite 3 (Debian's libsqlite3-dev): rosbag2 `.db3` recordings (ROS2Recording).
#include <sqlite3.h>

/// sqlite3_db_config for the options that take an int and an int* (SQLITE_DBCONFIG_DEFENSIVE…):
/// the function is variadic, which Swift cannot call.
static inline int dl_sqlite3_db_config_int(sqlite3 *db, int op, int value, int *out) {
    return sqlite3_db_config(db, op, value, out);
}
#endif
