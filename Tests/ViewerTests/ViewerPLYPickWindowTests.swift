import TestSupport
import DepthKit
import Foundation
import XCTest

/// Clicking two points of a PLY point list picks them (their exact coordinates) and measures the
/// distance between them, as on depth frames.
final class ViewerPLYPickWindowTests: WindowTestCase {
    func testClickTwoPointsMeasuresTheirDistance() throws {
        let x = try XServer.start()
        defer { x.stop() }
        let red = SIMD3<Float>(-0.3, 0.05, 2), blue = SIMD3<Float>(0.25, -0.1, 2.5)
        let ply = path("two.ply")
        try PLYWriter.write(PointCloud(positions: [red, blue], colors: [SIMD3(255, 0, 0), SIMD3(0, 0, 255)]), to: ply)
        let v = try ViewerRun(x: x, args: ["--source", "ply:\(ply)", "--no-panel", "--log-ui", "--size", "640x480"])
        defer { if v.process.isRunning { v.process.terminate() } }
        try v.waitForLine("ui: ready")
        try v.waitForFrames(5)
        // Where each point is drawn: its one pixel of pure color.
        func find(_ c: SIMD3<Int>, in s: PixelBuffer) -> (Int, Int)? {
            for yy in 0..<480 { for xx in 0..<640 where s.rgb(xx, yy) == c { return (xx, yy) } }
            return nil
        }
        var spots: ((Int, Int), (Int, Int))?
        let shot = try x.screenshot(saveAs: path("picks.png")) { s in
            guard let r = find(SIMD3(255, 0, 0), in: s), let b = find(SIMD3(0, 0, 255), in: s) else { return false }
            spots = (r, b)
            return true
        }
        keep(path("picks.png"), as: "plypick-points")
        _ = shot
        let (r, b) = try XCTUnwrap(spots)
        var n = v.lines.count
        try v.click(r.0, r.1)
        let first = try v.waitForLine("pick:", after: n, timeout: 10)
        XCTAssertTrue(first.hasSuffix("x -0.300 y 0.050 z 2.000 m"), first)
        n = v.lines.count
        try v.click(b.0, b.1)
        let second = try v.waitForLine("pick:", after: n, timeout: 10)
        XCTAssertTrue(second.hasSuffix("x 0.250 y -0.100 z 2.500 m"), second)
        let d = try v.waitForLine("distance:", after: n, timeout: 10)
        // (0.55, -0.15, 0.5): √(0.3025 + 0.0225 + 0.25) = √0.575 = 0.7583 m
        XCTAssertTrue(d.hasSuffix("distance: 758 mm"), d)
        v.quit()
    }
}
