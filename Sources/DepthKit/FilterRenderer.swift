/// One image kernel, CPU or GPU: the interface of AVCamFilter's `FilterRenderer`.
///
/// `RosyFilter` (CPU) and the GPU port of `rosyEffect.comp` implement the same protocol, so the
/// viewer, the CLI and the tests swap backends without knowing which one runs.
public protocol FilterRenderer: AnyObject {
    /// Short name, the one the CLI uses (`rosy`, `grayscale`, `jet`, …).
    var description: String { get }

    /// Allocates what `render` needs for frames of `input`; outputs come from a pool of
    /// `outputRetainedBufferCountHint` buffers (the number of outputs a consumer may hold at once).
    func prepare(input: FrameFormat, outputRetainedBufferCountHint: Int) throws
    /// Drops what `prepare` allocated.
    func reset()
    var inputFormat: FrameFormat? { get }
    var outputFormat: FrameFormat? { get }
    /// Renders one frame. The result comes from the output pool; hold it no longer than needed.
    func render(_ buffer: PixelBuffer) throws -> PixelBuffer
}

/// A kernel of two inputs (fragmentMixer): output at the first input's size.
public protocol MixerRenderer: AnyObject {
    var description: String { get }
    func prepare(input: FrameFormat, secondInput: FrameFormat, outputRetainedBufferCountHint: Int) throws
    func reset()
    var inputFormat: FrameFormat? { get }
    var secondInputFormat: FrameFormat? { get }
    var outputFormat: FrameFormat? { get }
    func render(_ a: PixelBuffer, _ b: PixelBuffer) throws -> PixelBuffer
}

/// Errors of kernels and renderers.
public enum RenderError: Error, CustomStringConvertible, Equatable {
    case notPrepared(String)
    case formatMismatch(kernel: String, expected: String, got: FrameFormat)
    case invalidParameter(String)

    public var description: String {
        switch self {
        case .notPrepared(let k): return "\(k): render called before prepare"
        case let .formatMismatch(k, expected, got): return "\(k): expected \(expected), got \(got)"
        case .invalidParameter(let s): return s
        }
    }
}

extension MixerRenderer {
    /// Throws unless prepared, with `a` and `b` in the prepared formats (what `render` checks first).
    public func requirePrepared(_ a: PixelBuffer, _ b: PixelBuffer) throws {
        guard let inputFormat, let secondInputFormat else { throw RenderError.notPrepared(description) }
        guard a.frameFormat == inputFormat else {
            throw RenderError.formatMismatch(kernel: description, expected: inputFormat.description, got: a.frameFormat)
        }
        guard b.frameFormat == secondInputFormat else {
            throw RenderError.formatMismatch(kernel: description, expected: secondInputFormat.description, got: b.frameFormat)
        }
    }
}
