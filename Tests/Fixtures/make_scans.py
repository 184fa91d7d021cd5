#!/usr/bin/env python3
"""Phone LiDAR scan folders for Tests/CaptureTests/ScanSourceTests.swift, written by numpy + Pillow
(and ffmpeg for Stray Scanner's rgb.mp4), not by depthlens, each following its layout's public
description (docs/SCANS.md names the sources):

  make_scans.py BAG OUTDIR

From the real RealSense D435 frames of BAG (its color image, its two depth images, read with
`rosbags`), three frames with known camera poses (world from the OpenCV optical frame, made here
with numpy's own Rodrigues formula) are written as

  OUTDIR/stray/        rgb.mp4 (HEVC), depth/NNNNNN.png (uint16 mm), confidence/NNNNNN.png (0,1,2),
                       camera_matrix.csv, odometry.csv (quaternion = camera-to-world, OpenCV axes)
  OUTDIR/polycam/      keyframes/{images,depth,confidence,cameras}; cameras/T.json with t_00..t_23
                       (camera-to-world, ARKit camera axes)
  OUTDIR/arkitscenes/  lowres_wide/, lowres_depth/, confidence/ (VIDEO_T.png), lowres_wide_intrinsics/
                       VIDEO_T.pincam, lowres_wide.traj (axis-angle + translation, world-to-camera)
  OUTDIR/scanner3d/    frame_NNNNN.jpg, frame_NNNNN.json (cameraPoseARFrame row-major camera-to-world,
                       ARKit axes; intrinsics row-major K), depth_NNNNN.png, conf_NNNNN.png
  OUTDIR/stray_nopose/     Stray Scanner without odometry.csv
  OUTDIR/stray_truncated/  Stray Scanner whose odometry.csv line 3 is cut after 'x, y'
  OUTDIR/expected.json     per layout and frame: the pose (R rows, t), color intrinsics and size,
                           timestamp; the depth size
  OUTDIR/expected/depth_I.f32   frame I's depth in meters with confidence < 1 set to 0 (float32 LE)
  OUTDIR/expected/color_I.rgb   frame I's color as written (rgb8, color size); color_small_I.rgb the
                                ARKitScenes one (depth size)
  OUTDIR/fused_reference.txt    the ARKitScenes frames fused (min confidence 1, voxel 0.05 m): per
                                occupied voxel 'kx ky kz x y z r g b', mean position and rounded
                                mean color, in ascending (kx, ky, kz)
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
from PIL import Image

DEPTH_W, DEPTH_H = 160, 120          # depth (and ARKitScenes' lowres_wide) size: 1/4 of the bag's
COLOR_W, COLOR_H = 640, 480
FX, FY, CX, CY = 611.0, 609.5, 318.2, 241.7   # the color camera (for COLOR_W x COLOR_H)
VOXEL = 0.05


def read_bag(path):
    from rosbags.rosbag1 import Reader
    from rosbags.typesys import Stores, get_typestore
    ts = get_typestore(Stores.ROS1_NOETIC)
    depths, color = [], None
    with Reader(path) as reader:
        for c, t, raw in reader.messages():
            if c.topic.endswith("/Depth_0/image/data"):
                m = ts.deserialize_ros1(raw, c.msgtype)
                dt = ">u2" if m.is_bigendian else "<u2"
                rows = np.frombuffer(bytes(m.data), dtype=np.uint8).reshape(m.height, m.step)
                depths.append(rows[:, :m.width * 2].copy().view(dt).reshape(m.height, m.width).astype(np.uint16))
            elif c.topic.endswith("/Color_0/image/data") and color is None:
                m = ts.deserialize_ros1(raw, c.msgtype)
                rows = np.frombuffer(bytes(m.data), dtype=np.uint8).reshape(m.height, m.step)
                color = rows[:, :m.width * 3].reshape(m.height, m.width, 3).copy()
    assert len(depths) >= 2 and color is not None, "the bag needs two depth frames and a color frame"
    return depths, color


def rodrigues(v):
    v = np.asarray(v, dtype=np.float64)
    theta = np.linalg.norm(v)
    if theta < 1e-15:
        return np.eye(3)
    k = v / theta
    kx = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + np.sin(theta) * kx + (1 - np.cos(theta)) * kx @ kx


def rotvec(r):
    """Inverse of rodrigues (angles below pi)."""
    theta = np.arccos(np.clip((np.trace(r) - 1) / 2, -1, 1))
    if theta < 1e-12:
        return np.zeros(3)
    w = np.array([r[2, 1] - r[1, 2], r[0, 2] - r[2, 0], r[1, 0] - r[0, 1]]) / (2 * np.sin(theta))
    return w * theta


def quaternion(r):
    """(x, y, z, w) of a rotation matrix, w >= 0 (via the rotation vector)."""
    v = rotvec(r)
    theta = np.linalg.norm(v)
    if theta < 1e-15:
        return np.array([0.0, 0.0, 0.0, 1.0])
    axis = v / theta
    return np.concatenate([axis * np.sin(theta / 2), [np.cos(theta / 2)]])


FLIP = np.diag([1.0, -1.0, -1.0])   # OpenCV optical axes <-> ARKit camera axes


def poses():
    """World from optical camera (R, t) of the three frames."""
    return [(rodrigues([0.05, 0.35, -0.02]), np.array([0.10, -0.20, 0.30])),
            (rodrigues([-0.30, 1.10, 0.15]), np.array([0.80, 0.05, -0.40])),
            (rodrigues([0.90, -2.60, 0.40]), np.array([-0.50, 0.25, 1.20]))]


def confidence_map():
    """ARKit-like confidence in regions, not a pixel pattern: high (2) over most of the frame,
    medium (1) in a disc, low (0) in a smaller disc and along the bottom edge. (The map was
    (7x + 3y) mod 3, which is x mod 3: every third depth column dropped at the default
    min-confidence 1, shown by the viewer as regular vertical black stripes.)"""
    y, x = np.mgrid[0:DEPTH_H, 0:DEPTH_W]
    c = np.full((DEPTH_H, DEPTH_W), 2, dtype=np.uint8)
    c[(x - 110) ** 2 + (y - 40) ** 2 < 28 ** 2] = 1
    c[(x - 40) ** 2 + (y - 85) ** 2 < 18 ** 2] = 0
    c[y >= DEPTH_H - 4] = 0
    return c


def png16(a, path):
    Image.fromarray(a.astype(np.uint16)).save(path)   # Pillow writes I;16 as a 16-bit gray PNG


def png8(a, path):
    Image.fromarray(a.astype(np.uint8), mode="L" if a.ndim == 2 else "RGB").save(path)


def frames(depths, color):
    """(color rgb8 COLOR_HxCOLOR_W, small color rgb8 DEPTH_HxDEPTH_W, depth uint16 mm DEPTH_HxDEPTH_W) x 3."""
    out = []
    for i in range(3):
        c = np.roll(color, 16 * i, axis=1)
        d = depths[i % 2][::4, ::4].copy()
        small = c[::4, ::4].copy()
        out.append((c, small, d))
    return out


def write_stray(root, fr, ps, odometry=True, truncate=False):
    os.makedirs(root + "/depth"); os.makedirs(root + "/confidence")
    conf = confidence_map()
    with tempfile.TemporaryDirectory() as tmp:
        for i, (c, _, d) in enumerate(fr):
            Image.fromarray(c).save("%s/%06d.png" % (tmp, i))
            png16(d, "%s/depth/%06d.png" % (root, i))
            png8(conf, "%s/confidence/%06d.png" % (root, i))
        subprocess.run(["ffmpeg", "-v", "error", "-y", "-framerate", "30", "-i", tmp + "/%06d.png", "-c:v", "libx265",
                        "-x265-params", "lossless=1:log-level=error", "-pix_fmt", "yuv444p", "-tag:v", "hvc1",
                        root + "/rgb.mp4"], check=True)
    with open(root + "/camera_matrix.csv", "w") as f:
        f.write("%.17g,0.0,%.17g\n0.0,%.17g,%.17g\n0.0,0.0,1.0\n" % (FX, CX, FY, CY))
    if not odometry:
        return
    lines = ["timestamp, frame, x, y, z, qx, qy, qz, qw"]
    for i, (r, t) in enumerate(ps):
        q = quaternion(r)   # Stray writes q_WA * q_AC: the optical frame's rotation
        lines.append("%.6f, %06d, %.17g, %.17g, %.17g, %.17g, %.17g, %.17g, %.17g" % (1000.0 + i / 30, i, t[0], t[1], t[2], q[0], q[1], q[2], q[3]))
    if truncate:
        lines[2] = lines[2][:lines[2].index(",", lines[2].index(",", lines[2].index(",") + 1) + 1) + 6]
    with open(root + "/odometry.csv", "w") as f:
        f.write("\n".join(lines) + "\n")


def write_polycam(root, fr, ps):
    k = root + "/keyframes"
    for sub in ("images", "depth", "confidence", "cameras"):
        os.makedirs(k + "/" + sub)
    conf = confidence_map()
    names = []
    for i, ((c, _, d), (r, t)) in enumerate(zip(fr, ps)):
        name = str(1690000000000000 + i * 100000)
        names.append(name)
        Image.fromarray(c).save("%s/images/%s.jpg" % (k, name), quality=95)
        png16(d, "%s/depth/%s.png" % (k, name))
        png8(conf, "%s/confidence/%s.png" % (k, name))
        m = np.hstack([r @ FLIP, t[:, None]])   # ARKit camera axes, camera-to-world
        cam = {"blur_score": 120.5 + i, "cx": CX, "cy": CY, "fx": FX, "fy": FY, "height": COLOR_H, "width": COLOR_W,
               "timestamp": int(name)}
        for a in range(3):
            for b in range(4):
                cam["t_%d%d" % (a, b)] = float(m[a, b])
        with open("%s/cameras/%s.json" % (k, name), "w") as f:
            json.dump(cam, f, indent=2)
    return names


def write_arkitscenes(root, fr, ps):
    for sub in ("lowres_wide", "lowres_depth", "confidence", "lowres_wide_intrinsics"):
        os.makedirs(root + "/" + sub)
    conf = confidence_map()
    traj = []
    names = []
    s = DEPTH_W / COLOR_W
    for i, ((_, small, d), (r, t)) in enumerate(zip(fr, ps)):
        ts = "%.3f" % (6997.771 + 0.1 * i)
        name = "41069025_" + ts
        names.append(name)
        png8(small, "%s/lowres_wide/%s.png" % (root, name))
        png16(d, "%s/lowres_depth/%s.png" % (root, name))
        png8(conf, "%s/confidence/%s.png" % (root, name))
        with open("%s/lowres_wide_intrinsics/%s.pincam" % (root, name), "w") as f:
            f.write("%d %d %.17g %.17g %.17g %.17g\n" % (DEPTH_W, DEPTH_H, FX * s, FY * s, (CX + 0.5) * s - 0.5, (CY + 0.5) * s - 0.5))
        rw, tw = r.T, -r.T @ t          # world-to-camera
        v = rotvec(rw)
        traj.append("%s %.17g %.17g %.17g %.17g %.17g %.17g" % (ts, v[0], v[1], v[2], tw[0], tw[1], tw[2]))
    with open(root + "/lowres_wide.traj", "w") as f:
        f.write("\n".join(traj) + "\n")
    return names


def write_scanner3d(root, fr, ps):
    os.makedirs(root)
    conf = confidence_map()
    for i, ((c, _, d), (r, t)) in enumerate(zip(fr, ps)):
        Image.fromarray(c).save("%s/frame_%05d.jpg" % (root, i), quality=95)
        png16(d, "%s/depth_%05d.png" % (root, i))
        png8(conf, "%s/conf_%05d.png" % (root, i))
        m = np.eye(4)
        m[:3, :3] = r @ FLIP
        m[:3, 3] = t
        doc = {"cameraPoseARFrame": [float(v) for v in m.reshape(-1)],
               "intrinsics": [FX, 0.0, CX, 0.0, FY, CY, 0.0, 0.0, 1.0],
               "time": 52431.25 + i / 30, "frame_index": i, "exposureDuration": 0.01,
               "averageVelocity": 0.1, "averageAngularVelocity": 0.05,
               "projectionMatrix": [1.0] + [0.0] * 15}
        with open("%s/frame_%05d.json" % (root, i), "w") as f:
            json.dump(doc, f)


def depth_meters(d, conf, min_conf):
    m = d.astype(np.float32) / np.float32(1000)
    m[conf < min_conf] = 0
    return m


def fuse(fr, ps, fx, fy, cx, cy, min_conf, voxel):
    conf = confidence_map()
    acc = {}
    for (_, small, d), (r, t) in zip(fr, ps):
        z = depth_meters(d, conf, min_conf)
        v, u = np.nonzero(z > 0)
        zz = z[v, u]
        # camera coordinates in float32, as depthlens unprojects
        x = (u.astype(np.float32) - np.float32(cx)) * zz / np.float32(fx)
        y = (v.astype(np.float32) - np.float32(cy)) * zz / np.float32(fy)
        p = np.stack([x, y, zz], 1).astype(np.float64)
        w = p @ r.T + t
        keys = np.floor(w / voxel).astype(np.int64)
        cols = small[v, u].astype(np.int64)
        for k, pw, col in zip(map(tuple, keys), w, cols):
            a = acc.setdefault(k, [np.zeros(3), np.zeros(3, dtype=np.int64), 0])
            a[0] += pw; a[1] += col; a[2] += 1
    lines = []
    for k in sorted(acc):
        s, c, n = acc[k]
        m = s / n
        col = (c + n // 2) // n
        lines.append("%d %d %d %.9f %.9f %.9f %d %d %d" % (k + tuple(m) + tuple(col)))
    return lines


def main(bag, out):
    depths, color = read_bag(bag)
    fr = frames(depths, color)
    ps = poses()
    os.makedirs(out + "/expected", exist_ok=True)
    write_stray(out + "/stray", fr, ps)
    write_stray(out + "/stray_nopose", fr, ps, odometry=False)
    write_stray(out + "/stray_truncated", fr, ps, truncate=True)
    write_polycam(out + "/polycam", fr, ps)
    write_arkitscenes(out + "/arkitscenes", fr, ps)
    write_scanner3d(out + "/scanner3d", fr, ps)
    conf = confidence_map()
    for i, (c, small, d) in enumerate(fr):
        depth_meters(d, conf, 1).astype("<f4").tofile("%s/expected/depth_%d.f32" % (out, i))
        c.tofile("%s/expected/color_%d.rgb" % (out, i))
        small.tofile("%s/expected/color_small_%d.rgb" % (out, i))
    s = DEPTH_W / COLOR_W
    small_k = [FX * s, FY * s, (CX + 0.5) * s - 0.5, (CY + 0.5) * s - 0.5]
    doc = {"depth_size": [DEPTH_W, DEPTH_H], "color_size": [COLOR_W, COLOR_H], "color_intrinsics": [FX, FY, CX, CY],
           "small_intrinsics": small_k, "voxel": VOXEL,
           "poses": [{"R": r.tolist(), "t": t.tolist()} for r, t in ps],
           "timestamps": {"stray": [1000.0 + i / 30 for i in range(3)],
                          "arkitscenes": [float("%.3f" % (6997.771 + 0.1 * i)) for i in range(3)],
                          "scanner3d": [52431.25 + i / 30 for i in range(3)]}}
    with open(out + "/expected.json", "w") as f:
        json.dump(doc, f, indent=1)
    with open(out + "/fused_reference.txt", "w") as f:
        f.write("\n".join(fuse(fr, ps, *small_k, 1, VOXEL)) + "\n")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    main(sys.argv[1], sys.argv[2])
