import TestSupport
import DepthKit
import Foundation
import XCTest
@testable import Viewer

/// Every row of `KeyBindings` pressed the way a person would (xdotool on a real window, the panel
/// shown), in 2D and then in 3D, each checked against what the row is declared to do: the viewer's
/// `state:` line (`--log-ui`), a changed screenshot where the picture must change, the files S and P
/// write. A key that reaches a panel widget instead (`ui: key N -> panel`, or a text field left
/// active) fails. A row with no declared effect below fails too: a new key needs its expectation.
final class KeyTableWindowTests: WindowTestCase {
    typealias State = [String: String]

    /// Where the picture must change after a key.
    enum Region: Sendable { case image, panel }

    /// What one key does in one view.
    struct Effect: Sendable {
        /// Keys pressed (and handled) first so the effect shows, e.g. "4" for the JET mode.
        var setup: [String] = []
        /// nil when the state after the key is right given the state before it; else what is wrong.
        var check: @Sendable (State, State) -> String?
        var picture: Region?
        /// A `--log-ui` line (`snapshot:`, `ply:`) naming what the key wrote.
        var writes: String?
        /// Press the key once more afterwards and check the state is back (toggles).
        var undo = false
        /// The key quits the viewer: pressed last, on its own.
        var quits = false
    }

    // MARK: Declared effects

    static func sets(_ pairs: [String: String], picture: Region? = nil, setup: [String] = []) -> Effect {
        Effect(setup: setup, check: { _, a in
            let wrong = pairs.filter { a[$0.key] != $0.value }
            return wrong.isEmpty ? nil : "expected \(wrong), got \(wrong.keys.map { "\($0)=\(a[$0] ?? "-")" })"
        }, picture: picture)
    }

    static func toggles(_ key: String, picture: Region? = nil, setup: [String] = [], undo: Bool = true) -> Effect {
        Effect(setup: setup, check: { b, a in
            guard let x = b[key], let y = a[key], ["0", "1"].contains(x), ["0", "1"].contains(y) else { return "\(key) missing" }
            return x != y ? nil : "\(key) stayed \(x)"
        }, picture: picture, undo: undo)
    }

    /// `key` becomes something else than before (a cycle: colormap, backend).
    static func cycles(_ key: String, picture: Region? = nil, setup: [String] = []) -> Effect {
        Effect(setup: setup, check: { b, a in
            guard let x = b[key], let y = a[key] else { return "\(key) missing" }
            return x != y ? nil : "\(key) stayed \(x)"
        }, picture: picture)
    }

    /// A number in the state moves as `ok(before, after)` says.
    static func moves(_ key: String, _ what: String, picture: Region? = nil, setup: [String] = [],
                      _ ok: @escaping @Sendable (Double, Double) -> Bool) -> Effect {
        Effect(setup: setup, check: { b, a in
            guard let x = b[key].flatMap(Double.init), let y = a[key].flatMap(Double.init) else { return "\(key) missing" }
            return ok(x, y) ? nil : "\(key) should \(what): \(x) → \(y)"
        }, picture: picture)
    }

    /// Nothing the viewer reports changes (a key with no action in this view).
    static let nothing = Effect(check: { b, a in b == a ? nil : "state changed: \(diff(b, a))" })

    static func diff(_ b: State, _ a: State) -> String {
        Set(b.keys).union(a.keys).sorted().filter { b[$0] != a[$0] }.map { "\($0) \(b[$0] ?? "-") → \(a[$0] ?? "-")" }
            .joined(separator: ", ")
    }

    /// An export mark (`markin`, `markout`) is set to the frame shown.
    static func marks(_ key: String) -> Effect {
        Effect(check: { _, a in
            guard let f = a["frame"], let m = a[key] else { return "\(key) or frame missing" }
            return m == f ? nil : "\(key) is \(m), the frame is \(f)"
        })
    }

    static func writes(_ line: String) -> Effect { Effect(check: { _, _ in nil }, writes: line) }
    static let quits = Effect(check: { _, _ in nil }, quits: true)

    /// The key table's rows by label: (2D, 3D). The test fails on a row missing here.
    static let effects: [String: (Effect, Effect)] = {
        var e: [String: (Effect, Effect)] = [
            "Space": (toggles("paused"), toggles("paused")),
            "Left": (moves("frame", "go back one frame", picture: .image) { $1 == $0 - 1 },
                     moves("yaw", "turn", picture: .image) { $1 != $0 }),
            "Right": (moves("frame", "go on one frame", picture: .image) { $1 == $0 + 1 },
                      moves("yaw", "turn", picture: .image) { $1 != $0 }),
            "Up": (moves("mix", "grow by 0.1", picture: .image, setup: ["4"]) { abs($1 - min(1, $0 + 0.1)) < 1e-3 },
                   moves("pitch", "tilt", picture: .image) { $1 != $0 }),
            "Down": (moves("mix", "shrink by 0.1", picture: .image, setup: ["4"]) { abs($1 - max(0, $0 - 0.1)) < 1e-3 },
                     moves("pitch", "tilt", picture: .image) { $1 != $0 }),
            "Home": (moves("frame", "go to 0", picture: .image) { $1 == 0 && $0 > 0 }, sets(["frame": "0"])),
            ",": (moves("frame", "go back one frame", picture: .image, setup: ["."]) { $1 == $0 - 1 },
                  moves("frame", "go back one frame", picture: .image, setup: ["."]) { $1 == $0 - 1 }),
            ".": (moves("frame", "go on one frame", picture: .image) { $1 == $0 + 1 },
                  moves("frame", "go on one frame", picture: .image) { $1 == $0 + 1 }),
            "S": (writes("snapshot:"), writes("snapshot:")),
            "P": (writes("ply:"), writes("ply:")),
            "Tab": (Effect(check: sets(["view": "3d"]).check, picture: .image, undo: true),
                    Effect(check: sets(["view": "2d"]).check, picture: .image, undo: true)),
            "F": (toggles("fullscreen"), toggles("fullscreen")),
            "V": (toggles("vsync"), toggles("vsync")),
            "C": (cycles("colormap", picture: .image, setup: ["4"]), cycles("colormap")),
            "B": (cycles("backend"), cycles("backend")),
            "X": (toggles("filter", picture: .image, setup: ["4"]), toggles("filter")),
            "D": (toggles("depth", picture: .image, setup: ["4"]), toggles("depth")),
            "M": (toggles("blend", picture: .image, setup: ["4"]), toggles("blend")),
            "K": (toggles("rosymatrix", setup: ["2"]), toggles("rosymatrix")),
            "E": (toggles("equalized", picture: .image, setup: ["4"]), toggles("equalized")),
            "L": (toggles("loop"), toggles("loop")),
            "Z": (toggles("smooth"), toggles("smooth")),
            // The Quality section opens and closes (its metrics run on their thread; no --log-readout here).
            "Y": (toggles("quality"), toggles("quality")),
            // Writes the section's rows when it has some (a notice either way): nothing in the state changes.
            "J": (nothing, nothing),
            // The 3D pick tool; Enter with no picks says it cannot measure (the overlay), nothing else changes.
            "A": (nothing, cycles("picktool")),
            "Enter": (nothing, nothing),
            // Recording covers the 2D view; in 3D the key only says so.
            "Ctrl+R": (toggles("recording"), nothing),
            // The export marks take the frame shown; Ctrl+E starts an export of the marked frames.
            "I": (marks("markin"), marks("markin")),
            "O": (marks("markout"), marks("markout")),
            "Ctrl+E": (moves("exports", "grow by 1") { $1 == $0 + 1 }, moves("exports", "grow by 1") { $1 == $0 + 1 }),
            "G": (nothing, cycles("colorby", picture: .image)),
            "T": (nothing, cycles("pointsby")),
            // Eye-dome lighting on (from raster, which does not shade: the drawing goes to compute).
            "N": (nothing, Effect(check: { b, a in
                a["edl"] != b["edl"] && a["pointsby"] == "compute" ? nil : "edl \(b["edl"] ?? "-") → \(a["edl"] ?? "-"), points by \(a["pointsby"] ?? "-")"
            }, picture: .image)),
            // Camera frame → world → accumulate (the TUM folder has no poses: the mode changes, with a notice).
            "W": (nothing, cycles("world")),
            "R": (nothing, Effect(setup: ["Left", "Up"], check: { b, a in
                guard let y = a["yaw"].flatMap(Double.init), let p = a["pitch"].flatMap(Double.init) else { return "no camera" }
                return abs(y) < 0.05 && abs(p) < 0.05 ? nil : "yaw \(y), pitch \(p) after reset (before: \(b["yaw"] ?? "-"), \(b["pitch"] ?? "-"))"
            }, picture: .image)),
            "+": (nothing, moves("zoom", "shrink (closer)", picture: .image) { $1 < $0 }),
            "-": (nothing, moves("zoom", "grow (farther)", picture: .image) { $1 > $0 }),
            "[": (nothing, moves("points", "shrink by 1", picture: .image) { $1 == $0 - 1 }),
            "]": (nothing, moves("points", "grow by 1", picture: .image) { $1 == $0 + 1 }),
            "F1 / H": (toggles("panel", picture: .panel, undo: false), toggles("panel", picture: .panel, undo: false)),
            "?": (toggles("help", picture: .image), toggles("help", picture: .image)),
            "Esc / Q": (quits, quits),
        ]
        for m in PreviewMode.all {
            guard let n = m.numberKey else { continue }
            // 2D: each mode key shows another picture than the mode before it (the run starts in JET).
            e["\(n)"] = (sets(["mode": m.name], picture: .image), sets(["mode": m.name]))
        }
        return e
    }()

    // MARK: The test

    func testEveryKeyDoesWhatTheTableSaysWithThePanelShown() throws {
        // A table row nobody declared fails before any window opens.
        let labels = Set(KeyBindings.all.map(\.label))
        for b in KeyBindings.all where Self.effects[b.label] == nil {
            XCTFail("KeyBindings row '\(b.label)' (\(b.help)) has no declared effect in KeyTableWindowTests.effects")
        }
        for label in Self.effects.keys where !labels.contains(label) {
            XCTFail("KeyTableWindowTests.effects declares '\(label)', which is not in KeyBindings")
        }

        let x = try XServer.start()
        defer { x.stop() }
        let seq = try writeSequence(frames: 25)
        let snaps = path("snaps")
        let v = try ViewerRun(x: x, args: ["--source", "tum:\(seq)", "--paused", "--frame", "10", "--mode", "original",
                                           "--log-ui", "--snapshot-dir", snaps, "--size", "1280x720",
                                           // T toggles compute and raster: start from compute, as on a GPU (lavapipe's default is cpu)
                                           "--points", "compute"])
        defer { if v.process.isRunning { v.process.terminate() } }
        try v.waitForLine("ui: ready", timeout: 120)
        let panel = try rect(v.waitForLine("layout: panel ", timeout: 60))
        let mix = try rect(v.waitForLine("layout: mix ", timeout: 60))
        x.xdotoolMoveAway()
        let driver = KeyDriver(test: self, x: x, v: v, panel: panel)

        // The reported case: Tab, then 4, with the panel shown.
        var (_, s) = try driver.press("Tab", code: 258)
        XCTAssertEqual(s["view"], "3d")
        (_, s) = try driver.press("4", code: 52)
        XCTAssertEqual(s["mode"], "jet", "4 picks the JET mode after Tab")
        XCTAssertEqual(s["mix"], "0.500", "4 is not typed into the mix slider")
        (_, s) = try driver.press("Tab", code: 258)
        XCTAssertEqual(s["view"], "2d")

        // Every row, 2D then 3D (after Tab).
        try driver.run(view: "2d")
        (_, s) = try driver.press("Tab", code: 258)
        XCTAssertEqual(s["view"], "3d")
        _ = try driver.until { $0["zoom"] != nil }
        try driver.run(view: "3d")
        (_, s) = try driver.press("Tab", code: 258)
        XCTAssertEqual(s["view"], "2d")

        // Ctrl+click the mix slider, type 4, Enter: typed values clamp to 0…1.
        let modeBefore = driver.state["mode"]
        try x.xdotool(["mousemove", "\(Int(mix.x + mix.w / 2))", "\(Int(mix.y + mix.h / 2))"])
        // Each event in a frame of its own: on a loaded machine one slow frame would otherwise take
        // Ctrl down, the click and Ctrl up together.
        try x.xdotool(["keydown", "ctrl"])
        try v.waitForFrames(2)
        try x.xdotool(["click", "1"])
        try v.waitForFrames(2)
        try x.xdotool(["keyup", "ctrl"])
        _ = try driver.until { $0["text"] == "1" }
        try driver.type("4", code: 52, toPanel: true)
        let after = try driver.type("Return", code: 257, toPanel: true)
        _ = after
        s = try driver.until { $0["text"] == "0" && $0["mix"] == "1.000" }
        XCTAssertEqual(s["mix"], "1.000", "a typed 4 is clamped to the slider's 1")
        XCTAssertEqual(s["mode"], modeBefore, "the typed 4 did not pick a mode")

        // The source field keeps keys while it is edited; Esc leaves it before it quits; Q quits.
        let source = try rect(v.waitForLine("layout: source ", timeout: 5))
        try x.xdotool(["mousemove", "\(Int(source.x + source.w - 10))", "\(Int(source.y + source.h / 2))", "click", "1"])
        _ = try driver.until { $0["text"] == "1" }
        try driver.type("q", code: 81, toPanel: true)
        XCTAssertTrue(v.process.isRunning, "q typed into the source field does not quit")
        try driver.type("Escape", code: 256, toPanel: true)
        _ = try driver.until { $0["text"] == "0" }
        XCTAssertTrue(v.process.isRunning, "Esc in a text field leaves the field, it does not quit")
        try v.key("q")
        let deadline = Date().addingTimeInterval(60)
        while v.process.isRunning && Date() < deadline { usleep(100_000) }
        XCTAssertFalse(v.process.isRunning, "Q quits")
        if !v.process.isRunning {
            XCTAssertEqual(v.process.terminationStatus, 0, v.stderr)
        }
        XCTAssertFalse(v.stderr.contains("vulkan validation"), "validation messages:\n\(v.stderr)")
    }

    // MARK: Helpers

    /// A 25-frame TUM folder of the synthetic scene (320×240: quick to write and to draw).
    func writeSequence(frames: Int) throws -> String {
        let dir = path("seq")
        let w = try TUMWriter(directory: dir)
        let scene = SyntheticScene()
        for i in 0..<frames {
            var f = scene.render(width: 320, height: 240, time: Double(i) / 30)
            f = RGBDFrame(color: f.color, depth: f.depth, timestamp: Double(i) / 30)
            try w.append(f)
        }
        try w.finish()
        return dir
    }

    func rect(_ line: String) throws -> (x: Double, y: Double, w: Double, h: Double) {
        let n = line.split(separator: " ").compactMap { Double($0) }
        guard n.count == 4 else { throw NSError(domain: "layout", code: 1, userInfo: [NSLocalizedDescriptionKey: line]) }
        return (n[0], n[1], n[2], n[3])
    }
}

/// Presses keys on the viewer and reads back what they did.
final class KeyDriver {
    unowned let test: KeyTableWindowTests
    let x: XServer
    let v: ViewerRun
    let panel: (x: Double, y: Double, w: Double, h: Double)
    private var shots = 0

    init(test: KeyTableWindowTests, x: XServer, v: ViewerRun, panel: (x: Double, y: Double, w: Double, h: Double)) {
        self.test = test; self.x = x; self.v = v; self.panel = panel
    }

    /// The last `state:` line.
    var state: KeyTableWindowTests.State {
        v.lines.last { $0.hasPrefix("state: ") }.map(Self.parse) ?? [:]
    }

    static func parse(_ line: String) -> KeyTableWindowTests.State {
        var s: KeyTableWindowTests.State = [:]
        for part in line.dropFirst("state: ".count).split(separator: " ") {
            let kv = part.split(separator: "=", maxSplits: 1)
            if kv.count == 2 { s[String(kv[0])] = String(kv[1]) }
        }
        return s
    }

    /// Index of the first line after `after` that starts with `prefix`.
    func waitIndex(_ prefix: String, after: Int, timeout: Double = 90) throws -> Int {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let ls = v.lines
            if ls.count > after, let i = ls[after...].firstIndex(where: { $0.hasPrefix(prefix) }) { return i }
            if !v.process.isRunning { break }
            usleep(30_000)
        }
        throw NSError(domain: "viewer", code: 2, userInfo: [NSLocalizedDescriptionKey:
            "no '\(prefix)' line (running: \(v.process.isRunning)); last lines: \(v.lines.suffix(4)); stderr: \(v.stderr.suffix(500))"])
    }

    /// Waits for a state line that satisfies `ok` (or the current one does).
    @discardableResult
    func until(timeout: Double = 90, _ ok: (KeyTableWindowTests.State) -> Bool) throws -> KeyTableWindowTests.State {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let s = state
            if ok(s) { return s }
            usleep(50_000)
        }
        throw NSError(domain: "viewer", code: 3, userInfo: [NSLocalizedDescriptionKey: "state never became as expected: \(state)"])
    }

    /// Presses `keysym` (GLFW key `code`) and returns the state before and the state the viewer
    /// printed after handling it. The key must reach the key table, not the panel.
    @discardableResult
    func press(_ keysym: String, code: Int32, file: StaticString = #filePath, line: UInt = #line) throws
        -> (KeyTableWindowTests.State, KeyTableWindowTests.State) {
        let before = state
        let n = v.lines.count
        try x.xdotool(["key", "--clearmodifiers", keysym])
        let k = try waitIndex("ui: key \(code) -> ", after: n)
        let routed = v.lines[k]
        XCTAssertFalse(routed.hasSuffix("-> panel"), "\(keysym) landed in a panel widget: \(routed)", file: file, line: line)
        let si = try waitIndex("state: ", after: k)
        let after = Self.parse(v.lines[si])
        XCTAssertEqual(after["text"], "0", "\(keysym) left a panel text field active", file: file, line: line)
        return (before, after)
    }

    /// Types into the active panel text field: the key must go to the panel, not the key table.
    @discardableResult
    func type(_ keysym: String, code: Int32, toPanel: Bool, file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let n = v.lines.count
        try x.xdotool(["key", keysym])
        let k = try waitIndex("ui: key \(code) -> ", after: n)
        XCTAssertEqual(v.lines[k].hasSuffix("-> panel"), toPanel, v.lines[k], file: file, line: line)
        _ = try waitIndex("state: ", after: k)
        return v.lines[k]
    }

    /// xdotool's name for a GLFW key code.
    static func keysym(_ code: Int32) -> String? {
        switch code {
        case 65...90: return String(UnicodeScalar(UInt8(code + 32)))
        case 48...57: return String(UnicodeScalar(UInt8(code)))
        case 320...329: return "KP_\(code - 320)"
        default:
            let named: [Int32: String] = [32: "space", 44: "comma", 45: "minus", 46: "period", 61: "equal", 91: "bracketleft", 93: "bracketright", 47: "slash",
                                          256: "Escape", 257: "Return", 258: "Tab", 335: "KP_Enter", 262: "Right", 263: "Left", 264: "Down",
                                          265: "Up", 268: "Home", 290: "F1", 333: "KP_Subtract", 334: "KP_Add"]
            return named[code]
        }
    }

    // MARK: Pictures

    /// Samples of the picture (left of the panel, clear of the overlay lines) or of the panel.
    func samples(_ shot: PixelBuffer, _ region: KeyTableWindowTests.Region) -> [SIMD3<Int>] {
        let (x0, x1, y0, y1): (Int, Int, Int, Int)
        switch region {
        case .image:
            // The picture left (or right) of the panel; overlays sit in the top 100 and bottom 180 rows.
            let px = Int(panel.x), pr = Int(panel.x + panel.w)
            if px > shot.width / 2 { (x0, x1) = (min(200, px / 4), px - 20) } else { (x0, x1) = (pr + 20, shot.width - 40) }
            (y0, y1) = (100, 540)
        case .panel:
            (x0, x1, y0, y1) = (Int(panel.x) + 4, Int(panel.x + panel.w) - 4, Int(panel.y) + 4, Int(panel.y) + 300)
        }
        var px: [SIMD3<Int>] = []
        for yy in stride(from: max(0, y0), to: min(shot.height, y1), by: 5) {
            for xx in stride(from: max(0, x0), to: min(shot.width, x1), by: 5) { px.append(shot.rgb(xx, yy)) }
        }
        return px
    }

    func shot() throws -> PixelBuffer {
        shots += 1
        return try x.screenshot(saveAs: test.path("shot\(shots % 4).png"))
    }

    /// The picture once two screenshots in a row agree.
    func stable(_ region: KeyTableWindowTests.Region) throws -> [SIMD3<Int>] {
        var last = samples(try shot(), region)
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            usleep(100_000)
            let now = samples(try shot(), region)
            if now == last { return now }
            last = now
        }
        return last
    }

    static func changed(_ a: [SIMD3<Int>], _ b: [SIMD3<Int>]) -> Int {
        zip(a, b).filter { p in let d = p.0 &- p.1; return abs(d.x) + abs(d.y) + abs(d.z) > 12 }.count
    }

    /// Waits until the picture differs from `before` in more than 0.5 % of the samples; returns how many differ.
    func waitChange(from before: [SIMD3<Int>], _ region: KeyTableWindowTests.Region, name: String) throws -> Int {
        let deadline = Date().addingTimeInterval(60)
        var path = ""
        var n = 0
        repeat {
            shots += 1
            path = test.path("after\(shots % 4).png")
            n = Self.changed(before, samples(try x.screenshot(saveAs: path), region))
            if n * 200 > before.count { break }
            usleep(150_000)
        } while Date() < deadline
        test.keep(path, as: "keys-\(name)")
        return n
    }

    // MARK: One view

    /// Presses every key of every row in `view` and checks its declared effect.
    func run(view: String) throws {
        let in3D = view == "3d"
        for b in KeyBindings.all {
            guard let pair = KeyTableWindowTests.effects[b.label] else { continue }
            let effect = in3D ? pair.1 : pair.0
            if effect.quits { continue }   // Q quits at the end of the test; Esc is checked in a text field there
            for (i, code) in b.keys.enumerated() {
                guard var sym = Self.keysym(code) else {
                    XCTFail("no xdotool name for GLFW key \(code) of row '\(b.label)': add it to KeyDriver.keysym")
                    continue
                }
                if b.shift { sym = "shift+" + sym }
                if b.ctrl { sym = "ctrl+" + sym }
                let what = "\(view) \(b.label) (\(sym))"
                for s in effect.setup {
                    guard let c = KeyBindings.all.first(where: { $0.label == s })?.keys.first ?? Self.code(s) else { continue }
                    try press(Self.keysym(c) ?? s, code: c)
                }
                // Pictures: checked for the first key of a row (a second key repeats or undoes it).
                let region = i == 0 || !effect.undo && b.keys.count > 1 && effect.picture == .panel ? effect.picture : nil
                let before = try region.map { try stable($0) }
                let n = v.lines.count
                let (s0, s1) = try press(sym, code: code)
                if let problem = effect.check(s0, s1) {
                    XCTFail("\(what): \(problem)\n  before: \(s0)\n  after:  \(s1)")
                }
                if let region, let before {
                    let changed = try waitChange(from: before, region, name: "\(view)-\(sym)")
                    XCTAssertGreaterThan(changed * 200, before.count, "\(what): the picture did not change (\(changed) of \(before.count) samples)")
                }
                if let prefix = effect.writes {
                    let w = try waitIndex(prefix, after: n, timeout: 90)
                    let line = v.lines[w]
                    let file = String(line.dropFirst(prefix.count + 1))
                    let files = prefix == "ply:" ? [file] : ["_filtered.png", "_color.png", "_depth.png", ".json"].map { file + $0 }
                    for f in files { XCTAssertTrue(FileManager.default.fileExists(atPath: f), "\(what): \(f) written") }
                }
                if effect.undo {
                    let n2 = v.lines.count
                    let (_, back) = try press(sym, code: code)
                    // Frame (playback), camera and fitted point size may move on their own between the presses.
                    let volatile: Set<String> = ["frame", "zoom", "yaw", "pitch", "points"]
                    XCTAssertEqual(back.filter { !volatile.contains($0.key) }, s0.filter { !volatile.contains($0.key) },
                                   "\(what) pressed again goes back")
                    if b.label == "F" || b.label == "V" {
                        // The swapchain comes back at the window's size before the next picture check.
                        _ = try waitIndex("ui: swapchain 1280x720", after: n2, timeout: 90)
                    }
                }
            }
        }
    }

    /// GLFW code of a setup key given by its key-table label or xdotool name.
    static func code(_ s: String) -> Int32? {
        ["Left": 263, "Right": 262, "Up": 265, "Down": 264][s]
    }
}
