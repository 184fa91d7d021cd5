import DepthKit
import Foundation
import GPUKit

/// The home view of a point list (PLY) seen through `CameraIntrinsics.default(width:height:)`:
/// orbit about the bounding-box center, from the distance at which the box's bounding sphere just
/// fits the narrower field of view; near/far planes that hold the whole sphere from there.
public struct CloudFraming: Equatable, Sendable {
    public var center: SIMD3<Float>
    public var distance: Float
    public var radius: Float

    public init(min lo: SIMD3<Float>, max hi: SIMD3<Float>, intrinsics k: CameraIntrinsics) {
        center = (lo + hi) / 2
        let half = (hi - lo) / 2
        radius = Swift.max((half * half).sum().squareRoot(), 1e-3)
        // Half field of view of the narrower axis; the sphere fits when sin(halfFov) = r / distance.
        let halfFov = Swift.min(atan(Float(k.width) / (2 * k.fx)), atan(Float(k.height) / (2 * k.fy)))
        distance = radius / sin(halfFov)
    }

    /// The orbit camera at home.
    public var camera: OrbitCamera { OrbitCamera(center: center, distance: distance) }

    /// Near and far planes for an eye `distance` from the center (any orbit keeps the sphere inside).
    public func planes(distance d: Float) -> (near: Float, far: Float) {
        (Swift.max(0.001, (d - radius) * 0.5), Swift.max(d + radius, 1) * 2)
    }
}

/// The meters `PointCloudRenderer.colorRange` maps onto the colormap.
public enum PointColorRange {
    /// Meters onto the colormap for depth (valid min…max) or height (−y over the frame's extent).
    public static func colorRange(_ by: PointCloudColorBy, _ depth: DepthData, _ k: CameraIntrinsics) -> ClosedRange<Float> {
        let stats = depth.depthStatistics()
        guard stats.max >= stats.min, stats.max > 0 else { return 0...1 }
        if by == .depth { return stats.min...max(stats.max, stats.min + 1e-3) }
        // −y = −(v − cy)·z/fy is extreme on the top and bottom rows at the depth extremes.
        let ys = [Float(0), Float(k.height - 1)].flatMap { v in [stats.min, stats.max].map { -(v - k.cy) * $0 / k.fy } }
        return ys.min()!...max(ys.max()!, ys.min()! + 1e-3)
    }

    /// A point list's: depth = z extent, height = −y extent.
    public static func colorRange(_ by: PointCloudColorBy, min lo: SIMD3<Float>, max hi: SIMD3<Float>) -> ClosedRange<Float> {
        by == .depth ? lo.z...Swift.max(hi.z, lo.z + 1e-3) : -hi.y...Swift.max(-lo.y, -hi.y + 1e-3)
    }
}
