#!/usr/bin/env python3
"""Depth-photo fixtures and references for depthlens' photo:FILE tests (PhotoSourceTests.swift).

Runs in the PyPI reference venv (numpy, Pillow, pillow-heif; scripts/pyref-requirements.txt).

  heic-reference FILE OUTDIR      pillow-heif's decode of a HEIC: primary.rgb (raw RGB8), depth.gray
                                  (raw 8-bit), info.json (sizes, libheif's depth metadata, the depth
                                  XMP's apdi:/depthData: values read with xml.etree)
  heic-variant SRC OUT KIND       a copy of SRC changed: no-depth (the depth's auxC type renamed),
                                  no-range (apdi:FloatMinValue renamed), truncated (70% of the
                                  bytes), many-aux (N=300 more auxiliary images: new infe, iloc,
                                  ipma entries and auxl references, the iOS 18 case libheif < 1.18
                                  refuses; iloc offsets shifted by the growth of meta)
  gdepth OUT.jpg OUTDIR FORMAT UNITS [cut] [small]
                                  a Google GDepth JPEG (the depth as a 16-bit PNG, base64 in the
                                  extended XMP, split over APP1 segments); OUTDIR gets stored.u16,
                                  meters.f32, info.json; cut: the base64 cut short; small:
                                  16x12 depth, no noise (a fuzz seed)
  dynamic-depth OUT.jpg OUTDIR FORMAT UNITS
                                  an Android Dynamic Depth JPEG (Container items after the EOI: a
                                  confidence PNG, then the depth PNG; ImagingModel intrinsics)
  iphone-jpeg OUT.jpg OUTDIR [ios12]
                                  an iPhone-style portrait JPEG: MPF APP2 index, a gray disparity
                                  JPEG with Apple's depth XMP, a portrait effects matte JPEG (its XMP
                                  apdi:AuxiliaryImageType the matte's URN); ios12: the matte labelled
                                  as iOS 12 does (AuxiliaryImageType depth, AuxiliaryImageSubType
                                  portraiteffectsmatte) and placed before the depth image, then
                                  semantic mattes: skin (type = its URN), hair (type depth, subtype
                                  semantichairmatte), sky (type = its URN); OUTDIR also gets
                                  mattes.json (each matte's URN and sum, Pillow's decode)
  lensblur OUT.jpg OUTDIR KIND    a Google Camera "Lens Blur"-style GDepth JPEG: standard XMP with
                                  GFocus:* and GDepth Format RangeInverse, Near 12.5, Far 390.5,
                                  Mime image/png and no GDepth:Units; extended XMP (several APP1
                                  segments) with GImage:Data (the JPEG) and GDepth:Data, a PNG that
                                  is KIND: rgba (8-bit RGBA, R = G = B, A = 255, as Lens Blur writes
                                  it), rgb (8-bit RGB, equal channels), gray16 (16-bit gray), or
                                  differ (RGBA whose G differs from R at one pixel); OUTDIR gets
                                  stored.u16 (R, or the gray), values.f32 (decoded, in the file's own
                                  units), info.json (near, far, sizes, the differing pixel)

Every file follows its spec as written (XMP in APP1 with the Adobe signature, extended XMP per
XMP Part 3: GUID = MD5 of the extended packet, full length and offset per chunk; MPF per CIPA
DC-007; Dynamic Depth 1.0 Container items in directory order after the primary image).
"""
import base64
import hashlib
import io
import json
import os
import re
import struct
import sys
import xml.etree.ElementTree as ET

import numpy as np
from PIL import Image

NS = {
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "apdi": "http://ns.apple.com/pixeldatainfo/1.0/",
    "depthData": "http://ns.apple.com/depthData/1.0/",
}


def scene(w, h):
    """A deterministic synthetic RGB-D scene: a gradient color image and a slanted plane with a box."""
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    rgb = np.stack([(x * 255 / max(w - 1, 1)), (y * 255 / max(h - 1, 1)), 128 + 60 * np.sin(x / 7.0)], axis=-1)
    depth = 1.0 + 2.5 * y / max(h - 1, 1) + 0.3 * np.sin(x / 11.0)
    depth[h // 4: h // 2, w // 3: w // 2] = 0.8
    return rgb.clip(0, 255).astype(np.uint8), depth


def jpeg_bytes(img, **kw):
    buf = io.BytesIO()
    img.save(buf, "JPEG", **kw)
    return buf.getvalue()


def png_bytes(img):
    buf = io.BytesIO()
    img.save(buf, "PNG")
    return buf.getvalue()


def app1(payload):
    assert len(payload) + 2 <= 0xFFFF
    return b"\xff\xe1" + struct.pack(">H", len(payload) + 2) + payload


def xmp_packet(description_attrs, body="", namespaces=()):
    ns = " ".join(f'xmlns:{p}="{u}"' for p, u in namespaces)
    return (f'<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">'
            f'<rdf:Description rdf:about="" {ns} {description_attrs}>{body}</rdf:Description></rdf:RDF></x:xmpmeta>')


def insert_after_soi(jpeg, segments):
    assert jpeg[:2] == b"\xff\xd8"
    return jpeg[:2] + b"".join(segments) + jpeg[2:]


# ---------------------------------------------------------------- HEIC reference

def heic_reference(path, outdir):
    import pillow_heif
    os.makedirs(outdir, exist_ok=True)
    h = pillow_heif.open_heif(path, convert_hdr_to_8bit=True)
    prim = h[0]
    rgb = np.asarray(prim.to_pillow().convert("RGB"))
    rgb.tofile(os.path.join(outdir, "primary.rgb"))
    info = {"width": prim.size[0], "height": prim.size[1]}
    depths = prim.info.get("depth_images", [])
    if depths:
        d = depths[0]
        arr = np.asarray(d.to_pillow().convert("L"))
        arr.tofile(os.path.join(outdir, "depth.gray"))
        info.update(depth_width=d.size[0], depth_height=d.size[1], libheif_depth=d.info.get("metadata", {}))
    data = open(path, "rb").read()
    for m in re.finditer(rb"<x:xmpmeta.*?</x:xmpmeta>", data, re.S):
        if b"apdi:" not in m.group(0):
            continue
        root = ET.fromstring(m.group(0))
        desc = root.find(".//rdf:Description", NS)
        def text(prefix, name):
            e = desc.find(f"{prefix}:{name}", NS)
            return e.text if e is not None else desc.get("{%s}%s" % (NS[prefix], name))
        def seq(prefix, name):
            e = desc.find(f"{prefix}:{name}/rdf:Seq", NS)
            return [float(li.text) for li in e.findall("rdf:li", NS)] if e is not None else None
        info["xmp"] = {
            "FloatMinValue": float(text("apdi", "FloatMinValue")), "FloatMaxValue": float(text("apdi", "FloatMaxValue")),
            "IntMinValue": float(text("apdi", "IntMinValue")), "IntMaxValue": float(text("apdi", "IntMaxValue")),
            "AuxiliaryImageType": text("apdi", "AuxiliaryImageType"),
            "IntrinsicMatrix": seq("depthData", "IntrinsicMatrix"),
            "ReferenceWidth": float(text("depthData", "IntrinsicMatrixReferenceWidth")),
            "ReferenceHeight": float(text("depthData", "IntrinsicMatrixReferenceHeight")),
            "Accuracy": text("depthData", "Accuracy"),
            "LensDistortionCoefficients": seq("depthData", "LensDistortionCoefficients"),
        }
        break
    json.dump(info, open(os.path.join(outdir, "info.json"), "w"))


# ---------------------------------------------------------------- HEIC variants

def boxes(data, start, end):
    """(type, box start, payload start, box end) of the boxes in data[start:end]."""
    out, i = [], start
    while i < end:
        size, typ = struct.unpack(">I4s", data[i:i + 8])
        head = 8
        if size == 1:
            size = struct.unpack(">Q", data[i + 8:i + 16])[0]
            head = 16
        elif size == 0:
            size = end - i
        out.append((typ.decode("latin1"), i, i + head, i + size))
        i += size
    return out


def box(typ, payload):
    return struct.pack(">I4s", 8 + len(payload), typ.encode()) + payload


def many_aux(data, n):
    """Adds n auxiliary images (copies of the depth item's data, auxC 'urn:depthlens:test:aux') to
    the primary item: the shape of an iOS 18 file's many auxl references."""
    top = boxes(data, 0, len(data))
    meta = next(b for b in top if b[0] == "meta")
    children = boxes(data, meta[2] + 4, meta[3])
    parts = {c[0]: data[c[2]:c[3]] for c in children}
    pitm = parts["pitm"]
    primary = struct.unpack(">H", pitm[4:6])[0] if pitm[0] == 0 else struct.unpack(">I", pitm[4:8])[0]
    # iinf: find the depth item (the first whose auxC is depth) later through ipma; collect ids.
    iinf = parts["iinf"]
    iv = iinf[0]
    count = struct.unpack(">H", iinf[4:6])[0] if iv == 0 else struct.unpack(">I", iinf[4:8])[0]
    entries_at = 6 if iv == 0 else 8
    infes = iinf[entries_at:]
    ids = []
    for t, s, p, e in boxes(infes, 0, len(infes)):
        v = infes[p]
        ids.append(struct.unpack(">H", infes[p + 4:p + 6])[0] if v == 2 else struct.unpack(">I", infes[p + 4:p + 8])[0])
    # ipco / ipma
    iprp = parts["iprp"]
    ip = boxes(iprp, 0, len(iprp))
    ipco = next(b for b in ip if b[0] == "ipco")
    props = boxes(iprp, ipco[2], ipco[3])
    ipma = next(b for b in ip if b[0] == "ipma")
    ipma_payload = iprp[ipma[2]:ipma[3]]
    ipma_v, ipma_flags = ipma_payload[0], int.from_bytes(ipma_payload[1:4], "big")
    assoc, j = {}, 8
    for _ in range(struct.unpack(">I", ipma_payload[4:8])[0]):
        if ipma_v < 1:
            iid = struct.unpack(">H", ipma_payload[j:j + 2])[0]; j += 2
        else:
            iid = struct.unpack(">I", ipma_payload[j:j + 4])[0]; j += 4
        k = ipma_payload[j]; j += 1
        lst = []  # (essential, 1-based property index)
        for _ in range(k):
            if ipma_flags & 1:
                x = struct.unpack(">H", ipma_payload[j:j + 2])[0]; j += 2
                lst.append((x >> 15, x & 0x7fff))
            else:
                x = ipma_payload[j]; j += 1
                lst.append((x >> 7, x & 0x7f))
        assoc[iid] = lst
    depth_id = next(i for i, lst in assoc.items()
                    if any(props[x - 1][0] == "auxC" and b"auxid:2" in iprp[props[x - 1][2]:props[x - 1][3]] for _, x in lst))
    # One new auxC property (libheif limits ipco to 100 children), shared by the new items.
    new_props = box("auxC", b"\0\0\0\0" + b"urn:depthlens:test:aux\0")
    first_new = len(props) + 1
    assert first_new + n < 0x7fff and ipma_v == 0
    new_ids = list(range(max(ids) + 1, max(ids) + 1 + n))
    assert new_ids[-1] <= 0xffff
    out_assoc = dict(assoc)
    for k, iid in enumerate(new_ids):
        out_assoc[iid] = [(e, x) for e, x in assoc[depth_id] if props[x - 1][0] != "auxC"] + [(1, first_new)]
    # ipma rewritten with 16-bit property indices (flags bit 0).
    mp = struct.pack(">I", len(out_assoc))
    for iid, lst in out_assoc.items():
        mp += struct.pack(">HB", iid, len(lst)) + b"".join(struct.pack(">H", e << 15 | x) for e, x in lst)
    new_ipma = box("ipma", bytes([0]) + (ipma_flags | 1).to_bytes(3, "big") + mp)
    new_ipco = box("ipco", iprp[ipco[2]:ipco[3]] + new_props)
    rest = b"".join(iprp[s:e] for t, s, p, e in ip if t not in ("ipco", "ipma"))
    new_iprp = box("iprp", new_ipco + new_ipma + rest)
    # iinf: new hidden hvc1 infe (version 2).
    new_infes = b"".join(box("infe", bytes([2, 0, 0, 1]) + struct.pack(">HH", iid, 0) + b"hvc1" + b"aux\0") for iid in new_ids)
    new_iinf = box("iinf", bytes([iv, 0, 0, 0]) + (struct.pack(">H", count + n) if iv == 0 else struct.pack(">I", count + n))
                   + infes + new_infes)
    # iref: one auxl box per new item, to the primary.
    iref = parts["iref"]
    rv = iref[0]
    assert rv == 0
    new_iref = box("iref", iref + b"".join(box("auxl", struct.pack(">HHH", iid, 1, primary)) for iid in new_ids))
    # iloc: the depth item's extents for each new item; every file offset shifted later.
    iloc = parts["iloc"]
    v = iloc[0]
    osz, lsz, bsz = iloc[4] >> 4, iloc[4] & 15, iloc[5] >> 4
    isz = iloc[5] & 15 if v >= 1 else 0
    j = 6
    n_items = struct.unpack(">H", iloc[j:j + 2])[0] if v < 2 else struct.unpack(">I", iloc[j:j + 4])[0]
    j += 2 if v < 2 else 4
    def rd(size):
        nonlocal j
        val = int.from_bytes(iloc[j:j + size], "big") if size else 0
        j += size
        return val
    items = []
    for _ in range(n_items):
        iid = rd(2 if v < 2 else 4)
        method = rd(2) & 15 if v >= 1 else 0
        dri = rd(2)
        base = rd(bsz)
        ext = [(rd(isz), rd(osz), rd(lsz)) for _ in range(rd(2))]
        items.append([iid, method, dri, base, ext])
    depth_loc = next(it for it in items if it[0] == depth_id)
    for iid in new_ids:
        items.append([iid, depth_loc[1], depth_loc[2], depth_loc[3], list(depth_loc[4])])
    def build_iloc(shift):
        def wr(val, size):
            return val.to_bytes(size, "big") if size else b""
        body = bytes([v, 0, 0, 0, iloc[4], iloc[5]]) + wr(len(items), 2 if v < 2 else 4)
        for iid, method, dri, base, ext in items:
            body += wr(iid, 2 if v < 2 else 4) + (wr(method, 2) if v >= 1 else b"") + wr(dri, 2)
            if bsz:
                body += wr(base + (shift if method == 0 else 0), bsz)
            body += wr(len(ext), 2)
            for idx, off, ln in ext:
                body += wr(idx, isz) + wr(off + (shift if method == 0 and not bsz else 0), osz) + wr(ln, lsz)
        return box("iloc", body)
    def build_meta(shift):
        out = b""
        for t, s, p, e in children:
            out += {"iinf": new_iinf, "iref": new_iref, "iprp": new_iprp}.get(t) or (build_iloc(shift) if t == "iloc" else data[s:e])
        return box("meta", data[meta[2]:meta[2] + 4] + out)
    growth = len(build_meta(0)) - (meta[3] - meta[1])
    new_meta = build_meta(growth)
    before = data[:meta[1]]
    after = data[meta[3]:]
    # File offsets point past meta (mdat follows it), so they all move by the growth.
    assert all(it[3] + off >= meta[3] for it in items if it[1] == 0 for _, off, _ in it[4])
    return before + new_meta + after


def heic_variant(src, out, kind):
    data = bytearray(open(src, "rb").read())
    if kind == "subtype-matte":
        # The gain map's auxC (same box size) becomes a short type with a text subtype naming the
        # portrait effects matte, NUL-padded: the subtype, not the type, says what it is.
        old = b"urn:com:apple:photo:2020:aux:hdrgainmap\0"
        i = data.index(old)
        new = b"urn:x:aux\0portraiteffectsmatte"
        data[i:i + len(old)] = new + b"\0" * (len(old) - len(new))
    elif kind == "no-depth":
        i = data.index(b"urn:mpeg:hevc:2015:auxid:2")
        data[i:i + 26] = b"urn:mpeg:hevc:2015:auxid:9"
    elif kind == "no-range":
        data = bytearray(bytes(data).replace(b"apdi:FloatMinValue", b"apdi:FloatMinVaLue"))
    elif kind == "truncated":
        data = data[:int(len(data) * 0.7)]
    elif kind == "many-aux":
        data = many_aux(bytes(data), 300)
    else:
        raise SystemExit(f"unknown variant {kind}")
    open(out, "wb").write(bytes(data))


# ---------------------------------------------------------------- Google GDepth

def google_meters(stored, maxv, fmt, near, far, units):
    dn = stored.astype(np.float64) / maxv
    v = far * near / (far - dn * (far - near)) if fmt == "RangeInverse" else near + dn * (far - near)
    if units in ("mm",):
        v = v / 1000
    elif units == "Diopters":
        v = 1 / v
    return v.astype(np.float32)


def gdepth(out, outdir, fmt, units, cut=False, small=False):
    os.makedirs(outdir, exist_ok=True)
    rgb, depth = scene(32, 24) if small else scene(160, 120)
    dw, dh = (16, 12) if small else (256, 192)
    _, d = scene(dw, dh)
    near, far = (0.5, 4.0) if units == "m" else (500.0, 4000.0)
    du = d if units == "m" else d * 1000
    dn = (far * (du - near)) / (du * (far - near)) if fmt == "RangeInverse" else (du - near) / (far - near)
    # Some noise so the PNG (and its base64) is well over one 64 KB APP1 segment.
    rng = np.random.default_rng(26)
    noise = 0 if small else rng.integers(-40, 41, dn.shape)
    stored = np.clip(np.round(dn * 65535) + noise, 0, 65535).astype(np.uint16)
    png = png_bytes(Image.fromarray(stored))  # 16-bit gray ("I;16")
    b64 = base64.b64encode(png).decode()
    if cut:
        b64 = b64[: len(b64) // 2 + 1]
    ext = xmp_packet(f'GDepth:Data="{b64}"', namespaces=[("GDepth", "http://ns.google.com/photos/1.0/depthmap/")])
    ext_bytes = ext.encode()
    guid = hashlib.md5(ext_bytes).hexdigest().upper()
    main = xmp_packet(f'GDepth:Format="{fmt}" GDepth:Near="{near}" GDepth:Far="{far}" GDepth:Mime="image/png" '
                      f'GDepth:Units="{units}" GDepth:MeasureType="OpticalAxis" xmpNote:HasExtendedXMP="{guid}"',
                      namespaces=[("GDepth", "http://ns.google.com/photos/1.0/depthmap/"),
                                  ("xmpNote", "http://ns.adobe.com/xmp/note/")])
    segments = [app1(b"http://ns.adobe.com/xap/1.0/\0" + main.encode())]
    sig = b"http://ns.adobe.com/xmp/extension/\0"
    chunk = 65400
    for off in range(0, len(ext_bytes), chunk):
        segments.append(app1(sig + guid.encode() + struct.pack(">II", len(ext_bytes), off) + ext_bytes[off:off + chunk]))
    jpeg = insert_after_soi(jpeg_bytes(Image.fromarray(rgb), quality=92), segments)
    open(out, "wb").write(jpeg)
    stored.tofile(os.path.join(outdir, "stored.u16"))
    google_meters(stored, 65535, fmt, near, far, units).tofile(os.path.join(outdir, "meters.f32"))
    json.dump({"depth_width": dw, "depth_height": dh, "width": rgb.shape[1], "height": rgb.shape[0], "chunks": len(segments) - 1,
               "near": near, "far": far}, open(os.path.join(outdir, "info.json"), "w"))


# ---------------------------------------------------------------- Android Dynamic Depth

def dynamic_depth(out, outdir, fmt, units):
    os.makedirs(outdir, exist_ok=True)
    rgb, _ = scene(160, 120)
    _, d = scene(80, 60)
    near, far = (0.5, 4.0) if units == "Meters" else (2.0, 0.25)  # diopters: 1/m
    du = d if units == "Meters" else 1 / d
    dn = (far * (du - near)) / (du * (far - near)) if fmt == "RangeInverse" else (du - near) / (far - near)
    stored = np.clip(np.round(dn * 65535), 0, 65535).astype(np.uint16)
    depth_png = png_bytes(Image.fromarray(stored))
    conf_png = png_bytes(Image.fromarray(np.full((60, 80), 255, np.uint8)))
    fx, fy, cx, cy = 140.0, 141.0, 79.0, 60.5
    c = "http://ns.google.com/photos/dd/1.0/"
    body = (
        '<Device:Container><Container:Directory><rdf:Seq>'
        '<rdf:li rdf:parseType="Resource"><Container:Item Item:Mime="image/jpeg" Item:Semantic="Primary" Item:Length="0"/></rdf:li>'
        f'<rdf:li rdf:parseType="Resource"><Container:Item Item:Mime="image/png" Item:Semantic="Confidence" Item:Length="{len(conf_png)}" Item:DataURI="android/confidencemap"/></rdf:li>'
        f'<rdf:li rdf:parseType="Resource"><Container:Item Item:Mime="image/png" Item:Semantic="Depth" Item:Length="{len(depth_png)}" Item:DataURI="android/depthmap"/></rdf:li>'
        '</rdf:Seq></Container:Directory></Device:Container>'
        '<Device:Cameras><rdf:Seq><rdf:li rdf:parseType="Resource"><Device:Camera Camera:Trait="Physical">'
        f'<Camera:DepthMap DepthMap:ItemSemantic="Depth" DepthMap:Format="{fmt}" DepthMap:Near="{near}" DepthMap:Far="{far}" '
        f'DepthMap:Units="{units}" DepthMap:DepthURI="android/depthmap" DepthMap:ConfidenceURI="android/confidencemap" '
        'DepthMap:MeasureType="OpticalAxis"/>'
        f'<Camera:ImagingModel ImagingModel:FocalLengthX="{fx}" ImagingModel:FocalLengthY="{fy}" '
        f'ImagingModel:PrincipalPointX="{cx}" ImagingModel:PrincipalPointY="{cy}" ImagingModel:ImageWidth="160" '
        'ImagingModel:ImageHeight="120" ImagingModel:PixelAspectRatio="1" ImagingModel:Skew="0"/>'
        '</Device:Camera></rdf:li></rdf:Seq></Device:Cameras>')
    xmp = xmp_packet('Device:Revision="1.0"', body, namespaces=[
        ("Device", c + "device/"), ("Container", c + "container/"), ("Item", c + "item/"), ("Camera", c + "camera/"),
        ("DepthMap", c + "depthmap/"), ("ImagingModel", c + "imagingmodel/")])
    jpeg = insert_after_soi(jpeg_bytes(Image.fromarray(rgb), quality=92), [app1(b"http://ns.adobe.com/xap/1.0/\0" + xmp.encode())])
    open(out, "wb").write(jpeg + conf_png + depth_png)
    stored.tofile(os.path.join(outdir, "stored.u16"))
    google_meters(stored, 65535, fmt, near, far, units).tofile(os.path.join(outdir, "meters.f32"))
    json.dump({"depth_width": 80, "depth_height": 60, "width": 160, "height": 120, "fx": fx, "fy": fy, "cx": cx, "cy": cy},
              open(os.path.join(outdir, "info.json"), "w"))


# ---------------------------------------------------------------- Google Camera Lens Blur (GDepth, no Units)

def lensblur(out, outdir, kind):
    """A JPEG laid out as Google Camera's Lens Blur writes it (GFocus + GDepth in the standard XMP,
    GImage:Data and GDepth:Data in the extended XMP), its depth PNG in the layout `kind` says."""
    os.makedirs(outdir, exist_ok=True)
    rgb, d = scene(192, 256)
    # Noise in the unblurred copy (GImage:Data) so the extended XMP spans several APP1 segments.
    rgb = np.clip(rgb.astype(np.int16) + np.random.default_rng(35).integers(-60, 61, rgb.shape), 0, 255).astype(np.uint8)
    near, far = 12.5, 390.5
    du = d * 40  # the app's own scale: not meters
    dn = (far * (du - near)) / (du * (far - near))
    info = {"near": near, "far": far, "width": 192, "height": 256}
    if kind == "gray16":
        stored = np.clip(np.round(dn * 65535), 0, 65535).astype(np.uint16)
        png = png_bytes(Image.fromarray(stored))
        maxv = 65535
    else:
        stored = np.clip(np.round(dn * 255), 0, 255).astype(np.uint8)
        maxv = 255
        if kind == "rgb":
            png = png_bytes(Image.fromarray(np.dstack([stored] * 3), "RGB"))
        elif kind in ("rgba", "differ"):
            planes = [stored, stored.copy(), stored, np.full_like(stored, 255)]
            if kind == "differ":
                planes[1][17, 5] = (int(stored[17, 5]) + 1) % 256
                info["differ"] = {"x": 5, "y": 17, "r": int(stored[17, 5]), "g": int(planes[1][17, 5])}
            png = png_bytes(Image.fromarray(np.dstack(planes), "RGBA"))
        else:
            raise SystemExit(f"unknown lensblur kind {kind}")
    check = Image.open(io.BytesIO(png))
    info["png_mode"] = check.mode
    image_b64 = base64.b64encode(jpeg_bytes(Image.fromarray(rgb), quality=100)).decode()
    depth_b64 = base64.b64encode(png).decode()
    google = [("GFocus", "http://ns.google.com/photos/1.0/focus/"), ("GImage", "http://ns.google.com/photos/1.0/image/"),
              ("GDepth", "http://ns.google.com/photos/1.0/depthmap/")]
    ext = xmp_packet(f'GImage:Data="{image_b64}" GDepth:Data="{depth_b64}"', namespaces=google).encode()
    guid = hashlib.md5(ext).hexdigest().upper()
    main = xmp_packet('GFocus:BlurAtInfinity="0.0122" GFocus:FocalDistance="18.3" GFocus:FocalPointX="0.5" '
                      'GFocus:FocalPointY="0.46" GImage:Mime="image/jpeg" GDepth:Format="RangeInverse" '
                      f'GDepth:Near="{near}" GDepth:Far="{far}" GDepth:Mime="image/png" xmpNote:HasExtendedXMP="{guid}"',
                      namespaces=google + [("xmpNote", "http://ns.adobe.com/xmp/note/")])
    segments = [app1(b"http://ns.adobe.com/xap/1.0/\0" + main.encode())]
    sig = b"http://ns.adobe.com/xmp/extension/\0"
    for off in range(0, len(ext), 65400):
        segments.append(app1(sig + guid.encode() + struct.pack(">II", len(ext), off) + ext[off:off + 65400]))
    info["chunks"] = len(segments) - 1
    open(out, "wb").write(insert_after_soi(jpeg_bytes(Image.fromarray(rgb), quality=92), segments))
    stored.astype(np.uint16).tofile(os.path.join(outdir, "stored.u16"))
    google_meters(stored, maxv, "RangeInverse", near, far, "").tofile(os.path.join(outdir, "values.f32"))
    json.dump(info, open(os.path.join(outdir, "info.json"), "w"))


# ---------------------------------------------------------------- iPhone portrait JPEG (MPF)

def iphone_jpeg(out, outdir, layout="urn"):
    os.makedirs(outdir, exist_ok=True)
    rgb, _ = scene(160, 120)
    _, d = scene(96, 72)
    disparity = 1 / d
    fmin, fmax = float(np.float16(disparity.min())), float(np.float16(disparity.max()))
    stored = np.clip(np.round((disparity - fmin) / (fmax - fmin) * 255), 0, 255).astype(np.uint8)
    k = [3032.594, 0, 0, 0, 3032.594, 0, 1988.45, 1512.31, 1]
    lis = "".join(f"<rdf:li>{v}</rdf:li>" for v in k)
    depth_xmp = xmp_packet("", (
        f"<apdi:AuxiliaryImageType>disparity</apdi:AuxiliaryImageType><apdi:FloatMinValue>{fmin}</apdi:FloatMinValue>"
        f"<apdi:FloatMaxValue>{fmax}</apdi:FloatMaxValue><apdi:IntMinValue>0</apdi:IntMinValue><apdi:IntMaxValue>255</apdi:IntMaxValue>"
        f"<depthData:IntrinsicMatrix><rdf:Seq>{lis}</rdf:Seq></depthData:IntrinsicMatrix>"
        "<depthData:IntrinsicMatrixReferenceWidth>4032</depthData:IntrinsicMatrixReferenceWidth>"
        "<depthData:IntrinsicMatrixReferenceHeight>3024</depthData:IntrinsicMatrixReferenceHeight>"
        "<depthData:Accuracy>absolute</depthData:Accuracy>"),
        namespaces=[("apdi", NS["apdi"]), ("depthData", NS["depthData"])])
    matte_xmp = xmp_packet('apdi:AuxiliaryImageType="urn:com:apple:photo:2018:aux:portraiteffectsmatte"',
                           namespaces=[("apdi", NS["apdi"])])
    depth_jpeg = insert_after_soi(jpeg_bytes(Image.fromarray(stored), quality=100),
                                  [app1(b"http://ns.adobe.com/xap/1.0/\0" + depth_xmp.encode())])
    matte = (np.arange(80 * 60).reshape(60, 80) % 256).astype(np.uint8)
    if layout == "ios12":
        # As iOS 12 labels it (image-with-matte.jpg from an iPhone X): type depth, subtype the matte.
        matte_xmp = xmp_packet("", (
            "<portraitEffectsMatte:PortraitEffectsMatteVersion>65536</portraitEffectsMatte:PortraitEffectsMatteVersion>"
            "<apdi:AuxiliaryImageType>depth</apdi:AuxiliaryImageType><apdi:NativeFormat>1278226488</apdi:NativeFormat>"
            "<apdi:StoredFormat>1278226488</apdi:StoredFormat>"
            "<apdi:AuxiliaryImageSubType>portraiteffectsmatte</apdi:AuxiliaryImageSubType>"),
            namespaces=[("portraitEffectsMatte", "http://ns.apple.com/portraitEffectsMatte/1.0/"), ("apdi", NS["apdi"])])
    elif layout != "urn":
        raise SystemExit(f"unknown iphone-jpeg layout {layout}")
    matte_jpeg = insert_after_soi(jpeg_bytes(Image.fromarray(matte), quality=100),
                                  [app1(b"http://ns.adobe.com/xap/1.0/\0" + matte_xmp.encode())])
    primary = jpeg_bytes(Image.fromarray(rgb), quality=92)
    aux = [depth_jpeg, matte_jpeg]
    mattes = {"urn:com:apple:photo:2018:aux:portraiteffectsmatte": matte_jpeg}
    if layout == "ios12":
        aux = [matte_jpeg, depth_jpeg]
        semantic = "http://ns.apple.com/semanticSegmentationMatte/1.0/"
        for k, (typ, sub) in enumerate([("urn:com:apple:photo:2019:aux:semanticskinmatte", None),
                                        ("depth", "semantichairmatte"),
                                        ("urn:com:apple:photo:2020:aux:semanticskymatte", None)]):
            body = (f"<apdi:AuxiliaryImageType>{typ}</apdi:AuxiliaryImageType>"
                    + (f"<apdi:AuxiliaryImageSubType>{sub}</apdi:AuxiliaryImageSubType>" if sub else "")
                    + "<semanticSegmentationMatte:SemanticSegmentationMatteVersion>65536</semanticSegmentationMatte:SemanticSegmentationMatteVersion>")
            x = xmp_packet("", body, namespaces=[("apdi", NS["apdi"]), ("semanticSegmentationMatte", semantic)])
            m = np.zeros((30, 40), np.uint8)
            m[: 10 * (k + 1), :] = 60 * (k + 1)
            j = insert_after_soi(jpeg_bytes(Image.fromarray(m), quality=100), [app1(b"http://ns.adobe.com/xap/1.0/\0" + x.encode())])
            aux.append(j)
            mattes["urn:com:apple:photo:2019:aux:semantichairmatte" if sub else typ] = j

    def mpf(sizes, offsets):
        n = len(sizes)
        ifd = struct.pack(">H", 3)
        ifd += struct.pack(">HHI4s", 0xB000, 7, 4, b"0100")
        ifd += struct.pack(">HHII", 0xB001, 4, 1, n)
        ifd += struct.pack(">HHII", 0xB002, 7, 16 * n, 8 + 2 + 3 * 12 + 4)
        ifd += struct.pack(">I", 0)
        entries = b"".join(struct.pack(">IIIHH", 0x030000 if i == 0 else 0, sizes[i], offsets[i], 0, 0) for i in range(n))
        payload = b"MPF\0" + b"MM\0\x2a" + struct.pack(">I", 8) + ifd + entries
        return b"\xff\xe2" + struct.pack(">H", len(payload) + 2) + payload

    placeholder = mpf([0] * (1 + len(aux)), [0] * (1 + len(aux)))
    first_size = len(primary) + len(placeholder)
    tiff = 2 + 4 + 4  # SOI, APP2 marker + length, "MPF\0"
    offsets, at = [0], first_size
    for j in aux:
        offsets.append(at - tiff)
        at += len(j)
    sizes = [first_size] + [len(j) for j in aux]
    data = insert_after_soi(primary, [mpf(sizes, offsets)]) + b"".join(aux)
    open(out, "wb").write(data)
    if layout != "urn":
        json.dump({urn: {"sum": int(np.asarray(Image.open(io.BytesIO(j)).convert("L"), np.int64).sum()),
                         "size": list(Image.open(io.BytesIO(j)).size)} for urn, j in mattes.items()},
                  open(os.path.join(outdir, "mattes.json"), "w"))
    # The reference: Pillow's decode of the embedded depth and matte JPEGs as they are in the file.
    np.asarray(Image.open(io.BytesIO(depth_jpeg)).convert("L")).tofile(os.path.join(outdir, "stored.u8"))
    np.asarray(Image.open(io.BytesIO(matte_jpeg)).convert("L")).tofile(os.path.join(outdir, "matte.u8"))
    np.asarray(Image.open(io.BytesIO(primary)).convert("RGB")).tofile(os.path.join(outdir, "primary.rgb"))
    json.dump({"depth_width": 96, "depth_height": 72, "width": 160, "height": 120, "fmin": fmin, "fmax": fmax},
              open(os.path.join(outdir, "info.json"), "w"))


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "heic-reference":
        heic_reference(*args)
    elif cmd == "heic-variant":
        heic_variant(*args)
    elif cmd == "gdepth":
        gdepth(args[0], args[1], args[2], args[3], cut="cut" in args[4:], small="small" in args[4:])
    elif cmd == "dynamic-depth":
        dynamic_depth(*args)
    elif cmd == "iphone-jpeg":
        iphone_jpeg(*args)
    elif cmd == "lensblur":
        lensblur(*args)
    else:
        raise SystemExit(f"unknown command {cmd}")
