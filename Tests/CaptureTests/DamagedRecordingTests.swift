import CPlatform
import Foundation
import TestSupport
import XCTest
@testable import Capture

/// Issue 33, "damage is said": MCAP recordings written by PyPI's `mcap` (Tests/Fixtures/damaged_ros2.py,
/// through ros2_reference.py's realsense2_camera messages: 10 color and 10 depth frames in seven
/// 16 KiB zstd chunks), then cut or corrupted here. The readable messages open; what is missing is
/// one line each in `damage`.
final class DamagedRecordingTests: XCTestCase {
    private var dir: URL!

    override func setUpWithError() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("depthlens-damaged-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: dir)
    }

    /// Writes the 10-frame MCAP; its bytes and the file offsets of its Chunk records.
    private func tenFrames() throws -> (bytes: [UInt8], chunks: [Int]) {
        let python = try PythonReference.python(importing: ["mcap", "rosbags", "numpy", "zstandard"])
        let out = dir.appendingPathComponent("ten.mcap").path
        let r = try TestProcess.run([python, Repo.fixture("damaged_ros2.py"), "mcap", out])
        XCTAssertEqual(r.status, 0, r.output)
        let line = r.output.split(separator: "\n").last { $0.hasPrefix("{") } ?? ""
        let json = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        let chunks = (json?["chunks"] as? [Int]) ?? []
        XCTAssertGreaterThanOrEqual(chunks.count, 4, r.output)
        return (Array(try Data(contentsOf: URL(fileURLWithPath: out))), chunks)
    }

    private static let color = "/camera/camera/color/image_raw"
    private static let depth = "/camera/camera/depth/image_rect_raw"

    func testSoundRecordingHasNoDamage() throws {
        let (bytes, _) = try tenFrames()
        let rec = try ROS2Recording(mcap: bytes, name: "ten.mcap")
        XCTAssertFalse(rec.checkChunks())
        XCTAssertEqual(rec.damage, [])
        XCTAssertEqual(rec.messages(onTopic: Self.color).count, 10)
        XCTAssertEqual(rec.messages(onTopic: Self.depth).count, 10)
    }

    /// Cut in half: no summary, scanned; the whole records before the cut are read, and the cut is one line.
    func testCutInHalfSaysWhereItWasCut() throws {
        let (bytes, _) = try tenFrames()
        let half = Array(bytes.prefix(bytes.count / 2))
        let rec = try ROS2Recording(mcap: half, name: "half.mcap")
        XCTAssertEqual(rec.damage.count, 1, "\(rec.damage)")
        XCTAssertTrue(rec.damage[0].hasPrefix("recording cut short at byte \(half.count) of ≥ "), rec.damage[0])
        XCTAssertEqual(rec.messages(onTopic: Self.color).count, 5)
        XCTAssertEqual(rec.messages(onTopic: Self.depth).count, 4)
        for t in [Self.color, Self.depth] {
            for ref in rec.messages(onTopic: t) { XCTAssertNoThrow(try rec.data(of: ref)) }
        }
        XCTAssertFalse(rec.checkChunks(), "a scanned file was read whole at opening")
    }

    /// A scanned file whose second chunk names a compression no reader knows: that chunk is one
    /// line, the chunks around it are read.
    func testUnknownChunkCompressionIsDamageNotFailure() throws {
        let (bytes, chunks) = try tenFrames()
        var bad = Array(bytes.prefix(bytes.count / 2))
        XCTAssertEqual(Array(bad[(chunks[1] + 41)..<(chunks[1] + 45)]), Array("zstd".utf8))
        for i in 0..<4 { bad[chunks[1] + 41 + i] = UInt8(ascii: "z") }
        let rec = try ROS2Recording(mcap: bad, name: "odd.mcap")
        XCTAssertEqual(rec.damage.count, 2, "\(rec.damage)")
        XCTAssertTrue(rec.damage[0].hasPrefix("recording cut short at byte "), "\(rec.damage)")
        XCTAssertEqual(rec.damage[1], "chunk at offset \(chunks[1]) uses compression 'zzzz' (zstd, lz4 and none are supported)")
        XCTAssertGreaterThan(rec.messages(onTopic: Self.color).count, 0)
        XCTAssertLessThan(rec.messages(onTopic: Self.color).count, 5)
    }

    /// 4 KiB zeroed inside the third zstd chunk: the summary opens the file without decompressing;
    /// `checkChunks` finds the chunk, says it with its message count, and leaves its messages out.
    func testCorruptChunkIsFoundAndLeftOut() throws {
        let (bytes, chunks) = try tenFrames()
        var bad = bytes
        let at = chunks[2] + 200
        for i in at..<(at + 4096) { bad[i] = 0 }
        let rec = try ROS2Recording(mcap: bad, name: "zeroed.mcap")
        let before = rec.messages(onTopic: Self.color).count + rec.messages(onTopic: Self.depth).count
        XCTAssertEqual(before, 20, "the summary indexes every message")
        XCTAssertEqual(rec.damage, [], "nothing is decompressed at opening")
        XCTAssertTrue(rec.checkChunks())
        XCTAssertEqual(rec.damage.count, 1, "\(rec.damage)")
        let line = rec.damage.first ?? ""
        XCTAssertTrue(line.hasPrefix("chunk at offset \(chunks[2]) (zstd): "), line)
        let left = Int(line.split(separator: " ").reversed().dropFirst(3).first ?? "") ?? 0   // "…; its N messages left out"
        XCTAssertTrue(line.hasSuffix("messages left out") && left > 0, line)
        let after = rec.messages(onTopic: Self.color).count + rec.messages(onTopic: Self.depth).count
        XCTAssertEqual(after, 20 - left)
        XCTAssertEqual(rec.topics.first { $0.name == Self.color }?.messageCount, rec.messages(onTopic: Self.color).count)
        for t in [Self.color, Self.depth] {
            for ref in rec.messages(onTopic: t) { XCTAssertNoThrow(try rec.data(of: ref)) }
        }
    }

    /// The source opens the readable frames and says the damage in its warnings; checking the
    /// whole recording (what info and convert ask) gives the readable frame count.
    func testSourceSaysDamageAsWarnings() throws {
        let (bytes, chunks) = try tenFrames()
        var bad = bytes
        for i in (chunks[2] + 200)..<(chunks[2] + 4296) { bad[i] = 0 }
        let path = dir.appendingPathComponent("zeroed.mcap").path
        try Data(bad).write(to: URL(fileURLWithPath: path))
        let source = ROS2Source(path: path)
        source.checksWholeRecording = true
        try source.start()
        defer { source.stop() }
        XCTAssertEqual(source.damage.count, 1)
        XCTAssertTrue(source.warnings.contains(source.damage[0]), "\(source.warnings)")
        let frames = source.playback?.frameCount ?? 0
        XCTAssertLessThan(frames, 10)
        XCTAssertGreaterThan(frames, 0)
        let streams = try source.streams()
        XCTAssertEqual(streams.map(\.timestamps.count).reduce(0, +), 20 - (Int(source.damage[0].split(separator: " ").reversed().dropFirst(3).first ?? "") ?? 0))
    }

    /// A whole-file zstd stream whose frames declare more than the limit is refused before decoding;
    /// one whose data runs past what its frames declare is refused as it is decoded.
    func testWholeFileZstdIsBoundedByItsDeclarationAndTheLimit() throws {
        let plain = [UInt8](MCAPReader.magic) + [UInt8](repeating: 0, count: 2 << 20)
        var out: UnsafeMutablePointer<UInt8>?
        var n = 0
        XCTAssertEqual(plain.withUnsafeBufferPointer { dl_zstd_compress($0.baseAddress, $0.count, 3, &out, &n) }, 0)
        let compressed = Array(UnsafeBufferPointer(start: out, count: n))
        dl_decompress_free(out)
        let bytes = ROS2Bytes(copying: compressed)
        XCTAssertThrowsError(try ROS2Compression.file(bytes, name: "big.mcap.zstd", format: "zstd", limit: 1 << 20)) { e in
            XCTAssertEqual("\(e)", "big.mcap.zstd: zstd-compressed storage file: its frames declare \(plain.count) bytes uncompressed, "
                           + "more than the memory available (1 MiB; DEPTHLENS_MEMORY_AVAILABLE sets it)")
        }
        let inflated = try ROS2Compression.file(bytes, name: "big.mcap.zstd", format: "zstd", limit: 4 << 20)
        XCTAssertEqual(Array(inflated.raw), plain)
        var declared: UInt64 = 0
        XCTAssertEqual(compressed.withUnsafeBufferPointer { dl_zstd_declared_size($0.baseAddress, $0.count, &declared) }, 1)
        XCTAssertEqual(declared, UInt64(plain.count))
    }
}
