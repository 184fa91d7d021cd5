#!/usr/bin/env python3
"""Independent reference for depthlens' measurements (DepthKit/Measure, `depthlens measure`),
written in numpy. Used by Tests/DepthKitTests/DepthMeasureTests.swift and
Tests/depthlensTests/MeasureCommandTests.swift.

  measure_reference.py render SCENE.json OUT.f32
      Ray-casts a synthetic scene into a W*H little-endian float32 depth map (meters, 0 = no
      depth): a pinhole camera at the origin, a floor plane (normal `up`, facing the camera, the
      camera `hc` m above it; tilted as the normal says), and on it a box (`size` L, W, H) or in
      it a cavity (`kind` "cavity": a bin L x W, H deep), centered where the pixel `center_px` sees the floor,
      turned by `yaw_deg`; Gaussian noise of `sigma` m on z (numpy's default_rng(seed)).
      Prints JSON: the true floor plane, and two test polygons with their true areas: `floor_patch`
      (a rectangle on the floor at `patch_px`) and, for a box, `top_patch` (the middle of its top).
  measure_reference.py measure DEPTH.f32 PARAMS.json
      Area and volume by depthlens' definitions (docs/QUALITY.md, "Measuring"), in numpy: the
      pixels inside a polygon (even-odd rule on pixel centers), the least-squares plane by SVD,
      the polygon's corners along their rays onto it, the 3D polygon's area; the floor through a
      floor polygon; the volume over a region, each pixel's height times its footprint (the
      corners of its patch: the mean of the four pixels around a corner when they are joined,
      else the corner's ray on the level plane through the pixel; projected onto the floor).
"""
import json
import sys

import numpy as np


def unit(v):
    v = np.asarray(v, dtype=np.float64)
    return v / np.linalg.norm(v)


def floor_frame(up):
    n = unit(up)
    helper = np.array([1.0, 0, 0]) if abs(n[0]) < 0.9 else np.array([0, 1.0, 0])
    e1 = unit(np.cross(helper, n))
    e2 = np.cross(n, e1)
    return n, e1, e2


def rays(s):
    v, u = np.mgrid[0:s["height"], 0:s["width"]].astype(np.float64)
    return np.stack([(u - s["cx"]) / s["fx"], (v - s["cy"]) / s["fy"], np.ones_like(u)], axis=-1)


def slab(o, d, lo, hi):
    """Entry and exit t of rays o + t d (local box coordinates) through the box [lo, hi]."""
    with np.errstate(divide="ignore", invalid="ignore"):
        t1 = (lo - o) / d
        t2 = (hi - o) / d
    t1 = np.where(d == 0, np.where((o >= lo) & (o <= hi), -np.inf, np.inf), t1)
    t2 = np.where(d == 0, np.where((o >= lo) & (o <= hi), np.inf, -np.inf), t2)
    return np.max(np.minimum(t1, t2), axis=-1), np.min(np.maximum(t1, t2), axis=-1)


def render(s):
    n, e1, e2 = floor_frame(s["up"])
    hc = s["hc"]
    r = rays(s)
    # Ray in floor coordinates: the camera at (0, 0, hc); direction (e1.r, e2.r, n.r).
    d = np.stack([r @ e1, r @ e2, r @ n], axis=-1)
    cam = np.array([0.0, 0.0, hc])
    with np.errstate(divide="ignore"):
        t_floor = np.where(d[..., 2] < 0, hc / -d[..., 2], np.inf)
    c = center_floor(s, n, e1, e2)
    yaw = np.radians(s["yaw_deg"])
    rot = np.array([[np.cos(yaw), np.sin(yaw), 0], [-np.sin(yaw), np.cos(yaw), 0], [0, 0, 1]])
    o_local = rot @ (cam - np.array([c[0], c[1], 0.0]))
    d_local = d @ rot.T
    L, W, H = s["size"]
    if s["kind"] == "box":
        t0, t1 = slab(o_local, d_local, np.array([-L / 2, -W / 2, 0]), np.array([L / 2, W / 2, H]))
        hit = (t0 <= t1) & (t0 > 0)
        t = np.where(hit, np.minimum(t0, t_floor), t_floor)
    else:
        q = o_local + t_floor[..., None] * d_local
        inside = (np.abs(q[..., 0]) <= L / 2) & (np.abs(q[..., 1]) <= W / 2)
        _, t1 = slab(o_local, d_local, np.array([-L / 2, -W / 2, -H]), np.array([L / 2, W / 2, 0.0]))
        t = np.where(inside & np.isfinite(t_floor), t1, t_floor)
    z = np.where(np.isfinite(t), t, 0.0)  # r.z = 1, so t is z
    rng = np.random.default_rng(s["seed"])
    z = np.where(z > 0, z + s["sigma"] * rng.standard_normal(z.shape), 0.0)
    return z.astype(np.float32), (n, e1, e2, c)


def center_floor(s, n, e1, e2):
    """Floor coordinates (a, b) of the floor point pixel `center_px` sees."""
    return floor_point(s, s["center_px"], n, e1, e2)


def floor_point(s, px, n, e1, e2):
    r = np.array([(px[0] - s["cx"]) / s["fx"], (px[1] - s["cy"]) / s["fy"], 1.0])
    p = s["hc"] / -(r @ n) * r
    o = -s["hc"] * n
    return np.array([(p - o) @ e1, (p - o) @ e2])


def project(s, p):
    return [s["fx"] * p[0] / p[2] + s["cx"], s["fy"] * p[1] / p[2] + s["cy"]]


def rectangle(s, frame, center_ab, half, yaw_deg, height):
    """A floor-frame rectangle at `height` above the floor, projected: its pixel polygon and area."""
    n, e1, e2 = frame
    o = -s["hc"] * n
    y = np.radians(yaw_deg)
    a, b = np.array([np.cos(y), np.sin(y)]), np.array([-np.sin(y), np.cos(y)])
    pts = []
    for sa, sb in [(-1, -1), (1, -1), (1, 1), (-1, 1)]:
        ab = center_ab + sa * half[0] * a + sb * half[1] * b
        pts.append(project(s, o + ab[0] * e1 + ab[1] * e2 + height * n))
    return {"polygon": pts, "area": 4 * half[0] * half[1]}


def cmd_render(scene_path, out):
    s = json.load(open(scene_path))
    z, (n, e1, e2, c) = render(s)
    z.tofile(out)
    doc = {"normal": n.tolist(), "d": s["hc"]}
    frame = (n, e1, e2)
    if "patch_px" in s:
        doc["floor_patch"] = rectangle(s, frame, floor_point(s, s["patch_px"], n, e1, e2), s["patch_half"], 10.0, 0.0)
    if s["kind"] == "box":
        L, W, H = s["size"]
        doc["top_patch"] = rectangle(s, frame, c, [0.3 * L, 0.3 * W], s["yaw_deg"], H)
    print(json.dumps(doc))


# ---- measuring ---------------------------------------------------------------------------------

def polygon_mask(poly, w, h):
    """Pixel centers inside by the even-odd rule: a crossing counts when it lies strictly right."""
    v, u = np.mgrid[0:h, 0:w].astype(np.float64)
    inside = np.zeros((h, w), dtype=bool)
    for i in range(len(poly)):
        (ax, ay), (bx, by) = poly[i], poly[(i + 1) % len(poly)]
        crosses = (ay > v) != (by > v)
        with np.errstate(divide="ignore", invalid="ignore"):
            x = ax + (v - ay) / (by - ay) * (bx - ax)
        inside ^= crosses & (x > u)
    return inside


def deproject(depth, K):
    fx, fy, cx, cy = K
    h, w = depth.shape
    v, u = np.mgrid[0:h, 0:w].astype(np.float32)
    z = depth.astype(np.float32)
    return np.stack([(u - np.float32(cx)) / np.float32(fx) * z, (v - np.float32(cy)) / np.float32(fy) * z, z], axis=-1)


def lsq_plane(pts):
    """Least-squares plane by SVD (the smallest singular vector of the centered points), facing the camera."""
    p = pts.astype(np.float64)
    c = p.mean(axis=0)
    n = np.linalg.svd(p - c, full_matrices=False)[2][2]
    d = -n @ c
    if d < 0:
        n, d = -n, -d
    return n, d


def z_at(z, v, u):
    """Depth at (v, u), 0 outside the image."""
    h, w = z.shape
    inside = (u >= 0) & (u < w) & (v >= 0) & (v < h)
    return np.where(inside, z[np.clip(v, 0, h - 1), np.clip(u, 0, w - 1)], 0.0)


def joined(z, vs, us, du, dv, c):
    """Pixel (v, u) and its neighbour (v + dv, u + du) on one surface: a depth step within c of
    the nearer, or a step that repeats the step before it on either side within that."""
    a = z_at(z, vs, us)
    b = z_at(z, vs + dv, us + du)
    before = z_at(z, vs - dv, us - du)
    after = z_at(z, vs + 2 * dv, us + 2 * du)
    tol = c * np.minimum(a, b)
    ok = np.abs(a - b) <= tol
    ok |= (before > 0) & (np.abs(b - 2 * a + before) <= tol)
    ok |= (after > 0) & (np.abs(a - 2 * b + after) <= tol)
    return ok & (a > 0) & (b > 0)


def footprints(depth, P, K, n, mask, continuity):
    """Each masked pixel's patch corners (depthlens' rule) projected onto the floor (normal n)."""
    fx, fy, cx, cy = K
    h, w = depth.shape
    z = depth.astype(np.float64)
    P = P.astype(np.float64)
    vs, us = np.nonzero(mask)
    zc = z[vs, us]
    pc = P[vs, us]
    corners = []
    for du, dv in [(-1, -1), (1, -1), (1, 1), (-1, 1)]:
        u2, v2 = us + du, vs + dv
        ok = (u2 >= 0) & (u2 < w) & (v2 >= 0) & (v2 < h)
        u2c, v2c = np.clip(u2, 0, w - 1), np.clip(v2, 0, h - 1)
        idx = [(vs, u2c), (v2c, us), (v2c, u2c)]
        for (yy, xx), (ddu, ddv) in zip(idx, [(du, 0), (0, dv), (du, dv)]):
            ok &= joined(z, vs, us, ddu, ddv, continuity)
        mean = (pc + sum(P[yy, xx] for (yy, xx) in idx)) / 4
        r = np.stack([(us + du / 2 - cx) / fx, (vs + dv / 2 - cy) / fy, np.ones_like(zc)], axis=-1)
        denom = r @ n
        t = (pc @ n) / denom
        level = t[:, None] * r
        fallback = np.where(((np.abs(denom) > 1e-12) & (t > 0))[:, None], level, zc[:, None] * r)
        corners.append(np.where(ok[:, None], mean, fallback))
    s = np.cross(corners[2] - corners[0], corners[3] - corners[1]) / 2
    return -(s @ n), vs, us


def cmd_measure(depth_path, params_path):
    q = json.load(open(params_path))
    w, h = q["width"], q["height"]
    K = (q["fx"], q["fy"], q["cx"], q["cy"])
    depth = np.fromfile(depth_path, dtype="<f4").reshape(h, w)
    depth = np.where(np.isfinite(depth) & (depth > 0), depth, 0).astype(np.float32)
    P = deproject(depth, K)
    valid = depth > 0
    out = {}
    if "area" in q:
        m = polygon_mask(q["area"], w, h)
        pts = P[m & valid]
        n, d = lsq_plane(pts)
        corners = []
        for x, y in q["area"]:
            r = np.array([(x - K[2]) / K[0], (y - K[3]) / K[1], 1.0])
            corners.append(-d / (n @ r) * r)
        s = sum(np.cross(corners[i], corners[(i + 1) % len(corners)]) for i in range(len(corners)))
        out["area_m2"] = abs(s @ n) / 2
        out["area_points"] = int(len(pts))
        out["area_pixels"] = int(m.sum())
    if "floor" in q:
        m = polygon_mask(q["floor"], w, h)
        n, d = lsq_plane(P[m & valid])
        out["floor"] = {"normal": n.tolist(), "d": float(d)}
        if "region" in q:
            tol = q["tolerance"]
            region = polygon_mask(q["region"], w, h) & valid
            height = P.astype(np.float64) @ n + d
            above = region & (height > tol)
            below = region & (height < -tol)
            fa, vs, us = footprints(depth, P, K, n, above, q["continuity"])
            out["volume_m3"] = float(np.sum(height[vs, us] * fa))
            fb, vs, us = footprints(depth, P, K, n, below, q["continuity"])
            out["volume_below_m3"] = float(np.sum(-height[vs, us] * fb))
            out["above_pixels"] = int(above.sum())
            out["below_pixels"] = int(below.sum())
    print(json.dumps(out))


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "render":
        cmd_render(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 4 and sys.argv[1] == "measure":
        cmd_measure(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
