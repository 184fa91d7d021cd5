import CDepthKit

/// CIColorMatrix on the CPU: out = clamp(M·(R,G,B,A)/255 + bias), each channel to 8 bits with
/// `unorm8` (round to nearest). rgba8 or bgra8 in, the same format out; the matrix rows always
/// mean R, G, B, A whatever the byte order.
public final class ColorMatrixFilter: FilterRenderer {
    public let description = "colorMatrix"
    public let matrix: ColorMatrix
    private var state: PreparedState?

    public init(matrix: ColorMatrix) { self.matrix = matrix }

    public var inputFormat: FrameFormat? { state?.input }
    public var outputFormat: FrameFormat? { state?.output }

    public func prepare(input: FrameFormat, outputRetainedBufferCountHint: Int) throws {
        try requireFormat(input, [.rgba8, .bgra8], kernel: description)
        let m = matrix
        for v in [m.r, m.g, m.b, m.a, m.bias] where !(v.x.isFinite && v.y.isFinite && v.z.isFinite && v.w.isFinite) {
            throw RenderError.invalidParameter("colorMatrix: matrix entries must be finite")
        }
        state = try PreparedState(input: input, output: input, hint: outputRetainedBufferCountHint)
    }

    public func reset() { state = nil }

    public func render(_ buffer: PixelBuffer) throws -> PixelBuffer {
        let s = try state.checked(buffer, kernel: description)
        let out = try s.pool.makeBuffer()
        let m = matrix
        // Columns of M in memory order, so a pixel is 4 multiply-adds of SIMD4 with no shuffles:
        // for bgra8 memory holds (B, G, R, A) in and out, so rows and columns swap 0 and 2.
        var c0 = SIMD4(m.r.x, m.g.x, m.b.x, m.a.x)
        let c1 = SIMD4(m.r.y, m.g.y, m.b.y, m.a.y)
        var c2 = SIMD4(m.r.z, m.g.z, m.b.z, m.a.z)
        let c3 = SIMD4(m.r.w, m.g.w, m.b.w, m.a.w)
        var bias = m.bias
        if buffer.format == .bgra8 {
            swap(&c0, &c2)
            c0 = SIMD4(c0.z, c0.y, c0.x, c0.w)
            c2 = SIMD4(c2.z, c2.y, c2.x, c2.w)
            let c1s = SIMD4(c1.z, c1.y, c1.x, c1.w), c3s = SIMD4(c3.z, c3.y, c3.x, c3.w)
            bias = SIMD4(bias.z, bias.y, bias.x, bias.w)
            Self.run(buffer, out, c0, c1s, c2, c3s, bias)
        } else {
            Self.run(buffer, out, c0, c1, c2, c3, bias)
        }
        out.markModified()
        return out
    }

    private static func run(_ src: PixelBuffer, _ out: PixelBuffer, _ c0: SIMD4<Float>, _ c1: SIMD4<Float>,
                            _ c2: SIMD4<Float>, _ c3: SIMD4<Float>, _ bias: SIMD4<Float>) {
        let w = src.width
        // bias, then the four columns: the 20 floats `dl_k_color_matrix` reads (on the stack, no allocation).
        let m = (bias, c0, c1, c2, c3)
        withUnsafeBytes(of: m) { raw in
            let mp = raw.baseAddress!.assumingMemoryBound(to: Float.self)
            parallelRows(src.height) { rows in
                for y in rows { dl_k_color_matrix(src.row(y, as: UInt8.self), out.row(y, as: UInt8.self), w, mp) }
            }
        }
    }
}
