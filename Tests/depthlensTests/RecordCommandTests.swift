import XCTest
import Foundation
import DepthKit
import Capture

final class RecordCommandTests: CLITestCase {
    func testRecordsSyntheticFramesIntoATUMFolderThatReadsBack() throws {
        let out = path("rec")
        let r = try CLI.run(["record", "--source", "synthetic", "--frames", "3", "--out", out])
        XCTAssertEqual(r.status, 0, r.stderr)
        // The source's own depth units (the synthetic scene's 1000 per meter; calibration.json says so), as `convert` writes them.
        let seq = try TUMSequence(directory: out, depthScale: 1000)
        XCTAssertEqual(seq.entries.count, 3)
        let f = try seq.loadFrame(at: 0)
        XCTAssertEqual(f.color.width, 640)
        // The wall of the synthetic scene is at 3 m; 16-bit depth at 1000 units/m keeps it to 0.5 mm.
        XCTAssertEqual(f.depth.map.sample(x: 2, y: 2), SyntheticScene.wallDepth, accuracy: 0.0005)
    }

    func testRefusesANonEmptyFolderAndBadCounts() throws {
        let out = path("full")
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: out + "/x", contents: Data("x".utf8))
        try assertBadInput(["record", "--frames", "1", "--out", out], mentioning: "not empty")
        try assertBadInput(["record", "--frames", "0", "--out", path("r")], mentioning: "--frames")
        try assertBadInput(["record", "--source", "v4l:/dev/x", "--frames", "1", "--out", path("r")], mentioning: "--source")
    }
}

final class RecordVideoTests: CLITestCase {
    func testVideoHasEveryRecordedFrameAndTheFolderIsStillWritten() throws {
        let out = path("rec"), video = path("v.mp4")
        let r = try CLI.run(["record", "--frames", "12", "--out", out, "--video", video, "--filter", "jet"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("wrote video: 12 frames"), r.stdout)
        XCTAssertEqual(try TUMSequence(directory: out).entries.count, 12)
        let v = try VideoProbe.read(video)
        XCTAssertEqual(v.frames, 12)
        XCTAssertEqual(v.codec, "h264")
        XCTAssertEqual(v.pixelFormat, "yuv420p")
        XCTAssertEqual(v.rate, "30/1", "the synthetic source's rate")
        XCTAssertEqual([v.width, v.height], [640, 480])

        // A TUM folder plays at its recorded rate; no --out: the video only.
        let again = path("again.mp4")
        let r2 = try CLI.run(["record", "--source", "tum:" + out, "--frames", "5", "--video", again])
        XCTAssertEqual(r2.status, 0, r2.stderr)
        XCTAssertEqual(try VideoProbe.read(again).frames, 5)
    }

    func testOddSizesArePadded() throws {
        let pair = try writeSyntheticPair(width: 33, height: 25)
        let video = path("odd.mp4")
        let r = try CLI.run(["record", "--source", "pair:\(pair.color),\(pair.depth)", "--depth-scale", "1000",
                             "--frames", "1", "--video", video, "--filter", "comic"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("33x25 padded to 34x26"), r.stdout)
        let v = try VideoProbe.read(video)
        XCTAssertEqual([v.frames, v.width, v.height], [1, 34, 26])
    }

    func testBadVideoRequests() throws {
        try assertBadInput(["record", "--frames", "2"], mentioning: "--video")
        try assertBadInput(["record", "--frames", "2", "--video", path("x.avi")], mentioning: ".mp4", noFile: path("x.avi"))
        try assertBadInput(["record", "--frames", "2", "--out", path("t"), "--filter", "jet"], mentioning: "--video")
        try assertBadInput(["record", "--frames", "2", "--video", path("x.mp4"), "--filter", "sepia"], mentioning: "sepia")
        try assertBadInput(["record", "--frames", "2", "--video", path("nodir/x.mp4")], mentioning: "does not exist")
        // No ffmpeg is run (libavcodec in-process): with nothing on PATH the video is still written.
        let r = try CLI.run(["record", "--frames", "2", "--video", path("y.mp4")], environment: ["PATH": "/nonexistent"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(try VideoProbe.read(path("y.mp4")).frames, 2)
    }
}
