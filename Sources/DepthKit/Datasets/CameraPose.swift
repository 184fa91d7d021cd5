import Foundation

/// A unit quaternion (x, y, z, w), Hamilton convention as TUM, ROS and scipy write it.
public struct Quaternion: Hashable, Sendable {
    public var x: Double, y: Double, z: Double, w: Double

    public init(x: Double, y: Double, z: Double, w: Double) {
        self.x = x; self.y = y; self.z = z; self.w = w
    }

    public static let identity = Quaternion(x: 0, y: 0, z: 0, w: 1)

    public var norm: Double { (x * x + y * y + z * z + w * w).squareRoot() }

    /// Scaled to length 1; nil for a zero or non-finite quaternion.
    public var normalized: Quaternion? {
        let n = norm
        guard n > 1e-12, n.isFinite else { return nil }
        return Quaternion(x: x / n, y: y / n, z: z / n, w: w / n)
    }

    /// A rotation of `angle` radians about `axis` given as one vector (axis · angle, OpenCV's
    /// Rodrigues vector); the zero vector is the identity.
    public init(axisAngle v: SIMD3<Double>) {
        let angle = (v * v).sum().squareRoot()
        guard angle > 1e-15 else { self = .identity; return }
        let s = (angle / 2).sin / angle
        self.init(x: v.x * s, y: v.y * s, z: v.z * s, w: (angle / 2).cos)
    }

    /// The rotation of a 3×3 matrix given by rows (Shepperd's method: the largest of the four
    /// candidates is divided by, so no branch loses precision); w ≥ 0.
    public init(rows r: [[Double]]) {
        let trace = r[0][0] + r[1][1] + r[2][2]
        var q: Quaternion
        if trace > 0 {
            let s = (trace + 1).squareRoot() * 2
            q = Quaternion(x: (r[2][1] - r[1][2]) / s, y: (r[0][2] - r[2][0]) / s, z: (r[1][0] - r[0][1]) / s, w: s / 4)
        } else if r[0][0] > r[1][1] && r[0][0] > r[2][2] {
            let s = (1 + r[0][0] - r[1][1] - r[2][2]).squareRoot() * 2
            q = Quaternion(x: s / 4, y: (r[0][1] + r[1][0]) / s, z: (r[0][2] + r[2][0]) / s, w: (r[2][1] - r[1][2]) / s)
        } else if r[1][1] > r[2][2] {
            let s = (1 + r[1][1] - r[0][0] - r[2][2]).squareRoot() * 2
            q = Quaternion(x: (r[0][1] + r[1][0]) / s, y: s / 4, z: (r[1][2] + r[2][1]) / s, w: (r[0][2] - r[2][0]) / s)
        } else {
            let s = (1 + r[2][2] - r[0][0] - r[1][1]).squareRoot() * 2
            q = Quaternion(x: (r[0][2] + r[2][0]) / s, y: (r[1][2] + r[2][1]) / s, z: s / 4, w: (r[1][0] - r[0][1]) / s)
        }
        if q.w < 0 { q = Quaternion(x: -q.x, y: -q.y, z: -q.z, w: -q.w) }
        self = q.normalized ?? .identity
    }

    /// The rotation matrix, by rows.
    public var rows: [[Double]] {
        [[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
         [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
         [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]]
    }

    public static func * (a: Quaternion, b: Quaternion) -> Quaternion {
        Quaternion(x: a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
                   y: a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
                   z: a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w,
                   w: a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z)
    }

    public var conjugate: Quaternion { Quaternion(x: -x, y: -y, z: -z, w: w) }

    /// Rotates a vector.
    public func rotate(_ v: SIMD3<Double>) -> SIMD3<Double> {
        let r = rows
        return SIMD3(r[0][0] * v.x + r[0][1] * v.y + r[0][2] * v.z,
                     r[1][0] * v.x + r[1][1] * v.y + r[1][2] * v.z,
                     r[2][0] * v.x + r[2][1] * v.y + r[2][2] * v.z)
    }

    /// Spherical interpolation from `a` (t = 0) to `b` (t = 1), the short way round.
    public static func slerp(_ a: Quaternion, _ b: Quaternion, _ t: Double) -> Quaternion {
        var b = b
        var d = a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w
        if d < 0 { b = Quaternion(x: -b.x, y: -b.y, z: -b.z, w: -b.w); d = -d }
        let wa: Double, wb: Double
        if d > 0.9995 {
            wa = 1 - t; wb = t
        } else {
            let theta = d.acos, s = theta.sin
            wa = ((1 - t) * theta).sin / s; wb = (t * theta).sin / s
        }
        let q = Quaternion(x: wa * a.x + wb * b.x, y: wa * a.y + wb * b.y, z: wa * a.z + wb * b.z, w: wa * a.w + wb * b.w)
        return q.normalized ?? a
    }
}

/// The axes a recording's camera frame uses.
public enum CameraAxes: String, Sendable, CaseIterable {
    /// OpenCV's optical frame: x right, y down, z forward (depthlens' own, TUM's).
    case opencv
    /// ARKit's (and OpenGL's) camera frame: x right, y up, the camera looking along −z.
    case arkit
}

/// Which way a recorded pose maps.
public enum PoseDirection: String, Sendable, CaseIterable {
    /// Camera coordinates to world coordinates (the camera's pose in the world: TUM, ARKit's `transform`).
    case worldFromCamera
    /// World coordinates to camera coordinates (extrinsics; ARKitScenes' `.traj`).
    case cameraFromWorld
}

/// A camera's pose in its world: `p_world = rotation · p_camera + translation`, for the camera's
/// OpenCV optical frame (x right, y down, z forward), whatever frame the recording used. Every
/// source makes its poses through `init(rotationRows:translation:axes:direction:)`, the one place
/// conventions are converted.
public struct CameraPose: Hashable, Sendable {
    public var rotation: Quaternion
    public var translation: SIMD3<Double>

    /// A pose already world-from-camera in the optical frame.
    public init(rotation: Quaternion, translation: SIMD3<Double>) {
        self.rotation = rotation
        self.translation = translation
    }

    /// Converts a recorded rigid transform (rotation by rows, translation) to a world-from-camera
    /// pose of the optical frame: inverted when it is camera-from-world, then, for ARKit's axes,
    /// turned half a turn about the camera's x axis (y and z flip: `R · diag(1, −1, −1)`), which
    /// keeps the camera's position and the world as they are.
    /// Returns nil when the rotation is not a rotation (not orthonormal within 1e-3, or det ≠ +1)
    /// or a value is not finite.
    public init?(rotationRows r: [[Double]], translation t: SIMD3<Double>, axes: CameraAxes, direction: PoseDirection) {
        guard r.count == 3, r.allSatisfy({ $0.count == 3 && $0.allSatisfy(\.isFinite) }),
              t.x.isFinite, t.y.isFinite, t.z.isFinite else { return nil }
        for i in 0..<3 {
            for j in 0..<3 {
                let dot = (0..<3).reduce(0.0) { $0 + r[i][$1] * r[j][$1] }
                if abs(dot - (i == j ? 1 : 0)) > 1e-3 { return nil }
            }
        }
        let det = r[0][0] * (r[1][1] * r[2][2] - r[1][2] * r[2][1]) - r[0][1] * (r[1][0] * r[2][2] - r[1][2] * r[2][0])
            + r[0][2] * (r[1][0] * r[2][1] - r[1][1] * r[2][0])
        guard det > 0 else { return nil }
        var pose = CameraPose(rotation: Quaternion(rows: r), translation: t)
        if direction == .cameraFromWorld { pose = pose.inverse }
        switch axes {
        case .opencv: break
        case .arkit: pose.rotation = pose.rotation * Quaternion(x: 1, y: 0, z: 0, w: 0)   // R · diag(1, −1, −1)
        }
        self = pose
    }

    /// From a quaternion (x, y, z, w; normalized here) and translation; nil for a zero quaternion.
    public init?(quaternion q: Quaternion, translation t: SIMD3<Double>, axes: CameraAxes, direction: PoseDirection) {
        guard let n = q.normalized else { return nil }
        self.init(rotationRows: n.rows, translation: t, axes: axes, direction: direction)
    }

    /// Camera point to world point.
    public func apply(_ p: SIMD3<Double>) -> SIMD3<Double> { rotation.rotate(p) + translation }

    /// The opposite transform (world to camera).
    public var inverse: CameraPose {
        let r = rotation.conjugate
        return CameraPose(rotation: r, translation: -r.rotate(translation))
    }

    /// The 3×4 matrix [R | t], by rows.
    public var matrixRows: [[Double]] {
        zip(rotation.rows, [translation.x, translation.y, translation.z]).map { $0 + [$1] }
    }

    /// The pose between `a` (t = 0) and `b` (t = 1): translation linear, rotation slerp.
    public static func interpolate(_ a: CameraPose, _ b: CameraPose, _ t: Double) -> CameraPose {
        CameraPose(rotation: .slerp(a.rotation, b.rotation, t), translation: a.translation + (b.translation - a.translation) * t)
    }
}

private extension Double {
    var sin: Double { Foundation.sin(self) }
    var cos: Double { Foundation.cos(self) }
    var acos: Double { Foundation.acos(Swift.max(-1, Swift.min(1, self))) }
}
