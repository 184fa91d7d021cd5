import XCTest
import Foundation
import DepthKit
@testable import Capture

/// The video as ffprobe decodes it; H.264 in yuv420p is asserted for every recording.
func probeVideo(_ path: String, file: StaticString = #filePath, line: UInt = #line) throws -> VideoProbe {
    let v = try VideoProbe.read(path)
    XCTAssertEqual(v.codec, "h264", file: file, line: line)
    XCTAssertEqual(v.pixelFormat, "yuv420p", file: file, line: line)
    return v
}

final class VideoWriterTests: XCTestCase {
    func frame(_ w: Int, _ h: Int, _ i: Int) -> PixelBuffer {
        let b = PixelBuffer(width: w, height: h, format: .rgba8)
        for y in 0..<h { for x in 0..<w { b.setRGBA(x: x, y: y, (UInt8((x * 4 + i * 9) & 255), UInt8(y * 5 & 255), 128, 255)) } }
        return b
    }

    func testEveryFrameReachesTheFileAtTheGivenRate() throws {
        let path = try makeTemporaryDirectory(self) + "/a.mp4"
        let w = try VideoWriter(path: path, width: 64, height: 48, fps: 15)
        // A file source can wait for the encoder: nothing is dropped however far ahead it runs.
        for i in 0..<25 { XCTAssertTrue(try w.append(frame(64, 48, i), waitForRoom: true)) }
        XCTAssertFalse(FileManager.default.fileExists(atPath: path), "the file appears only when finished")
        let s = try w.finish()
        XCTAssertEqual(s.framesWritten, 25)
        XCTAssertEqual(s.framesDropped, 0)
        XCTAssertNil(s.padding)
        let v = try probeVideo(path)
        XCTAssertEqual(v.frames, 25)
        XCTAssertEqual(v.width, 64); XCTAssertEqual(v.height, 48)
        XCTAssertEqual(v.rate, "15/1")
        XCTAssertFalse(FileManager.default.fileExists(atPath: path + ".partial"))
    }

    func testOddSizesArePaddedToEven() throws {
        let path = try makeTemporaryDirectory(self) + "/odd.mp4"
        let w = try VideoWriter(path: path, width: 33, height: 17, fps: 29.97)
        let gray = PixelBuffer(width: 33, height: 17, format: .gray8)
        for _ in 0..<3 { try w.append(gray) }
        let s = try w.finish()
        XCTAssertEqual(s.padding, "33x17 padded to 34x18")
        let v = try probeVideo(path)
        XCTAssertEqual(v.frames, 3)
        XCTAssertEqual(v.width, 34); XCTAssertEqual(v.height, 18)
        XCTAssertEqual(v.rate, "2997/100")
    }

    func testAStalledEncoderDropsFramesAndCountsThem() throws {
        let path = try makeTemporaryDirectory(self) + "/stall.mp4"
        let w = try VideoWriter(path: path, width: 64, height: 48, fps: 30, queueLimit: 2)
        // Hold the encoder's thread: the queue fills, then frames drop.
        w.holdEncoder(true)
        var accepted = 0
        for i in 0..<40 { if try w.append(frame(64, 48, i)) { accepted += 1 } }
        XCTAssertEqual(accepted, 2, "the queue holds queueLimit frames")
        w.holdEncoder(false)
        XCTAssertGreaterThan(w.framesDropped, 0)
        XCTAssertEqual(accepted + w.framesDropped, 40, "every frame is either accepted or counted as dropped")
        let s = try w.finish()
        XCTAssertEqual(s.framesWritten, accepted)
        XCTAssertTrue(s.description.contains("DROPPED"), s.description)
        XCTAssertEqual(try probeVideo(path).frames, accepted)
    }

    func testBadRequestsAreOneClearError() throws {
        let dir = try makeTemporaryDirectory(self)
        XCTAssertThrowsError(try VideoWriter(path: dir + "/no/such/x.mp4", width: 8, height: 8, fps: 30)) {
            XCTAssertTrue("\($0)".contains("does not exist"), "\($0)")
        }
        XCTAssertThrowsError(try VideoWriter(path: dir + "/x.mp4", width: 0, height: 8, fps: 30))
        let w = try VideoWriter(path: dir + "/x.mp4", width: 8, height: 8, fps: 30)
        XCTAssertThrowsError(try w.append(frame(10, 8, 0))) { XCTAssertTrue("\($0)".contains("size changed"), "\($0)") }
        XCTAssertThrowsError(try w.finish()) { XCTAssertTrue("\($0)".contains("no frames"), "\($0)") }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir), [], "nothing left behind")
    }
}
