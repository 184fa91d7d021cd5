/// The ROS 2 messages a `dds:` source reads and `publish` writes, in their DDS form: the
/// encapsulation header (2 bytes representation id, 2 bytes options) and the message in OMG CDR,
/// as rmw_cyclonedds puts them on the wire (type `sensor_msgs::msg::dds_::Image_` etc.).
///
/// A decoder is a function over bytes (STYLE 13): every length is checked against what is left,
/// alignment is relative to the byte after the encapsulation header, XCDR1 (8-byte alignment; what
/// ROS 2 sends) and plain XCDR2 (4-byte alignment) in either byte order. A sample shorter than its
/// fields say, an unknown representation or absurd counts throw `CaptureError.file` naming the
/// topic; nothing traps. Bytes after the last field are ignored.
public enum ROS2DDS {
    /// builtin_interfaces/Time.
    public struct Time: Sendable, Equatable {
        public var sec: Int32
        public var nanosec: UInt32
        public init(sec: Int32, nanosec: UInt32) { self.sec = sec; self.nanosec = nanosec }
        public var seconds: Double { Double(sec) + Double(nanosec) * 1e-9 }
        /// The nearest stamp to `seconds` (clamped to Int32 seconds).
        public init(seconds: Double) {
            let s = seconds.isFinite ? min(max(seconds, Double(Int32.min)), Double(Int32.max)) : 0
            var whole = s.rounded(.down)
            var ns = ((s - whole) * 1e9).rounded()
            if ns >= 1e9 { whole += 1; ns -= 1e9 }
            self.sec = Int32(clamping: Int64(whole))
            self.nanosec = UInt32(max(0, ns))
        }
    }

    /// std_msgs/Header (ROS 2: no seq).
    public struct Header: Sendable, Equatable {
        public var stamp: Time
        public var frameID: String
        public init(stamp: Time, frameID: String) { self.stamp = stamp; self.frameID = frameID }
    }

    /// sensor_msgs/Image; `data` is the range of the pixel bytes in the sample.
    public struct Image: Sendable, Equatable {
        public var header: Header
        public var height: Int
        public var width: Int
        public var encoding: String
        public var isBigEndian: Bool
        public var step: Int
        public var data: Range<Int>
    }

    /// sensor_msgs/CompressedImage; `data` is the range of the compressed bytes in the sample.
    public struct CompressedImage: Sendable, Equatable {
        public var header: Header
        public var format: String
        public var data: Range<Int>
    }

    /// sensor_msgs/CameraInfo (region of interest left out).
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
        public init(header: Header, height: Int, width: Int, distortionModel: String, D: [Double], K: [Double],
                    R: [Double], P: [Double], binningX: UInt32 = 0, binningY: UInt32 = 0) {
            self.header = header; self.height = height; self.width = width; self.distortionModel = distortionModel
            self.D = D; self.K = K; self.R = R; self.P = P; self.binningX = binningX; self.binningY = binningY
        }
    }

    /// geometry_msgs/TransformStamped: `childFrameID`'s points in `header.frameID` are
    /// R·p + translation, R from `rotation` (x, y, z, w).
    public struct TransformStamped: Sendable, Equatable {
        public var header: Header
        public var childFrameID: String
        public var translation: SIMD3<Double>
        public var rotation: SIMD4<Double>
        public init(header: Header, childFrameID: String, translation: SIMD3<Double>, rotation: SIMD4<Double>) {
            self.header = header; self.childFrameID = childFrameID; self.translation = translation; self.rotation = rotation
        }
    }

    /// ROS 2 type names as DDS sees them.
    public enum TypeName {
        public static let image = "sensor_msgs::msg::dds_::Image_"
        public static let compressedImage = "sensor_msgs::msg::dds_::CompressedImage_"
        public static let cameraInfo = "sensor_msgs::msg::dds_::CameraInfo_"
        public static let tfMessage = "tf2_msgs::msg::dds_::TFMessage_"
    }

    /// The DDS topic of a ROS 2 topic: `rt` and the absolute name (`/camera/color/image_raw` →
    /// `rt/camera/color/image_raw`).
    public static func ddsTopic(_ rosTopic: String) -> String {
        "rt" + (rosTopic.hasPrefix("/") ? rosTopic : "/" + rosTopic)
    }

    /// Most elements any sequence or string of these messages may claim (a D of 1000 doubles,
    /// a 1000-transform TF message and a 64 KiB frame id are far beyond real ones).
    static let maxElements = 1 << 16

    // MARK: Reading

    /// Bounds-checked CDR reading over one sample (its encapsulation header first).
    struct Reader {
        let bytes: UnsafeRawBufferPointer
        let topic: String
        let type: String
        var at = 4
        let little: Bool
        let maxAlign: Int

        init(_ bytes: UnsafeRawBufferPointer, topic: String, type: String) throws {
            self.bytes = bytes
            self.topic = topic
            self.type = type
            guard bytes.count >= 4 else {
                throw CaptureError.file(path: "dds:\(topic)", problem: "\(type) sample of \(bytes.count) bytes has no encapsulation header")
            }
            switch (bytes[0], bytes[1]) {
            case (0, 0): little = false; maxAlign = 8     // CDR_BE
            case (0, 1): little = true; maxAlign = 8      // CDR_LE
            case (0, 6): little = false; maxAlign = 4     // CDR2_BE
            case (0, 7): little = true; maxAlign = 4      // CDR2_LE
            default:
                throw CaptureError.file(path: "dds:\(topic)", problem: "\(type) sample has representation "
                                        + "\(bytes[0]) \(bytes[1]), not plain CDR (0 0, 0 1) or XCDR2 (0 6, 0 7)")
            }
        }

        func fail(_ problem: String) -> CaptureError { .file(path: "dds:\(topic)", problem: "\(type): \(problem)") }

        mutating func align(_ n: Int) throws {
            let a = min(n, maxAlign)
            let pad = (a - (at - 4) % a) % a
            guard pad <= bytes.count - at else { throw fail("sample ends at byte \(bytes.count), inside its fields") }
            at += pad
        }

        mutating func need(_ n: Int) throws {
            guard n >= 0, n <= bytes.count - at else {
                throw fail("sample is shorter than its fields say (needs \(n) bytes at offset \(at), \(bytes.count - at) left)")
            }
        }

        mutating func u8() throws -> UInt8 {
            try need(1)
            defer { at += 1 }
            return bytes[at]
        }

        mutating func u32() throws -> UInt32 {
            try align(4)
            try need(4)
            defer { at += 4 }
            let v = bytes.loadUnaligned(fromByteOffset: at, as: UInt32.self)
            return little ? UInt32(littleEndian: v) : UInt32(bigEndian: v)
        }

        mutating func f64() throws -> Double {
            try align(8)
            try need(8)
            defer { at += 8 }
            let v = bytes.loadUnaligned(fromByteOffset: at, as: UInt64.self)
            return Double(bitPattern: little ? UInt64(littleEndian: v) : UInt64(bigEndian: v))
        }

        /// A sequence length, at most `limit`.
        mutating func count(_ what: String, limit: Int = ROS2DDS.maxElements) throws -> Int {
            let n = Int(try u32())
            guard n <= limit else { throw fail("\(what) claims \(n) elements (at most \(limit))") }
            return n
        }

        /// A CDR string: u32 length including its terminating nul, the bytes, the nul.
        mutating func string(_ what: String) throws -> String {
            let n = try count(what)
            try need(n)
            defer { at += n }
            let end = n > 0 && bytes[at + n - 1] == 0 ? n - 1 : n
            return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[at..<(at + end)]), as: UTF8.self)
        }

        mutating func octets(_ what: String) throws -> Range<Int> {
            let n = Int(try u32())
            try need(n)
            defer { at += n }
            return at..<(at + n)
        }

        mutating func f64s(_ n: Int) throws -> [Double] {
            var out: [Double] = []
            out.reserveCapacity(n)
            for _ in 0..<n { out.append(try f64()) }
            return out
        }

        mutating func header() throws -> Header {
            let sec = Int32(bitPattern: try u32())
            let ns = try u32()
            return Header(stamp: Time(sec: sec, nanosec: ns), frameID: try string("frame_id"))
        }
    }

    public static func image(_ bytes: UnsafeRawBufferPointer, topic: String) throws -> Image {
        var r = try Reader(bytes, topic: topic, type: "sensor_msgs/Image")
        let h = try r.header()
        let height = Int(try r.u32()), width = Int(try r.u32())
        let encoding = try r.string("encoding")
        let big = try r.u8() != 0
        let step = Int(try r.u32())
        let data = try r.octets("data")
        let (needed, overflow) = step.multipliedReportingOverflow(by: height)
        guard !overflow, needed <= data.count else {
            throw r.fail("holds \(data.count) bytes, its step \(step) × height \(height) needs more")
        }
        return Image(header: h, height: height, width: width, encoding: encoding, isBigEndian: big, step: step, data: data)
    }

    public static func compressedImage(_ bytes: UnsafeRawBufferPointer, topic: String) throws -> CompressedImage {
        var r = try Reader(bytes, topic: topic, type: "sensor_msgs/CompressedImage")
        let h = try r.header()
        let format = try r.string("format")
        return CompressedImage(header: h, format: format, data: try r.octets("data"))
    }

    public static func cameraInfo(_ bytes: UnsafeRawBufferPointer, topic: String) throws -> CameraInfo {
        var r = try Reader(bytes, topic: topic, type: "sensor_msgs/CameraInfo")
        let h = try r.header()
        let height = Int(try r.u32()), width = Int(try r.u32())
        let model = try r.string("distortion_model")
        let d = try r.f64s(try r.count("d", limit: 64))
        let k = try r.f64s(9), rr = try r.f64s(9), p = try r.f64s(12)
        let bx = try r.u32(), by = try r.u32()
        return CameraInfo(header: h, height: height, width: width, distortionModel: model, D: d, K: k, R: rr, P: p,
                          binningX: bx, binningY: by)
    }

    public static func tfMessage(_ bytes: UnsafeRawBufferPointer, topic: String) throws -> [TransformStamped] {
        var r = try Reader(bytes, topic: topic, type: "tf2_msgs/TFMessage")
        let n = try r.count("transforms", limit: 4096)
        var out: [TransformStamped] = []
        for _ in 0..<n {
            let h = try r.header()
            let child = try r.string("child_frame_id")
            let t = try r.f64s(3), q = try r.f64s(4)
            out.append(TransformStamped(header: h, childFrameID: child, translation: SIMD3(t[0], t[1], t[2]),
                                        rotation: SIMD4(q[0], q[1], q[2], q[3])))
        }
        return out
    }

    // MARK: Writing

    /// Little-endian XCDR1 (what ROS 2 writes), encapsulation header included.
    public struct Writer {
        public private(set) var bytes: [UInt8] = [0, 1, 0, 0]

        public init(reserving capacity: Int = 256) { bytes.reserveCapacity(capacity + 4) }

        mutating func align(_ n: Int) {
            while (bytes.count - 4) % n != 0 { bytes.append(0) }
        }
        mutating func u8(_ v: UInt8) { bytes.append(v) }
        mutating func u32(_ v: UInt32) {
            align(4)
            withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) }
        }
        mutating func f64(_ v: Double) {
            align(8)
            withUnsafeBytes(of: v.bitPattern.littleEndian) { bytes.append(contentsOf: $0) }
        }
        mutating func string(_ s: String) {
            let utf8 = Array(s.utf8)
            u32(UInt32(utf8.count + 1))
            bytes.append(contentsOf: utf8)
            bytes.append(0)
        }
        mutating func header(_ h: Header) {
            u32(UInt32(bitPattern: h.stamp.sec))
            u32(h.stamp.nanosec)
            string(h.frameID)
        }
        /// A u32 count followed by `count` bytes that `fill` writes (pixels written in place).
        mutating func octets(count: Int, _ fill: (UnsafeMutableRawBufferPointer) -> Void) {
            u32(UInt32(count))
            let start = bytes.count
            bytes.append(contentsOf: repeatElement(0, count: count))
            bytes.withUnsafeMutableBytes { fill(UnsafeMutableRawBufferPointer(rebasing: $0[start..<(start + count)])) }
        }
    }

    /// An Image sample whose `step × height` pixel bytes `fill` writes.
    public static func encodeImage(header: Header, width: Int, height: Int, encoding: String, step: Int,
                                   fill: (UnsafeMutableRawBufferPointer) -> Void) -> [UInt8] {
        var w = Writer(reserving: 64 + header.frameID.utf8.count + step * height)
        w.header(header)
        w.u32(UInt32(height))
        w.u32(UInt32(width))
        w.string(encoding)
        w.u8(0)
        w.u32(UInt32(step))
        w.octets(count: step * height, fill)
        return w.bytes
    }

    public static func encodeCompressedImage(header: Header, format: String, data: [UInt8]) -> [UInt8] {
        var w = Writer(reserving: 64 + data.count)
        w.header(header)
        w.string(format)
        w.octets(count: data.count) { $0.copyBytes(from: data) }
        return w.bytes
    }

    public static func encodeCameraInfo(_ info: CameraInfo) -> [UInt8] {
        var w = Writer()
        w.header(info.header)
        w.u32(UInt32(info.height))
        w.u32(UInt32(info.width))
        w.string(info.distortionModel)
        w.u32(UInt32(info.D.count))
        for v in info.D { w.f64(v) }
        for v in info.K + info.R + info.P { w.f64(v) }
        w.u32(info.binningX)
        w.u32(info.binningY)
        for _ in 0..<4 { w.u32(0) }  // roi: x_offset, y_offset, height, width
        w.u8(0)                      // roi.do_rectify
        return w.bytes
    }

    public static func encodeTFMessage(_ transforms: [TransformStamped]) -> [UInt8] {
        var w = Writer()
        w.u32(UInt32(transforms.count))
        for t in transforms {
            w.header(t.header)
            w.string(t.childFrameID)
            for v in [t.translation.x, t.translation.y, t.translation.z, t.rotation.x, t.rotation.y, t.rotation.z, t.rotation.w] {
                w.f64(v)
            }
        }
        return w.bytes
    }
}
