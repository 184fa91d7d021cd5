#!/usr/bin/env python3
"""Makes Tests/Fixtures/sensor-frame/: a small RGB-D pair that looks like a real sensor's frame,
for the GPU-effect agreement tests. Run once; the PNGs are committed.

    depthlens record --source synthetic --frames 1 --out /tmp/rec
    scripts/make-sensor-frame.py /tmp/rec Tests/Fixtures/sensor-frame

From the synthetic scene's 640x480 frame (TUM folder: 8-bit color, 16-bit depth at 5000/m):
- color.png, 128x96 RGB: 5x5 box average, vignetting, warm white balance, seeded noise (sigma 0.6);
- depth.png, 80x60 16-bit millimeters (--depth-scale 1000): nearest sample every 8 px (a depth
  sensor does not average across edges), axial noise sigma = 1.2 mm * d^2 (d in m), quantized to
  mm, dropped (0) where the depth steps by more than 5 cm nearby (edge shadows) with probability
  0.6, and in a few blobs (dark or shiny surfaces).
Only the Python standard library (zlib, struct, random).
"""
import random, struct, sys, zlib, os

def read_png(path):
    data = open(path, 'rb').read()
    assert data[:8] == b'\x89PNG\r\n\x1a\n', path
    pos, idat, hdr = 8, b'', None
    while pos < len(data):
        n, kind = struct.unpack('>I4s', data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b'IHDR': hdr = struct.unpack('>IIBBBBB', body)
        elif kind == b'IDAT': idat += body
        pos += 12 + n
    w, h, depth, ctype, _, _, interlace = hdr
    assert interlace == 0
    channels = {0: 1, 2: 3, 6: 4, 4: 2}[ctype]
    bpp = channels * depth // 8
    raw = zlib.decompress(idat)
    stride = w * bpp
    rows, prev, i = [], bytearray(stride), 0
    for _ in range(h):
        f = raw[i]; line = bytearray(raw[i + 1:i + 1 + stride]); i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]; c = prev[x - bpp] if x >= bpp else 0
            if f == 1: line[x] = (line[x] + a) & 255
            elif f == 2: line[x] = (line[x] + b) & 255
            elif f == 3: line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line)); prev = line
    def px(x, y):
        r = rows[y]
        if depth == 16: return [struct.unpack('>H', r[(x * channels + k) * 2:(x * channels + k) * 2 + 2])[0] for k in range(channels)]
        return list(r[x * channels:(x + 1) * channels])
    return w, h, px

def write_png(path, w, h, rows, ctype, depth):
    bpp = {0: 1, 2: 3}[ctype] * depth // 8
    # Filter 1 (Sub) on every row: smooth gradients compress far better.
    raw = b''.join(b'\x01' + bytes((r[i] - (r[i - bpp] if i >= bpp else 0)) & 255 for i in range(len(r))) for r in rows)
    def chunk(k, b): return struct.pack('>I', len(b)) + k + b + struct.pack('>I', zlib.crc32(k + b) & 0xFFFFFFFF)
    png = b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, depth, ctype, 0, 0, 0))
    png += chunk(b'IDAT', zlib.compress(raw, 9)) + chunk(b'IEND', b'')
    open(path, 'wb').write(png)

def main(src, out):
    rng = random.Random(20261123)
    assoc = [l.split() for l in open(os.path.join(src, 'associations.txt')) if not l.startswith('#')][0]
    cw, ch, cpx = read_png(os.path.join(src, assoc[1]))
    dw, dh, dpx = read_png(os.path.join(src, assoc[3]))
    os.makedirs(out, exist_ok=True)
    W, H, k = 128, 96, cw // 128
    rows = []
    for y in range(H):
        r = bytearray()
        for x in range(W):
            acc = [0, 0, 0]
            for j in range(k):
                for i in range(k):
                    p = cpx(x * k + i, y * k + j)
                    for c in range(3): acc[c] += p[c]
            u, v = (x + 0.5) / W - 0.5, (y + 0.5) / H - 0.5
            vig = 1 - 0.5 * (u * u + v * v)
            for c, gain in enumerate((1.06, 1.0, 0.9)):
                val = acc[c] / (k * k) * vig * gain + rng.gauss(0, 0.6)
                r.append(max(0, min(255, int(round(val)))))
        rows.append(bytes(r))
    write_png(os.path.join(out, 'color.png'), W, H, rows, 2, 8)

    DW, DH, s = 80, 60, dw // 80
    meters = lambda x, y: dpx(min(x, dw - 1), min(y, dh - 1))[0] / 5000.0
    blobs = [(rng.uniform(0, DW), rng.uniform(0, DH), rng.uniform(1.5, 3.5)) for _ in range(4)]
    rows = []
    for y in range(DH):
        r = bytearray()
        for x in range(DW):
            sx, sy = x * s + s // 2, y * s + s // 2
            d = meters(sx, sy)
            near = [meters(sx + dx, sy + dy) for dx in (-6, 0, 6) for dy in (-6, 0, 6) if sx + dx >= 0 and sy + dy >= 0]
            edge = max(near) - min(near) > 0.05
            mm = 0
            if d > 0 and not (edge and rng.random() < 0.6) and not any((x - bx) ** 2 + (y - by) ** 2 < br * br for bx, by, br in blobs):
                mm = max(1, int(round((d + rng.gauss(0, 0.0012 * d * d)) * 1000)))
            r += struct.pack('>H', mm)
        rows.append(bytes(r))
    write_png(os.path.join(out, 'depth.png'), DW, DH, rows, 0, 16)

if __name__ == '__main__':
    main(sys.argv[1], sys.argv[2])
