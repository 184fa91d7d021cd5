import Foundation

/// Adaptive point size (`render3d --adaptive-size`, the 3D panel): each point is drawn as a
/// square of ⌈footprint⌉ pixels, clamped to 1…point size (the point size becomes the largest),
/// where the footprint is the point's world spacing seen at its view depth w through the output
/// focal length f (pixels): ⌈spacing · f / w⌉. A sparse cloud seen from near stays closed; from far
/// the squares shrink to single pixels instead of smearing. The spacing:
///  - depth frames: the source pixel's footprint z / fx (fx the depth camera's focal length), so a
///    point covers the pixels its source pixel covers: scale = f / fx, size ⌈scale · z / w⌉;
///  - point lists: the cloud's spacing, estimated once (`spacing(of:)`): scale = spacing · f,
///    size ⌈scale / w⌉.
/// The CPU renderer and the compute path compute the size with the same float operations and
/// carry it in the point's color alpha byte; the resolve's window is the largest size's, and a
/// neighbour's point covers a pixel when the pixel lies in its own size's square.
public enum AdaptivePointSize {
    /// The largest size when none is given (`render3d --adaptive-size` without --point-size, the viewer
    /// before [ / ]): 8 pixels, a resolve window of 8×8 reads.
    public static let defaultLargest: Float = 8

    /// Depth frames: output focal length over the depth camera's (both in pixels at their sizes).
    public static func scale(outputFocal: Float, depthFocal: Float) -> Float {
        depthFocal > 0 && outputFocal > 0 ? outputFocal / depthFocal : 0
    }

    /// Point lists: spacing (meters) times the output focal length (pixels).
    public static func scale(outputFocal: Float, spacing: Float) -> Float {
        spacing > 0 && spacing.isFinite && outputFocal > 0 ? spacing * outputFocal : 0
    }

    /// A point list's spacing in meters: the median distance from up to 512 points (every n-th)
    /// to their nearest other point among up to 16,384 points (every m-th, M of them), times
    /// √(M / N) — the spacing of N points on a surface where M of them are sampled (the subset's
    /// spacing is √(N / M) times wider). Coincident points are skipped. 0 for fewer than 2 points.
    public static func spacing(of positions: [SIMD3<Float>]) -> Float {
        let n = positions.count
        guard n >= 2 else { return 0 }
        let m = min(n, 16_384), queries = min(n, 512)
        let candidateStep = Double(n) / Double(m), queryStep = Double(n) / Double(queries)
        var candidates = [SIMD3<Float>](); candidates.reserveCapacity(m)
        for i in 0..<m { candidates.append(positions[min(n - 1, Int(Double(i) * candidateStep))]) }
        var nearest: [Float] = []
        nearest.reserveCapacity(queries)
        for q in 0..<queries {
            let p = positions[min(n - 1, Int((Double(q) + 0.5) * queryStep))]
            var best = Float.infinity
            for c in candidates {
                let d = c - p
                let d2 = (d * d).sum()
                if d2 > 0 && d2 < best { best = d2 }
            }
            if best.isFinite { nearest.append(best.squareRoot()) }
        }
        guard !nearest.isEmpty else { return 0 }
        nearest.sort()
        return nearest[nearest.count / 2] * (Float(m) / Float(n)).squareRoot()
    }
}
