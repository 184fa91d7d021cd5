import CDepthKit
import TestSupport
@testable import Capture
import DepthKit
import Foundation
import XCTest

/// The `dds:` receive path against a hostile peer, without a network (`DDSSource.receive`, the
/// fuzzer's entry): compressed images whose header claims more than the size limit are dropped
/// before decoding and counted apart, raw ones too; the state a peer can grow (writers, TF frames,
/// notices) stays under its caps; a peer's numbers (sequence numbers, stamps) never trap.
final class DDSReceiverBoundsTests: XCTestCase {
    static let compressedTopic = "/ns/color/image_raw/compressed"
    let compressed = DDSTopics(target: .topics(color: DDSReceiverBoundsTests.compressedTopic, depth: nil))

    func compressedSample(_ data: [UInt8], stamp: Double, format: String = "jpeg", topic: String = compressedTopic) -> DDSSource.Sample {
        let header = ROS2Message.Header(stamp: ROS2Message.Time(seconds: stamp), frameID: "cam")
        return DDSSource.Sample(topic: topic, bytes: ROS2Message.encodeCompressedImage(header: header, format: format, data: data))
    }

    func rawSample(_ topic: String, width: Int, height: Int, encoding: String = "mono8", stamp: Double) -> DDSSource.Sample {
        let header = ROS2Message.Header(stamp: ROS2Message.Time(seconds: stamp), frameID: "cam")
        let bpp = encoding == "rgb8" ? 3 : 1
        let bytes = ROS2Message.encodeImage(header: header, width: width, height: height, encoding: encoding, step: width * bpp) { out in
            for i in 0..<out.count { out[i] = UInt8(i % 200) }
        }
        return DDSSource.Sample(topic: topic, bytes: bytes)
    }

    // MARK: The header, before decoding

    func testImageHeaderReadsJPEGAndPNGSizesWithoutDecoding() throws {
        let (good, bomb) = try JPEGBomb.make()
        XCTAssertEqual(try ImageHeader.read(good, name: "good"), ImageHeader.Info(kind: .jpeg, width: 64, height: 48))
        XCTAssertEqual(try ImageHeader.read(bomb, name: "bomb"), ImageHeader.Info(kind: .jpeg, width: 16384, height: 16384))
        // A PNG's IHDR: 70000 x 3.
        var png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]
        png += [0, 1, 0x11, 0x70, 0, 0, 0, 3, 8, 6, 0, 0, 0]
        XCTAssertEqual(try ImageHeader.read(png, name: "png"), ImageHeader.Info(kind: .png, width: 70000, height: 3))
        // Cut short anywhere before the frame header, or not an image: an error naming it, never a trap.
        let sof = try XCTUnwrap((2..<(good.count - 1)).first { good[$0] == 0xFF && good[$0 + 1] == 0xC0 })
        for n in 0..<(sof + 9) {
            XCTAssertThrowsError(try ImageHeader.read(Array(good.prefix(n)), name: "cut")) { XCTAssertTrue("\($0)".contains("cut"), "\($0)") }
        }
        for n in 0..<24 { XCTAssertThrowsError(try ImageHeader.read(Array(png.prefix(n)), name: "png")) }
        XCTAssertThrowsError(try ImageHeader.read([0xFF, 0xD8, 0xFF, 0xDA, 0, 2], name: "sos first"))
        XCTAssertThrowsError(try ImageHeader.read([0xFF, 0xD8, 0xFF, 0xE0, 0, 0], name: "length 0"))
        XCTAssertThrowsError(try ImageHeader.read(Array("GIF89a....".utf8), name: "gif"))
        var rng = SeededRandom(seed: 33)
        for _ in 0..<2000 {
            var b = good
            for _ in 0..<4 { b[Int(rng.next() % UInt64(min(b.count, 700)))] = UInt8(truncatingIfNeeded: rng.next()) }
            _ = try? ImageHeader.read(Array(b.prefix(Int(rng.next() % UInt64(b.count + 1)))), name: "fuzz")
        }
    }

    func testLimitParsesAndDDSSpecTakesMaxImage() throws {
        XCTAssertEqual(try DDSImageLimit.parse("1920x1080"), DDSImageLimit(width: 1920, height: 1080))
        XCTAssertEqual(try DDSImageLimit.parse("64X48"), DDSImageLimit(width: 64, height: 48))
        for bad in ["", "x", "0x10", "10x0", "16385x10", "-1x5", "10x", "axb", "10x10x10", "99999999999999999999x1"] {
            XCTAssertThrowsError(try DDSImageLimit.parse(bad), bad)
        }
        let t = try DDSTopics.parse("/cam/color/image_raw/compressed,max-image=640x480,domain=3")
        XCTAssertEqual(t.maxImage, DDSImageLimit(width: 640, height: 480))
        XCTAssertEqual(t.description, "dds:/cam/color/image_raw/compressed,domain=3,max-image=640x480")
        XCTAssertEqual(try DDSTopics.parse(String(t.description.dropFirst(4))), t)
        XCTAssertEqual(try DDSTopics.parse("/cam,max-image=100x100").maxImage, DDSImageLimit(width: 100, height: 100))
        XCTAssertThrowsError(try DDSTopics.parse("/cam,max-image=1x1,max-image=2x2"))
        XCTAssertThrowsError(try DDSTopics.parse("/cam,max-image=big"))
        XCTAssertNil(try DDSTopics.parse("/cam").maxImage)
    }

    // MARK: Over the limit: dropped before decoding, counted, one notice

    func testOversizeCompressedSamplesAreDroppedOnTheirHeaderAndGoodOnesDecode() throws {
        let (good, bomb) = try JPEGBomb.make()
        var samples: [DDSSource.Sample] = []
        for i in 0..<20 {
            samples.append(compressedSample(good, stamp: 100 + Double(i) / 20))
            for _ in 0..<5 { samples.append(compressedSample(bomb, stamp: 100 + Double(i) / 20)) }
        }
        let r = DDSSource.receive(samples, topics: compressed)
        XCTAssertEqual(r.frames, 20)
        XCTAssertEqual(r.oversize, [Self.compressedTopic: 100])
        XCTAssertEqual(r.delivery.oversize, 100)
        XCTAssertEqual(r.delivery.received, 120)
        XCTAssertEqual(r.dropped, [:])
        let notices = r.warnings.filter { $0.contains("over the") }
        XCTAssertEqual(notices.count, 1, "\(r.warnings)")
        XCTAssertTrue(notices.first?.contains("JPEG of 16384x16384 is over the 8192x8192 limit") ?? false, "\(notices)")
        XCTAssertTrue(r.delivery.line("dds").hasSuffix(", 100 over the size limit"), r.delivery.line("dds"))

        // A lower limit from the spec drops the good ones too; a limit of their size keeps them.
        let low = DDSSource.receive(samples, topics: DDSTopics(target: compressed.target, maxImage: DDSImageLimit(width: 63, height: 1000)))
        XCTAssertEqual(low.frames, 0)
        XCTAssertEqual(low.oversize[Self.compressedTopic], 120)
        let exact = DDSSource.receive(samples, topics: DDSTopics(target: compressed.target, maxImage: DDSImageLimit(width: 64, height: 48)))
        XCTAssertEqual(exact.frames, 20)
    }

    func testCameraInfoSizeLowersTheLimit() throws {
        let (good, _) = try JPEGBomb.make()
        let info = ROS2Message.CameraInfo(header: ROS2Message.Header(stamp: ROS2Message.Time(sec: 1, nanosec: 0), frameID: "cam"),
                                          height: 24, width: 32, distortionModel: "plumb_bob", D: [0, 0, 0, 0, 0],
                                          K: [30, 0, 16, 0, 30, 12, 0, 0, 1], R: [1, 0, 0, 0, 1, 0, 0, 0, 1],
                                          P: [30, 0, 16, 0, 0, 30, 12, 0, 0, 0, 1, 0])
        let samples = [compressedSample(good, stamp: 1),
                       DDSSource.Sample(topic: "/ns/color/camera_info", bytes: ROS2Message.encodeCameraInfo(info)),
                       compressedSample(good, stamp: 2)]
        let r = DDSSource.receive(samples, topics: compressed)
        XCTAssertEqual(r.frames, 1, "the one before the camera_info")
        XCTAssertEqual(r.oversize[Self.compressedTopic], 1)
        XCTAssertTrue(r.warnings.contains { $0.contains("over the 32x24 limit (the topic's camera_info size)") }, "\(r.warnings)")
    }

    func testOversizeRawImagesAndCompressedDepthAreDroppedBeforeConverting() throws {
        let raw = DDSTopics(target: .topics(color: "/ns/color/image_raw", depth: nil), maxImage: DDSImageLimit(width: 100, height: 100))
        let r = DDSSource.receive([rawSample("/ns/color/image_raw", width: 101, height: 2, stamp: 1),
                                   rawSample("/ns/color/image_raw", width: 100, height: 100, stamp: 2)], topics: raw)
        XCTAssertEqual(r.frames, 1)
        XCTAssertEqual(r.oversize["/ns/color/image_raw"], 1)
        XCTAssertTrue(r.warnings.contains { $0.contains("mono8 of 101x2 is over the 100x100 limit") }, "\(r.warnings)")

        // compressedDepth: the PNG after the 12-byte config header, and RVL's two sides, are read as headers.
        var png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]
        png += [0, 0, 0x40, 0, 0, 0, 0x40, 0, 16, 0, 0, 0, 0]
        let config = [UInt8](repeating: 0, count: 12)
        let rvl = config + [0, 0x40, 0, 0, 0, 0x40, 0, 0, 1, 2, 3, 4]
        let d = DDSSource.receive([compressedSample(config + png, stamp: 1, format: "16UC1; compressedDepth png"),
                                   compressedSample(rvl, stamp: 2, format: "16UC1; compressedDepth rvl")], topics: compressed)
        XCTAssertEqual(d.oversize[Self.compressedTopic], 2)
        XCTAssertEqual(d.frames, 0)
    }

    // MARK: Caps on what a peer can grow

    func testManyWritersAreCappedAndHugeOrNegativeSequenceNumbersNeverTrap() {
        var d = DDSSource.Receiver.TopicDelivery()
        for w in 0..<1000 { d.count(writer: UInt64(w), sequence: 1) }
        XCTAssertLessThanOrEqual(d.lastSequence.count, DDSSource.maxWritersPerTopic)
        XCTAssertGreaterThanOrEqual(d.writersForgotten, 1000 - DDSSource.maxWritersPerTopic)
        XCTAssertEqual(d.received, 1000)
        XCTAssertEqual(d.gaps, 0)

        var e = DDSSource.Receiver.TopicDelivery()
        for s: Int64 in [Int64.max, Int64.max, 1, Int64.max, -1, Int64.min, 0, Int64.max - 1, Int64.max] {
            e.count(writer: 7, sequence: s)
        }
        // One gap of Int64.max - 2 (counted as at most 2^30), one of 0 (Int64.max - 1 → Int64.max).
        XCTAssertEqual(e.gaps, 1 << 30)
        XCTAssertEqual(e.received, 9)
        for _ in 0..<100 { e.count(writer: 7, sequence: 1); e.count(writer: 7, sequence: Int64.max) }
        XCTAssertLessThanOrEqual(e.gaps, 1 << 62)

        // Through the receive path, with stamps and source timestamps at the extremes.
        let topics = DDSTopics(target: .topics(color: "/ns/color/image_raw", depth: nil))
        var samples: [DDSSource.Sample] = []
        for (i, s) in [Int64.max, Int64.min, 0, 5, Int64.max].enumerated() {
            var x = rawSample("/ns/color/image_raw", width: 4, height: 2, stamp: Double(i))
            x.sequence = s
            x.sourceNs = i % 2 == 0 ? Int64.min : Int64.max
            x.writer = UInt64(i)
            samples.append(x)
        }
        let r = DDSSource.receive(samples, topics: topics)
        XCTAssertEqual(r.delivery.received, 5)
        XCTAssertEqual(r.frames, 5)
        var t = DDSFrameTiming(written: Int64.min, received: Int64.max, taken: 1)
        t.handed = Int64.max
        XCTAssertTrue(t.latency.isFinite)
        XCTAssertEqual(t.steps.map(\.name), ["received_to_taken"], "a step from a mark not above 0 is left out")
        t.written = 1
        XCTAssertTrue(t.steps.allSatisfy { $0.seconds.isFinite })
    }

    func testTFFramesByPeerChosenNamesAreCapped() {
        func tf(_ names: [String], parent: String = "world") -> DDSSource.Sample {
            let list = names.map {
                ROS2Message.TransformStamped(header: ROS2Message.Header(stamp: ROS2Message.Time(sec: 1, nanosec: 0), frameID: parent),
                                             childFrameID: $0, transform: ROSMessage.Transform(translation: [0.01, 0, 0], rotation: [0, 0, 0, 1]))
            }
            return DDSSource.Sample(topic: "/tf", bytes: ROS2Message.encodeTFMessage(list))
        }
        var samples: [DDSSource.Sample] = []
        for m in 0..<10 { samples.append(tf((0..<500).map { "peer_\(m)_\($0)" })) }
        samples.append(tf([String(repeating: "x", count: DDSSource.maxFrameIDLength + 1)]))
        let r = DDSSource.receive(samples, topics: compressed)
        XCTAssertGreaterThanOrEqual(r.forgotten.tfFrames, 5000 - DDSSource.maxTFFrames)
        XCTAssertEqual(r.dropped["/tf"], 1, "the over-long frame id")
        XCTAssertTrue(r.warnings.contains { $0.contains("frame id is over") }, "\(r.warnings)")
    }

    func testNoticesAreCappedAndTheOldestCounted() {
        // A stream whose size changes every sample is a notice a sample.
        let topics = DDSTopics(target: .topics(color: "/ns/color/image_raw", depth: nil))
        let samples = (0..<600).map { rawSample("/ns/color/image_raw", width: 2 + 2 * ($0 % 2), height: 2, stamp: Double($0)) }
        let r = DDSSource.receive(samples, topics: topics)
        XCTAssertEqual(r.frames, 600)
        XCTAssertEqual(r.warnings.count, DDSSource.maxWarnings)
        XCTAssertEqual(r.forgotten.warnings, 599 - DDSSource.maxWarnings)
    }

    /// The fuzzer's entry over random and mutated records: no trap, and the counts add up.
    func testFuzzEntryTakesAnyBytes() throws {
        let (good, bomb) = try JPEGBomb.make()
        var rng = SeededRandom(seed: 5)
        func record(_ selector: UInt8, _ sequence: Int64, _ body: [UInt8]) -> [UInt8] {
            var r: [UInt8] = [selector, UInt8(truncatingIfNeeded: rng.next())]
            for i in 0..<8 { r.append(UInt8(truncatingIfNeeded: UInt64(bitPattern: sequence) >> (8 * UInt64(i)))) }
            return r + [UInt8(body.count & 255), UInt8(body.count >> 8)] + body
        }
        let header = ROS2Message.Header(stamp: ROS2Message.Time(sec: 3, nanosec: 0), frameID: "f")
        var input: [UInt8] = []
        for i in 0..<10 {
            input += record(1, Int64(i + 1), ROS2Message.encodeCompressedImage(header: header, format: "jpeg", data: good))
            input += record(1, Int64.max - Int64(i), ROS2Message.encodeCompressedImage(header: header, format: "jpeg", data: bomb))
        }
        let r = DDSSource.fuzz(input)
        XCTAssertEqual(r.frames, 10)
        XCTAssertEqual(r.oversize["/fz/color/image_raw/compressed"], 10)
        for _ in 0..<300 {
            var b = input
            for _ in 0..<8 { b[Int(rng.next() % UInt64(b.count))] = UInt8(truncatingIfNeeded: rng.next()) }
            DDSSource.fuzz(Array(b.prefix(Int(rng.next() % UInt64(b.count)))))
            DDSSource.fuzz((0..<Int(rng.next() % 400)).map { _ in UInt8(truncatingIfNeeded: rng.next()) })
        }
    }
}
