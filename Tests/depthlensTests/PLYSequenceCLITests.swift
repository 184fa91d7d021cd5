import XCTest
import Foundation
import DepthKit

/// `info ply:DIR` describes a PLY sequence (files in playing order, timing, the first file's points,
/// the total); an empty folder is one line and exit 1 for `info` and for `view` (before any window).
final class PLYSequenceCLITests: CLITestCase {
    private func cloud(_ n: Int) -> PointCloud {
        PointCloud(positions: (0..<n).map { SIMD3(Float($0), 0, 1) }, colors: Array(repeating: SIMD3(9, 8, 7), count: n))
    }

    func testInfoDescribesTheSequence() throws {
        let dir = path("seq")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try PLYWriter.write(cloud(3), to: dir + "/0.50.ply")
        try PLYWriter.write(cloud(5), to: dir + "/0.25.ply")
        try PLYWriter.write(cloud(7), to: dir + "/1.75.ply")
        let r = try CLI.run(["info", "ply:\(dir)"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.stdout.split(separator: "\n").map(String.init), [
            "ply:\(dir): PLY sequence, 3 files, 0.25.ply … 1.75.ply",
            "  timed by the numbers in the file names: 1.500 s",
            "  first: 0.25.ply, 5 points, with color",
            "  total: 15 points in 3 readable files",
        ])

        // A glob, index timing, and a bad file: its own line and exit 1.
        try PLYWriter.write(cloud(2), to: dir + "/frame_10.ply")
        try PLYWriter.write(cloud(4), to: dir + "/frame_9.ply")
        try Data("nope".utf8).write(to: URL(fileURLWithPath: dir + "/frame_11.ply"))
        let g = try CLI.run(["info", "ply:\(dir)/frame_*.ply"])
        XCTAssertEqual(g.status, 1)
        XCTAssertEqual(g.stdout.split(separator: "\n").map(String.init), [
            "ply:\(dir)/frame_*.ply: PLY sequence, 3 files, frame_9.ply … frame_11.ply",
            "  timed by index: file i at i / fps (--fps, default 10)",
            "  first: frame_9.ply, 4 points, with color",
            "  unreadable: \(dir)/frame_11.ply: not a PLY file",
            "  total: 6 points in 2 readable files",
        ])
    }

    func testEmptyFolderIsOneLine() throws {
        let empty = path("empty")
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        try assertBadInput(["info", "ply:\(empty)"], mentioning: "\(empty): no .ply files in the folder")
        try assertBadInput(["view", "--source", "ply:\(empty)"], mentioning: "\(empty): no .ply files in the folder")
        try assertBadInput(["view", "--source", "ply:\(empty)/*.ply"], mentioning: "\(empty): no file matches '*.ply'")
    }
}
