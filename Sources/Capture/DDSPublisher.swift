import DepthKit
import Foundation

/// Publishes frames as ROS 2 topics over DDS, as realsense2_camera lays them out under a
/// namespace: `NS/color/image_raw` (rgb8), `NS/depth/image_raw` (16UC1 millimeters when the
/// source's depth is in millimeters, else 32FC1 meters), each with its `camera_info`, and the
/// depth→color transform once on `/tf_static` (reliable, transient-local: late joiners get it).
/// Images go out best effort (ROS 2's sensor-data profile, what realsense2_camera uses), camera
/// info reliable; every message carries the frame's stamp. Frame ids are `NAME_color_optical_frame`
/// and `NAME_depth_optical_frame` (NAME: the namespace's last name).
public final class DDSPublisher {
    public let namespace: String
    let participant: DDSParticipant
    let colorWriter: Int32, depthWriter: Int32, colorInfoWriter: Int32, depthInfoWriter: Int32, tfWriter: Int32
    let colorFrame: String, depthFrame: String
    private var sentStatic: RGBDCalibration?
    /// Frames published so far.
    public private(set) var published = 0

    public init(participant: DDSParticipant, namespace: String) throws {
        let ns = namespace.hasSuffix("/") ? String(namespace.dropLast()) : namespace
        guard ns.hasPrefix("/"), ns.count > 1,
              ns.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "/") }), !ns.contains("//") else {
            throw CaptureError.invalidSource("--namespace '\(namespace)' is not an absolute ROS 2 name (/a/b_c)")
        }
        self.namespace = ns
        self.participant = participant
        let name = ns.split(separator: "/").last.map(String.init) ?? "depthlens"
        colorFrame = "\(name)_color_optical_frame"
        depthFrame = "\(name)_depth_optical_frame"
        colorWriter = try participant.writer(ros: "\(ns)/color/image_raw", type: ROS2DDS.TypeName.image, qos: .sensorWriter)
        depthWriter = try participant.writer(ros: "\(ns)/depth/image_raw", type: ROS2DDS.TypeName.image, qos: .sensorWriter)
        colorInfoWriter = try participant.writer(ros: "\(ns)/color/camera_info", type: ROS2DDS.TypeName.cameraInfo, qos: .defaultWriter)
        depthInfoWriter = try participant.writer(ros: "\(ns)/depth/camera_info", type: ROS2DDS.TypeName.cameraInfo, qos: .defaultWriter)
        tfWriter = try participant.writer(ros: "/tf_static", type: ROS2DDS.TypeName.tfMessage, qos: .tfStaticWriter)
    }

    /// Readers matched with the color image writer now.
    public var subscribers: Int { participant.matchedReaders(colorWriter) }

    /// Publishes one frame (its color, its depth if any, both camera_infos) and, when the
    /// calibration is new, `/tf_static`. `depthUnitsPerMeter` 1000 sends 16UC1 millimeters.
    public func publish(_ frame: FrameSet, calibration: RGBDCalibration, depthUnitsPerMeter: Float?) throws {
        let stamp = ROS2DDS.Time(seconds: frame.timestamp)
        if sentStatic != calibration {
            try participant.write(tfWriter, ROS2DDS.encodeTFMessage([transform(calibration, stamp: stamp)]), topic: "/tf_static")
            sentStatic = calibration
        }
        let c = frame.color
        let colorSample: [UInt8]
        if c.format == .rgba8 {
            colorSample = ROS2DDS.encodeImage(header: .init(stamp: stamp, frameID: colorFrame), width: c.width, height: c.height,
                                              encoding: "rgb8", step: c.width * 3) { out in
                for y in 0..<c.height {
                    let src = c.row(y, as: UInt8.self)
                    let dst = out.baseAddress!.advanced(by: y * c.width * 3).assumingMemoryBound(to: UInt8.self)
                    for x in 0..<c.width {
                        dst[3 * x] = src[4 * x]; dst[3 * x + 1] = src[4 * x + 1]; dst[3 * x + 2] = src[4 * x + 2]
                    }
                }
            }
        } else {
            // 16-bit gray (an IR camera): its high bytes as mono8.
            colorSample = ROS2DDS.encodeImage(header: .init(stamp: stamp, frameID: colorFrame), width: c.width, height: c.height,
                                              encoding: "mono8", step: c.width) { out in
                for y in 0..<c.height {
                    let src = c.row(y, as: UInt16.self)
                    for x in 0..<c.width { out[y * c.width + x] = UInt8(src[x] >> 8) }
                }
            }
        }
        // The DDS source timestamp is the time of writing (receivers measure latency with it); the
        // headers carry the frame's own stamp.
        let ns: Int64? = nil
        if let d = frame.depth?.map {
            let millimeters = depthUnitsPerMeter == 1000
            let sample = ROS2DDS.encodeImage(header: .init(stamp: stamp, frameID: depthFrame), width: d.width, height: d.height,
                                             encoding: millimeters ? "16UC1" : "32FC1", step: d.width * (millimeters ? 2 : 4)) { out in
                for y in 0..<d.height {
                    let src = d.row(y, as: Float.self)
                    let row = out.baseAddress!.advanced(by: y * d.width * (millimeters ? 2 : 4))
                    for x in 0..<d.width {
                        let m = src[x]
                        if millimeters {
                            let mm = m.isFinite && m > 0 ? min((m * 1000).rounded(), 65535) : 0
                            row.storeBytes(of: UInt16(mm).littleEndian, toByteOffset: 2 * x, as: UInt16.self)
                        } else {
                            row.storeBytes(of: (m.isFinite && m > 0 ? m : 0).bitPattern.littleEndian, toByteOffset: 4 * x, as: UInt32.self)
                        }
                    }
                }
            }
            try participant.write(depthWriter, sample, timestampNs: ns, topic: "\(namespace)/depth/image_raw")
            let cam = calibration.depth.intrinsics.width == d.width && calibration.depth.intrinsics.height == d.height
                ? calibration.depth : calibration.depth.scaled(toWidth: d.width, height: d.height)
            try participant.write(depthInfoWriter, ROS2DDS.encodeCameraInfo(info(cam, frameID: depthFrame, stamp: stamp)),
                                  timestampNs: ns, topic: "\(namespace)/depth/camera_info")
        }
        // Color last: a receiver pairing by stamp has the depth when the color arrives.
        try participant.write(colorInfoWriter, ROS2DDS.encodeCameraInfo(info(calibration.color, frameID: colorFrame, stamp: stamp)),
                              timestampNs: ns, topic: "\(namespace)/color/camera_info")
        try participant.write(colorWriter, colorSample, timestampNs: ns, topic: "\(namespace)/color/image_raw")
        published += 1
    }

    /// depth→color as TF: the depth optical frame's points in the color optical frame.
    func transform(_ cal: RGBDCalibration, stamp: ROS2DDS.Time) -> ROS2DDS.TransformStamped {
        let r = cal.depthToColor.rotation.map { Double($0) }
        // Rotation matrix (row-major) → unit quaternion (Shepperd's method).
        let trace = r[0] + r[4] + r[8]
        var q: SIMD4<Double>
        if trace > 0 {
            let s = (trace + 1).squareRoot() * 2
            q = SIMD4((r[7] - r[5]) / s, (r[2] - r[6]) / s, (r[3] - r[1]) / s, s / 4)
        } else if r[0] > r[4] && r[0] > r[8] {
            let s = (1 + r[0] - r[4] - r[8]).squareRoot() * 2
            q = SIMD4(s / 4, (r[1] + r[3]) / s, (r[2] + r[6]) / s, (r[7] - r[5]) / s)
        } else if r[4] > r[8] {
            let s = (1 + r[4] - r[0] - r[8]).squareRoot() * 2
            q = SIMD4((r[1] + r[3]) / s, s / 4, (r[5] + r[7]) / s, (r[2] - r[6]) / s)
        } else {
            let s = (1 + r[8] - r[0] - r[4]).squareRoot() * 2
            q = SIMD4((r[2] + r[6]) / s, (r[5] + r[7]) / s, s / 4, (r[3] - r[1]) / s)
        }
        let t = cal.depthToColor.translation
        return ROS2DDS.TransformStamped(header: .init(stamp: stamp, frameID: colorFrame), childFrameID: depthFrame,
                                        translation: SIMD3(Double(t.x), Double(t.y), Double(t.z)), rotation: q)
    }

    func info(_ cam: CameraModel, frameID: String, stamp: ROS2DDS.Time) -> ROS2DDS.CameraInfo {
        let i = cam.intrinsics
        let (fx, fy, cx, cy) = (Double(i.fx), Double(i.fy), Double(i.cx), Double(i.cy))
        let model: String
        switch cam.model {
        case .none, .brownConrady: model = "plumb_bob"
        // librealsense's variants keep their names (realsense2_camera says plumb_bob for them, which
        // loses the model; depthlens reads these names back).
        case .inverseBrownConrady: model = "inverse_brown_conrady"
        case .modifiedBrownConrady: model = "modified_brown_conrady"
        case .kannalaBrandt4: model = "equidistant"
        case .rationalPolynomial: model = "rational_polynomial"
        }
        return ROS2DDS.CameraInfo(header: .init(stamp: stamp, frameID: frameID), height: i.height, width: i.width,
                                  distortionModel: model, D: cam.model == .none ? [] : cam.coeffs.map { Double($0) },
                                  K: [fx, 0, cx, 0, fy, cy, 0, 0, 1], R: [1, 0, 0, 0, 1, 0, 0, 0, 1],
                                  P: [fx, 0, cx, 0, 0, fy, cy, 0, 0, 0, 1, 0])
    }
}
