import Foundation
import TestSupport
import XCTest

/// Issue 33 through the command line: a damaged ROS 2 recording is described and converted as far
/// as it can be read, its damage said (the same line in `info`, `info --json` and on `convert`'s
/// stderr) and the exit status 1; a hostile one (a chunk or a whole-file zstd stream that inflates
/// to gigabytes from kilobytes) costs memory within the budget and is one line. Recordings from
/// Tests/Fixtures/damaged_ros2.py (PyPI `mcap`, `zstandard`); peak memory measured on the child.
final class DamagedRecordingCLITests: CLITestCase {
    /// Runs damaged_ros2.py; the file it wrote and the offsets of its Chunk records.
    private func make(_ args: [String], _ name: String, file: StaticString = #filePath, line: UInt = #line) throws -> (path: String, chunks: [Int]) {
        let python = try PythonReference.python(importing: ["mcap", "rosbags", "numpy", "zstandard"], file: file, line: line)
        let out = path(name)
        let r = try TestProcess.run([python, Repo.fixture("damaged_ros2.py")] + args.prefix(1) + [out] + args.dropFirst(), file: file, line: line)
        XCTAssertEqual(r.status, 0, r.output, file: file, line: line)
        let json = r.output.split(separator: "\n").last { $0.hasPrefix("{") } ?? ""
        let chunks = (try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])?["chunks"] as? [Int] ?? []
        return (out, chunks)
    }

    private func rewrite(_ file: String, _ change: (inout [UInt8]) -> Void) throws {
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: file)))
        change(&bytes)
        try Data(bytes).write(to: URL(fileURLWithPath: file))
    }

    /// `info` (text and JSON) and `convert` of a damaged recording: the readable frames, the damage
    /// line `expect` begins with, exit 1 each time.
    private func assertSaid(_ file: String, damage expect: String, frames: Int, colorFrames: Int,
                            fileName: StaticString = #filePath, line: UInt = #line) throws {
        let info = try CLI.run(["info", "ros2:\(file)"])
        XCTAssertEqual(info.status, 1, "info: damage is not hidden; \(info.stderr)", file: fileName, line: line)
        let damaged = info.stdout.split(separator: "\n").filter { $0.hasPrefix("  damaged: ") }
        XCTAssertEqual(damaged.count, 1, info.stdout, file: fileName, line: line)
        XCTAssertTrue(damaged.first?.dropFirst(11).hasPrefix(expect) ?? false, "\(damaged)", file: fileName, line: line)
        XCTAssertTrue(info.stdout.hasPrefix("ros2:\(file): ros2 source, \(frames) frames"), info.stdout, file: fileName, line: line)

        let json = try CLI.run(["info", "--json", "ros2:\(file)"])
        XCTAssertEqual(json.status, 1, file: fileName, line: line)
        let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        XCTAssertEqual(object?["damage"] as? [String], damaged.map { String($0.dropFirst(11)) }, file: fileName, line: line)

        let out = path("out-\(UUID().uuidString)")
        let convert = try CLI.run(["convert", "--source", "ros2:\(file)", "--out", out])
        XCTAssertEqual(convert.status, 1, "convert: the readable frames written, the damage said; \(convert.stderr)", file: fileName, line: line)
        let said = convert.stderrLines.filter { $0.contains(expect) }
        XCTAssertEqual(said, ["depthlens: ros2:\(file): \(damaged.first?.dropFirst(11) ?? "")"], convert.stderr, file: fileName, line: line)
        let rgb = try FileManager.default.contentsOfDirectory(atPath: out + "/rgb")
        XCTAssertEqual(rgb.count, colorFrames, "color frames written", file: fileName, line: line)
        XCTAssertTrue(convert.stdout.contains("wrote \(colorFrames) color"), convert.stdout, file: fileName, line: line)

        // A video of it: the same rule (the readable frames written, the same damage line, exit 1).
        let video = path("video-\(UUID().uuidString).mp4")
        let v = try CLI.run(["convert", "--source", "ros2:\(file)", "--video", video])
        XCTAssertEqual(v.status, 1, "convert --video: damage said, exit 1; \(v.stderr)", file: fileName, line: line)
        XCTAssertEqual(v.stderrLines.filter { $0.contains(expect) }, said, v.stderr, file: fileName, line: line)
        XCTAssertTrue(FileManager.default.fileExists(atPath: video), "the readable frames' video is written", file: fileName, line: line)
    }

    /// Cut in half: before, `info` said a clean 5-frame recording (the file had 10) and `convert` exited 0.
    func testMCAPCutInHalf() throws {
        let (file, _) = try make(["mcap"], "half.mcap")
        var size = 0
        try rewrite(file) { b in
            b.removeLast(b.count / 2 + b.count % 2)
            size = b.count
        }
        try assertSaid(file, damage: "recording cut short at byte \(size) of ≥ ", frames: 5, colorFrames: 5)
    }

    /// 4 KiB zeroed inside a zstd chunk: before, `info` said a clean 10-frame recording and `convert`
    /// stopped with exit 1 after writing nothing of the rest.
    func testMCAPWithAZeroedChunk() throws {
        let (file, chunks) = try make(["mcap"], "zeroed.mcap")
        XCTAssertGreaterThan(chunks.count, 3)
        try rewrite(file) { b in
            for i in (chunks[2] + 200)..<(chunks[2] + 200 + 4096) { b[i] = 0 }
        }
        // The third chunk holds color frames 3 and 4 and depth frame 3 (16 KiB chunks of 64x48 frames).
        try assertSaid(file, damage: "chunk at offset \(chunks[2]) (zstd): ", frames: 9, colorFrames: 8)
    }

    /// ROS 1 the same way: the D435 bag (Tests/Fixtures, two lz4 chunks) with 4 KiB zeroed inside its
    /// second chunk. Before: `info` said a clean 2-frame bag (exit 0).
    func testROS1BagWithAZeroedChunk() throws {
        let file = path("d435.bag")
        try FileManager.default.copyItem(atPath: Repo.fixture("realsense-d435-640x480.bag"), toPath: file)
        try rewrite(file) { b in
            for i in (756_751 + 4000)..<(756_751 + 4000 + 4096) { b[i] = 0 }
        }
        let info = try CLI.run(["info", "bag:\(file)"])
        XCTAssertEqual(info.status, 1, info.stderr)
        XCTAssertTrue(info.stdout.hasPrefix("bag:\(file): bag source, 1 frames"), info.stdout)
        let line = "chunk 1 (lz4 at offset 756751): corrupt data; its 42 messages left out"
        XCTAssertEqual(info.stdout.split(separator: "\n").filter { $0.hasPrefix("  damaged: ") }, ["  damaged: \(line)"[...]])
        let convert = try CLI.run(["convert", "--source", "bag:\(file)", "--out", path("out")])
        XCTAssertEqual(convert.status, 1, convert.stderr)
        XCTAssertEqual(convert.stderrLines.filter { $0.contains("chunk 1") }, ["depthlens: bag:\(file): \(line)"])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: path("out/rgb")).count, 1)
    }

    /// A summary-less MCAP with a zstd chunk of ~50 KB that declares (and inflates to) 1 GiB: with
    /// 256 MiB available, that chunk is one line and the rest opens. Before: 1.1 GB peak, a clean
    /// 10-frame recording.
    func testChunkDeclaringAGibibyteStaysWithinTheBudget() throws {
        let (file, chunks) = try make(["chunk-bomb"], "bomb.mcap")
        let r = try PeakRun.run(Repo.depthlens, ["info", "ros2:\(file)"], environment: ["DEPTHLENS_MEMORY_AVAILABLE": "\(256 << 20)"])
        XCTAssertEqual(r.status, 1, r.stderr)
        XCTAssertTrue(r.stdout.hasPrefix("ros2:\(file): ros2 source, 10 frames"), r.stdout)
        let damaged = r.stdout.split(separator: "\n").filter { $0.hasPrefix("  damaged: ") }
        XCTAssertEqual(damaged, ["  damaged: chunk at offset \(chunks.last ?? -1) (zstd): declares 1073741824 uncompressed bytes, "
                                 + "more than the memory available (256 MiB)"])
        XCTAssertLessThan(r.peakMiB, 400, "peak resident memory (MiB)")
        // With the machine's own budget, its ratio (1 GiB from ~50 KB) refuses it all the same.
        let own = try PeakRun.run(Repo.depthlens, ["info", "ros2:\(file)"])
        XCTAssertEqual(own.status, 1, own.stderr)
        let line = own.stdout.split(separator: "\n").filter { $0.hasPrefix("  damaged: ") }
        XCTAssertEqual(line.count, 1, own.stdout)
        XCTAssertTrue(line.first?.hasPrefix("  damaged: chunk at offset \(chunks.last ?? -1) (zstd): declares 1073741824 uncompressed bytes") ?? false,
                      "\(line)")
        XCTAssertLessThan(own.peakMiB, 400, "peak resident memory (MiB)")
    }

    /// A `.mcap.zstd` of ~260 KB inflating to 8 GiB, its frames without a declared size: stopped at
    /// the budget, one line. Before: inflated up to half the machine's memory.
    func testWholeFileZstdBombWithoutDeclaredSize() throws {
        let (file, _) = try make(["zstd-bomb"], "bomb.mcap.zstd")
        let r = try PeakRun.run(Repo.depthlens, ["info", "ros2:\(file)"], environment: ["DEPTHLENS_MEMORY_AVAILABLE": "\(128 << 20)"])
        r.assertOneLineError(mentioning: ["bomb.mcap.zstd: zstd-compressed storage file: it inflates past 128 MiB"], peakUnder: 400)
        XCTAssertEqual(r.stdout, "")
    }

    /// The same bomb with the machine's own budget: a stream that does not declare its size stops at
    /// 1024 times its size (here ~270 MB) however much memory is free. Before: 8 GiB inflated.
    func testWholeFileZstdBombStopsAtItsRatioWhateverTheMemory() throws {
        let (file, _) = try make(["zstd-bomb"], "ratio.mcap.zstd")
        let size = (try FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? 0
        let r = try PeakRun.run(Repo.depthlens, ["info", "ros2:\(file)"])
        // On a machine with under ~270 MB available, the budget stops it first: the same one line.
        let ratio = "ratio.mcap.zstd: zstd-compressed storage file: it inflates past", why = "(1024 times its \(size) bytes)"
        r.assertOneLineError(mentioning: [ratio], peakUnder: 600)
        XCTAssertTrue(r.stderr.contains(why) || r.stderr.contains("the memory available"), r.stderr)
    }

    /// The same bomb whose frames declare their 64 MiB each: refused from the frame headers, before decoding.
    func testWholeFileZstdBombDeclaringItsSize() throws {
        let (file, _) = try make(["zstd-bomb", "--declared"], "declared.mcap.zstd")
        let r = try PeakRun.run(Repo.depthlens, ["convert", "--source", "ros2:\(file)", "--out", path("out")],
                                environment: ["DEPTHLENS_MEMORY_AVAILABLE": "\(128 << 20)"])
        r.assertOneLineError(mentioning: ["declared.mcap.zstd: zstd-compressed storage file: its frames declare 8589934592 bytes uncompressed"],
                             peakUnder: 200)
        XCTAssertEqual((try? FileManager.default.contentsOfDirectory(atPath: path("out"))) ?? [], [], "no frame written")
        // With the machine's own budget (here 22 GB free: it inflated all 8 GiB, 53 s, 8.4 GB peak
        // before the ratio applied to declared sizes too): refused from the headers all the same.
        let own = try PeakRun.run(Repo.depthlens, ["info", "ros2:\(file)"])
        own.assertOneLineError(mentioning: ["declared.mcap.zstd: zstd-compressed storage file: its frames declare 8589934592 bytes uncompressed"],
                               peakUnder: 200)
    }
}
