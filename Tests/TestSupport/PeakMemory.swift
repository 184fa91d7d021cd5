import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// A child process run to its end with its own peak memory, for the hostile-input tests: a bound
/// on what a crafted file makes depthlens allocate.
///
/// The child runs under GNU time (`/usr/bin/time -f %M`), which forks it from its own small
/// process: Linux keeps the largest resident set a process had across `exec` (`signal->maxrss`
/// takes the old address space's high-water mark), and a child spawned straight from the test
/// process (posix_spawn's vfork shares its address space until `exec`) reports the test process's
/// own peak — ~300 MB in a whole-suite run, though depthlens itself peaked at 54 MB.
public struct PeakRun: Sendable {
    public var status: Int32
    public var stderr: String
    public var stdout: String
    /// Peak resident memory of the child in MiB.
    public var peakMiB: Double

    /// Runs `executable` with `arguments` (stdout and stderr to temporary files).
    public static func run(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws -> PeakRun {
        let base = NSTemporaryDirectory() + "depthlens-peak-\(getpid())-\(UUID().uuidString)"
        let outPath = base + ".out", errPath = base + ".err", peakPath = base + ".peak"
        defer { for p in [outPath, errPath, peakPath] { try? FileManager.default.removeItem(atPath: p) } }
        let time = "/usr/bin/time"
        guard FileManager.default.isExecutableFile(atPath: time) else {
            throw NSError(domain: "PeakRun", code: 1, userInfo: [NSLocalizedDescriptionKey:
                "PeakRun needs GNU time at \(time) (Debian's package time; scripts/test installs it)"])
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        var env = ProcessInfo.processInfo.environment
        for (k, v) in environment { env[k] = v }
        let argv = ([time, "-f", "%M", "-o", peakPath, executable] + arguments).map { strdup($0) } + [nil]
        let envp = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for p in argv + envp { free(p) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, time, &actions, nil, argv, envp)
        guard rc == 0 else { throw NSError(domain: "PeakRun", code: Int(rc), userInfo: [NSLocalizedDescriptionKey: "posix_spawn \(executable): \(rc)"]) }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let read = { (p: String) in String(decoding: (try? Data(contentsOf: URL(fileURLWithPath: p))) ?? Data(), as: UTF8.self) }
        // time's report: the peak in KiB on its last line, after "Command exited with non-zero
        // status N" or "Command terminated by signal N" when there was one; time exits with the
        // child's status.
        let report = read(peakPath).split(separator: "\n")
        guard let kib = report.last.flatMap({ Double($0.trimmingCharacters(in: .whitespaces)) }) else {
            throw NSError(domain: "PeakRun", code: 2, userInfo: [NSLocalizedDescriptionKey: "no peak from \(time): \(report)"])
        }
        var code = status & 0x7f == 0 ? (status >> 8) & 0xff : -(status & 0x7f)
        if let signal = report.first(where: { $0.hasPrefix("Command terminated by signal ") }).flatMap({ Int32($0.split(separator: " ").last ?? "") }) {
            code = -signal
        }
        return PeakRun(status: code, stderr: read(errPath), stdout: read(outPath), peakMiB: kib / 1024)
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
