import DepthKit
import Foundation
import TestSupport
import XCTest

/// Finds a program on PATH.
func which(_ name: String) -> String? {
    for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
        let p = "\(dir)/\(name)"
        if FileManager.default.isExecutableFile(atPath: p) { return p }
    }
    return nil
}

/// Runs a program to completion and returns (status, stdout, stderr).
@discardableResult
func runTool(_ path: String, _ args: [String], env: [String: String] = [:], removing: [String] = []) throws -> (Int32, String, String) {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: path)
    p.arguments = args
    var e = ProcessInfo.processInfo.environment.merging(env) { $1 }
    for k in removing { e[k] = nil }
    p.environment = e
    let out = Pipe(), err = Pipe()
    p.standardOutput = out
    p.standardError = err
    try p.run()
    let outData = LockedValue(Data())
    let g = DispatchGroup()
    g.enter()
    DispatchQueue.global().async {
        let d = out.fileHandleForReading.readDataToEndOfFile()
        outData.withLock { $0 = d }
        g.leave()
    }
    let errData = err.fileHandleForReading.readDataToEndOfFile()
    g.wait()
    p.waitUntilExit()
    return (p.terminationStatus, String(decoding: outData.current, as: UTF8.self), String(decoding: errData, as: UTF8.self))
}

/// The built `depthlens` next to the test bundle (as depthlensTests finds it); `DEPTHLENS_BIN` overrides.
enum Depthlens {
    static var executable: String {
        if let bin = ProcessInfo.processInfo.environment["DEPTHLENS_BIN"] { return bin }
        let bundle = Bundle(for: Marker.self).bundleURL
        let candidates = [bundle, bundle.deletingLastPathComponent()].map { $0.appendingPathComponent("depthlens").path }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) } ?? candidates[0]
    }
    private final class Marker {}
}

/// A private Xvfb on a free display number, killed by `stop()` (and on deinit).
final class XServer {
    let display: String
    private let process: Process

    /// Fails (never skips) when Xvfb is not installed: CI installs it through scripts/test.
    static func start(file: StaticString = #filePath, line: UInt = #line) throws -> XServer {
        guard let xvfb = which("Xvfb") else {
            XCTFail("Xvfb is not installed: the window tests need it (apt-get install xvfb xdotool imagemagick; scripts/test installs them)",
                    file: file, line: line)
            throw WindowTestError.missingTool
        }
        for tool in ["xdotool", "import"] where which(tool) == nil {
            XCTFail("\(tool) is not installed: the window tests need it (apt-get install xdotool imagemagick)", file: file, line: line)
            throw WindowTestError.missingTool
        }
        for n in 90..<190 {
            let lock = "/tmp/.X\(n)-lock", socket = "/tmp/.X11-unix/X\(n)"
            if FileManager.default.fileExists(atPath: lock) || FileManager.default.fileExists(atPath: socket) { continue }
            let p = Process()
            p.executableURL = URL(fileURLWithPath: xvfb)
            p.arguments = [":\(n)", "-screen", "0", "1280x800x24", "-nolisten", "tcp"]
            p.standardOutput = FileHandle.nullDevice
            p.standardError = FileHandle.nullDevice
            try p.run()
            let deadline = Date().addingTimeInterval(10)
            while Date() < deadline && p.isRunning && !FileManager.default.fileExists(atPath: socket) {
                usleep(50_000)
            }
            if p.isRunning && FileManager.default.fileExists(atPath: socket) { return XServer(display: ":\(n)", process: p) }
            if p.isRunning { p.terminate() }
        }
        XCTFail("could not start Xvfb on any display :90…:189", file: file, line: line)
        throw WindowTestError.missingTool
    }

    private init(display: String, process: Process) {
        self.display = display
        self.process = process
    }

    func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }

    deinit { stop() }

    /// xdotool with this display.
    @discardableResult
    func xdotool(_ args: [String]) throws -> String {
        let (status, out, err) = try runTool(which("xdotool")!, args, env: ["DISPLAY": display])
        if status != 0 { throw NSError(domain: "xdotool", code: Int(status), userInfo: [NSLocalizedDescriptionKey: "xdotool \(args): \(err)"]) }
        return out
    }

    /// The whole screen (`import -window root`), as rgba8.
    func screenshot(saveAs path: String) throws -> PixelBuffer {
        let (status, _, err) = try runTool(which("import")!, ["-window", "root", path], env: ["DISPLAY": display])
        guard status == 0 else { throw NSError(domain: "import", code: Int(status), userInfo: [NSLocalizedDescriptionKey: err]) }
        return try ImageIO.readColor(path)
    }

    /// Screenshots until `ready` accepts one or `timeout` seconds pass, and returns the last one.
    /// On a loaded machine the window may need several frames to show a change; this waits for
    /// the picture instead of sleeping a fixed time. Callers still assert on what it returns.
    func screenshot(saveAs path: String, timeout: Double = 10, until ready: (PixelBuffer) -> Bool) throws -> PixelBuffer {
        let deadline = Date().addingTimeInterval(timeout)
        var shot = try screenshot(saveAs: path)
        while !ready(shot) && Date() < deadline {
            usleep(200_000)
            shot = try screenshot(saveAs: path)
        }
        return shot
    }
}

/// A running `depthlens view` whose stdout lines are collected as they come.
final class ViewerRun {
    let process = Process()
    /// What the pipes' handlers (on Foundation's threads) collect.
    private struct Output {
        var lines: [String] = []
        var errText = ""
        var partial = ""
    }
    private let output = LockedValue(Output())
    let x: XServer

    init(x: XServer, args: [String], extraEnv: [String: String] = [:]) throws {
        self.x = x
        process.executableURL = URL(fileURLWithPath: Depthlens.executable)
        process.arguments = ["view"] + args
        var env = ProcessInfo.processInfo.environment
        env["DISPLAY"] = x.display
        env["DEPTHLENS_VALIDATION"] = "1"
        for (k, v) in extraEnv { env[k] = v }
        process.environment = env
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        out.fileHandleForReading.readabilityHandler = { [output] h in
            let d = h.availableData
            guard !d.isEmpty else { return }
            output.withLock { o in
                o.partial += String(decoding: d, as: UTF8.self)
                while let nl = o.partial.firstIndex(of: "\n") {
                    o.lines.append(String(o.partial[..<nl]))
                    o.partial = String(o.partial[o.partial.index(after: nl)...])
                }
            }
        }
        err.fileHandleForReading.readabilityHandler = { [output] h in
            let d = h.availableData
            guard !d.isEmpty else { return }
            output.withLock { $0.errText += String(decoding: d, as: UTF8.self) }
        }
        try process.run()
    }

    var lines: [String] { output.current.lines }
    var stderr: String { output.current.errText }

    /// Waits for a stdout line starting with `prefix` that was not seen before index `after`.
    @discardableResult
    func waitForLine(_ prefix: String, after: Int = 0, timeout: Double = 20) throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let ls = lines
            if ls.count > after, let l = ls[after...].first(where: { $0.hasPrefix(prefix) }) { return l }
            if !process.isRunning {
                usleep(100_000)
                let ls = lines
                if ls.count > after, let l = ls[after...].first(where: { $0.hasPrefix(prefix) }) { return l }
                throw NSError(domain: "viewer", code: 1, userInfo: [NSLocalizedDescriptionKey:
                    "depthlens view exited (\(process.terminationStatus)) before printing '\(prefix)'; stderr: \(stderr)"])
            }
            usleep(50_000)
        }
        throw NSError(domain: "viewer", code: 2, userInfo: [NSLocalizedDescriptionKey:
            "no '\(prefix)' line within \(timeout) s; stdout: \(lines.suffix(5)); stderr: \(stderr)"])
    }

    /// The number of the last frame the viewer drew (`frame N` lines with `--log-ui`), 0 before any.
    var framesDrawn: Int {
        lines.last { $0.hasPrefix("frame ") }.flatMap { Int($0.dropFirst("frame ".count)) } ?? 0
    }

    /// Waits until the viewer has drawn `count` more frames (events sent before are then handled
    /// and their result drawn), with a deadline: the poll every fixed sleep became.
    func waitForFrames(_ count: Int = 3, timeout: Double = 20) throws {
        let target = framesDrawn + count
        let deadline = Date().addingTimeInterval(timeout)
        while framesDrawn < target {
            guard Date() < deadline else {
                throw NSError(domain: "viewer", code: 4, userInfo: [NSLocalizedDescriptionKey:
                    "the viewer drew \(framesDrawn) of \(target) frames within \(timeout) s; stderr: \(stderr)"])
            }
            guard process.isRunning else {
                throw NSError(domain: "viewer", code: 1, userInfo: [NSLocalizedDescriptionKey:
                    "depthlens view exited (\(process.terminationStatus)) while waiting for frames; stderr: \(stderr)"])
            }
            usleep(10_000)
        }
    }

    /// Holds still for `seconds` on purpose (a time the test is about, such as the double-click
    /// interval), as opposed to waiting for something to happen.
    func hold(_ seconds: Double) { usleep(UInt32(seconds * 1_000_000)) }

    /// The viewer's window id (xdotool search by name).
    func windowID() throws -> String {
        let out = try x.xdotool(["search", "--sync", "--name", "depthlens"])
        guard let id = out.split(separator: "\n").first else { throw NSError(domain: "xdotool", code: 1) }
        return String(id)
    }

    func key(_ k: String) throws { try x.xdotool(["key", "--clearmodifiers", k]) }

    func click(_ px: Int, _ py: Int) throws {
        try x.xdotool(["mousemove", "\(px)", "\(py)"])
        try waitForFrames(2)
        try x.xdotool(["click", "1"])
    }

    /// Presses at (x0, y) and moves to (x1, y) in steps, with frames in between, then releases.
    func drag(from x0: Int, _ y0: Int, to x1: Int, _ y1: Int) throws {
        try x.xdotool(["mousemove", "\(x0)", "\(y0)"])
        try waitForFrames(2)
        try x.xdotool(["mousedown", "1"])
        try waitForFrames(2)
        for i in 1...6 {
            try x.xdotool(["mousemove", "\(x0 + (x1 - x0) * i / 6)", "\(y0 + (y1 - y0) * i / 6)"])
            try waitForFrames(1)
        }
        try x.xdotool(["mouseup", "1"])
        try waitForFrames(2)
    }

    /// Quits with Esc and waits; fails the test on a crash, a hang or a validation message.
    func quit(file: StaticString = #filePath, line: UInt = #line) {
        if process.isRunning { try? key("Escape") }
        let deadline = Date().addingTimeInterval(10)
        while process.isRunning && Date() < deadline { usleep(50_000) }
        if process.isRunning {
            XCTFail("depthlens view did not quit on Esc", file: file, line: line)
            process.terminate()
            process.waitUntilExit()
        }
        XCTAssertEqual(process.terminationStatus, 0, "exit status; stderr: \(stderr)", file: file, line: line)
        XCTAssertFalse(stderr.contains("vulkan validation"), "validation messages:\n\(stderr)", file: file, line: line)
    }
}

/// A synthetic RGB-D frame written as files for `--source pair:` (deterministic, still).
struct PairFiles {
    let color: String
    let depth: String
    let frame: RGBDFrame
    var source: String { "pair:\(color),\(depth)" }

    init(directory: URL, width: Int = 640, height: Int = 480, colorWidth: Int? = nil, colorHeight: Int? = nil) throws {
        let f = SyntheticScene().render(width: width, height: height, time: 0)
        frame = f
        color = directory.appendingPathComponent("color.png").path
        depth = directory.appendingPathComponent("depth.png").path
        try ImageIO.write(f.color, to: color)
        try ImageIO.write(millimeters(f.depth.depthFloat32()), to: depth)
    }

    /// Depth in meters → 16-bit millimeters.
    func millimeters(_ d: PixelBuffer) -> PixelBuffer {
        let out = PixelBuffer(width: d.width, height: d.height, format: .gray16(depthScale: 1000))
        for y in 0..<d.height {
            for x in 0..<d.width {
                let z = d.row(y, as: Float.self)[x]
                out.row(y, as: UInt16.self)[x] = isValidDepth(z) ? UInt16(min(65535, (z * 1000).rounded())) : 0
            }
        }
        return out
    }
}

/// Pixel helpers for screenshots.
extension PixelBuffer {
    func rgb(_ x: Int, _ y: Int) -> SIMD3<Int> {
        let p = rgba(x: x, y: y)
        return SIMD3(Int(p.0), Int(p.1), Int(p.2))
    }

    /// Mean color of a (2r+1)² square, to step over single-pixel edges and text.
    func mean(_ x: Int, _ y: Int, radius r: Int = 3) -> SIMD3<Int> {
        var s = SIMD3<Int>(0, 0, 0), n = 0
        for yy in max(0, y - r)...min(height - 1, y + r) {
            for xx in max(0, x - r)...min(width - 1, x + r) { s &+= rgb(xx, yy); n += 1 }
        }
        return s / SIMD3(repeating: max(n, 1))
    }
}

/// A fresh temporary folder per test.
class WindowTestCase: XCTestCase {
    var dir: URL!

    override func setUpWithError() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("depthlens-view-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: Depthlens.executable),
                      "build depthlens first: \(Depthlens.executable)")
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: dir)
    }

    func path(_ name: String) -> String { dir.appendingPathComponent(name).path }

    /// Every other pixel of rows `top..<bottom` of a window `width` wide (the 3D tests compare the
    /// picture away from the overlay text).
    static func band(_ s: PixelBuffer, top: Int, bottom: Int, width: Int) -> [SIMD3<Int>] {
        var px: [SIMD3<Int>] = []
        for yy in stride(from: top, to: bottom, by: 2) { for xx in stride(from: 0, to: width, by: 2) { px.append(s.rgb(xx, yy)) } }
        return px
    }

    /// Screenshots (kept as `prefix-name`) until the band's pixels satisfy `ready`, and returns them.
    func bandShot(_ x: XServer, _ name: String, prefix: String, top: Int, bottom: Int, width: Int,
                  until ready: ([SIMD3<Int>]) -> Bool = { _ in true }) throws -> [SIMD3<Int>] {
        let s = try x.screenshot(saveAs: path("\(name).png")) { ready(Self.band($0, top: top, bottom: bottom, width: width)) }
        keep(path("\(name).png"), as: "\(prefix)-\(name)")
        return Self.band(s, top: top, bottom: bottom, width: width)
    }

    /// Keeps a screenshot for people to look at when `DEPTHLENS_KEEP_SHOTS` names a folder.
    func keep(_ shot: String, as name: String) {
        guard let d = ProcessInfo.processInfo.environment["DEPTHLENS_KEEP_SHOTS"], !d.isEmpty else { return }
        try? FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true)
        let dest = "\(d)/\(name).png"
        try? FileManager.default.removeItem(atPath: dest)
        try? FileManager.default.copyItem(atPath: shot, toPath: dest)
    }
}

/// Thrown after the XCTFail that explains it (a missing tool is a failure, never a skip).
enum WindowTestError: Error { case missingTool }
