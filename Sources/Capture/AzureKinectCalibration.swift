import DepthKit
import Foundation

/// The Azure Kinect factory calibration: the `calibration.json` the device stores and the
/// recorder attaches to every `.mkv` (`CalibrationInformation.Cameras[]`), and the per-mode
/// intrinsics and depth→color extrinsics the Azure Kinect SDK derives from it.
///
/// Facts from microsoft/Azure-Kinect-Sensor-SDK (written anew here):
/// - `src/calibration/calibration.c` reads, for the cameras at `Location`
///   `CALIBRATION_CameraLocationD0` (depth) and `CALIBRATION_CameraLocationPV0` (color):
///   `Intrinsics.ModelType` (one of four names), `Intrinsics.ModelParameterCount` (≤ 15),
///   `Intrinsics.ModelParameters` (the SDK's order: cx cy fx fy k1 k2 k3 k4 k5 k6 codx cody p2 p1
///   [metric_radius]; cx, cy, fx, fy divided by the sensor size, (0, 0) the corner of the top-left
///   pixel), `SensorWidth`, `SensorHeight`, `MetricRadius` (≤ 0.0001 means 1.7), and `Rt`:
///   `Rotation` (9, row-major) and `Translation` (3) in meters (the SDK multiplies by 1000 to work
///   in millimeters; depthlens keeps meters).
/// - Each camera's `Rt` maps a common reference frame into that camera. The SDK's extrinsics from
///   a source camera to a target camera (`src/transformation/extrinsic_transformation.c`) are
///   Rt_target · Rt_source⁻¹, so depth→color = Rt_color · Rt_depth⁻¹ (Rt_depth is the identity on
///   real devices: the depth camera is the reference).
/// - `src/transformation/mode_specific_calibration.c`: a mode is (calibration image size, crop
///   offset, output size): cx = cx_n·W_cal − crop_x, cy = cy_n·H_cal − crop_y, fx = fx_n·W_cal,
///   fy = fy_n·H_cal, then the OpenCV pixel-center convention: cx − 0.5, cy − 0.5 (all in Float,
///   as the SDK). The depth calibration must be 1024×1024. A color calibration at 16:9
///   (W·9/16 = H, integer math) is first turned into 4:3 4096×3072, keeping it normalized:
///   calibration size 4096×2304, crop (0, −384), output 4096×3072 (divide by the output size).
/// - Distortion parameters are the same for every mode.
public struct AzureKinectCalibration: Sendable, Equatable {
    /// One camera as the file stores it.
    public struct Camera: Sendable, Equatable {
        /// "CALIBRATION_LensDistortionModelBrownConrady", "…Rational6KT", "…Polynomial3K", "…Theta".
        public var modelType: String
        /// The SDK's 15 parameters in its order (missing ones 0): cx cy fx fy k1 k2 k3 k4 k5 k6 codx
        /// cody p2 p1 metric_radius; cx, cy, fx, fy normalized by the sensor size.
        public var parameters: [Float]
        public var sensorWidth: Int
        public var sensorHeight: Int
        public var metricRadius: Float
        /// Reference frame → this camera: p_camera = rotation · p_ref + translation (meters).
        public var rt: RigidTransform

        public var cx: Float { parameters[0] }
        public var cy: Float { parameters[1] }
        public var fx: Float { parameters[2] }
        public var fy: Float { parameters[3] }
        public var k: [Float] { Array(parameters[4...9]) }
        public var codx: Float { parameters[10] }
        public var cody: Float { parameters[11] }
        public var p2: Float { parameters[12] }
        public var p1: Float { parameters[13] }

        /// The distortion as depthlens carries it. BrownConrady and Rational6KT are OpenCV's
        /// rational model: coefficients in OpenCV's order k1 k2 p1 p2 k3 k4 k5 k6 (Rational6KT's
        /// center of distortion codx, cody is not carried). Polynomial3K: k1 k2 p1 p2 k3 (Brown–Conrady).
        /// Theta: k1…k4 (Kannala–Brandt).
        public var distortion: (model: DistortionModel, coeffs: [Float]) {
            let k = self.k
            switch modelType {
            case "CALIBRATION_LensDistortionModelPolynomial3K":
                return (.brownConrady, [k[0], k[1], p1, p2, k[2]])
            case "CALIBRATION_LensDistortionModelTheta":
                return (.kannalaBrandt4, [k[0], k[1], k[2], k[3]])
            default:
                return (.rationalPolynomial, [k[0], k[1], p1, p2, k[2], k[3], k[4], k[5]])
            }
        }
    }

    /// The depth modes and their image sizes (`K4A_DEPTH_MODE` tag values).
    public enum DepthMode: String, Sendable, CaseIterable {
        case nfov2x2Binned = "NFOV_2X2BINNED"
        case nfovUnbinned = "NFOV_UNBINNED"
        case wfov2x2Binned = "WFOV_2X2BINNED"
        case wfovUnbinned = "WFOV_UNBINNED"
        case passiveIR = "PASSIVE_IR"

        /// A `K4A_DEPTH_MODE` tag value, legacy spellings ("NFOV_2x2BINNED") included.
        public init?(tag: String) {
            switch tag {
            case "NFOV_2x2BINNED": self = .nfov2x2Binned
            case "WFOV_2x2BINNED": self = .wfov2x2Binned
            default:
                guard let m = DepthMode(rawValue: tag) else { return nil }
                self = m
            }
        }

        /// The mode whose image has this size (1024×1024 is read as WFOV unbinned).
        public init?(width: Int, height: Int) {
            guard let m = DepthMode.allCases.first(where: { $0.size == (width, height) }) else { return nil }
            self = m
        }

        public var size: (width: Int, height: Int) {
            switch self {
            case .nfov2x2Binned: return (320, 288)
            case .nfovUnbinned: return (640, 576)
            case .wfov2x2Binned: return (512, 512)
            case .wfovUnbinned, .passiveIR: return (1024, 1024)
            }
        }

        /// (calibration image size, crop offset) of mode_specific_calibration.c; output = `size`.
        var modeInfo: (calibration: (Float, Float), crop: (Float, Float)) {
            switch self {
            case .nfov2x2Binned: return ((512, 512), (96, 90))
            case .nfovUnbinned: return ((1024, 1024), (192, 180))
            case .wfov2x2Binned: return ((512, 512), (0, 0))
            case .wfovUnbinned, .passiveIR: return ((1024, 1024), (0, 0))
            }
        }
    }

    /// The color resolutions (the SDK picks the one matching the color track's size).
    public enum ColorResolution: Int, Sendable, CaseIterable {
        case p720 = 720, p1080 = 1080, p1440 = 1440, p1536 = 1536, p2160 = 2160, p3072 = 3072

        public init?(width: Int, height: Int) {
            guard let r = ColorResolution.allCases.first(where: { $0.size == (width, height) }) else { return nil }
            self = r
        }

        public var size: (width: Int, height: Int) {
            switch self {
            case .p720: return (1280, 720)
            case .p1080: return (1920, 1080)
            case .p1440: return (2560, 1440)
            case .p1536: return (2048, 1536)
            case .p2160: return (3840, 2160)
            case .p3072: return (4096, 3072)
            }
        }

        /// (calibration image size, crop offset) on the 4:3 4096×3072 calibration.
        var modeInfo: (calibration: (Float, Float), crop: (Float, Float)) {
            switch self {
            case .p720: return ((1280, 960), (0, 120))
            case .p1080: return ((1920, 1440), (0, 180))
            case .p1440: return ((2560, 1920), (0, 240))
            case .p1536: return ((2048, 1536), (0, 0))
            case .p2160: return ((3840, 2880), (0, 360))
            case .p3072: return ((4096, 3072), (0, 0))
            }
        }
    }

    public var depth: Camera
    public var color: Camera

    public init(depth: Camera, color: Camera) {
        self.depth = depth
        self.color = color
    }

    /// True when `bytes` look like the Azure Kinect schema (a top-level "CalibrationInformation").
    public static func isAzureKinectJSON(_ bytes: [UInt8]) -> Bool {
        guard let o = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any] else { return false }
        return o["CalibrationInformation"] != nil
    }

    /// Parses the file; errors are one line naming `name`.
    public static func decode(_ bytes: [UInt8], name: String) throws -> AzureKinectCalibration {
        func bad(_ problem: String) -> CaptureError { .file(path: name, problem: problem) }
        guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)), let root = object as? [String: Any] else {
            throw bad("calibration is not a JSON object")
        }
        guard let info = root["CalibrationInformation"] as? [String: Any] else { throw bad("calibration has no 'CalibrationInformation' object") }
        guard let cameras = info["Cameras"] as? [Any] else { throw bad("calibration has no 'CalibrationInformation.Cameras' array") }
        func number(_ v: Any?, _ key: String) throws -> Float {
            // (A JSON 0 or 1 `is Bool` on Linux; true and false are the NSNumbers of objCType "c".)
            guard let n = v as? NSNumber, String(cString: n.objCType) != "c", n.doubleValue.isFinite, abs(n.doubleValue) < 1e30 else {
                throw bad("calibration '\(key)' must be a number")
            }
            return n.floatValue
        }
        func numbers(_ v: Any?, _ key: String, min: Int, max: Int) throws -> [Float] {
            guard let a = v as? [Any], a.count >= min, a.count <= max else {
                throw bad(min == max ? "calibration '\(key)' must be \(min) numbers" : "calibration '\(key)' must be \(min)…\(max) numbers")
            }
            return try a.map { try number($0, key) }
        }
        func camera(_ location: String) throws -> Camera {
            guard let c = cameras.lazy.compactMap({ $0 as? [String: Any] }).first(where: { ($0["Location"] as? String) == location }) else {
                throw bad("calibration has no camera at \(location)")
            }
            guard let intrinsics = c["Intrinsics"] as? [String: Any] else { throw bad("calibration \(location) has no 'Intrinsics'") }
            guard let type = intrinsics["ModelType"] as? String,
                  ["CALIBRATION_LensDistortionModelBrownConrady", "CALIBRATION_LensDistortionModelRational6KT",
                   "CALIBRATION_LensDistortionModelPolynomial3K", "CALIBRATION_LensDistortionModelTheta"].contains(type) else {
                throw bad("calibration \(location) has an unknown 'Intrinsics.ModelType'")
            }
            var params = try numbers(intrinsics["ModelParameters"], "\(location) ModelParameters", min: 4, max: 15)
            if let count = intrinsics["ModelParameterCount"] {
                let n = Int(try number(count, "\(location) ModelParameterCount"))
                guard n >= 4, n <= 15 else { throw bad("calibration \(location) 'ModelParameterCount' must be 4…15") }
                params = Array(params.prefix(n))
            }
            params += [Float](repeating: 0, count: 15 - params.count)
            guard params[2] > 0, params[3] > 0 else { throw bad("calibration \(location) fx and fy must be positive") }
            let w = try number(c["SensorWidth"], "\(location) SensorWidth"), h = try number(c["SensorHeight"], "\(location) SensorHeight")
            guard w >= 1, h >= 1, w <= 65536, h <= 65536, w == w.rounded(), h == h.rounded() else {
                throw bad("calibration \(location) sensor size must be whole numbers 1…65536")
            }
            var radius = try number(c["MetricRadius"] ?? 0, "\(location) MetricRadius")
            if radius <= 0.0001 { radius = 1.7 }
            guard let rt = c["Rt"] as? [String: Any] else { throw bad("calibration \(location) has no 'Rt'") }
            let r = try numbers(rt["Rotation"], "\(location) Rt.Rotation", min: 9, max: 9)
            let t = try numbers(rt["Translation"], "\(location) Rt.Translation", min: 3, max: 3)
            return Camera(modelType: type, parameters: params, sensorWidth: Int(w), sensorHeight: Int(h), metricRadius: radius,
                          rt: RigidTransform(rotation: r, translation: SIMD3(t[0], t[1], t[2])))
        }
        return AzureKinectCalibration(depth: try camera("CALIBRATION_CameraLocationD0"),
                                      color: try camera("CALIBRATION_CameraLocationPV0"))
    }

    /// mode_specific_calibration.c's conversion of normalized (cx, cy, fx, fy) at a mode.
    static func modeSpecific(_ p: (cx: Float, cy: Float, fx: Float, fy: Float), calibration: (Float, Float),
                             crop: (Float, Float), output: (Float, Float), pixelized: Bool) -> (cx: Float, cy: Float, fx: Float, fy: Float) {
        var cx = p.cx * calibration.0
        var cy = p.cy * calibration.1
        let fx = p.fx * calibration.0
        let fy = p.fy * calibration.1
        cx -= crop.0
        cy -= crop.1
        if pixelized { return (cx - 0.5, cy - 0.5, fx, fy) }
        return (cx / output.0, cy / output.1, fx / output.0, fy / output.1)
    }

    /// The depth camera at `mode` (pixels, OpenCV convention: (0, 0) the center of the top-left pixel).
    public func depthCamera(mode: DepthMode) throws -> CameraModel {
        guard depth.sensorWidth == 1024, depth.sensorHeight == 1024 else {
            throw CaptureError.file(path: "calibration.json",
                                    problem: "depth calibration is \(depth.sensorWidth)x\(depth.sensorHeight), the Azure Kinect SDK needs 1024x1024")
        }
        let info = mode.modeInfo, size = mode.size
        let k = AzureKinectCalibration.modeSpecific((depth.cx, depth.cy, depth.fx, depth.fy), calibration: info.calibration,
                                                    crop: info.crop, output: (Float(size.width), Float(size.height)), pixelized: true)
        let d = depth.distortion
        return CameraModel(intrinsics: CameraIntrinsics(fx: k.fx, fy: k.fy, cx: k.cx, cy: k.cy, width: size.width, height: size.height),
                           model: d.model, coeffs: d.coeffs)
    }

    /// The color camera at `resolution`.
    public func colorCamera(resolution: ColorResolution) throws -> CameraModel {
        let w = color.sensorWidth, h = color.sensorHeight
        var p = (cx: color.cx, cy: color.cy, fx: color.fx, fy: color.fy)
        if w * 9 / 16 == h {
            // Legacy 16:9 calibration → 4:3 4096×3072, still normalized.
            p = AzureKinectCalibration.modeSpecific(p, calibration: (4096, 2304), crop: (0, -384), output: (4096, 3072), pixelized: false)
        } else if w * 3 / 4 != h {
            throw CaptureError.file(path: "calibration.json", problem: "color calibration is \(w)x\(h), neither 4:3 nor 16:9")
        }
        let info = resolution.modeInfo, size = resolution.size
        let k = AzureKinectCalibration.modeSpecific(p, calibration: info.calibration, crop: info.crop,
                                                    output: (Float(size.width), Float(size.height)), pixelized: true)
        let d = color.distortion
        return CameraModel(intrinsics: CameraIntrinsics(fx: k.fx, fy: k.fy, cx: k.cx, cy: k.cy, width: size.width, height: size.height),
                           model: d.model, coeffs: d.coeffs)
    }

    /// p_color = R · p_depth + t (meters): Rt_color · Rt_depth⁻¹.
    public var depthToColor: RigidTransform {
        color.rt.composed(after: depth.rt.inverse)
    }

    /// Both cameras at the recording's modes, depth in millimeters (scale 1000), origin "recording".
    public func rgbdCalibration(depthMode: DepthMode, colorResolution: ColorResolution) throws -> RGBDCalibration {
        RGBDCalibration(depth: try depthCamera(mode: depthMode), color: try colorCamera(resolution: colorResolution),
                        depthToColor: depthToColor, depthScale: 1000, origin: "recording")
    }
}
