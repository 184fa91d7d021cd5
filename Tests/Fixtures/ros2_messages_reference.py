#!/usr/bin/env python3
"""Test vectors for depthlens' ROS 2 message decoders, written by an independent CDR writer.

    ros2_messages_reference.py OUT.json
    ros2_messages_reference.py --seeds DIR   (fuzz seeds: DIR/cdr/NAME.cdr, the messages; DIR/cdepth/NAME,
                                              one format byte then a compressedDepth payload)

Every message is serialized by PyPI's `rosbags` (typestore ROS2_HUMBLE, `serialize_cdr`), little-
and big-endian, and written with what it should decode to:
    {"cases": [{"name", "type", "topic", "hex", "little_endian", "expected": {...}}, ...]}
compressedDepth payloads follow image_transport_plugins' compressed_depth_image_transport
(codec.cpp: a 12-byte ConfigHeader, int32 format + float32 depthQuantA, depthQuantB, then a 16-bit
PNG or RVL; 32FC1 as quantized inverse depth, A = z0 (z0 + 1), B = 1 - A / depth_max,
v = (unsigned short)(A / d + B) for d < depth_max else 0) and rvl_codec.cpp (Wilson's RVL), written
here from that description: the PNG by hand with zlib, the RVL encoder below. Color PNG and JPEG
by Pillow, whose own decode is the expected image.
"""
import io
import json
import struct
import sys
import zlib

import numpy as np
from PIL import Image as PILImage
from rosbags.typesys import Stores, get_typestore

ts = get_typestore(Stores.ROS2_HUMBLE)
T = ts.types
Time = T['builtin_interfaces/msg/Time']
Header = T['std_msgs/msg/Header']


def header(sec, nsec, frame):
    return Header(stamp=Time(sec=sec, nanosec=nsec), frame_id=frame)


def header_json(sec, nsec, frame):
    return {'sec': sec, 'nanosec': nsec, 'frame_id': frame}


cases = []


def add(name, msg, typename, topic, expected, both=True):
    for little in ([True, False] if both else [True]):
        data = bytes(ts.serialize_cdr(msg, typename, little_endian=little))
        cases.append({'name': name + ('' if little else ' (big-endian)'), 'type': typename, 'topic': topic,
                      'hex': data.hex(), 'little_endian': little, 'expected': expected})


rng = np.random.default_rng(24)

# --- sensor_msgs/msg/Image -------------------------------------------------------------------
def image(name, encoding, width, height, bpp, pad, sec, nsec, frame, big=0):
    step = width * bpp + pad
    data = rng.integers(0, 256, size=step * height, dtype=np.uint8)
    msg = T['sensor_msgs/msg/Image'](header=header(sec, nsec, frame), height=height, width=width, encoding=encoding,
                                     is_bigendian=big, step=step, data=data)
    add(name, msg, 'sensor_msgs/msg/Image', '/camera/' + name,
        {'header': header_json(sec, nsec, frame), 'height': height, 'width': width, 'encoding': encoding,
         'is_bigendian': big, 'step': step, 'data': data.tobytes().hex()})


image('depth16', '16UC1', 5, 3, 2, 2, 1700000000, 123456789, 'camera_depth_optical_frame')
image('mono16', 'mono16', 4, 2, 2, 0, 7, 1, 'd')
image('depth32', '32FC1', 3, 2, 4, 4, -3, 999999999, 'meters', big=1)
image('rgb8', 'rgb8', 4, 3, 3, 1, 1, 2, 'camera_color_optical_frame')
image('bgr8', 'bgr8', 2, 2, 3, 0, 1, 2, 'c')
image('rgba8', 'rgba8', 3, 2, 4, 0, 1, 2, 'c')
image('bgra8', 'bgra8', 3, 2, 4, 0, 1, 2, 'c')
image('mono8', 'mono8', 7, 2, 1, 1, 1, 2, '')
image('yuyv', 'yuyv', 4, 2, 2, 0, 1, 2, 'c')
image('yuv422', 'yuv422', 4, 2, 2, 0, 1, 2, 'c')

# --- sensor_msgs/msg/CameraInfo --------------------------------------------------------------
K = [615.25, 0.0, 320.5, 0.0, 615.75, 240.25, 0.0, 0.0, 1.0]
R = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]
P = [615.25, 0.0, 320.5, 0.0, 0.0, 615.75, 240.25, 0.0, 0.0, 0.0, 1.0, 0.0]
D = [0.125, -0.25, 0.001, -0.002, 0.0625]
ROI = T['sensor_msgs/msg/RegionOfInterest']
info = T['sensor_msgs/msg/CameraInfo'](header=header(12, 34, 'camera_color_optical_frame'), height=480, width=640,
                                       distortion_model='plumb_bob', d=np.array(D), k=np.array(K), r=np.array(R),
                                       p=np.array(P), binning_x=1, binning_y=2,
                                       roi=ROI(x_offset=3, y_offset=4, height=5, width=6, do_rectify=True))
add('camera_info', info, 'sensor_msgs/msg/CameraInfo', '/camera/color/camera_info',
    {'header': header_json(12, 34, 'camera_color_optical_frame'), 'height': 480, 'width': 640,
     'distortion_model': 'plumb_bob', 'd': D, 'k': K, 'r': R, 'p': P, 'binning_x': 1, 'binning_y': 2,
     'roi': [3, 4, 5, 6, True]})
info0 = T['sensor_msgs/msg/CameraInfo'](header=header(0, 0, ''), height=0, width=0, distortion_model='',
                                        d=np.array([], dtype=np.float64), k=np.zeros(9), r=np.zeros(9), p=np.zeros(12),
                                        binning_x=0, binning_y=0,
                                        roi=ROI(x_offset=0, y_offset=0, height=0, width=0, do_rectify=False))
add('camera_info_empty', info0, 'sensor_msgs/msg/CameraInfo', '/x/camera_info',
    {'header': header_json(0, 0, ''), 'height': 0, 'width': 0, 'distortion_model': '', 'd': [], 'k': [0.0] * 9,
     'r': [0.0] * 9, 'p': [0.0] * 12, 'binning_x': 0, 'binning_y': 0, 'roi': [0, 0, 0, 0, False]})

# --- tf2_msgs/msg/TFMessage ------------------------------------------------------------------
TS = T['geometry_msgs/msg/TransformStamped']
V3 = T['geometry_msgs/msg/Vector3']
Q = T['geometry_msgs/msg/Quaternion']
TF = T['geometry_msgs/msg/Transform']
tfs = [('camera_link', 'camera_depth_frame', [0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]),
       ('camera_link', 'camera_color_frame', [-0.000366, 0.014993, 0.000213], [0.001, -0.002, 0.0031, 0.99999]),
       ('camera_color_frame', 'camera_color_optical_frame', [0.0, 0.0, 0.0], [-0.5, 0.5, -0.5, 0.5])]
msg = T['tf2_msgs/msg/TFMessage'](transforms=[
    TS(header=header(5, 6, p), child_frame_id=c, transform=TF(translation=V3(x=t[0], y=t[1], z=t[2]),
                                                              rotation=Q(x=q[0], y=q[1], z=q[2], w=q[3])))
    for p, c, t, q in tfs])
add('tf_static', msg, 'tf2_msgs/msg/TFMessage', '/tf_static',
    {'transforms': [{'header': header_json(5, 6, p), 'child': c, 't': t, 'q': q} for p, c, t, q in tfs]})
add('tf_empty', T['tf2_msgs/msg/TFMessage'](transforms=[]), 'tf2_msgs/msg/TFMessage', '/tf', {'transforms': []})

# --- sensor_msgs/msg/Imu, std_msgs/msg/String, UInt32 ----------------------------------------
cov = [float(i) / 8 for i in range(9)]
imu = T['sensor_msgs/msg/Imu'](header=header(9, 10, 'imu'), orientation=Q(x=0.1, y=0.2, z=0.3, w=0.9),
                               orientation_covariance=np.array(cov), angular_velocity=V3(x=1.5, y=-2.5, z=3.5),
                               angular_velocity_covariance=np.array(cov[::-1]),
                               linear_acceleration=V3(x=0.0, y=-9.81, z=0.25),
                               linear_acceleration_covariance=np.array([-1.0] + cov[1:]))
add('imu', imu, 'sensor_msgs/msg/Imu', '/device_0/sensor_2/Gyro_0/imu/data',
    {'header': header_json(9, 10, 'imu'), 'orientation': [0.1, 0.2, 0.3, 0.9], 'orientation_covariance': cov,
     'angular_velocity': [1.5, -2.5, 3.5], 'angular_velocity_covariance': cov[::-1],
     'linear_acceleration': [0.0, -9.81, 0.25], 'linear_acceleration_covariance': [-1.0] + cov[1:]})
text = 'Frame Counter=12;Time Of Arrival=1712345678901;frame_timestamp=360815.089;Depth Units=0.001000;'
add('metadata_string', T['std_msgs/msg/String'](data=text), 'std_msgs/msg/String',
    '/device_0/sensor_0/Depth_0/image/metadata', {'data': text})
add('empty_string', T['std_msgs/msg/String'](data=''), 'std_msgs/msg/String', '/s', {'data': ''})
add('file_version', T['std_msgs/msg/UInt32'](data=4), 'std_msgs/msg/UInt32', '/file_version', {'data': 4})


# --- CompressedImage: color PNG and JPEG (Pillow) -------------------------------------------
def rgba_hex(img):
    return np.asarray(img.convert('RGBA'), dtype=np.uint8).tobytes().hex()


CI = T['sensor_msgs/msg/CompressedImage']
color = (rng.integers(0, 256, size=(6, 10, 3), dtype=np.uint8))
color[:, :5] = [200, 30, 90]  # flat areas keep JPEG close to the source
for fmt, pil, fname in [('rgb8; png compressed bgr8', 'PNG', 'png'), ('rgb8; jpeg compressed bgr8', 'JPEG', 'jpeg'),
                        ('png', 'PNG', 'png_bare')]:
    buf = io.BytesIO()
    PILImage.fromarray(color).save(buf, pil, **({'quality': 95} if pil == 'JPEG' else {}))
    payload = np.frombuffer(buf.getvalue(), dtype=np.uint8)
    decoded = PILImage.open(io.BytesIO(buf.getvalue()))
    add('compressed_' + fname, CI(header=header(1, 500, 'color'), format=fmt, data=payload),
        'sensor_msgs/msg/CompressedImage', '/camera/color/image_raw/compressed',
        {'header': header_json(1, 500, 'color'), 'format': fmt, 'data': payload.tobytes().hex(),
         'width': 10, 'height': 6, 'rgba': rgba_hex(decoded), 'lossy': pil == 'JPEG'})
gray = rng.integers(0, 256, size=(3, 5), dtype=np.uint8)
buf = io.BytesIO()
PILImage.fromarray(gray).save(buf, 'PNG')
payload = np.frombuffer(buf.getvalue(), dtype=np.uint8)
add('compressed_gray_png', CI(header=header(1, 0, 'ir'), format='mono8; png compressed mono8', data=payload),
    'sensor_msgs/msg/CompressedImage', '/camera/infra1/image_rect_raw/compressed',
    {'header': header_json(1, 0, 'ir'), 'format': 'mono8; png compressed mono8', 'data': payload.tobytes().hex(),
     'width': 5, 'height': 3, 'rgba': rgba_hex(PILImage.fromarray(gray)), 'lossy': False}, both=False)


# --- compressedDepth -------------------------------------------------------------------------
def png16(values):
    """A 16-bit gray PNG, by hand: signature, IHDR, one zlib IDAT of filter-0 rows, IEND."""
    h, w = values.shape
    def chunk(kind, body):
        return struct.pack('>I', len(body)) + kind + body + struct.pack('>I', zlib.crc32(kind + body) & 0xffffffff)
    raw = b''.join(b'\x00' + values[y].astype('>u2').tobytes() for y in range(h))
    return (b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, 16, 0, 0, 0, 0))
            + chunk(b'IDAT', zlib.compress(raw, 6)) + chunk(b'IEND', b''))


class RVL:
    """Wilson's RVL as rvl_codec.cpp writes it: 32-bit words (stored little-endian, as an int on
    x86) filled with 4-bit nibbles from the most significant end; a value is written 3 bits at a
    time, least significant first, the nibble's 4th bit set when more follow."""

    def __init__(self):
        self.words, self.word, self.nibbles = [], 0, 0

    def vle(self, value):
        while True:
            nibble = value & 7
            value >>= 3
            if value:
                nibble |= 8
            self.word = ((self.word << 4) | nibble) & 0xffffffff
            self.nibbles += 1
            if self.nibbles == 8:
                self.words.append(self.word)
                self.word, self.nibbles = 0, 0
            if not value:
                break

    def compress(self, values):
        flat = [int(v) for v in values.reshape(-1)]
        i, previous = 0, 0
        while i < len(flat):
            zeros = 0
            while i < len(flat) and flat[i] == 0:
                zeros += 1
                i += 1
            self.vle(zeros)
            nonzeros = 0
            while i + nonzeros < len(flat) and flat[i + nonzeros] != 0:
                nonzeros += 1
            self.vle(nonzeros)
            for _ in range(nonzeros):
                current = flat[i]
                i += 1
                delta = current - previous
                self.vle(((delta << 1) ^ (delta >> 31)) & 0xffffffff)
                previous = current
        if self.nibbles:
            self.words.append((self.word << (4 * (8 - self.nibbles))) & 0xffffffff)
        return b''.join(struct.pack('<I', w) for w in self.words)


def compressed_depth(name, encoding, codec, values, qa, qb, expected_meters, extra=None):
    h, w = values.shape
    config = struct.pack('<iff', 0, qa, qb)  # INV_DEPTH = 0
    image = png16(values) if codec == 'png' else struct.pack('<II', w, h) + RVL().compress(values)
    payload = np.frombuffer(config + image, dtype=np.uint8)
    fmt = f'{encoding}; compressedDepth {codec}'
    expected = {'header': header_json(2, 3, 'depth'), 'format': fmt, 'width': w, 'height': h,
                'values': [int(v) for v in values.reshape(-1)], 'quant_a': float(np.float32(qa)),
                'quant_b': float(np.float32(qb)), 'meters': expected_meters}
    if extra:
        expected.update(extra)
    add(name, CI(header=header(2, 3, 'depth'), format=fmt, data=payload), 'sensor_msgs/msg/CompressedImage',
        '/camera/depth/image_raw/compressedDepth', expected)


# 16UC1: raw millimeters, runs of zeros and big jumps (the zigzag's sign and multi-nibble values).
raw16 = rng.integers(300, 9000, size=(7, 9)).astype(np.uint16)
raw16[0, :4] = 0
raw16[3, 2:7] = 0
raw16[6, 8] = 0
raw16[5, 0] = 65535
raw16[5, 1] = 1
for codec in ('png', 'rvl'):
    compressed_depth('cdepth16_' + codec, '16UC1', codec, raw16, 0.0, 0.0,
                     [float(np.float32(v) * np.float32(0.001)) for v in raw16.reshape(-1)])
allzero = np.zeros((4, 6), dtype=np.uint16)
compressed_depth('cdepth16_rvl_zeros', '16UC1', 'rvl', allzero, 0.0, 0.0, [0.0] * 24)

# 32FC1: inverse depth with the publisher's defaults (depth_max 10 m, depth_quantization 100).
z0, dmax = np.float32(100.0), np.float32(10.0)
qa = np.float32(z0 * (z0 + np.float32(1.0)))
qb = np.float32(np.float32(1.0) - qa / dmax)
depth = rng.uniform(0.3, 9.9, size=(5, 6)).astype(np.float32)
depth[0, 0] = np.nan
depth[1, 2] = 12.0  # beyond depth_max: 0
with np.errstate(invalid='ignore'):
    inv = np.where(depth < dmax, qa / depth + qb, 0).astype(np.float32)
inv16 = np.where(np.isfinite(inv), inv, 0).astype(np.uint16)  # C++'s float -> unsigned short truncates
meters = []
for v in inv16.reshape(-1):
    m = qa / (np.float32(v) - qb) if v else np.float32(0)
    meters.append(float(np.float32(m)))
for codec in ('png', 'rvl'):
    compressed_depth('cdepth32_' + codec, '32FC1', codec, inv16, float(qa), float(qb), meters,
                     {'source_meters': [float(d) if np.isfinite(d) and d < dmax else 0.0 for d in depth.reshape(-1)]})

CDEPTH_FORMATS = ['16UC1; compressedDepth png', '16UC1; compressedDepth rvl', '32FC1; compressedDepth png',
                  '32FC1; compressedDepth rvl']  # the fuzz target's order (Fuzz/Sources/depthlens-fuzz)

if sys.argv[1] == '--seeds':
    import os
    for sub in ('cdr', 'cdepth'):
        os.makedirs(os.path.join(sys.argv[2], sub), exist_ok=True)
    for c in cases:
        name = c['name'].replace(' ', '_').replace('(', '').replace(')', '')
        data = bytes.fromhex(c['hex'])
        with open(os.path.join(sys.argv[2], 'cdr', name + '.cdr'), 'wb') as f:
            f.write(data)
        fmt = c['expected'].get('format', '')
        if fmt in CDEPTH_FORMATS and c['little_endian']:
            msg = ts.deserialize_cdr(data, c['type'])
            with open(os.path.join(sys.argv[2], 'cdepth', name), 'wb') as f:
                f.write(bytes([CDEPTH_FORMATS.index(fmt)]) + bytes(msg.data))
else:
    with open(sys.argv[1], 'w') as f:
        json.dump({'cases': cases}, f)
