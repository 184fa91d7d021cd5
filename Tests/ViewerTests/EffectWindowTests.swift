import TestSupport
import DepthKit
import Foundation
import XCTest

/// The depth-mask modes with `--backend gpu`: recorded on the GPU (their kernels show in the
/// stats' GPU stages), and each snapshot is what `depthlens process --backend cpu` computes from
/// the snapshot's own color and depth, within 1 LSB; depth at half the color size. (`--reprocess`:
/// a still frame is recorded every frame, so its stages keep showing in the stats.)
final class EffectWindowTests: WindowTestCase {
    func testDepthModesRunOnTheGPUAndMatchTheCPU() throws {
        let x = try XServer.start()
        defer { x.stop() }
        // Depth 320×240, color 640×480: the masks are scaled on the GPU.
        let pair = try PairFiles(directory: dir, width: 320, height: 240)
        try ImageIO.write(SyntheticScene().render(width: 640, height: 480, time: 0).color, to: pair.color)
        let snaps = path("snaps")
        let v = try ViewerRun(x: x, args: ["--source", pair.source, "--backend", "gpu", "--no-panel", "--log-ui", "--stats", "--reprocess",
                                           "--snapshot-dir", snaps, "--size", "640x480"])
        defer { if v.process.isRunning { v.process.terminate() } }
        try v.waitForLine("ui: ready")
        // key, mode name, `process` filter
        for (key, mode, filter) in [("5", "mask", "highpass"), ("6", "comic", "comic"), ("7", "greenscreen", "greenscreen"),
                                    ("8", "blur", "blur"), ("9", "portrait", "portrait")] {
            var n = v.lines.count
            try v.key(key)
            try v.waitForLine("ui: mode \(mode)", after: n, timeout: 5)
            // A stats line of this mode alone (the one after the next): its GPU stages name the kernel.
            n = v.lines.count
            let first = try v.waitForLine("stats:", after: n, timeout: 10)
            let stats = try v.waitForLine("stats:", after: v.lines.firstIndex(of: first)! + 1, timeout: 10)
            let gpuPart = stats.components(separatedBy: "gpu ms:").dropFirst().first ?? ""
            XCTAssertTrue(gpuPart.contains(" \(mode) "), "\(mode) runs on the GPU: \(stats)")
            n = v.lines.count
            try v.key("s")
            let line = try v.waitForLine("snapshot:", after: n, timeout: 10)
            let base = String(line.dropFirst("snapshot: ".count))
            let out = path("\(mode)-cpu.png")
            let (status, _, err) = try runTool(Repo.depthlens, ["process", "--color", base + "_color.png", "--depth", base + "_depth.png",
                                                                      "--depth-scale", "1000", "--filter", filter, "--backend", "cpu",
                                                                      "--out", out])
            XCTAssertEqual(status, 0, err)
            let a = try ImageIO.readColor(out), b = try ImageIO.readColor(base + "_filtered.png")
            XCTAssertEqual(a.width, 640)
            XCTAssertEqual(b.width, 640)
            XCTAssertEqual(a.height, b.height)
            var worst = 0
            for y in 0..<min(a.height, b.height) {
                for x in 0..<min(a.width, b.width) {
                    let d = a.rgb(x, y) &- b.rgb(x, y)
                    worst = max(worst, abs(d.x), abs(d.y), abs(d.z))
                }
            }
            XCTAssertLessThanOrEqual(worst, 1, "\(mode): the GPU's picture is the CPU's (1 LSB)")
        }
        v.quit()
    }
}
