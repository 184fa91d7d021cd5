import TestSupport
import DepthKit
import Foundation
import XCTest

/// `view --points cpu`: the 3D view's points drawn by DepthKit's CPU renderer and copied into the
/// window as 2D CPU pictures are (a "copy" GPU stage, no "point cloud" one) show the picture the
/// compute path draws; a snapshot in 3D writes that picture. Validation is on in both runs.
final class CPUPointsWindowTests: WindowTestCase {
    private func shot(_ x: XServer, points: String?, name: String, snapshot: Bool = false) throws -> (PixelBuffer, String, String?) {
        let pair = try PairFiles(directory: dir)
        let snaps = path("snaps-\(points ?? "default")")
        let v = try ViewerRun(x: x, args: ["--source", pair.source, "--view", "3d"] + (points.map { ["--points", $0] } ?? [])
                                           + ["--no-panel", "--stats", "--log-ui", "--size", "640x480", "--snapshot-dir", snaps])
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

    /// Without --points, a CPU Vulkan device (lavapipe, as here) draws points on the CPU: 3–5× faster there.
    func testLavapipeDrawsPointsOnTheCPUByDefault() throws {
        let x = try XServer.start()
        defer { x.stop() }
        let (_, stats, _) = try shot(x, points: nil, name: "points-default")
        XCTAssertTrue(stats.contains(" copy "), "the CPU picture is copied in: \(stats)")
        XCTAssertFalse(stats.contains("point cloud"), "no GPU point pass: \(stats)")
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

    /// A PLY point list with `--points cpu`: drawn from its host copy on the CPU and copied in (no
    /// GPU point pass), the same picture as compute's in the window.
    func testPLYListOnTheCPUShowsTheComputePicture() throws {
        let x = try XServer.start()
        defer { x.stop() }
        let f = SyntheticScene().render(width: 320, height: 240, time: 0)
        let ply = path("scene.ply")
        try PLYWriter.write(PointCloud.unproject(depth: f.depth, color: f.color), to: ply)
        func run(_ points: String) throws -> (PixelBuffer, String) {
            // --reprocess: a still point list is drawn every frame (else once, then shown again).
            let v = try ViewerRun(x: x, args: ["--source", "ply:\(ply)", "--points", points, "--no-panel", "--stats",
                                               "--reprocess", "--log-ui", "--size", "640x480"])
            defer { v.quit() }
            try v.waitForLine("ui: ready")
            x.xdotoolMoveAway()
            try v.waitForFrames(5)
            // A second's stats after drawing started (the first one may come before any GPU stage).
            let stats = try v.waitForLine("stats:", after: v.lines.count, timeout: 20)
            // Two shots in a row agree on the middle band (the overlay's figures above and below change).
            func band(_ img: PixelBuffer) -> [SIMD3<Int>] {
                stride(from: 70, to: 425, by: 4).flatMap { y in stride(from: 0, to: 640, by: 4).map { img.rgb($0, y) } }
            }
            var previous: [SIMD3<Int>] = []
            let image = try x.screenshot(saveAs: path("ply-\(points).png")) { img in
                let now = band(img)
                defer { previous = now }
                return now == previous
            }
            keep(path("ply-\(points).png"), as: "ply-\(points)")
            return (image, stats)
        }
        let (cpu, cpuStats) = try run("cpu")
        let (gpu, gpuStats) = try run("compute")
        XCTAssertTrue(cpuStats.contains(" copy "), "the CPU picture is copied in: \(cpuStats)")
        XCTAssertFalse(cpuStats.contains("point cloud"), "no GPU point pass: \(cpuStats)")
        XCTAssertTrue(gpuStats.contains("point cloud"), "compute draws on the GPU: \(gpuStats)")
        var worst = 0, distinct = Set<SIMD3<Int>>()
        for y in 70..<425 {
            for x in 0..<640 {
                let d = cpu.rgb(x, y) &- gpu.rgb(x, y)
                worst = max(worst, abs(d.x), abs(d.y), abs(d.z))
                distinct.insert(cpu.rgb(x, y))
            }
        }
        XCTAssertGreaterThan(distinct.count, 50, "the cloud shows")
        XCTAssertLessThanOrEqual(worst, 1, "cpu and compute pictures of the PLY differ by \(worst)")
    }
}
