import XCTest
import CDepthKit
import Foundation

final class PNGShimTests: XCTestCase {
    func testCorruptPNGReturnsErrorInsteadOfLongjmpingThroughSwift() throws {
        let path = NSTemporaryDirectory() + "dl-corrupt-\(getpid()).png"
        // A valid signature followed by garbage: libpng fails inside png_read_info.
        var bytes: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        bytes += [UInt8](repeating: 0xAB, count: 64)
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
        defer { try? FileManager.default.removeItem(atPath: path) }
        var img = dl_image()
        var err = [CChar](repeating: 0, count: 256)
        XCTAssertEqual(dl_png_read(path, &img, &err, err.count), -1)
        XCTAssertFalse(cText(err).isEmpty)
        XCTAssertNil(img.pixels)
    }

    func testWriteThenReadSixteenBitGray() throws {
        let path = NSTemporaryDirectory() + "dl-16-\(getpid()).png"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let samples: [UInt16] = [0, 1, 1000, 65535, 258, 5000]
        var err = [CChar](repeating: 0, count: 256)
        let r = samples.withUnsafeBytes { raw in
            dl_png_write(path, 3, 2, 1, 16, 6, raw.baseAddress!.assumingMemoryBound(to: UInt8.self), &err, err.count)
        }
        XCTAssertEqual(r, 0, cText(err))
        var img = dl_image()
        XCTAssertEqual(dl_png_read(path, &img, &err, err.count), 0)
        defer { dl_image_free(&img) }
        XCTAssertEqual(img.width, 3); XCTAssertEqual(img.height, 2); XCTAssertEqual(img.bit_depth, 16)
        let back = UnsafeRawPointer(img.pixels!).bindMemory(to: UInt16.self, capacity: 6)
        XCTAssertEqual(Array(UnsafeBufferPointer(start: back, count: 6)), samples)
    }

    func testJPEGErrorDoesNotExitProcess() {
        let path = NSTemporaryDirectory() + "dl-bad-\(getpid()).jpg"
        _ = FileManager.default.createFile(atPath: path, contents: Data([0xFF, 0xD8, 0xFF, 0x00, 0x01, 0x02]))
        defer { try? FileManager.default.removeItem(atPath: path) }
        var img = dl_image()
        var err = [CChar](repeating: 0, count: 256)
        XCTAssertEqual(dl_jpeg_read(path, &img, &err, err.count), -1)
        XCTAssertFalse(cText(err).isEmpty)
    }
}

/// The text of a C call's NUL-terminated message buffer.
private func cText(_ buffer: [CChar]) -> String {
    String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
