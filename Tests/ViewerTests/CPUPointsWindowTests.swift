import DepthKit
import Foundation
import XCTest

/// `view --points cpu`: the 3D view's points drawn by DepthKit's CPU renderer and copied into the
/// window as 2D CPU pictures are (a "copy" GPU stage, no "point cloud" one) show the picture the
/// compute path draws; a snapshot in 3D writes that picture. Validation is on in both runs.
final class CPUPointsWindowTests: WindowTestCase {
    private func shot(_ x: XServer, points: String, name: String, snapshot: Bool = false) throws -> (PixelBuffer, String, String?) {
        let pair = try PairFiles(directory: dir)
        let snaps = path("snaps-\(points)")
        let v = try ViewerRun(x: x, args: ["--source", pair.source, "--view", "3d", "--points", points, "--no-panel", "--stats",
                                           "--log-ui", "--size", "640x480", "--snapshot-dir", snaps])
        defer { v.quit() }
        try v.waitForLine("ui: ready")
        let stats = try v.waitForLine("stats:", timeout: 20)
        x.xdotoolMoveAway()
        try v.waitForFrames(5)
        // The box (1 m, nearest) in its color at the home view (the depth camera, 1:1 here).
        let c = SyntheticScene.boxColor
        let image = try x.screenshot(saveAs: path("\(name).png")) { abs($0.mean(166, 345).y - Int(c.y)) < 8 }
        keep(path("\(name).png"), as: name)
        var snap: String?
        if snapshot {
            let n = v.lines.count
            try v.key("s")
            let line = try v.waitForLine("snapshot:", after: n, timeout: 10)
            snap = String(line.dropFirst("snapshot: ".count)) + "_filtered.png"
        }
        return (image, stats, snap)
    }

    func testCPUPointsShowTheComputePicture() throws {
        let x = try XServer.start()
        defer { x.stop() }
        let (cpu, cpuStats, snap) = try shot(x, points: "cpu", name: "points-cpu", snapshot: true)
        let (gpu, gpuStats, _) = try shot(x, points: "compute", name: "points-compute")
        XCTAssertTrue(cpuStats.contains(" copy "), "the CPU picture is copied in: \(cpuStats)")
        XCTAssertFalse(cpuStats.contains("point cloud"), "no GPU point pass: \(cpuStats)")
        XCTAssertTrue(gpuStats.contains("point cloud"), "compute draws on the GPU: \(gpuStats)")
        // Clear of the overlay's text lines at the top and bottom (FPS and frame numbers differ).
        var worst = 0, compared = 0
        for y in 70..<425 {
            for x in 0..<640 {
                let d = cpu.rgb(x, y) &- gpu.rgb(x, y)
                worst = max(worst, abs(d.x), abs(d.y), abs(d.z))
                compared += 1
            }
        }
        XCTAssertEqual(compared, 355 * 640)
        XCTAssertLessThanOrEqual(worst, 1, "cpu and compute pictures in the window differ by \(worst)")
        // The snapshot is the CPU picture itself (the window's size), as shown.
        let file = try ImageIO.read(try XCTUnwrap(snap))
        XCTAssertEqual(file.width, 640); XCTAssertEqual(file.height, 480)
        var snapWorst = 0
        for y in 70..<425 {
            for x in 0..<640 {
                let p = file.rgba(x: x, y: y), q = cpu.rgb(x, y)
                snapWorst = max(snapWorst, abs(Int(p.0) - q.x), abs(Int(p.1) - q.y), abs(Int(p.2) - q.z))
            }
        }
        XCTAssertLessThanOrEqual(snapWorst, 1, "the snapshot is what the window shows")
    }
}
