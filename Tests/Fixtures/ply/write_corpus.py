"""Writes PLY files with independent writers (plyfile, trimesh) for PLYReaderTests, and a manifest
of what each file holds, computed here from the values written (not from depthlens):

    python write_corpus.py OUTDIR        (run by scripts/ply-corpus in its venv)

OUTDIR/manifest.json lists, per file: the writer, the format, the elements (name, count) in
header order, the vertex property names, and the expected decoded points: finite positions as
float32, colors as bytes (uchar as is; float clamped to 0..1, x255, rounded half up; ushort
x255/65535 rounded; 3DGS SH DC 0.5 + C0*f_dc clamped, x255), alpha bytes (3DGS opacity:
sigmoid, x255), normals as float32, and how many vertices have a non-finite coordinate."""
import json
import logging
import math
import os
import sys
import warnings

import numpy as np
import trimesh
from plyfile import PlyData, PlyElement

warnings.filterwarnings("ignore")               # plyfile reading back an empty ASCII list
logging.getLogger("trimesh").setLevel(logging.ERROR)  # its fallback without scipy
OUT = sys.argv[1]
os.makedirs(OUT, exist_ok=True)
rng = np.random.default_rng(19)
C0 = 0.28209479177387814  # the SH degree-0 constant (3D Gaussian Splatting's SH2RGB)
manifest = []


def round_half_up(x):
    f = math.floor(x)
    return int(f + (1 if x - f >= 0.5 else 0))


def unit_byte(v):
    v = float(v)
    if not v > 0:  # NaN and negatives
        return 0
    return round_half_up(min(v, 1.0) * 255)


def color_byte(v, kind):
    """A color or alpha value of PLY type `kind` as the byte a viewer shows."""
    if kind == "u1":
        return int(v)
    if kind in ("f4", "f8"):
        return unit_byte(v)
    if kind == "u2":
        return round_half_up(float(min(max(int(v), 0), 65535)) * 255 / 65535)
    return min(max(int(v), 0), 255)


def f32(a):
    return [float(x) for x in np.asarray(a, dtype=np.float32)]


def record(name, writer, fmt, elements, vertex_props, pos, colors=None, alphas=None, normals=None,
           color_props=(), alpha_prop=None, normal_props=(), sh=False, logit=False):
    """Adds one file to the manifest; pos (n,3) float, colors (n,3) bytes, alphas (n,) bytes."""
    pos = np.asarray(pos, dtype=np.float32)
    finite = np.all(np.isfinite(pos), axis=1)
    keep = np.nonzero(finite)[0]
    manifest.append({
        "file": name, "writer": writer, "format": fmt,
        "elements": [{"name": e, "count": c} for e, c in elements],
        "vertexProperties": list(vertex_props),
        "positions": [f32(pos[i]) for i in keep],
        "colors": None if colors is None else [[int(c) for c in colors[i]] for i in keep],
        "alphas": None if alphas is None else [int(alphas[i]) for i in keep],
        "normals": None if normals is None else [f32(normals[i]) for i in keep],
        "colorProperties": list(color_props), "colorFromSH": sh,
        "alphaProperty": alpha_prop, "alphaIsLogit": logit,
        "normalProperties": list(normal_props),
        "nonFinite": int(len(pos) - len(keep)),
    })


def read_back_elements(path):
    """Element names and counts as plyfile itself reads the file back (header order)."""
    data = PlyData.read(path)
    return [(e.name, e.count) for e in data.elements], [p.name for p in data["vertex"].properties]


def faces(n_vertices, count):
    """Faces of 3 or 4 indices (an object array: plyfile writes variable-length lists)."""
    out = np.empty(count, dtype=object)
    for i in range(count):
        out[i] = rng.integers(0, n_vertices, 3 + i % 2).astype(np.int32)
    return out


def positions(n, nan_at=()):
    p = rng.uniform(-5, 5, (n, 3))
    for i in nan_at:
        p[i, i % 3] = [np.nan, np.inf, -np.inf][i % 3]
    return p


# 1, 2: a mesh with a face element before the vertices and an edge element after (list
# properties in both), float normals, uchar color with alpha; binary little-endian and ascii.
n = 150
pos = positions(n, nan_at=(7, 40, 41))
nrm = rng.normal(size=(n, 3))
nrm /= np.linalg.norm(nrm, axis=1, keepdims=True)
rgba = rng.integers(0, 256, (n, 4))
vertex = np.empty(n, dtype=[("x", "f4"), ("y", "f4"), ("z", "f4"), ("nx", "f4"), ("ny", "f4"), ("nz", "f4"),
                            ("red", "u1"), ("green", "u1"), ("blue", "u1"), ("alpha", "u1")])
for i, k in enumerate("xyz"):
    vertex[k] = pos[:, i]
    vertex["n" + k] = nrm[:, i]
for i, k in enumerate(["red", "green", "blue", "alpha"]):
    vertex[k] = rgba[:, i]
face = np.empty(40, dtype=[("vertex_indices", object), ("flags", "u1")])
face["vertex_indices"] = faces(n, 40)
face["flags"] = rng.integers(0, 256, 40)
edge = np.empty(25, dtype=[("vertex1", "i4"), ("vertex2", "i4"), ("weights", object)])
edge["vertex1"] = rng.integers(0, n, 25)
edge["vertex2"] = rng.integers(0, n, 25)
edge["weights"] = [rng.uniform(0, 1, i % 5).astype(np.float32) for i in range(25)]
for text, name in [(False, "plyfile-le-faces-first.ply"), (True, "plyfile-ascii-faces-first.ply")]:
    els = [PlyElement.describe(face, "face", len_types={"vertex_indices": "u1"}, val_types={"vertex_indices": "i4"}),
           PlyElement.describe(vertex, "vertex"),
           PlyElement.describe(edge, "edge", len_types={"weights": "u1"}, val_types={"weights": "f4"})]
    path = os.path.join(OUT, name)
    PlyData(els, text=text, byte_order="<", comments=["written by plyfile", "faces first"],
            obj_info=["depthlens test corpus"]).write(path)
    elements, props = read_back_elements(path)
    record(name, "plyfile", "ascii" if text else "binary_little_endian", elements, props, pos,
           colors=rgba[:, :3], alphas=rgba[:, 3], normals=nrm,
           color_props=["red", "green", "blue"], alpha_prop="alpha", normal_props=["nx", "ny", "nz"])

# 3: big-endian, double coordinates, float r g b a (some outside 0..1), extra integer properties
# of every type between them, a face element after.
n = 120
pos = positions(n, nan_at=(3,))
rgbaf = rng.uniform(-0.2, 1.2, (n, 4))
extra = [("label", "i2"), ("id", "u4"), ("c", "i1"), ("u", "u2"), ("k", "i4"), ("w", "f8")]
dtype = [("x", "f8"), ("y", "f8"), ("z", "f8"), ("r", "f4")] + extra[:3] + [("g", "f4"), ("b", "f4")] + extra[3:] + [("a", "f4")]
vertex = np.empty(n, dtype=dtype)
for i, k in enumerate("xyz"):
    vertex[k] = pos[:, i]
for i, k in enumerate("rgba"):
    vertex[k] = rgbaf[:, i]
for k, t in extra:
    vertex[k] = rng.integers(0, 100, n).astype(t)
name = "plyfile-be-double-float-rgba.ply"
path = os.path.join(OUT, name)
face = np.empty(10, dtype=[("vertex_indices", object)])
face["vertex_indices"] = faces(n, 10)
PlyData([PlyElement.describe(vertex, "vertex"),
         PlyElement.describe(face, "face", len_types={"vertex_indices": "u1"}, val_types={"vertex_indices": "u4"})],
        byte_order=">").write(path)
elements, props = read_back_elements(path)
stored = np.asarray(rgbaf, dtype=np.float32)
record(name, "plyfile", "binary_big_endian", elements, props, pos,
       colors=[[color_byte(v, "f4") for v in row[:3]] for row in stored],
       alphas=[color_byte(row[3], "f4") for row in stored],
       color_props=["r", "g", "b"], alpha_prop="a")

# 4: ascii, an element before the vertices with fixed properties, ushort diffuse_* colors with
# diffuse_alpha, PCL-style normal_x normal_y normal_z.
n = 90
pos = positions(n)
rgbau = rng.integers(0, 65536, (n, 4))
nrm = rng.uniform(-1, 1, (n, 3))
vertex = np.empty(n, dtype=[("x", "f4"), ("y", "f4"), ("z", "f4"), ("normal_x", "f4"), ("normal_y", "f4"),
                            ("normal_z", "f4"), ("curvature", "f4"), ("diffuse_red", "u2"), ("diffuse_green", "u2"),
                            ("diffuse_blue", "u2"), ("diffuse_alpha", "u2")])
for i, k in enumerate("xyz"):
    vertex[k] = pos[:, i]
    vertex["normal_" + k] = nrm[:, i]
vertex["curvature"] = rng.uniform(0, 1, n)
for i, k in enumerate(["red", "green", "blue", "alpha"]):
    vertex["diffuse_" + k] = rgbau[:, i]
material = np.empty(2, dtype=[("ambient_red", "u1"), ("shininess", "f4")])
material["ambient_red"] = [1, 2]
material["shininess"] = [0.5, 0.25]
name = "plyfile-ascii-diffuse-ushort.ply"
path = os.path.join(OUT, name)
PlyData([PlyElement.describe(material, "material"), PlyElement.describe(vertex, "vertex")], text=True).write(path)
elements, props = read_back_elements(path)
record(name, "plyfile", "ascii", elements, props, pos,
       colors=[[color_byte(v, "u2") for v in row[:3]] for row in rgbau],
       alphas=[color_byte(row[3], "u2") for row in rgbau], normals=nrm,
       color_props=["diffuse_red", "diffuse_green", "diffuse_blue"], alpha_prop="diffuse_alpha",
       normal_props=["normal_x", "normal_y", "normal_z"])

# 5, 6: 3D Gaussian Splatting, the layout its reference code writes (with plyfile): x y z nx ny nz
# f_dc_0..2 f_rest_0..44 opacity scale_0..2 rot_0..3, all float32; normals are zeros there.
n = 300
pos = positions(n)
attrs = ["x", "y", "z", "nx", "ny", "nz"] + [f"f_dc_{i}" for i in range(3)] + [f"f_rest_{i}" for i in range(45)] \
    + ["opacity"] + [f"scale_{i}" for i in range(3)] + [f"rot_{i}" for i in range(4)]
vertex = np.empty(n, dtype=[(a, "f4") for a in attrs])
for i, k in enumerate("xyz"):
    vertex[k] = pos[:, i]
for a in attrs[3:]:
    vertex[a] = rng.normal(0, 1, n)
vertex["nx"] = vertex["ny"] = vertex["nz"] = 0
for i in range(3):
    vertex[f"f_dc_{i}"] = rng.uniform(-2.5, 2.5, n)   # beyond 0..1 on both sides once mapped
vertex["opacity"] = rng.uniform(-8, 8, n)
vertex["opacity"][:4] = [0, -np.inf, np.inf, math.log(3)]  # sigmoid 0.5, 0, 1, 0.75
colors = [[unit_byte(0.5 + C0 * float(vertex[f"f_dc_{k}"][i])) for k in range(3)] for i in range(n)]
alphas = [unit_byte(1 / (1 + math.exp(-float(o)))) if math.isfinite(o) else (255 if o > 0 else 0)
          for o in vertex["opacity"]]
normals = np.stack([vertex["nx"], vertex["ny"], vertex["nz"]], axis=1)
for text, name, count in [(False, "plyfile-3dgs.ply", n), (True, "plyfile-3dgs-ascii.ply", 60)]:
    path = os.path.join(OUT, name)
    PlyData([PlyElement.describe(vertex[:count], "vertex")], text=text).write(path)
    elements, props = read_back_elements(path)
    record(name, "plyfile", "ascii" if text else "binary_little_endian", elements, props, pos[:count],
           colors=colors[:count], alphas=alphas[:count], normals=normals[:count],
           color_props=["f_dc_0", "f_dc_1", "f_dc_2"], sh=True, alpha_prop="opacity", logit=True,
           normal_props=["nx", "ny", "nz"])

# 7, 8: trimesh's own PLY exporter: a mesh (vertex then face) with RGBA vertex colors and vertex
# normals, binary and ascii.
box = trimesh.creation.icosphere(subdivisions=2, radius=1.5)
vertices = np.asarray(box.vertices) + [0.25, -3, 4]
vc = rng.integers(0, 256, (len(vertices), 4)).astype(np.uint8)
mesh = trimesh.Trimesh(vertices=vertices, faces=box.faces, vertex_colors=vc, process=False)
normals = np.asarray(mesh.vertex_normals)
for encoding in ["binary", "ascii"]:
    name = f"trimesh-mesh-{encoding}.ply"
    path = os.path.join(OUT, name)
    with open(path, "wb") as f:
        f.write(trimesh.exchange.ply.export_ply(mesh, encoding=encoding, vertex_normal=True))
    elements, props = read_back_elements(path)
    written_pos, written_nrm = vertices, normals
    if encoding == "ascii":
        # trimesh prints 8 decimals ("%.8f"): what the file holds is those decimals, read here
        # from its text (not through a PLY reader) and rounded to float32.
        with open(path) as f:
            lines = f.read().split("end_header\n", 1)[1].splitlines()[:len(vertices)]
        rows = np.array([[float(t) for t in line.split()[:6]] for line in lines])
        written_pos, written_nrm = rows[:, :3], rows[:, 3:6]
    record(name, "trimesh", "ascii" if encoding == "ascii" else "binary_little_endian", elements, props,
           written_pos, colors=vc[:, :3], alphas=vc[:, 3], normals=written_nrm,
           color_props=["red", "green", "blue"], alpha_prop="alpha", normal_props=["nx", "ny", "nz"])

# 9: trimesh point cloud with colors.
pts = rng.uniform(-2, 2, (200, 3))
pc_colors = rng.integers(0, 256, (200, 4)).astype(np.uint8)
cloud = trimesh.PointCloud(pts, colors=pc_colors)
name = "trimesh-points.ply"
path = os.path.join(OUT, name)
cloud.export(path)
elements, props = read_back_elements(path)
record(name, "trimesh", "binary_little_endian", elements, props, pts, colors=pc_colors[:, :3],
       alphas=pc_colors[:, 3], color_props=["red", "green", "blue"], alpha_prop="alpha")

with open(os.path.join(OUT, "manifest.json"), "w") as f:
    json.dump(manifest, f)
print(f"write_corpus: {len(manifest)} files in {OUT}")
