import XCTest
import TestSupport
import Foundation
@testable import Capture
import CPlatform

/// The ROS bag container and message decoding against python3-rosbag on the shared D435 bag,
/// its rosbag rewrites (bz2, none) and damaged copies.
final class RosBagTests: XCTestCase {
    /// Every message (topic, receive time) and connection python3-rosbag lists, and nothing else.
    func testIndexListsEveryMessageAndConnectionAsRosbagDoes() throws {
        let ref = try BagReference(bag: fixtureBag, test: self)
        let bag = try RosBag(path: fixtureBag)
        XCTAssertEqual(bag.messages.count, ref.messages.count)
        XCTAssertEqual(bag.connections.map(\.id), ref.connections.map { UInt32(int($0["id"])) })
        XCTAssertEqual(bag.connections.map(\.topic), ref.connections.map { $0["topic"] as! String })
        XCTAssertEqual(bag.connections.map(\.type), ref.connections.map { $0["type"] as! String })
        XCTAssertEqual(bag.connections.map(\.md5sum), ref.connections.map { $0["md5sum"] as! String })
        // Messages in time order (python sorts the same way; equal times compared as sets).
        let ours = bag.messages.map { "\($0.time.nanoseconds) \(bag.connection($0.connection)!.topic)" }
        let theirs = ref.messages.map { "\(uint64($0["time_ns"])) \($0["topic"] as! String)" }
        XCTAssertEqual(ours.sorted(), theirs.sorted())
        XCTAssertEqual(bag.messages.map(\.time.nanoseconds), ref.messages.map { uint64($0["time_ns"]) })
        XCTAssertEqual(Set(bag.chunks.map(\.compression)), ["lz4"])
        XCTAssertEqual(ref.json["compression"] as? String, "lz4")
    }

    /// Every sensor_msgs/Image: header, fields and every data byte equal python3-rosbag's.
    func testImagesDecodeToRosbagsBytes() throws {
        for variant in ["lz4", "bz2", "none"] {
            let dir = try makeTemporaryDirectory(self)
            let path = variant == "lz4" ? fixtureBag : dir + "/\(variant).bag"
            if variant != "lz4" { try runReference(["rewrite", fixtureBag, path, variant]) }
            let ref = try BagReference(bag: path, test: self)
            let bag = try RosBag(path: path)
            XCTAssertEqual(Set(bag.chunks.map(\.compression)), [variant])
            let images = bag.messages.filter { bag.connection($0.connection)!.type == "sensor_msgs/Image" }
            XCTAssertEqual(images.count, ref.images.count)
            XCTAssertEqual(images.count, 3)
            for (n, (m, r)) in zip(images, ref.images).enumerated() {
                let topic = r["topic"] as! String
                XCTAssertEqual(bag.connection(m.connection)!.topic, topic)
                XCTAssertEqual(m.time.nanoseconds, uint64(r["time_ns"]))
                let image = try ROSMessage.image(try bag.data(of: m), bag: path, topic: topic)
                XCTAssertEqual(image.header.seq, UInt32(int(r["seq"])))
                XCTAssertEqual(image.header.stamp, RosBag.Time(sec: UInt32(int(r["stamp_sec"])), nsec: UInt32(int(r["stamp_nsec"]))))
                XCTAssertEqual(image.header.frameID, r["frame_id"] as? String)
                XCTAssertEqual(image.width, int(r["width"]))
                XCTAssertEqual(image.height, int(r["height"]))
                XCTAssertEqual(image.step, int(r["step"]))
                XCTAssertEqual(image.encoding, r["encoding"] as? String)
                XCTAssertEqual(image.isBigEndian, int(r["is_bigendian"]) != 0)
                XCTAssertTrue(Array(image.data) == (try ref.imageData(n)), "\(variant) image \(n) data differs from rosbag's")
            }
        }
    }

    /// CameraInfo (K, D, model), Transform, KeyValue and Float32 as python3-rosbag decodes them.
    func testCameraInfoTransformDeviceInfoAndOptionsMatchRosbag() throws {
        let ref = try BagReference(bag: fixtureBag, test: self)
        let bag = try RosBag(path: fixtureBag)
        XCTAssertEqual(ref.cameraInfo.count, 2)
        for (topic, r) in ref.cameraInfo {
            let info = try ROSMessage.cameraInfo(try bag.data(of: bag.messages(onTopic: topic)[0]), bag: fixtureBag, topic: topic)
            XCTAssertEqual(info.K, doubles(r["K"]), topic)
            XCTAssertEqual(info.D, doubles(r["D"]), topic)
            XCTAssertEqual(info.distortionModel, r["distortion_model"] as? String)
            XCTAssertEqual(info.width, int(r["width"]))
            XCTAssertEqual(info.height, int(r["height"]))
        }
        XCTAssertEqual(ref.tf.count, 2)
        for (topic, r) in ref.tf {
            let t = try ROSMessage.transform(try bag.data(of: bag.messages(onTopic: topic)[0]), bag: fixtureBag, topic: topic)
            let tr = doubles(r["translation"]), q = doubles(r["rotation"])
            XCTAssertEqual([t.translation.x, t.translation.y, t.translation.z], tr, topic)
            XCTAssertEqual([t.rotation.x, t.rotation.y, t.rotation.z, t.rotation.w], q, topic)
        }
        var info: [String: String] = [:]
        for m in bag.messages(onTopic: "/device_0/info") {
            let kv = try ROSMessage.keyValue(try bag.data(of: m), bag: fixtureBag, topic: "/device_0/info")
            info[kv.key] = kv.value
        }
        XCTAssertEqual(info, ref.deviceInfo)
        XCTAssertEqual(info["Name"], "Intel RealSense D435")
        XCTAssertFalse(ref.options.isEmpty)
        for (topic, value) in ref.options {
            let v = try ROSMessage.float32(try bag.data(of: bag.messages(onTopic: topic)[0]), bag: fixtureBag, topic: topic)
            XCTAssertEqual(Double(v), value, topic)
        }
    }

    /// The in-memory reader (the fuzz target's) reads what the file reader reads.
    func testInMemoryBagReadsTheSame() throws {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: fixtureBag)))
        let a = try RosBag(path: fixtureBag), b = try RosBag(bytes: bytes, name: "memory")
        XCTAssertEqual(a.messages, b.messages)
        XCTAssertEqual(a.connections, b.connections)
        for m in a.messages.suffix(5) { XCTAssertEqual(try a.data(of: m), try b.data(of: m)) }
    }

    /// A file cut anywhere is one line naming the file, never a crash.
    func testTruncatedBagIsOneLineError() throws {
        let dir = try makeTemporaryDirectory(self)
        let size = try FileManager.default.attributesOfItem(atPath: fixtureBag)[.size] as! Int
        for cut in [0, 5, 13, 20, 4096, 300_000, size / 2, size - 5000, size - 100, size - 1] {
            let path = try modifiedCopy(fixtureBag, in: dir, name: "cut-\(cut).bag") { $0.removeLast($0.count - cut) }
            XCTAssertThrowsError(try RosBag(path: path), "cut at \(cut)") { error in
                let text = "\(error)"
                XCTAssertTrue(text.hasPrefix(path + ": "), text)
                XCTAssertFalse(text.contains("\n"), text)
            }
        }
    }

    /// A damaged LZ4 frame in a chunk is an error when that chunk is read; the index still opens.
    func testCorruptLZ4ChunkIsOneLineError() throws {
        let dir = try makeTemporaryDirectory(self)
        let bag = try RosBag(path: fixtureBag)
        let image = bag.messages.first { bag.connection($0.connection)!.type == "sensor_msgs/Image" }!
        let chunk = bag.chunks[image.chunk]
        let path = try modifiedCopy(fixtureBag, in: dir, name: "lz4.bag") { bytes in
            // The frame's magic number (04 22 4D 18) is the first 4 bytes of the chunk data.
            let at = Int(chunk.dataOffset)
            XCTAssertEqual(Array(bytes[at..<(at + 4)]), [0x04, 0x22, 0x4D, 0x18])
            bytes[at + 1] ^= 0xFF
        }
        let damaged = try RosBag(path: path)
        XCTAssertThrowsError(try damaged.data(of: image)) { error in
            XCTAssertEqual("\(error)", "\(path): chunk \(image.chunk) (lz4 at offset \(chunk.position)): corrupt data")
        }
        // A block size beyond the frame's end: the decoder runs out of input.
        let path2 = try modifiedCopy(fixtureBag, in: dir, name: "lz4-short.bag") { bytes in
            let at = Int(chunk.dataOffset) + chunk.dataLength - 4096
            for i in at..<(at + 4096) { bytes[i] = 0 }
        }
        XCTAssertThrowsError(try RosBag(path: path2).data(of: image)) { error in
            XCTAssertTrue("\(error)".hasPrefix("\(path2): chunk \(image.chunk) (lz4"), "\(error)")
        }
    }

    /// A bz2 chunk with a flipped byte fails its block CRC.
    func testCorruptBZ2ChunkIsOneLineError() throws {
        let dir = try makeTemporaryDirectory(self)
        let bz2 = dir + "/bz2.bag"
        try runReference(["rewrite", fixtureBag, bz2, "bz2"])
        let bag = try RosBag(path: bz2)
        let image = bag.messages.first { bag.connection($0.connection)!.type == "sensor_msgs/Image" }!
        let chunk = bag.chunks[image.chunk]
        let path = try modifiedCopy(bz2, in: dir, name: "bad.bag") { $0[Int(chunk.dataOffset) + chunk.dataLength / 2] ^= 0x55 }
        XCTAssertThrowsError(try RosBag(path: path).data(of: image)) { error in
            XCTAssertEqual("\(error)", "\(path): chunk \(image.chunk) (bz2 at offset \(chunk.position)): corrupt data")
        }
    }

    /// A chunk compressed with something else is refused when the bag is opened.
    func testUnknownCompressionIsOneLineError() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = try modifiedCopy(fixtureBag, in: dir, name: "zz4.bag") { bytes in
            let at = offsets(of: "compression=lz4", in: bytes)
            XCTAssertFalse(at.isEmpty)
            for i in at { bytes[i + 12] = UInt8(ascii: "z"); bytes[i + 13] = UInt8(ascii: "z") }
        }
        XCTAssertThrowsError(try RosBag(path: path)) { error in
            XCTAssertEqual("\(error)", "\(path): chunk 0 uses unknown compression 'zz4' (none, lz4 and bz2 are supported)")
        }
    }

    /// Not a bag at all, an empty file, another version.
    func testOtherFilesAreRefused() throws {
        let dir = try makeTemporaryDirectory(self)
        let empty = try modifiedCopy(fixtureBag, in: dir, name: "empty.bag") { $0 = [] }
        XCTAssertThrowsError(try RosBag(path: empty)) { XCTAssertEqual("\($0)", "\(empty): empty file, not a ROS bag") }
        let text = try modifiedCopy(fixtureBag, in: dir, name: "text.bag") { $0 = Array("hello, this is not a bag\n".utf8) }
        XCTAssertThrowsError(try RosBag(path: text)) { XCTAssertEqual("\($0)", "\(text): not a ROS bag (no '#ROSBAG V2.0' signature)") }
        let v12 = try modifiedCopy(fixtureBag, in: dir, name: "v12.bag") { $0[9] = UInt8(ascii: "1"); $0[11] = UInt8(ascii: "2") }
        XCTAssertThrowsError(try RosBag(path: v12)) { XCTAssertEqual("\($0)", "\(v12): ROS bag version 1.2 is not supported (only 2.0)") }
        XCTAssertThrowsError(try RosBag(path: dir + "/missing.bag")) { XCTAssertTrue("\($0)".contains("cannot open")) }
        // index_pos 0: a recording that was never closed (rosbag writes the index last).
        let open = try modifiedCopy(fixtureBag, in: dir, name: "open.bag") { bytes in
            let at = offsets(of: "index_pos=", in: Array(bytes.prefix(4096)))[0] + 10
            for i in at..<(at + 8) { bytes[i] = 0 }
        }
        XCTAssertThrowsError(try RosBag(path: open)) {
            XCTAssertEqual("\($0)", "\(open): bag is not indexed (recording not closed?): run 'rosbag reindex' on it")
        }
        // A chunk header claiming 4 GiB uncompressed is refused before anything is allocated.
        let huge = try modifiedCopy(fixtureBag, in: dir, name: "huge.bag") { bytes in
            let at = offsets(of: "size=", in: bytes)[0] + 5
            for i in at..<(at + 4) { bytes[i] = 0xFF }
        }
        XCTAssertThrowsError(try RosBag(path: huge)) {
            XCTAssertEqual("\($0)", "\(huge): chunk 0 claims 4294967295 uncompressed bytes, more than 1073741824")
        }
    }

    /// A message whose image data says more bytes than the message holds.
    func testMessageShorterThanItsFieldsSay() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir + "/short.bag"
        try runReference(["short-image", fixtureBag, path])
        let bag = try RosBag(path: path)
        let topic = "/device_0/sensor_0/Depth_0/image/data"
        let first = bag.messages(onTopic: topic)[0]
        // The data's bytes start at offset 44: seq 4, stamp 8, frame_id "0" 5, height 4, width 4,
        // encoding "mono16" 10, is_bigendian 1, step 4, the length (614400 + 16) 4; 614400 follow.
        XCTAssertThrowsError(try ROSMessage.image(try bag.data(of: first), bag: path, topic: topic)) { error in
            XCTAssertEqual("\(error)", "\(path): sensor_msgs/Image message on \(topic) is shorter than its contents say "
                           + "(needs 614416 more bytes at offset 44, 614400 left)")
        }
        // The second depth image was written normally.
        XCTAssertNoThrow(try ROSMessage.image(try bag.data(of: bag.messages(onTopic: topic)[1]), bag: path, topic: topic))
    }

    /// The decompressors alone: exact sizes, too long, too short, garbage.
    func testDecompressorsCheckTheRecordedSize() throws {
        let bag = try RosBag(path: fixtureBag)
        let chunk = bag.chunks[0]
        let raw = [UInt8](try Data(contentsOf: URL(fileURLWithPath: fixtureBag)))[Int(chunk.dataOffset)..<(Int(chunk.dataOffset) + chunk.dataLength)]
        func lz4(_ input: [UInt8], _ size: Int) -> Int32 {
            var out = [UInt8](repeating: 0, count: max(size, 1))
            return input.withUnsafeBufferPointer { i in out.withUnsafeMutableBufferPointer { o in
                dl_lz4_decompress_frame(i.baseAddress!, i.count, o.baseAddress!, size)
            } }
        }
        XCTAssertEqual(lz4(Array(raw), chunk.size), 0)
        XCTAssertEqual(lz4(Array(raw), chunk.size - 1), Int32(DL_DECOMPRESS_TOO_LONG))
        XCTAssertEqual(lz4(Array(raw), chunk.size + 1), Int32(DL_DECOMPRESS_TOO_SHORT))
        XCTAssertEqual(lz4(Array(raw.prefix(raw.count / 2)), chunk.size), Int32(DL_DECOMPRESS_TOO_SHORT))
        XCTAssertEqual(lz4([1, 2, 3, 4, 5, 6, 7, 8], 100), Int32(DL_DECOMPRESS_CORRUPT))
        var bad: Int32 = 0
        let junk: [UInt8] = Array("BZh91AY&SYjunkjunkjunk".utf8)
        var out = [UInt8](repeating: 0, count: 64)
        junk.withUnsafeBufferPointer { i in out.withUnsafeMutableBufferPointer { o in bad = dl_bz2_decompress(i.baseAddress!, i.count, o.baseAddress!, 64) } }
        XCTAssertNotEqual(bad, 0)
    }

    /// Deterministic mutations of small none/lz4/bz2 bags (the fuzz seeds): byte flips, runs of
    /// 0xFF and cuts must give errors or frames, never a trap (the fuzz target, in the test suite).
    func testMutatedSmallBagsNeverTrap() throws {
        let dir = try makeTemporaryDirectory(self)
        try runReference(["seeds", fixtureBag, dir])
        var rng = SeededRandom(seed: 0x5EED)
        var opened = 0, failed = 0
        for name in ["small-none.bag", "small-lz4.bag", "small-bz2.bag"] {
            let original = [UInt8](try Data(contentsOf: URL(fileURLWithPath: dir + "/" + name)))
            // The unmutated seed plays: two 8x6 depth frames with color.
            let clean = BagSource(path: dir + "/" + name)
            try clean.start()
            XCTAssertEqual(clean.recording.frameCount, 2)
            XCTAssertEqual(try clean.nextFrame(now: 0)?.color.width, 8)
            for i in 0..<150 {
                var bytes = original
                switch i % 3 {
                case 0: for _ in 0..<(1 + rng.next() % 4) { bytes[Int(rng.next() % UInt64(bytes.count))] ^= UInt8(truncatingIfNeeded: rng.next() | 1) }
                case 1:
                    let at = Int(rng.next() % UInt64(bytes.count - 8))
                    for j in at..<(at + 4) { bytes[j] = 0xFF }
                default: bytes.removeLast(Int(rng.next() % UInt64(bytes.count)))
                }
                if let bag = try? RosBag(bytes: bytes, name: "m") {
                    for m in bag.messages {
                        guard let c = bag.connection(m.connection), let d = try? bag.data(of: m) else { continue }
                        if c.type == "sensor_msgs/Image" { _ = try? ROSMessage.image(d, bag: "m", topic: c.topic) }
                        if c.type == "sensor_msgs/CameraInfo" { _ = try? ROSMessage.cameraInfo(d, bag: "m", topic: c.topic) }
                    }
                }
                let path = dir + "/mutated.bag"
                try Data(bytes).write(to: URL(fileURLWithPath: path))
                let source = BagSource(path: path)
                do {
                    try source.start()
                    opened += 1
                    source.recording.pause()
                    for f in 0..<(source.recording.frameCount ?? 0) {
                        try source.recording.seek(toFrame: f)
                        _ = try? source.nextFrame(now: Double(f))
                    }
                } catch {
                    failed += 1
                    XCTAssertFalse("\(error)".contains("\n"))
                    XCTAssertTrue("\(error)".hasPrefix(path + ": "), "\(error)")
                }
            }
        }
        XCTAssertGreaterThan(opened, 0)
        XCTAssertGreaterThan(failed, 0)
    }
}

