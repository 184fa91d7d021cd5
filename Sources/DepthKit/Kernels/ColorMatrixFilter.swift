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
        let inv: Float = 1 / 255
        // Scalars, not SIMD4 methods: `clamped` on SIMD4 is a generic call per pixel.
        let m00 = c0.x, m10 = c0.y, m20 = c0.z, m30 = c0.w
        let m01 = c1.x, m11 = c1.y, m21 = c1.z, m31 = c1.w
        let m02 = c2.x, m12 = c2.y, m22 = c2.z, m32 = c2.w
        let m03 = c3.x, m13 = c3.y, m23 = c3.z, m33 = c3.w
        let b0 = bias.x, b1 = bias.y, b2 = bias.z, b3 = bias.w
        parallelRows(src.height) { rows in
            for y in rows {
                let s = src.row(y, as: UInt8.self), d = out.row(y, as: UInt32.self)
                for x in 0..<w {
                    let p0 = Float(s[4 * x]) * inv, p1 = Float(s[4 * x + 1]) * inv
                    let p2 = Float(s[4 * x + 2]) * inv, p3 = Float(s[4 * x + 3]) * inv
                    let o0 = unorm8Fast(b0 + m00 * p0 + m01 * p1 + m02 * p2 + m03 * p3)
                    let o1 = unorm8Fast(b1 + m10 * p0 + m11 * p1 + m12 * p2 + m13 * p3)
                    let o2 = unorm8Fast(b2 + m20 * p0 + m21 * p1 + m22 * p2 + m23 * p3)
                    let o3 = unorm8Fast(b3 + m30 * p0 + m31 * p1 + m32 * p2 + m33 * p3)
                    d[x] = UInt32(littleEndian: o0 | o1 << 8 | o2 << 16 | o3 << 24)
                }
            }
        }
    }
}
