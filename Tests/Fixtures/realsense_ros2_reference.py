#!/usr/bin/env python3
"""A RealSense ROS 2 recording written by librealsense itself, and its playback, for depthlens' tests.

    realsense_ros2_reference.py record OUT.db3 FED.json [raw|yuyv]   pyrealsense2 (2.59+) records a software_device's
                                                          depth (Z16, Depth Units 0.0001) and color (RGB8)
                                                          sensors, 3 frames each, with rs.recorder; FED.json
                                                          holds what was fed (pixels hex, timestamps ms,
                                                          intrinsics, extrinsics); with `raw`, the
                                                          recorder's compression off: raw sensor_msgs/msg/Image;
                                                          with `yuyv`, color is YUYV (compression on: the
                                                          writer zstd-compresses what PNG cannot hold,
                                                          `YUYV; zstd; 64x48 step=128`)
    realsense_ros2_reference.py play IN.db3 OUT.json      pyrealsense2's playback of IN.db3: every frame
                                                          (stream, timestamp ms, number, data hex), the
                                                          profiles' intrinsics, depth units, depth->color
                                                          extrinsics (rotation column-major, as rs2_extrinsics)

librealsense 2.59 writes depth as `…/Depth_0/image/data/compressedDepth` (16UC1; compressedDepth png),
color as `…/Color_0/image/data/compressed` (PNG), CameraInfo per frame, key=value strings for stream
info, options, per-frame metadata and `tf/ref_N` extrinsics, and /tf_static.
"""
import json
import math
import sys
import time

import numpy as np
import pyrealsense2 as rs

W, H = 64, 48


def record(out, fed_path, mode='compressed'):
    dev = rs.software_device()
    ds, cs = dev.add_sensor("Depth"), dev.add_sensor("Color")

    def intrinsics(fx, ppx, ppy, model, coeffs):
        i = rs.intrinsics()
        i.width, i.height, i.ppx, i.ppy, i.fx, i.fy, i.model, i.coeffs = W, H, ppx, ppy, fx, fx, model, coeffs
        return i

    di = intrinsics(55.0, 32.1, 24.2, rs.distortion.brown_conrady, [0, 0, 0, 0, 0])
    ci = intrinsics(60.5, 31.7, 23.9, rs.distortion.inverse_brown_conrady, [0.01, -0.02, 0, 0, 0.003])

    def stream(kind, uid, fmt, bpp, intr):
        v = rs.video_stream()
        v.type, v.index, v.uid, v.width, v.height, v.fps, v.bpp, v.fmt, v.intrinsics = kind, 0, uid, W, H, 30, bpp, fmt, intr
        return v

    dp = ds.add_video_stream(stream(rs.stream.depth, 0, rs.format.z16, 2, di))
    yuyv = mode == 'yuyv'
    cbpp = 2 if yuyv else 3
    cp = cs.add_video_stream(stream(rs.stream.color, 1, rs.format.yuyv if yuyv else rs.format.rgb8, cbpp, ci))
    ds.add_read_only_option(rs.option.depth_units, 0.0001)
    # Depth -> color: 5 degrees about z, then a translation (rs2_extrinsics' rotation is column-major).
    a = math.radians(5)
    rot = [[math.cos(a), -math.sin(a), 0], [math.sin(a), math.cos(a), 0], [0, 0, 1]]
    ext = rs.extrinsics()
    ext.rotation = [rot[r][c] for c in range(3) for r in range(3)]
    ext.translation = [0.015, 0.001, -0.002]
    dp.register_extrinsics_to(cp, ext)
    recorder = rs.recorder(out, dev, mode != 'raw')
    q = rs.frame_queue(10)
    ds.open(dp)
    cs.open(cp)
    ds.start(q)
    cs.start(q)
    ys, xs = np.mgrid[0:H, 0:W]
    fed = {'depth': [], 'color': [], 'extrinsics': {'rotation': list(ext.rotation), 'translation': list(ext.translation)}}
    for i in range(3):
        depth = (500 + xs * 10 + ys * 3 + i * 7).astype(np.uint16)
        depth[0:4, 0:4] = 0
        rgb = np.stack([(xs * 4 + i * 10) % 256, (ys * 5) % 256, ((xs + ys) * 2 + i) % 256], axis=-1).astype(np.uint8)
        if yuyv:
            # Y0 U Y1 V for each pair of pixels: luma from the gradient, chroma a pattern of its own.
            packed = np.zeros((H, W * 2), dtype=np.uint8)
            packed[:, 0::2] = (16 + (xs * 3 + ys * 2 + i * 5) % 220).astype(np.uint8)
            packed[:, 1::4] = (64 + (xs[:, 0::2] * 5 + i) % 128).astype(np.uint8)
            packed[:, 3::4] = (96 + (ys[:, 0::2] * 3 + i * 2) % 128).astype(np.uint8)
            rgb = packed
        for sensor, prof, data, bpp, offset, key in [(ds, dp, depth, 2, 0.0, 'depth'), (cs, cp, rgb, cbpp, 5.0, 'color')]:
            f = rs.software_video_frame()
            f.pixels, f.bpp, f.stride = data.tobytes(), bpp, W * bpp
            f.timestamp = 1000.0 + i * 33.3 + offset
            f.domain, f.frame_number, f.profile = rs.timestamp_domain.hardware_clock, i + 1, prof.as_video_stream_profile()
            if key == 'depth':
                f.depth_units = 0.0001
            sensor.on_video_frame(f)
            fed[key].append({'timestamp': f.timestamp, 'data': data.tobytes().hex()})
        time.sleep(0.05)
    time.sleep(0.2)
    ds.stop()
    cs.stop()
    ds.close()
    cs.close()
    del recorder
    with open(fed_path, 'w') as fp:
        json.dump(fed, fp)


def play(path, out_path):
    dev = rs.context().load_device(path)
    pb = dev.as_playback()
    pb.set_real_time(False)
    out = {'frames': [], 'profiles': {}}
    q = rs.frame_queue(50, keep_frames=True)
    profiles = {}
    for s in dev.query_sensors():
        for p in s.get_stream_profiles():
            i = p.as_video_stream_profile().get_intrinsics()
            profiles[p.stream_name()] = p
            out['profiles'][p.stream_name()] = {'fx': i.fx, 'fy': i.fy, 'ppx': i.ppx, 'ppy': i.ppy, 'model': str(i.model),
                                                'coeffs': list(i.coeffs), 'width': i.width, 'height': i.height}
        s.open(s.get_stream_profiles())
        s.start(q)
        if s.supports(rs.option.depth_units):
            out['depth_units'] = s.get_option(rs.option.depth_units)
    e = profiles['Depth'].get_extrinsics_to(profiles['Color'])
    out['extrinsics'] = {'rotation': list(e.rotation), 'translation': list(e.translation)}
    deadline = time.time() + 10
    while time.time() < deadline:
        try:
            f = q.wait_for_frame(200)
        except RuntimeError:
            if pb.current_status() == rs.playback_status.stopped:
                break
            continue
        out['frames'].append({'stream': f.profile.stream_name(), 'timestamp': f.get_timestamp(),
                              'number': f.get_frame_number(), 'data': np.asanyarray(f.get_data()).tobytes().hex()})
    with open(out_path, 'w') as fp:
        json.dump(out, fp)


if __name__ == '__main__':
    {'record': record, 'play': play}[sys.argv[1]](*sys.argv[2:])
