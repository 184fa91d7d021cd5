import Foundation
import TestSupport
import XCTest
@testable import Capture

/// ROS2Recording (rosbag2 SQLite, MCAP, every compression mode) against independent writers and
/// readers: Tests/Fixtures/ros2_reference.py writes the recordings with PyPI's `rosbags`
/// (rosbags-convert of the shared D435 bag, its Writer) and `mcap`, and dumps them with rosbags'
/// Reader, mcap's StreamReader or Python's sqlite3 (topics, and every message's log time and the
/// SHA-1 of its decompressed data).
final class ROS2RecordingTests: XCTestCase {
    private var script: String { Repo.fixture("ros2_reference.py") }

    /// Runs the reference script; a failure fails the test.
    private func reference(_ args: [String], file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let python = try PythonReference.python(importing: ["rosbags", "mcap", "lz4", "numpy"], file: file, line: line)
        let r = try TestProcess.run([python, script] + args, timeout: 600, file: file, line: line)
        guard r.status == 0 else {
            XCTFail("ros2_reference.py \(args.joined(separator: " ")) failed: \(r.output)", file: file, line: line)
            throw CocoaError(.featureUnsupported)
        }
        return r.output
    }

    /// The reference's view of one recording.
    private struct Dump {
        var storage: String
        var topics: [ROS2Topic]
        /// Per topic: (log time, SHA-1 hex) sorted.
        var messages: [String: [Pair]]
    }

    private struct Pair: Equatable, Comparable, CustomStringConvertible {
        var time: Int64
        var sha1: String
        static func < (a: Pair, b: Pair) -> Bool { a.time != b.time ? a.time < b.time : a.sha1 < b.sha1 }
        var description: String { "\(time):\(sha1.prefix(8))" }
    }

    private func dumps(_ paths: [String]) throws -> [Dump] {
        let out = try reference(["dump"] + paths)
        let lines = out.split(separator: "\n").filter { $0.hasPrefix("{") }
        XCTAssertEqual(lines.count, paths.count, out)
        return try lines.map { line in
            let json = try JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
            let topics = (json["topics"] as! [[String: Any]]).map { t in
                ROS2Topic(name: t["name"] as! String, type: t["type"] as! String,
                          serializationFormat: t["serialization_format"] as! String,
                          messageCount: t["count"] as! Int, messageDefinition: t["definition"] as? String)
            }
            var messages: [String: [Pair]] = [:]
            for m in json["messages"] as! [[Any]] {
                messages[m[0] as! String, default: []].append(Pair(time: (m[1] as! NSNumber).int64Value, sha1: m[2] as! String))
            }
            return Dump(storage: json["storage"] as! String, topics: topics, messages: messages.mapValues { $0.sorted() })
        }
    }

    /// Every variant make-bags writes opens and agrees with the reference on topics, counts, log
    /// times and the bytes of every message.
    func testEveryVariantMatchesTheIndependentReaders() throws {
        let dir = TemporaryFolder("ros2-variants")
        _ = try reference(["make-bags", dir.file("bags"), "--bag", Repo.fixture("realsense-d435-640x480.bag")])
        let variants = ["d435-db3", "d435-db3-message-zstd", "d435-db3-file-zstd", "d435-mcap", "d435-mcap-zstd",
                        "d435-mcap-file-zstd", "d435.db3", "d435.mcap", "synthetic-db3", "synthetic-split",
                        "synthetic-zstd.mcap", "synthetic-lz4.mcap", "synthetic-none.mcap", "synthetic-unchunked.mcap",
                        "synthetic-no-index.mcap", "synthetic-truncated.mcap", "synthetic-unchunked-truncated.mcap",
                        "librealsense-zstd.db3", "synthetic-lz4-messages.db3"]
        let paths = variants.map { dir.file("bags/\($0)") }
        let expected = try dumps(paths)
        for (variant, (path, want)) in zip(variants, zip(paths, expected)) {
            let rec: ROS2Recording
            do { rec = try ROS2Recording(path: path) } catch {
                XCTFail("\(variant): \(error)")
                continue
            }
            XCTAssertEqual(rec.storage, want.storage, variant)
            XCTAssertEqual(rec.topics.map(\.name), want.topics.map(\.name), variant)
            for (got, ref) in zip(rec.topics, want.topics) {
                XCTAssertEqual(got, ref, "\(variant) topic \(got.name)")
            }
            var total = 0
            for t in rec.topics {
                let refs = rec.messages(onTopic: t.name)
                XCTAssertEqual(refs.count, t.messageCount, "\(variant) \(t.name)")
                XCTAssertEqual(refs.map(\.logTime), refs.map(\.logTime).sorted(), "\(variant) \(t.name): not sorted by log time")
                var got: [Pair] = []
                for r in refs {
                    let data = try rec.data(of: r)
                    got.append(Pair(time: r.logTime, sha1: SHA1.hex(data)))
                }
                XCTAssertEqual(got.sorted(), want.messages[t.name] ?? [], "\(variant) \(t.name)")
                total += refs.count
            }
            XCTAssertEqual(total, want.messages.values.map(\.count).reduce(0, +), variant)
            // Each data(of:) result is CDR: the encapsulation header (00 01 or 00 00, options 00 00).
            if let t = rec.topics.first(where: { $0.messageCount > 0 }), let first = rec.messages(onTopic: t.name).first {
                let d = try rec.data(of: first)
                XCTAssertTrue(d.count >= 4 && d[0] == 0 && (d[1] == 0 || d[1] == 1), "\(variant): data is not CDR")
            }
            // Only a file cut short is worth a notice (an unchunked or index-less MCAP is valid).
            XCTAssertEqual(rec.notices.isEmpty, !variant.contains("truncated"), "\(variant): notices \(rec.notices)")
        }
        // The recordings' own facts, beyond agreement: the D435 bag's 2 depth and 1 color frame, the
        // synthetic pair's 6 + 6 frames, half of them in each file of the split bag.
        let d435 = try ROS2Recording(path: dir.file("bags/d435-mcap-zstd"))
        XCTAssertTrue(try MCAPReader(bytes: ROS2Bytes(mapping: dir.file("bags/d435.mcap")), name: "d435.mcap", fileIndex: 0).usedSummary,
                      "rosbags' MCAP is read from its summary")
        XCTAssertEqual(d435.topics.first { $0.name == "/device_0/sensor_0/Depth_0/image/data" }?.messageCount, 2)
        XCTAssertEqual(d435.topics.first { $0.name == "/device_0/sensor_1/Color_0/image/data" }?.type, "sensor_msgs/msg/Image")
        let split = try ROS2Recording(path: dir.file("bags/synthetic-split"))
        XCTAssertEqual(split.files.count, 2)
        let color = split.messages(onTopic: "/camera/camera/color/image_raw")
        XCTAssertEqual(color.map(\.logTime), (0..<6).map { 1_700_000_000_000_000_000 + Int64($0) * 33_333_333 })
        XCTAssertEqual(Set(color.map(\.file)), [0, 1])
        XCTAssertEqual(split.topics.first { $0.name == "/tf_static" }?.messageDefinition?.contains("TransformStamped[] transforms"), true)
        // A bare .db3 and the metadata.yaml path open the same recording.
        XCTAssertEqual(try ROS2Recording(path: dir.file("bags/d435-db3/metadata.yaml")).topics, try ROS2Recording(path: dir.file("bags/d435.db3")).topics)
    }

    /// MCAP with a summary lists its messages from the chunk and message indexes (no chunk is
    /// decompressed at opening); without one it is scanned; a file cut short keeps its whole records.
    func testMCAPIndexesAndScans() throws {
        let dir = TemporaryFolder("ros2-mcap")
        _ = try reference(["make-bags", dir.file("bags"), "--synthetic-only"])
        func reader(_ name: String) throws -> MCAPReader {
            try MCAPReader(bytes: ROS2Bytes(mapping: dir.file("bags/\(name)")), name: name, fileIndex: 0)
        }
        for name in ["synthetic-zstd.mcap", "synthetic-lz4.mcap", "synthetic-none.mcap"] {
            let r = try reader(name)
            XCTAssertTrue(r.usedSummary, name)
            XCTAssertGreaterThan(r.chunks.count, 0, name)
            XCTAssertTrue(r.notices.isEmpty, "\(name): \(r.notices)")
        }
        XCTAssertGreaterThan(try reader("synthetic-zstd.mcap").chunks.count, 2, "the synthetic MCAPs have several chunks")
        for name in ["synthetic-unchunked.mcap", "synthetic-no-index.mcap", "synthetic-truncated.mcap", "synthetic-unchunked-truncated.mcap"] {
            XCTAssertFalse(try reader(name).usedSummary, name)
        }
        let cut = try ROS2Recording(path: dir.file("bags/synthetic-truncated.mcap"))
        XCTAssertTrue(cut.notices.contains { $0.contains("cut short") }, "\(cut.notices)")
        let whole = try ROS2Recording(path: dir.file("bags/synthetic-zstd.mcap"))
        XCTAssertLessThan(cut.topics.map(\.messageCount).reduce(0, +), whole.topics.map(\.messageCount).reduce(0, +))
        // Header stamps read from a message's first bytes (in place in an uncompressed chunk) equal
        // those of the whole message, in every chunk compression.
        for name in ["synthetic-zstd.mcap", "synthetic-lz4.mcap", "synthetic-none.mcap", "synthetic-unchunked.mcap"] {
            let rec = try ROS2Recording(path: dir.file("bags/\(name)"))
            var checked = 0
            for t in rec.topics where t.type == "sensor_msgs/msg/Image" || t.type == "sensor_msgs/msg/CameraInfo" {
                for ref in rec.messages(onTopic: t.name) {
                    let whole = try ROS2Message.header(try rec.data(of: ref), file: name, topic: t.name, type: t.type).stamp.seconds
                    XCTAssertEqual(try rec.headerStamp(of: ref, topic: t.name, type: t.type), whole, "\(name) \(t.name)")
                    checked += 1
                }
            }
            XCTAssertGreaterThan(checked, 0, name)
        }
        // The same bytes from memory.
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: dir.file("bags/synthetic-lz4.mcap"))))
        let mem = try ROS2Recording(mcap: bytes, name: "mem.mcap")
        let file = try ROS2Recording(path: dir.file("bags/synthetic-lz4.mcap"))
        XCTAssertEqual(mem.topics, file.topics)
        for t in file.topics {
            for (a, b) in zip(mem.messages(onTopic: t.name), file.messages(onTopic: t.name)) {
                XCTAssertEqual(try mem.data(of: a), try file.data(of: b))
            }
        }
    }

    /// Bad input: one line naming the file and the problem, at opening or at reading, no crash.
    func testBadInputIsOneLineNamingTheFile() throws {
        let dir = TemporaryFolder("ros2-bad")
        _ = try reference(["make-bad", dir.file("bad")])
        func openFails(_ name: String, _ expected: String, file: StaticString = #filePath, line: UInt = #line) {
            let path = dir.file("bad/\(name)")
            XCTAssertThrowsError(try ROS2Recording(path: path), name, file: file, line: line) { e in
                let text = "\(e)"
                XCTAssertTrue(text.hasPrefix(path + ": "), text, file: file, line: line)
                XCTAssertTrue(text.contains(expected), "\(name): \(text)", file: file, line: line)
                XCTAssertFalse(text.contains("\n"), text, file: file, line: line)
            }
        }
        openFails("not-sqlite.db3", "not a SQLite database")
        openFails("not-rosbag.db3", "without rosbag2's topics and messages tables")
        openFails("not-mcap.mcap", "not an MCAP file")
        openFails("empty.mcap", "empty file")
        openFails("half-header.mcap", "truncated")
        XCTAssertThrowsError(try ROS2Recording(path: dir.file("bad/missing.db3"))) { XCTAssertTrue("\($0)".contains("no such file")) }
        // Corrupt chunks open (the summary indexes them) and fail when read, naming the chunk.
        for (name, kind) in [("corrupt-zstd.mcap", "zstd"), ("corrupt-lz4.mcap", "lz4")] {
            let path = dir.file("bad/\(name)")
            let rec = try ROS2Recording(path: path)
            var errors: [String] = []
            var good = 0
            for t in rec.topics {
                for r in rec.messages(onTopic: t.name) {
                    do { _ = try rec.data(of: r); good += 1 } catch { errors.append("\(error)") }
                }
            }
            XCTAssertGreaterThan(good, 0, name)
            XCTAssertFalse(errors.isEmpty, "\(name): the corrupt chunk was read without an error")
            for e in errors {
                XCTAssertTrue(e.hasPrefix(path + ": chunk at offset ") && e.contains("(\(kind))"), e)
                XCTAssertFalse(e.contains("\n"), e)
            }
        }
        // A corrupt per-message zstd frame fails that message only.
        let path = dir.file("bad/corrupt-zstd-message.db3")
        let rec = try ROS2Recording(path: path)
        var failures: [String] = []
        for t in rec.topics { for r in rec.messages(onTopic: t.name) { do { _ = try rec.data(of: r) } catch { failures.append("\(error)") } } }
        XCTAssertEqual(failures.count, 1, "\(failures)")
        XCTAssertTrue(failures.first?.hasPrefix(path + ": message at ") == true, "\(failures)")
        // A folder without metadata.yaml or storage files, and a metadata.yaml naming a missing file.
        let empty = dir.file("empty-folder")
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        XCTAssertThrowsError(try ROS2Recording(path: empty)) { XCTAssertTrue("\($0)".contains("not a rosbag2 recording"), "\($0)") }
        try "rosbag2_bagfile_information:\n  storage_identifier: sqlite3\n  relative_file_paths:\n    - gone_0.db3\n"
            .write(toFile: empty + "/metadata.yaml", atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try ROS2Recording(path: empty)) { XCTAssertTrue("\($0)".contains("'gone_0.db3', which is missing"), "\($0)") }
    }

    /// Truncating an MCAP at every length from the magic to the whole file, and flipping bytes,
    /// never crashes: it opens (messages up to the last whole record) or fails with one line.
    func testMCAPCutAnywhereOrDamagedNeverCrashes() throws {
        let dir = TemporaryFolder("ros2-cut")
        _ = try reference(["make-bags", dir.file("bags"), "--synthetic-only"])
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: dir.file("bags/synthetic-lz4.mcap"))))
        func exercise(_ b: [UInt8]) {
            guard let rec = try? ROS2Recording(mcap: b, name: "x.mcap") else { return }
            for t in rec.topics { for r in rec.messages(onTopic: t.name) { _ = try? rec.data(of: r) } }
        }
        var n = 0
        for cut in stride(from: 0, through: bytes.count, by: 97) { exercise(Array(bytes[..<cut])); n += 1 }
        var rng = SeededRandom(seed: 24)
        for _ in 0..<200 {
            var b = bytes
            for _ in 0..<4 { b[Int.random(in: 8..<b.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng) }
            exercise(b)
        }
        XCTAssertGreaterThan(n, 100)
    }

    /// Inputs the fuzzer found (scripts/fuzz mcap): every prefix of the magic, and the first five
    /// bytes of it (read one byte past them for the version).
    func testMCAPFuzzFindings() {
        let magic: [UInt8] = [0x89, 0x4D, 0x43, 0x41, 0x50, 0x30, 0x0D, 0x0A]
        for n in 0...magic.count {
            XCTAssertThrowsError(try ROS2Recording(mcap: Array(magic.prefix(n)), name: "x.mcap")) { e in
                XCTAssertTrue("\(e)".hasPrefix("x.mcap: "), "\(e)")
            }
        }
        XCTAssertThrowsError(try ROS2Recording(mcap: [0x89, 0x4D, 0x43, 0x41, 0x50, 0x31, 0x0D, 0x0A, 1], name: "v1.mcap")) { e in
            XCTAssertTrue("\(e)".contains("major version '1' is not supported"), "\(e)")
        }
    }

    /// rosbag2's metadata.yaml as ros2 bag (yaml-cpp) writes it, and as rosbags (ruamel) does.
    func testMetadataYAML() throws {
        let yamlCpp = """
        rosbag2_bagfile_information:
          version: 5
          storage_identifier: sqlite3
          duration:
            nanoseconds: 2018000000
          relative_file_paths:
            - rosbag2_2024_01_31-14_25_01_0.db3
            - "rosbag2_2024_01_31-14_25_01_1.db3"
          topics_with_message_count:
            - topic_metadata:
                name: /camera/camera/color/image_raw
                relative_file_paths: wrong
              message_count: 60
          compression_format: zstd
          compression_mode: FILE
        """
        let m = try Rosbag2Metadata.parse(yamlCpp, path: "metadata.yaml")
        XCTAssertEqual(m, Rosbag2Metadata(storageIdentifier: "sqlite3",
                                          relativeFilePaths: ["rosbag2_2024_01_31-14_25_01_0.db3", "rosbag2_2024_01_31-14_25_01_1.db3"],
                                          compressionFormat: "zstd", compressionMode: "FILE"))
        let ruamel = "rosbag2_bagfile_information:\n  compression_format: ''\n  compression_mode: ''\n  relative_file_paths:\n  - a.mcap\n"
            + "  storage_identifier: mcap\n  version: 9\n"
        XCTAssertEqual(try Rosbag2Metadata.parse(ruamel, path: "m"),
                       Rosbag2Metadata(storageIdentifier: "mcap", relativeFilePaths: ["a.mcap"], compressionFormat: "", compressionMode: ""))
        XCTAssertEqual(try Rosbag2Metadata.parse("rosbag2_bagfile_information:\n  relative_file_paths: [a.db3, 'b.db3']\n", path: "m").relativeFilePaths,
                       ["a.db3", "b.db3"])
        XCTAssertThrowsError(try Rosbag2Metadata.parse("something: else\n", path: "m"))
        XCTAssertThrowsError(try Rosbag2Metadata.parse("rosbag2_bagfile_information:\n  relative_file_paths:\n  - ../etc/passwd\n", path: "m"))
    }
}

/// SHA-1 (FIPS 180-4), to compare message bytes with the reference's hashes.
enum SHA1 {
    static func hex(_ message: [UInt8]) -> String {
        var h: [UInt32] = [0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0]
        var m = message
        let bitLength = UInt64(message.count) * 8
        m.append(0x80)
        while m.count % 64 != 56 { m.append(0) }
        for i in (0..<8).reversed() { m.append(UInt8(truncatingIfNeeded: bitLength >> (UInt64(i) * 8))) }
        var w = [UInt32](repeating: 0, count: 80)
        for block in stride(from: 0, to: m.count, by: 64) {
            for i in 0..<16 {
                w[i] = UInt32(m[block + 4 * i]) << 24 | UInt32(m[block + 4 * i + 1]) << 16
                    | UInt32(m[block + 4 * i + 2]) << 8 | UInt32(m[block + 4 * i + 3])
            }
            for i in 16..<80 {
                let x = w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16]
                w[i] = x << 1 | x >> 31
            }
            var (a, b, c, d, e) = (h[0], h[1], h[2], h[3], h[4])
            for i in 0..<80 {
                let (f, k): (UInt32, UInt32)
                switch i {
                case 0..<20: (f, k) = ((b & c) | (~b & d), 0x5A827999)
                case 20..<40: (f, k) = (b ^ c ^ d, 0x6ED9EBA1)
                case 40..<60: (f, k) = ((b & c) | (b & d) | (c & d), 0x8F1BBCDC)
                default: (f, k) = (b ^ c ^ d, 0xCA62C1D6)
                }
                let t = (a << 5 | a >> 27) &+ f &+ e &+ k &+ w[i]
                (e, d, c, b, a) = (d, c, b << 30 | b >> 2, a, t)
            }
            h[0] &+= a; h[1] &+= b; h[2] &+= c; h[3] &+= d; h[4] &+= e
        }
        return h.map { String(format: "%08x", $0) }.joined()
    }
}
