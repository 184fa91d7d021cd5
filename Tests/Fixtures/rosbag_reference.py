#!/usr/bin/python3
"""Independent reference for depthlens' ROS bag reader, through ROS's own python3-rosbag
(with python3-roslz4 for lz4 chunks). Used by Tests/CaptureTests/RosBagTests.swift and
BagSourceTests.swift, and by scripts/fuzz for the bag seeds.

  rosbag_reference.py dump BAG OUTDIR
      Writes OUTDIR/reference.json (connections, every message's topic/type/receive time, image
      headers and fields, camera_info, tf, Depth Units, device info) and OUTDIR/image-N.raw, the
      data bytes of the N-th sensor_msgs/Image message in bag order.
  rosbag_reference.py rewrite SRC DST COMPRESSION [--drop-topic-regex RE] [--keep-topic-regex RE]
      Reads every message of SRC and writes them to DST with COMPRESSION (none, bz2, lz4).
  rosbag_reference.py generic SRC DST
      The images and camera_info of SRC under plain ROS topics (/camera/depth/image_rect_raw,
      /camera/depth/camera_info, /camera/color/image_raw, /camera/color/camera_info), nothing else.
  rosbag_reference.py encodings SRC OUTDIR
      For each color encoding E (rgb8 bgr8 rgba8 bgra8 mono8 8UC1 yuyv yuv422), OUTDIR/E.bag holds
      one 6x4 E image (random bytes, rows padded to step = 6*bpp + 3) on /camera/color/image_raw and
      one 6x4 big-endian 16UC1 depth image on /camera/depth/image_raw; OUTDIR/E.color and
      OUTDIR/E.depth are their data bytes. SRC lends the message classes.
  rosbag_reference.py short-image SRC DST
      Copies SRC, but the first depth image message is written raw with its data array's length
      field saying 16 bytes more than the message holds.
  rosbag_reference.py seeds SRC OUTDIR
      Small fuzz seeds: SRC with every image cropped to 8x6, as none, lz4 and bz2 bags.
"""
import json
import os
import re
import struct
import sys

import rosbag


def dump(path, outdir):
    bag = rosbag.Bag(path)
    out = {"connections": [], "messages": [], "images": [], "camera_info": {}, "tf": {}, "device_info": {},
           "options": {}, "compression": bag.get_compression_info().compression}
    for c in sorted(bag._connections.values(), key=lambda c: c.id):
        out["connections"].append({"id": c.id, "topic": c.topic, "type": c.datatype, "md5sum": c.md5sum})
    n = 0
    for topic, msg, t in bag.read_messages():
        kind = msg._type
        out["messages"].append({"topic": topic, "type": kind, "time_ns": t.to_nsec()})
        if kind == "sensor_msgs/Image":
            with open(os.path.join(outdir, "image-%d.raw" % n), "wb") as f:
                f.write(msg.data)
            out["images"].append({
                "index": n, "topic": topic, "time_ns": t.to_nsec(), "seq": msg.header.seq,
                "stamp_sec": msg.header.stamp.secs, "stamp_nsec": msg.header.stamp.nsecs,
                "frame_id": msg.header.frame_id, "height": msg.height, "width": msg.width,
                "encoding": msg.encoding, "is_bigendian": msg.is_bigendian, "step": msg.step,
                "data_len": len(msg.data)})
            n += 1
        elif kind == "sensor_msgs/CameraInfo":
            out["camera_info"][topic] = {"width": msg.width, "height": msg.height,
                                         "distortion_model": msg.distortion_model,
                                         "D": list(msg.D), "K": list(msg.K)}
        elif kind == "geometry_msgs/Transform":
            out["tf"][topic] = {"translation": [msg.translation.x, msg.translation.y, msg.translation.z],
                                "rotation": [msg.rotation.x, msg.rotation.y, msg.rotation.z, msg.rotation.w]}
        elif kind == "diagnostic_msgs/KeyValue" and re.fullmatch(r"/device_\d+/info", topic):
            out["device_info"][msg.key] = msg.value
        elif kind == "std_msgs/Float32" and topic.endswith("/value"):
            out["options"][topic] = msg.data
    bag.close()
    with open(os.path.join(outdir, "reference.json"), "w") as f:
        json.dump(exact(out), f)


def exact(v):
    """Floats as their shortest round-trip text (repr), so that the reader gets the exact double."""
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, dict):
        return {k: exact(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [exact(x) for x in v]
    return v


def rewrite(src, dst, compression, drop=None, keep=None):
    with rosbag.Bag(src) as bag, rosbag.Bag(dst, "w", compression=compression) as out:
        for topic, raw, t in bag.read_messages(raw=True):
            if drop and re.search(drop, topic):
                continue
            if keep and not re.search(keep, topic):
                continue
            out.write(topic, raw, t, raw=True)


def generic(src, dst):
    names = {"Depth_0/image/data": "/camera/depth/image_rect_raw", "Depth_0/info/camera_info": "/camera/depth/camera_info",
             "Color_0/image/data": "/camera/color/image_raw", "Color_0/info/camera_info": "/camera/color/camera_info"}
    with rosbag.Bag(src) as bag, rosbag.Bag(dst, "w", compression="lz4") as out:
        for topic, raw, t in bag.read_messages(raw=True):
            for suffix, name in names.items():
                if topic.endswith(suffix):
                    out.write(name, raw, t, raw=True)


def encodings(src, outdir):
    import random
    rng = random.Random(17)
    os.makedirs(outdir, exist_ok=True)
    with rosbag.Bag(src) as bag:
        image_type = None
        for _, msg, t0 in bag.read_messages():
            if msg._type == "sensor_msgs/Image":
                image_type = type(msg)
                break
    bpps = {"rgb8": 3, "bgr8": 3, "rgba8": 4, "bgra8": 4, "mono8": 1, "8UC1": 1, "yuyv": 2, "yuv422": 2}
    w, h = 6, 4
    for enc, bpp in bpps.items():
        color = image_type()
        color.header.stamp = t0
        color.header.frame_id = "color"
        color.width, color.height, color.encoding, color.step = w, h, enc, w * bpp + 3
        color.data = bytes(rng.randrange(256) for _ in range(color.step * h))
        depth = image_type()
        depth.header.stamp = t0
        depth.width, depth.height, depth.encoding, depth.step, depth.is_bigendian = w, h, "16UC1", 2 * w, 1
        depth.data = bytes(rng.randrange(256) for _ in range(depth.step * h))
        with rosbag.Bag(os.path.join(outdir, enc + ".bag"), "w") as out:
            out.write("/camera/color/image_raw", color, t0)
            out.write("/camera/depth/image_raw", depth, t0)
        with open(os.path.join(outdir, enc + ".color"), "wb") as f:
            f.write(color.data)
        with open(os.path.join(outdir, enc + ".depth"), "wb") as f:
            f.write(depth.data)


def short_image(src, dst):
    done = False
    with rosbag.Bag(src) as bag, rosbag.Bag(dst, "w", compression="none") as out:
        for topic, raw, t in bag.read_messages(raw=True):
            datatype, data, md5sum, pos, pytype = raw
            if not done and datatype == "sensor_msgs/Image" and "Depth" in topic:
                msg = pytype()
                msg.deserialize(data)
                # The serialized data array is the last field: u32 length, then the bytes.
                body = bytes(data[:-len(msg.data) - 4])
                data = body + struct.pack("<I", len(msg.data) + 16) + bytes(msg.data)
                done = True
            out.write(topic, (datatype, data, md5sum, pos, pytype), t, raw=True)


def seeds(src, outdir):
    os.makedirs(outdir, exist_ok=True)
    for compression in ("none", "lz4", "bz2"):
        with rosbag.Bag(src) as bag, rosbag.Bag(os.path.join(outdir, "small-%s.bag" % compression), "w",
                                                compression=compression) as out:
            for topic, msg, t in bag.read_messages():
                if msg._type == "sensor_msgs/Image":
                    bpp = msg.step // msg.width
                    w, h = 8, 6
                    rows = [msg.data[y * msg.step:y * msg.step + w * bpp] for y in range(h)]
                    msg.data = b"".join(rows)
                    msg.width, msg.height, msg.step = w, h, w * bpp
                elif msg._type == "sensor_msgs/CameraInfo":
                    msg.width, msg.height = 8, 6
                elif not (topic in ("/file_version", "/device_0/info") or topic.endswith("/tf/0")
                          or topic.endswith("/info") or topic.endswith("Depth Units/value")):
                    continue  # options and per-frame metadata: not read by depthlens; small seeds
                out.write(topic, msg, t)


def main(argv):
    if len(argv) >= 3 and argv[1] == "dump":
        dump(argv[2], argv[3])
    elif len(argv) >= 5 and argv[1] == "rewrite":
        drop = keep = None
        rest = argv[5:]
        while rest:
            if rest[0] == "--drop-topic-regex":
                drop = rest[1]
            elif rest[0] == "--keep-topic-regex":
                keep = rest[1]
            rest = rest[2:]
        rewrite(argv[2], argv[3], argv[4], drop, keep)
    elif len(argv) == 4 and argv[1] == "generic":
        generic(argv[2], argv[3])
    elif len(argv) == 4 and argv[1] == "encodings":
        encodings(argv[2], argv[3])
    elif len(argv) == 4 and argv[1] == "short-image":
        short_image(argv[2], argv[3])
    elif len(argv) == 4 and argv[1] == "seeds":
        seeds(argv[2], argv[3])
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
