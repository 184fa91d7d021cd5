import Foundation
import XCTest
import DepthKit
import TestSupport

/// Images whose headers claim far more than their data holds (issue 33, "memory follows the
/// data"): refused with one line naming the file and the problem, and the memory a command spends
/// on them bounded — measured on the child process (`PeakRun`, its own `ru_maxrss`), never a time.
/// The files are written here: JPEGs by patching the frame header of Tests/Fixtures/solid-16x8.jpg,
/// PNGs chunk by chunk as the PNG specification lays them out.
final class HostileImageTests: XCTestCase {
    /// The test's own folder, removed with it.
    let folder = TemporaryFolder("depthlens-hostile")

    func write(_ bytes: [UInt8], _ name: String) throws -> String { try folder.write(bytes, name) }

    /// solid-16x8.jpg with its SOF0 segment's size set to `width`×`height` (FF C0, length, precision,
    /// then height and width, 2 bytes each), and made SOF2 (progressive) when asked: libjpeg then
    /// wants whole-image coefficient buffers before it reads a scan.
    static func jpegClaiming(width: Int, height: Int, progressive: Bool = false) throws -> [UInt8] {
        var b = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Repo.fixture("solid-16x8.jpg"))))
        var i = 2
        while i + 4 < b.count {
            XCTAssertEqual(b[i], 0xFF)
            let marker = b[i + 1], length = Int(b[i + 2]) << 8 | Int(b[i + 3])
            if marker == 0xC0 {
                if progressive { b[i + 1] = 0xC2 }
                b[i + 5] = UInt8(height >> 8); b[i + 6] = UInt8(height & 0xff)
                b[i + 7] = UInt8(width >> 8); b[i + 8] = UInt8(width & 0xff)
                return b
            }
            i += 2 + length
        }
        throw XCTSkip("solid-16x8.jpg has no SOF0 segment")
    }

    /// A PNG: signature, IHDR (`width`×`height`, 8-bit RGBA, `interlace`), one IDAT holding a zlib
    /// stream of a few stored bytes, IEND; every chunk with its CRC-32.
    static func pngClaiming(width: Int, height: Int, interlace: UInt8 = 0) -> [UInt8] {
        func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
            let body = Array(type.utf8) + data
            return bigEndian32(data.count) + body + bigEndian32(Int(crc32(body)))
        }
        // zlib: header 78 01, one final stored block of 16 zero bytes, Adler-32 of them (1 << 16 | 1... = 0x00100001).
        let stored: [UInt8] = [0x78, 0x01, 0x01, 0x10, 0x00, 0xEF, 0xFF] + [UInt8](repeating: 0, count: 16) + [0x00, 0x10, 0x00, 0x01]
        let ihdr = bigEndian32(width) + bigEndian32(height) + [8, 6, 0, 0, interlace]
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + chunk("IHDR", ihdr) + chunk("IDAT", stored) + chunk("IEND", [])
    }

    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        for b in bytes {
            c ^= UInt32(b)
            for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        }
        return ~c
    }

    // MARK: Files through the command line

    /// A 289-byte JPEG claiming 16384×16384 (= DL_MAX_IMAGE_PIXELS, so not refused by size): the
    /// decode stops where the scan data does, having committed a few rows.
    func testJPEGClaiming16384SquaredCostsItsData() throws {
        let p = try write(Self.jpegClaiming(width: 16384, height: 16384), "bomb.jpg")
        let r = try PeakRun.depthlens(["info", p])
        r.assertOneLineError(mentioning: [p, "corrupt JPEG"], peakUnder: 150)
    }

    /// The same as a progressive JPEG: libjpeg's whole-image coefficient buffers (1.5 GB) are over
    /// its working-memory cap and refused before they are allocated.
    func testProgressiveJPEGOverTheWorkingMemoryIsRefused() throws {
        let bytes = try Self.jpegClaiming(width: 16384, height: 16384, progressive: true)
        let p = try write(bytes, "bomb-progressive.jpg")
        let r = try PeakRun.depthlens(["info", p])
        r.assertOneLineError(mentioning: [p, "needs more than 256 MB of working memory"], peakUnder: 150)
        XCTAssertThrowsError(try bytes.withUnsafeBytes { try ImageIO.decode($0, name: "cam.jpg") }) { e in
            XCTAssertEqual("\(e)", "cam.jpg: corrupt JPEG: decoding needs more than 256 MB of working memory (a progressive JPEG this large)")
        }
    }

    /// A 74-byte PNG claiming 16384×16384 RGBA, plain and interlaced: one line, a small peak.
    func testPNGClaimingAHugeSizeCostsItsData() throws {
        for interlace: UInt8 in [0, 1] {
            let p = try write(Self.pngClaiming(width: 16384, height: 16384, interlace: interlace), "bomb\(interlace).png")
            let r = try PeakRun.depthlens(["info", p])
            r.assertOneLineError(mentioning: [p, "corrupt PNG"], peakUnder: 150)
        }
        // A side over libpng's user limit (2^20) fails at the IHDR ("Invalid IHDR data"); over 2^28
        // pixels, before any row buffer.
        let wide = Self.pngClaiming(width: 1 << 30, height: 1)
        XCTAssertThrowsError(try wide.withUnsafeBytes { try ImageIO.decode($0, name: "wide.png") }) { e in
            XCTAssertTrue("\(e)".hasPrefix("wide.png: corrupt PNG: "), "\(e)")
        }
        let tall = Self.pngClaiming(width: 1 << 19, height: 1 << 19)
        XCTAssertThrowsError(try tall.withUnsafeBytes { try ImageIO.decode($0, name: "tall.png") }) { e in
            XCTAssertEqual("\(e)", "tall.png: corrupt PNG: image size is more than 2^28 pixels")
        }
    }

    // MARK: In memory (a ROS CompressedImage, a DDS sample)

    /// `ImageIO.decode` of the 600-byte JPEG bomb, in a child (this bundle on
    /// `testChildDecodesTheFileInMemory`): the claimed 1 GiB of rgba8 is mapped, not zero-filled,
    /// so the child's peak stays far below it.
    func testInMemoryJPEGBombCommitsOnlyDecodedRows() throws {
        let p = try write(Self.jpegClaiming(width: 16384, height: 16384), "bomb.jpg")
        let r = try PeakRun.testBundle("DepthKitTests.HostileImageTests/testChildDecodesTheFileInMemory",
                                       environment: ["DEPTHLENS_HOSTILE_IMAGE": p])
        XCTAssertEqual(r.status, 0, r.stdout + r.stderr)
        XCTAssertTrue(r.stdout.contains("corrupt JPEG"), r.stdout)
        XCTAssertLessThan(r.peakMiB, 300, "the child's peak (MiB); the old decoder zero-filled 1024 MiB first")
    }

    /// The child of `testInMemoryJPEGBombCommitsOnlyDecodedRows` (does nothing on its own).
    func testChildDecodesTheFileInMemory() throws {
        guard let p = ProcessInfo.processInfo.environment["DEPTHLENS_HOSTILE_IMAGE"] else { return }
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: p)))
        XCTAssertThrowsError(try bytes.withUnsafeBytes { try ImageIO.decode($0, name: p) }) { e in print("\(e)") }
    }

    /// A caller's limit (a network source's `--max-image`) refuses the header before decoding.
    func testDecodeRefusesAHeaderOverTheCallersLimit() throws {
        let bytes = try Self.jpegClaiming(width: 16384, height: 16384)
        bytes.withUnsafeBytes { XCTAssertEqual(ImageIO.headerSize($0)?.width, 16384) }
        XCTAssertThrowsError(try bytes.withUnsafeBytes { try ImageIO.decode($0, name: "/ns/color", maxPixels: 8192 * 8192) }) { e in
            XCTAssertEqual("\(e)", "/ns/color: image size 16384x16384 is more than 67108864 pixels")
        }
        let png = Self.pngClaiming(width: 9000, height: 9000)
        png.withUnsafeBytes { XCTAssertEqual(ImageIO.headerSize($0)?.height, 9000) }
        XCTAssertThrowsError(try png.withUnsafeBytes { try ImageIO.decode($0, name: "/ns/color", maxPixels: 8192 * 8192) })
    }

    // MARK: PixelBuffer

    /// A size from input that cannot be had is an error naming the input, never a trap.
    func testPixelBufferMakeThrowsInsteadOfTrapping() throws {
        XCTAssertThrowsError(try PixelBuffer.make(width: 1 << 40, height: 1 << 40, format: .rgba8, for: "big.png")) { e in
            XCTAssertEqual("\(e)", "big.png: image size 1099511627776x1099511627776 (rgba8) is too large to address")
        }
        // 2^50 bytes: more address space than the machine maps.
        XCTAssertThrowsError(try PixelBuffer.make(width: 1 << 30, height: 1 << 20, format: .gray8, for: "huge.pgm")) { e in
            XCTAssertTrue("\(e)".hasPrefix("huge.pgm: out of memory for a 1073741824x1048576 gray8 image"), "\(e)")
        }
        XCTAssertThrowsError(try PixelBuffer.make(width: 0, height: 4, format: .gray8, for: "empty.pgm"))
    }

    /// Large buffers are page-aligned mappings that read as zeros; small ones as before.
    func testLargeBuffersAreMappedZeroAndPageAligned() throws {
        for (w, h) in [(4096, 1024), (640, 480), (3, 2)] {
            let b = try PixelBuffer.make(width: w, height: h, format: .rgba8, for: "t")
            XCTAssertEqual(Int(bitPattern: b.baseAddress) % PixelBuffer.alignment, 0)
            XCTAssertEqual(b.allocationSize % PixelBuffer.alignment, 0)
            XCTAssertGreaterThanOrEqual(b.allocationSize, b.byteCount)
            let bytes = UnsafeBufferPointer(start: b.baseAddress.assumingMemoryBound(to: UInt8.self), count: b.allocationSize)
            XCTAssertFalse(bytes.contains { $0 != 0 })
            b.setRGBA(x: w - 1, y: h - 1, (1, 2, 3, 4))
            XCTAssertTrue(b.rgba(x: w - 1, y: h - 1) == (1, 2, 3, 4))
        }
        let programs = PixelBuffer(width: 2048, height: 2048, format: .depthFloat32)
        XCTAssertEqual(programs.sample(x: 2047, y: 2047), 0)
    }
}
