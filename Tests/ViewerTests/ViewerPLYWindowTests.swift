import TestSupport
import DepthKit
import Foundation
import XCTest

/// `view --source ply:FILE`: the window starts in 3D on the whole cloud, a drag orbits, R brings the
/// home view back pixel for pixel; Tab to 2D says there is nothing to show and does not crash.
final class ViewerPLYWindowTests: WindowTestCase {
    func testPLYOpensOrbitsAndResetsExactly() throws {
        let x = try XServer.start()
        defer { x.stop() }
        let f = SyntheticScene().render(width: 320, height: 240, time: 0)
        let cloud = PointCloud.unproject(depth: f.depth, color: f.color)
        let ply = path("scene.ply")
        try PLYWriter.write(cloud, to: ply)
        let v = try ViewerRun(x: x, args: ["--source", "ply:\(ply)", "--no-panel", "--log-ui", "--size", "640x480"])
        defer { if v.process.isRunning { v.process.terminate() } }
        let loaded = try v.waitForLine("ui: point list")
        XCTAssertTrue(loaded.contains("\(cloud.count) points"), loaded)
        try v.waitForLine("ui: ready")
        try v.waitForFrames(5)
        // Overlay text sits at the top; compare the middle of the window.
        func middle(_ name: String, until ready: ([SIMD3<Int>]) -> Bool = { _ in true }) throws -> [SIMD3<Int>] {
            try bandShot(x, name, prefix: "ply", top: 120, bottom: 440, width: 640, until: ready)
        }
        var previous: [SIMD3<Int>] = []
        let home = try middle("home") { px in defer { previous = px }; return px == previous }
        // The cloud is drawn (not only the background): many distinct colors in the middle.
        XCTAssertGreaterThan(Set(home).count, 50, "the point cloud shows in the home view")
        try v.drag(from: 320, 300, to: 450, 330)
        let turned = try middle("orbited") { px in zip(home, px).filter { $0 != $1 }.count > home.count / 4 }
        XCTAssertGreaterThan(zip(home, turned).filter { $0 != $1 }.count, home.count / 4, "an orbit drag changes the picture")

        var n = v.lines.count
        try v.key("r")
        try v.waitForLine("reset", after: n, timeout: 5)
        let back = try middle("reset") { $0 == home }
        XCTAssertEqual(zip(home, back).filter { $0 != $1 }.count, 0, "R restores the home view pixel for pixel")

        n = v.lines.count
        try v.key("Tab")
        let note = try v.waitForLine("notice: 2D", after: n, timeout: 5)
        XCTAssertTrue(note.contains("PLY"), note)
        try v.key("Tab")
        try v.waitForLine("ui: view 3d", after: n, timeout: 5)
        v.quit()
    }

    /// Eye-dome lighting starts on for a PLY without colors and off for a colored one: N flips it
    /// (`ui: 3d eye-dome lighting off` / `on`), and `--no-edl` overrides the default.
    func testEyeDomeLightingDefaultFollowsColor() throws {
        let x = try XServer.start()
        defer { x.stop() }
        let f = SyntheticScene().render(width: 160, height: 120, time: 0)
        let colored = PointCloud.unproject(depth: f.depth, color: f.color)
        let coloredPath = path("colored.ply"), plainPath = path("plain.ply")
        try PLYWriter.write(colored, to: coloredPath)
        var header = "ply\nformat ascii 1.0\nelement vertex \(colored.count)\nproperty float x\nproperty float y\nproperty float z\nend_header\n"
        for p in colored.positions { header += "\(p.x) \(p.y) \(p.z)\n" }
        try header.write(toFile: plainPath, atomically: true, encoding: .utf8)
        for (file, extra, after) in [(plainPath, [String](), "off"), (coloredPath, [], "on"), (plainPath, ["--no-edl"], "on")] {
            let v = try ViewerRun(x: x, args: ["--source", "ply:\(file)", "--no-panel", "--log-ui", "--size", "320x240"] + extra)
            defer { if v.process.isRunning { v.process.terminate() } }
            try v.waitForLine("ui: ready")
            try v.waitForFrames(3)
            let n = v.lines.count
            try v.key("n")
            let line = try v.waitForLine("ui: 3d eye-dome lighting", after: n, timeout: 10)
            XCTAssertTrue(line.hasSuffix(after), "\(file) \(extra): \(line)")
            v.quit()
        }
    }
}
