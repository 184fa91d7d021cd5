/// Pinhole intrinsics in pixels, for the camera frame x right, y down, z forward (OpenCV / Open3D).
public struct CameraIntrinsics: Hashable, Sendable, Codable, CustomStringConvertible {
    public var fx: Float
    public var fy: Float
    public var cx: Float
    public var cy: Float
    /// Image size the intrinsics refer to.
    public var width: Int
    public var height: Int

    public init(fx: Float, fy: Float, cx: Float, cy: Float, width: Int, height: Int) {
        self.fx = fx; self.fy = fy; self.cx = cx; self.cy = cy
        self.width = width; self.height = height
    }

    /// The design's default (docs/design/overview.md) when none are given: fx = fy = 525·W/640, cx = (W−1)/2, cy = (H−1)/2.
    public static func `default`(width: Int, height: Int) -> CameraIntrinsics {
        let f = 525 * Float(width) / 640
        return CameraIntrinsics(fx: f, fy: f, cx: Float(width - 1) / 2, cy: Float(height - 1) / 2,
                                width: width, height: height)
    }

    /// The same camera at another resolution (principal point scaled about pixel centers).
    public func scaled(toWidth w: Int, height h: Int) -> CameraIntrinsics {
        let sx = Float(w) / Float(width), sy = Float(h) / Float(height)
        return CameraIntrinsics(fx: fx * sx, fy: fy * sy,
                                cx: (cx + 0.5) * sx - 0.5, cy: (cy + 0.5) * sy - 0.5, width: w, height: h)
    }

    /// Unprojects pixel (u, v) at depth z meters to camera coordinates.
    @inline(__always)
    public func unproject(u: Float, v: Float, depth z: Float) -> SIMD3<Float> {
        SIMD3((u - cx) * z / fx, (v - cy) * z / fy, z)
    }

    /// Projects a camera-space point to pixel coordinates.
    @inline(__always)
    public func project(_ p: SIMD3<Float>) -> SIMD2<Float> {
        SIMD2(p.x * fx / p.z + cx, p.y * fy / p.z + cy)
    }

    /// Parses "fx,fy,cx,cy".
    public static func parse(_ s: String, width: Int, height: Int) -> CameraIntrinsics? {
        let parts = s.split(separator: ",").map { Float($0.trimmingCharacters(in: .whitespaces)) }
        guard parts.count == 4, let fx = parts[0], let fy = parts[1], let cx = parts[2], let cy = parts[3],
              fx > 0, fy > 0, fx.isFinite, fy.isFinite, cx.isFinite, cy.isFinite else { return nil }
        return CameraIntrinsics(fx: fx, fy: fy, cx: cx, cy: cy, width: width, height: height)
    }

    public var description: String { "fx=\(fx) fy=\(fy) cx=\(cx) cy=\(cy) (\(width)x\(height))" }
}

import Foundation
