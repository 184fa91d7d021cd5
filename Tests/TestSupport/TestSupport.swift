import Foundation
import XCTest
import DepthKit

/// What every test target shares: the repository's paths, a child-process runner with a deadline,
/// the Python reference environment, seeded random numbers and temporary folders.

/// The repository's folders, found from this file's place in the tree.
public enum Repo {
    /// The repository root (the folder holding Package.swift).
    public static let root: URL = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    /// `Tests/Fixtures/NAME`.
    public static func fixture(_ name: String) -> String { root.appendingPathComponent("Tests/Fixtures/\(name)").path }
    /// The built `depthlens` executable in the products folder that holds the test bundle (on
    /// Linux `bundleURL` is that folder itself, on macOS the .xctest inside it); `DEPTHLENS_BIN`
    /// overrides (CI points it at the release build for the steady-state checks).
    public static var depthlens: String {
        if let bin = ProcessInfo.processInfo.environment["DEPTHLENS_BIN"] { return bin }
        let bundle = Bundle(for: Marker.self).bundleURL
        let candidates = [bundle, bundle.deletingLastPathComponent()].map { $0.appendingPathComponent("depthlens").path }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) } ?? candidates[0]
    }
    private final class Marker {}
}

/// The independent references from PyPI, in one venv under `.build/pyref` (scripts/test makes it;
/// a test makes it too when it is missing; `DEPTHLENS_PYREF` names another). The package list is
/// `scripts/pyref-requirements.txt`.
public enum PythonReference {
    public static var venv: String {
        ProcessInfo.processInfo.environment["DEPTHLENS_PYREF"] ?? Repo.root.appendingPathComponent(".build/pyref").path
    }
    public static var requirements: String { Repo.root.appendingPathComponent("scripts/pyref-requirements.txt").path }

    /// The venv's python with every module in `modules` importable; installs the requirements
    /// when one is missing. A failed install fails the test (never a skip).
    public static func python(importing modules: [String], file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let py = venv + "/bin/python"
        let probe = "import " + modules.joined(separator: ", ")
        if FileManager.default.isExecutableFile(atPath: py),
           try TestProcess.run([py, "-c", probe], timeout: 120, file: file, line: line).status == 0 { return py }
        var r = try TestProcess.run(["python3", "-m", "venv", venv], timeout: 300, file: file, line: line)
        XCTAssertEqual(r.status, 0, "python3 -m venv \(venv): \(r.output)", file: file, line: line)
        r = try TestProcess.run([venv + "/bin/pip", "install", "-q", "--disable-pip-version-check", "-r", requirements],
                                timeout: 1200, file: file, line: line)
        XCTAssertEqual(r.status, 0, "pip install -r \(requirements): \(r.output)", file: file, line: line)
        r = try TestProcess.run([py, "-c", probe], timeout: 120, file: file, line: line)
        XCTAssertEqual(r.status, 0, "\(probe) in \(venv): \(r.output)", file: file, line: line)
        return py
    }
}

/// Deterministic pseudo-random numbers (SplitMix64) so failures reproduce.
public struct SeededRandom: RandomNumberGenerator, Sendable {
    public var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E3779B97F4A7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58476D1CE4E5B9
        z = (z ^ (z >> 27)) &* 0x94D049BB133111EB
        return z ^ (z >> 31)
    }
    /// A float in lo..<hi from the top 24 bits.
    public mutating func float(_ lo: Float, _ hi: Float) -> Float { lo + (hi - lo) * Float(next() >> 40) / Float(1 << 24) }
}

/// A fresh temporary folder, removed when the value goes away.
public final class TemporaryFolder: Sendable {
    public let path: String
    public init(_ label: String = "depthlens-test") {
        path = NSTemporaryDirectory() + "\(label)-\(getpid())-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }
    /// `path/name`.
    public func file(_ name: String) -> String { path + "/" + name }
    /// Writes `bytes` as `name` in the folder; its path.
    @discardableResult
    public func write(_ bytes: [UInt8], _ name: String) throws -> String {
        let p = file(name)
        try Data(bytes).write(to: URL(fileURLWithPath: p))
        return p
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// A value shared between a test and the threads it starts (a callback's log, a flag a closure
/// reads): DepthKit's `Locked`, under the name the tests use.
public typealias LockedValue = Locked

/// The generated sections of the README and docs/: the text between `<!-- NAME:begin -->` and
/// `<!-- NAME:end -->` lines, which tests compare whole with the table the code generates.
public enum DocSection {
    /// The section `name` of the file at `relativePath` (from the repository root), nil when the
    /// file or either marker is missing.
    public static func text(_ name: String, in relativePath: String) -> String? {
        guard let s = try? String(contentsOfFile: Repo.root.appendingPathComponent(relativePath).path, encoding: .utf8),
              let a = s.range(of: "<!-- \(name):begin -->\n"), let b = s.range(of: "<!-- \(name):end -->", range: a.upperBound..<s.endIndex)
        else { return nil }
        return String(s[a.upperBound..<b.lowerBound])
    }
}
