import DepthKit
import Foundation
import XCTest

/// `view --source ply:FILE` reads the file before a window opens: a missing or bad PLY is one
/// line naming the file and the problem, exit 1, with or without a display.
final class ViewPLYSourceTests: CLITestCase {
    func testMissingPLYIsOneLineBeforeAWindow() throws {
        let missing = path("missing.ply")
        try assertBadInput(["view", "--source", "ply:\(missing)", "--exit-after", "1"], mentioning: "missing.ply")
        XCTAssertEqual(try CLI.run(["view", "--source", "ply:\(missing)"]).status, 1)
    }

    func testBadPLYIsOneLineBeforeAWindow() throws {
        // A vertex count larger than the data.
        let header = "ply\nformat binary_little_endian 1.0\nelement vertex 1000\nproperty float x\nproperty float y\nproperty float z\nend_header\n"
        try (Data(header.utf8) + Data(repeating: 0, count: 12 * 10)).write(to: URL(fileURLWithPath: path("short.ply")))
        try assertBadInput(["view", "--source", "ply:\(path("short.ply"))", "--exit-after", "1"], mentioning: "short.ply")
        // A list property in the vertex element.
        let list = "ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nproperty float y\nproperty float z\nproperty list uchar int idx\nend_header\n0 0 0 1 5\n"
        try Data(list.utf8).write(to: URL(fileURLWithPath: path("list.ply")))
        let r = try CLI.run(["view", "--source", "ply:\(path("list.ply"))"])
        XCTAssertEqual(r.status, 1)
        XCTAssertEqual(r.stderrLines.count, 1, r.stderr)
        XCTAssertTrue(r.stderr.contains("list.ply"), r.stderr)
        try assertBadInput(["view", "--source", "ply:"], mentioning: "ply:")
    }
}
