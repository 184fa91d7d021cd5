#!/usr/bin/env python3
"""Reads an MCAP file depthlens wrote (or any ROS 2 MCAP) with independent readers and prints JSON.

  mcap_check.py FILE.mcap

PyPI's `mcap` (make_reader with CRC validation: every chunk's CRC checked; header, summary
statistics, schemas) and `mcap-ros2-support` (read_ros2_messages: every message decoded through
the schema's ros2msg definition), and `rosbags` (AnyReader on the bare .mcap, its own CDR
deserializer with Humble's types). Output:
  {"profile", "library", "schemas": [[name, encoding, first line of data]], "statistics": {...},
   "chunks": [compression, ...],
   "messages": {topic: [{"log": ns, "stamp": ns, "frame": id, "type": schema name, "encoding": enc or format,
                          "width", "height", "step", "sha1": of data, "k": [...], "d": [...], "model",
                          "transforms": [[parent, child, tx, ty, tz, qx, qy, qz, qw]]}]},
   "rosbags": {topic: count}}  (CompressedImage: decoded by Pillow, its width, height and mode)
"""
import hashlib
import json
import sys
from pathlib import Path

from mcap.reader import make_reader
from mcap_ros2.reader import read_ros2_messages


def main(path: str) -> None:
    out = {"messages": {}, "rosbags": {}}
    with open(path, "rb") as f:
        reader = make_reader(f, validate_crcs=True)
        header = reader.get_header()
        out["profile"], out["library"] = header.profile, header.library
        summary = reader.get_summary()
        st = summary.statistics
        out["statistics"] = {"messages": st.message_count, "schemas": st.schema_count, "channels": st.channel_count,
                             "chunks": st.chunk_count, "start": st.message_start_time, "end": st.message_end_time}
        out["schemas"] = [[s.name, s.encoding, s.data.decode().split("\n")[0]] for s in summary.schemas.values()]
        out["chunks"] = [c.compression for c in summary.chunk_indexes]
        out["channel_encodings"] = sorted({c.message_encoding for c in summary.channels.values()})
        # Every record, CRCs checked (raises on a mismatch).
        n = sum(1 for _ in reader.iter_messages())
        out["iterated"] = n
    for m in read_ros2_messages(path):
        msg = m.ros_msg
        e = {"log": m.log_time_ns, "type": m.schema.name}
        if hasattr(msg, "header"):
            e["stamp"] = msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec
            e["frame"] = msg.header.frame_id
        if m.schema.name == "sensor_msgs/msg/Image":
            e.update(encoding=msg.encoding, width=msg.width, height=msg.height, step=msg.step,
                     sha1=hashlib.sha1(bytes(msg.data)).hexdigest())
        elif m.schema.name == "sensor_msgs/msg/CompressedImage":
            e.update(encoding=msg.format, sha1=hashlib.sha1(bytes(msg.data)).hexdigest())
            from PIL import Image
            import io
            im = Image.open(io.BytesIO(bytes(msg.data)))
            im.load()
            e.update(width=im.width, height=im.height, mode=im.mode)
        elif m.schema.name == "sensor_msgs/msg/CameraInfo":
            e.update(k=list(msg.k), d=list(msg.d), model=msg.distortion_model, width=msg.width, height=msg.height)
        elif m.schema.name == "tf2_msgs/msg/TFMessage":
            e["transforms"] = [[t.header.frame_id, t.child_frame_id, t.transform.translation.x, t.transform.translation.y,
                                t.transform.translation.z, t.transform.rotation.x, t.transform.rotation.y,
                                t.transform.rotation.z, t.transform.rotation.w] for t in msg.transforms]
        out["messages"].setdefault(m.channel.topic, []).append(e)
    from rosbags.highlevel import AnyReader
    from rosbags.typesys import Stores, get_typestore
    with AnyReader([Path(path)], default_typestore=get_typestore(Stores.ROS2_HUMBLE)) as r:
        for c, t, raw in r.messages():
            r.deserialize(raw, c.msgtype)
            out["rosbags"][c.topic] = out["rosbags"].get(c.topic, 0) + 1
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1])
