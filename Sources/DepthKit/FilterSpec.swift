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
    /// the GLSL shaders read. A new colormap is a new case here (this switch is exhaustive), a new
    /// code there, and its formula in dl_colormap.h — which C, GLSL and `color(_:)` all use.
    public var code: UInt32 {
        switch self {
        case .jet: return DL_COLORMAP_JET
        case .turbo: return DL_COLORMAP_TURBO
        case .viridis: return DL_COLORMAP_VIRIDIS
        case .grayscale: return DL_COLORMAP_GRAYSCALE
        }
    }

    /// The color at t (clamped to [0, 1]) as linear RGB in [0, 1]: the formulas of
    /// `Shaders/dl_colormap.h`, the one definition the C kernels and the GLSL shaders use too.
    @inline(__always)
    public func color(_ t: Float) -> SIMD3<Float> {
        let c = dl_colormap_rgb(code, min(max(t, 0), 1))
        return SIMD3(clamp01(c.r), clamp01(c.g), clamp01(c.b))
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
