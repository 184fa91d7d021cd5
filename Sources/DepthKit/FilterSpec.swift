import CDepthKit

/// What a filter computes, independent of the backend that computes it.
///
/// The CLI, the viewer and the tests describe a kernel with a `FilterSpec`; a `FilterFactory`
/// (CPU in DepthKit, GPU in GPUKit) turns it into a `FilterRenderer`. One name across layers:
/// `.rosy` is `RosyFilter` on the CPU and `rosyEffect.comp` on the GPU.
public enum FilterSpec: Hashable, Sendable, CustomStringConvertible {
    /// rosyEffect: out = (R, 0, B, 255). Color in, same color format out.
    case rosy
    /// CIColorMatrix: out = clamp(M·(R,G,B,A) + bias), channels in [0, 1].
    case colorMatrix(ColorMatrix)
    /// depthToGrayscale: v = clamp((d − offset)/range); nil = the frame's min and max − min.
    case grayscale(offset: Float?, range: Float?)
    /// depthToJET and friends: depth in, RGBA out, t per `DepthRange`.
    case colormap(Colormap, DepthRange)

    public var description: String {
        switch self {
        case .rosy: return "rosy"
        case .colorMatrix: return "colorMatrix"
        case .grayscale: return "grayscale"
        case .colormap(let c, _): return c.rawValue
        }
    }

    /// True when the filter reads depth (depthFloat32 meters) rather than color.
    public var takesDepth: Bool {
        switch self {
        case .rosy, .colorMatrix: return false
        case .grayscale, .colormap: return true
        }
    }
}

/// A 4×4 color matrix plus bias, the CIColorMatrix way: rows produce R, G, B, A.
public struct ColorMatrix: Hashable, Sendable {
    public var r: SIMD4<Float>
    public var g: SIMD4<Float>
    public var b: SIMD4<Float>
    public var a: SIMD4<Float>
    public var bias: SIMD4<Float>

    public init(r: SIMD4<Float>, g: SIMD4<Float>, b: SIMD4<Float>, a: SIMD4<Float>, bias: SIMD4<Float> = .zero) {
        self.r = r; self.g = g; self.b = b; self.a = a; self.bias = bias
    }

    public static let identity = ColorMatrix(r: [1, 0, 0, 0], g: [0, 1, 0, 0], b: [0, 0, 1, 0], a: [0, 0, 0, 1])
    /// rosyEffect as a matrix: the G row is zero and alpha is forced to 1.
    public static let rosy = ColorMatrix(r: [1, 0, 0, 0], g: [0, 0, 0, 0], b: [0, 0, 1, 0], a: [0, 0, 0, 0],
                                         bias: [0, 0, 0, 1])
}

/// How depth maps to the colormap parameter t ∈ [0, 1] (t = 1 near, 0 far for JET: red near).
public enum DepthRange: Hashable, Sendable {
    /// Histogram-equalized: t = 1 − cdf(d) over valid depths in [minDepth, maxDepth] with
    /// `binsPerMeter` bins a meter; cdf(d) = share of valid pixels whose bin ≤ d's bin.
    case equalized(minDepth: Float = 0, maxDepth: Float = 16, binsPerMeter: Int = 1000)
    /// t = 1 − clamp((d − min)/(max − min)).
    case fixed(min: Float, max: Float)

    public static let defaultEqualized = DepthRange.equalized()
}

/// Colormaps for depth; all take the same t ∈ [0, 1].
public enum Colormap: String, CaseIterable, Hashable, Sendable {
    case jet, turbo, viridis, grayscale

    /// DL_COLORMAP_* of dl_codes.h: the one code table the C kernels, the CPU point renderer and
    /// the GLSL shaders read (a new colormap is a new case, a new code there, and each side's formula).
    public var code: UInt32 {
        switch self {
        case .jet: return DL_COLORMAP_JET
        case .turbo: return DL_COLORMAP_TURBO
        case .viridis: return DL_COLORMAP_VIRIDIS
        case .grayscale: return DL_COLORMAP_GRAYSCALE
        }
    }

    /// The color at t (clamped to [0, 1]) as linear RGB in [0, 1]. GPU shaders use the same formulas.
    @inline(__always)
    public func color(_ t: Float) -> SIMD3<Float> {
        let x = min(max(t, 0), 1)
        switch self {
        case .jet:
            // TrueDepthStreamer's JET: red = near (t = 1), blue = far (t = 0).
            return SIMD3(clamp01(min(4 * x - 1.5, 4.5 - 4 * x)),
                         clamp01(min(4 * x - 0.5, 3.5 - 4 * x)),
                         clamp01(min(4 * x + 0.5, 2.5 - 4 * x)))
        case .turbo:
            // Google's Turbo, polynomial approximation (A. Mikhailov, 2019).
            let v4 = SIMD4<Float>(1, x, x * x, x * x * x)
            let v2 = SIMD2<Float>(v4.z * v4.z, v4.z * v4.w)
            let r4 = SIMD4<Float>(0.13572138, 4.61539260, -42.66032258, 132.13108234)
            let g4 = SIMD4<Float>(0.09140261, 2.19418839, 4.84296658, -14.18503333)
            let b4 = SIMD4<Float>(0.10667330, 12.64194608, -60.58204836, 110.36276771)
            let r2 = SIMD2<Float>(-152.94239396, 59.28637943)
            let g2 = SIMD2<Float>(4.27729857, 2.82956604)
            let b2 = SIMD2<Float>(-89.90310912, 27.34824973)
            let r = (v4 * r4).sum() + (v2 * r2).sum()
            let g = (v4 * g4).sum() + (v2 * g2).sum()
            let b = (v4 * b4).sum() + (v2 * b2).sum()
            return SIMD3(clamp01(r), clamp01(g), clamp01(b))
        case .viridis:
            // Viridis, degree-6 polynomial fit (after matplotlib's table).
            let c0 = SIMD3<Float>(0.2777273272234177, 0.005407344544966578, 0.3340998053353061)
            let c1 = SIMD3<Float>(0.1050930431085774, 1.404613529898575, 1.384590162594685)
            let c2 = SIMD3<Float>(-0.3308618287255563, 0.214847559468213, 0.09509516302823659)
            let c3 = SIMD3<Float>(-4.634230498983486, -5.799100973351585, -19.33244095627987)
            let c4 = SIMD3<Float>(6.228269936347081, 14.17993336680509, 56.69055260068105)
            let c5 = SIMD3<Float>(4.776384997670288, -13.74514537774601, -65.35303263337234)
            let c6 = SIMD3<Float>(-5.435455855934631, 4.645852612178535, 26.3124352495832)
            // Horner's rule, one step a line (keeps the type checker fast).
            var v: SIMD3<Float> = c6
            v = c5 + x * v
            v = c4 + x * v
            v = c3 + x * v
            v = c2 + x * v
            v = c1 + x * v
            v = c0 + x * v
            return SIMD3(clamp01(v.x), clamp01(v.y), clamp01(v.z))
        case .grayscale:
            return SIMD3(repeating: x)
        }
    }
}

@inline(__always)
public func clamp01(_ v: Float) -> Float { min(max(v, 0), 1) }

/// A [0, 1] value to an 8-bit sample, rounding to nearest (docs/design/overview.md: 8-bit results round to nearest).
@inline(__always)
public func unorm8(_ v: Float) -> UInt8 { UInt8(clamp01(v) * 255 + 0.5) }

/// Builds renderers for `FilterSpec`s on one backend.
public protocol FilterFactory: AnyObject {
    /// "cpu" or the GPU's device name.
    var backendName: String { get }
    func makeFilter(_ spec: FilterSpec) throws -> FilterRenderer
    func makeMixer(mixFactor: Float) throws -> MixerRenderer
    /// A depth mask: depthFloat32 in, gray8 out at `outputWidth` × `outputHeight` (`DepthMaskFilter`).
    func makeMask(_ spec: DepthMaskSpec, outputWidth: Int, outputHeight: Int) throws -> FilterRenderer
    /// A depth-masked effect: color and depth in, the color's format out (`DepthEffectFilter`).
    func makeEffect(_ kind: DepthEffectKind, mask: DepthMaskSpec) throws -> EffectRenderer
}

extension DepthRange {
    /// The most histogram bins an equalized range may have.
    public static let maximumBins = 1 << 24

    /// Checks the range (finite, min < max, positive bins per meter) and returns the number of
    /// histogram bins (1 for a fixed range). Both backends call this, so they reject alike.
    public func validatedBinCount(kernel: String) throws -> Int {
        switch self {
        case let .equalized(lo, hi, perMeter):
            guard lo.isFinite, hi.isFinite, lo < hi, perMeter > 0 else {
                throw RenderError.invalidParameter("\(kernel): equalized range needs minDepth < maxDepth and binsPerMeter > 0")
            }
            let n = ((hi - lo) * Float(perMeter)).rounded(.up)
            guard n <= Float(Self.maximumBins) else {
                throw RenderError.invalidParameter("\(kernel): \(n) histogram bins is too many (at most \(Self.maximumBins))")
            }
            return max(1, Int(n))
        case let .fixed(lo, hi):
            // The CPU loop needs 0 < max − min < ∞ (its quotient is then never NaN).
            guard lo.isFinite, hi.isFinite, lo < hi, (hi - lo).isFinite else {
                throw RenderError.invalidParameter("\(kernel): fixed range needs min < max")
            }
            return 1
        }
    }
}
