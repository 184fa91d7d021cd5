import XCTest
import Foundation
import DepthKit

final class RecordCommandTests: CLITestCase {
    func testRecordsSyntheticFramesIntoATUMFolderThatReadsBack() throws {
        let out = path("rec")
        let r = try CLI.run(["record", "--source", "synthetic", "--frames", "3", "--out", out])
        XCTAssertEqual(r.status, 0, r.stderr)
        let seq = try TUMSequence(directory: out)
        XCTAssertEqual(seq.entries.count, 3)
        let f = try seq.loadFrame(at: 0)
        XCTAssertEqual(f.color.width, 640)
        // The wall of the synthetic scene is at 3 m; 16-bit depth at 5000 units/m keeps it to 0.2 mm.
        XCTAssertEqual(f.depth.map.sample(x: 2, y: 2), SyntheticScene.wallDepth, accuracy: 0.0002)
    }

    func testRefusesANonEmptyFolderAndBadCounts() throws {
        let out = path("full")
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: out + "/x", contents: Data("x".utf8))
        try assertBadInput(["record", "--frames", "1", "--out", out], mentioning: "not empty")
        try assertBadInput(["record", "--frames", "0", "--out", path("r")], mentioning: "--frames")
        try assertBadInput(["record", "--source", "v4l:/dev/x", "--frames", "1", "--out", path("r")], mentioning: "--source")
    }
}
