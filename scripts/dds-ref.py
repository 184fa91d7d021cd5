"""The tests' independent DDS end: PyPI's Eclipse Cyclone DDS binding (0.10.2, built against
Debian's libddsc by scripts/ddspy-venv) with ROS 2's message types written here as IdlStructs, so
the CDR is made and read by the binding, not by depthlens. Run with .build/ddspy/bin/python and
PYTHONPATH=/usr/lib/python3/dist-packages (Debian's rosbag reads the shared bag). Always bounded
in time; CYCLONEDDS_URI must keep it on the loopback interface (the tests set it).

  pub BAG NAMESPACE DOMAIN SECONDS OUTDIR [bad]
      Publishes the bag's color and depth images and camera_infos (best effort images, reliable
      camera_info) under NAMESPACE every 0.1 s for SECONDS, and writes what it sent to
      OUTDIR/sent.json (+ raw pixel files). With `bad`, each round first sends broken samples:
      step·height beyond the data, a 100000x100000 claim, an unknown encoding, a NaN CameraInfo.
  sub NAMESPACE DOMAIN SECONDS OUTDIR COUNT
      Subscribes to NAMESPACE/{color,depth}/image_raw and their camera_info (best effort) and
      writes the first COUNT images of each (+ one camera_info each) to OUTDIR/received.json.
"""
import json
import math
import os
import sys
import time
from dataclasses import dataclass

from cyclonedds.core import Policy, Qos
from cyclonedds.domain import DomainParticipant
from cyclonedds.idl import IdlStruct
from cyclonedds.idl.types import array, float64, int32, sequence, uint8, uint32
from cyclonedds.pub import DataWriter
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic


@dataclass
class Time(IdlStruct, typename="builtin_interfaces::msg::dds_::Time_"):
    sec: int32
    nanosec: uint32


@dataclass
class Header(IdlStruct, typename="std_msgs::msg::dds_::Header_"):
    stamp: Time
    frame_id: str


@dataclass
class Image(IdlStruct, typename="sensor_msgs::msg::dds_::Image_"):
    header: Header
    height: uint32
    width: uint32
    encoding: str
    is_bigendian: uint8
    step: uint32
    data: sequence[uint8]


@dataclass
class RegionOfInterest(IdlStruct, typename="sensor_msgs::msg::dds_::RegionOfInterest_"):
    x_offset: uint32
    y_offset: uint32
    height: uint32
    width: uint32
    do_rectify: bool


@dataclass
class CameraInfo(IdlStruct, typename="sensor_msgs::msg::dds_::CameraInfo_"):
    header: Header
    height: uint32
    width: uint32
    distortion_model: str
    d: sequence[float64]
    k: array[float64, 9]
    r: array[float64, 9]
    p: array[float64, 12]
    binning_x: uint32
    binning_y: uint32
    roi: RegionOfInterest


BEST_EFFORT = Qos(Policy.Reliability.BestEffort, Policy.History.KeepLast(5))
RELIABLE = Qos(Policy.Reliability.Reliable(max_blocking_time=100_000_000), Policy.History.KeepLast(10))


def rt(topic):
    return "rt" + topic


def header(stamp_ns, frame):
    return Header(stamp=Time(sec=stamp_ns // 1_000_000_000, nanosec=stamp_ns % 1_000_000_000), frame_id=frame)


def pub(bag_path, ns, domain, seconds, outdir, bad=False):
    import rosbag  # Debian's python3-rosbag

    bag = rosbag.Bag(bag_path)
    color_topic = "/device_0/sensor_1/Color_0/image/data"
    depth_topic = "/device_0/sensor_0/Depth_0/image/data"
    info_topics = {"/device_0/sensor_1/Color_0/info/camera_info": "color", "/device_0/sensor_0/Depth_0/info/camera_info": "depth"}
    images = {"color": [], "depth": []}
    infos = {}
    for topic, m, _ in bag.read_messages():
        if topic in (color_topic, depth_topic):
            role = "color" if topic == color_topic else "depth"
            images[role].append(m)
        elif topic in info_topics:
            infos[info_topics[topic]] = m
    dp = DomainParticipant(domain)
    writers = {}
    for role in ("color", "depth"):
        writers[role] = DataWriter(dp, Topic(dp, rt(f"{ns}/{role}/image_raw"), Image), qos=BEST_EFFORT)
        writers[role + "_info"] = DataWriter(dp, Topic(dp, rt(f"{ns}/{role}/camera_info"), CameraInfo), qos=RELIABLE)
    sent = {"color": [], "depth": [], "info": {}}
    msgs = {"color": [], "depth": []}
    for role in ("color", "depth"):
        for i, m in enumerate(images[role]):
            stamp = m.header.stamp.to_nsec()
            raw = bytes(m.data)
            name = f"{role}{i}.raw"
            with open(os.path.join(outdir, name), "wb") as f:
                f.write(raw)
            sent[role].append({"stamp_ns": stamp, "width": m.width, "height": m.height, "encoding": m.encoding,
                               "step": m.step, "file": name})
            msgs[role].append(Image(header=header(stamp, f"{role}_frame"), height=m.height, width=m.width,
                                    encoding=m.encoding, is_bigendian=0, step=m.step, data=list(raw)))
    info_msgs = {}
    for role, m in infos.items():
        w, h = images[role][0].width, images[role][0].height
        sent["info"][role] = {"k": list(m.K), "d": list(m.D), "model": m.distortion_model}
        info_msgs[role] = CameraInfo(header=header(0, f"{role}_frame"), height=h, width=w,
                                     distortion_model=m.distortion_model, d=list(m.D), k=list(m.K), r=list(m.R),
                                     p=list(m.P), binning_x=0, binning_y=0,
                                     roi=RegionOfInterest(x_offset=0, y_offset=0, height=0, width=0, do_rectify=False))
    with open(os.path.join(outdir, "sent.json"), "w") as f:
        json.dump(sent, f)
    broken = []
    if bad:
        c = msgs["color"][0]
        broken.append(("color", Image(header=header(1, "x"), height=480, width=640, encoding="rgb8", is_bigendian=0,
                                      step=640 * 3, data=list(range(256)) * 4)))  # step·height > data
        broken.append(("color", Image(header=header(2, "x"), height=100000, width=100000, encoding="rgb8", is_bigendian=0,
                                      step=300000, data=[0] * 16)))
        broken.append(("color", Image(header=header(3, "x"), height=c.height, width=c.width, encoding="weird42",
                                      is_bigendian=0, step=c.step, data=c.data)))
        nan = info_msgs["color"]
        broken.append(("color_info", CameraInfo(header=nan.header, height=nan.height, width=nan.width,
                                                distortion_model=nan.distortion_model, d=nan.d,
                                                k=[math.nan] * 9, r=nan.r, p=nan.p, binning_x=0, binning_y=0, roi=nan.roi)))
    end = time.time() + seconds
    while time.time() < end:
        for role, m in broken:
            writers[role].write(m)
        for role in ("color", "depth"):
            writers[role + "_info"].write(info_msgs[role])
            for m in msgs[role]:
                writers[role].write(m)
        time.sleep(0.1)


def sub(ns, domain, seconds, outdir, count):
    dp = DomainParticipant(domain)
    readers = {}
    for role in ("color", "depth"):
        readers[role] = DataReader(dp, Topic(dp, rt(f"{ns}/{role}/image_raw"), Image), qos=BEST_EFFORT)
        readers[role + "_info"] = DataReader(dp, Topic(dp, rt(f"{ns}/{role}/camera_info"), CameraInfo), qos=BEST_EFFORT)
    got = {"color": [], "depth": [], "info": {}}
    end = time.time() + seconds
    while time.time() < end:
        for role in ("color", "depth"):
            for m in readers[role].take(10):
                if len(got[role]) >= count:
                    continue
                name = f"got-{role}{len(got[role])}.raw"
                with open(os.path.join(outdir, name), "wb") as f:
                    f.write(bytes(m.data))
                got[role].append({"stamp_ns": m.header.stamp.sec * 1_000_000_000 + m.header.stamp.nanosec,
                                  "width": m.width, "height": m.height, "encoding": m.encoding, "step": m.step,
                                  "frame_id": m.header.frame_id, "file": name})
            for m in readers[role + "_info"].take(10):
                got["info"][role] = {"k": list(m.k), "d": list(m.d), "model": m.distortion_model,
                                     "width": m.width, "height": m.height}
        if all(len(got[r]) >= count for r in ("color", "depth")) and len(got["info"]) == 2:
            break
        time.sleep(0.005)
    with open(os.path.join(outdir, "received.json"), "w") as f:
        json.dump(got, f)


if __name__ == "__main__":
    if not os.environ.get("CYCLONEDDS_URI"):
        sys.exit("dds-ref.py: set CYCLONEDDS_URI (the tests keep DDS on the loopback interface)")
    mode = sys.argv[1]
    if mode == "pub":
        pub(sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5]), sys.argv[6], len(sys.argv) > 7 and sys.argv[7] == "bad")
    elif mode == "sub":
        sub(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), sys.argv[5], int(sys.argv[6]))
    else:
        sys.exit(f"dds-ref.py: unknown mode {mode}")
