import XCTest
import Foundation
import DepthKit
import TestSupport

/// What a `depthlens` run printed: TestSupport's `ProcessResult` (status, stdout, stderr).
typealias CLIResult = ProcessResult

/// Runs the built `depthlens` executable the way a user does and captures what it prints.
enum CLI {
    /// The built executable (TestSupport's `Repo.depthlens`).
    static var executable: URL { URL(fileURLWithPath: Repo.depthlens) }

    /// Starts depthlens and returns while it runs (for tests that signal it or read it live).
    static func start(_ args: [String], environment: [String: String] = [:]) throws -> ChildProcess {
        try ChildProcess(executable.path, args, environment: environment)
    }

    /// Runs depthlens to completion (a deadline of `timeout` seconds fails the test).
    /// - Parameters:
    ///   - environment: variables set for the child on top of this process's.
    ///   - unsetting: variables removed from the child's environment.
    ///   - wrappedIn: shell commands run before depthlens in the same shell (`ulimit -f 400;`).
    @discardableResult
    static func run(_ args: [String], cwd: URL? = nil, environment: [String: String]? = nil, unsetting: [String] = [],
                    wrappedIn shellPrefix: String? = nil, timeout: TimeInterval = 600,
                    file: StaticString = #filePath, line: UInt = #line) throws -> CLIResult {
        if let shellPrefix {
            let quoted = ([executable.path] + args).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }
            return try TestProcess.result("/bin/bash", ["-c", shellPrefix + " exec " + quoted.joined(separator: " ")], cwd: cwd?.path,
                                          environment: environment ?? [:], removing: unsetting, timeout: timeout, file: file, line: line)
        }
        return try TestProcess.result(executable.path, args, cwd: cwd?.path, environment: environment ?? [:], removing: unsetting,
                                      timeout: timeout, file: file, line: line)
    }

    /// Runs a shell command line (test set-up: mounts, file-size limits).
    static func shell(_ command: String) throws -> CLIResult { try TestProcess.shell(command) }
}

/// A fresh temporary folder per test, removed afterwards.
class CLITestCase: XCTestCase {
    var dir: URL!

    override func setUpWithError() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("depthlens-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: CLI.executable.path), "build depthlens first: \(CLI.executable.path)")
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: dir)
    }

    func path(_ name: String) -> String { dir.appendingPathComponent(name).path }

    /// Asserts the design's contract (docs/design/overview.md) for bad input: exit ≠ 0, exactly one line on stderr that
    /// names `mentioning`, and no output file left behind.
    func assertBadInput(_ args: [String], mentioning: String, noFile out: String? = nil, environment: [String: String]? = nil,
                        file: StaticString = #filePath, line: UInt = #line) throws {
        let r = try CLI.run(args, environment: environment)
        XCTAssertNotEqual(r.status, 0, "exit status", file: file, line: line)
        XCTAssertEqual(r.stderrLines.count, 1, "one line on stderr, got: \(r.stderr)", file: file, line: line)
        XCTAssertTrue(r.stderr.contains(mentioning), "'\(r.stderr)' should mention '\(mentioning)'", file: file, line: line)
        XCTAssertFalse(r.stderr.contains("Fatal error"), file: file, line: line)
        if let out {
            XCTAssertFalse(FileManager.default.fileExists(atPath: out), "no partial output at \(out)", file: file, line: line)
            let leftovers = (try? FileManager.default.contentsOfDirectory(atPath: (out as NSString).deletingLastPathComponent)) ?? []
            XCTAssertFalse(leftovers.contains { $0.contains(".tmp") || $0.hasPrefix(".") }, "temp files left: \(leftovers)", file: file, line: line)
        }
    }

    /// Writes the synthetic frame as a color PNG and 16-bit depth PNG (mm) into the test folder.
    func writeSyntheticPair(width: Int = 64, height: Int = 48) throws -> (color: String, depth: String) {
        let f = SyntheticScene().render(width: width, height: height, time: 0)
        let c = path("color.png"), d = path("depth.png")
        try ImageIO.write(f.color, to: c)
        let mm = PixelBuffer(width: width, height: height, format: .gray16(depthScale: 1000))
        let dm = f.depth.depthFloat32()
        for y in 0..<height { for x in 0..<width { mm.setSample(x: x, y: y, dm.sample(x: x, y: y) * 1000) } }
        try ImageIO.write(mm, to: d)
        return (c, d)
    }
}
