import TestSupport
import DepthKit
import Foundation
@testable import Viewer
import XCTest

/// A still PLY point list is drawn once and that picture shown again (later seconds have no GPU
/// point pass, and the window keeps the picture); `--spin` turns the view by itself (a point pass
/// every second, the picture changes from shot to shot). With `--stats` the load's stages are printed.
final class ViewerPLYStillWindowTests: WindowTestCase {
    private func middle(_ img: PixelBuffer) -> [SIMD3<Int>] {
        stride(from: 70, to: 425, by: 4).flatMap { y in stride(from: 0, to: 640, by: 4).map { img.rgb($0, y) } }
    }

    func testAStillListIsDrawnOnceAndSpinTurnsIt() throws {
        let x = try XServer.start()
        defer { x.stop() }
        let f = SyntheticScene().render(width: 320, height: 240, time: 0)
        let cloud = PointCloud.unproject(depth: f.depth, color: f.color)
        let ply = path("scene.ply")
        try PLYWriter.write(cloud, to: ply)
        let whole = Scene3D.drawnPointsText(drawn: cloud.count, total: cloud.count)   // "drawing N of N points"

        // Still: a second that began after the first frame was presented has no point pass.
        do {
            let v = try ViewerRun(x: x, args: ["--source", "ply:\(ply)", "--no-panel", "--stats", "--log-ui", "--size", "640x480",
                                               "--points", "compute"])   // the GPU's "point cloud" stage says when it drew
            defer { v.quit() }
            let load = try v.waitForLine("load: \(cloud.count) points:")
            XCTAssertTrue(load.contains("read and parse") && load.contains("GPU upload") && load.contains("host copy"), load)
            try v.waitForLine("ui: ready")
            x.xdotoolMoveAway()
            try v.waitForLine("load: first frame presented")
            _ = try v.waitForLine("stats:", after: v.lines.count, timeout: 20)   // may hold the first draw
            let later = try v.waitForLine("stats:", after: v.lines.count, timeout: 20)
            XCTAssertFalse(later.contains("point cloud"), "a still list is not drawn again: \(later)")
            XCTAssertTrue(later.hasSuffix(whole), later)
            let a = middle(try x.screenshot(saveAs: path("still-a.png")))
            try v.waitForFrames(5)
            let b = middle(try x.screenshot(saveAs: path("still-b.png")))
            XCTAssertEqual(a, b, "the still picture stays")
            XCTAssertGreaterThan(Set(a).count, 50, "the cloud shows")
        }

        // Spinning: drawn every frame, the picture turns.
        do {
            let v = try ViewerRun(x: x, args: ["--source", "ply:\(ply)", "--no-panel", "--stats", "--log-ui", "--size", "640x480",
                                               "--spin", "90", "--points", "compute"])
            defer { v.quit() }
            try v.waitForLine("ui: ready")
            x.xdotoolMoveAway()
            _ = try v.waitForLine("stats:", after: v.lines.count, timeout: 20)
            let later = try v.waitForLine("stats:", after: v.lines.count, timeout: 20)
            XCTAssertTrue(later.contains("point cloud"), "a turning view is drawn: \(later)")
            let a = middle(try x.screenshot(saveAs: path("spin-a.png")))
            try v.waitForFrames(5)
            let b = middle(try x.screenshot(saveAs: path("spin-b.png")))
            XCTAssertNotEqual(a, b, "--spin turns the view")
        }
    }
}

