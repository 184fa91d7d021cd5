#!/usr/bin/env python3
"""ROS 2 recordings written and read by independent tools (PyPI `rosbags`, `mcap`), for depthlens' tests.

Run with the reference venv's python (scripts/pyref-requirements.txt: rosbags, mcap, lz4, numpy).

  ros2_reference.py make-bags OUTDIR [--bag ROS1.bag]   every variant below, into OUTDIR (which must not exist)
  ros2_reference.py make-bags OUTDIR --synthetic-only   only the synthetic ones (no rosbags-convert runs)
  ros2_reference.py make-seeds OUTDIR                    tiny MCAPs (8x6 images, 2 frames: zstd, lz4, none, unchunked) for scripts/fuzz
  ros2_reference.py make-bad OUTDIR                      the bad inputs below, into OUTDIR (which must not exist)
  ros2_reference.py dump PATH [PATH...]                  topics and messages of each PATH as JSON, one line each
  ros2_reference.py make-bench OUT [--size WxH] [--depth-size WxH] [--frames N] [--png] [--noise] [--chunks zstd|none]
                                                         one recording for scripts/bench-convert (below)

What make-bags writes (all deterministic; timestamps in nanoseconds):

  The shared RealSense D435 ROS 1 bag (Tests/Fixtures/realsense-d435-640x480.bag: 2 depth frames mono16 640x480,
  1 color frame rgb8 640x480, camera_info, tf, librealsense's info/option topics; 135 messages), converted to ROS 2
  by `rosbags-convert` (ROS 1 types, CDR), in every storage and compression mode:
    d435-db3/               rosbag2 folder, SQLite, uncompressed
    d435-db3-message-zstd/  rosbag2 folder, SQLite, every message zstd-compressed (compression_mode: message)
    d435-db3-file-zstd/     rosbag2 folder, the .db3 zstd-compressed as a whole (d435-db3-file-zstd.db3.zstd)
    d435-mcap/              rosbag2 folder, MCAP, uncompressed chunks
    d435-mcap-zstd/         rosbag2 folder, MCAP, zstd chunks (compression_mode: storage)
    d435-mcap-file-zstd/    rosbag2 folder, the .mcap zstd-compressed as a whole
    d435.db3                the bare .db3 of d435-db3 (no metadata.yaml)
    d435.mcap               the bare .mcap of d435-mcap-zstd

  A synthetic RGB-D pair as realsense2_camera publishes it (each stream on its own clock):
    /camera/camera/color/image_raw          sensor_msgs/msg/Image rgb8 64x48, 6 frames at 30 fps from t0
    /camera/camera/depth/image_rect_raw     sensor_msgs/msg/Image 16UC1 64x48 (millimeters), 6 frames at 30 fps
                                            from t0 + 5 ms
    /camera/camera/color/camera_info        sensor_msgs/msg/CameraInfo (plumb_bob) with each color frame
    /camera/camera/depth/camera_info        sensor_msgs/msg/CameraInfo with each depth frame
    /tf_static                              tf2_msgs/msg/TFMessage: camera_link -> camera_depth_frame ->
                                            camera_depth_optical_frame, camera_link -> camera_color_frame ->
                                            camera_color_optical_frame (color 15 mm along +y of camera_link)
  with t0 = 1700000000.000000000 s (header stamps = log times), in Humble's types (rosbags' typestore):
    synthetic-db3/              rosbag2 folder written by rosbags' Writer, SQLite (schema 4 with message_definitions)
    synthetic-split/            rosbag2 folder split in two SQLite files (synthetic-split_0.db3: the first 3 frame
                                times, synthetic-split_1.db3: the rest), one metadata.yaml listing both
    synthetic-zstd.mcap         bare MCAP by `mcap`'s Writer, zstd chunks of ~16 KiB, summary with chunk and message indexes
    synthetic-lz4.mcap          the same with lz4 chunks
    synthetic-none.mcap         the same with uncompressed chunks
    synthetic-unchunked.mcap    the same without chunks (Message records in the data section)
    synthetic-no-index.mcap     zstd chunks, a summary without chunk indexes, statistics or repeated channels
    synthetic-truncated.mcap    synthetic-zstd.mcap cut in the middle of a chunk (no summary, a half record)
    synthetic-unchunked-truncated.mcap   synthetic-unchunked.mcap cut in the middle of a Message record
    librealsense-zstd.db3       bare .db3, every message zstd-compressed, no metadata.yaml (as librealsense writes)
    synthetic-lz4-messages.db3  bare .db3, every message an LZ4 frame, no metadata.yaml

What make-bench writes: OUT.mcap (`mcap`'s Writer, chunks zstd or uncompressed) or OUT.db3 (a bare .db3 by
rosbags' Writer) with realsense2_camera's topics as above, N frames of each stream (default 60) at 30 fps, color
--size (default 1280x720) rgb8 and depth --depth-size (default 848x480) 16UC1 millimeters, each stream on its own
clock; --png stores them as librealsense 2.59 does (CompressedImage `rgb8; png compressed bgr8` and
`16UC1; compressedDepth png`, encoded by OpenCV), --noise adds seeded noise (like a camera's; the default
pictures are smooth gradients). Written message by message, so a recording of any size fits in memory.

What make-bad writes:
    not-sqlite.db3      text, not a database
    not-rosbag.db3      a SQLite database with a `people` table only
    not-mcap.mcap       text, not MCAP
    empty.mcap          zero bytes
    half-header.mcap    the MCAP magic and half a Header record
    corrupt-zstd.mcap   synthetic-zstd.mcap with the middle of its second chunk's compressed data overwritten
    corrupt-lz4.mcap    synthetic-lz4.mcap likewise
    corrupt-zstd-message.db3   librealsense-zstd.db3 with one message's zstd data overwritten past its header

dump prints {"storage": ..., "topics": [{"name", "type", "serialization_format", "count", "definition"}],
"messages": [[topic, log_time_ns, sha1_hex_of_decompressed_data], ...]} in file order. It reads a rosbag2 folder
with rosbags' Reader, a bare .mcap with `mcap`'s StreamReader (record by record: a file cut short yields the
messages of its whole records), a bare .db3 with Python's sqlite3 (messages starting with the zstd or LZ4 frame
magic decompressed with backports.zstd / lz4.frame), a .zstd storage file decompressed first.
"""

import hashlib
import io
import json
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

import lz4.frame
import numpy as np

try:
    from compression import zstd  # Python 3.14
except ImportError:
    from backports import zstd

from mcap.reader import make_reader
from mcap.stream_reader import StreamReader
from mcap.records import Channel, Message, Schema
from mcap.writer import CompressionType, IndexType, Writer as McapWriter
from rosbags.rosbag2 import Reader, Writer
from rosbags.rosbag2.enums import CompressionFormat, CompressionMode
from rosbags.typesys import Stores, get_typestore

T0 = 1_700_000_000 * 1_000_000_000
FRAMES = 6
PERIOD = 33_333_333
W, H = 64, 48
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
LZ4_MAGIC = b"\x04\x22\x4d\x18"


def converter() -> str:
    """rosbags-convert next to this python (the venv's)."""
    exe = Path(sys.executable).parent / "rosbags-convert"
    return str(exe) if exe.exists() else "rosbags-convert"


def convert(bag: Path, dst: Path, *args: str) -> None:
    subprocess.run([converter(), "--src", str(bag), "--dst", str(dst), *args], check=True,
                   stdout=subprocess.DEVNULL)


# ---------------------------------------------------------------- synthetic messages

def synthetic_messages(ts, W=W, H=H, frames=FRAMES):
    """[(topic, msgtype, log_time, cdr_bytes)] in time order (W x H images, `frames` of each stream)."""
    Time = ts.types["builtin_interfaces/msg/Time"]
    Header = ts.types["std_msgs/msg/Header"]
    Image = ts.types["sensor_msgs/msg/Image"]
    CameraInfo = ts.types["sensor_msgs/msg/CameraInfo"]
    RegionOfInterest = ts.types["sensor_msgs/msg/RegionOfInterest"]
    TFMessage = ts.types["tf2_msgs/msg/TFMessage"]
    TransformStamped = ts.types["geometry_msgs/msg/TransformStamped"]
    Transform = ts.types["geometry_msgs/msg/Transform"]
    Vector3 = ts.types["geometry_msgs/msg/Vector3"]
    Quaternion = ts.types["geometry_msgs/msg/Quaternion"]

    def header(t, frame):
        return Header(stamp=Time(sec=t // 1_000_000_000, nanosec=t % 1_000_000_000), frame_id=frame)

    def info(t, frame, fx, cx, cy, d):
        k = np.array([fx, 0, cx, 0, fx, cy, 0, 0, 1], dtype=np.float64)
        r = np.array([1, 0, 0, 0, 1, 0, 0, 0, 1], dtype=np.float64)
        p = np.array([fx, 0, cx, 0, 0, fx, cy, 0, 0, 0, 1, 0], dtype=np.float64)
        return CameraInfo(header=header(t, frame), height=H, width=W, distortion_model="plumb_bob",
                          d=np.array(d, dtype=np.float64), k=k, r=r, p=p, binning_x=0, binning_y=0,
                          roi=RegionOfInterest(x_offset=0, y_offset=0, height=0, width=0, do_rectify=False))

    # Optical frame from body frame: x right, y down, z forward (REP 103): q = (-0.5, 0.5, -0.5, 0.5).
    def tf(t, parent, child, xyz, q):
        return TransformStamped(header=header(t, parent), child_frame_id=child,
                                transform=Transform(translation=Vector3(x=xyz[0], y=xyz[1], z=xyz[2]),
                                                    rotation=Quaternion(x=q[0], y=q[1], z=q[2], w=q[3])))

    ident = (0.0, 0.0, 0.0, 1.0)
    opt = (-0.5, 0.5, -0.5, 0.5)
    out = [("/tf_static", "tf2_msgs/msg/TFMessage", T0, TFMessage(transforms=[
        tf(T0, "camera_link", "camera_depth_frame", (0.0, 0.0, 0.0), ident),
        tf(T0, "camera_depth_frame", "camera_depth_optical_frame", (0.0, 0.0, 0.0), opt),
        tf(T0, "camera_link", "camera_color_frame", (0.0, 0.015, 0.0), ident),
        tf(T0, "camera_color_frame", "camera_color_optical_frame", (0.0, 0.0, 0.0), opt),
    ]))]
    ys, xs = np.mgrid[0:H, 0:W]
    for i in range(frames):
        tc = T0 + i * PERIOD
        td = T0 + 5_000_000 + i * PERIOD
        rgb = np.stack([(xs * 4 + i * 10) % 256, (ys * 5) % 256, ((xs + ys) * 2 + i) % 256], axis=-1).astype(np.uint8)
        depth = (500 + xs * 10 + ys * 3 + i * 7).astype("<u2")
        depth[0:4, 0:4] = 0  # a hole
        out.append(("/camera/camera/color/image_raw", "sensor_msgs/msg/Image", tc,
                    Image(header=header(tc, "camera_color_optical_frame"), height=H, width=W, encoding="rgb8",
                          is_bigendian=0, step=W * 3, data=rgb.reshape(-1))))
        out.append(("/camera/camera/color/camera_info", "sensor_msgs/msg/CameraInfo", tc,
                    info(tc, "camera_color_optical_frame", 60.5, 31.7, 23.9, [0.01, -0.02, 0.0, 0.0, 0.003])))
        out.append(("/camera/camera/depth/image_rect_raw", "sensor_msgs/msg/Image", td,
                    Image(header=header(td, "camera_depth_optical_frame"), height=H, width=W, encoding="16UC1",
                          is_bigendian=0, step=W * 2, data=depth.reshape(-1).view(np.uint8))))
        out.append(("/camera/camera/depth/camera_info", "sensor_msgs/msg/CameraInfo", td,
                    info(td, "camera_depth_optical_frame", 55.0, 32.1, 24.2, [0.0, 0.0, 0.0, 0.0, 0.0])))
    out.sort(key=lambda m: m[2])
    return [(topic, mt, t, bytes(ts.serialize_cdr(msg, mt))) for topic, mt, t, msg in out]


def write_rosbag2(path: Path, ts, messages, compression=None):
    w = Writer(path, version=9)
    if compression is not None:
        w.set_compression(compression, CompressionFormat.ZSTD)
    with w:
        conns = {}
        for topic, mt, t, raw in messages:
            if topic not in conns:
                conns[topic] = w.add_connection(topic, mt, typestore=ts)
            w.write(conns[topic], t, raw)


def write_mcap(path: Path, ts, messages, **options):
    with open(path, "wb") as f:
        w = McapWriter(f, **options)
        w.start(profile="ros2", library="depthlens ros2_reference.py (mcap)")
        schemas, channels = {}, {}
        for topic, mt, t, raw in messages:
            if mt not in schemas:
                text, _ = ts.generate_msgdef(mt, ros_version=2)
                schemas[mt] = w.register_schema(name=mt, encoding="ros2msg", data=text.encode())
            if topic not in channels:
                channels[topic] = w.register_channel(topic=topic, message_encoding="cdr", schema_id=schemas[mt],
                                                     metadata={"offered_qos_profiles": ""})
            w.add_message(channel_id=channels[topic], log_time=t, publish_time=t, data=raw, sequence=0)
        w.finish()


def split_bag(out: Path, ts, messages):
    """Two SQLite files and one metadata.yaml (rosbag2's split layout), from two rosbags writers."""
    cut = T0 + 3 * PERIOD
    parts = [[m for m in messages if m[2] < cut], [m for m in messages if m[2] >= cut]]
    out.mkdir()
    from ruamel.yaml import YAML
    yaml = YAML(typ="safe")
    yaml.default_flow_style = False
    merged = None
    with tempfile.TemporaryDirectory() as tmp:
        for i, part in enumerate(parts):
            d = Path(tmp) / f"part{i}"
            write_rosbag2(d, ts, part)
            name = f"{out.name}_{i}.db3"
            shutil.copy(d / f"part{i}.db3", out / name)
            meta = yaml.load((d / "metadata.yaml").read_text())["rosbag2_bagfile_information"]
            meta["relative_file_paths"] = [name]
            meta["files"][0]["path"] = name
            if merged is None:
                merged = meta
                continue
            merged["relative_file_paths"] += meta["relative_file_paths"]
            merged["files"] += meta["files"]
            merged["message_count"] += meta["message_count"]
            end = max(merged["starting_time"]["nanoseconds_since_epoch"] + merged["duration"]["nanoseconds"],
                      meta["starting_time"]["nanoseconds_since_epoch"] + meta["duration"]["nanoseconds"])
            merged["duration"]["nanoseconds"] = end - merged["starting_time"]["nanoseconds_since_epoch"]
            counts = {t["topic_metadata"]["name"]: t for t in merged["topics_with_message_count"]}
            for t in meta["topics_with_message_count"]:
                if t["topic_metadata"]["name"] in counts:
                    counts[t["topic_metadata"]["name"]]["message_count"] += t["message_count"]
                else:
                    merged["topics_with_message_count"].append(t)
    with open(out / "metadata.yaml", "w") as f:
        yaml.dump({"rosbag2_bagfile_information": merged}, f)


def recompress_blobs(db: Path, compress) -> None:
    con = sqlite3.connect(db)
    rows = con.execute("SELECT id, data FROM messages").fetchall()
    for rid, data in rows:
        con.execute("UPDATE messages SET data=? WHERE id=?", (compress(bytes(data)), rid))
    con.commit()
    con.close()


def bench_messages(ts, size, depth_size, frames, png, noise):
    """realsense2_camera's topics, one message at a time in log-time order: (topic, msgtype, log_time, cdr)."""
    import cv2
    Time = ts.types["builtin_interfaces/msg/Time"]
    Header = ts.types["std_msgs/msg/Header"]
    Image = ts.types["sensor_msgs/msg/Image"]
    Compressed = ts.types["sensor_msgs/msg/CompressedImage"]
    (w, h), (dw, dh) = size, depth_size

    def header(t, frame):
        return Header(stamp=Time(sec=t // 1_000_000_000, nanosec=t % 1_000_000_000), frame_id=frame)

    ys, xs = np.mgrid[0:h, 0:w]
    dys, dxs = np.mgrid[0:dh, 0:dw]
    rng = np.random.default_rng(24)
    for i in range(frames):
        tc, td = T0 + i * PERIOD, T0 + 5_000_000 + i * PERIOD
        rgb = np.stack([(xs + i * 4) * 255 // w, ys * 255 // h, ((xs + ys + i * 8) // 4) % 256], axis=-1)
        depth = 500 + dxs * 4 + dys * 2 + i * 7
        if noise:
            rgb = rgb + rng.integers(-6, 7, size=rgb.shape)
            depth = depth + rng.integers(-8, 9, size=depth.shape)
        rgb = np.clip(rgb, 0, 255).astype(np.uint8)
        depth = np.clip(depth, 0, 65535).astype("<u2")
        if png:
            ok, color_png = cv2.imencode(".png", rgb[:, :, ::-1])
            ok2, depth_png = cv2.imencode(".png", depth)
            assert ok and ok2
            color = ("/camera/camera/color/image_raw/compressed", "sensor_msgs/msg/CompressedImage", tc,
                     Compressed(header=header(tc, "camera_color_optical_frame"), format="rgb8; png compressed bgr8",
                                data=np.frombuffer(color_png.tobytes(), dtype=np.uint8)))
            config = np.zeros(3, dtype="<i4").tobytes()  # compressedDepth's ConfigHeader: INV_DEPTH, 0.0, 0.0
            dmsg = ("/camera/camera/depth/image_rect_raw/compressedDepth", "sensor_msgs/msg/CompressedImage", td,
                    Compressed(header=header(td, "camera_depth_optical_frame"), format="16UC1; compressedDepth png",
                               data=np.frombuffer(config + depth_png.tobytes(), dtype=np.uint8)))
        else:
            color = ("/camera/camera/color/image_raw", "sensor_msgs/msg/Image", tc,
                     Image(header=header(tc, "camera_color_optical_frame"), height=h, width=w, encoding="rgb8",
                           is_bigendian=0, step=w * 3, data=rgb.reshape(-1)))
            dmsg = ("/camera/camera/depth/image_rect_raw", "sensor_msgs/msg/Image", td,
                    Image(header=header(td, "camera_depth_optical_frame"), height=dh, width=dw, encoding="16UC1",
                          is_bigendian=0, step=dw * 2, data=depth.reshape(-1).view(np.uint8)))
        for topic, mt, t, msg in (color, dmsg):
            yield topic, mt, t, bytes(ts.serialize_cdr(msg, mt))


def make_bench(out: Path, args) -> None:
    opts = {"--size": "1280x720", "--depth-size": "848x480", "--frames": "60", "--chunks": "zstd"}
    flags = set()
    i = 0
    while i < len(args):
        if args[i] in ("--png", "--noise"):
            flags.add(args[i])
            i += 1
        elif args[i] in opts and i + 1 < len(args):
            opts[args[i]] = args[i + 1]
            i += 2
        else:
            raise SystemExit(f"make-bench: unknown option {args[i]}")
    size = tuple(int(v) for v in opts["--size"].split("x"))
    depth_size = tuple(int(v) for v in opts["--depth-size"].split("x"))
    ts = get_typestore(Stores.ROS2_HUMBLE)
    msgs = bench_messages(ts, size, depth_size, int(opts["--frames"]), "--png" in flags, "--noise" in flags)
    if out.suffix == ".mcap":
        compression = CompressionType.ZSTD if opts["--chunks"] == "zstd" else CompressionType.NONE
        write_mcap(out, ts, msgs, compression=compression)
    elif out.suffix == ".db3":
        with tempfile.TemporaryDirectory(dir=out.parent) as tmp:
            write_rosbag2(Path(tmp) / "b", ts, msgs)
            shutil.move(str(Path(tmp) / "b" / "b.db3"), out)
    else:
        raise SystemExit("make-bench: OUT ends in .mcap or .db3")


def make_bags(out: Path, bag) -> None:
    out.mkdir(parents=True)
    if bag is not None:
        make_d435(out, bag)
    make_synthetic(out)


def make_d435(out: Path, bag: Path) -> None:
    """The shared D435 bag, converted."""
    convert(bag, out / "d435-db3")
    convert(bag, out / "d435-db3-message-zstd", "--compress", "zstd", "--compress-mode", "message")
    convert(bag, out / "d435-db3-file-zstd", "--compress", "zstd", "--compress-mode", "file")
    convert(bag, out / "d435-mcap", "--dst-storage", "mcap")
    convert(bag, out / "d435-mcap-zstd", "--dst-storage", "mcap", "--compress", "zstd", "--compress-mode", "storage")
    convert(bag, out / "d435-mcap-file-zstd", "--dst-storage", "mcap", "--compress", "zstd", "--compress-mode", "file")
    shutil.copy(out / "d435-db3" / "d435-db3.db3", out / "d435.db3")
    shutil.copy(out / "d435-mcap-zstd" / "d435-mcap-zstd.mcap", out / "d435.mcap")


def make_synthetic(out: Path) -> None:
    ts = get_typestore(Stores.ROS2_HUMBLE)
    msgs = synthetic_messages(ts)
    write_rosbag2(out / "synthetic-db3", ts, msgs)
    split_bag(out / "synthetic-split", ts, msgs)
    chunked = dict(chunk_size=16 * 1024)
    write_mcap(out / "synthetic-zstd.mcap", ts, msgs, compression=CompressionType.ZSTD, **chunked)
    write_mcap(out / "synthetic-lz4.mcap", ts, msgs, compression=CompressionType.LZ4, **chunked)
    write_mcap(out / "synthetic-none.mcap", ts, msgs, compression=CompressionType.NONE, **chunked)
    write_mcap(out / "synthetic-unchunked.mcap", ts, msgs, use_chunking=False)
    write_mcap(out / "synthetic-no-index.mcap", ts, msgs, compression=CompressionType.ZSTD, index_types=IndexType.NONE,
               repeat_channels=False, repeat_schemas=False, use_statistics=False, **chunked)
    # Cut short: in the middle of the middle chunk, and in the middle of a message record.
    data = (out / "synthetic-zstd.mcap").read_bytes()
    with open(out / "synthetic-zstd.mcap", "rb") as f:
        chunks = sorted(make_reader(f).get_summary().chunk_indexes, key=lambda c: c.chunk_start_offset)
    mid = chunks[len(chunks) // 2]
    (out / "synthetic-truncated.mcap").write_bytes(data[:mid.chunk_start_offset + mid.chunk_length // 2])
    data = (out / "synthetic-unchunked.mcap").read_bytes()
    offsets = message_offsets(data)
    m = offsets[len(offsets) // 2]
    (out / "synthetic-unchunked-truncated.mcap").write_bytes(data[:m + 40])
    # librealsense's layout: a bare .db3, every message zstd-compressed, no metadata.yaml.
    with tempfile.TemporaryDirectory() as tmp:
        write_rosbag2(Path(tmp) / "b", ts, msgs, compression=CompressionMode.MESSAGE)
        shutil.copy(Path(tmp) / "b" / "b.db3", out / "librealsense-zstd.db3")
        write_rosbag2(Path(tmp) / "c", ts, msgs)
        shutil.copy(Path(tmp) / "c" / "c.db3", out / "synthetic-lz4-messages.db3")
    recompress_blobs(out / "synthetic-lz4-messages.db3", lz4.frame.compress)


def make_seeds(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    ts = get_typestore(Stores.ROS2_HUMBLE)
    msgs = synthetic_messages(ts, W=8, H=6, frames=2)
    small = dict(chunk_size=1024)
    write_mcap(out / "zstd.mcap", ts, msgs, compression=CompressionType.ZSTD, **small)
    write_mcap(out / "lz4.mcap", ts, msgs, compression=CompressionType.LZ4, **small)
    write_mcap(out / "none.mcap", ts, msgs, compression=CompressionType.NONE, **small)
    write_mcap(out / "unchunked.mcap", ts, msgs, use_chunking=False)


def message_offsets(data: bytes):
    """File offsets of the top-level Message records of an unchunked MCAP."""
    at, out = 8, []
    while at + 9 <= len(data):
        op = data[at]
        n = int.from_bytes(data[at + 1:at + 9], "little")
        if op == 0x05:
            out.append(at)
        if op == 0x0F:
            break
        at += 9 + n
    return out


def make_bad(out: Path) -> None:
    out.mkdir(parents=True)
    (out / "not-sqlite.db3").write_text("this is not a database\n" * 20)
    con = sqlite3.connect(out / "not-rosbag.db3")
    con.execute("CREATE TABLE people(id INTEGER PRIMARY KEY, name TEXT)")
    con.execute("INSERT INTO people(name) VALUES ('ada')")
    con.commit()
    con.close()
    (out / "not-mcap.mcap").write_text("not an mcap file\n" * 20)
    (out / "empty.mcap").write_bytes(b"")
    ts = get_typestore(Stores.ROS2_HUMBLE)
    msgs = synthetic_messages(ts)
    with tempfile.TemporaryDirectory() as tmp:
        for kind, comp in (("zstd", CompressionType.ZSTD), ("lz4", CompressionType.LZ4)):
            src = Path(tmp) / f"{kind}.mcap"
            write_mcap(src, ts, msgs, compression=comp, chunk_size=16 * 1024)
            data = bytearray(src.read_bytes())
            if kind == "zstd":
                (out / "half-header.mcap").write_bytes(bytes(data[:8 + 9 + 6]))
            with open(src, "rb") as f:
                chunks = sorted(make_reader(f).get_summary().chunk_indexes, key=lambda c: c.chunk_start_offset)
            c = chunks[1]
            # The chunk's records start after its fixed fields and compression string.
            header = 9 + 8 + 8 + 8 + 4 + 4 + len(c.compression) + 8
            start = c.chunk_start_offset + header
            mid = start + c.compressed_size // 2
            data[mid:mid + 64] = bytes((i * 37 + 11) % 256 for i in range(64))
            (out / f"corrupt-{kind}.mcap").write_bytes(bytes(data))
        write_rosbag2(Path(tmp) / "b", ts, msgs, compression=CompressionMode.MESSAGE)
        db = out / "corrupt-zstd-message.db3"
        shutil.copy(Path(tmp) / "b" / "b.db3", db)
    con = sqlite3.connect(db)
    rid, data = con.execute("SELECT id, data FROM messages WHERE length(data) > 200 ORDER BY id LIMIT 1").fetchone()
    data = bytearray(data)
    data[20:120] = bytes((i * 53 + 7) % 256 for i in range(100))
    con.execute("UPDATE messages SET data=? WHERE id=?", (bytes(data), rid))
    con.commit()
    con.close()


# ---------------------------------------------------------------- dump

def sha1(b) -> str:
    return hashlib.sha1(bytes(b)).hexdigest()


def decompress_message(b: bytes) -> bytes:
    if b.startswith(ZSTD_MAGIC):
        return zstd.decompress(b)
    if b.startswith(LZ4_MAGIC):
        return lz4.frame.decompress(b)
    return b


def dump_folder(path: Path):
    with Reader(path) as r:
        topics = [{"name": c.topic, "type": c.msgtype, "serialization_format": c.ext.serialization_format,
                   "count": 0, "definition": c.msgdef.data if c.msgdef.format.name == "MSG" else None}
                  for c in r.connections]
        by = {t["name"]: t for t in topics}
        messages = []
        for c, t, raw in r.messages():
            by[c.topic]["count"] += 1
            messages.append([c.topic, t, sha1(raw)])
    from ruamel.yaml import YAML
    storage = YAML(typ="safe").load((path / "metadata.yaml").read_text())["rosbag2_bagfile_information"]["storage_identifier"]
    return storage, list(by.values()), messages


def dump_mcap(data: bytes):
    schemas, channels, topics, messages = {}, {}, {}, []
    try:
        for rec in StreamReader(io.BytesIO(data)).records:
            if isinstance(rec, Schema):
                schemas[rec.id] = rec
            elif isinstance(rec, Channel):
                channels[rec.id] = rec
                s = schemas.get(rec.schema_id)
                topics.setdefault(rec.topic, {
                    "name": rec.topic, "type": s.name if s else "", "serialization_format": rec.message_encoding,
                    "count": 0, "definition": s.data.decode() if s and s.encoding == "ros2msg" else None})
            elif isinstance(rec, Message):
                topic = channels[rec.channel_id].topic
                topics[topic]["count"] += 1
                messages.append([topic, rec.log_time, sha1(rec.data)])
    except Exception:  # a file cut short: the messages of its whole records
        pass
    return "mcap", list(topics.values()), messages


def dump_db3(path: Path):
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    defs = {}
    if "message_definitions" in tables:
        for ty, enc, text in con.execute("SELECT topic_type, encoding, encoded_message_definition FROM message_definitions"):
            if enc == "ros2msg":
                defs.setdefault(ty, text)
    topics, names = {}, {}
    for tid, name, ty, fmt in con.execute("SELECT id, name, type, serialization_format FROM topics ORDER BY id"):
        names[tid] = name
        topics.setdefault(name, {"name": name, "type": ty, "serialization_format": fmt, "count": 0,
                                 "definition": defs.get(ty)})
    messages = []
    for tid, t, data in con.execute("SELECT topic_id, timestamp, data FROM messages ORDER BY id"):
        topics[names[tid]]["count"] += 1
        messages.append([names[tid], t, sha1(decompress_message(bytes(data)))])
    con.close()
    return "sqlite3", list(topics.values()), messages


def dump(path: Path) -> None:
    if path.is_dir():
        storage, topics, messages = dump_folder(path)
    else:
        data = path.read_bytes()
        if data.startswith(ZSTD_MAGIC):
            data = zstd.decompress(data)
        if data.startswith(b"\x89MCAP0\r\n"):
            storage, topics, messages = dump_mcap(data)
        else:
            with tempfile.TemporaryDirectory() as tmp:
                p = Path(tmp) / "x.db3"
                p.write_bytes(data)
                storage, topics, messages = dump_db3(p)
    json.dump({"storage": storage, "topics": sorted(topics, key=lambda t: t["name"]), "messages": messages},
              sys.stdout)
    sys.stdout.write("\n")


def main() -> int:
    args = sys.argv[1:]
    if len(args) >= 2 and args[0] == "make-bags":
        bag = Path(__file__).parent / "realsense-d435-640x480.bag"
        if len(args) == 4 and args[2] == "--bag":
            bag = Path(args[3])
        elif len(args) == 3 and args[2] == "--synthetic-only":
            bag = None
        make_bags(Path(args[1]), bag)
        return 0
    if len(args) == 2 and args[0] == "make-seeds":
        make_seeds(Path(args[1]))
        return 0
    if len(args) == 2 and args[0] == "make-bad":
        make_bad(Path(args[1]))
        return 0
    if len(args) >= 2 and args[0] == "make-bench":
        make_bench(Path(args[1]), args[2:])
        return 0
    if len(args) >= 2 and args[0] == "dump":
        for a in args[1:]:
            dump(Path(a))
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
