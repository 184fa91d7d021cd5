import DepthKit
import Foundation

/// The phone LiDAR scan layouts `scan:DIR` opens (docs/SCANS.md).
public enum ScanLayout: String, Sendable, CaseIterable {
    case strayScanner = "Stray Scanner"
    case polycam = "Polycam"
    case arkitScenes = "ARKitScenes"
    case threeDScannerApp = "3D Scanner App"
}

/// The small text files of the scan layouts, parsed from bytes (no I/O: the same code serves the
/// files and the fuzzer). Each returns its values or throws `CaptureError.file` naming `path` and
/// the problem (with the line for line-based files). Poses come back converted to depthlens'
/// convention (`CameraPose`: world from the optical frame); each parser names the recording's own.
public enum ScanFormats {
    /// Pinhole intrinsics without a size.
    public struct Pinhole: Sendable, Equatable {
        public var fx: Double, fy: Double, cx: Double, cy: Double
        public init(fx: Double, fy: Double, cx: Double, cy: Double) { self.fx = fx; self.fy = fy; self.cx = cx; self.cy = cy }
        public func intrinsics(width: Int, height: Int) -> CameraIntrinsics {
            CameraIntrinsics(fx: Float(fx), fy: Float(fy), cx: Float(cx), cy: Float(cy), width: width, height: height)
        }
        var isValid: Bool { fx > 0 && fy > 0 && fx.isFinite && fy.isFinite && cx.isFinite && cy.isFinite }
    }

    // MARK: Stray Scanner

    /// `camera_matrix.csv`: three rows of three comma-separated numbers, K for the rgb.mp4 size.
    public static func strayCameraMatrix(_ bytes: [UInt8], path: String) throws -> Pinhole {
        let rows = lines(bytes).filter { !$0.text.isEmpty }
        guard rows.count >= 3 else { throw CaptureError.file(path: path, problem: "expected 3 rows of 3 numbers, got \(rows.count) rows") }
        var k: [[Double]] = []
        for r in rows.prefix(3) {
            let v = try numbers(r.text, separator: ",", path: path, line: r.number)
            guard v.count == 3 else { throw CaptureError.file(path: path, problem: "line \(r.number): expected 3 numbers, got \(v.count)") }
            k.append(v)
        }
        let p = Pinhole(fx: k[0][0], fy: k[1][1], cx: k[0][2], cy: k[1][2])
        guard p.isValid else { throw CaptureError.file(path: path, problem: "the focal lengths are not positive") }
        return p
    }

    /// One row of `odometry.csv`.
    public struct StrayOdometryRow: Sendable, Equatable {
        public var timestamp: Double
        /// Names depth/NNNNNN.png, confidence/NNNNNN.png and the frame's position in rgb.mp4.
        public var frame: Int
        public var pose: CameraPose
        /// Per-frame intrinsics for the rgb.mp4 size (the columns newer versions add), nil before them.
        public var pinhole: Pinhole?
    }

    /// `odometry.csv`: a header, then `timestamp, frame, x, y, z, qx, qy, qz, qw` (newer versions
    /// add `fx, fy, cx, cy, distortion_center_x, distortion_center_y`, the last two possibly
    /// empty). Stray writes `ARCamera.transform`'s position and the rotation `q_WA · q_AC` with
    /// q_AC half a turn about x (its OdometryEncoder.swift): world from camera, OpenCV camera axes
    /// already, in ARKit's gravity-aligned +Y-up world.
    public static func strayOdometry(_ bytes: [UInt8], path: String) throws -> [StrayOdometryRow] {
        var out: [StrayOdometryRow] = []
        for (l, fields, v) in try strayRows(bytes, path: path, columns: "timestamp, frame, x, y, z, qx, qy, qz, qw") {
            guard let frame = Int(fields[1]), frame >= 0 else {
                throw CaptureError.file(path: path, problem: "line \(l.number): frame '\(fields[1])' is not a frame number")
            }
            guard let pose = CameraPose(quaternion: Quaternion(x: v[5], y: v[6], z: v[7], w: v[8]), translation: SIMD3(v[2], v[3], v[4]),
                                        axes: .opencv, direction: .worldFromCamera) else {
                throw CaptureError.file(path: path, problem: "line \(l.number): the quaternion is zero")
            }
            var pinhole: Pinhole?
            if fields.count >= 13 {
                let k = fields[9..<13].compactMap { Double($0) }
                if k.count == 4 {
                    let p = Pinhole(fx: k[0], fy: k[1], cx: k[2], cy: k[3])
                    guard p.isValid else { throw CaptureError.file(path: path, problem: "line \(l.number): the focal lengths are not positive") }
                    pinhole = p
                }
            }
            out.append(StrayOdometryRow(timestamp: v[0], frame: frame, pose: pose, pinhole: pinhole))
        }
        return out
    }

    /// Standard gravity, m/s² per g.
    public static let standardGravity = 9.80665

    /// `imu.csv`: a header (`timestamp, a_x, a_y, a_z, alpha_x, alpha_y, alpha_z`), then a row per
    /// sample: Core Motion's timestamp (seconds since boot, the clock of odometry.csv's ARKit
    /// timestamps), the accelerometer and the gyroscope (rad/s) in the device's axes. Stray
    /// Scanner's writer pairs the latest raw CMAccelerometerData and CMGyroData, stamped with the
    /// later of the two (its DatasetEncoder.swift); the accelerometer is in g there (older versions
    /// wrote (userAcceleration + gravity) · 9.81, m/s²): the median magnitude tells them apart —
    /// below 3 the values are g and are scaled by `standardGravity`. Axes and signs as Core Motion
    /// gives them (at rest the gravity reads as −1 g along the axis pointing up). Both streams
    /// share the rows' stamps. A field that is not a finite number is an error naming the line.
    public static func strayIMU(_ bytes: [UInt8], path: String) throws -> IMUSamples {
        var stamps: [Double] = [], accel: [SIMD3<Double>] = [], gyro: [SIMD3<Double>] = []
        for (_, _, v) in try strayRows(bytes, path: path, columns: "timestamp, a_x, a_y, a_z, alpha_x, alpha_y, alpha_z") {
            stamps.append(v[0])
            accel.append(SIMD3(v[1], v[2], v[3]))
            gyro.append(SIMD3(v[4], v[5], v[6]))
        }
        guard !stamps.isEmpty else { return IMUSamples() }
        let magnitudes = accel.map { ($0 * $0).sum().squareRoot() }.sorted()
        if magnitudes[magnitudes.count / 2] < 3 { accel = accel.map { $0 * standardGravity } }
        return IMUSamples(accelerometer: IMUStream(kind: .accelerometer, name: "imu.csv", timestamps: stamps, values: accel),
                          gyroscope: IMUStream(kind: .gyroscope, name: "imu.csv", timestamps: stamps, values: gyro))
    }

    /// The data rows of one of Stray Scanner's CSV files (a `timestamp…` header line skipped):
    /// each line, its fields, and its first `columns`' count of fields as finite numbers. Too few
    /// fields or a field that is not a number is an error naming the line.
    static func strayRows(_ bytes: [UInt8], path: String, columns: String) throws
        -> [(line: Line, fields: [String], values: [Double])] {
        let count = columns.split(separator: ",").count
        var rows: [(line: Line, fields: [String], values: [Double])] = []
        var sawHeader = false
        for l in lines(bytes) where !l.text.isEmpty {
            if !sawHeader {
                sawHeader = true
                if l.text.lowercased().hasPrefix("timestamp") { continue }
            }
            let fields = l.text.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard fields.count >= count else {
                throw CaptureError.file(path: path, problem: "line \(l.number): expected '\(columns)', got \(fields.count) fields")
            }
            var v: [Double] = []
            for f in fields.prefix(count) {
                guard let d = Double(f), d.isFinite else { throw CaptureError.file(path: path, problem: "line \(l.number): '\(f)' is not a number") }
                v.append(d)
            }
            rows.append((l, fields, v))
        }
        return rows
    }

    // MARK: Polycam

    /// One `keyframes/cameras/NAME.json`.
    public struct PolycamCamera: Sendable, Equatable {
        public var pinhole: Pinhole
        public var width: Int, height: Int
        public var pose: CameraPose
        public var blurScore: Double?
    }

    /// A Polycam camera: `fx fy cx cy width height` for the keyframe image and `t_00 … t_23`, the
    /// 3×4 camera-to-world transform by rows with ARKit's camera axes (+Y up, looking along −Z;
    /// nerfstudio's polycam_utils uses it as an OpenGL-convention camera-to-world).
    public static func polycamCamera(_ bytes: [UInt8], path: String) throws -> PolycamCamera {
        let o = try jsonObject(bytes, path: path)
        func number(_ key: String) throws -> Double {
            guard let v = o[key] else { throw CaptureError.file(path: path, problem: "no '\(key)'") }
            guard let n = v as? NSNumber, !(v is Bool), n.doubleValue.isFinite else {
                throw CaptureError.file(path: path, problem: "'\(key)' is not a number")
            }
            return n.doubleValue
        }
        let p = Pinhole(fx: try number("fx"), fy: try number("fy"), cx: try number("cx"), cy: try number("cy"))
        guard p.isValid else { throw CaptureError.file(path: path, problem: "the focal lengths are not positive") }
        let w = try number("width"), h = try number("height")
        guard w >= 1, h >= 1, w <= 65536, h <= 65536 else { throw CaptureError.file(path: path, problem: "bad image size \(w)x\(h)") }
        var rows: [[Double]] = [], t = SIMD3<Double>()
        for i in 0..<3 {
            rows.append(try (0..<3).map { try number("t_\(i)\($0)") })
            t[i] = try number("t_\(i)3")
        }
        guard let pose = CameraPose(rotationRows: rows, translation: t, axes: .arkit, direction: .worldFromCamera) else {
            throw CaptureError.file(path: path, problem: "t_00…t_22 is not a rotation")
        }
        let blur = (o["blur_score"] as? NSNumber)?.doubleValue
        return PolycamCamera(pinhole: p, width: Int(w), height: Int(h), pose: pose, blurScore: blur)
    }

    // MARK: ARKitScenes

    /// A `.pincam` file: `width height fx fy cx cy` on one line.
    public static func pincam(_ bytes: [UInt8], path: String) throws -> CameraIntrinsics {
        let v = try numbers(String(decoding: bytes, as: UTF8.self), separator: " ", path: path, line: 1)
        guard v.count == 6 else { throw CaptureError.file(path: path, problem: "expected 'width height fx fy cx cy', got \(v.count) numbers") }
        guard v[0] >= 1, v[1] >= 1, v[0] <= 65536, v[1] <= 65536, v[0] == v[0].rounded(), v[1] == v[1].rounded() else {
            throw CaptureError.file(path: path, problem: "bad image size \(v[0])x\(v[1])")
        }
        let p = Pinhole(fx: v[2], fy: v[3], cx: v[4], cy: v[5])
        guard p.isValid else { throw CaptureError.file(path: path, problem: "the focal lengths are not positive") }
        return p.intrinsics(width: Int(v[0]), height: Int(v[1]))
    }

    /// `lowres_wide.traj`: lines `timestamp rx ry rz tx ty tz`, an axis-angle rotation (radians)
    /// and a translation from world to camera (ARKitScenes' data_utils `TrajStringToMatrix` calls
    /// them `r_w_to_p`, `t_w_to_p` and inverts them for the camera's pose); the camera frame is
    /// OpenCV's (their loaders unproject with a y-down pinhole).
    public static func arkitScenesTrajectory(_ bytes: [UInt8], path: String) throws -> PoseTrack {
        var samples: [PoseTrack.Sample] = []
        for l in lines(bytes) where !l.text.isEmpty && !l.text.hasPrefix("#") {
            let v = try numbers(l.text, separator: " ", path: path, line: l.number)
            guard v.count == 7 else {
                throw CaptureError.file(path: path, problem: "line \(l.number): expected 'timestamp rx ry rz tx ty tz', got \(v.count) fields")
            }
            let q = Quaternion(axisAngle: SIMD3(v[1], v[2], v[3]))
            guard let pose = CameraPose(quaternion: q, translation: SIMD3(v[4], v[5], v[6]), axes: .opencv, direction: .cameraFromWorld) else {
                throw CaptureError.file(path: path, problem: "line \(l.number): bad rotation")
            }
            samples.append(.init(timestamp: v[0], pose: pose))
        }
        return PoseTrack(samples: samples)
    }

    // MARK: 3D Scanner App

    /// One `frame_NNNNN.json` of a 3D Scanner App "All Data" export.
    public struct ScannerAppFrame: Sendable, Equatable {
        public var pinhole: Pinhole
        public var pose: CameraPose
        public var time: Double?
    }

    /// `cameraPoseARFrame`: 16 numbers, ARKit's `ARCamera.transform` by rows (world from camera,
    /// ARKit camera axes); `intrinsics`: 9 numbers, K by rows (fx at 0, cx at 2, fy at 4, cy at 5)
    /// for the frame's JPEG; `time` in seconds.
    public static func scannerAppFrame(_ bytes: [UInt8], path: String) throws -> ScannerAppFrame {
        let o = try jsonObject(bytes, path: path)
        func array(_ key: String, _ n: Int) throws -> [Double] {
            guard let a = o[key] as? [Any] else { throw CaptureError.file(path: path, problem: "no '\(key)' array") }
            let v = a.compactMap { ($0 as? NSNumber)?.doubleValue }.filter(\.isFinite)
            guard a.count == n, v.count == n else { throw CaptureError.file(path: path, problem: "'\(key)' must hold \(n) numbers, has \(a.count)") }
            return v
        }
        let m = try array("cameraPoseARFrame", 16)
        let k = try array("intrinsics", 9)
        let p = Pinhole(fx: k[0], fy: k[4], cx: k[2], cy: k[5])
        guard p.isValid else { throw CaptureError.file(path: path, problem: "the focal lengths are not positive") }
        let rows = (0..<3).map { r in (0..<3).map { m[r * 4 + $0] } }
        guard let pose = CameraPose(rotationRows: rows, translation: SIMD3(m[3], m[7], m[11]), axes: .arkit, direction: .worldFromCamera) else {
            throw CaptureError.file(path: path, problem: "cameraPoseARFrame is not a rigid transform")
        }
        let time = (o["time"] as? NSNumber)?.doubleValue
        return ScannerAppFrame(pinhole: p, pose: pose, time: time.flatMap { $0.isFinite ? $0 : nil })
    }

    // MARK: helpers

    struct Line { var number: Int; var text: String }

    static func lines(_ bytes: [UInt8]) -> [Line] {
        bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).enumerated().map {
            Line(number: $0.offset + 1, text: String(decoding: $0.element, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
        }
    }

    static func numbers(_ text: String, separator: Character, path: String, line: Int) throws -> [Double] {
        let parts = text.split(whereSeparator: { $0 == separator || $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" })
        return try parts.map {
            guard let d = Double($0), d.isFinite else { throw CaptureError.file(path: path, problem: "line \(line): '\($0)' is not a number") }
            return d
        }
    }

    static func jsonObject(_ bytes: [UInt8], path: String) throws -> [String: Any] {
        let any: Any
        do { any = try JSONSerialization.jsonObject(with: Data(bytes)) } catch {
            throw CaptureError.file(path: path, problem: "not JSON (\(bytes.isEmpty ? "empty" : "malformed"))")
        }
        guard let o = any as? [String: Any] else { throw CaptureError.file(path: path, problem: "not a JSON object") }
        return o
    }
}
