/// rosyEffect on the CPU: out = (R, 0, B, 255), the reference for `rosyEffect.comp`.
///
/// Takes rgba8 or bgra8 and writes the same format. Both layouts keep G in byte 1 and A in
/// byte 3, so one 32-bit mask serves both: keep bytes 0 and 2, zero byte 1, set byte 3.
public final class RosyFilter: FilterRenderer {
    public let description = "rosy"
    private var state: PreparedState?

    public init() {}

    public var inputFormat: FrameFormat? { state?.input }
    public var outputFormat: FrameFormat? { state?.output }

    public func prepare(input: FrameFormat, outputRetainedBufferCountHint: Int) throws {
        try requireFormat(input, [.rgba8, .bgra8], kernel: description)
        state = try PreparedState(input: input, output: input, hint: outputRetainedBufferCountHint)
    }

    public func reset() { state = nil }

    public func render(_ buffer: PixelBuffer) throws -> PixelBuffer {
        let s = try state.checked(buffer, kernel: description)
        let out = try s.pool.makeBuffer()
        let w = buffer.width
        // Byte order in memory: [c0, G, c2, A]; as a little-endian word G is bits 8–15, A bits 24–31.
        let keep = UInt32(littleEndian: 0x00FF_00FF), alpha = UInt32(littleEndian: 0xFF00_0000)
        parallelRows(buffer.height) { rows in
            for y in rows {
                let src = buffer.row(y, as: UInt32.self), dst = out.row(y, as: UInt32.self)
                for x in 0..<w { dst[x] = (src[x] & keep) | alpha }
            }
        }
        out.markModified()
        return out
    }
}
