#!/usr/bin/env python3
"""Damaged and hostile ROS 2 recordings for depthlens' tests (issue 33: damage is said; bounded work).

Run with the reference venv's python (mcap, rosbags, numpy, zstandard — what ros2_reference.py uses).

  damaged_ros2.py mcap OUT [--frames N]   realsense2_camera's color and depth topics (64x48, noisy, N frames, default 10)
                                          written by `mcap`'s Writer in 16 KiB zstd chunks, with its summary
  damaged_ros2.py chunk-bomb OUT          the same 10 frames without a summary (the data section, DataEnd and a
                                          Footer saying "no summary"), plus one zstd chunk of ~50 KB that declares
                                          and inflates to 1 GiB (one record of an unknown opcode, skipped by readers)
  damaged_ros2.py zstd-bomb OUT [--declared]
                                          a whole-file zstd stream (`.mcap.zstd`) of a few KB... a few hundred KB
                                          that inflates to 8 GiB (MCAP magic, then zeros), as 64 MiB frames that
                                          do not declare their size (with --declared, frames that do)

Each prints one JSON line: {"size": bytes, "chunks": [file offset of each Chunk record, in file order]}.
"""
import json
import struct
import sys
from pathlib import Path

import zstandard

sys.path.insert(0, str(Path(__file__).parent))
from ros2_reference import bench_messages, write_mcap, get_typestore, Stores  # noqa: E402

MAGIC = b"\x89MCAP0\r\n"


def records(data: bytes):
    """(opcode, offset, end) of each record after the magic, up to the end or a record cut short."""
    at = len(MAGIC)
    while at + 9 <= len(data):
        op, n = struct.unpack_from("<BQ", data, at)
        if at + 9 + n > len(data):
            break
        yield op, at, at + 9 + n
        at += 9 + n


def frames_mcap(out: Path, frames: int) -> bytes:
    ts = get_typestore(Stores.ROS2_HUMBLE)
    msgs = bench_messages(ts, (64, 48), (64, 48), frames, False, True)
    write_mcap(out, ts, msgs, chunk_size=16 * 1024)
    return out.read_bytes()


def record(op: int, content: bytes) -> bytes:
    return struct.pack("<BQ", op, len(content)) + content


def zeros_frames(total: int, first: bytes, declared: bool) -> bytes:
    """zstd frames of 64 MiB each (the first starting with `first`), `total` bytes in all."""
    block = 64 << 20
    assert total % block == 0
    cctx = zstandard.ZstdCompressor(level=1, write_content_size=declared)

    def frame(data: bytes) -> bytes:
        if declared:
            return cctx.compress(data)
        c = cctx.compressobj()  # streaming: no content size in the frame header
        return c.compress(data) + c.flush()

    head = frame(first + bytes(block - len(first)))
    rest = frame(bytes(block))
    return head + rest * (total // block - 1)


def main(argv):
    if len(argv) < 2:
        raise SystemExit(__doc__)
    cmd, out = argv[0], Path(argv[1])
    if cmd == "mcap":
        frames = int(argv[3]) if len(argv) >= 4 and argv[2] == "--frames" else 10
        data = frames_mcap(out, frames)
    elif cmd == "chunk-bomb":
        whole = frames_mcap(out, 10)
        data_end = next(off for op, off, _ in records(whole) if op == 0x0F)
        size = 1 << 30
        inner_first = struct.pack("<BQ", 0x80, size - 9)
        compressed = zeros_frames(size, inner_first, declared=False)
        # Chunk: message_start_time, message_end_time, uncompressed_size, uncompressed_crc (0: none),
        # compression, records.
        chunk = struct.pack("<QQQI", 0, 0, size, 0) + struct.pack("<I", 4) + b"zstd" + struct.pack("<Q", len(compressed)) + compressed
        footer = record(0x02, struct.pack("<QQI", 0, 0, 0))
        data = whole[:data_end] + record(0x06, chunk) + record(0x0F, struct.pack("<I", 0)) + footer + MAGIC
        out.write_bytes(data)
    elif cmd == "zstd-bomb":
        data = zeros_frames(8 << 30, MAGIC, declared="--declared" in argv[2:])
        out.write_bytes(data)
    else:
        raise SystemExit(__doc__)
    print(json.dumps({"size": len(data), "chunks": [off for op, off, _ in records(data) if op == 0x06]
                      if data.startswith(MAGIC) else []}))


if __name__ == "__main__":
    main(sys.argv[1:])
