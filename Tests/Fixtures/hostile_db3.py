#!/usr/bin/env python3
"""Small rosbag2 .db3 recordings for ReadOnlyRecordingTests (issue 33, "read-only is read-only").

    hostile_db3.py OUT.db3 KIND

Every KIND starts from the same bare .db3 that rosbags' Writer (rosbag2 schema, version 9) writes:
one topic /camera/color/image_raw (sensor_msgs/msg/Image, 4x2 rgb8), 5 messages 0.1 s apart.

    plain       as written (journal mode DELETE)
    wal         switched to journal_mode=WAL (as rosbag2 itself writes; the -wal is checkpointed
                and removed when the connection closes, the mode stays in the file header)
    generated   messages.data a VIRTUAL generated column, zeroblob(900000000): 900 MB a row
                computed from a 32 KB file
    view        messages a view over the stored rows whose data is zeroblob(900000000)
    pending     wal, then 15 more messages left in OUT.db3-wal, never checkpointed (the writer
                exits without closing, as a recorder killed mid-recording; its -shm removed)
"""
import os
import shutil
import sqlite3
import sys
import tempfile
from pathlib import Path

import numpy as np
from rosbags.rosbag2 import Writer
from rosbags.typesys import Stores, get_typestore


def main() -> None:
    out, kind = Path(sys.argv[1]), sys.argv[2]
    ts = get_typestore(Stores.ROS2_HUMBLE)
    Image = ts.types['sensor_msgs/msg/Image']
    Header = ts.types['std_msgs/msg/Header']
    Time = ts.types['builtin_interfaces/msg/Time']
    with tempfile.TemporaryDirectory() as d:
        with Writer(Path(d) / "b", version=9) as w:
            c = w.add_connection('/camera/color/image_raw', 'sensor_msgs/msg/Image', typestore=ts)
            for i in range(5):
                t = 1_000_000_000 + i * 100_000_000
                m = Image(header=Header(stamp=Time(sec=t // 10**9, nanosec=t % 10**9), frame_id='camera'), height=2, width=4,
                          encoding='rgb8', is_bigendian=0, step=12, data=np.full(24, i * 40, dtype=np.uint8))
                w.write(c, t, ts.serialize_cdr(m, 'sensor_msgs/msg/Image'))
        shutil.move(str(Path(d) / "b" / "b.db3"), out)
    con = sqlite3.connect(out)
    if kind == "wal":
        assert con.execute("PRAGMA journal_mode=WAL").fetchone()[0] == "wal"
    elif kind == "generated":
        con.executescript("""
            ALTER TABLE messages RENAME TO stored;
            CREATE TABLE messages(id INTEGER PRIMARY KEY, topic_id INTEGER NOT NULL, timestamp INTEGER NOT NULL,
                                  data BLOB GENERATED ALWAYS AS (zeroblob(900000000)) VIRTUAL);
            INSERT INTO messages(id, topic_id, timestamp) SELECT id, topic_id, timestamp FROM stored;
            DROP TABLE stored;
            CREATE INDEX timestamp_idx ON messages (timestamp ASC);""")
    elif kind == "view":
        con.executescript("""
            ALTER TABLE messages RENAME TO stored;
            CREATE VIEW messages AS SELECT id, topic_id, timestamp, zeroblob(900000000) AS data FROM stored;""")
    elif kind == "pending":
        assert con.execute("PRAGMA journal_mode=WAL").fetchone()[0] == "wal"
        con.commit()
        con.close()
        con = sqlite3.connect(out)
        con.execute("PRAGMA wal_autocheckpoint=0")
        rows = con.execute("SELECT topic_id, timestamp, data FROM messages").fetchall()
        for k in range(1, 4):
            con.executemany("INSERT INTO messages(topic_id, timestamp, data) VALUES (?, ?, ?)",
                            [(tid, t + k * 500_000_000, d) for tid, t, d in rows])
        con.commit()
        os.remove(f"{out}-shm")
        sys.stdout.flush()
        os._exit(0)
    elif kind != "plain":
        raise SystemExit(f"unknown kind {kind}")
    con.commit()
    con.close()


if __name__ == "__main__":
    main()
