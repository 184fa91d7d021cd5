import Foundation

/// A calibration file as people already have it, recognized by its content (not its extension):
/// depthlens' `calibration.json`, OpenCV's `cv::FileStorage` YAML or XML (`camera_matrix`,
/// `distortion_coefficients`, `image_width`, `image_height`; a stereo file's `R` and `T`), or a ROS
/// `camera_info` YAML (`image_width`, `image_height`, `camera_name`, `camera_matrix`,
/// `distortion_model`, `distortion_coefficients`, `rectification_matrix`, `projection_matrix`).
/// Every problem is one line naming the file (`DepthKitError.file`).
public struct CalibrationFile: Sendable {
    public enum Kind: String, Sendable {
        case depthlensJSON = "depthlens JSON"
        case openCVYAML = "OpenCV YAML"
        case openCVXML = "OpenCV XML"
        case rosCameraInfo = "ROS camera_info"
    }

    public var path: String
    public var kind: Kind
    /// The whole calibration of a `calibration.json`.
    public var rgbd: RGBDCalibration?
    /// The one camera of an OpenCV or ROS file that has a `camera_matrix` (at its image size).
    public var camera: CameraModel?
    /// An OpenCV stereo file's `R` (row-major) and `T` (in the file's own units).
    public var stereo: (rotation: [Float], translation: SIMD3<Float>)?

    /// "OpenCV YAML camera.yml": the kind and the file's name, for the status line and `info`.
    public var label: String { "\(kind.rawValue) \((path as NSString).lastPathComponent)" }

    public static func read(_ path: String) throws -> CalibrationFile {
        try decode(try FileSupport.readAll(path), path: path)
    }

    public static func decode(_ bytes: [UInt8], path: String) throws -> CalibrationFile {
        func bad(_ problem: String) -> DepthKitError { .file(path: path, problem: problem) }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw bad("not a text file (expected a calibration.json, OpenCV YAML/XML or ROS camera_info YAML)") }
        let body = text.drop { $0.isWhitespace || $0 == "\u{FEFF}" }
        if body.first == "{" {
            var c = CalibrationFile(path: path, kind: .depthlensJSON)
            var rgbd = try RGBDCalibration.decode(bytes, name: path)
            rgbd.origin = c.label
            c.rgbd = rgbd
            return c
        }
        let root: StorageNode
        let xml = body.hasPrefix("<")
        if xml {
            do { root = try OpenCVXML.parse(text) } catch let f as OpenCVXML.Failure {
                throw bad("not an OpenCV XML calibration: \(f.problem)")
            }
        } else {
            do { root = try YAMLSubset.parse(text) } catch let f as YAMLSubset.Failure {
                throw bad("not a calibration YAML (OpenCV or ROS camera_info): \(f)")
            }
        }
        guard case .mapping = root.untagged else {
            throw bad("not a calibration file (expected a calibration.json, OpenCV YAML/XML or ROS camera_info YAML)")
        }
        let openCV = xml || body.hasPrefix("%YAML") || root["camera_matrix"]?.tag == "opencv-matrix" || root["R"]?.tag == "opencv-matrix"
        let ros = !openCV && root["camera_matrix"] != nil && (root["distortion_model"] != nil || root["camera_name"] != nil
                                                               || root["projection_matrix"] != nil)
        var c = CalibrationFile(path: path, kind: xml ? .openCVXML : ros ? .rosCameraInfo : .openCVYAML)
        guard openCV || ros || root["camera_matrix"] != nil else {
            throw bad("not a calibration file: no camera_matrix (OpenCV, ROS camera_info) and not a calibration.json")
        }
        if let r = root["R"], let t = root["T"] {
            let rm = try matrix(r, "R", path: path)
            let tm = try matrix(t, "T", path: path)
            guard rm.rows == 3, rm.cols == 3 else { throw bad("'R' must be 3×3, is \(rm.rows)×\(rm.cols)") }
            guard tm.data.count == 3, tm.rows == 1 || tm.cols == 1 else { throw bad("'T' must be 3×1, is \(tm.rows)×\(tm.cols)") }
            c.stereo = (rm.data.map { Float($0) }, SIMD3(Float(tm.data[0]), Float(tm.data[1]), Float(tm.data[2])))
        }
        if let k = root["camera_matrix"] {
            c.camera = try camera(root, k, ros: ros, path: path)
        } else if c.stereo == nil {
            throw bad("no camera_matrix (and no stereo R and T)")
        }
        return c
    }

    // MARK: Reading the tree

    /// rows, cols and data of `{rows, cols, dt?, data}` (OpenCV's `!!opencv-matrix`, ROS' plain mapping);
    /// XML's data is one whitespace-separated text.
    static func matrix(_ node: StorageNode, _ name: String, path: String) throws -> (rows: Int, cols: Int, data: [Double]) {
        func bad(_ problem: String) -> DepthKitError { .file(path: path, problem: problem) }
        guard case .mapping = node.untagged else { throw bad("'\(name)' must be a matrix {rows, cols, data}") }
        guard let r = node["rows"].flatMap(integer), let c = node["cols"].flatMap(integer) else {
            throw bad("'\(name)' needs whole-number rows and cols")
        }
        guard r >= 1, c >= 1, r <= 64, c <= 64 else { throw bad("'\(name)' has \(r)×\(c) elements: rows and cols must be 1…64") }
        let data: [Double]
        switch node["data"]?.untagged {
        case .sequence(let items)?:
            data = try items.map { item in
                guard case .scalar(let s) = item.untagged, let v = number(s) else { throw bad("'\(name).data' must hold numbers only") }
                return v
            }
        case .scalar(let s)?:
            let parts = s.split { $0 == " " || $0 == "\n" || $0 == "\t" || $0 == "\r" }
            data = try parts.map { p in
                guard let v = number(String(p)) else { throw bad("'\(name).data' must hold numbers only, found '\(p)'") }
                return v
            }
        case .mapping?, .tagged?, nil:
            throw bad("'\(name)' has no data")
        }
        guard data.count == r * c else {
            throw bad("'\(name)' is \(r)×\(c) = \(r * c) numbers but its data has \(data.count)")
        }
        return (r, c, data)
    }

    static func integer(_ node: StorageNode) -> Int? {
        guard case .scalar(let s) = node.untagged, let v = Int(s) else { return nil }
        return v
    }

    /// A finite number as YAML and OpenCV write them ("5.2e+02", "0.", "-1", ".5").
    static func number(_ s: String) -> Double? {
        guard let v = Double(s.trimmingCharacters(in: .whitespaces)), v.isFinite else { return nil }
        return v
    }

    static func camera(_ root: StorageNode, _ k: StorageNode, ros: Bool, path: String) throws -> CameraModel {
        func bad(_ problem: String) -> DepthKitError { .file(path: path, problem: problem) }
        let m = try matrix(k, "camera_matrix", path: path)
        guard m.rows == 3, m.cols == 3 else { throw bad("'camera_matrix' must be 3×3, is \(m.rows)×\(m.cols)") }
        let d = m.data
        guard d[0] > 0, d[4] > 0 else { throw bad("'camera_matrix' must have positive fx and fy (elements 0 and 4)") }
        guard d[1] == 0, d[3] == 0, d[6] == 0, d[7] == 0, d[8] == 1 else {
            throw bad("'camera_matrix' is not a pinhole matrix [fx 0 cx; 0 fy cy; 0 0 1]")
        }
        guard let w = root["image_width"].flatMap(integer), let h = root["image_height"].flatMap(integer) else {
            throw bad("no image_width and image_height: the size the camera_matrix belongs to is needed to scale it")
        }
        guard w >= 1, h >= 1, w <= 65536, h <= 65536 else { throw bad("image_width and image_height must be 1…65536") }
        var coeffs: [Float] = []
        if let dc = root["distortion_coefficients"] {
            coeffs = try matrix(dc, "distortion_coefficients", path: path).data.map { Float($0) }
        }
        var model = DistortionModel.none
        if ros, case .scalar(let name)? = root["distortion_model"]?.untagged {
            switch name {
            case "plumb_bob": model = .brownConrady
            case "rational_polynomial": model = .rationalPolynomial
            case "equidistant": model = .kannalaBrandt4
            default: throw bad("distortion_model '\(name)' is not one of plumb_bob, rational_polynomial, equidistant")
            }
        } else if !coeffs.isEmpty {
            // OpenCV: (k1 k2 p1 p2[ k3[ k4 k5 k6[ s1 s2 s3 s4[ τx τy]]]]).
            switch coeffs.count {
            case 4, 5: model = .brownConrady
            case 8, 12, 14: model = .rationalPolynomial
            default: throw bad("'distortion_coefficients' has \(coeffs.count) numbers; OpenCV writes 4, 5, 8, 12 or 14")
            }
        }
        if coeffs.allSatisfy({ $0 == 0 }) { model = .none; coeffs = [] }
        return CameraModel(intrinsics: CameraIntrinsics(fx: Float(d[0]), fy: Float(d[4]), cx: Float(d[2]), cy: Float(d[5]),
                                                        width: w, height: h),
                           model: model, coeffs: coeffs)
    }
}
