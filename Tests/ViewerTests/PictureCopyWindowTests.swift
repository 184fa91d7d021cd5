import TestSupport
import DepthKit
import Foundation
import XCTest

/// A picture made on the CPU reaches the window by a copy into the swapchain image (`PictureCopy`)
/// unless `DEPTHLENS_PRESENT=draw` asks for the sampled fragment pass: both show the same picture
/// (scaled into the panel's leftover area, and 1:1 without the panel), the same bars, and the
/// stats line says which way ran (a "copy" GPU stage). Validation is on in both runs.
final class PictureCopyWindowTests: WindowTestCase {
    private func shot(_ x: XServer, present: String?, args: [String], name: String, box: (Int, Int)) throws -> (PixelBuffer, String) {
        let pair = try PairFiles(directory: dir)
        let v = try ViewerRun(x: x, args: ["--source", pair.source, "--mode", "jet", "--mix", "0.5", "--backend", "cpu",
                                           "--stats", "--reprocess", "--log-ui", "--size", "1280x720"] + args,
                              extraEnv: present.map { ["DEPTHLENS_PRESENT": $0] } ?? [:])
        defer { v.quit() }
        try v.waitForLine("ui: ready")
        let stats = try v.waitForLine("stats:", timeout: 20)
        x.xdotoolMoveAway()
        try v.waitForFrames(5)   // the pointer's readout is gone from the picture
        // The box (1 m) is reddish in the half JET blend; wait until it is on screen.
        let image = try x.screenshot(saveAs: path("\(name).png")) { $0.mean(box.0, box.1).x > 100 }
        keep(path("\(name).png"), as: name)
        return (image, stats)
    }

    /// Largest per-channel difference between two screenshots inside (x0..<x1, y0..<y1).
    private func maxDifference(_ a: PixelBuffer, _ b: PixelBuffer, _ x0: Int, _ y0: Int, _ x1: Int, _ y1: Int) -> Int {
        var m = 0
        for y in y0..<y1 {
            for x in x0..<x1 {
                let d = a.rgb(x, y) &- b.rgb(x, y)
                m = max(m, abs(d.x), abs(d.y), abs(d.z))
            }
        }
        return m
    }

    func testCopiedAndDrawnPicturesAgree() throws {
        let x = try XServer.start()
        defer { x.stop() }
        // No panel: 640×480 letterboxed into 1280×720 (scale 1.5, 960×720, bars 160 px left and right).
        // Panel shown: into the 920×720 left of it (920×690, bars 15 px above and below).
        let cases: [(label: String, args: [String], box: Letterboxed, bar: (Int, Int), x0: Int, x1: Int)] = [
            ("nopanel", ["--no-panel"], Letterboxed(x: 160, y: 0, scale: 1.5), (40, 360), 160, 1120),
            ("panel", [], Letterboxed(x: 0, y: 15, scale: 1.4375), (460, 6), 0, 920),
        ]
        let boxPixel = (x: Int(0.26 * 640), y: Int(0.72 * 480))
        for c in cases {
            let (bx, by) = c.box.point(boxPixel.x, boxPixel.y)
            let (copied, copyStats) = try shot(x, present: nil, args: c.args, name: "copy-\(c.label)", box: (bx, by))
            let (drawn, drawStats) = try shot(x, present: "draw", args: c.args, name: "draw-\(c.label)", box: (bx, by))
            XCTAssertTrue(copyStats.contains(" copy "), "the CPU picture is copied in: \(copyStats)")
            XCTAssertFalse(drawStats.contains(" copy "), "DEPTHLENS_PRESENT=draw draws it: \(drawStats)")
            // Inside the picture, a pixel in from its sides and clear of the text lines at the top
            // and bottom of the window (frame numbers and FPS differ between the runs, and a notice
            // may stand above the status line): the CPU scaler and the GPU sampler agree within a
            // few levels.
            let inner = maxDifference(copied, drawn, c.x0 + 1, 30, c.x1 - 1, 600)
            XCTAssertLessThanOrEqual(inner, 3, "\(c.label): copied and drawn pictures differ by \(inner)")
            XCTAssertGreaterThan(copied.mean(bx, by).x, 100, "\(c.label): the box is in the picture")
            // The bars are the window's background in both.
            XCTAssertEqual(copied.rgb(c.bar.0, c.bar.1), drawn.rgb(c.bar.0, c.bar.1), "\(c.label): bar")
            XCTAssertLessThan(copied.mean(c.bar.0, c.bar.1, radius: 2).wrappedSum(), 80, "\(c.label): the bar is dark")
        }
    }
}
