import XCTest
import Foundation
import DepthKit
import TestSupport

/// Runs the built `depthlens` executable the way a user does and captures what it prints.
struct CLIResult {
    var status: Int32
    var stdout: String
    var stderr: String
    var stderrLines: [String] { stderr.split(separator: "\n").map(String.init) }
}

enum CLI {
    /// The executable in the products folder that holds the test bundle (on Linux `bundleURL`
    /// is that folder itself, on macOS the .xctest inside it); `DEPTHLENS_BIN` overrides.
    static var executable: URL {
        if let bin = ProcessInfo.processInfo.environment["DEPTHLENS_BIN"] { return URL(fileURLWithPath: bin) }
        let bundle = Bundle(for: Marker.self).bundleURL
        let candidates = [bundle, bundle.deletingLastPathComponent()].map { $0.appendingPathComponent("depthlens") }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates[0]
    }
    private final class Marker {}

    @discardableResult
    /// - Parameters:
    ///   - environment: variables set for the child on top of this process's.
    ///   - unsetting: variables removed from the child's environment.
    ///   - wrappedIn: shell commands run before depthlens in the same shell (`ulimit -f 400;`).
    static func run(_ args: [String], cwd: URL? = nil, environment: [String: String]? = nil,
                    unsetting: [String] = [], wrappedIn shellPrefix: String? = nil) throws -> CLIResult {
        let p = Process()
        if let shellPrefix {
            p.executableURL = URL(fileURLWithPath: "/bin/bash")
            let quoted = ([executable.path] + args).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }
            p.arguments = ["-c", shellPrefix + " exec " + quoted.joined(separator: " ")]
        } else {
            p.executableURL = executable
            p.arguments = args
        }
        if let cwd { p.currentDirectoryURL = cwd }
        if environment != nil || !unsetting.isEmpty {
            var env = ProcessInfo.processInfo.environment.merging(environment ?? [:]) { $1 }
            for k in unsetting { env[k] = nil }
            p.environment = env
        }
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        // Read both pipes before waiting so a chatty child never blocks on a full pipe.
        let outBox = LockedValue(Data())
        let group = DispatchGroup()
        group.enter()
        DispatchQueue.global().async {
            let d = out.fileHandleForReading.readDataToEndOfFile()
            outBox.withLock { $0 = d }
            group.leave()
        }
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        let outData = outBox.current
        p.waitUntilExit()
        return CLIResult(status: p.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                         stderr: String(decoding: errData, as: UTF8.self))
    }
}

extension CLI {
    /// Runs a shell command line (test set-up: mounts, file-size limits).
    static func shell(_ command: String) throws -> CLIResult {
        let p = Process(), out = Pipe(), err = Pipe()
        p.executableURL = URL(fileURLWithPath: "/bin/bash")
        p.arguments = ["-c", command]
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let o = out.fileHandleForReading.readDataToEndOfFile(), e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return CLIResult(status: p.terminationStatus, stdout: String(decoding: o, as: UTF8.self), stderr: String(decoding: e, as: UTF8.self))
    }
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

    /// Asserts the DESIGN.md contract for bad input: exit ≠ 0, exactly one line on stderr that
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
