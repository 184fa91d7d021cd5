@testable import Capture
import DepthKit
import Foundation
import XCTest
import TestSupport

/// MKVRecorder on its own: the queue (drops counted for real-time callers, waits for file
/// sources), timestamps that do not follow, the IR track (read back by ffmpeg, an independent
/// decoder), the partial file, and MKVSource reading back depth and times exactly.
final class MKVRecorderTests: XCTestCase {
    var dir: String!

    override func setUpWithError() throws {
        dir = NSTemporaryDirectory() + "mkvrec-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(atPath: dir) }

    func frame(_ i: Int, width: Int = 64, height: Int = 48, time: Double? = nil) -> FrameSet {
        let color = PixelBuffer(width: width, height: height, format: .rgba8)
        let depth = PixelBuffer(width: width, height: height, format: .depthFloat32)
        for y in 0..<height {
            let c = color.row(y, as: UInt8.self), d = depth.row(y, as: Float.self)
            for x in 0..<width {
                c[4 * x] = UInt8((x * 4 + i) & 255); c[4 * x + 1] = UInt8((y * 5) & 255); c[4 * x + 2] = UInt8((x + y + 3 * i) & 255); c[4 * x + 3] = 255
                // Millimeters 1…65535 and invalid (0) pixels.
                d[x] = (x + y) % 7 == 0 ? 0 : Float((x * 997 + y * 131 + i * 17) % 65535 + 1) / 1000
            }
        }
        return FrameSet(color: color, depth: DepthData(map: depth), timestamp: time ?? (1000.123457 + Double(i) * 0.0333), index: i)
    }

    func run(_ command: String) throws -> (status: Int32, out: Data) {
        let r = try TestProcess.shell(command, timeout: 300)
        return (r.status, r.stdoutData)
    }

    func testDepthAndTimesComeBackExactlyThroughMKVSource() throws {
        let path = dir + "/a.mkv"
        let frames = (0..<6).map { frame($0) }
        let rec = try MKVRecorder(path: path, colorWidth: 64, colorHeight: 48, depthSize: (64, 48), depthUnitsPerMeter: 1000,
                                  startTime: frames[0].timestamp, options: .init(lossless: true))
        XCTAssertTrue(FileManager.default.fileExists(atPath: path + ".partial"), "written as .partial")
        XCTAssertFalse(FileManager.default.fileExists(atPath: path))
        for f in frames { XCTAssertTrue(try rec.append(f, waitForRoom: true)) }
        let s = try rec.finish()
        XCTAssertEqual(s.framesWritten, 6)
        XCTAssertEqual(s.depthFrames, 6)
        XCTAssertEqual(s.framesDropped, 0)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path + ".partial"))
        let src = MKVSource(path: path)
        try src.start()
        XCTAssertEqual(src.frameTimestamps.count, 6)
        XCTAssertEqual(src.calibration?.depthScale, 1000)
        for (i, f) in frames.enumerated() {
            let g = try src.frame(i)
            XCTAssertEqual(Int64((g.timestamp * 1e6).rounded()), Int64((f.timestamp * 1e6).rounded()), "frame \(i) time to the microsecond")
            XCTAssertEqual(TUMWriter.encodeDepth(try XCTUnwrap(g.depth), scale: 1000).packedBytes(),
                           TUMWriter.encodeDepth(try XCTUnwrap(f.depth), scale: 1000).packedBytes(), "frame \(i) depth bit-exact")
            XCTAssertEqual(ImageIO.toRGBA8(g.color).packedBytes(), f.color.packedBytes(), "frame \(i) lossless color bit-exact")
        }
    }

    func testItsOwnRecordingsReadInOrderWithOneSeek() throws {
        // H.264's encoder delay puts the DEPTH packets (FFV1, every one a keyframe) ahead of the
        // COLOR packets of the same time in the file: reading in order, as convert and playback
        // do, must still read the file once from the start (it sought twice a frame before).
        let path = dir + "/order.mkv"
        let frames = (0..<45).map { frame($0, width: 320, height: 240) }
        let rec = try MKVRecorder(path: path, colorWidth: 320, colorHeight: 240, depthSize: (320, 240), depthUnitsPerMeter: 1000,
                                  startTime: frames[0].timestamp)
        for f in frames { XCTAssertTrue(try rec.append(f, waitForRoom: true)) }
        _ = try rec.finish()
        let src = MKVSource(path: path)
        try src.start()
        XCTAssertEqual(src.recording.frameCount, 45)
        for i in 0..<45 {
            let f = try src.frame(i)
            XCTAssertEqual(f.depth?.map.packedBytes(), frames[i].depth?.map.packedBytes(), "depth of frame \(i) exact")
        }
        XCTAssertEqual(src.seekCount, 1, "one seek back to the start after indexing; then reading in order")
    }

    /// The tracks say the source's nominal rate: ffprobe reads the H.264 COLOR track at 30 fps, not
    /// at the 1000000 fps of its microsecond time base (which `ffmpeg -i REC.mkv OUT.mp4` then used).
    func testTheTracksSayTheNominalFrameRate() throws {
        for (name, rate, expected) in [("rated", 30.0 as Double?, "30/1"), ("unrated", nil, "1000000/1")] {
            let path = dir + "/\(name).mkv"
            let rec = try MKVRecorder(path: path, colorWidth: 64, colorHeight: 48, depthSize: (64, 48),
                                      startTime: frame(0).timestamp, frameRate: rate)
            for i in 0..<6 { XCTAssertTrue(try rec.append(frame(i), waitForRoom: true)) }
            _ = try rec.finish()
            let probe = try run("ffprobe -v error -select_streams 0 -show_entries stream=codec_name,r_frame_rate -of csv=p=0 '\(path)'")
            XCTAssertEqual(String(decoding: probe.out, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines), "h264,\(expected)",
                           "\(name): the COLOR track's rate as ffprobe reads it")
        }
    }

    func testIRTrackIsWrittenAndFFmpegDecodesItBitExact() throws {
        let path = dir + "/ir.mkv"
        let rec = try MKVRecorder(path: path, colorWidth: 64, colorHeight: 48, depthSize: (64, 48), irSize: (32, 24), startTime: 1000)
        var expected: [UInt8] = []
        for i in 0..<3 {
            let ir = PixelBuffer(width: 32, height: 24, format: .gray16(depthScale: 0))
            for y in 0..<24 { let r = ir.row(y, as: UInt16.self); for x in 0..<32 { r[x] = UInt16((x * 2053 + y * 97 + i * 7919) % 65536) } }
            expected += ir.packedBytes()
            try rec.append(frame(i), ir: ir, waitForRoom: true)
        }
        let s = try rec.finish()
        XCTAssertEqual(s.irFrames, 3)
        let titles = try run("ffprobe -v error -show_entries stream=codec_name,pix_fmt:stream_tags=title -of csv=p=0 '\(path)'")
        XCTAssertTrue(String(decoding: titles.out, as: UTF8.self).contains("ffv1,gray16le,IR"), String(decoding: titles.out, as: UTF8.self))
        let raw = try run("ffmpeg -v error -i '\(path)' -map 0:2 -f rawvideo -pix_fmt gray16le -")
        XCTAssertEqual(raw.status, 0)
        XCTAssertEqual(Array(raw.out), expected, "ffmpeg decodes the IR track bit-exact")
        XCTAssertThrowsError(try MKVRecorder(path: dir + "/b.mkv", colorWidth: 64, colorHeight: 48, depthSize: nil)
            .append(frame(0), ir: PixelBuffer(width: 8, height: 8, format: .gray16(depthScale: 0)))) { e in
            XCTAssertTrue("\(e)".contains("DEPTH track"), "\(e)")
        }
    }

    func testARealTimeCallerHasFramesDroppedAndCountedAFileSourceWaits() throws {
        let path = dir + "/drop.mkv"
        // Color only (queuing it is a copy, encoding it takes milliseconds), so the caller always outruns the encoder.
        let big = (0..<40).map { i -> FrameSet in var f = frame(i, width: 1280, height: 720); f.depth = nil; return f }
        let rec = try MKVRecorder(path: path, colorWidth: 1280, colorHeight: 720, depthSize: nil, startTime: big[0].timestamp,
                                  options: .init(queueLimit: 1))
        var accepted = 0
        for f in big { if try rec.append(f, waitForRoom: false) { accepted += 1 } }
        let s = try rec.finish()
        XCTAssertGreaterThan(s.framesDropped, 0, "an H.264 encoder at 1280x720 cannot take 40 frames at once through a queue of 1")
        XCTAssertEqual(s.framesWritten, accepted)
        XCTAssertEqual(s.framesWritten + s.framesDropped, 40, "every frame is written or counted")
        let probe = try run("ffprobe -v error -count_frames -select_streams 0 -show_entries stream=nb_read_frames -of csv=p=0 '\(path)'")
        XCTAssertEqual(String(decoding: probe.out, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines), "\(accepted)")

        let waited = try MKVRecorder(path: dir + "/wait.mkv", colorWidth: 1280, colorHeight: 720, depthSize: nil,
                                     startTime: big[0].timestamp, options: .init(queueLimit: 1))
        for f in big.prefix(10) { XCTAssertTrue(try waited.append(f, waitForRoom: true)) }
        let w = try waited.finish()
        XCTAssertEqual(w.framesWritten, 10)
        XCTAssertEqual(w.framesDropped, 0)
    }

    func testTimestampsThatDoNotFollowAreSkippedAndCounted() throws {
        let path = dir + "/t.mkv"
        let rec = try MKVRecorder(path: path, colorWidth: 64, colorHeight: 48, depthSize: (64, 48), startTime: 5)
        XCTAssertTrue(try rec.append(frame(0, time: 5.0), waitForRoom: true))
        XCTAssertTrue(try rec.append(frame(1, time: 5.1), waitForRoom: true))
        XCTAssertFalse(try rec.append(frame(2, time: 5.1), waitForRoom: true), "the same time again")
        XCTAssertFalse(try rec.append(frame(3, time: 5.05), waitForRoom: true), "earlier")
        XCTAssertFalse(try rec.append(frame(4, time: 4.0), waitForRoom: true), "before the start")
        XCTAssertTrue(try rec.append(frame(5, time: 5.2), waitForRoom: true))
        XCTAssertThrowsError(try rec.append(frame(6, width: 32, height: 24, time: 6), waitForRoom: true)) { e in
            XCTAssertTrue("\(e)".contains("size changed"), "\(e)")
        }
        let s = try rec.finish()
        XCTAssertEqual(s.framesWritten, 3)
        XCTAssertEqual(s.framesSkipped, 3)
        let src = MKVSource(path: path)
        try src.start()
        XCTAssertEqual(src.frameTimestamps, [5.0, 5.1, 5.2])
    }

    func testNoFramesLeavesNoFileAndBadRequestsAreOneLine() throws {
        let path = dir + "/none.mkv"
        let rec = try MKVRecorder(path: path, colorWidth: 64, colorHeight: 48, depthSize: (64, 48))
        XCTAssertThrowsError(try rec.finish()) { e in XCTAssertTrue("\(e)".contains("no frames"), "\(e)") }
        XCTAssertFalse(FileManager.default.fileExists(atPath: path))
        XCTAssertFalse(FileManager.default.fileExists(atPath: path + ".partial"))
        XCTAssertThrowsError(try MKVRecorder(path: dir + "/nope/x.mkv", colorWidth: 64, colorHeight: 48, depthSize: nil)) { e in
            XCTAssertTrue("\(e)".contains("does not exist"), "\(e)")
        }
        XCTAssertThrowsError(try MKVRecorder(path: dir + "/z.mkv", colorWidth: 0, colorHeight: 48, depthSize: nil)) { e in
            XCTAssertTrue("\(e)".contains("0x48"), "\(e)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/z.mkv.partial"))
    }
}
