import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// A child process run to its end with its own peak memory: `wait4` gives the rusage of that
/// child alone (`ru_maxrss`, its VmHWM, in KiB), whatever other children the test process ran.
/// For the hostile-input tests: a bound on what a crafted file makes depthlens allocate.
public struct PeakRun: Sendable {
    public var status: Int32
    public var stderr: String
    public var stdout: String
    /// Peak resident memory of the child in MiB.
    public var peakMiB: Double

    /// Runs `executable` with `arguments` (stdout and stderr to temporary files).
    public static func run(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws -> PeakRun {
        let base = NSTemporaryDirectory() + "depthlens-peak-\(getpid())-\(UUID().uuidString)"
        let outPath = base + ".out", errPath = base + ".err"
        defer { for p in [outPath, errPath] { try? FileManager.default.removeItem(atPath: p) } }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        var env = ProcessInfo.processInfo.environment
        for (k, v) in environment { env[k] = v }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for p in argv + envp { free(p) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, executable, &actions, nil, argv, envp)
        guard rc == 0 else { throw NSError(domain: "PeakRun", code: Int(rc), userInfo: [NSLocalizedDescriptionKey: "posix_spawn \(executable): \(rc)"]) }
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
        let exited = status & 0x7f == 0
        let read = { (p: String) in String(decoding: (try? Data(contentsOf: URL(fileURLWithPath: p))) ?? Data(), as: UTF8.self) }
        return PeakRun(status: exited ? (status >> 8) & 0xff : -(status & 0x7f), stderr: read(errPath), stdout: read(outPath),
                       peakMiB: Double(usage.ru_maxrss) / 1024)
    }

    /// `depthlens ARGS`.
    public static func depthlens(_ arguments: [String]) throws -> PeakRun { try run(Repo.depthlens, arguments) }

    /// Asserts the product's contract for bad input: exit 1, one line on stderr that contains
    /// every one of `mentioning`, and a peak under `peakMiB`.
    public func assertOneLineError(mentioning: [String], peakUnder limit: Double, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(status, 1, "exit status; stderr: \(stderr)", file: file, line: line)
        let lines = stderr.split(separator: "\n")
        XCTAssertEqual(lines.count, 1, "one line on stderr: \(stderr)", file: file, line: line)
        for m in mentioning { XCTAssertTrue(stderr.contains(m), "stderr names \(m): \(stderr)", file: file, line: line) }
        XCTAssertLessThan(peakMiB, limit, "peak resident memory (MiB); stderr: \(stderr)", file: file, line: line)
    }
}

/// Big-endian bytes, for files written by hand.
public func bigEndian16(_ v: Int) -> [UInt8] { [UInt8(v >> 8 & 0xff), UInt8(v & 0xff)] }
public func bigEndian32(_ v: Int) -> [UInt8] { [UInt8(v >> 24 & 0xff), UInt8(v >> 16 & 0xff), UInt8(v >> 8 & 0xff), UInt8(v & 0xff)] }

extension PeakRun {
    /// This test bundle run as a child on one test (`Target.Class/test`) with `environment`: for a
    /// decode reached by no command (an in-memory image), measured on its own process.
    public static func testBundle(_ test: String, environment: [String: String]) throws -> PeakRun {
        // The bundle's path; when a build replaced it since this process started, the link ends
        // in " (deleted)" and the same path holds the new one.
        var exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        if exe.hasSuffix(" (deleted)") { exe = String(exe.dropLast(10)) }
        return try run(exe, [test], environment: environment)
    }
}
