import GPUKit
import DepthKit
import Foundation

/// The 3D view's camera as a pure value: orbit, zoom, roll and pan around a center, and an exact
/// reset. World coordinates are the depth camera's frame (x right, y down, z forward, meters); the
/// initial pose is the depth camera itself, looking at `center` from `distance` away.
///
/// Gestures (TrueDepthStreamer's pan/pinch/rotate, for a mouse): `orbit` turns about the center
/// and keeps the distance; `zoom` scales the distance and never crosses the center; `roll` turns
/// about the view axis; `pan` moves the center in the view plane.
public struct OrbitCamera: Equatable, Sendable {
    public struct Pose: Equatable, Sendable {
        public var center: SIMD3<Float>
        public var distance: Float
        /// Radians about the vertical axis, the horizontal axis and the view axis.
        public var yaw: Float
        public var pitch: Float
        public var roll: Float
    }

    public private(set) var pose: Pose
    public let home: Pose
    /// Closest the eye may come to the center, meters.
    public var minimumDistance: Float = 0.01
    /// Pitch stays inside ±`pitchLimit` so the view never flips over the pole.
    public var pitchLimit: Float = .pi / 2 - 0.01

    public init(center: SIMD3<Float>, distance: Float? = nil, yaw: Float = 0, pitch: Float = 0, roll: Float = 0) {
        let d = distance ?? max(simd_length(center), 0.01)
        pose = Pose(center: center, distance: d, yaw: yaw, pitch: pitch, roll: roll)
        home = pose
    }

    public var center: SIMD3<Float> { pose.center }
    public var distance: Float { pose.distance }

    /// Camera axes in world coordinates (columns: right, down, forward).
    public var rotation: Matrix3 {
        Matrix3.rotationY(pose.yaw) * Matrix3.rotationX(pose.pitch) * Matrix3.rotationZ(pose.roll)
    }

    /// Where the eye is.
    public var eye: SIMD3<Float> { pose.center - rotation.c2 * pose.distance }

    /// World → view transform (view coordinates: x right, y down, z forward).
    public var viewMatrix: Matrix4 {
        let rt = rotation.transposed
        return Matrix4(rotation: rt, translation: -(rt * eye))
    }

    /// Turns about the center by `yaw` and `pitch` radians; the distance to the center is kept.
    public mutating func orbit(yaw dyaw: Float, pitch dpitch: Float) {
        pose.yaw = remainder(pose.yaw + dyaw, 2 * .pi)
        pose.pitch = min(max(pose.pitch + dpitch, -pitchLimit), pitchLimit)
    }

    /// Turns about the view axis.
    public mutating func roll(by angle: Float) {
        pose.roll = remainder(pose.roll + angle, 2 * .pi)
    }

    /// Multiplies the distance by `factor` (< 1 comes closer), never below `minimumDistance`, so the
    /// eye never reaches or crosses the center. With `toward` (a world point, e.g. under the cursor)
    /// the center slides toward it so that point stays put on screen.
    public mutating func zoom(by factor: Float, toward point: SIMD3<Float>? = nil) {
        guard factor > 0, factor.isFinite else { return }
        let old = pose.distance
        let new = max(old * factor, minimumDistance)
        if let p = point {
            // Scale the eye→center offset about p: p keeps its screen position.
            let t = 1 - new / old
            let offset = p - pose.center
            let along = simd_dot(offset, rotation.c2)
            // Only move within the view plane through the center; depth is handled by the distance.
            pose.center += (offset - rotation.c2 * along) * t
        }
        pose.distance = new
    }

    /// Moves the center in the view plane by (dx, dy) meters along the camera's right and down axes.
    public mutating func pan(dx: Float, dy: Float) {
        pose.center += rotation.c0 * dx + rotation.c1 * dy
    }

    /// Pan by a mouse drag in pixels, for a view whose focal length is `focalPixels`.
    public mutating func pan(pixels dx: Float, _ dy: Float, focalPixels: Float) {
        let metersPerPixel = pose.distance / focalPixels
        pan(dx: -dx * metersPerPixel, dy: -dy * metersPerPixel)
    }

    /// Back exactly to the initial pose.
    public mutating func reset() { pose = home }
}

@inline(__always) func simd_length(_ v: SIMD3<Float>) -> Float { (v * v).sum().squareRoot() }
@inline(__always) func simd_dot(_ a: SIMD3<Float>, _ b: SIMD3<Float>) -> Float { (a * b).sum() }
