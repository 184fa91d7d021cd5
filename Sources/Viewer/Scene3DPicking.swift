import DepthKit
import GPUKit

/// Picking on a PLY point list (`ply:FILE`, `ply:DIR`): the point drawn nearest to a window point,
/// found on the CPU by projecting the list's points through the view-projection of the last draw —
/// only when asked (a click, a scroll toward the cursor), never per frame. Bounded: at most
/// `maxProjected` points are projected a pick; a larger cloud is sampled every n-th point
/// (n = ⌈count / maxProjected⌉), as the progressive draw samples it while moving.
enum PointPicker {
    static let maxProjected = 4_000_000
    /// Pixels from the cursor a point may be and still be picked (the depth frames' rule too).
    static let radius: Float = 8

    /// The point within `radius` pixels of window point (x, y) whose projection is nearest the
    /// cursor, ties (within a few hundredths of a pixel², weighted by distance) going to the point
    /// nearer the eye: score = d² + w·1e-3, as `Scene3D.pick` scores depth pixels. nil when none.
    /// Where `p` lands: window pixel coordinates (pixel centers on integers) and the clip w; nil
    /// behind the eye. `Scene3D.screen`, the picks and the hover map all place points so.
    @inline(__always)
    static func project(_ p: SIMD3<Float>, _ m: Matrix4, width: Float, height: Float) -> (x: Float, y: Float, w: Float)? {
        let c = m * SIMD4(p, 1)
        guard c.w > 1e-6 else { return nil }
        return ((c.x / c.w + 1) / 2 * width - 0.5, (c.y / c.w + 1) / 2 * height - 0.5, c.w)
    }

    /// A projected point's score for window point (x, y): d² + w·1e-3, nil beyond the radius.
    @inline(__always)
    static func score(_ s: (x: Float, y: Float, w: Float), x: Float, y: Float, radius2: Float) -> Float? {
        let d2 = (s.x - x) * (s.x - x) + (s.y - y) * (s.y - y)
        return d2 <= radius2 ? d2 + s.w * 1e-3 : nil
    }

    static func nearest(_ positions: [SIMD3<Float>], viewProjection m: Matrix4, width: Int, height: Int,
                        x: Double, y: Double) -> SIMD3<Float>? {
        let n = positions.count
        guard n > 0 else { return nil }
        let stride = (n + maxProjected - 1) / maxProjected
        let tx = Float(x), ty = Float(y), w = Float(width), h = Float(height), r2 = radius * radius
        var best: (score: Float, index: Int)?
        positions.withUnsafeBufferPointer { p in
            var i = 0
            while i < n {
                if let s = project(p[i], m, width: w, height: h), let score = score(s, x: tx, y: ty, radius2: r2),
                   best == nil || score < best!.score {
                    best = (score, i)
                }
                i += stride
            }
        }
        return best.map { positions[$0.index] }
    }
}
