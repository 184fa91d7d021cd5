import XCTest
import Foundation
import DepthKit

/// `render3d --ply` with files `export-ply` writes, the --points / --atomics / --color-by choices,
/// and their one-line errors. Validation on and silent.
final class Render3DPLYTests: CLITestCase {
    let validation = ["DEPTHLENS_VALIDATION": "1"]

    func covered(_ img: PixelBuffer) -> Int {
        var n = 0
        for y in 0..<img.height { for x in 0..<img.width where !(img.rgba(x: x, y: y) == (26, 26, 26, 255)) { n += 1 } }
        return n
    }

    /// Binary and ASCII exports render the same picture from the PLY home view.
    func testExportedPLYBinaryAndASCIIRenderTheSameWholeCloud() throws {
        var images: [[UInt8]] = []
        for ascii in [false, true] {
            let ply = path("scene-\(ascii).ply"), png = path("scene-\(ascii).png")
            let e = try CLI.run(["export-ply", "--synthetic", "--out", ply] + (ascii ? ["--ascii"] : []))
            XCTAssertEqual(e.status, 0, e.stderr)
            let r = try CLI.run(["render3d", "--ply", ply, "--width", "160", "--height", "120", "--out", png], environment: validation)
            XCTAssertEqual(r.status, 0, r.stderr)
            // Nothing on stderr but the load's progress bar, which shows when loading takes over a second (a loaded machine).
            let other = r.stderr.split(whereSeparator: { $0 == "\n" || $0 == "\r" }).filter { !$0.hasPrefix("load scene-\(ascii).ply:") }
            XCTAssertEqual(other, [], r.stderr)
            let img = try ImageIO.read(png)
            XCTAssertEqual(img.width, 160)
            // The home view frames the whole cloud: covered, with background on every border.
            XCTAssertGreaterThan(covered(img), 160 * 120 / 10)
            for x in 0..<160 { XCTAssertTrue(img.rgba(x: x, y: 0) == (26, 26, 26, 255)) }
            images.append(img.packedBytes())
        }
        XCTAssertEqual(images[0], images[1], "ASCII and binary PLY draw the same picture")
    }

    /// Compute 64-bit and 32-bit draw the same pixels; raster agrees on ≥ 95% here (the 640x480 frame
    /// shrunk to 128x96 puts ~25 points on a pixel, and near-equal depths may round apart; the GPU
    /// tests hold the ≥ 99% criterion at point size 1 without the shrink).
    func testPointsAndAtomicsChoicesAgree() throws {
        var images: [PixelBuffer] = []
        for extra in [["--points", "raster"], ["--points", "compute"], ["--atomics", "32"]] {
            let out = path("p\(images.count).png")
            let r = try CLI.run(["render3d", "--synthetic", "--width", "128", "--height", "96", "--point-size", "1", "--yaw", "10", "--out", out] + extra,
                                environment: validation)
            XCTAssertEqual(r.status, 0, r.stderr)
            XCTAssertEqual(r.stderr, "")
            images.append(try ImageIO.read(out))
        }
        XCTAssertEqual(images[1].packedBytes(), images[2].packedBytes(), "64-bit and 32-bit atomics")
        var same = 0
        for y in 0..<96 { for x in 0..<128 where images[1].rgba(x: x, y: y) == images[0].rgba(x: x, y: y) { same += 1 } }
        XCTAssertGreaterThanOrEqual(Double(same), 0.95 * 128 * 96)
    }

    func testBadChoicesAreOneLineErrors() throws {
        let out = path("bad.png")
        try assertBadInput(["render3d", "--synthetic", "--atomics", "16", "--out", out], mentioning: "--atomics", noFile: out)
        try assertBadInput(["render3d", "--synthetic", "--points", "raster", "--color-by", "height", "--out", out],
                           mentioning: "--color-by", noFile: out)
        try assertBadInput(["render3d", "--ply", path("missing.ply"), "--out", out], mentioning: "missing.ply", noFile: out)
        let junk = path("junk.ply")
        try Data("ply\nformat ascii 1.0\nelement vertex 5\nproperty float x\nend_header\n1\n".utf8).write(to: URL(fileURLWithPath: junk))
        try assertBadInput(["render3d", "--ply", junk, "--out", out], mentioning: "junk.ply", noFile: out)
    }
}
