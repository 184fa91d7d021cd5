import XCTest
import Foundation
import DepthKit

/// `render3d --edl [--edl-strength S --edl-radius R]`: eye-dome lighting on the cpu and compute
/// paths (within 1 LSB of each other), only ever darkening, on by default for a PLY without
/// colors, and its bad values one-line errors. Validation on.
final class Render3DEDLTests: CLITestCase {
    let validation = ["DEPTHLENS_VALIDATION": "1"]

    func render(_ args: [String], _ name: String) throws -> (PixelBuffer, String) {
        let out = path(name)
        let r = try CLI.run(["render3d", "--out", out] + args, environment: validation)
        XCTAssertEqual(r.status, 0, r.stderr)
        return (try ImageIO.read(out), r.stdout + r.stderr)
    }

    /// (pixels darker than `plain` in some channel, pixels brighter, largest channel difference to `other`).
    func compare(_ a: PixelBuffer, plain: PixelBuffer, other: PixelBuffer) -> (darker: Int, brighter: Int, maxDiff: Int) {
        var darker = 0, brighter = 0, maxDiff = 0
        for y in 0..<a.height {
            for x in 0..<a.width {
                let p = a.rgba(x: x, y: y), q = plain.rgba(x: x, y: y), o = other.rgba(x: x, y: y)
                let pa = [p.0, p.1, p.2], qa = [q.0, q.1, q.2], oa = [o.0, o.1, o.2]
                if zip(pa, qa).contains(where: { $0 < $1 }) { darker += 1 }
                if zip(pa, qa).contains(where: { $0 > $1 }) { brighter += 1 }
                for (u, v) in zip(pa, oa) { maxDiff = max(maxDiff, abs(Int(u) - Int(v))) }
            }
        }
        return (darker, brighter, maxDiff)
    }

    func testEDLDarkensEdgesAndCPUAgreesWithCompute() throws {
        let view = ["--synthetic", "--width", "200", "--height", "150", "--yaw", "25", "--point-size", "2"]
        let (plain, _) = try render(view + ["--points", "cpu"], "plain.png")
        for settings in [[String](), ["--edl-strength", "0.4", "--edl-radius", "3"]] {
            let (cpu, said) = try render(view + ["--points", "cpu", "--edl"] + settings, "cpu.png")
            let (gpu, _) = try render(view + ["--points", "compute", "--edl"] + settings, "gpu.png")
            XCTAssertTrue(said.contains("eye-dome lighting"), said)
            let c = compare(cpu, plain: plain, other: gpu)
            XCTAssertGreaterThan(c.darker, 200, "\(settings): edges darken")
            XCTAssertEqual(c.brighter, 0, "\(settings): EDL never brightens")
            XCTAssertLessThanOrEqual(c.maxDiff, 1, "\(settings): cpu and compute within 1 LSB")
        }
    }

    /// A PLY without colors (two walls, one behind the other): shaded by default, --no-edl not.
    func testPLYWithoutColorsHasEDLByDefault() throws {
        var lines = ["ply", "format ascii 1.0"]
        var pts: [String] = []
        for v in 0..<40 {
            for u in 0..<60 {
                let z: Float = u < 30 ? 2 : 3
                pts.append("\(Float(u) * 0.02) \(Float(v) * 0.02) \(z)")
            }
        }
        lines += ["element vertex \(pts.count)", "property float x", "property float y", "property float z", "end_header"]
        let ply = path("walls.ply")
        try (lines + pts).joined(separator: "\n").appending("\n").write(toFile: ply, atomically: true, encoding: .utf8)
        let view = ["--ply", ply, "--width", "160", "--height", "120", "--point-size", "3", "--points", "cpu"]
        let (shaded, said) = try render(view, "shaded.png")
        XCTAssertTrue(said.contains("eye-dome lighting strength 1.0 radius 1"), said)
        let (plain, quiet) = try render(view + ["--no-edl"], "plain.png")
        XCTAssertFalse(quiet.contains("eye-dome"), quiet)
        let c = compare(shaded, plain: plain, other: shaded)
        XCTAssertGreaterThan(c.darker, 0, "the far wall darkens along the step")
        XCTAssertEqual(c.brighter, 0)
        // A colored cloud: off unless asked.
        let colored = path("scene.ply")
        XCTAssertEqual(try CLI.run(["export-ply", "--synthetic", "--out", colored]).status, 0)
        let (_, note) = try render(["--ply", colored, "--width", "64", "--height", "48", "--points", "cpu"], "c.png")
        XCTAssertFalse(note.contains("eye-dome"), note)
    }

    func testBadEDLValuesAreOneLineErrors() throws {
        let out = path("bad.png")
        try assertBadInput(["render3d", "--synthetic", "--edl", "--edl-strength", "9", "--out", out], mentioning: "--edl-strength", noFile: out)
        try assertBadInput(["render3d", "--synthetic", "--edl", "--edl-radius", "0", "--out", out], mentioning: "--edl-radius", noFile: out)
        try assertBadInput(["render3d", "--synthetic", "--edl", "--points", "raster", "--out", out], mentioning: "--edl", noFile: out)
    }

    /// `--adaptive-size`: cpu and compute draw the same picture (depth frame and PLY), unlike the
    /// fixed size's; from farther away the squares shrink (fewer covered pixels than fixed 8 px).
    func testAdaptiveSizeCPUAndComputeAgree() throws {
        let ply = path("scene.ply")
        XCTAssertEqual(try CLI.run(["export-ply", "--synthetic", "--out", ply]).status, 0)
        for view in [["--synthetic", "--width", "200", "--height", "150", "--yaw", "25"],
                     ["--ply", ply, "--width", "160", "--height", "120", "--distance", "6"]] {
            let (cpu, said) = try render(view + ["--points", "cpu", "--adaptive-size"], "cpu.png")
            let (gpu, _) = try render(view + ["--points", "compute", "--adaptive-size"], "gpu.png")
            XCTAssertTrue(said.contains("adaptive point size up to 8.0"), said)
            XCTAssertEqual(cpu.packedBytes(), gpu.packedBytes(), "\(view)")
            let (fixed, _) = try render(view + ["--points", "cpu", "--point-size", "8"], "fixed.png")
            var coveredAdaptive = 0, coveredFixed = 0
            for y in 0..<cpu.height {
                for x in 0..<cpu.width {
                    if cpu.rgba(x: x, y: y) != (26, 26, 26, 255) { coveredAdaptive += 1 }
                    if fixed.rgba(x: x, y: y) != (26, 26, 26, 255) { coveredFixed += 1 }
                }
            }
            XCTAssertGreaterThan(coveredAdaptive, 0, "\(view)")
            XCTAssertLessThan(coveredAdaptive, coveredFixed, "\(view): adaptive squares are smaller than 8 px here")
        }
        let out = path("bad.png")
        try assertBadInput(["render3d", "--synthetic", "--adaptive-size", "--points", "raster", "--out", out],
                           mentioning: "--adaptive-size", noFile: out)
    }
}
