import Foundation

/// A lens distortion model as recordings name it. depthlens' kernels use the pinhole part only
/// (as librealsense's `align` does for the D400's `brown_conrady` with zero coefficients); the
/// model and coefficients are carried so that `info`, `convert` and `calibration.json` keep them.
public enum DistortionModel: String, Codable, Sendable, CaseIterable {
    case none
    /// OpenCV's k1 k2 p1 p2 k3 (ROS `plumb_bob`).
    case brownConrady = "brown_conrady"
    /// librealsense's inverse Brown–Conrady (D400 color on some firmware).
    case inverseBrownConrady = "inverse_brown_conrady"
    /// librealsense's modified Brown–Conrady (F200/SR300).
    case modifiedBrownConrady = "modified_brown_conrady"
    /// Kannala–Brandt with four coefficients (fisheye, ROS `equidistant`).
    case kannalaBrandt4 = "kannala_brandt4"
    /// OpenCV's rational model, k1…k6 p1 p2 (Azure Kinect `K4A_CALIBRATION_LENS_DISTORTION_MODEL_BROWN_CONRADY`,
    /// ROS `rational_polynomial`).
    case rationalPolynomial = "rational_polynomial"
}

/// One camera: pinhole intrinsics at an image size, plus the distortion it was recorded with.
public struct CameraModel: Hashable, Sendable {
    public var intrinsics: CameraIntrinsics
    public var model: DistortionModel
    public var coeffs: [Float]

    public init(intrinsics: CameraIntrinsics, model: DistortionModel = .none, coeffs: [Float] = []) {
        self.intrinsics = intrinsics
        self.model = model
        self.coeffs = coeffs
    }

    /// DESIGN's default pinhole camera for an image of this size, no distortion.
    public static func `default`(width: Int, height: Int) -> CameraModel {
        CameraModel(intrinsics: .default(width: width, height: height))
    }

    /// The same camera at another resolution (distortion coefficients are resolution-free).
    public func scaled(toWidth w: Int, height h: Int) -> CameraModel {
        if w == intrinsics.width && h == intrinsics.height { return self }
        return CameraModel(intrinsics: intrinsics.scaled(toWidth: w, height: h), model: model, coeffs: coeffs)
    }
}

/// A rigid transform p' = R·p + t: rotation row-major, translation in meters.
public struct RigidTransform: Hashable, Sendable {
    /// Row-major 3×3 rotation.
    public var rotation: [Float]
    /// Translation in meters.
    public var translation: SIMD3<Float>

    public init(rotation: [Float], translation: SIMD3<Float>) {
        precondition(rotation.count == 9, "rotation is 9 numbers, row-major")
        self.rotation = rotation
        self.translation = translation
    }

    public static let identity = RigidTransform(rotation: [1, 0, 0, 0, 1, 0, 0, 0, 1], translation: .zero)

    /// R·p + t.
    @inline(__always)
    public func apply(_ p: SIMD3<Float>) -> SIMD3<Float> {
        let r = rotation
        return SIMD3(r[0] * p.x + r[1] * p.y + r[2] * p.z + translation.x,
                     r[3] * p.x + r[4] * p.y + r[5] * p.z + translation.y,
                     r[6] * p.x + r[7] * p.y + r[8] * p.z + translation.z)
    }

    /// The inverse transform: Rᵀ, −Rᵀ·t.
    public var inverse: RigidTransform {
        let r = rotation
        let rt: [Float] = [r[0], r[3], r[6], r[1], r[4], r[7], r[2], r[5], r[8]]
        let t = translation
        let it = -SIMD3(rt[0] * t.x + rt[1] * t.y + rt[2] * t.z,
                        rt[3] * t.x + rt[4] * t.y + rt[5] * t.z,
                        rt[6] * t.x + rt[7] * t.y + rt[8] * t.z)
        return RigidTransform(rotation: rt, translation: it)
    }

    /// self after `other`: p ↦ self(other(p)).
    public func composed(after other: RigidTransform) -> RigidTransform {
        let a = rotation, b = other.rotation
        var r = [Float](repeating: 0, count: 9)
        for i in 0..<3 { for j in 0..<3 { r[i * 3 + j] = a[i * 3] * b[j] + a[i * 3 + 1] * b[3 + j] + a[i * 3 + 2] * b[6 + j] } }
        return RigidTransform(rotation: r, translation: apply(other.translation))
    }

    /// True when this is the identity up to `tolerance` (meters for t, unitless for R).
    public func isIdentity(tolerance: Float = 1e-6) -> Bool {
        let id = RigidTransform.identity.rotation
        for i in 0..<9 where abs(rotation[i] - id[i]) > tolerance { return false }
        return abs(translation.x) <= tolerance && abs(translation.y) <= tolerance && abs(translation.z) <= tolerance
    }
}

/// Everything a consumer needs to combine a source's depth with its color: both cameras, where
/// the color camera sits relative to the depth camera, and the depth units.
///
/// p_color = depthToColor.rotation · p_depth + depthToColor.translation (meters).
public struct RGBDCalibration: Hashable, Sendable {
    public var depth: CameraModel
    public var color: CameraModel
    public var depthToColor: RigidTransform
    /// Units per meter of the recording's 16-bit depth (1000 for millimeters).
    public var depthScale: Float
    /// Where the calibration came from, for the status line ("recording", "calibration.json",
    /// "--intrinsics", "default").
    public var origin: String

    public init(depth: CameraModel, color: CameraModel, depthToColor: RigidTransform = .identity,
                depthScale: Float = DepthIO.defaultDepthScale, origin: String) {
        self.depth = depth
        self.color = color
        self.depthToColor = depthToColor
        self.depthScale = depthScale
        self.origin = origin
    }

    /// Default intrinsics for both cameras, one camera (identity extrinsics).
    public static func assumed(depthWidth: Int, depthHeight: Int, colorWidth: Int, colorHeight: Int,
                               depthScale: Float = DepthIO.defaultDepthScale) -> RGBDCalibration {
        RGBDCalibration(depth: .default(width: depthWidth, height: depthHeight),
                        color: .default(width: colorWidth, height: colorHeight),
                        depthScale: depthScale, origin: "default")
    }

    /// True when depth and color are not one registered camera: depth must be aligned (reprojected)
    /// before depth and color pixels are combined. A color camera that is the depth camera at
    /// another resolution (intrinsics scaled, no offset) needs no alignment: scaling does it.
    public var needsAlignment: Bool {
        guard depthToColor.isIdentity() else { return true }
        let d = depth.intrinsics, c = color.intrinsics
        let scaled = d.scaled(toWidth: c.width, height: c.height)
        func near(_ a: Float, _ b: Float) -> Bool { abs(a - b) <= 1e-3 * max(1, abs(b)) }
        return !(near(scaled.fx, c.fx) && near(scaled.fy, c.fy) && near(scaled.cx, c.cx) && near(scaled.cy, c.cy))
    }

    /// The calibration after depth has been aligned to color: depth is seen by the color camera.
    /// (Same `origin`: where the cameras' calibration came from. Nothing here allocates, so the
    /// viewer can take it every frame.)
    public var alignedToColor: RGBDCalibration {
        RGBDCalibration(depth: color, color: color, depthToColor: .identity, depthScale: depthScale, origin: origin)
    }
}

// MARK: - calibration.json (the `intrinsics` / `extrinsics` / `depth_scale` part of `info --json`)

extension RGBDCalibration {
    /// The JSON object depthlens writes as `calibration.json` and prints in `info --json`:
    /// `{"depth_scale", "intrinsics": {"depth": {...}, "color": {...}},
    ///   "extrinsics": {"depth_to_color": {"rotation": [9], "translation": [3]}}}`.
    public var jsonObject: [String: Any] {
        func camera(_ m: CameraModel) -> [String: Any] {
            let k = m.intrinsics
            return ["width": k.width, "height": k.height, "fx": Double(k.fx), "fy": Double(k.fy),
                    "cx": Double(k.cx), "cy": Double(k.cy), "model": m.model.rawValue,
                    "coeffs": m.coeffs.map(Double.init)]
        }
        return [
            "depth_scale": Double(depthScale),
            "intrinsics": ["depth": camera(depth), "color": camera(color)],
            "extrinsics": ["depth_to_color": [
                "rotation": depthToColor.rotation.map(Double.init),
                "translation": [Double(depthToColor.translation.x), Double(depthToColor.translation.y),
                                Double(depthToColor.translation.z)],
            ]],
        ]
    }

    /// Pretty-printed, sorted-key JSON of `jsonObject`.
    public func encodedJSON() throws -> [UInt8] {
        Array(try JSONSerialization.data(withJSONObject: jsonObject, options: [.prettyPrinted, .sortedKeys]))
    }

    /// Reads a `calibration.json` (the schema above; extra keys such as those of a whole
    /// `info --json` object are ignored). Errors are one line naming the file.
    public static func read(_ path: String) throws -> RGBDCalibration {
        try decode(try FileSupport.readAll(path), name: path)
    }

    public static func decode(_ bytes: [UInt8], name: String) throws -> RGBDCalibration {
        func bad(_ problem: String) -> DepthKitError { .file(path: name, problem: problem) }
        guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)), let root = object as? [String: Any] else {
            throw bad("not a JSON object")
        }
        func number(_ v: Any?, _ key: String) throws -> Double {
            // On Linux a JSON 0 or 1 is an NSNumber that `is Bool` too; true/false have objCType "c".
            guard let n = v as? NSNumber, String(cString: n.objCType) != "c", n.doubleValue.isFinite else { throw bad("'\(key)' must be a number") }
            return n.doubleValue
        }
        func numbers(_ v: Any?, _ key: String, count: Int?) throws -> [Float] {
            guard let a = v as? [Any] else { throw bad("'\(key)' must be an array of numbers") }
            if let count, a.count != count { throw bad("'\(key)' must have \(count) numbers, has \(a.count)") }
            return try a.map { Float(try number($0, key)) }
        }
        func camera(_ v: Any?, _ key: String) throws -> CameraModel {
            guard let o = v as? [String: Any] else { throw bad("'intrinsics.\(key)' missing or not an object") }
            let w = try number(o["width"], "\(key).width"), h = try number(o["height"], "\(key).height")
            guard w >= 1, h >= 1, w <= 65536, h <= 65536, w == w.rounded(), h == h.rounded() else {
                throw bad("'\(key)' width and height must be whole numbers 1…65536")
            }
            let fx = try number(o["fx"], "\(key).fx"), fy = try number(o["fy"], "\(key).fy")
            guard fx > 0, fy > 0 else { throw bad("'\(key)' fx and fy must be positive") }
            let cx = try number(o["cx"], "\(key).cx"), cy = try number(o["cy"], "\(key).cy")
            var model = DistortionModel.none
            if let m = o["model"] {
                guard let s = m as? String, let parsed = DistortionModel(rawValue: s) else {
                    throw bad("'\(key).model' must be one of \(DistortionModel.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                model = parsed
            }
            let coeffs = o["coeffs"] == nil ? [] : try numbers(o["coeffs"], "\(key).coeffs", count: nil)
            return CameraModel(intrinsics: CameraIntrinsics(fx: Float(fx), fy: Float(fy), cx: Float(cx), cy: Float(cy),
                                                            width: Int(w), height: Int(h)),
                               model: model, coeffs: coeffs)
        }
        let scale = try number(root["depth_scale"], "depth_scale")
        guard scale > 0 else { throw bad("'depth_scale' must be positive") }
        guard let intrinsics = root["intrinsics"] as? [String: Any] else { throw bad("'intrinsics' missing or not an object") }
        let depth = try camera(intrinsics["depth"], "depth")
        let color = intrinsics["color"] == nil ? depth : try camera(intrinsics["color"], "color")
        var extrinsics = RigidTransform.identity
        if let e = root["extrinsics"] {
            guard let eo = e as? [String: Any], let dc = eo["depth_to_color"] as? [String: Any] else {
                throw bad("'extrinsics' must hold a 'depth_to_color' object")
            }
            let r = try numbers(dc["rotation"], "extrinsics.depth_to_color.rotation", count: 9)
            let t = try numbers(dc["translation"], "extrinsics.depth_to_color.translation", count: 3)
            extrinsics = RigidTransform(rotation: r, translation: SIMD3(t[0], t[1], t[2]))
        }
        return RGBDCalibration(depth: depth, color: color, depthToColor: extrinsics, depthScale: Float(scale),
                               origin: (name as NSString).lastPathComponent)
    }
}
