import TestSupport
import DepthKit
import Foundation
import XCTest

/// Smoothing in the window: `--smooth` fills a small hole before the readout sees the depth, and Z
/// turns it off again (the paused still frame is re-smoothed, here: not smoothed).
final class ViewerSmoothingWindowTests: WindowTestCase {
    func testSmoothFillsAHoleForTheReadoutAndZTurnsItOff() throws {
        let x = try XServer.start()
        defer { x.stop() }
        let pair = try PairFiles(directory: dir)
        // A 3x3 hole in the wall (3 m) around (300, 100).
        let d = pair.millimeters(pair.frame.depth.depthFloat32())
        for y in 99...101 { for px in 299...301 { d.row(y, as: UInt16.self)[px] = 0 } }
        try ImageIO.write(d, to: pair.depth)
        let v = try ViewerRun(x: x, args: ["--source", pair.source, "--mode", "jet", "--mix", "1", "--smooth", "--no-panel",
                                           "--log-readout", "--log-ui", "--size", "640x480"])
        defer { if v.process.isRunning { v.process.terminate() } }
        try v.waitForLine("ui: ready")
        try v.waitForFrames(3)
        var n = v.lines.count
        try v.click(300, 100)
        let filled = try v.waitForLine("readout:", after: n)
        XCTAssertTrue(filled.contains("(300, 100)") && filled.contains("3.000 m"), "spatial fill: \(filled)")

        n = v.lines.count
        try v.key("z")
        try v.waitForLine("ui: smoothing off", after: n, timeout: 5)
        try v.waitForFrames(3)
        n = v.lines.count
        try v.click(300, 100)
        let hole = try v.waitForLine("readout:", after: n)
        XCTAssertTrue(hole.contains("no depth"), "without smoothing the hole is a hole: \(hole)")
        v.quit()
    }
}
