/// The parameters of a depth mask (`DepthMaskFilter`'s): kind, focus, slope and band width.
public struct DepthMaskSpec: Hashable, Sendable {
    public var kind: DepthMaskKind
    /// Normalized disparity, 0 far … 1 near.
    public var focus: Float
    /// 4 is soft (`DepthMaskFilter.softSlope`), 100 sharp.
    public var slope: Float
    /// Band-pass slab width in normalized disparity.
    public var width: Float

    public init(kind: DepthMaskKind = .highpass, focus: Float, slope: Float = DepthMaskFilter.softSlope, width: Float = 0.1) {
        self.kind = kind; self.focus = focus; self.slope = slope; self.width = width
    }

    /// Portrait's mask: a sharp high-pass (the subject sharp, the background blurred).
    public static func portrait(focus: Float) -> DepthMaskSpec {
        DepthMaskSpec(kind: .highpass, focus: focus, slope: DepthMaskFilter.sharpSlope)
    }

    /// Both backends reject alike: focus, slope and width must be finite.
    public func validate(kernel: String) throws {
        guard focus.isFinite, slope.isFinite, width.isFinite else {
            throw RenderError.invalidParameter("\(kernel): focus, slope and width must be finite")
        }
    }
}

/// A depth-masked effect as a two-input kernel: `render(color, depth)` computes the mask from
/// the depth map (depthFloat32, any size), scales it bilinearly to the color size and applies
/// `kind` to the color image (rgba8 or bgra8); the output has the color image's format and size.
/// `background` (greenscreen only; the color image's pixel format, any size) is read at render
/// time; nil is solid green.
public protocol EffectRenderer: MixerRenderer {
    var kind: DepthEffectKind { get }
    var mask: DepthMaskSpec { get }
    var background: PixelBuffer? { get set }
}

/// The CPU `EffectRenderer`: `DepthMaskFilter.mask` at the depth size, then `DepthEffectRenderer`
/// (which scales the mask to the image size). The mask plane is made in `prepare` and reused, so
/// `render` allocates nothing in steady state.
public final class DepthEffectFilter: EffectRenderer {
    public let kind: DepthEffectKind
    public let mask: DepthMaskSpec
    public var background: PixelBuffer?
    public var description: String { kind.rawValue }
    private let effect: DepthEffectRenderer
    public private(set) var secondInputFormat: FrameFormat?
    /// The mask at the depth size (`secondInputFormat`'s), reused across frames.
    private var maskPlane: [Float] = []

    public init(kind: DepthEffectKind, mask: DepthMaskSpec, background: PixelBuffer? = nil) {
        self.kind = kind; self.mask = mask; self.background = background
        effect = DepthEffectRenderer(kind: kind)
    }

    public var inputFormat: FrameFormat? { effect.inputFormat }
    public var outputFormat: FrameFormat? { effect.outputFormat }

    public func prepare(input: FrameFormat, secondInput: FrameFormat, outputRetainedBufferCountHint: Int) throws {
        try mask.validate(kernel: description)
        try requireFormat(secondInput, [.depthFloat32], kernel: description)
        try effect.prepare(image: input, maskWidth: secondInput.width, maskHeight: secondInput.height,
                           background: kind == .greenscreen ? background?.frameFormat : nil,
                           outputRetainedBufferCountHint: outputRetainedBufferCountHint)
        secondInputFormat = secondInput
        maskPlane = [Float](repeating: 0, count: secondInput.width * secondInput.height)
    }

    public func reset() { effect.reset(); secondInputFormat = nil; maskPlane = [] }

    public func render(_ color: PixelBuffer, _ depth: PixelBuffer) throws -> PixelBuffer {
        try requirePrepared(color, depth)
        let spec = mask, bg = kind == .greenscreen ? background : nil
        return try maskPlane.withUnsafeMutableBufferPointer { m in
            DepthMaskFilter.computeMask(depth, into: m.baseAddress!, kind: spec.kind, focus: spec.focus,
                                        slope: spec.slope, width: spec.width)
            return try effect.render(image: color, mask: m.baseAddress!, maskWidth: depth.width,
                                     maskHeight: depth.height, background: bg)
        }
    }
}

extension CPUFilterFactory {
    /// `DepthMaskFilter` with `spec`, gray8 at `outputWidth` × `outputHeight`.
    public func makeMask(_ spec: DepthMaskSpec, outputWidth: Int, outputHeight: Int) throws -> FilterRenderer {
        DepthMaskFilter(kind: spec.kind, focus: spec.focus, slope: spec.slope, width: spec.width,
                        outputWidth: outputWidth, outputHeight: outputHeight)
    }

    public func makeEffect(_ kind: DepthEffectKind, mask: DepthMaskSpec) throws -> EffectRenderer {
        DepthEffectFilter(kind: kind, mask: mask)
    }
}
