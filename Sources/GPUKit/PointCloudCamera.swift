import DepthKit
import Foundation

/// Where the point cloud is seen from: the world (depth camera frame: x right, y down, z forward,
/// meters) → Vulkan clip-space matrix, as 16 column-major floats (GLSL `mat4`).
///
/// GPUKit does not know the viewer's `OrbitCamera`; the viewer passes
/// `PointCloudCamera(view: camera.viewMatrix.floats, projection: projection.floats)`.
public struct PointCloudCamera: Equatable, Sendable {
    /// projection · view, column-major.
    public var viewProjection: [Float]

    /// - Parameter viewProjection: 16 floats, column-major; anything else is a precondition failure.
    public init(viewProjection: [Float]) {
        precondition(viewProjection.count == 16, "a 4×4 matrix is 16 floats, got \(viewProjection.count)")
        self.viewProjection = viewProjection
    }

    /// projection · view, both 16 column-major floats.
    public init(view: [Float], projection: [Float]) {
        precondition(view.count == 16 && projection.count == 16, "4×4 matrices are 16 floats")
        var m = [Float](repeating: 0, count: 16)
        for c in 0..<4 {
            for r in 0..<4 {
                var s: Float = 0
                for k in 0..<4 { s += projection[k * 4 + r] * view[c * 4 + k] }
                m[c * 4 + r] = s
            }
        }
        viewProjection = m
    }

    /// The pinhole projection of `intrinsics` (scaled to `width`×`height`) for Vulkan clip space:
    /// `Matrix4.projection`'s matrix (its one definition), column by column.
    public static func projection(intrinsics: CameraIntrinsics, width: Int, height: Int,
                                  near: Float = 0.01, far: Float = 1000) -> [Float] {
        let k = intrinsics.width == width && intrinsics.height == height
            ? intrinsics : intrinsics.scaled(toWidth: width, height: height)
        return Matrix4.projection(fx: k.fx, fy: k.fy, cx: k.cx, cy: k.cy, width: width, height: height, near: near, far: far).floats
    }

    /// Seen from the depth camera itself (identity view) through its own intrinsics scaled to
    /// the output: every depth pixel lands on its own pixel when the output has the depth's size.
    public static func depthCamera(intrinsics: CameraIntrinsics, width: Int, height: Int,
                                   near: Float = 0.01, far: Float = 1000) -> PointCloudCamera {
        PointCloudCamera(viewProjection: projection(intrinsics: intrinsics, width: width, height: height, near: near, far: far))
    }
}
