import Capture
import DepthKit
import Foundation
import XCTest
import TestSupport

/// `ply:DIR`: the file order (numbers as numbers), the timestamps (names or index / fps), playback
/// on the clock, a bad file mid-sequence, read-ahead, globs and empty folders.
final class PLYSequenceTests: XCTestCase {
    /// A cloud of `n` points, all at x = `x`.
    private func cloud(_ n: Int, x: Float) -> PointCloud {
        PointCloud(positions: (0..<n).map { SIMD3(x, Float($0), 1) }, colors: Array(repeating: SIMD3(200, 100, 50), count: n))
    }

    private func folder(_ files: [String: PointCloud?], extra: [String] = []) throws -> String {
        let dir = try makeTemporaryDirectory(self)
        for (name, c) in files {
            let path = dir + "/" + name
            if let c { try PLYWriter.write(c, to: path) } else { try Data("ply\nformat nonsense\n".utf8).write(to: URL(fileURLWithPath: path)) }
        }
        for name in extra { try Data("not a ply".utf8).write(to: URL(fileURLWithPath: dir + "/" + name)) }
        return dir
    }

    func testNaturalOrderComparesDigitRunsAsNumbers() {
        let names = ["frame_10.ply", "frame_2.ply", "frame_1.ply", "frame_02.ply", "a.ply", "frame_100.ply", "Frame_3.ply"]
        XCTAssertEqual(names.sorted(by: PLYSequence.naturalOrder),
                       ["Frame_3.ply", "a.ply", "frame_1.ply", "frame_02.ply", "frame_2.ply", "frame_10.ply", "frame_100.ply"])
        XCTAssertTrue(PLYSequence.naturalOrder("x9y", "x10y"))
        XCTAssertFalse(PLYSequence.naturalOrder("x10y", "x9y"))
        XCTAssertFalse(PLYSequence.naturalOrder("same", "same"))
    }

    func testTimestampsInNames() {
        XCTAssertEqual(PLYSequence.timestamp(inName: "1305031102.175304.ply"), 1305031102.175304)
        XCTAssertEqual(PLYSequence.timestamp(inName: "t_0.25.ply"), 0.25)
        XCTAssertNil(PLYSequence.timestamp(inName: "frame_0001.ply"), "a frame number is not a time")
        XCTAssertNil(PLYSequence.timestamp(inName: "cloud.ply"))
        XCTAssertEqual(PLYSequence.timestamp(inName: "v1.2b.x7.ply"), 1.2, "the last number with a fraction")
    }

    func testFolderOrderIndexTimesAndTheFPS() throws {
        let dir = try folder(["frame_10.ply": cloud(3, x: 10), "frame_2.ply": cloud(2, x: 2), "frame_1.ply": cloud(1, x: 1)],
                             extra: ["notes.txt"])
        try FileManager.default.createDirectory(atPath: dir + "/sub.ply", withIntermediateDirectories: false)
        let q = try PLYSequence(directory: dir)
        XCTAssertEqual(q.entries.map(\.name), ["frame_1.ply", "frame_2.ply", "frame_10.ply"], "folders and other files left out")
        XCTAssertFalse(q.timedByNames)
        XCTAssertEqual(q.name, "ply:\(dir)")
        XCTAssertEqual((0..<3).map { q.timestamp(at: $0) }, [0, 0.1, 0.2].map { $0 }, "index / 10 fps by default")
        q.recording.fps = 4
        XCTAssertEqual(q.timestamp(at: 2), 0.5)
        XCTAssertEqual(q.durationSeconds, 0.5)
    }

    func testTimedByNamesPlaysAtThoseTimes() throws {
        let dir = try folder(["10.0.ply": cloud(3, x: 3), "0.25.ply": cloud(1, x: 1), "1.5.ply": cloud(2, x: 2)])
        let q = try PLYSequence(directory: dir)
        XCTAssertTrue(q.timedByNames)
        XCTAssertEqual(q.entries.map(\.name), ["0.25.ply", "1.5.ply", "10.0.ply"])
        let f0 = try XCTUnwrap(q.nextCloud(now: 100))
        XCTAssertEqual(f0.index, 0)
        XCTAssertEqual(f0.timestamp, 0.25)
        XCTAssertEqual(f0.contents.cloud.positions.first?.x, 1)
        XCTAssertNil(q.nextCloud(now: 101.2), "1.5.ply is due 1.25 s after the first")
        let f1 = try XCTUnwrap(q.nextCloud(now: 101.3))
        XCTAssertEqual(f1.index, 1)
        XCTAssertEqual(f1.timestamp, 1.5)
        XCTAssertEqual(f1.contents.cloud.count, 2)
    }

    /// The bad file is skipped with one warning naming it; in timed playback nothing new comes at
    /// its time (the picture keeps the previous frame) and playback goes on; a step onto it goes on
    /// to the next readable file in its direction.
    func testBadFileMidSequence() throws {
        let dir = try folder(["f1.ply": cloud(1, x: 1), "f2.ply": nil, "f3.ply": cloud(3, x: 3)])
        let q = try PLYSequence(directory: dir)
        XCTAssertEqual(try XCTUnwrap(q.nextCloud(now: 0)).index, 0)
        XCTAssertNil(q.nextCloud(now: 0.05))
        XCTAssertNil(q.nextCloud(now: 0.11), "f2.ply cannot be read: nothing new")
        XCTAssertEqual(q.warnings.count, 1)
        XCTAssertTrue(q.warnings[0].contains("\(dir)/f2.ply"), q.warnings[0])
        XCTAssertTrue(q.take().warnings == q.warnings, "warnings are handed to the viewer once")
        XCTAssertTrue(q.take().warnings.isEmpty)
        let f3 = try XCTUnwrap(q.nextCloud(now: 0.21), "playback goes on")
        XCTAssertEqual(f3.index, 2)
        XCTAssertEqual(f3.contents.cloud.count, 3)

        try q.recording.step(by: -1)
        let back = try XCTUnwrap(q.nextCloud(now: 0.3), "a step onto the bad file goes on past it")
        XCTAssertEqual(back.index, 0)
        XCTAssertEqual(q.warnings.count, 1, "one warning per file")
        try q.recording.seek(toFrame: 2)
        XCTAssertEqual(try XCTUnwrap(q.nextCloud(now: 0.4)).index, 2)
        XCTAssertThrowsError(try q.recording.seek(toFrame: 3))
        q.recording.loop = true
        q.recording.pause()
        XCTAssertNil(q.nextCloud(now: 5), "paused")
        try q.recording.step(by: 1)
        XCTAssertEqual(try XCTUnwrap(q.nextCloud(now: 5.1)).index, 0, "a step past the end wraps when looping")
    }

    /// The next file is read ahead once, and the read is not repeated when it becomes due.
    func testReadsTheNextFileAheadOnce() throws {
        let dir = try folder(["a1.ply": cloud(1, x: 1), "a2.ply": cloud(2, x: 2), "a3.ply": cloud(3, x: 3)])
        let q = try PLYSequence(directory: dir)
        let reads = Reads()
        q.loader = { path, control in reads.add((path as NSString).lastPathComponent); return try PLYReader.load(path, control: control) }
        _ = q.nextCloud(now: 0)
        q.prefetch()
        q.prefetch()
        XCTAssertEqual(reads.names, ["a1.ply", "a2.ply"])
        let f = try XCTUnwrap(q.nextCloud(now: 0.1))
        XCTAssertEqual(f.index, 1)
        XCTAssertEqual(f.contents.cloud.count, 2)
        XCTAssertEqual(reads.names, ["a1.ply", "a2.ply"], "the file read ahead is the one shown")
    }

    /// On its own thread: the first file arrives through `take()`, a step brings the next one.
    func testLoadingThread() throws {
        let dir = try folder(["a1.ply": cloud(1, x: 1), "a2.ply": cloud(2, x: 2)])
        let q = try PLYSequence(directory: dir)
        q.recording.pause()
        q.startLoading()
        defer { q.stopLoading() }
        func next() throws -> PLYSequenceFrame {
            let deadline = Date().addingTimeInterval(10)
            while Date() < deadline {
                if let f = q.take().frame { return f }
                usleep(2000)
            }
            XCTFail("no frame within 10 s")
            throw CocoaError(.fileReadUnknown)
        }
        XCTAssertEqual(try next().index, 0)
        XCTAssertEqual(q.recording.currentIndex, 0)
        try q.recording.step(by: 1)
        XCTAssertEqual(q.recording.currentIndex, 1)
        let f = try next()
        XCTAssertEqual(f.index, 1)
        XCTAssertEqual(f.name, "a2.ply")
    }

    /// A long read is visible (`loadingStatus`) and cancellable: nothing is shown, playback pauses,
    /// the notice says so, and the file is read again (not counted as bad) when stepped to.
    func testCancellingALongRead() throws {
        let dir = try folder(["a1.ply": cloud(1, x: 1), "a2.ply": cloud(2, x: 2)])
        let q = try PLYSequence(directory: dir)
        let slow = Reads()
        q.loader = { path, control in
            if path.hasSuffix("a2.ply") && slow.names.isEmpty {
                slow.add(path)
                while !control.isCancelled { usleep(1000) }   // a read that lasts until cancelled
                throw DepthKitError.file(path: path, problem: "load cancelled")
            }
            return try PLYReader.load(path, control: control)
        }
        XCTAssertEqual(try XCTUnwrap(q.nextCloud(now: 0)).index, 0)
        XCTAssertFalse(q.cancelLoad(after: 0), "nothing is being read")
        let done = DispatchSemaphore(value: 0)
        let box = Reads()
        Thread {
            if let f = q.nextCloud(now: 0.1) { box.add(f.name) }
            done.signal()
        }.start()
        let deadline = Date().addingTimeInterval(10)
        while q.loadingStatus(after: 0) == nil && Date() < deadline { usleep(1000) }
        XCTAssertEqual(q.loadingStatus(after: 0)?.name, "a2.ply")
        XCTAssertNil(q.loadingStatus(after: 60), "not yet a long read")
        XCTAssertFalse(q.cancelLoad(after: 60))
        XCTAssertTrue(q.cancelLoad(after: 0))
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        XCTAssertTrue(box.names.isEmpty, "a cancelled file is not shown")
        XCTAssertTrue(q.recording.isPaused)
        XCTAssertEqual(q.take().warnings, ["load of \(dir)/a2.ply cancelled"])
        XCTAssertTrue(q.warnings.isEmpty, "not a bad file")
        try q.recording.step(by: 1)
        XCTAssertEqual(try XCTUnwrap(q.nextCloud(now: 1)).index, 1, "read again when stepped to")
    }

    func testGlobsAndBadFolders() throws {
        let dir = try folder(["frame_1.ply": cloud(1, x: 1), "frame_10.ply": cloud(1, x: 1), "frame_2.ply": cloud(1, x: 1)])
        XCTAssertEqual(try SourceSpec(parsing: "ply:\(dir)"), .plySequence(directory: dir, pattern: nil))
        let glob = try SourceSpec(parsing: "ply:\(dir)/frame_1*.ply")
        XCTAssertEqual(glob, .plySequence(directory: dir, pattern: "frame_1*.ply"))
        XCTAssertEqual(glob.description, "ply:\(dir)/frame_1*.ply")
        XCTAssertEqual(try SourceSpec(parsing: "ply:\(dir)/frame_1.ply"), .ply(path: "\(dir)/frame_1.ply"))
        XCTAssertEqual(try PLYSequence(directory: dir, pattern: "frame_1*.ply").entries.map(\.name), ["frame_1.ply", "frame_10.ply"])

        let empty = try makeTemporaryDirectory(self)
        XCTAssertThrowsError(try PLYSequence(directory: empty)) { XCTAssertEqual("\($0)", "\(empty): no .ply files in the folder") }
        XCTAssertThrowsError(try PLYSequence(directory: dir, pattern: "*.xyz")) { XCTAssertTrue("\($0)".contains("no file matches '*.xyz'"), "\($0)") }
        XCTAssertThrowsError(try PLYSequence(directory: empty + "/missing")) { XCTAssertTrue("\($0)".contains("no such folder"), "\($0)") }
        XCTAssertThrowsError(try SourceSpec(parsing: "ply:\(dir)").makeSource()) { XCTAssertTrue("\($0)".contains("no color or depth frames")) }
    }
}

/// File names in the order a loader (on the loading thread) read them.
private final class Reads: Sendable {
    private let list = LockedValue<[String]>([])
    func add(_ s: String) { list.withLock { $0.append(s) } }
    var names: [String] { list.current }
}
