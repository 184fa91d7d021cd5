import Foundation

extension PlaneMoments {
    /// The sums of `CPUPlaneMoments` over an arbitrary point set (two passes: the centroid, rounded
    /// to Float, then the centered second moments of Float differences summed in Double).
    public init(points: [SIMD3<Float>]) {
        guard !points.isEmpty else { self.init(count: 0, centroid: .zero); return }
        var s = SIMD3<Double>.zero
        for p in points { s += SIMD3(Double(p.x), Double(p.y), Double(p.z)) }
        let n = Double(points.count)
        let c = SIMD3<Float>(Float(s.x / n), Float(s.y / n), Float(s.z / n))
        self.init(count: points.count, centroid: c)
        for p in points {
            let t = p - c
            xx += Double(t.x * t.x); xy += Double(t.x * t.y); xz += Double(t.x * t.z)
            yy += Double(t.y * t.y); yz += Double(t.y * t.z); zz += Double(t.z * t.z)
        }
    }
}

extension FittedPlane {
    /// The same plane with its normal turned toward the camera (the origin): then `distance(p)` is
    /// the height of p above the plane on the camera's side, and `d` the camera's height.
    public var facingCamera: FittedPlane { d >= 0 ? self : FittedPlane(normal: -normal, d: -d) }

    /// The least-squares plane through `points` (orthogonal distances: the covariance's smallest
    /// eigenvector), facing the camera; nil as `fit`.
    public static func leastSquares(_ points: [SIMD3<Float>]) -> FittedPlane? {
        orthogonalFit(PlaneMoments(points: points))?.facingCamera
    }

    /// The total-least-squares plane of `m`: starting from `fit`'s normal (the Depth Quality Tool's
    /// method, which solves for one coordinate and so leans slightly toward that axis), inverse
    /// iteration on the covariance converges to its smallest eigenvector; a covariance without an
    /// inverse (points exactly on a plane) keeps `fit`'s normal, which is then exact.
    public static func orthogonalFit(_ m: PlaneMoments) -> FittedPlane? {
        guard let start = fit(m) else { return nil }
        let (a, b, c, d, e, f) = (m.xx, m.xy, m.xz, m.yy, m.yz, m.zz)
        // The adjugate of [[a b c] [b d e] [c e f]] (symmetric).
        let adj = (xx: d * f - e * e, xy: c * e - b * f, xz: b * e - c * d, yy: a * f - c * c, yz: b * c - a * e, zz: a * d - b * b)
        let det = a * adj.xx + b * adj.xy + c * adj.xz
        var n = start.normal
        if det > 0, det.isFinite {
            for _ in 0..<50 {
                let y = SIMD3(adj.xx * n.x + adj.xy * n.y + adj.xz * n.z,
                              adj.xy * n.x + adj.yy * n.y + adj.yz * n.z,
                              adj.xz * n.x + adj.yz * n.y + adj.zz * n.z)
                let len = (y * y).sum().squareRoot()
                guard len > 0, len.isFinite else { break }
                var next = y / len
                if (next * n).sum() < 0 { next = -next }
                let change = ((next - n) * (next - n)).sum()
                n = next
                if change < 1e-30 { break }
            }
        }
        let centroid = SIMD3<Double>(Double(m.centroid.x), Double(m.centroid.y), Double(m.centroid.z))
        return FittedPlane(normal: n, d: -(n * centroid).sum())
    }

    /// RMS of the points' distances from the plane (meters); 0 for none.
    public func rms(_ points: [SIMD3<Float>]) -> Double {
        guard !points.isEmpty else { return 0 }
        var s = 0.0
        for p in points { let e = distance(p); s += e * e }
        return (s / Double(points.count)).squareRoot()
    }

    /// Where the ray through the origin and `direction` meets the plane; nil when it runs parallel
    /// to it or meets it behind the camera.
    public func intersect(ray direction: SIMD3<Double>) -> SIMD3<Double>? {
        let denom = (normal * direction).sum()
        guard abs(denom) > 1e-12 else { return nil }
        let t = -d / denom
        guard t > 0, t.isFinite else { return nil }
        return t * direction
    }
}

/// SplitMix64: the RANSAC's sampler, seeded so a measurement reproduces.
struct SplitMix64: RandomNumberGenerator, Sendable {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// How `PlaneRANSAC` searches.
public struct RANSACSettings: Sendable, Equatable {
    /// Hypotheses tried (three random points each).
    public var iterations: Int
    /// Inlier distance in meters; nil: 1 % of the points' median depth, at least 2 mm.
    public var threshold: Double?
    /// The sampler's seed: the same points and seed give the same plane.
    public var seed: UInt64
    /// Hypotheses are scored on at most this many points (an even stride through them); the
    /// refinement uses all of them.
    public var maxScoredPoints: Int

    public init(iterations: Int = 500, threshold: Double? = nil, seed: UInt64 = 0x5EED_DEB7, maxScoredPoints: Int = 20_000) {
        self.iterations = iterations; self.threshold = threshold; self.seed = seed; self.maxScoredPoints = maxScoredPoints
    }
}

/// The dominant plane of a point set.
public struct RANSACPlane: Sendable, Equatable {
    /// The least-squares plane through the inliers, facing the camera.
    public var plane: FittedPlane
    /// Points within `threshold` of `plane` (of all the points given).
    public var inliers: Int
    /// RMS distance of those inliers from the plane, meters.
    public var inlierRMS: Double
    /// The inlier distance used, meters.
    public var threshold: Double
}

/// RANSAC for the dominant plane (MSAC scoring: Σ min(e², τ²), lower is better), then refined:
/// the least-squares plane through the inliers, the inliers again by that plane, and a second
/// least-squares fit. Deterministic for a given seed.
public enum PlaneRANSAC {
    public static func fit(_ points: [SIMD3<Float>], settings s: RANSACSettings = RANSACSettings()) -> RANSACPlane? {
        guard points.count >= 3 else { return nil }
        let step = max(1, points.count / max(3, s.maxScoredPoints))
        let scored = stride(from: 0, to: points.count, by: step).map { points[$0] }
        let tau = s.threshold ?? max(0.002, 0.01 * Double(scored.map(\.z).sorted()[scored.count / 2]))
        var rng = SplitMix64(seed: s.seed)
        var best: FittedPlane?
        var bestCost = Double.infinity
        let tau2 = tau * tau
        for _ in 0..<max(1, s.iterations) {
            let i = Int.random(in: 0..<scored.count, using: &rng)
            let j = Int.random(in: 0..<scored.count, using: &rng)
            let k = Int.random(in: 0..<scored.count, using: &rng)
            guard i != j, j != k, i != k else { continue }
            let a = SIMD3<Double>(scored[i]), b = SIMD3<Double>(scored[j]), c = SIMD3<Double>(scored[k])
            let cr = cross(b - a, c - a)
            let len = (cr * cr).sum().squareRoot()
            guard len > 1e-12 else { continue }
            let n = cr / len
            let h = FittedPlane(normal: n, d: -(n * a).sum())
            var cost = 0.0
            for p in scored {
                let e = h.distance(p)
                cost += min(e * e, tau2)
                if cost >= bestCost { break }
            }
            if cost < bestCost { bestCost = cost; best = h }
        }
        guard var plane = best else { return nil }
        var inliers: [SIMD3<Float>] = []
        for _ in 0..<2 {
            inliers = points.filter { abs(plane.distance($0)) < tau }
            guard let refined = FittedPlane.leastSquares(inliers) else { return nil }
            plane = refined
        }
        inliers = points.filter { abs(plane.distance($0)) < tau }
        return RANSACPlane(plane: plane, inliers: inliers.count, inlierRMS: plane.rms(inliers), threshold: tau)
    }

    @inline(__always)
    static func cross(_ a: SIMD3<Double>, _ b: SIMD3<Double>) -> SIMD3<Double> {
        SIMD3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x)
    }
}
