import TestSupport
import DepthKit
import Foundation
import XCTest

/// A RealSense recording in the window: `bag:` opens, its calibration is the recording's (the
/// cameras differ, so depth is aligned to color), and playback steps through it frame by frame.
final class ViewerBagWindowTests: WindowTestCase {
    private var bag: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/realsense-d435-640x480.bag").path
    }

    private func frame(_ v: ViewerRun, after n: Int) throws -> String? {
        let line = try v.waitForLine("state: ", after: n, timeout: 20)
        return line.split(separator: " ").first { $0.hasPrefix("frame=") }.map { String($0.dropFirst("frame=".count)) }
    }

    func testOpensABagAlignsAndSteps() throws {
        let x = try XServer.start()
        defer { x.stop() }
        let v = try ViewerRun(x: x, args: ["--source", "bag:\(bag)", "--paused", "--mode", "jet", "--mix", "1", "--no-panel",
                                           "--log-ui", "--size", "640x480"])
        defer { if v.process.isRunning { v.process.terminate() } }
        try v.waitForLine("ui: ready", timeout: 60)
        let notice = try v.waitForLine("notice: calibration:", timeout: 20)
        XCTAssertTrue(notice.contains("recording") && notice.contains("different cameras"), notice)

        // Stepping: Right goes on one frame, Left goes back (a paused source).
        var n = v.lines.count
        try v.key("Right")
        XCTAssertEqual(try frame(v, after: n), "1")
        n = v.lines.count
        try v.key("Left")
        XCTAssertEqual(try frame(v, after: n), "0")

        // The picture shows the aligned depth: JET over most of the window, and the occlusion
        // holes alignment leaves are black, not a uniform picture.
        let shot = try x.screenshot(saveAs: path("bag.png")) { img in
            var colored = 0
            for y in stride(from: 40, to: 440, by: 20) { for xx in stride(from: 20, to: 620, by: 20) where img.rgba(x: xx, y: y).2 > 100 || img.rgba(x: xx, y: y).0 > 100 { colored += 1 } }
            return colored > 300
        }
        keep(path("bag.png"), as: "bag-jet")
        var distinct = Set<UInt32>()
        for y in stride(from: 40, to: 440, by: 10) { for xx in stride(from: 20, to: 620, by: 10) {
            let p = shot.rgba(x: xx, y: y); distinct.insert(UInt32(p.0) | UInt32(p.1) << 8 | UInt32(p.2) << 16)
        } }
        XCTAssertGreaterThan(distinct.count, 50, "a colormap of real depth, not a flat picture")
        v.quit()
    }
}
