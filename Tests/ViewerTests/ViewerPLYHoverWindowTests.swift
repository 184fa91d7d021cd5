import TestSupport
import DepthKit
import Foundation
import XCTest

/// Hovering over a point of a PLY point list in the 3D view shows its index, position and color
/// (`--log-readout` prints each new hover readout), as the 2D view shows the depth under the cursor.
final class ViewerPLYHoverWindowTests: WindowTestCase {
    func testHoverShowsThePointUnderTheCursor() throws { try hover(points: []) }

    /// The same with the points drawn on the CPU (`--points cpu`).
    func testHoverShowsThePointUnderTheCursorCPUPoints() throws { try hover(points: ["--points", "cpu"], shot: "plyhover-red-cpu") }

    private func hover(points: [String], shot: String = "plyhover-red") throws {
        let x = try XServer.start()
        defer { x.stop() }
        let red = SIMD3<Float>(-0.3, 0.05, 2), blue = SIMD3<Float>(0.25, -0.1, 2.5)
        let ply = path("two.ply")
        try PLYWriter.write(PointCloud(positions: [red, blue], colors: [SIMD3(255, 0, 0), SIMD3(0, 0, 255)]), to: ply)
        let v = try ViewerRun(x: x, args: ["--source", "ply:\(ply)", "--no-panel", "--log-ui", "--log-readout", "--size", "640x480"] + points)
        defer { if v.process.isRunning { v.process.terminate() } }
        try v.waitForLine("ui: ready")
        try v.waitForFrames(5)
        // Where each point is drawn: its one pixel of pure color.
        func find(_ c: SIMD3<Int>, in s: PixelBuffer) -> (Int, Int)? {
            for yy in 0..<480 { for xx in 0..<640 where s.rgb(xx, yy) == c { return (xx, yy) } }
            return nil
        }
        var spots: ((Int, Int), (Int, Int))?
        _ = try x.screenshot(saveAs: path("points.png")) { s in
            guard let r = find(SIMD3(255, 0, 0), in: s), let b = find(SIMD3(0, 0, 255), in: s) else { return false }
            spots = (r, b)
            return true
        }
        let (r, b) = try XCTUnwrap(spots)

        var n = v.lines.count
        try x.xdotool(["mousemove", "\(r.0 + 3)", "\(r.1 - 2)"])   // a few pixels off: still the nearest point
        let first = try v.waitForLine("hover:", after: n, timeout: 20)
        XCTAssertTrue(first.hasPrefix("hover: point 0  "), first)
        XCTAssertTrue(first.hasSuffix("x -0.300 y 0.050 z 2.000 m  rgb 255 0 0"), first)
        // The readout is drawn too: the overlay's yellow text appears at the top left.
        _ = try x.screenshot(saveAs: path("hover.png")) { s in
            (0..<200).contains { yy in (0..<460).contains { xx in
                let c = s.rgb(xx, yy); return c.x > 200 && c.y > 200 && c.z < 190 && c.z > 100 } }
        }
        keep(path("hover.png"), as: shot)

        n = v.lines.count
        try x.xdotool(["mousemove", "\(b.0)", "\(b.1)"])
        let second = try v.waitForLine("hover:", after: n, timeout: 20)
        XCTAssertTrue(second.hasPrefix("hover: point 1  "), second)
        XCTAssertTrue(second.hasSuffix("x 0.250 y -0.100 z 2.500 m  rgb 0 0 255"), second)
        // Depth along the view: the blue point is the farther one from the home view's eye.
        func depth(_ line: String) -> Double? {
            let parts = line.split(separator: " ", omittingEmptySubsequences: true)
            guard parts.count > 4, let d = Double(parts[3]) else { return nil }
            return parts[4] == "mm" ? d / 1000 : d
        }
        let d0 = try XCTUnwrap(depth(first)), d1 = try XCTUnwrap(depth(second))
        XCTAssertGreaterThan(d1, d0, "\(first) / \(second)")
        XCTAssertEqual(d1 - d0, 0.5, accuracy: 0.1, "the points lie 0.5 m apart in z, seen from nearly straight on")
        v.quit()
    }

    /// `ply:DIR`, paused: the cursor stays on one spot while `.` steps to the next file; the
    /// readout follows the file shown (the second file lists the points the other way round, in
    /// other colors).
    func testHoverFollowsTheFilesOfASequence() throws {
        let x = try XServer.start()
        defer { x.stop() }
        let a = SIMD3<Float>(-0.3, 0.05, 2), b = SIMD3<Float>(0.25, -0.1, 2.5)
        let dir = path("seq")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try PLYWriter.write(PointCloud(positions: [a, b], colors: [SIMD3(255, 0, 0), SIMD3(0, 0, 255)]), to: dir + "/frame_1.ply")
        try PLYWriter.write(PointCloud(positions: [b, a], colors: [SIMD3(255, 255, 0), SIMD3(0, 255, 0)]), to: dir + "/frame_2.ply")
        let v = try ViewerRun(x: x, args: ["--source", "ply:\(dir)", "--paused", "--no-panel", "--log-ui", "--log-readout",
                                           "--size", "640x480"])
        defer { if v.process.isRunning { v.process.terminate() } }
        try v.waitForLine("ui: ply frame 0 frame_1.ply")
        try v.waitForLine("ui: ready")
        try v.waitForFrames(5)
        var spot: (Int, Int)?
        _ = try x.screenshot(saveAs: path("seq.png")) { s in
            for yy in 0..<480 { for xx in 0..<640 where s.rgb(xx, yy) == SIMD3(255, 0, 0) { spot = (xx, yy); return true } }
            return false
        }
        let (px, py) = try XCTUnwrap(spot)
        var n = v.lines.count
        try x.xdotool(["mousemove", "\(px)", "\(py)"])
        let first = try v.waitForLine("hover:", after: n, timeout: 20)
        XCTAssertTrue(first.hasPrefix("hover: point 0  "), first)
        XCTAssertTrue(first.hasSuffix("x -0.300 y 0.050 z 2.000 m  rgb 255 0 0"), first)
        n = v.lines.count
        try v.key("period")
        try v.waitForLine("ui: ply frame 1 frame_2.ply", after: n, timeout: 10)
        let second = try v.waitForLine("hover:", after: n, timeout: 20)
        XCTAssertTrue(second.hasPrefix("hover: point 1  "), second)
        XCTAssertTrue(second.hasSuffix("x -0.300 y 0.050 z 2.000 m  rgb 0 255 0"), second)
        v.quit()
    }
}
