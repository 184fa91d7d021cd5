#!/usr/bin/env python3
"""librealsense's own depth-to-color alignment of one frame of a RealSense .bag, as a reference
for depthlens' DepthAligner (Tests/DepthKitTests/DepthAlignmentTests.swift).

    rs-align-reference.py BAG OUTDIR

Plays BAG with pyrealsense2 (headless, no device), takes the first frameset that holds both depth
and color, and writes into OUTDIR:
  depth.u16    the raw depth frame, uint16 little-endian, depth width x height
  aligned.u16  rs.align(rs.stream.color) of it, uint16 little-endian, color width x height
  info.json    depth/color intrinsics (width, height, fx, fy, ppx, ppy, model, coeffs), the
               depth->color extrinsics as librealsense reports them (rotation column-major, as
               rs2_extrinsics stores it, and translation in meters), depth units (meters per unit)
               and the frame numbers/timestamps used.
"""
import json
import os
import sys

import numpy as np
import pyrealsense2 as rs


def intrinsics(profile):
    i = profile.as_video_stream_profile().get_intrinsics()
    return {"width": i.width, "height": i.height, "fx": i.fx, "fy": i.fy, "ppx": i.ppx, "ppy": i.ppy,
            "model": str(i.model), "coeffs": list(i.coeffs)}


def main():
    bag, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    pipe = rs.pipeline()
    cfg = rs.config()
    cfg.enable_device_from_file(bag, repeat_playback=False)
    profile = pipe.start(cfg)
    playback = profile.get_device().as_playback()
    playback.set_real_time(False)
    align = rs.align(rs.stream.color)
    try:
        for _ in range(50):
            frames = pipe.wait_for_frames(5000)
            depth, color = frames.get_depth_frame(), frames.get_color_frame()
            if depth and color:
                break
        else:
            sys.exit("rs-align-reference: no frameset with both depth and color in " + bag)
        # Copy the raw depth before align (the frameset is processed in place otherwise).
        raw = np.asanyarray(depth.get_data()).astype("<u2").copy()
        aligned = align.process(frames).get_depth_frame()
        al = np.asanyarray(aligned.get_data()).astype("<u2").copy()
        dprof, cprof = depth.get_profile(), color.get_profile()
        ext = dprof.get_extrinsics_to(cprof)
        info = {
            "depth": intrinsics(dprof), "color": intrinsics(cprof),
            "aligned": intrinsics(aligned.get_profile()),
            "extrinsics": {"rotation_column_major": list(ext.rotation), "translation": list(ext.translation)},
            "depth_units": depth.get_units(),
            "depth_frame": depth.get_frame_number(), "color_frame": color.get_frame_number(),
            "depth_timestamp": depth.get_timestamp(), "color_timestamp": color.get_timestamp(),
            "rs_version": rs.__version__ if hasattr(rs, "__version__") else "",
        }
    finally:
        pipe.stop()
    raw.tofile(os.path.join(out, "depth.u16"))
    al.tofile(os.path.join(out, "aligned.u16"))
    with open(os.path.join(out, "info.json"), "w") as f:
        json.dump(info, f, indent=1)
    print(json.dumps(info))


if __name__ == "__main__":
    main()
