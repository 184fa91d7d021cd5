import XCTest
import Foundation
@testable import Capture
import DepthKit

final class TUMSourceTests: XCTestCase {
    /// Frames at 100.0, 100.1, 100.25, 100.3 s.
    func makeSource() throws -> TUMSource {
        let dir = try writeTUMFolder(self, timestamps: [100.0, 100.1, 100.25, 100.3])
        let source = TUMSource(directory: dir)
        try source.start()
        return source
    }

    func testPlaysAtRecordedTimestamps() throws {
        let s = try makeSource()
        XCTAssertEqual(s.recording.frameCount, 4)
        var f = try XCTUnwrap(try s.nextFrame(now: 5.0))
        XCTAssertEqual(f.index, 0)
        XCTAssertEqual(f.timestamp, 100.0, accuracy: 1e-6)
        XCTAssertEqual(f.color.rgba(x: 3, y: 2).0, 0)
        XCTAssertEqual(try XCTUnwrap(f.depth).map.sample(x: 1, y: 1), 1, accuracy: 1e-3)
        XCTAssertNil(try s.nextFrame(now: 5.05))
        XCTAssertEqual(try s.nextFrame(now: 5.1)?.index, 1)
        XCTAssertNil(try s.nextFrame(now: 5.2))
        f = try XCTUnwrap(try s.nextFrame(now: 5.26))
        XCTAssertEqual(f.index, 2)
        XCTAssertEqual(f.color.rgba(x: 0, y: 0).0, 20)
        XCTAssertEqual(try s.nextFrame(now: 5.31)?.index, 3)
        XCTAssertNil(try s.nextFrame(now: 9))
        XCTAssertTrue(s.recording.isFinished)
    }

    func testLatePollSkipsToTheFrameDueNow() throws {
        let s = try makeSource()
        _ = try s.nextFrame(now: 0)
        XCTAssertEqual(try s.nextFrame(now: 0.27)?.index, 2)
    }

    func testFixedFPSOverridesTimestamps() throws {
        let s = try makeSource()
        s.recording.fps = 2   // one frame every 0.5 s
        XCTAssertEqual(try s.nextFrame(now: 1)?.index, 0)
        XCTAssertNil(try s.nextFrame(now: 1.4))
        XCTAssertEqual(try s.nextFrame(now: 1.5)?.index, 1)
        XCTAssertNil(try s.nextFrame(now: 1.9))
        XCTAssertEqual(try s.nextFrame(now: 2.0)?.index, 2)
    }

    func testPauseStepAndSeek() throws {
        let s = try makeSource()
        XCTAssertEqual(try s.nextFrame(now: 0)?.index, 0)
        s.recording.pause()
        XCTAssertTrue(s.recording.isPaused)
        XCTAssertNil(try s.nextFrame(now: 10))
        try s.recording.step(by: 1)
        XCTAssertEqual(try s.nextFrame(now: 10)?.index, 1)
        XCTAssertNil(try s.nextFrame(now: 20))
        try s.recording.step(by: -1)
        XCTAssertEqual(try s.nextFrame(now: 20)?.index, 0)
        try s.recording.step(by: -1)      // clamps at the first frame
        XCTAssertEqual(try s.nextFrame(now: 20)?.index, 0)
        try s.recording.seek(toFrame: 3)
        XCTAssertEqual(s.recording.currentIndex, 3)
        XCTAssertEqual(try s.nextFrame(now: 21)?.index, 3)
        XCTAssertThrowsError(try s.recording.seek(toFrame: 4)) { XCTAssertTrue("\($0)".contains("out of range 0..<4"), "\($0)") }
        // Resume from frame 1: the clock restarts where playback resumes.
        try s.recording.seek(toFrame: 1)
        XCTAssertEqual(try s.nextFrame(now: 30)?.index, 1)
        s.recording.resume()
        XCTAssertNil(try s.nextFrame(now: 50))          // re-anchors here
        XCTAssertNil(try s.nextFrame(now: 50.1))        // frame 2 is 0.15 s after frame 1
        XCTAssertEqual(try s.nextFrame(now: 50.16)?.index, 2)
    }

    func testLoopStartsOverAfterTheLastFrame() throws {
        let s = try makeSource()
        s.recording.loop = true
        _ = try s.nextFrame(now: 0)
        XCTAssertEqual(try s.nextFrame(now: 0.3)?.index, 3)
        XCTAssertNil(try s.nextFrame(now: 0.35))         // last frame shows for one mean interval (0.1 s)
        XCTAssertFalse(s.recording.isFinished)
        XCTAssertEqual(try s.nextFrame(now: 0.41)?.index, 0)
        XCTAssertEqual(try s.nextFrame(now: 0.52)?.index, 1)
    }

    func testMissingFrameIsSkippedWithAWarning() throws {
        let dir = try writeTUMFolder(self, timestamps: [1.0, 1.1, 1.2])
        let seq = try TUMSequence(directory: dir)
        try FileManager.default.removeItem(atPath: seq.entries[1].colorPath)
        let s = TUMSource(directory: dir)
        var seen: [String] = []
        s.onWarning = { seen.append($0) }
        try s.start()
        XCTAssertEqual(try s.nextFrame(now: 0)?.index, 0)
        XCTAssertNil(try s.nextFrame(now: 0.1))           // frame 1 is due but missing: skipped, no throw
        XCTAssertEqual(s.warnings.count, 1)
        XCTAssertEqual(seen, s.warnings)
        XCTAssertTrue(s.warnings[0].hasPrefix("frame 1 skipped: "), s.warnings[0])
        XCTAssertTrue(s.warnings[0].contains(seq.entries[1].colorPath), s.warnings[0])
        XCTAssertEqual(try s.nextFrame(now: 0.2)?.index, 2)
        // Stepping onto the bad frame goes on to the next readable one, warning only once.
        s.recording.pause()
        try s.recording.seek(toFrame: 0)
        _ = try s.nextFrame(now: 1)
        try s.recording.step(by: 1)
        XCTAssertEqual(try s.nextFrame(now: 1)?.index, 2)
        XCTAssertEqual(s.warnings.count, 1)
    }

    func testMissingFolderIsAOneLineError() {
        let s = TUMSource(directory: "/nonexistent/tum")
        XCTAssertThrowsError(try s.start()) { error in
            XCTAssertTrue(error is CaptureError)
            XCTAssertEqual("\(error)", "/nonexistent/tum: no such directory")
        }
    }
}
