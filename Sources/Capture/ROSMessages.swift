/// ROS1 messages depthlens reads from bags, decoded from their serialized form (little-endian;
/// strings and variable-length arrays carry a u32 length; fixed-length arrays none). Every read is
/// bounds-checked: a message shorter than its fields say is a `CaptureError.file` naming the bag,
/// the topic and the problem. Bytes after the last field are ignored (librealsense's own writers
/// append fields some versions do not declare).
public enum ROSMessage {
    /// std_msgs/Header.
    public struct Header: Sendable, Equatable {
        public var seq: UInt32
        public var stamp: RosBag.Time
        public var frameID: String
    }

    /// sensor_msgs/Image.
    public struct Image: Sendable {
        public var header: Header
        public var height: Int
        public var width: Int
        public var encoding: String
        public var isBigEndian: Bool
        /// Bytes per row.
        public var step: Int
        /// The pixel bytes, `step * height` of them (checked).
        public var data: ArraySlice<UInt8>
    }

    /// sensor_msgs/CameraInfo (the fields depthlens uses, and the rest decoded for completeness).
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
    }

    /// geometry_msgs/Transform: translation (meters) and rotation quaternion (x, y, z, w).
    public struct Transform: Sendable, Equatable {
        public var translation: SIMD3<Double>
        /// x, y, z, w.
        public var rotation: SIMD4<Double>
        public init(translation: SIMD3<Double>, rotation: SIMD4<Double>) { self.translation = translation; self.rotation = rotation }

        /// The rotation as a row-major 3×3 matrix (the standard unit-quaternion formula, normalized).
        public var rotationMatrix: [Double] {
            var q = rotation
            let n = (q * q).sum().squareRoot()
            if n > 0 && n.isFinite { q /= n } else { q = SIMD4(0, 0, 0, 1) }
            let (x, y, z, w) = (q.x, q.y, q.z, q.w)
            return [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w),
                    2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w),
                    2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]
        }
    }

    /// diagnostic_msgs/KeyValue.
    public struct KeyValue: Sendable, Equatable {
        public var key: String
        public var value: String
    }

    /// sensor_msgs/Imu: orientation (x, y, z, w), angular velocity (rad/s), linear acceleration
    /// (m/s²), each with its 3×3 covariance (row-major; element 0 is -1 when the field is not
    /// given, by ROS's convention).
    public struct Imu: Sendable, Equatable {
        public var header: Header
        public var orientation: SIMD4<Double>
        public var orientationCovariance: [Double]
        public var angularVelocity: SIMD3<Double>
        public var angularVelocityCovariance: [Double]
        public var linearAcceleration: SIMD3<Double>
        public var linearAccelerationCovariance: [Double]
    }

    /// realsense_msgs/StreamInfo (librealsense's per-stream fps and encoding).
    public struct StreamInfo: Sendable, Equatable {
        public var fps: UInt32
        public var encoding: String
        public var isRecommended: Bool
    }

    // MARK: Decoders

    static func reader(_ bytes: [UInt8], bag: String, topic: String, type: String) -> ByteReader {
        ByteReader(bytes: bytes, name: bag, what: "\(type) message on \(topic)")
    }

    static func header(_ r: inout ByteReader) throws -> Header {
        let seq = try r.u32()
        let stamp = RosBag.Time(sec: try r.u32(), nsec: try r.u32())
        return Header(seq: seq, stamp: stamp, frameID: try r.string())
    }

    /// The header stamp of a message that starts with a `std_msgs/Header` (an image), without the rest.
    public static func stamp(_ bytes: [UInt8], bag: String, topic: String) throws -> RosBag.Time {
        var r = reader(bytes, bag: bag, topic: topic, type: "sensor_msgs/Image")
        return try header(&r).stamp
    }

    public static func image(_ bytes: [UInt8], bag: String, topic: String) throws -> Image {
        var r = reader(bytes, bag: bag, topic: topic, type: "sensor_msgs/Image")
        let h = try header(&r)
        let height = Int(try r.u32()), width = Int(try r.u32())
        let encoding = try r.string()
        let big = try r.u8() != 0
        let step = Int(try r.u32())
        let data = try r.lengthPrefixed()
        let (needed, overflow) = step.multipliedReportingOverflow(by: height)
        guard !overflow, needed <= data.count else {
            throw CaptureError.file(path: bag, problem: "sensor_msgs/Image on \(topic) holds \(data.count) bytes, "
                                    + "its step \(step) × height \(height) needs more")
        }
        return Image(header: h, height: height, width: width, encoding: encoding, isBigEndian: big, step: step,
                     data: bytes[data])
    }

    public static func cameraInfo(_ bytes: [UInt8], bag: String, topic: String) throws -> CameraInfo {
        var r = reader(bytes, bag: bag, topic: topic, type: "sensor_msgs/CameraInfo")
        let h = try header(&r)
        let height = Int(try r.u32()), width = Int(try r.u32())
        let model = try r.string()
        let d = try r.f64Array()
        let k = try r.f64s(9), rr = try r.f64s(9), p = try r.f64s(12)
        let bx = try r.u32(), by = try r.u32()
        // The region of interest (4 × u32 + bool) is not used; it may be missing in odd writers.
        return CameraInfo(header: h, height: height, width: width, distortionModel: model, D: d, K: k, R: rr, P: p,
                          binningX: bx, binningY: by)
    }

    public static func transform(_ bytes: [UInt8], bag: String, topic: String) throws -> Transform {
        var r = reader(bytes, bag: bag, topic: topic, type: "geometry_msgs/Transform")
        let t = try r.f64s(3), q = try r.f64s(4)
        return Transform(translation: SIMD3(t[0], t[1], t[2]), rotation: SIMD4(q[0], q[1], q[2], q[3]))
    }

    public static func imu(_ bytes: [UInt8], bag: String, topic: String) throws -> Imu {
        var r = reader(bytes, bag: bag, topic: topic, type: "sensor_msgs/Imu")
        let h = try header(&r)
        let o = try r.f64s(4), oc = try r.f64s(9)
        let w = try r.f64s(3), wc = try r.f64s(9)
        let a = try r.f64s(3), ac = try r.f64s(9)
        return Imu(header: h, orientation: SIMD4(o[0], o[1], o[2], o[3]), orientationCovariance: oc,
                   angularVelocity: SIMD3(w[0], w[1], w[2]), angularVelocityCovariance: wc,
                   linearAcceleration: SIMD3(a[0], a[1], a[2]), linearAccelerationCovariance: ac)
    }

    public static func keyValue(_ bytes: [UInt8], bag: String, topic: String) throws -> KeyValue {
        var r = reader(bytes, bag: bag, topic: topic, type: "diagnostic_msgs/KeyValue")
        return KeyValue(key: try r.string(), value: try r.string())
    }

    public static func float32(_ bytes: [UInt8], bag: String, topic: String) throws -> Float {
        var r = reader(bytes, bag: bag, topic: topic, type: "std_msgs/Float32")
        return try r.f32()
    }

    public static func float64(_ bytes: [UInt8], bag: String, topic: String) throws -> Double {
        var r = reader(bytes, bag: bag, topic: topic, type: "std_msgs/Float64")
        return try r.f64()
    }

    public static func uint32(_ bytes: [UInt8], bag: String, topic: String) throws -> UInt32 {
        var r = reader(bytes, bag: bag, topic: topic, type: "std_msgs/UInt32")
        return try r.u32()
    }

    public static func string(_ bytes: [UInt8], bag: String, topic: String) throws -> String {
        var r = reader(bytes, bag: bag, topic: topic, type: "std_msgs/String")
        return try r.string()
    }

    public static func streamInfo(_ bytes: [UInt8], bag: String, topic: String) throws -> StreamInfo {
        var r = reader(bytes, bag: bag, topic: topic, type: "realsense_msgs/StreamInfo")
        return StreamInfo(fps: try r.u32(), encoding: try r.string(), isRecommended: try r.u8() != 0)
    }
}
