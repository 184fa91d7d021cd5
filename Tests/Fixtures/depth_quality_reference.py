#!/usr/bin/env python3
"""Independent reference for depthlens' depth-quality metrics: the RealSense Depth Quality Tool's
formulas (librealsense tools/depth-quality: analyze_depth_image and plane_from_points in
depth-metrics.h, the metric callback in rs-depth-quality.cpp) written again in numpy. Used by
Tests/DepthKitTests/DepthQualityTests.swift and Tests/depthlensTests/QualityCommandTests.swift.

  depth_quality_reference.py raw W H FX FY CX CY X Y RW RH BASELINE_M GT_MM WINDOW FILE...
      Each FILE holds one W*H little-endian float32 depth map in meters. BASELINE_M and GT_MM
      are 0 when absent.
  depth_quality_reference.py bag BAG X Y RW RH GT_MM WINDOW
      The depth frames of a RealSense bag, read with `rosbags` (not depthlens): raw mono16 times
      the recorded Depth Units, the depth camera_info's K, the Stereo Baseline option (mm).
      RW = 0 takes the tool's centered 40 % region.

Prints JSON: {"frames": [{fill_rate, distance_mm, angle_deg, plane_rms_mm, plane_rms_percent,
subpixel_rms_px, z_accuracy_percent, temporal_noise_percent, valid_pixels, normal}, ...],
"baseline_m", "intrinsics", "roi"}.
"""
import json
import sys

import numpy as np


def deproject(depth, fx, fy, cx, cy, x0, y0, w, h):
    """The valid ROI pixels as float32 points, row-major, as rs2_deproject_pixel_to_point
    (no distortion): ((u - ppx) / fx) * z, all in float32."""
    roi = depth[y0:y0 + h, x0:x0 + w].astype(np.float32)
    v, u = np.mgrid[y0:y0 + h, x0:x0 + w]
    valid = np.isfinite(roi) & (roi > 0)
    z = roi[valid]
    px = ((u[valid].astype(np.float32) - np.float32(cx)) / np.float32(fx)) * z
    py = ((v[valid].astype(np.float32) - np.float32(cy)) / np.float32(fy)) * z
    return np.stack([px, py, z], axis=1).astype(np.float32)


def plane_from_points(pts):
    """plane_from_points: centroid, centered covariance, the largest 2x2 determinant picks the axis."""
    c = (pts.astype(np.float64).sum(axis=0) / len(pts)).astype(np.float32)
    t = (pts - c).astype(np.float32)
    prod = lambda a, b: float((t[:, a] * t[:, b]).astype(np.float64).sum())
    xx, xy, xz, yy, yz, zz = prod(0, 0), prod(0, 1), prod(0, 2), prod(1, 1), prod(1, 2), prod(2, 2)
    det_x, det_y, det_z = yy * zz - yz * yz, xx * zz - xz * xz, xx * yy - xy * xy
    det_max = max(det_x, det_y, det_z)
    if det_max <= 0:
        return None
    if det_max == det_x:
        d = np.array([1.0, (xz * yz - xy * zz) / det_x, (xy * yz - xz * yy) / det_x])
    elif det_max == det_y:
        d = np.array([(yz * xz - xy * zz) / det_y, 1.0, (xy * xz - yz * xx) / det_y])
    else:
        d = np.array([(yz * xy - xz * yy) / det_z, (xz * xy - yz * xx) / det_z, 1.0])
    n = d / np.linalg.norm(d)
    return n, -float(np.dot(n, c.astype(np.float64)))


def frame_metrics(depth, K, roi, baseline_m, gt_mm):
    fx, fy, cx, cy, width, height = K
    x0, y0, w, h = roi
    pts = deproject(depth, fx, fy, cx, cy, x0, y0, w, h)
    out = {"valid_pixels": int(len(pts)), "fill_rate": len(pts) / float(w * h)}
    for k in ("distance_mm", "angle_deg", "plane_rms_mm", "plane_rms_percent", "subpixel_rms_px", "z_accuracy_percent"):
        out[k] = None
    if len(pts) < 3:
        return out
    plane = plane_from_points(pts)
    if plane is None:
        return out
    n, d = plane
    out["normal"] = n.tolist()
    distance_mm = -d * 1000
    out["distance_mm"] = distance_mm
    out["angle_deg"] = float(np.degrees(np.arccos(min(1.0, abs(n[2])))))
    # Trim: sort by z (stable), drop n // 200 at each end.
    order = np.argsort(pts[:, 2], kind="stable")
    outliers = len(pts) // 200
    kept = pts[order[outliers:len(pts) - outliers]].astype(np.float64)
    dist = kept @ n + d
    out["plane_rms_mm"] = float(np.sqrt(np.mean((dist * 1000) ** 2)))
    out["plane_rms_percent"] = 100 * out["plane_rms_mm"] / distance_mm
    if baseline_m > 0:
        bf = baseline_m * fx
        proj = kept - dist[:, None] * n[None, :]
        disp = bf / np.linalg.norm(kept, axis=1) - bf / np.linalg.norm(proj, axis=1)
        out["subpixel_rms_px"] = float(np.sqrt(np.mean(disp ** 2)))
    if gt_mm > 0:
        # The plane's depth on the ray through the image center (width/2, height/2).
        ray = np.array([(width / 2 - cx) / fx, (height / 2 - cy) / fy, 1.0])
        offset = -d / float(np.dot(n, ray)) * 1000 - gt_mm
        errors = np.sort(offset + dist * 1000)
        out["z_accuracy_percent"] = float(100 * errors[len(errors) // 2] / gt_mm)
    return out


def temporal_noise(window, roi):
    """Median over ROI pixels valid in every frame of std/mean (population std), x100."""
    if len(window) < 2:
        return None
    x0, y0, w, h = roi
    stack = np.stack([f[y0:y0 + h, x0:x0 + w].astype(np.float64) for f in window])
    valid = np.all(np.isfinite(stack) & (stack > 0), axis=0)
    if not valid.any():
        return None
    s = stack[:, valid]
    ratios = np.sort(s.std(axis=0) / s.mean(axis=0))
    return float(100 * ratios[len(ratios) // 2])


def run(frames, K, roi, baseline_m, gt_mm, window):
    results, history = [], []
    for depth in frames:
        m = frame_metrics(depth, K, roi, baseline_m, gt_mm)
        history = (history + [depth])[-window:]
        m["temporal_noise_percent"] = temporal_noise(history, roi)
        results.append(m)
    return {"frames": results, "baseline_m": baseline_m, "intrinsics": list(K), "roi": list(roi)}


def centered(p, w, h):
    f = np.float32
    x0, x1 = int(f(w) * (f(0.5) - f(0.5) * f(p))), int(f(w) * (f(0.5) + f(0.5) * f(p)))
    y0, y1 = int(f(h) * (f(0.5) - f(0.5) * f(p))), int(f(h) * (f(0.5) + f(0.5) * f(p)))
    return (x0, y0, x1 - x0, y1 - y0)


def main(argv):
    if argv[0] == "raw":
        w, h = int(argv[1]), int(argv[2])
        fx, fy, cx, cy = (float(v) for v in argv[3:7])
        roi = tuple(int(v) for v in argv[7:11])
        baseline_m, gt_mm, window = float(argv[11]), float(argv[12]), int(argv[13])
        frames = [np.fromfile(p, dtype="<f4").reshape(h, w) for p in argv[14:]]
        doc = run(frames, (fx, fy, cx, cy, w, h), roi, baseline_m, gt_mm, window)
    elif argv[0] == "bag":
        from rosbags.rosbag1 import Reader
        from rosbags.typesys import Stores, get_typestore
        ts = get_typestore(Stores.ROS1_NOETIC)
        images, K, units, baseline_mm = [], None, 0.001, 0.0
        with Reader(argv[1]) as reader:
            for c, t, raw in reader.messages():
                if c.topic.endswith("/Depth_0/image/data"):
                    m = ts.deserialize_ros1(raw, c.msgtype)
                    dt = ">u2" if m.is_bigendian else "<u2"
                    rows = np.frombuffer(bytes(m.data), dtype=np.uint8).reshape(m.height, m.step)
                    images.append(rows[:, :m.width * 2].copy().view(dt).reshape(m.height, m.width))
                elif c.topic.endswith("/Depth_0/info/camera_info"):
                    m = ts.deserialize_ros1(raw, c.msgtype)
                    K = (float(m.K[0]), float(m.K[4]), float(m.K[2]), float(m.K[5]), int(m.width), int(m.height))
                elif c.topic.endswith("/option/Depth Units/value") and "/sensor_0/" in c.topic:
                    units = float(np.float32(ts.deserialize_ros1(raw, c.msgtype).data))
                elif c.topic.endswith("/option/Stereo Baseline/value"):
                    baseline_mm = float(np.float32(ts.deserialize_ros1(raw, c.msgtype).data))
        # raw * units in float32, as librealsense's get_distance.
        frames = [img.astype(np.float32) * np.float32(units) for img in images]
        w, h = K[4], K[5]
        roi = tuple(int(v) for v in argv[2:6])
        if roi[2] == 0:
            roi = centered(0.4, w, h)
        K = (float(np.float32(K[0])), float(np.float32(K[1])), float(np.float32(K[2])), float(np.float32(K[3])), w, h)
        doc = run(frames, K, roi, float(np.float32(baseline_mm)) / 1000, float(argv[6]), int(argv[7]))
    else:
        raise SystemExit("usage: see the docstring")
    print(json.dumps(doc))


if __name__ == "__main__":
    main(sys.argv[1:])
