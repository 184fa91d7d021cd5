import Foundation

/// Eye-dome lighting of the 3D view (Boucheny 2009, as Potree and CloudCompare shade point
/// clouds): a screen-space pass over the depth the resolve kept per pixel that darkens pixels
/// whose neighbours are nearer, so shape reads without normals. Shared by the CPU renderer and
/// GPUKit's compute path, which compute it with the same float operations:
///
///     L(p)     = log2(w(p)), w = the view depth (clip w) of the pixel's point, recovered from its
///                key ndc.z as w = B / (ndc.z − A) (`depthTerms`)
///     sum      = Σ over the 8 neighbours q of p at (±r, 0), (0, ±r), (±d, ±d), d = max(1, round(r/√2)),
///                in that order, of max(0, L(p) − L(q)); a neighbour outside the picture or
///                background is skipped (counts 0: "as far")
///     shade    = exp(−sum · factor), factor = 300 · strength / 8 (Potree's exp(−300·strength·sum/N))
///     rgb'     = ⌊rgb · shade + ½⌋ (alpha kept); background pixels are left alone.
///
/// A flat region facing the camera is unchanged (every difference is 0, shade exactly 1); at a
/// step in depth the far side's pixels next to the edge darken.
public struct EyeDomeLighting: Equatable, Sendable {
    public var enabled: Bool
    /// 0…5 (Potree's range); 1 by default.
    public var strength: Float {
        didSet { strength = strength.isNaN ? 1 : min(max(strength, 0), 5) }
    }
    /// Neighbour distance in output pixels, 1…8; 1 by default.
    public var radius: Int {
        didSet { radius = min(max(radius, 1), 8) }
    }

    public static let strengthRange: ClosedRange<Float> = 0...5
    public static let radiusRange: ClosedRange<Int> = 1...8

    public init(enabled: Bool = false, strength: Float = 1, radius: Int = 1) {
        self.enabled = enabled
        self.strength = strength.isNaN ? 1 : min(max(strength, 0), 5)
        self.radius = min(max(radius, 1), 8)
    }

    /// The diagonal neighbours' offset: max(1, round(r/√2)).
    public var diagonal: Int { max(1, Int((Float(radius) * 0.70710677).rounded())) }
    /// 300 · strength / 8.
    public var factor: Float { 300 * strength / 8 }

    /// (A, B) with ndc.z = A + B / w for the camera `viewProjection` (16 floats, column-major):
    /// rows 2 and 3 of a perspective projection · view are clip.z = A·clip.w + B (the translation
    /// part), so A = row2·row3 / row3·row3 over the rotation part and B = row2.w − A·row3.w.
    /// Any other matrix (no perspective row): (0, 1), so L is log2(1 / ndc.z).
    public static func depthTerms(_ m: [Float]) -> (a: Float, b: Float) {
        guard m.count == 16 else { return (0, 1) }
        let r2 = SIMD3<Float>(m[2], m[6], m[10]), r3 = SIMD3<Float>(m[3], m[7], m[11])
        let n = (r3 * r3).sum()
        guard n > 0, n.isFinite else { return (0, 1) }
        let a = (r2 * r3).sum() / n
        let b = m[14] - a * m[15]
        guard a.isFinite, b.isFinite, b != 0 else { return (0, 1) }
        return (a, b)
    }
}
