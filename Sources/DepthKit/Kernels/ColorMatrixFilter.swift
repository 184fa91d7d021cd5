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
        parallelRows(src.height) { rows in
            for y in rows {
                let s = src.row(y, as: SIMD4<UInt8>.self), d = out.row(y, as: UInt32.self)
                let sw = src.row(y, as: UInt32.self)
                // Output channel i is bias_i + m_i0·p0 + m_i1·p1 + m_i2·p2 + m_i3·p3, added left to
                // right, p = byte·(1/255). Four pixels at a time, one vector a channel (lanes = pixels).
                var x = 0
                while x + 4 <= w {
                    let px = load4(sw + x)
                    let p0 = channel(px, 0) * inv, p1 = channel(px, 1) * inv
                    let p2 = channel(px, 2) * inv, p3 = channel(px, 3) * inv
                    @inline(__always) func out(_ i: Int) -> U4 {
                        unorm8V((((bias[i] + c0[i] * p0) + c1[i] * p1) + c2[i] * p2) + c3[i] * p3)
                    }
                    store4(packPixels(out(0), out(1), out(2), out(3)), d + x)
                    x += 4
                }
                // The rest one pixel a SIMD4 whose lanes are the output channels.
                for x in x..<w {
                    let p = floats(s[x]) * inv
                    let v = (((bias + c0 * p.x) + c1 * p.y) + c2 * p.z) + c3 * p.w
                    let o = unorm8V(v)
                    d[x] = UInt32(littleEndian: o.x | o.y << 8 | o.z << 16 | o.w << 24)
                }
            }
        }
    }
}
