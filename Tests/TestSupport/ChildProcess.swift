import Foundation
import XCTest

/// The result of a child process: its exit status and everything it printed (stdout and stderr,
/// in the order written).
public struct ProcessOutcome: Sendable {
    public var status: Int32
    public var output: String
    /// True when the deadline ended it (its status is then -1).
    public var timedOut: Bool
}

/// The result of a child process with its two output streams apart.
public struct ProcessResult: Sendable {
    public var status: Int32
    /// Its stdout as bytes (a tool may write binary data there).
    public var stdoutData: Data
    public var stdout: String { String(decoding: stdoutData, as: UTF8.self) }
    public var stderr: String
    /// True when the deadline ended it (its status is then -1).
    public var timedOut: Bool
    /// True when it ended through `exit` (not killed by a signal).
    public var exited: Bool
    public var stderrLines: [String] { stderr.split(separator: "\n").map(String.init) }
}

/// A child process a test starts: the one process runner of every test target. Its output goes
/// to temporary files, so a chatty child never blocks on a full pipe; `wait` has a deadline, and
/// a deadline passed kills the child and fails the calling test (never a skip). A child still
/// running when the value goes away is terminated (a test that fails half-way leaves no process).
public final class ChildProcess {
    /// The command line, for messages.
    public let commandLine: String
    private let process = Process()
    private let outPath: String
    private let errPath: String

    /// Starts `executable` (a path, or a name looked up on PATH) with `arguments`.
    /// - Parameters:
    ///   - environment: variables set for the child on top of this process's.
    ///   - removing: variables removed from the child's environment.
    ///   - mergingOutput: stderr written into the same file as stdout (one interleaved text).
    public init(_ executable: String, _ arguments: [String], cwd: String? = nil, environment: [String: String] = [:],
                removing: [String] = [], mergingOutput: Bool = false) throws {
        let path = executable.contains("/") ? executable : (TestProcess.which(executable) ?? executable)
        commandLine = ([executable] + arguments).joined(separator: " ")
        let base = NSTemporaryDirectory() + "depthlens-child-\(getpid())-\(UUID().uuidString)"
        outPath = base + ".out"
        errPath = mergingOutput ? outPath : base + ".err"
        for p in Set([outPath, errPath]) { _ = FileManager.default.createFile(atPath: p, contents: nil) }
        let out = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
        let err = try mergingOutput ? out : FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
        defer { try? out.close(); if !mergingOutput { try? err.close() } }
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = out
        process.standardError = err
        if let cwd { process.currentDirectoryURL = URL(fileURLWithPath: cwd) }
        if !environment.isEmpty || !removing.isEmpty {
            var env = ProcessInfo.processInfo.environment.merging(environment) { $1 }
            for k in removing { env[k] = nil }
            process.environment = env
        }
        do { try process.run() } catch {
            removeFiles()
            throw error
        }
    }

    public var pid: Int32 { process.processIdentifier }
    public var isRunning: Bool { process.isRunning }
    // The names `Process` uses, for tests that watch a long-running child (a viewer, a publisher).
    public var processIdentifier: Int32 { process.processIdentifier }
    /// Valid once it has ended.
    public var terminationStatus: Int32 { process.terminationStatus }
    public var terminationReason: Process.TerminationReason { process.terminationReason }
    /// Sends SIGTERM and returns (`stop()` also waits).
    public func terminate() { if process.isRunning { process.terminate() } }
    public func waitUntilExit() { process.waitUntilExit() }

    /// Sends `signal` (SIGTERM, SIGINT, SIGHUP…).
    public func send(_ signal: Int32) { kill(process.processIdentifier, signal) }

    /// What it has written to stdout so far (all of it, merged, with `mergingOutput`).
    public var stdoutSoFar: String { read(outPath) }
    /// What it has written to stderr so far.
    public var stderrSoFar: String { read(errPath) }

    /// Waits up to `timeout` seconds for it to end; past that, kills it and fails the test.
    @discardableResult
    public func wait(timeout: TimeInterval = 600, file: StaticString = #filePath, line: UInt = #line) -> ProcessResult {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        var timedOut = false
        if process.isRunning {
            timedOut = true
            stop()
            XCTFail("timed out after \(Int(timeout)) s: \(commandLine)", file: file, line: line)
        }
        process.waitUntilExit()
        return ProcessResult(status: timedOut ? -1 : process.terminationStatus, stdoutData: data(outPath),
                             stderr: errPath == outPath ? "" : read(errPath), timedOut: timedOut,
                             exited: !timedOut && process.terminationReason == .exit)
    }

    /// Ends it now if it is still running (SIGTERM, then SIGKILL after 5 s).
    public func stop() {
        guard process.isRunning else { return }
        process.terminate()
        let deadline = Date().addingTimeInterval(5)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    deinit {
        stop()
        removeFiles()
    }

    private func data(_ path: String) -> Data { (try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data() }
    private func read(_ path: String) -> String { String(decoding: data(path), as: UTF8.self) }

    private func removeFiles() {
        for p in Set([outPath, errPath]) { try? FileManager.default.removeItem(atPath: p) }
    }
}

/// Runs child processes to completion.
public enum TestProcess {
    /// Runs `args` (the first looked up on PATH), stdout and stderr in one text; killed after
    /// `timeout` seconds, which is a failure of the calling test.
    @discardableResult
    public static func run(_ args: [String], cwd: String? = nil, environment: [String: String] = [:],
                           timeout: TimeInterval = 600, file: StaticString = #filePath, line: UInt = #line) throws -> ProcessOutcome {
        let child = try ChildProcess(args[0], Array(args.dropFirst()), cwd: cwd, environment: environment, mergingOutput: true)
        let r = child.wait(timeout: timeout, file: file, line: line)
        return ProcessOutcome(status: r.status, output: r.stdout, timedOut: r.timedOut)
    }

    /// Runs `executable` with `arguments` to completion, stdout and stderr apart.
    @discardableResult
    public static func result(_ executable: String, _ arguments: [String], cwd: String? = nil, environment: [String: String] = [:],
                              removing: [String] = [], timeout: TimeInterval = 600,
                              file: StaticString = #filePath, line: UInt = #line) throws -> ProcessResult {
        try ChildProcess(executable, arguments, cwd: cwd, environment: environment, removing: removing)
            .wait(timeout: timeout, file: file, line: line)
    }

    /// Runs a bash command line (test set-up: mounts, file-size limits, pipes).
    @discardableResult
    public static func shell(_ command: String, timeout: TimeInterval = 600,
                             file: StaticString = #filePath, line: UInt = #line) throws -> ProcessResult {
        try result("/bin/bash", ["-c", command], timeout: timeout, file: file, line: line)
    }

    /// The program `name` on PATH, nil when there is none.
    public static func which(_ name: String) -> String? {
        for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let p = "\(dir)/\(name)"
            if FileManager.default.isExecutableFile(atPath: p) { return p }
        }
        return nil
    }
}
