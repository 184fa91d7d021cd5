import XCTest
@testable import DepthKit

/// 8-bit Middlebury disparity PNGs and inverse-depth PFMs.
final class DepthReaderTests: XCTestCase {
    func testEightBitDisparityPNGWithScale() throws {
        let dir = TempDir()
        // Value / 4 = disparity px; f = 1000, B = 0.1 m, doffs = 10: 360 → d 90 → 1 m; 0 → invalid.
        let b = PixelBuffer(width: 3, height: 1, format: .gray8)
        b.row(0, as: UInt8.self)[0] = 200; b.row(0, as: UInt8.self)[1] = 0; b.row(0, as: UInt8.self)[2] = 160
        try ImageIO.write(b, to: dir.file("disp0GT.png"))
        let d = try DepthIO.readDisparityAsDepth(dir.file("disp0GT.png"), focal: 1000, baseline: 0.1, doffs: 10, disparityScale: 4)
        XCTAssertEqual(d.map.sample(x: 0, y: 0), 100 / (50 + 10), accuracy: 1e-6)
        XCTAssertEqual(d.map.sample(x: 1, y: 0), 0, "0 is invalid even with doffs > 0")
        XCTAssertEqual(d.map.sample(x: 2, y: 0), 100 / (40 + 10), accuracy: 1e-6)
    }

    func testEightBitDisparityErrors() throws {
        let dir = TempDir()
        try ImageIO.write(PixelBuffer(width: 2, height: 2, format: .gray8), to: dir.file("zero.png"))
        XCTAssertFileError(try DepthIO.readDisparityAsDepth(dir.file("zero.png"), focal: 1, baseline: 1, doffs: 0, disparityScale: 1),
                           path: dir.file("zero.png"), "no valid samples")
        let one = PixelBuffer(width: 1, height: 1, format: .gray8)
        one.row(0, as: UInt8.self)[0] = 9
        try ImageIO.write(one, to: dir.file("d.png"))
        XCTAssertFileError(try DepthIO.readDisparityAsDepth(dir.file("d.png"), focal: 1, baseline: 1, doffs: 0),
                           path: dir.file("d.png"), "8-bit disparity needs --disparity-scale")
        XCTAssertThrowsError(try DepthIO.readDisparityAsDepth(dir.file("d.png"), focal: 1, baseline: 1, doffs: 0, disparityScale: 0))
        try ImageIO.write(floatMap(1, 1) { _, _ in 5 }, to: dir.file("d.pfm"))
        XCTAssertFileError(try DepthIO.readDisparityAsDepth(dir.file("d.pfm"), focal: 1, baseline: 1, doffs: 0, disparityScale: 2),
                           "--disparity-scale is for 8-bit disparity PNGs")
    }

    func testInverseDepthPFM() throws {
        let dir = TempDir()
        try ImageIO.write(floatMap(4, 1) { x, _ in [0.5, 2, 0, -1][x] }, to: dir.file("inv.pfm"))
        let d = try DepthIO.readInverseDepth(dir.file("inv.pfm"))
        XCTAssertEqual(d.map.format, .depthFloat32)
        XCTAssertEqual(d.map.sample(x: 0, y: 0), 2)
        XCTAssertEqual(d.map.sample(x: 1, y: 0), 0.5)
        XCTAssertEqual(d.map.sample(x: 2, y: 0), 0)
        XCTAssertEqual(d.map.sample(x: 3, y: 0), 0)
    }

    func testInverseDepthErrors() throws {
        let dir = TempDir()
        try ImageIO.write(floatMap(2, 1) { _, _ in .nan }, to: dir.file("nan.pfm"))
        XCTAssertFileError(try DepthIO.readInverseDepth(dir.file("nan.pfm")), path: dir.file("nan.pfm"), "no valid samples")
        let b = PixelBuffer(width: 1, height: 1, format: .gray16(depthScale: 0))
        try ImageIO.write(b, to: dir.file("d.png"))
        XCTAssertFileError(try DepthIO.readInverseDepth(dir.file("d.png")), "inverse depth must be a gray PFM")
        XCTAssertFileError(try DepthIO.readInverseDepth(dir.file("missing.pfm")), "no such file")
    }
}
