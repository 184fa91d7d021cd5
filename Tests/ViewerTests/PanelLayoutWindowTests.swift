import TestSupport
import DepthKit
import Foundation
import XCTest
@testable import Viewer

/// The status line and the docked panel take their rectangles from one `WindowLayout` (issue 34:
/// at 1280×720 the status line ran on under the panel, cut at the window's edge as
/// "calibration: synthetic sce…", and covered the panel's last rows). Checked from the layout's own
/// numbers (`--log-ui` prints `layout: panel` and `layout: status`) and on screenshots: the status
/// text's color appears left of the panel and never in the panel's columns.
final class PanelLayoutWindowTests: WindowTestCase {
    /// Every character 7 px wide, as Dear ImGui's default font draws ASCII.
    static func mono(_ s: String) -> Float { Float(s.count * 7) }

    func testStatusWrapsWherePartsMeetAndShortensAtAWord() {
        let text = "12 fps  source 0.1  kernels 0.2  | dropped 3  | thermal unknown  | calibration: synthetic scene  | llvmpipe"
        // Wide enough: one row, the whole text.
        var (rows, short) = StatusLine.wrap(text, width: 7 * 200, maxRows: 2, measure: Self.mono)
        XCTAssertEqual(rows, [text])
        XCTAssertFalse(short)
        // 40 characters: rows end where parts meet; the second row drops the "|" it would start with;
        // the last row ends at a word, then "...".
        (rows, short) = StatusLine.wrap(text, width: 7 * 40, maxRows: 2, measure: Self.mono)
        XCTAssertEqual(rows, ["12 fps  source 0.1  kernels 0.2", "dropped 3  | thermal unknown ..."])
        XCTAssertTrue(short)
        for r in rows { XCTAssertLessThanOrEqual(Self.mono(r), 7 * 40, r) }
        // Three rows allowed: all of it.
        (rows, short) = StatusLine.wrap(text, width: 7 * 40, maxRows: 3, measure: Self.mono)
        XCTAssertEqual(rows, ["12 fps  source 0.1  kernels 0.2", "dropped 3  | thermal unknown", "calibration: synthetic scene  | llvmpipe"])
        XCTAssertFalse(short)
        // A part longer than the row breaks at a space, a word longer than the row anywhere.
        (rows, short) = StatusLine.wrap("calibration: synthetic scene", width: 7 * 16, maxRows: 2, measure: Self.mono)
        XCTAssertEqual(rows, ["calibration:", "synthetic scene"])
        XCTAssertFalse(short)
        (rows, short) = StatusLine.wrap("abcdefghijklmn", width: 7 * 4, maxRows: 3, measure: Self.mono)
        XCTAssertEqual(rows, ["abcd", "efgh", "..."])
        XCTAssertTrue(short)
        // Too narrow for even "...": nothing drawn rather than something running past the width.
        (rows, short) = StatusLine.wrap("abcdefghijklmn", width: 7 * 2, maxRows: 1, measure: Self.mono)
        XCTAssertEqual(rows, [])
        XCTAssertTrue(short)
        // Refitted only when the text or the width changes.
        var s = StatusLine()
        XCTAssertTrue(s.fit(text, width: 280, maxRows: 2, measure: Self.mono))
        XCTAssertFalse(s.fit(text, width: 280, maxRows: 2, measure: Self.mono))
        XCTAssertTrue(s.fit(text, width: 300, maxRows: 2, measure: Self.mono))
        XCTAssertTrue(s.fit(text, width: 300, maxRows: 1, measure: Self.mono))
        XCTAssertEqual(s.rows.count, 1)
        XCTAssertEqual(s.text, text, "the whole text is kept (shown on hover)")
        XCTAssertEqual(s.rowWidths, s.rows.map(Self.mono))
    }

    func testLayoutRectanglesNeverOverlap() {
        for (w, h) in [(1280, 720), (800, 600), (640, 480), (1920, 1080), (300, 200), (2, 2)] {
            for showPanel in [true, false] {
                for twoD in [true, false] {
                    let l = WindowLayout(windowWidth: Float(w), windowHeight: Float(h), showPanel: showPanel, twoD: twoD)
                    let what = "\(w)x\(h) panel \(showPanel) 2D \(twoD)"
                    XCTAssertEqual(l.statusRows, h >= 600 ? 2 : 1, "two status rows only where the window is high enough: \(what)")
                    for rows in 1...WindowLayout.maxStatusRows {
                        let s = l.status(rows: rows)
                        XCTAssertEqual(s.maxY, Float(h), what)
                        if l.statusWidth > 0 {
                            XCTAssertLessThanOrEqual(s.maxX + WindowLayout.margin, l.panel?.x ?? Float(w), what)
                            if let p = l.panel { XCTAssertFalse(s.intersects(p), what) }
                        } else {
                            XCTAssertEqual(s.width, 0, "too narrow for any text: \(what)")
                        }
                    }
                    if let p = l.panel {
                        XCTAssertEqual(p.maxX, Float(w), what)
                        XCTAssertEqual(p.height, Float(h), what)
                        if twoD { XCTAssertFalse(l.picture.intersects(p), "the picture is beside the panel: \(what)") }
                    }
                }
            }
        }
    }

    func testStatusLineBesideThePanelAt1280x720() throws {
        try checkWindow(width: 1280, height: 720, name: "layout-1280x720", scrollPanel: true, hover: false)
    }

    func testStatusLineBesideThePanelAt800x600() throws {
        try checkWindow(width: 800, height: 600, name: "layout-800x600", scrollPanel: false, hover: true)
    }

    /// Lower than 600 px: one status row, shortened, the whole text on hover.
    func testStatusLineBesideThePanelAt640x480() throws {
        try checkWindow(width: 640, height: 480, name: "layout-640x480", scrollPanel: false, hover: true)
    }

    /// Numbers after the prefix of a `layout:` line ("layout: panel 920 0 360 720").
    static func numbers(_ line: String) -> [Double] { line.split(separator: " ").compactMap { Double($0) } }

    /// The status text's color (0.8, 0.9, 0.8): ImGui's default font draws it in whole pixels.
    static func isStatusText(_ p: SIMD3<Int>) -> Bool { abs(p.x - 204) + abs(p.y - 230) + abs(p.z - 204) <= 30 }

    /// Pixels of the status text's color in rows `y0..<y1`, columns `x0..<x1`, and the rightmost one's x.
    static func statusPixels(_ s: PixelBuffer, x0: Int, x1: Int, y0: Int, y1: Int) -> (count: Int, maxX: Int) {
        var n = 0, right = -1
        for y in max(0, y0)..<min(s.height, y1) {
            for x in max(0, x0)..<min(s.width, x1) where isStatusText(s.rgb(x, y)) { n += 1; right = max(right, x) }
        }
        return (n, right)
    }

    func checkWindow(width W: Int, height H: Int, name: String, scrollPanel: Bool, hover: Bool) throws {
        let x = try XServer.start()
        defer { x.stop() }
        let v = try ViewerRun(x: x, args: ["--source", "synthetic", "--log-ui", "--size", "\(W)x\(H)"])
        defer { if v.process.isRunning { v.process.terminate() } }
        try v.waitForLine("ui: ready", timeout: 60)
        let panel = Self.numbers(try v.waitForLine("layout: panel ", timeout: 30))
        XCTAssertEqual(panel.count, 4)
        let panelWidth = Double(min(360, W / 2))
        XCTAssertEqual(panel, [Double(W) - panelWidth, 0, panelWidth, Double(H)], "docked at the right edge, full height")
        let panelX = panel[0]

        // The status line with its text (the first fit, before any figures, has no rows).
        var statusLine = ""
        var n = 0
        for _ in 0..<10 {
            let l = try v.waitForLine("layout: status ", after: n, timeout: 10)
            n = v.lines.firstIndex(of: l).map { $0 + 1 } ?? v.lines.count
            if let rows = Self.numbers(l).dropFirst(4).first, rows > 0 { statusLine = l; break }
        }
        // "layout: status X Y W H rows N shortened S widths a,b"
        let parts = statusLine.split(separator: " ").map(String.init)
        let r = Self.numbers(statusLine)
        guard r.count >= 6, let wi = parts.firstIndex(of: "widths"), wi + 1 < parts.count else {
            return XCTFail("no status layout line with rows: \(v.lines.filter { $0.hasPrefix("layout:") })")
        }
        let (sx, sy, sw, sh, rows, shortened) = (r[0], r[1], r[2], r[3], Int(r[4]), r[5] != 0)
        let widths = parts[wi + 1].split(separator: ",").compactMap { Double($0) }
        XCTAssertEqual(widths.count, rows, statusLine)
        XCTAssertTrue((1...(H >= 600 ? 2 : 1)).contains(rows), statusLine)
        XCTAssertEqual(sy + sh, Double(H), "at the window's bottom: \(statusLine)")
        XCTAssertLessThanOrEqual(sx + sw + Double(WindowLayout.margin), panelX, "the status line ends left of the panel: \(statusLine)")
        for w in widths { XCTAssertLessThanOrEqual(w, sw, "no row is wider than its rectangle (nothing cut): \(statusLine)") }

        // The screenshot: the status text is drawn left of the panel, within its measured width, and
        // none of it in the panel's columns on its rows.
        x.xdotoolMoveAway()
        let rowsTop = Int(sy) - 2, rowsBottom = H
        var shot = try x.screenshot(saveAs: path("\(name).png")) {
            Self.statusPixels($0, x0: 0, x1: Int(panelX), y0: rowsTop, y1: rowsBottom).count > 50
        }
        keep(path("\(name).png"), as: name)
        let left = Self.statusPixels(shot, x0: 0, x1: Int(panelX), y0: rowsTop, y1: rowsBottom)
        XCTAssertGreaterThan(left.count, 50, "the status line is drawn left of the panel")
        // (The text is refitted once a second with new figures: its rectangle bounds every fit.)
        XCTAssertLessThanOrEqual(left.maxX, Int(sx + sw), "the status text ends inside its rectangle")
        XCTAssertLessThan(left.maxX, Int(panelX) - 4, "the status text stops short of the panel")
        XCTAssertEqual(Self.statusPixels(shot, x0: Int(panelX), x1: W, y0: rowsTop, y1: rowsBottom).count, 0,
                       "no status text in the panel's columns (the panel's rows are not covered)")

        if scrollPanel {
            // The panel's last rows, scrolled to: still nothing of the status line over them.
            try x.xdotool(["mousemove", "\(Int(panelX) + 100)", "\(H / 2)"])
            for _ in 0..<30 { try x.xdotool(["click", "5"]) }
            try v.waitForFrames(3)
            x.xdotoolMoveAway()
            try v.waitForFrames(2)
            shot = try x.screenshot(saveAs: path("\(name)-scrolled.png"))
            keep(path("\(name)-scrolled.png"), as: "\(name)-scrolled")
            XCTAssertEqual(Self.statusPixels(shot, x0: Int(panelX), x1: W, y0: rowsTop, y1: rowsBottom).count, 0,
                           "no status text over the panel's last rows")
        }

        if hover, shortened {
            // Shortened: the whole text shows above the status line while the pointer is on it, left of the panel.
            func white(_ s: PixelBuffer) -> Int {
                var k = 0
                for y in max(0, Int(sy) - 120)..<Int(sy) { for xx in 0..<Int(panelX) where s.rgb(xx, y).min() >= 245 { k += 1 } }
                return k
            }
            let before = white(shot)
            try x.xdotool(["mousemove", "\(Int(sx) + 20)", "\(Int(sy + sh) - 8)"])
            shot = try x.screenshot(saveAs: path("\(name)-hover.png")) { white($0) > before + 300 }
            keep(path("\(name)-hover.png"), as: "\(name)-hover")
            XCTAssertGreaterThan(white(shot), before + 300, "the whole status text shows on hover")
        }
        // Every fit while it ran (once a second): no row wider than the rectangle, none right of the panel.
        for l in v.lines where l.hasPrefix("layout: status ") {
            let p = l.split(separator: " ").map(String.init), q = Self.numbers(l)
            guard let i = p.firstIndex(of: "widths"), q.count >= 4 else { continue }
            let ws = i + 1 < p.count ? p[i + 1].split(separator: ",").compactMap { Double($0) } : []
            XCTAssertLessThanOrEqual(q[0] + q[2] + Double(WindowLayout.margin), panelX, l)
            for w in ws { XCTAssertLessThanOrEqual(w, q[2], l) }
        }
        v.quit()
    }
}
