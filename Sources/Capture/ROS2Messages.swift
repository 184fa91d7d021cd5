/// ROS 2 messages depthlens reads from rosbag2 recordings, decoded from CDR (`CDRReader`: either
/// byte order, alignment from the end of the encapsulation header, every length checked). A message
/// shorter than its fields is a `CaptureError.file` naming the file, the type and the topic; bytes
/// after the last field are ignored. Field order and types as in ROS 2 Humble's `.msg` files.
public enum ROS2Message {
    /// builtin_interfaces/msg/Time.
    public struct Time: Sendable, Equatable, Comparable {
        public var sec: Int32
        public var nanosec: UInt32
        public init(sec: Int32, nanosec: UInt32) { self.sec = sec; self.nanosec = nanosec }
        public var nanoseconds: Int64 { Int64(sec) * 1_000_000_000 + Int64(nanosec) }
        public var seconds: Double { Double(sec) + Double(nanosec) * 1e-9 }
        /// The nearest stamp to `seconds` (clamped to Int32 seconds; NaN and infinities give 0).
        public init(seconds: Double) {
            let s = seconds.isFinite ? min(max(seconds, Double(Int32.min)), Double(Int32.max)) : 0
            var whole = s.rounded(.down)
            var ns = ((s - whole) * 1e9).rounded()
            if ns >= 1e9 { whole += 1; ns -= 1e9 }
            self.init(sec: Int32(clamping: Int64(whole)), nanosec: UInt32(max(0, ns)))
        }
        /// The stamp of `nanoseconds` since the epoch (ROS 2's and MCAP's log time).
        public init(nanoseconds: Int64) {
            let (q, r) = nanoseconds.quotientAndRemainder(dividingBy: 1_000_000_000)
            let (sec, ns) = r < 0 ? (q - 1, r + 1_000_000_000) : (q, r)
            self.init(sec: Int32(clamping: sec), nanosec: UInt32(ns))
        }
        public static func < (a: Time, b: Time) -> Bool { a.nanoseconds < b.nanoseconds }
    }

    /// std_msgs/msg/Header (ROS 2 has no `seq`).
    public struct Header: Sendable, Equatable {
        public var stamp: Time
        public var frameID: String
        public init(stamp: Time, frameID: String) { self.stamp = stamp; self.frameID = frameID }
    }

    /// sensor_msgs/msg/Image.
    public struct Image: Sendable {
        public var header: Header
        public var height: Int
        public var width: Int
        public var encoding: String
        public var isBigEndian: Bool
        /// Bytes per row.
        public var step: Int
        /// The pixel bytes; at least `step * height` of them (checked).
        public var data: ArraySlice<UInt8>
    }

    /// sensor_msgs/msg/CompressedImage: `format` says what `data` holds ("jpeg", "png",
    /// "rgb8; jpeg compressed bgr8", "16UC1; compressedDepth png", …).
    public struct CompressedImage: Sendable {
        public var header: Header
        public var format: String
        public var data: ArraySlice<UInt8>
    }

    /// sensor_msgs/msg/RegionOfInterest.
    public struct RegionOfInterest: Sendable, Equatable {
        public var xOffset: UInt32
        public var yOffset: UInt32
        public var height: UInt32
        public var width: UInt32
        public var doRectify: Bool
        public init(xOffset: UInt32 = 0, yOffset: UInt32 = 0, height: UInt32 = 0, width: UInt32 = 0, doRectify: Bool = false) {
            self.xOffset = xOffset; self.yOffset = yOffset; self.height = height; self.width = width; self.doRectify = doRectify
        }
    }

    /// sensor_msgs/msg/CameraInfo.
    public struct CameraInfo: Sendable, Equatable {
        public var header: Header
        public var height: Int
        public var width: Int
        public var distortionModel: String
        public var D: [Double]
        public var K: [Double]
        public var R: [Double]
        public var P: [Double]
        public var binningX: UInt32
        public var binningY: UInt32
        public var roi: RegionOfInterest
        public init(header: Header, height: Int, width: Int, distortionModel: String, D: [Double], K: [Double], R: [Double],
                    P: [Double], binningX: UInt32 = 0, binningY: UInt32 = 0, roi: RegionOfInterest = RegionOfInterest()) {
            self.header = header; self.height = height; self.width = width; self.distortionModel = distortionModel
            self.D = D; self.K = K; self.R = R; self.P = P; self.binningX = binningX; self.binningY = binningY; self.roi = roi
        }
    }

    /// geometry_msgs/msg/TransformStamped: the pose of `childFrameID` in `header.frameID`
    /// (p_parent = R·p_child + t).
    public struct TransformStamped: Sendable, Equatable {
        public var header: Header
        public var childFrameID: String
        public var transform: ROSMessage.Transform
        public init(header: Header, childFrameID: String, transform: ROSMessage.Transform) {
            self.header = header; self.childFrameID = childFrameID; self.transform = transform
        }
    }

    /// sensor_msgs/msg/Imu (`ROS2Source`'s IMU samples; see `ROSMessage.Imu`).
    public struct Imu: Sendable, Equatable {
        public var header: Header
        /// x, y, z, w.
        public var orientation: SIMD4<Double>
        public var orientationCovariance: [Double]
        public var angularVelocity: SIMD3<Double>
        public var angularVelocityCovariance: [Double]
        public var linearAcceleration: SIMD3<Double>
        public var linearAccelerationCovariance: [Double]
    }

    // MARK: Decoders

    /// The reader of one message; `file` and `topic` name it in errors.
    public static func reader(_ bytes: [UInt8], file: String, topic: String, type: String) throws -> CDRReader {
        try CDRReader(bytes: bytes, name: file, what: "\(type) message on \(topic)")
    }

    static func time(_ r: inout CDRReader) throws -> Time {
        Time(sec: try r.i32(), nanosec: try r.u32())
    }

    static func header(_ r: inout CDRReader) throws -> Header {
        Header(stamp: try time(&r), frameID: try r.string())
    }

    static func vector3(_ r: inout CDRReader) throws -> SIMD3<Double> {
        let v = try r.f64s(3)
        return SIMD3(v[0], v[1], v[2])
    }

    static func quaternion(_ r: inout CDRReader) throws -> SIMD4<Double> {
        let v = try r.f64s(4)
        return SIMD4(v[0], v[1], v[2], v[3])
    }

    /// Only the header of a message that starts with one (Image, CompressedImage, CameraInfo, Imu):
    /// what the source needs to order frames without reading their pixels.
    public static func header(_ bytes: [UInt8], file: String, topic: String, type: String) throws -> Header {
        var r = try reader(bytes, file: file, topic: topic, type: type)
        return try header(&r)
    }

    public static func image(_ bytes: [UInt8], file: String, topic: String) throws -> Image {
        var r = try reader(bytes, file: file, topic: topic, type: "sensor_msgs/msg/Image")
        let f = try imageFields(&r)
        let data = try r.byteSequence()
        try checkImageData(f, count: data.count, file: file, topic: topic)
        return Image(header: f.header, height: f.height, width: f.width, encoding: f.encoding, isBigEndian: f.isBigEndian,
                     step: f.step, data: bytes[data])
    }

    /// An Image's fields before its pixels.
    struct ImageFields {
        var header: Header
        var height: Int, width: Int
        var encoding: String
        var isBigEndian: Bool
        var step: Int
    }

    static func imageFields(_ r: inout CDRReader) throws -> ImageFields {
        let h = try header(&r)
        let height = Int(try r.u32()), width = Int(try r.u32())
        let encoding = try r.string()
        let big = try r.u8() != 0
        return ImageFields(header: h, height: height, width: width, encoding: encoding, isBigEndian: big, step: Int(try r.u32()))
    }

    static func checkImageData(_ f: ImageFields, count: Int, file: String, topic: String) throws {
        let (needed, overflow) = f.step.multipliedReportingOverflow(by: f.height)
        guard !overflow, needed <= count else {
            throw CaptureError.file(path: file, problem: "sensor_msgs/msg/Image on \(topic) holds \(count) bytes, "
                                    + "its step \(f.step) × height \(f.height) needs more")
        }
    }

    /// sensor_msgs/msg/Image over bytes that stay where they are (a DDS sample's buffer, valid while
    /// the caller holds it): the same fields and checks as `image`, but the pixels are not copied
    /// (`pixels` points into `raw`). The fields are decoded from a copy of the first 1 KB; a message
    /// whose fields are longer (a long frame id) is decoded whole, copied, as `image` does.
    public static func imageView(_ raw: UnsafeRawBufferPointer, file: String, topic: String) throws -> ImageView {
        let prefix = Array(raw.prefix(1024))
        do {
            var r = try reader(prefix, file: file, topic: topic, type: "sensor_msgs/msg/Image")
            let f = try imageFields(&r)
            // The pixel sequence (byteSequence's count and bytes; the bytes lie past the prefix).
            let count = Int(try r.u32()), start = r.at
            guard count <= raw.count - start else {
                throw CaptureError.file(path: file, problem: "sensor_msgs/msg/Image message on \(topic) is shorter than its fields "
                                        + "(needs \(count) more bytes at offset \(start), \(raw.count - start) left)")
            }
            try checkImageData(f, count: count, file: file, topic: topic)
            return ImageView(fields: f, pixels: UnsafeRawBufferPointer(rebasing: raw[start..<(start + count)]))
        } catch where prefix.count < raw.count {
            let m = try image(Array(raw), file: file, topic: topic)
            // The slice's indices are offsets in the copy, so in `raw`.
            return ImageView(fields: ImageFields(header: m.header, height: m.height, width: m.width, encoding: m.encoding,
                                                 isBigEndian: m.isBigEndian, step: m.step),
                             pixels: UnsafeRawBufferPointer(rebasing: raw[m.data.startIndex..<m.data.endIndex]))
        }
    }

    /// An Image whose pixels are where its message is (`imageView`).
    public struct ImageView {
        public var header: Header
        public var height: Int
        public var width: Int
        public var encoding: String
        public var isBigEndian: Bool
        public var step: Int
        /// At least `step * height` bytes (checked), valid as long as the message's bytes are.
        public var pixels: UnsafeRawBufferPointer

        init(fields f: ImageFields, pixels: UnsafeRawBufferPointer) {
            header = f.header; height = f.height; width = f.width; encoding = f.encoding; isBigEndian = f.isBigEndian
            step = f.step; self.pixels = pixels
        }
    }

    public static func compressedImage(_ bytes: [UInt8], file: String, topic: String) throws -> CompressedImage {
        var r = try reader(bytes, file: file, topic: topic, type: "sensor_msgs/msg/CompressedImage")
        let h = try header(&r)
        let format = try r.string()
        return CompressedImage(header: h, format: format, data: bytes[try r.byteSequence()])
    }

    public static func cameraInfo(_ bytes: [UInt8], file: String, topic: String) throws -> CameraInfo {
        var r = try reader(bytes, file: file, topic: topic, type: "sensor_msgs/msg/CameraInfo")
        let h = try header(&r)
        let height = Int(try r.u32()), width = Int(try r.u32())
        let model = try r.string()
        let d = try r.f64Sequence()
        let k = try r.f64s(9), rr = try r.f64s(9), p = try r.f64s(12)
        let bx = try r.u32(), by = try r.u32()
        let roi = RegionOfInterest(xOffset: try r.u32(), yOffset: try r.u32(), height: try r.u32(), width: try r.u32(),
                                   doRectify: try r.bool())
        return CameraInfo(header: h, height: height, width: width, distortionModel: model, D: d, K: k, R: rr, P: p,
                          binningX: bx, binningY: by, roi: roi)
    }

    /// tf2_msgs/msg/TFMessage: its geometry_msgs/msg/TransformStamped[].
    public static func tfMessage(_ bytes: [UInt8], file: String, topic: String) throws -> [TransformStamped] {
        var r = try reader(bytes, file: file, topic: topic, type: "tf2_msgs/msg/TFMessage")
        // Each element is at least a header (8 + 4) + a child frame id (4) + 7 float64s.
        let n = try r.count(elementSize: 8 + 4 + 4 + 56)
        var out: [TransformStamped] = []
        out.reserveCapacity(n)
        for _ in 0..<n {
            let h = try header(&r)
            let child = try r.string()
            let t = try vector3(&r), q = try quaternion(&r)
            out.append(TransformStamped(header: h, childFrameID: child, transform: ROSMessage.Transform(translation: t, rotation: q)))
        }
        return out
    }

    public static func imu(_ bytes: [UInt8], file: String, topic: String) throws -> Imu {
        var r = try reader(bytes, file: file, topic: topic, type: "sensor_msgs/msg/Imu")
        let h = try header(&r)
        let o = try quaternion(&r), oc = try r.f64s(9)
        let w = try vector3(&r), wc = try r.f64s(9)
        let a = try vector3(&r), ac = try r.f64s(9)
        return Imu(header: h, orientation: o, orientationCovariance: oc, angularVelocity: w, angularVelocityCovariance: wc,
                   linearAcceleration: a, linearAccelerationCovariance: ac)
    }

    /// std_msgs/msg/String.
    public static func string(_ bytes: [UInt8], file: String, topic: String) throws -> String {
        var r = try reader(bytes, file: file, topic: topic, type: "std_msgs/msg/String")
        return try r.string()
    }

    /// std_msgs/msg/UInt32 (librealsense's `/file_version`).
    public static func uint32(_ bytes: [UInt8], file: String, topic: String) throws -> UInt32 {
        var r = try reader(bytes, file: file, topic: topic, type: "std_msgs/msg/UInt32")
        return try r.u32()
    }

    /// std_msgs/msg/Float32.
    public static func float32(_ bytes: [UInt8], file: String, topic: String) throws -> Float {
        var r = try reader(bytes, file: file, topic: topic, type: "std_msgs/msg/Float32")
        return try r.f32()
    }

    /// geometry_msgs/msg/Transform (librealsense's ROS 1 `tf/<group>` topics after `rosbags-convert`).
    public static func transform(_ bytes: [UInt8], file: String, topic: String) throws -> ROSMessage.Transform {
        var r = try reader(bytes, file: file, topic: topic, type: "geometry_msgs/msg/Transform")
        return ROSMessage.Transform(translation: try vector3(&r), rotation: try quaternion(&r))
    }

    /// diagnostic_msgs/msg/KeyValue (librealsense's ROS 1 device and sensor info, converted).
    public static func keyValue(_ bytes: [UInt8], file: String, topic: String) throws -> ROSMessage.KeyValue {
        var r = try reader(bytes, file: file, topic: topic, type: "diagnostic_msgs/msg/KeyValue")
        return ROSMessage.KeyValue(key: try r.string(), value: try r.string())
    }

    /// realsense_msgs/msg/StreamInfo (librealsense's ROS 1 stream info, converted).
    public static func streamInfo(_ bytes: [UInt8], file: String, topic: String) throws -> ROSMessage.StreamInfo {
        var r = try reader(bytes, file: file, topic: topic, type: "realsense_msgs/msg/StreamInfo")
        return ROSMessage.StreamInfo(fps: try r.u32(), encoding: try r.string(), isRecommended: try r.bool())
    }

    // MARK: Encoders (CDRWriter: little-endian plain CDR, what rmw and rosbag2 write)

    static func write(_ h: Header, _ w: inout CDRWriter) {
        w.i32(h.stamp.sec)
        w.u32(h.stamp.nanosec)
        w.string(h.frameID)
    }

    /// A sensor_msgs/msg/Image whose `step × height` pixel bytes `fill` writes in place.
    public static func encodeImage(header: Header, width: Int, height: Int, encoding: String, step: Int,
                                   fill: (UnsafeMutableRawBufferPointer) -> Void) -> [UInt8] {
        withoutActuallyEscaping(fill) { fill in
            imageEncoding(header: header, width: width, height: height, encoding: encoding, step: step, fill: fill).bytes
        }
    }

    /// A sensor_msgs/msg/Image to be written wherever its bytes go (`write(into:)`): a DDS sample's
    /// own buffer, without a copy in between (`DDSParticipant.write(_:_:topic:)`), or an array.
    public struct ImageEncoding {
        /// The encapsulation header and every field before the pixels, their length included.
        public let head: [UInt8]
        /// Pixel bytes after `head` (step × height).
        public let pixelBytes: Int
        let fill: (UnsafeMutableRawBufferPointer) -> Void
        /// The message's size in bytes.
        public var count: Int { head.count + pixelBytes }

        /// Writes the message into `out`, which holds exactly `count` bytes.
        public func write(into out: UnsafeMutableRawBufferPointer) {
            precondition(out.count == count, "ImageEncoding.write: \(out.count) bytes for a \(count)-byte message")
            head.withUnsafeBytes { out.copyMemory(from: $0) }
            fill(UnsafeMutableRawBufferPointer(rebasing: out[head.count...]))
        }

        /// The message as an array (the pixel bytes cleared before `fill`, as `CDRWriter` does).
        public var bytes: [UInt8] {
            var out = [UInt8](repeating: 0, count: count)
            out.withUnsafeMutableBytes { write(into: $0) }
            return out
        }
    }

    /// A sensor_msgs/msg/Image whose `step × height` pixel bytes `fill` writes when it is written
    /// (every one of them: a DDS sample's buffer is not cleared first).
    public static func imageEncoding(header: Header, width: Int, height: Int, encoding: String, step: Int,
                                     fill: @escaping (UnsafeMutableRawBufferPointer) -> Void) -> ImageEncoding {
        var w = CDRWriter(reserving: 64 + header.frameID.utf8.count + encoding.utf8.count)
        write(header, &w)
        w.u32(UInt32(height))
        w.u32(UInt32(width))
        w.string(encoding)
        w.bool(false)  // is_bigendian
        w.u32(UInt32(step))
        w.u32(UInt32(step * height))   // the data's length (a uint8[] sequence); the bytes follow
        return ImageEncoding(head: w.bytes, pixelBytes: step * height, fill: fill)
    }

    /// A sensor_msgs/msg/CompressedImage.
    public static func encodeCompressedImage(header: Header, format: String, data: [UInt8]) -> [UInt8] {
        var w = CDRWriter(reserving: 64 + header.frameID.utf8.count + format.utf8.count + data.count)
        write(header, &w)
        w.string(format)
        w.byteSequence(data)
        return w.bytes
    }

    /// A sensor_msgs/msg/CameraInfo (K, R, P must hold 9, 9 and 12 values).
    public static func encodeCameraInfo(_ info: CameraInfo) -> [UInt8] {
        precondition(info.K.count == 9 && info.R.count == 9 && info.P.count == 12, "CameraInfo K, R, P must hold 9, 9, 12 values")
        var w = CDRWriter()
        write(info.header, &w)
        w.u32(UInt32(info.height))
        w.u32(UInt32(info.width))
        w.string(info.distortionModel)
        w.f64Sequence(info.D)
        w.f64s(info.K)
        w.f64s(info.R)
        w.f64s(info.P)
        w.u32(info.binningX)
        w.u32(info.binningY)
        w.u32(info.roi.xOffset)
        w.u32(info.roi.yOffset)
        w.u32(info.roi.height)
        w.u32(info.roi.width)
        w.bool(info.roi.doRectify)
        return w.bytes
    }

    /// A tf2_msgs/msg/TFMessage.
    public static func encodeTFMessage(_ transforms: [TransformStamped]) -> [UInt8] {
        var w = CDRWriter()
        w.u32(UInt32(transforms.count))
        for t in transforms {
            write(t.header, &w)
            w.string(t.childFrameID)
            let (p, q) = (t.transform.translation, t.transform.rotation)
            w.f64s([p.x, p.y, p.z, q.x, q.y, q.z, q.w])
        }
        return w.bytes
    }

    /// librealsense's `key=value;key=value;` strings (stream info, options, per-frame metadata,
    /// camera_info of its first ROS 2 writer, `tf/ref_N`): pairs separated by `;`, key and value by
    /// the first `=`, both trimmed of spaces; a pair without `=` is skipped, a later key replaces an
    /// earlier one.
    public static func keyValues(_ text: String) -> [String: String] {
        var out: [String: String] = [:]
        for pair in text.split(separator: ";") {
            guard let eq = pair.firstIndex(of: "=") else { continue }
            let key = pair[..<eq].trimmingCharacters(in: " \t\n"), value = pair[pair.index(after: eq)...].trimmingCharacters(in: " \t\n")
            guard !key.isEmpty else { continue }
            out[key] = value
        }
        return out
    }
}

private extension Substring {
    func trimmingCharacters(in set: String) -> String {
        var s = self
        while let f = s.first, set.contains(f) { s.removeFirst() }
        while let l = s.last, set.contains(l) { s.removeLast() }
        return String(s)
    }
}
