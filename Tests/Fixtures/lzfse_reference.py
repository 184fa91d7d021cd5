"""LZFSE streams written by Apple's reference encoder (PyPI `lzfse`, which wraps github.com/lzfse/lzfse),
for Tests/DepthKitTests/LZFSETests.swift.

    lzfse_reference.py OUT_DIR

writes, per case NAME, NAME.raw (the input) and NAME.lzfse (the stream), and OUT_DIR/cases.json:
[{"name", "size", "blocks": ["bvx2", …, "bvx$"]}], the block magics as this script walks the stream.

Which block kind the reference writes: LZVN ("bvxn") for inputs under 4096 bytes, LZFSE v2 ("bvx2",
one block per 10000 matches or 40000 literals) for larger ones, raw ("bvx-") when neither is smaller
than the input (random data, empty and one-byte inputs). It never writes "bvx1" (LZFSE with its
frequency tables stored flat); the "v1" case here is a reference v2 stream with each block's header
rewritten in the v1 layout (same payload), checked with the reference decoder before it is written.
"mixed" joins a raw, an LZVN and a v2 block in one stream (the reference writes one kind per input),
also checked with the reference decoder.
"""
import json
import os
import struct
import sys

import lzfse
import numpy as np

L_SYMBOLS, M_SYMBOLS, D_SYMBOLS, LIT_SYMBOLS = 20, 20, 64, 256


def blocks(stream):
    """The block magics of `stream` and each block's (offset, length)."""
    out, i = [], 0
    while True:
        magic = stream[i:i + 4].decode("ascii")
        if magic == "bvx$":
            out.append((magic, i, 4))
            return out
        if magic == "bvx-":
            n = 8 + struct.unpack_from("<I", stream, i + 4)[0]
        elif magic == "bvxn":
            n = 12 + struct.unpack_from("<I", stream, i + 8)[0]
        elif magic == "bvx2":
            v0, v1, v2 = struct.unpack_from("<QQQ", stream, i + 8)
            n = (v2 & 0xFFFFFFFF) + ((v0 >> 20) & 0xFFFFF) + ((v1 >> 40) & 0xFFFFF)
        elif magic == "bvx1":
            n = 772 + sum(struct.unpack_from("<II", stream, i + 20))
        else:
            raise ValueError(f"unexpected block {magic!r} at {i}")
        out.append((magic, i, n))
        i += n


def v2_freqs(data):
    """The v2 header's frequency tables (a prefix code read from the least significant bit)."""
    values, accum, nbits, i = [], 0, 0, 0
    for _ in range(L_SYMBOLS + M_SYMBOLS + D_SYMBOLS + LIT_SYMBOLS):
        while i < len(data) and nbits + 8 <= 32:
            accum |= data[i] << nbits
            nbits += 8
            i += 1
        if accum & 1 == 0:
            n, v = 2, (accum >> 1) & 1
        elif accum & 3 == 1:
            n, v = 3, 2 + ((accum >> 2) & 1)
        elif accum & 7 == 3:
            n, v = 5, 4 + ((accum >> 3) & 3)
        elif accum & 15 == 7:
            n, v = 8, 8 + ((accum >> 4) & 15)
        else:
            n, v = 14, 24 + ((accum >> 4) & 1023)
        assert n <= nbits
        values.append(v)
        accum >>= n
        nbits -= n
    return values


def v2_to_v1(stream):
    """`stream` with every bvx2 header rewritten as a bvx1 header (the 772-byte v1 struct)."""
    out = bytearray()
    for magic, i, n in blocks(stream):
        if magic != "bvx2":
            out += stream[i:i + n]
            continue
        n_raw = struct.unpack_from("<I", stream, i + 4)[0]
        v0, v1, v2 = struct.unpack_from("<QQQ", stream, i + 8)
        header_size = v2 & 0xFFFFFFFF
        n_literals, n_lit_payload, n_matches = v0 & 0xFFFFF, (v0 >> 20) & 0xFFFFF, (v0 >> 40) & 0xFFFFF
        literal_bits, lmd_bits = ((v0 >> 60) & 7) - 7, ((v1 >> 60) & 7) - 7
        literal_state = [(v1 >> (10 * k)) & 0x3FF for k in range(4)]
        n_lmd_payload = (v1 >> 40) & 0xFFFFF
        l_state, m_state, d_state = (v2 >> 32) & 0x3FF, (v2 >> 42) & 0x3FF, (v2 >> 52) & 0x3FF
        freqs = v2_freqs(stream[i + 32:i + header_size])
        header = struct.pack("<IIIIIIIi4Hi3H", 0x31787662, n_raw, n_lit_payload + n_lmd_payload, n_literals,
                             n_matches, n_lit_payload, n_lmd_payload, literal_bits, *literal_state, lmd_bits,
                             l_state, m_state, d_state)
        header += struct.pack(f"<{len(freqs)}H", *freqs) + b"\0\0"  # the struct's tail padding
        assert len(header) == 772
        out += header + stream[i + header_size:i + n]
    return bytes(out)


def strip_end(stream):
    assert stream.endswith(b"bvx$")
    return stream[:-4]


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(35)
    cases = {}
    cases["empty"] = b""
    cases["one-byte"] = b"d"
    cases["text-600"] = b"depthlens reads Record3D " * 24
    cases["lzvn-4095"] = bytes(rng.integers(0, 6, 4095, dtype=np.uint8))
    cases["random-3000"] = rng.bytes(3000)
    cases["random-100k"] = rng.bytes(100_000)
    # Record3D's LiDAR depth: 192x256 float32 meters, a smooth surface with noise and holes (0).
    y, x = np.mgrid[0:256, 0:192]
    depth = (0.8 + 0.004 * x + 0.002 * y + rng.normal(0, 0.001, (256, 192))).astype("<f4")
    depth[40:90, 30:70] = 0
    depth[200:, 150:] = 0
    cases["depth-192x256"] = depth.tobytes()
    ramp = np.linspace(0.25, 5.0, 256 * 192, dtype="<f4").reshape(256, 192)
    ramp[:, :12] = 0
    cases["ramp-192x256"] = ramp.tobytes()
    # Confidence: 0, 1, 2 per pixel, mostly 2, in patches.
    conf = np.full((256, 192), 2, np.uint8)
    conf[rng.random((256, 192)) < 0.1] = 1
    conf[40:90, 30:70] = 0
    cases["conf-192x256"] = conf.tobytes()
    # A 1920x1440 depth-sized payload (11 MB: many v2 blocks, matches across blocks).
    y, x = np.mgrid[0:1440, 0:1920]
    big = (0.5 + 0.001 * x + 0.0005 * y + rng.normal(0, 0.0005, (1440, 1920))).astype("<f4")
    big[300:500, 200:900] = 0
    cases["depth-1920x1440"] = big.tobytes()
    cases["random-2M"] = rng.bytes(2 << 20)
    cases["repeats-2M"] = np.tile(np.arange(977, dtype="<f4"), 540).tobytes()[: 2 << 20]

    streams = {name: lzfse.compress(data) for name, data in cases.items()}

    for source in ["depth-192x256", "conf-192x256"]:  # the small one is a fuzz seed (scripts/fuzz)
        v1 = v2_to_v1(streams[source])
        assert lzfse.decompress(v1) == cases[source]
        cases["v1-" + source], streams["v1-" + source] = cases[source], v1

    parts = ["random-3000", "text-600", "conf-192x256"]
    mixed = b"".join(strip_end(streams[p]) for p in parts) + b"bvx$"
    mixed_data = b"".join(cases[p] for p in parts)
    assert lzfse.decompress(mixed) == mixed_data
    cases["mixed"], streams["mixed"] = mixed_data, mixed

    manifest = []
    for name, data in cases.items():
        stream = streams[name]
        with open(os.path.join(out, name + ".raw"), "wb") as f:
            f.write(data)
        with open(os.path.join(out, name + ".lzfse"), "wb") as f:
            f.write(stream)
        manifest.append({"name": name, "size": len(data), "blocks": [m for m, _, _ in blocks(stream)]})
    with open(os.path.join(out, "cases.json"), "w") as f:
        json.dump(manifest, f, indent=1)


if __name__ == "__main__":
    main()
