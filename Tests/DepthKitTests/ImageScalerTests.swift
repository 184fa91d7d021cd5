import XCTest
@testable import DepthKit

/// `ImageScaler`: the GPU sampler's bilinear, clamp-to-edge sampling at the target's pixel
/// centers (across, then down, in float), rounded to nearest, on every CPU path; the channel
/// exchange between rgba8 and bgra8; a plain copy at the same size.
final class ImageScalerTests: XCTestCase {
    private var saved = CPUVectorPath.active
    override func setUp() { saved = CPUVectorPath.active }
    override func tearDown() { CPUVectorPath.active = saved }

    /// The formula, pixel by pixel, from `BilinearAxis` (which the mixer's tests pin to u = (x + 0.5)·W/w − 0.5).
    private func reference(_ src: PixelBuffer, _ w: Int, _ h: Int, swap: Bool) -> [UInt8] {
        let bytes = src.packedBytes(), sw = src.width
        let cols = BilinearAxis(source: src.width, target: w), rows = BilinearAxis(source: src.height, target: h)
        var out = [UInt8](repeating: 0, count: w * h * 4)
        for y in 0..<h {
            for x in 0..<w {
                for ch in 0..<4 {
                    let sc = swap && ch != 1 && ch != 3 ? 2 - ch : ch
                    func t(_ xx: Int32, _ yy: Int32) -> Float { Float(bytes[(Int(yy) * sw + Int(xx)) * 4 + sc]) }
                    let fx = cols.f[x], fy = rows.f[y]
                    let top = t(cols.i0[x], rows.i0[y]) * (1 - fx) + t(cols.i1[x], rows.i0[y]) * fx
                    let bottom = t(cols.i0[x], rows.i1[y]) * (1 - fx) + t(cols.i1[x], rows.i1[y]) * fx
                    let v: Float = top * (1 - fy) + bottom * fy + 0.5
                    out[(y * w + x) * 4 + ch] = UInt8(v)
                }
            }
        }
        return out
    }

    func testScalesAsTheSamplerDoesOnEveryPath() throws {
        let src = randomColor(57, 33, seed: 3)
        for path in CPUVectorPath.available {
            CPUVectorPath.active = path
            let scaler = ImageScaler()
            // Down, up, one axis only, to one pixel, and back to an earlier size (cached positions).
            for (w, h) in [(40, 21), (130, 77), (57, 90), (1, 1), (40, 21)] {
                for format in [PixelFormat.rgba8, .bgra8] {
                    let dst = PixelBuffer(width: w, height: h, format: format)
                    try scaler.scale(src, into: dst)
                    XCTAssertEqual(dst.packedBytes(), reference(src, w, h, swap: format == .bgra8),
                                   "\(w)x\(h) \(format) on \(path)")
                }
            }
        }
    }

    func testSameSizeIsACopyWithTheChannelsInTheTargetOrder() throws {
        let src = randomColor(19, 7, seed: 5), bytes = src.packedBytes()
        let scaler = ImageScaler()
        let same = PixelBuffer(width: 19, height: 7, format: .rgba8)
        try scaler.scale(src, into: same)
        XCTAssertEqual(same.packedBytes(), bytes)
        // A padded target (rows longer than the picture) and the other channel order.
        let other = PixelBuffer(width: 19, height: 7, format: .bgra8, bytesPerRow: 19 * 4 + 12)
        try scaler.scale(src, into: other)
        var swapped = bytes
        for i in stride(from: 0, to: swapped.count, by: 4) { swapped.swapAt(i, i + 2) }
        XCTAssertEqual(other.packedBytes(), swapped)
    }

    func testRefusesOtherFormats() {
        let depth = PixelBuffer(width: 4, height: 4, format: .depthFloat32)
        XCTAssertThrowsError(try ImageScaler().scale(depth, into: PixelBuffer(width: 2, height: 2, format: .rgba8)))
    }
}
