import TestSupport
@testable import Capture
import DepthKit
import Foundation
import XCTest

/// The pieces of the DDS image path made faster for issue 25's latency aim, each against the
/// byte-by-byte definition: rgb8/bgr8 → rgba8 (four pixels at a time), rgba8 → rgb8 (the publisher's
/// encoding), a message written in place (a DDS sample's own buffer) equal to the array one, pooled
/// output buffers, and the steps `subscribe --json` reports.
final class DDSImagePathTests: XCTestCase {
    func bytes(_ n: Int, seed: UInt64) -> [UInt8] {
        var rng = SeededRandom(seed: seed)
        return (0..<n).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
    }

    /// Every width from 1 to 13 (the four-pixel loop and each tail), rows with padding, rgb and bgr.
    func testRGB24ToRGBAEqualsByteByByte() {
        for width in 1...13 {
            for bgr in [false, true] {
                let height = 3, step = width * 3 + 5
                let src = bytes(step * height, seed: UInt64(width))
                let out = PixelBuffer(width: width, height: height, format: .rgba8)
                src.withUnsafeBytes { PixelConversion.rgb24ToRGBA($0.baseAddress!, bytesPerLine: step, bgr: bgr, into: out) }
                for y in 0..<height {
                    let row = out.row(y, as: UInt8.self)
                    for x in 0..<width {
                        let s = src[(y * step + 3 * x)..<(y * step + 3 * x + 3)].map { $0 }
                        let want = (bgr ? [s[2], s[1], s[0]] : s) + [255]
                        XCTAssertEqual([row[4 * x], row[4 * x + 1], row[4 * x + 2], row[4 * x + 3]], want, "width \(width) bgr \(bgr) (\(x), \(y))")
                    }
                }
            }
        }
    }

    /// The publisher's rgba8 → rgb8 message: the pixels are each pixel's first three bytes, in
    /// order, for every width from 1 to 13; the message equals the one made field by field with
    /// `CDRWriter` (what the MCAP writer stored before), and writing it into a buffer of its own
    /// (a DDS sample's) gives the same bytes.
    func testColorMessageWrittenInPlaceEqualsTheFieldByFieldMessage() throws {
        for width in 1...13 {
            let height = 2
            let c = PixelBuffer(width: width, height: height, format: .rgba8)
            let px = bytes(width * height * 4, seed: 100 + UInt64(width))
            for y in 0..<height {
                let row = c.row(y, as: UInt8.self)
                for i in 0..<(4 * width) { row[i] = px[y * 4 * width + i] }
            }
            let header = ROS2Message.Header(stamp: .init(seconds: 12.5), frameID: "cam_color_optical_frame")
            var w = CDRWriter()
            w.i32(header.stamp.sec); w.u32(header.stamp.nanosec); w.string(header.frameID)
            w.u32(UInt32(height)); w.u32(UInt32(width)); w.string("rgb8"); w.bool(false); w.u32(UInt32(width * 3))
            w.byteSequence(count: width * 3 * height) { out in
                for p in 0..<(width * height) { for k in 0..<3 { out[3 * p + k] = px[4 * p + k] } }
            }
            let message = ROS2FrameEncoding.colorImageEncoding(c, header: header, keepGray16: false)
            XCTAssertEqual(message.bytes, w.bytes, "width \(width)")
            XCTAssertEqual(ROS2FrameEncoding.colorImage(c, header: header, keepGray16: false), w.bytes, "width \(width)")
            let own = UnsafeMutableRawBufferPointer.allocate(byteCount: message.count, alignment: 4)
            defer { own.deallocate() }
            own.initializeMemory(as: UInt8.self, repeating: 0xAB)
            message.write(into: own)
            XCTAssertEqual(Array(own), w.bytes, "width \(width): written in place")
            let decoded = try ROS2Message.image(Array(own), file: "t", topic: "/t")
            XCTAssertEqual([decoded.width, decoded.height, decoded.step], [width, height, width * 3])
        }
    }

    /// A pooled output buffer is the one converted into; without one a new buffer is made.
    func testConversionIntoAGivenBuffer() throws {
        let header = ROS2Message.Header(stamp: .init(seconds: 1), frameID: "f")
        let raw = ROS2Message.encodeImage(header: header, width: 5, height: 2, encoding: "16UC1", step: 10) { out in
            for i in 0..<10 { out.storeBytes(of: UInt16(1000 + i).littleEndian, toByteOffset: 2 * i, as: UInt16.self) }
        }
        let image = try ROS2Message.image(raw, file: "t", topic: "/t")
        let pooled = PixelBuffer(width: 5, height: 2, format: .depthFloat32)
        let got = ROSImageDecoding.depthMeters(image, units: 0.001, into: pooled)
        XCTAssertTrue(got === pooled)
        XCTAssertEqual(got.row(1, as: Float.self)[4], 1.009, accuracy: 1e-6)
        let fresh = ROSImageDecoding.depthMeters(image, units: 0.001)
        XCTAssertFalse(fresh === pooled)
        XCTAssertEqual(fresh.row(0, as: Float.self)[0], 1.0, accuracy: 1e-6)
    }

    /// The steps are consecutive marks, named after both ends; a mark not known leaves out the two
    /// steps beside it (a sample from this process has no arrival time).
    func testFrameTimingSteps() {
        var t = DDSFrameTiming(written: 1_000_000, received: 2_500_000, taken: 3_000_000)
        t.converted = 3_700_000; t.queued = 3_750_000; t.handed = 3_800_000
        XCTAssertEqual(t.steps.map(\.name), ["write_to_received", "received_to_taken", "taken_to_converted", "converted_to_queued", "queued_to_handed"])
        XCTAssertEqual(t.steps.map(\.seconds), [0.0015, 0.0005, 0.0007, 0.00005, 0.00005].map { $0 }, accuracy: 1e-12)
        XCTAssertEqual(t.latency, 0.0028, accuracy: 1e-12)
        t.received = 0
        XCTAssertEqual(t.steps.map(\.name), ["taken_to_converted", "converted_to_queued", "queued_to_handed"])
    }
}

private func XCTAssertEqual(_ a: [Double], _ b: [Double], accuracy: Double, file: StaticString = #filePath, line: UInt = #line) {
    XCTAssertEqual(a.count, b.count, file: file, line: line)
    for (x, y) in zip(a, b) { XCTAssertEqual(x, y, accuracy: accuracy, file: file, line: line) }
}
