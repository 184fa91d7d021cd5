import XCTest
@testable import DepthKit

/// A color buffer from (r, g, b, a) pixels in row-major order, stored in `format`'s byte order.
func makeColor(_ w: Int, _ h: Int, _ format: PixelFormat = .rgba8, _ px: [(UInt8, UInt8, UInt8, UInt8)]) -> PixelBuffer {
    precondition(px.count == w * h)
    let b = PixelBuffer(width: w, height: h, format: format)
    for y in 0..<h { for x in 0..<w { b.setRGBA(x: x, y: y, px[y * w + x]) } }
    return b
}

/// A depthFloat32 buffer from meters in row-major order.
func makeDepth(_ w: Int, _ h: Int, _ d: [Float]) -> PixelBuffer {
    precondition(d.count == w * h)
    let b = PixelBuffer(width: w, height: h, format: .depthFloat32)
    for y in 0..<h { for x in 0..<w { b.row(y, as: Float.self)[x] = d[y * w + x] } }
    return b
}

/// A seeded pseudo-random color image (xorshift), so failures reproduce.
func randomColor(_ w: Int, _ h: Int, _ format: PixelFormat = .rgba8, seed: UInt64 = 0x9E37_79B9_7F4A_7C15) -> PixelBuffer {
    var s = seed
    let b = PixelBuffer(width: w, height: h, format: format)
    for y in 0..<h {
        let r = b.row(y, as: UInt8.self)
        for i in 0..<(w * format.bytesPerPixel) {
            s ^= s << 13; s ^= s >> 7; s ^= s << 17
            r[i] = UInt8(truncatingIfNeeded: s >> 24)
        }
    }
    return b
}

/// Prepares `filter` for `input`'s format (hint 2) and renders it once.
func renderOnce(_ filter: FilterRenderer, _ input: PixelBuffer, hint: Int = 2) throws -> PixelBuffer {
    try filter.prepare(input: input.frameFormat, outputRetainedBufferCountHint: hint)
    return try filter.render(input)
}

/// The pixels of an 8-bit color buffer as flat (r, g, b, a) bytes, whatever its byte order.
func rgbaBytes(_ b: PixelBuffer) -> [UInt8] {
    var out: [UInt8] = []
    for y in 0..<b.height { for x in 0..<b.width { let p = b.rgba(x: x, y: y); out += [p.0, p.1, p.2, p.3] } }
    return out
}
