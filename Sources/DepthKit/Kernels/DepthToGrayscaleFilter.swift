import CDepthKit

/// depthToGrayscale on the CPU: v = clamp((d − offset)/range), out = (v, v, v, 255) rgba8.
///
/// `offset` and `range` default, per frame, to the minimum valid depth and (max − min). A range
/// ≤ 0 (one valid depth, or a caller's choice) gives v = 0; invalid depth (0, NaN, ±Inf,
/// negative) gives black (0, 0, 0, 255), as does a frame with no valid depth.
public final class DepthToGrayscaleFilter: FilterRenderer {
    public let description = "grayscale"
    public let offset: Float?
    public let range: Float?
    private var state: PreparedState?

    public init(offset: Float? = nil, range: Float? = nil) {
        self.offset = offset
        self.range = range
    }

    public var inputFormat: FrameFormat? { state?.input }
    public var outputFormat: FrameFormat? { state?.output }

    public func prepare(input: FrameFormat, outputRetainedBufferCountHint: Int) throws {
        try requireFormat(input, [.depthFloat32], kernel: description)
        if let o = offset, !o.isFinite { throw RenderError.invalidParameter("grayscale: offset must be finite") }
        if let r = range, !r.isFinite { throw RenderError.invalidParameter("grayscale: range must be finite") }
        state = try PreparedState(input: input, output: FrameFormat(width: input.width, height: input.height,
                                                                    pixelFormat: .rgba8),
                                  hint: outputRetainedBufferCountHint)
    }

    public func reset() { state = nil }

    public func render(_ buffer: PixelBuffer) throws -> PixelBuffer {
        let s = try state.checked(buffer, kernel: description)
        let out = try s.pool.makeBuffer()
        let stats = offset == nil || range == nil ? validDepthRange(buffer) : (count: 0, min: Float(0), max: Float(0))
        let off = offset ?? stats.min, rng = range ?? (stats.max - stats.min)
        // range ≤ 0: every valid pixel is v = 0. Dividing by 1 with a zero numerator keeps the
        // loop one code path (and no NaN from 0/0).
        let positive = rng > 0
        let divisor: Float = positive ? rng : 1
        let scale: Float = positive ? 1 : 0
        let w = buffer.width
        // Invalid samples are replaced before any arithmetic, so no NaN reaches the conversion.
        let packed = buffer.isPacked && out.isPacked
        parallelRows(buffer.height) { rows in
            forRowRuns(rows, width: w, packed: packed) { y, n in
                dl_k_grayscale(buffer.row(y, as: Float.self), out.row(y, as: UInt32.self), n, off, scale, divisor)
            }
        }
        out.markModified()
        return out
    }
}
