import DepthKit
import Foundation
import XCTest

/// The window tests' preamble: a private X server, xdotool and screenshots, and a running
/// `depthlens view` whose output lines a test waits for.

/// Finds a program on PATH.
public func which(_ name: String) -> String? { TestProcess.which(name) }

/// Runs a program to completion and returns (status, stdout, stderr).
@discardableResult
public func runTool(_ path: String, _ args: [String], env: [String: String] = [:], removing: [String] = [],
                    file: StaticString = #filePath, line: UInt = #line) throws -> (Int32, String, String) {
    let r = try TestProcess.result(path, args, environment: env, removing: removing, timeout: 120, file: file, line: line)
    return (r.status, r.stdout, r.stderr)
}

/// Thrown after the XCTFail that explains it (a missing tool is a failure, never a skip).
public enum WindowTestError: Error { case missingTool }

/// A private Xvfb on a free display number, killed by `stop()` (and on deinit).
public final class XServer {
    public let display: String
    private let process: ChildProcess

    /// Fails (never skips) when Xvfb is not installed: CI installs it through scripts/test.
    public static func start(file: StaticString = #filePath, line: UInt = #line) throws -> XServer {
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
            let p = try ChildProcess(xvfb, [":\(n)", "-screen", "0", "1280x800x24", "-nolisten", "tcp"])
            let deadline = Date().addingTimeInterval(10)
            while Date() < deadline && p.isRunning && !FileManager.default.fileExists(atPath: socket) {
                usleep(50_000)
            }
            if p.isRunning && FileManager.default.fileExists(atPath: socket) { return XServer(display: ":\(n)", process: p) }
            p.stop()
        }
        XCTFail("could not start Xvfb on any display :90…:189", file: file, line: line)
        throw WindowTestError.missingTool
    }

    private init(display: String, process: ChildProcess) {
        self.display = display
        self.process = process
    }

    public func stop() { process.stop() }

    /// xdotool with this display.
    @discardableResult
    public func xdotool(_ args: [String]) throws -> String {
        let (status, out, err) = try runTool("xdotool", args, env: ["DISPLAY": display])
        if status != 0 { throw NSError(domain: "xdotool", code: Int(status), userInfo: [NSLocalizedDescriptionKey: "xdotool \(args): \(err)"]) }
        return out
    }

    /// The whole screen (`import -window root`), as rgba8.
    public func screenshot(saveAs path: String) throws -> PixelBuffer {
        let (status, _, err) = try runTool("import", ["-window", "root", path], env: ["DISPLAY": display])
        guard status == 0 else { throw NSError(domain: "import", code: Int(status), userInfo: [NSLocalizedDescriptionKey: err]) }
        return try ImageIO.readColor(path)
    }

    /// Screenshots until `ready` accepts one or `timeout` seconds pass, and returns the last one.
    /// On a loaded machine the window may need several frames to show a change; this waits for
    /// the picture instead of sleeping a fixed time. Callers still assert on what it returns.
    public func screenshot(saveAs path: String, timeout: Double = 10, until ready: (PixelBuffer) -> Bool) throws -> PixelBuffer {
        let deadline = Date().addingTimeInterval(timeout)
        var shot = try screenshot(saveAs: path)
        while !ready(shot) && Date() < deadline {
            usleep(200_000)
            shot = try screenshot(saveAs: path)
        }
        return shot
    }
}

/// A running `depthlens view` (with the X server's display and Vulkan validation on) whose
/// stdout lines a test reads as they come.
public final class ViewerRun {
    public let process: ChildProcess
    public let x: XServer

    public init(x: XServer, args: [String], extraEnv: [String: String] = [:]) throws {
        self.x = x
        process = try ChildProcess(Repo.depthlens, ["view"] + args,
                                   environment: ["DISPLAY": x.display, "DEPTHLENS_VALIDATION": "1"].merging(extraEnv) { $1 })
    }

    /// The complete lines printed so far (a line still being written is left out).
    public var lines: [String] {
        let text = process.stdoutSoFar
        var ls = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        ls.removeLast()   // after the last newline: "" or a partial line
        return ls
    }
    public var stderr: String { process.stderrSoFar }

    /// Waits for a stdout line starting with `prefix` that was not seen before index `after`.
    @discardableResult
    public func waitForLine(_ prefix: String, after: Int = 0, timeout: Double = 20) throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let ls = lines
            if ls.count > after, let l = ls[after...].first(where: { $0.hasPrefix(prefix) }) { return l }
            if !process.isRunning {
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
    public var framesDrawn: Int {
        lines.last { $0.hasPrefix("frame ") }.flatMap { Int($0.dropFirst("frame ".count)) } ?? 0
    }

    /// Waits until the viewer has drawn `count` more frames (events sent before are then handled
    /// and their result drawn), with a deadline: the poll every fixed sleep became.
    public func waitForFrames(_ count: Int = 3, timeout: Double = 20) throws {
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
    public func hold(_ seconds: Double) { usleep(UInt32(seconds * 1_000_000)) }

    /// The viewer's window id (xdotool search by name).
    public func windowID() throws -> String {
        let out = try x.xdotool(["search", "--sync", "--name", "depthlens"])
        guard let id = out.split(separator: "\n").first else { throw NSError(domain: "xdotool", code: 1) }
        return String(id)
    }

    public func key(_ k: String) throws { try x.xdotool(["key", "--clearmodifiers", k]) }

    public func click(_ px: Int, _ py: Int) throws {
        try x.xdotool(["mousemove", "\(px)", "\(py)"])
        try waitForFrames(2)
        try x.xdotool(["click", "1"])
    }

    /// Presses at (x0, y) and moves to (x1, y) in steps, with frames in between, then releases.
    public func drag(from x0: Int, _ y0: Int, to x1: Int, _ y1: Int) throws {
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
    public func quit(file: StaticString = #filePath, line: UInt = #line) {
        if process.isRunning { try? key("Escape") }
        let deadline = Date().addingTimeInterval(10)
        while process.isRunning && Date() < deadline { usleep(50_000) }
        if process.isRunning {
            XCTFail("depthlens view did not quit on Esc", file: file, line: line)
            process.stop()
        }
        XCTAssertEqual(process.terminationStatus, 0, "exit status; stderr: \(stderr)", file: file, line: line)
        XCTAssertFalse(stderr.contains("vulkan validation"), "validation messages:\n\(stderr)", file: file, line: line)
    }
}
