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
        let stamp = ROS2Message.Time(seconds: frame.timestamp)
        if sentStatic != calibration {
            try participant.write(tfWriter, ROS2Message.encodeTFMessage([transform(calibration, stamp: stamp)]), topic: "/tf_static")
            sentStatic = calibration
        }
        // 16-bit gray (an IR camera): its high bytes as mono8.
        let colorSample = ROS2FrameEncoding.colorImageEncoding(frame.color, header: .init(stamp: stamp, frameID: colorFrame), keepGray16: false)
        // The DDS source timestamp is the time of writing (receivers measure latency with it); the
        // headers carry the frame's own stamp. Images are converted straight into the sample's
        // buffer before the write: nothing is copied after the stamp.
        let ns: Int64? = nil
        if let d = frame.depth?.map {
            // The depth under its own stamp where the frame carries one (a camera whose streams have their own clocks).
            let stamp = frame.depthTimestamp.map { ROS2Message.Time(seconds: $0) } ?? stamp
            let sample = ROS2FrameEncoding.depthImageEncoding(d, header: .init(stamp: stamp, frameID: depthFrame), millimeters: depthUnitsPerMeter == 1000)
            try participant.write(depthWriter, sample, topic: "\(namespace)/depth/image_raw")
            let cam = calibration.depth.intrinsics.width == d.width && calibration.depth.intrinsics.height == d.height
                ? calibration.depth : calibration.depth.scaled(toWidth: d.width, height: d.height)
            try participant.write(depthInfoWriter, ROS2Message.encodeCameraInfo(info(cam, frameID: depthFrame, stamp: stamp)),
                                  timestampNs: ns, topic: "\(namespace)/depth/camera_info")
        }
        // Color last: a receiver pairing by stamp has the depth when the color arrives.
        try participant.write(colorInfoWriter, ROS2Message.encodeCameraInfo(info(calibration.color, frameID: colorFrame, stamp: stamp)),
                              timestampNs: ns, topic: "\(namespace)/color/camera_info")
        try participant.write(colorWriter, colorSample, topic: "\(namespace)/color/image_raw")
        published += 1
    }

    func transform(_ cal: RGBDCalibration, stamp: ROS2Message.Time) -> ROS2Message.TransformStamped {
        ROS2FrameEncoding.depthToColor(cal, stamp: stamp, colorFrame: colorFrame, depthFrame: depthFrame)
    }

    func info(_ cam: CameraModel, frameID: String, stamp: ROS2Message.Time) -> ROS2Message.CameraInfo {
        ROS2FrameEncoding.cameraInfo(cam, header: .init(stamp: stamp, frameID: frameID))
    }
}
