import XCTest
import Foundation
@testable import DepthKit

final class DepthIOTests: XCTestCase {
    private func gray16(_ values: [[UInt16]]) -> PixelBuffer {
        let b = PixelBuffer(width: values[0].count, height: values.count, format: .gray16(depthScale: 0))
        for (y, r) in values.enumerated() { for (x, v) in r.enumerated() { b.row(y, as: UInt16.self)[x] = v } }
        return b
    }

    func testSixteenBitPNGAndPGMDividedByScale() throws {
        let dir = TempDir()
        let b = gray16([[0, 5000], [10000, 65535]])
        try ImageIO.write(b, to: dir.file("d.png"))
        try ImageIO.write(b, to: dir.file("d.pgm"), pgmLittleEndian: true)
        let png = try DepthIO.readDepth(dir.file("d.png"), depthScale: 5000)
        XCTAssertEqual(png.map.format, .depthFloat32)
        XCTAssertEqual(png.map.sample(x: 0, y: 0), 0)
        XCTAssertEqual(png.map.sample(x: 1, y: 0), 1)
        XCTAssertEqual(png.map.sample(x: 0, y: 1), 2)
        XCTAssertEqual(png.map.sample(x: 1, y: 1), 65535 / 5000, accuracy: 1e-5)
        let pgm = try DepthIO.readDepth(dir.file("d.pgm"), depthScale: 5000, pgmLittleEndian: true)
        XCTAssertEqual(pgm.map.packedBytes(), png.map.packedBytes())
        let mm = try DepthIO.readDepth(dir.file("d.png"), depthScale: nil)
        XCTAssertEqual(mm.map.sample(x: 1, y: 0), 5, "default scale is 1000 units per meter")
        XCTAssertEqual(mm.intrinsics, .default(width: 2, height: 2))
    }

    func testPFMIsMetersAndInvalidSamplesBecomeZero() throws {
        let dir = TempDir()
        let m = floatMap(5, 1) { x, _ in [1.5, .nan, .infinity, -2, -.infinity][x] }
        try ImageIO.write(m, to: dir.file("d.pfm"))
        let d = try DepthIO.readDepth(dir.file("d.pfm"))
        XCTAssertEqual((0..<5).map { d.map.sample(x: $0, y: 0) }, [1.5, 0, 0, 0, 0])
        XCTAssertEqual(d.depthStatistics().validCount, 1)
    }

    func testEightBitImagesAreNotDepth() throws {
        let dir = TempDir()
        try ImageIO.write(makeBuffer(2, 2, .gray8), to: dir.file("g.png"))
        try ImageIO.write(makeBuffer(2, 2, .rgba8), to: dir.file("c.png"))
        XCTAssertFileError(try DepthIO.readDepth(dir.file("g.png")), "8-bit image is not a depth map")
        XCTAssertFileError(try DepthIO.readDepth(dir.file("c.png")), "8-bit image is not a depth map")
    }

    func testAllInvalidDepthIsAnError() throws {
        let dir = TempDir()
        try ImageIO.write(gray16([[0, 0], [0, 0]]), to: dir.file("z.png"))
        XCTAssertFileError(try DepthIO.readDepth(dir.file("z.png")), path: dir.file("z.png"),
                           "depth has no valid samples (all zero, NaN, infinite or negative)")
        try ImageIO.write(floatMap(2, 1) { x, _ in x == 0 ? .nan : -1 }, to: dir.file("n.pfm"))
        XCTAssertFileError(try DepthIO.readDepth(dir.file("n.pfm")), "depth has no valid samples")
    }

    func testBadDepthScale() throws {
        let dir = TempDir()
        try ImageIO.write(gray16([[1]]), to: dir.file("d.png"))
        for s: Float in [0, -5, .nan, .infinity] {
            XCTAssertThrowsError(try DepthIO.readDepth(dir.file("d.png"), depthScale: s)) { e in
                guard case DepthKitError.invalidArgument(let msg) = e else { return XCTFail("\(e)") }
                XCTAssertTrue(msg.hasPrefix("--depth-scale must be a positive number, got "), msg)
            }
        }
    }

    func testMissingDepthFile() {
        XCTAssertFileError(try DepthIO.readDepth("/nonexistent/depth.png"), path: "/nonexistent/depth.png", "no such file")
    }

    func testMiddleburyDisparityToDepth() throws {
        let dir = TempDir()
        // f = 1000 px, B = 0.1 m, doffs = 10 px: d = 90 → Z = 100/100 = 1 m; +Inf invalid.
        try ImageIO.write(floatMap(3, 1) { x, _ in [90, 190, .infinity][x] }, to: dir.file("disp.pfm"))
        let d = try DepthIO.readDisparityAsDepth(dir.file("disp.pfm"), focal: 1000, baseline: 0.1, doffs: 10)
        XCTAssertEqual(d.map.sample(x: 0, y: 0), 1, accuracy: 1e-6)
        XCTAssertEqual(d.map.sample(x: 1, y: 0), 0.5, accuracy: 1e-6)
        XCTAssertEqual(d.map.sample(x: 2, y: 0), 0)
        XCTAssertThrowsError(try DepthIO.readDisparityAsDepth(dir.file("disp.pfm"), focal: 0, baseline: 0.1, doffs: 0))
        try ImageIO.write(floatMap(2, 1) { _, _ in .infinity }, to: dir.file("inf.pfm"))
        XCTAssertFileError(try DepthIO.readDisparityAsDepth(dir.file("inf.pfm"), focal: 1, baseline: 1, doffs: 0),
                           "no valid samples")
    }

    // MARK: Pairs

    func testPairOfEqualAspectAtDifferentResolution() throws {
        let dir = TempDir()
        try ImageIO.write(makeBuffer(8, 6, .rgb8), to: dir.file("c.png"))
        try ImageIO.write(gray16([[1000, 2000, 3000, 4000], [1, 2, 3, 4], [5, 6, 7, 8]]), to: dir.file("d.png"))
        let f = try RGBDFrame.loadPair(color: dir.file("c.png"), depth: dir.file("d.png"), depthScale: 1000)
        XCTAssertEqual(f.color.format, .rgba8)
        XCTAssertEqual(f.depth.map.format, .depthFloat32)
        XCTAssertEqual(f.depth.map.sample(x: 2, y: 0), 3)
        XCTAssertEqual(f.colorPath, dir.file("c.png"))
    }

    func testPairOfDifferentAspectNamesBothFiles() throws {
        let dir = TempDir()
        try ImageIO.write(makeBuffer(640, 480, .rgba8), to: dir.file("c.png"))
        try ImageIO.write(PixelBuffer(width: 100, height: 100, format: .gray16(depthScale: 0)), to: dir.file("d.png"))
        // Aspect is checked after both files are read, so make the depth valid.
        let d = PixelBuffer(width: 100, height: 100, format: .gray16(depthScale: 0))
        d.row(0, as: UInt16.self)[0] = 1000
        try ImageIO.write(d, to: dir.file("d.png"))
        XCTAssertThrowsError(try RGBDFrame.loadPair(color: dir.file("c.png"), depth: dir.file("d.png"))) { e in
            let line = "\(e)"
            XCTAssertTrue(line.contains("color 640x480 and depth 100x100 differ in aspect ratio"), line)
            XCTAssertTrue(line.contains(dir.file("c.png")) && line.contains(dir.file("d.png")), line)
        }
    }
}
