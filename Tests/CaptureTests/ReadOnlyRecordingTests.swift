import XCTest
import Foundation
@testable import Capture
import CSQLite
import DepthKit
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Issue 33, "read-only is read-only": opening a recording writes nothing beside it, and a
/// recording on read-only media opens. rosbag2 `.db3` files (made by `Tests/Fixtures/hostile_db3.py`
/// with rosbags and Python's sqlite3) are opened through a `file:` URI with `immutable=1`, the
/// schema untrusted and values bounded; the other readers (bag, MCAP, MKV, photo, PLY) are checked
/// by listing the folder before and after `info`.
final class ReadOnlyRecordingTests: XCTestCase {
    /// Mount points to unmount when the test ends.
    private var mounts: [String] = []

    override func tearDown() {
        for m in mounts.reversed() { _ = try? TestProcess.shell("umount '\(m)'") }
        mounts.removeAll()
        super.tearDown()
    }

    /// `KIND.db3` from hostile_db3.py in `dir`.
    private func db3(_ kind: String, in dir: String, name: String? = nil) throws -> String {
        let py = try PythonReference.python(importing: ["numpy", "rosbags"])
        let out = dir + "/" + (name ?? kind + ".db3")
        let r = try TestProcess.run([py, Repo.fixture("hostile_db3.py"), out, kind], timeout: 300)
        XCTAssertEqual(r.status, 0, r.output)
        return out
    }

    private func listing(_ dir: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).sorted()
    }

    private func info(_ source: String) throws -> ProcessResult {
        try TestProcess.result(Repo.depthlens, ["info", source], timeout: 120)
    }

    /// Before: `info` on a WAL-mode .db3 left NAME.db3-shm and NAME.db3-wal beside it. Now the
    /// folder lists the same files after as before.
    func testWALRecordingLeavesNothingBeside() throws {
        let tmp = TemporaryFolder("readonly")
        let file = try db3("wal", in: tmp.path)
        let header = try FileSupport.readPrefix(file, count: 20)
        XCTAssertEqual(Array(header[18...19]), [2, 2], "the fixture is in WAL mode")
        let before = listing(tmp.path)
        XCTAssertEqual(before, ["wal.db3"])
        let r = try info("ros2:" + file)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("5 frames"), r.stdout)
        XCTAssertEqual(listing(tmp.path), before, "nothing written beside the recording")
        // Played through, too.
        let out = TemporaryFolder("readonly-out")
        let c = try TestProcess.result(Repo.depthlens, ["convert", "--source", "ros2:" + file, "--out", out.file("o")], timeout: 120)
        XCTAssertEqual(c.status, 0, c.stderr)
        XCTAssertEqual(listing(tmp.path), before)
    }

    /// A `-wal` left beside the file with changes never checkpointed (a recorder killed): the
    /// database is read as it is on disk, the -wal is not touched, and `info` says what is left out.
    func testUncheckpointedWALIsSaid() throws {
        let tmp = TemporaryFolder("readonly")
        let file = try db3("pending", in: tmp.path)
        let before = listing(tmp.path)
        XCTAssertEqual(before, ["pending.db3", "pending.db3-wal"])
        let r = try info("ros2:" + file)
        // Described (its readable frames) and said as damage: exit 1, as `info` does for a recording cut short.
        XCTAssertEqual(r.status, 1, r.stderr)
        XCTAssertTrue(r.stdout.contains("5 frames"), r.stdout)
        XCTAssertTrue(r.stdout.contains("damaged: pending.db3-wal beside it holds"), r.stdout)
        XCTAssertEqual(listing(tmp.path), before)
    }

    /// A name that is not a plain URI path (`?`, `#`, `%`, a space, a relative path) is
    /// percent-encoded into the `file:` URI and opens as the file it names.
    func testNamesNeedingEscapesOpen() throws {
        let tmp = TemporaryFolder("readonly")
        let name = "we?ird #1 %41%2e 'x'.db3"
        _ = try db3("wal", in: tmp.path, name: name)
        XCTAssertEqual(Rosbag2SQLite.uri("/a b/c?d#e%f.db3"), "file:///a%20b/c%3Fd%23e%25f.db3?immutable=1")
        let r = try TestProcess.result(Repo.depthlens, ["info", "ros2:" + name], cwd: tmp.path, timeout: 120)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("5 frames"), r.stdout)
        XCTAssertEqual(listing(tmp.path), [name])
    }

    /// Before: a WAL-mode .db3 in a read-only folder failed ("unable to open database file": SQLite
    /// must create NAME.db3-shm). Now it opens. The folder is a read-only bind mount (read-only
    /// for root too), else the CLI runs as nobody over a folder it cannot write.
    func testRecordingInReadOnlyFolderOpens() throws {
        let tmp = TemporaryFolder("readonly")
        let src = tmp.file("src"), ro = tmp.file("ro")
        for d in [src, ro] { try FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true) }
        _ = try db3("wal", in: src)
        let mounted = try TestProcess.shell("mount --bind '\(src)' '\(ro)' && mount -o remount,bind,ro '\(ro)'")
        if mounted.status == 0 {
            mounts.append(ro)
            XCTAssertNotEqual(access(ro, W_OK), 0, "the bind mount is read-only")
            let r = try info("ros2:" + ro + "/wal.db3")
            XCTAssertEqual(r.status, 0, r.stderr)
            XCTAssertTrue(r.stdout.contains("5 frames"), r.stdout)
            return
        }
        _ = try TestProcess.shell("umount '\(ro)' 2>/dev/null")
        guard let setpriv = TestProcess.which("setpriv") else {
            throw XCTSkip("neither a read-only bind mount (\(mounted.stderr)) nor setpriv to run as nobody is available here")
        }
        // As nobody: the folder readable (r-x) but not writable, the file readable.
        XCTAssertEqual(chmod(tmp.path, 0o755), 0)
        XCTAssertEqual(chmod(src, 0o555), 0)
        defer { chmod(src, 0o755) }
        let r = try TestProcess.result(setpriv, ["--reuid=nobody", "--regid=nogroup", "--clear-groups", Repo.depthlens, "info", "ros2:" + src + "/wal.db3"],
                                       timeout: 120)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("5 frames"), r.stdout)
        XCTAssertEqual(listing(src), ["wal.db3"])
    }

    /// Before: a 32 KB .db3 whose messages.data is a generated `zeroblob(900000000)` column made
    /// `info` peak at 1.8 GB. Now a generated column (and a view) is refused at once: one line,
    /// exit 1, a small peak — from the file and from its zstd-compressed image in memory.
    func testComputedMessageDataIsRefused() throws {
        let tmp = TemporaryFolder("readonly")
        let generated = try db3("generated", in: tmp.path), view = try db3("view", in: tmp.path)
        var r = try PeakRun.depthlens(["info", "ros2:" + generated])
        r.assertOneLineError(mentioning: [generated, "messages.data is a generated column"], peakUnder: 300)
        r = try PeakRun.depthlens(["convert", "--source", "ros2:" + generated, "--out", tmp.file("out")])
        r.assertOneLineError(mentioning: [generated, "generated column"], peakUnder: 300)
        r = try PeakRun.depthlens(["info", "ros2:" + view])
        r.assertOneLineError(mentioning: [view, "without rosbag2's messages table"], peakUnder: 300)
        // rosbag2's per-file compression: the same database deserialized in memory.
        let z = try TestProcess.run(["zstd", "-q", generated, "-o", generated + ".zstd"], timeout: 60)
        XCTAssertEqual(z.status, 0, z.output)
        r = try PeakRun.depthlens(["info", "ros2:" + generated + ".zstd"])
        r.assertOneLineError(mentioning: [generated + ".zstd", "messages.data is a generated column"], peakUnder: 300)
    }

    /// A value longer than `maxValueLength` (here one the query computes) is SQLite's "too big"
    /// error on this connection, not a gigabyte allocation.
    func testValueLengthIsLimited() throws {
        let tmp = TemporaryFolder("readonly")
        let file = try db3("plain", in: tmp.path)
        let recording = try ROS2Recording(path: file)
        XCTAssertEqual(recording.topics.map(\.name), ["/camera/color/image_raw"])
        var db: OpaquePointer?
        XCTAssertEqual(sqlite3_open_v2(Rosbag2SQLite.uri(file), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nil), SQLITE_OK)
        defer { sqlite3_close_v2(db) }
        sqlite3_limit(db, SQLITE_LIMIT_LENGTH, Rosbag2SQLite.maxValueLength)
        var st: OpaquePointer?
        XCTAssertEqual(sqlite3_prepare_v2(db, "SELECT zeroblob(\(Int(Rosbag2SQLite.maxValueLength) + 1))", -1, &st, nil), SQLITE_OK)
        defer { sqlite3_finalize(st) }
        XCTAssertEqual(sqlite3_step(st), SQLITE_TOOBIG)
    }

    /// bag, MCAP, MKV, photo and PLY: `info` leaves the folder as it was.
    func testOtherReadersWriteNothingBeside() throws {
        let tmp = TemporaryFolder("readonly")
        let dir = tmp.file("in"), made = TemporaryFolder("readonly-made")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let bag = dir + "/d435.bag", heic = dir + "/pug.heic"
        try FileManager.default.copyItem(atPath: Repo.fixture("realsense-d435-640x480.bag"), toPath: bag)
        try FileManager.default.copyItem(atPath: Repo.fixture("iphone-portrait-pug.heic"), toPath: heic)
        // An MCAP, an MKV and PLY files, made elsewhere from the bag and moved in.
        func run(_ args: [String]) throws {
            let r = try TestProcess.result(Repo.depthlens, args, timeout: 300)
            XCTAssertEqual(r.status, 0, "\(args): \(r.stderr)")
        }
        try run(["convert", "--source", "bag:" + bag, "--frames", "0:1", "--out", made.file("r.mcap")])
        try run(["record", "--source", "bag:" + bag, "--frames", "2", "--mkv", made.file("r.mkv")])
        try run(["convert", "--source", "bag:" + bag, "--frames", "0:0", "--ply", "--out", made.file("tum")])
        try FileManager.default.moveItem(atPath: made.file("r.mcap"), toPath: dir + "/r.mcap")
        try FileManager.default.moveItem(atPath: made.file("r.mkv"), toPath: dir + "/r.mkv")
        let plys = listing(made.file("tum/ply"))
        XCTAssertFalse(plys.isEmpty)
        try FileManager.default.moveItem(atPath: made.file("tum/ply/" + plys[0]), toPath: dir + "/cloud.ply")
        let before = listing(dir)
        XCTAssertEqual(before, ["cloud.ply", "d435.bag", "pug.heic", "r.mcap", "r.mkv"])
        for source in ["bag:" + bag, "ros2:" + dir + "/r.mcap", "mkv:" + dir + "/r.mkv", "photo:" + heic, "ply:" + dir + "/cloud.ply"] {
            let r = try info(source)
            XCTAssertEqual(r.status, 0, "\(source): \(r.stderr)")
            XCTAssertEqual(listing(dir), before, "\(source) wrote beside its file")
        }
    }
}
