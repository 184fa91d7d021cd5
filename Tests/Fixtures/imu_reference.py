#!/usr/bin/env python3
"""IMU fixtures and their reference values, written and read back by PyPI's `rosbags` (ROS 1 bags,
rosbag2 SQLite) and Python's struct (Azure Kinect IMU samples) for Tests/CaptureTests/IMUTests.swift.

    imu_reference.py make OUTDIR

writes into OUTDIR:
    rs.bag            ROS 1, librealsense's layout: 4 depth frames on /device_0/sensor_0/Depth_0/image/data
                      (4x2 16UC1), Accel on /device_0/sensor_2/Accel_0/imu/data (63 samples, ~63 Hz,
                      only linear_acceleration), Gyro on /device_0/sensor_2/Gyro_0/imu/data (200 samples,
                      ~200 Hz, only angular_velocity): their stamps are the frames' clock.
    generic.bag       ROS 1, a depth image on /camera/depth/image_rect_raw and one Imu topic /imu/data
                      with both fields (50 samples).
    rs-db3/           rosbag2 (SQLite), the rs.bag layout with ROS 2 types.
    truncated.bag     rs.bag's layout, but Accel message 5 written cut short (its last 30 bytes gone).
    nan.bag           rs.bag's layout, but Gyro message 7's angular_velocity.y is NaN.
    k4a-imu.bin       Azure Kinect IMU samples, the SDK's packed matroska_imu_sample_t (<Q3fQ3f, 40 bytes)
                      each: 120 samples, ~1.6 kHz, accelerometer and gyroscope stamps 300 us apart.
    stray-imu.csv     Stray Scanner's imu.csv (header, then timestamp, a_x..a_z in g, alpha_x..z in rad/s).
    reference.json    what rosbags reads back from rs.bag, generic.bag and rs-db3 (every Imu message:
                      topic, stamp sec/nanosec, linear_acceleration, angular_velocity as repr strings), and
                      the k4a samples as struct unpacks them (timestamps in ns, floats as repr strings).
"""
import json
import math
import struct
import sys
from pathlib import Path

import numpy as np
from rosbags.rosbag1 import Reader as Reader1, Writer as Writer1
from rosbags.rosbag2 import Reader as Reader2, Writer as Writer2
from rosbags.typesys import Stores, get_typestore

ROS1 = get_typestore(Stores.ROS1_NOETIC)
ROS2 = get_typestore(Stores.ROS2_HUMBLE)
T0 = 1_700_000_000_250_000_000
rng = np.random.default_rng(27)

DEPTH_RS = "/device_0/sensor_0/Depth_0/image/data"
ACCEL = "/device_0/sensor_2/Accel_0/imu/data"
GYRO = "/device_0/sensor_2/Gyro_0/imu/data"


def messages(ts, generic=False, nan_gyro=None):
    """[(topic, msgtype, time_ns, message)] in time order."""
    T = ts.types
    ros1 = ts is ROS1

    def header(t, frame="0"):
        if ros1:
            return T["std_msgs/msg/Header"](seq=0, stamp=T["builtin_interfaces/msg/Time"](sec=t // 10**9, nanosec=t % 10**9),
                                            frame_id=frame)
        return T["std_msgs/msg/Header"](stamp=T["builtin_interfaces/msg/Time"](sec=t // 10**9, nanosec=t % 10**9), frame_id=frame)

    def vec(v):
        return T["geometry_msgs/msg/Vector3"](x=float(v[0]), y=float(v[1]), z=float(v[2]))

    def imu(t, a, g, cov_a=0.0, cov_g=0.0):
        return T["sensor_msgs/msg/Imu"](
            header=header(t), orientation=T["geometry_msgs/msg/Quaternion"](x=0.0, y=0.0, z=0.0, w=1.0),
            orientation_covariance=np.array([-1.0] + [0.0] * 8), angular_velocity=vec(g),
            angular_velocity_covariance=np.array([cov_g] + [0.0] * 8), linear_acceleration=vec(a),
            linear_acceleration_covariance=np.array([cov_a] + [0.0] * 8))

    out = []
    for i in range(4):
        t = T0 + i * 250_000_000
        depth = (np.arange(8, dtype="<u2") * 100 + 500 + i).view(np.uint8)
        out.append(("/camera/depth/image_rect_raw" if generic else DEPTH_RS, "sensor_msgs/msg/Image", t,
                    T["sensor_msgs/msg/Image"](header=header(t), height=2, width=4, encoding="16UC1", is_bigendian=0, step=8,
                                               data=depth)))
    if generic:
        for i in range(50):
            t = T0 + i * 20_000_000 + int(rng.integers(0, 999_999))
            a = [0.1 * math.sin(i / 5), -9.81 + 0.05 * math.cos(i / 3), 0.3 + rng.normal(0, 0.01)]
            g = [0.01 * i, -0.02 * math.sin(i / 4), rng.normal(0, 0.1)]
            out.append(("/imu/data", "sensor_msgs/msg/Imu", t, imu(t, a, g)))
    else:
        for i in range(63):
            t = T0 + i * 15_873_016 + int(rng.integers(0, 200_000))
            a = [0.2 * math.sin(i / 7) + rng.normal(0, 0.02), -9.80665 + rng.normal(0, 0.03), 0.5 * math.cos(i / 9)]
            out.append((ACCEL, "sensor_msgs/msg/Imu", t, imu(t, a, [0.0, 0.0, 0.0])))
        for i in range(200):
            t = T0 + 2_000_000 + i * 5_000_000 + int(rng.integers(0, 100_000))
            g = [0.3 * math.sin(i / 11), rng.normal(0, 0.05), -0.1 + 0.001 * i]
            if nan_gyro == i:
                g[1] = float("nan")
            out.append((GYRO, "sensor_msgs/msg/Imu", t, imu(t, [0.0, 0.0, 0.0], g)))
    out.sort(key=lambda m: m[2])
    return out


def write_ros1(path, msgs, truncate=None):
    """truncate: (topic, n, cut) writes the n-th message of topic without its last `cut` bytes."""
    path.unlink(missing_ok=True)
    seen = {}
    with Writer1(path) as w:
        conns = {}
        for topic, mt, t, msg in msgs:
            if topic not in conns:
                conns[topic] = w.add_connection(topic, mt, typestore=ROS1)
            raw = bytes(ROS1.serialize_ros1(msg, mt))
            k = seen.get(topic, 0)
            seen[topic] = k + 1
            if truncate and truncate[0] == topic and truncate[1] == k:
                raw = raw[:-truncate[2]]
            w.write(conns[topic], t, raw)


def write_ros2(path, msgs):
    w = Writer2(path, version=9)
    with w:
        conns = {}
        for topic, mt, t, msg in msgs:
            if topic not in conns:
                conns[topic] = w.add_connection(topic, mt, typestore=ROS2)
            w.write(conns[topic], t, bytes(ROS2.serialize_cdr(msg, mt)))


def imu_json(topic, msg):
    h = msg.header.stamp
    la, av = msg.linear_acceleration, msg.angular_velocity
    return {"topic": topic, "sec": h.sec, "nanosec": h.nanosec,
            "linear_acceleration": [repr(la.x), repr(la.y), repr(la.z)],
            "angular_velocity": [repr(av.x), repr(av.y), repr(av.z)]}


def read_ros1(path):
    out = []
    with Reader1(path) as r:
        for c, t, raw in r.messages():
            if c.msgtype == "sensor_msgs/msg/Imu":
                out.append(imu_json(c.topic, ROS1.deserialize_ros1(raw, c.msgtype)))
    return out


def read_ros2(path):
    out = []
    with Reader2(path) as r:
        for c, t, raw in r.messages():
            if c.msgtype == "sensor_msgs/msg/Imu":
                out.append(imu_json(c.topic, ROS2.deserialize_cdr(raw, c.msgtype)))
    return out


def k4a(path):
    samples = []
    raw = b""
    for i in range(120):
        ta = 5_000_000_000 + i * 625_000 + int(rng.integers(0, 100)) * 1000
        tg = ta + 300_000
        a = [0.25 * math.sin(i / 13), -9.7 + 0.01 * i, 0.4]
        g = [0.001 * i, -0.05, 0.02 * math.cos(i / 5)]
        raw += struct.pack("<Q3fQ3f", ta, *a, tg, *g)
    for off in range(0, len(raw), 40):
        ta, ax, ay, az, tg, gx, gy, gz = struct.unpack_from("<Q3fQ3f", raw, off)
        samples.append({"acc_ns": ta, "acc": [repr(ax), repr(ay), repr(az)], "gyro_ns": tg, "gyro": [repr(gx), repr(gy), repr(gz)]})
    path.write_bytes(raw)
    return samples


def stray(path):
    lines = ["timestamp, a_x, a_y, a_z, alpha_x, alpha_y, alpha_z"]
    for i in range(30):
        t = 51234.5 + i * 0.01
        lines.append(f"{t!r}, {0.01 * i!r}, {-0.99 + 0.001 * i!r}, {0.05!r}, {0.1 * math.sin(i)!r}, {-0.2!r}, {0.003 * i!r}")
    path.write_text("\n".join(lines) + "\n")


def main():
    if len(sys.argv) != 3 or sys.argv[1] != "make":
        sys.exit(__doc__)
    out = Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    rs1 = messages(ROS1)
    write_ros1(out / "rs.bag", rs1)
    write_ros1(out / "generic.bag", messages(ROS1, generic=True))
    write_ros1(out / "truncated.bag", rs1, truncate=(ACCEL, 5, 30))
    write_ros1(out / "nan.bag", messages(ROS1, nan_gyro=7))
    write_ros2(out / "rs-db3", messages(ROS2))
    ref = {"rs.bag": read_ros1(out / "rs.bag"), "generic.bag": read_ros1(out / "generic.bag"),
           "rs-db3": read_ros2(out / "rs-db3"), "k4a": k4a(out / "k4a-imu.bin")}
    stray(out / "stray-imu.csv")
    (out / "reference.json").write_text(json.dumps(ref))


if __name__ == "__main__":
    main()
