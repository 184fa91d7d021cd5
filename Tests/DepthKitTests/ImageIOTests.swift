import XCTest
import Foundation
import TestSupport
@testable import DepthKit

final class ImageIOTests: XCTestCase {
    // MARK: Round trips

    func testPNGRoundTripsEveryWritableFormat() throws {
        let dir = TempDir()
        for format in [PixelFormat.rgba8, .gray8, .gray16(depthScale: 0)] {
            let b = makeBuffer(7, 5, format)
            let p = dir.file("\(format).png")
            try ImageIO.write(b, to: p)
            let back = try ImageIO.read(p)
            XCTAssertEqual(back.format, format)
            XCTAssertEqual(back.packedBytes(), b.packedBytes(), "\(format)")
        }
    }

    func testPNGRGBAndBGRAComeBackAsRGBA() throws {
        let dir = TempDir()
        let rgb = makeBuffer(6, 3, .rgb8)
        try ImageIO.write(rgb, to: dir.file("rgb.png"))
        let back = try ImageIO.read(dir.file("rgb.png"))
        XCTAssertEqual(back.format, .rgba8)
        for y in 0..<3 { for x in 0..<6 {
            let a = rgb.rgba(x: x, y: y), b = back.rgba(x: x, y: y)
            XCTAssertTrue(a == b, "(\(x),\(y))")
        } }
        let bgra = makeBuffer(4, 4, .bgra8, seed: 3)
        try ImageIO.write(bgra, to: dir.file("bgra.png"))
        let back2 = try ImageIO.readColor(dir.file("bgra.png"))
        XCTAssertEqual(back2.packedBytes(), ImageIO.toRGBA8(bgra).packedBytes(), "BGRA is swizzled to RGBA on write")
    }

    func testSixteenBitPNGKeepsExactCounts() throws {
        let dir = TempDir()
        let b = PixelBuffer(width: 3, height: 2, format: .gray16(depthScale: 0))
        let values: [UInt16] = [0, 1, 5000, 65535, 258, 12345]
        for i in 0..<6 { b.row(i / 3, as: UInt16.self)[i % 3] = values[i] }
        try ImageIO.write(b, to: dir.file("d.png"))
        let back = try ImageIO.read(dir.file("d.png"))
        XCTAssertEqual((0..<6).map { back.row($0 / 3, as: UInt16.self)[$0 % 3] }, values)
    }

    func testPGMRoundTripsBothByteOrders() throws {
        let dir = TempDir()
        let g8 = makeBuffer(5, 4, .gray8)
        try ImageIO.write(g8, to: dir.file("a.pgm"))
        XCTAssertEqual(try ImageIO.read(dir.file("a.pgm")).packedBytes(), g8.packedBytes())
        let g16 = makeBuffer(5, 4, .gray16(depthScale: 0), seed: 9)
        try ImageIO.write(g16, to: dir.file("be.pgm"))
        try ImageIO.write(g16, to: dir.file("le.pgm"), pgmLittleEndian: true)
        XCTAssertEqual(try ImageIO.read(dir.file("be.pgm")).packedBytes(), g16.packedBytes())
        XCTAssertEqual(try ImageIO.read(dir.file("le.pgm"), pgmLittleEndian: true).packedBytes(), g16.packedBytes())
        XCTAssertNotEqual(try ImageIO.read(dir.file("le.pgm")).packedBytes(), g16.packedBytes(),
                          "reading with the wrong byte order swaps bytes")
    }

    func testPPMRoundTrip() throws {
        let dir = TempDir()
        let c = makeBuffer(4, 3, .rgba8)
        for y in 0..<3 { for x in 0..<4 { c.row(y, as: UInt8.self)[4 * x + 3] = 255 } }
        try ImageIO.write(c, to: dir.file("c.ppm"))
        XCTAssertEqual(try ImageIO.read(dir.file("c.ppm")).packedBytes(), c.packedBytes())
    }

    /// Found by `scripts/fuzz pnm` and `pfm`: a 16-bit PPM sample above maxval trapped when rescaled
    /// to a byte. Samples are rescaled from 0...maxval (8-bit ones too) and clamp at maxval.
    func testPPMSamplesRescaleByMaxvalAndClampAboveIt() throws {
        let dir = TempDir()
        // 16-bit, maxval 1000: 0, 500, 1000, 65535 (above maxval) in one row of two pixels.
        var p16 = Array("P6\n2 1\n1000\n".utf8)
        for v in [0, 500, 1000, 65535, 999, 1] as [Int] { p16 += [UInt8(v >> 8), UInt8(v & 0xFF)] }
        try FileSupport.atomicWrite(p16, to: dir.file("a.ppm"))
        XCTAssertEqual(try ImageIO.read(dir.file("a.ppm")).packedBytes(), [0, 128, 255, 255, 255, 255, 0, 255])
        // 8-bit, maxval 100: 0, 50, 100, 200 (above maxval).
        let p8 = Array("P6\n2 1\n100\n".utf8) + [0, 50, 100, 200, 1, 99]
        try FileSupport.atomicWrite(p8, to: dir.file("b.ppm"))
        XCTAssertEqual(try ImageIO.read(dir.file("b.ppm")).packedBytes(), [0, 128, 255, 255, 255, 3, 252, 255])
        // The fuzzers' inputs themselves: read (or refused with the file's name), never a trap.
        let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/fuzz")
        for name in ["ppm16-sample-above-maxval.ppm", "ppm16-sample-above-maxval-2.ppm"] {
            let path = fixtures.appendingPathComponent(name).path
            do { _ = try ImageIO.read(path); _ = try DepthIO.readDepth(path) } catch {
                XCTAssertTrue("\(error)".contains(name), "\(error)")
            }
        }
    }

    func testPFMRoundTripKeepsRowOrderAndRawValues() throws {
        let dir = TempDir()
        let m = floatMap(3, 2) { x, y in Float(y * 10 + x) + 0.5 }
        m.row(1, as: Float.self)[2] = .infinity
        try ImageIO.write(m, to: dir.file("m.pfm"))
        let back = try ImageIO.read(dir.file("m.pfm"))
        XCTAssertEqual(back.format, .depthFloat32)
        XCTAssertEqual(back.packedBytes(), m.packedBytes())
        // On disk the bottom row comes first.
        let bytes = try FileSupport.readAll(dir.file("m.pfm"))
        let header = Array("Pf\n3 2\n-1\n".utf8)
        XCTAssertEqual(Array(bytes[0..<header.count]), header)
        let first = bytes[header.count..<(header.count + 4)].withUnsafeBytes { $0.loadUnaligned(as: Float.self) }
        XCTAssertEqual(first, 10.5, "first stored row is image row 1 (the bottom)")
    }

    // MARK: Hand-written files

    func testHandWrittenPGMWithComments() throws {
        let dir = TempDir()
        var bytes = Array("P5\n# a comment\n3 # width\n1\n65535\n".utf8)
        bytes += [0x00, 0x01, 0x13, 0x88, 0xFF, 0xFF] // 1, 5000, 65535 big-endian
        let p = dir.write("h.pgm", bytes)
        let b = try ImageIO.read(p)
        XCTAssertEqual(b.format, .gray16(depthScale: 0))
        XCTAssertEqual([0, 1, 2].map { b.row(0, as: UInt16.self)[$0] }, [1, 5000, 65535])
        let le = try ImageIO.read(p, pgmLittleEndian: true)
        XCTAssertEqual([0, 1, 2].map { le.row(0, as: UInt16.self)[$0] }, [256, 0x8813, 65535])
    }

    func testHandWrittenBigEndianPFM() throws {
        let dir = TempDir()
        var bytes = Array("Pf\n2 2\n1.0\n".utf8)
        for v: Float in [3, 4, 1, 2] { // bottom row (3 4) first
            let b = v.bitPattern.bigEndian
            bytes += withUnsafeBytes(of: b) { Array($0) }
        }
        let b = try ImageIO.read(dir.write("be.pfm", bytes))
        XCTAssertEqual([b.sample(x: 0, y: 0), b.sample(x: 1, y: 0), b.sample(x: 0, y: 1), b.sample(x: 1, y: 1)], [1, 2, 3, 4])
    }

    func testFormatIsDetectedByContentNotExtension() throws {
        let dir = TempDir()
        let g = makeBuffer(2, 2, .gray8)
        try ImageIO.write(g, to: dir.file("x.pgm"))
        try FileManager.default.moveItem(atPath: dir.file("x.pgm"), toPath: dir.file("x.png"))
        XCTAssertEqual(try ImageIO.read(dir.file("x.png")).packedBytes(), g.packedBytes())
    }

    func testReadColorExpandsGrayToRGBA() throws {
        let dir = TempDir()
        let g = makeBuffer(2, 2, .gray8)
        try ImageIO.write(g, to: dir.file("g.png"))
        let c = try ImageIO.readColor(dir.file("g.png"))
        XCTAssertEqual(c.format, .rgba8)
        let v = g.row(1, as: UInt8.self)[1]
        XCTAssertTrue(c.rgba(x: 1, y: 1) == (v, v, v, 255))
        try ImageIO.write(makeBuffer(2, 2, .gray16(depthScale: 0)), to: dir.file("d.png"))
        XCTAssertFileError(try ImageIO.readColor(dir.file("d.png")), "not a color image")
    }

    // MARK: Bad input

    func testMissingAndEmptyFiles() {
        let dir = TempDir()
        XCTAssertFileError(try ImageIO.read(dir.file("nope.png")), path: dir.file("nope.png"), "no such file")
        let e = dir.write("empty.png", [])
        XCTAssertFileError(try ImageIO.read(e), path: e, "file is empty")
        XCTAssertFileError(try ImageIO.read(dir.path), "is a directory")
        XCTAssertEqual(DepthKitError.file(path: e, problem: "file is empty").description, "\(e): file is empty")
    }

    func testUnknownContent() {
        let dir = TempDir()
        let p = dir.write("t.png", Array("hello world".utf8))
        XCTAssertFileError(try ImageIO.read(p), "not a PNG/JPEG/PGM/PPM/PFM image")
        let a = dir.write("a.pgm", Array("P2\n1 1\n255\n0\n".utf8))
        XCTAssertFileError(try ImageIO.read(a), "not supported")
    }

    func testTruncatedAndCorruptPNG() throws {
        let dir = TempDir()
        try ImageIO.write(makeBuffer(32, 32, .rgba8), to: dir.file("ok.png"))
        let bytes = try FileSupport.readAll(dir.file("ok.png"))
        let t = dir.write("trunc.png", Array(bytes.prefix(bytes.count / 2)))
        XCTAssertFileError(try ImageIO.read(t), path: t, "corrupt PNG")
        var garbage = Array(bytes.prefix(8)); garbage += [UInt8](repeating: 0xAB, count: 64)
        let g = dir.write("garbage.png", garbage)
        XCTAssertFileError(try ImageIO.read(g), path: g, "corrupt PNG")
        let j = dir.write("bad.jpg", [0xFF, 0xD8, 0xFF, 0x00, 0x01, 0x02])
        XCTAssertFileError(try ImageIO.read(j), path: j, "corrupt JPEG")
    }

    /// A color JPEG in memory (a ROS `CompressedImage`) is decoded straight into rgba8 rows
    /// (`dl_jpeg_decode_rgba`): the same pixels as the file reader's RGB spread to RGBA, for each
    /// chroma subsampling and an odd size (ImageMagick's JPEGs); a gray JPEG still comes back gray8;
    /// a cut-short one is refused.
    func testInMemoryColorJPEGDecodesToTheFileReadersPixels() throws {
        let dir = TempDir()
        for (name, args) in [("420", ["plasma:fractal", "-sampling-factor", "4:2:0"]), ("422", ["plasma:fractal", "-sampling-factor", "4:2:2"]),
                             ("444", ["plasma:fractal", "-sampling-factor", "4:4:4"]), ("gray", ["gradient:", "-colorspace", "Gray"])] {
            let path = dir.file("\(name).jpg")
            let r = try TestProcess.run(["convert", "-size", "333x217", "-seed", "3"] + args + ["-quality", "90", path], timeout: 60)
            XCTAssertEqual(r.status, 0, r.output)
            let bytes = try FileSupport.readAll(path)
            let fromMemory = try bytes.withUnsafeBytes { try ImageIO.decode($0, name: path) }
            let fromFile = try ImageIO.read(path)
            XCTAssertEqual(fromMemory.format, name == "gray" ? .gray8 : .rgba8, name)
            XCTAssertEqual(fromMemory.width, 333, name)
            XCTAssertEqual(fromMemory.height, 217, name)
            XCTAssertEqual(fromMemory.packedBytes(), fromFile.packedBytes(), "\(name): the same pixels either way")
            let cut = Array(bytes.prefix(bytes.count * 2 / 3))
            XCTAssertThrowsError(try cut.withUnsafeBytes { try ImageIO.decode($0, name: "cut.jpg") }, name) { e in
                XCTAssertTrue("\(e)".contains("corrupt JPEG"), "\(e)")
            }
        }
    }

    /// Found by `scripts/fuzz jpeg`: a 203-byte JPEG whose header claims 12.8 GB of pixels was
    /// allocated before decoding. Sizes over 2^28 pixels are refused; so is a JPEG cut short.
    func testJPEGThatClaimsAHugeSizeOrIsCutShortIsRefused() throws {
        let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures")
        let huge = fixtures.appendingPathComponent("fuzz/jpeg-huge-size.jpg").path
        XCTAssertFileError(try ImageIO.read(huge), path: huge, "more than 268435456 pixels")
        // A 16x8 solid-color JPEG (ImageMagick, quality 95), whole and without its last 5 bytes.
        let whole = fixtures.appendingPathComponent("solid-16x8.jpg").path
        XCTAssertEqual(try ImageIO.read(whole).width, 16)
        let dir = TempDir()
        let cut = dir.write("cut.jpg", Array(try FileSupport.readAll(whole).dropLast(5)))
        XCTAssertFileError(try ImageIO.read(cut), path: cut, "corrupt JPEG")
    }

    func testTruncatedPGM() {
        let dir = TempDir()
        let p = dir.write("t.pgm", Array("P5\n4 4\n255\n".utf8) + [UInt8](repeating: 1, count: 10))
        XCTAssertFileError(try ImageIO.read(p), path: p, "truncated PGM: expected 16 bytes of pixel data, found 10")
        let q = dir.write("t16.pgm", Array("P5\n2 2\n65535\n".utf8) + [1, 2, 3])
        XCTAssertFileError(try ImageIO.read(q), "truncated PGM: expected 8 bytes of pixel data, found 3")
        let h = dir.write("h.pgm", Array("P5\n4".utf8))
        XCTAssertFileError(try ImageIO.read(h), "corrupt PGM header")
        let m = dir.write("m.pgm", Array("P5\n1 1\n70000\n".utf8) + [0, 0, 0])
        XCTAssertFileError(try ImageIO.read(m), "maxval")
    }

    func testCorruptAndLyingPFM() {
        let dir = TempDir()
        let lying = dir.write("lie.pfm", Array("Pf\n100 100\n-1.0\n".utf8) + [UInt8](repeating: 0, count: 4 * 4 * 4))
        XCTAssertFileError(try ImageIO.read(lying), path: lying, "PFM header size 100x100 does not match the data")
        let scale = dir.write("s.pfm", Array("Pf\n1 1\nabc\n".utf8) + [0, 0, 0, 0])
        XCTAssertFileError(try ImageIO.read(scale), "corrupt PFM header")
        let size = dir.write("z.pfm", Array("Pf\n0 1\n-1\n".utf8))
        XCTAssertFileError(try ImageIO.read(size), "corrupt PFM header")
        let color = dir.write("c.pfm", Array("PF\n1 1\n-1\n".utf8) + [UInt8](repeating: 0, count: 12))
        XCTAssertFileError(try ImageIO.read(color), "color PFM (PF) is not supported")
    }

    // MARK: Failed writes leave nothing behind

    func testWriteIntoMissingDirectoryLeavesNoFile() {
        let dir = TempDir()
        let p = dir.file("missing/out.png")
        XCTAssertFileError(try ImageIO.write(makeBuffer(2, 2, .rgba8), to: p), path: p, "no such directory")
        XCTAssertEqual(dir.contents, [])
    }

    func testWriteWhoseEncodingFailsLeavesNoFile() {
        let dir = TempDir()
        let depth = floatMap(2, 2) { _, _ in 1 }
        XCTAssertFileError(try ImageIO.write(depth, to: dir.file("d.png")), "cannot write depthFloat32 as PNG")
        XCTAssertFileError(try ImageIO.write(makeBuffer(2, 2, .rgba8), to: dir.file("c.pgm")), "cannot write rgba8 as PGM")
        XCTAssertFileError(try ImageIO.write(makeBuffer(2, 2, .rgba8), to: dir.file("c.bmp")), "use .png")
        XCTAssertEqual(dir.contents, [])
    }

    func testFailureAfterTheTemporaryExistsRemovesItAndKeepsTheOldFile() throws {
        let dir = TempDir()
        let p = dir.file("keep.txt")
        try FileSupport.atomicWrite(Array("old".utf8), to: p)
        struct Boom: Error {}
        XCTAssertThrowsError(try FileSupport.atomicWrite(to: p) { temp in
            try FileSupport.writeAll(Array("partial".utf8), toTemporary: temp, reportingAs: p)
            XCTAssertTrue(FileManager.default.fileExists(atPath: temp))
            throw Boom()
        })
        XCTAssertEqual(dir.contents, ["keep.txt"])
        XCTAssertEqual(try FileSupport.readAll(p), Array("old".utf8))
    }

    func testPNGEncoderFailureLeavesNoFile() {
        let dir = TempDir()
        // Writing onto an existing directory: the rename fails after libpng wrote the temporary.
        try! FileManager.default.createDirectory(atPath: dir.file("taken.png"), withIntermediateDirectories: false)
        XCTAssertFileError(try ImageIO.write(makeBuffer(2, 2, .rgba8), to: dir.file("taken.png")), "is a directory")
        XCTAssertEqual(dir.contents, ["taken.png"])
    }
}
