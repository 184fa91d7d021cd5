import XCTest
import Foundation
import DepthKit

/// `depthlens render3d` as a user runs it: a PNG of the requested size, the depth camera's view at
/// yaw 0, a different view at yaw 30, and one-line errors with no output for bad numbers.
/// Needs a Vulkan device (lavapipe); the validation layer is on and must stay silent.
final class Render3DCommandTests: CLITestCase {
    let validation = ["DEPTHLENS_VALIDATION": "1"]

    func render(_ extra: [String], out: String) throws -> PixelBuffer {
        let r = try CLI.run(["render3d", "--synthetic", "--out", out] + extra, environment: validation)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.stderr, "", "nothing on stderr (validation messages would show here)")
        return try ImageIO.read(out)
    }

    func testSyntheticSceneAtYaw0ShowsTheBoxInItsColorAtTheRequestedSize() throws {
        let img = try render(["--width", "160", "--height", "120"], out: path("yaw0.png"))
        XCTAssertEqual(img.width, 160); XCTAssertEqual(img.height, 120)
        XCTAssertEqual(img.format, .rgba8)
        let box = SyntheticScene.boxRect.pixels(width: 160, height: 120)
        let c = SyntheticScene.boxColor
        var checked = 0
        // The box face (1 m, nearest) minus a 2-px margin: every pixel is the box's color.
        for y in (box.y.lowerBound + 2)..<(box.y.upperBound - 2) {
            for x in (box.x.lowerBound + 2)..<(box.x.upperBound - 2) {
                XCTAssertTrue(img.rgba(x: x, y: y) == (c.x, c.y, c.z, 255), "box pixel \(x),\(y): \(img.rgba(x: x, y: y))")
                checked += 1
            }
        }
        XCTAssertGreaterThan(checked, 500)
        // Outside the box, right of it at the same height, is the wall, not the box.
        XCTAssertFalse(img.rgba(x: box.x.upperBound + 4, y: box.y.lowerBound + 4) == (c.x, c.y, c.z, 255))
    }

    func testYaw30DiffersFromYaw0AndIsNotEmpty() throws {
        let a = try render(["--width", "96", "--height", "72"], out: path("a.png"))
        let b = try render(["--width", "96", "--height", "72", "--yaw", "30"], out: path("b.png"))
        var differing = 0, background = 0
        for y in 0..<72 {
            for x in 0..<96 {
                let p = a.rgba(x: x, y: y), q = b.rgba(x: x, y: y)
                if p.0 != q.0 || p.1 != q.1 || p.2 != q.2 { differing += 1 }
                if q == (26, 26, 26, 255) { background += 1 }
            }
        }
        XCTAssertGreaterThan(differing, 96 * 72 / 10)
        XCTAssertLessThan(background, 96 * 72 * 2 / 3, "the yaw-30° view shows the cloud")
    }

    func testNegativeAnglesParseAndRepeatPrintsTimePerFrame() throws {
        let out = path("r.png")
        let r = try CLI.run(["render3d", "--synthetic", "--yaw", "-20", "--pitch", "-10", "--roll", "-5",
                             "--width", "64", "--height", "48", "--repeat", "2", "--out", out], environment: validation)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("ms/frame"), r.stdout)
        XCTAssertTrue(FileManager.default.fileExists(atPath: out))
    }

    func testBadNumbersAreOneLineErrorsWithNoOutputFile() throws {
        let out = path("bad.png")
        for (args, name) in [(["--width", "0"], "--width"), (["--height", "-3"], "--height"),
                             (["--distance", "-1"], "--distance"), (["--distance", "0"], "--distance"),
                             (["--point-size", "0"], "--point-size"), (["--pitch", "95"], "--pitch"),
                             (["--yaw", "nan"], "--yaw"), (["--repeat", "0"], "--repeat")] {
            try assertBadInput(["render3d", "--synthetic", "--out", out] + args, mentioning: name, noFile: out)
        }
        try assertBadInput(["render3d", "--color", path("missing.png"), "--depth", path("missing-depth.png"), "--out", out],
                           mentioning: "missing", noFile: out)
    }

    /// No Vulkan driver at all: the GPUKit error as one line, exit 1, no file (no CPU fallback).
    /// Run as a user would, without DEPTHLENS_VALIDATION (scripts/test sets it): the validation
    /// layer's own diagnostics about the missing driver are opt-in output on top of that line.
    func testWithoutAVulkanDeviceOneLineAndNoFile() throws {
        let out = path("nodev.png")
        let r = try CLI.run(["render3d", "--synthetic", "--width", "32", "--height", "24", "--out", out],
                            environment: ["VK_ICD_FILENAMES": "/nonexistent/icd.json", "VK_DRIVER_FILES": "/nonexistent/icd.json"],
                            unsetting: ["DEPTHLENS_VALIDATION"])
        XCTAssertEqual(r.status, 1)
        XCTAssertEqual(r.stderrLines.count, 1, r.stderr)
        XCTAssertTrue(r.stderr.contains("Vulkan"), r.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: out))
    }
}
