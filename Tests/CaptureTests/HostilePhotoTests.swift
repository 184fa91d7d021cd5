import Foundation
import XCTest
@testable import Capture
import DepthKit
import TestSupport

/// Photos and depth messages whose structure claims far more than their bytes hold (issue 33,
/// "memory follows the data"): HEIF `iloc` extents, extended XMP, RVL compressedDepth. Each is
/// refused (or, for extended XMP, set aside with a note) with a line naming the file and the
/// problem, and the memory spent bounded — measured on the child process (`PeakRun`), never a time.
/// Every file is written here, byte by byte, as ISO/IEC 14496-12 (boxes), the XMP specification
/// part 3 (extended XMP in APP1) and compressed_depth_image_transport's rvl_codec.cpp lay them out.
final class HostilePhotoTests: XCTestCase {
    /// The test's own folder, removed with it.
    let folder = TemporaryFolder("depthlens-hostile")

    func write(_ bytes: [UInt8], _ name: String) throws -> String { try folder.write(bytes, name) }

    // MARK: HEIF iloc

    static func box(_ type: String, _ payload: [UInt8]) -> [UInt8] { bigEndian32(8 + payload.count) + Array(type.utf8) + payload }
    static func fullBox(_ type: String, version: UInt8, _ payload: [UInt8]) -> [UInt8] { box(type, [version, 0, 0, 0] + payload) }

    /// A HEIF whose one item (the primary, `hvc1`, with an empty hvcC) has `extents` (offset,
    /// length) pairs in an iloc v1 with 4-byte offsets and lengths.
    static func heif(extents: [(Int, Int)]) -> [UInt8] {
        let ftyp = box("ftyp", Array("heic".utf8) + [0, 0, 0, 0] + Array("mif1heic".utf8))
        let hdlr = fullBox("hdlr", version: 0, [0, 0, 0, 0] + Array("pict".utf8) + [UInt8](repeating: 0, count: 13))
        let pitm = fullBox("pitm", version: 0, bigEndian16(1))
        let infe = fullBox("infe", version: 2, bigEndian16(1) + bigEndian16(0) + Array("hvc1".utf8) + [0])
        let iinf = fullBox("iinf", version: 0, bigEndian16(1) + infe)
        var iloc: [UInt8] = [0x44, 0x00] + bigEndian16(1) + bigEndian16(1) + bigEndian16(0) + bigEndian16(0) + bigEndian16(extents.count)
        for (offset, length) in extents { iloc += bigEndian32(offset) + bigEndian32(length) }
        let ipco = box("ipco", box("hvcC", [UInt8](repeating: 0, count: 23)))
        let ipma = fullBox("ipma", version: 0, bigEndian32(1) + bigEndian16(1) + [1, 0x81])
        let meta = fullBox("meta", version: 0, hdlr + pitm + iinf + fullBox("iloc", version: 1, iloc) + box("iprp", ipco + ipma))
        return ftyp + meta + box("mdat", [UInt8](repeating: 0x5A, count: 64))
    }

    /// The attack: 65535 extents of length 0 ("the rest of the file") for one item. The old
    /// walk accepted them, and `data(of:)` would have made 65535 copies of the file (34 GB here).
    func testHEIFWithThousandsOfZeroLengthExtentsIsRefused() throws {
        let bytes = Self.heif(extents: Array(repeating: (0, 0), count: 65535))
        XCTAssertThrowsError(try HEIFFile(bytes: bytes, name: "bomb.heic")) { e in
            XCTAssertEqual("\(e)", "bomb.heic: iloc: item 1 has 65535 extents (at most 1024)")
        }
        let p = try write(bytes, "bomb.heic")
        let r = try PeakRun.depthlens(["info", "photo:" + p])
        r.assertOneLineError(mentioning: [p, "iloc: item 1 has 65535 extents"], peakUnder: 150)
    }

    /// Length 0 is "to the end" only for an item's single extent; extents that add up to more
    /// than the file are refused at the walk, before any item is read.
    func testHEIFExtentsBeyondTheFileAreRefused() throws {
        XCTAssertThrowsError(try HEIFFile(bytes: Self.heif(extents: [(0, 0), (0, 0)]), name: "two.heic")) { e in
            XCTAssertEqual("\(e)", "two.heic: iloc: item 1: an extent of length 0 (the rest of the file) among 2 extents")
        }
        let size = Self.heif(extents: Array(repeating: (0, 1), count: 1000)).count
        let over = Self.heif(extents: Array(repeating: (0, size / 2), count: 1000))
        XCTAssertThrowsError(try HEIFFile(bytes: over, name: "over.heic")) { e in
            XCTAssertEqual("\(e)", "over.heic: iloc: item 1: its extents add up to more than the file's \(over.count) bytes")
        }
        let p = try write(over, "over.heic")
        try PeakRun.depthlens(["info", "photo:" + p]).assertOneLineError(mentioning: [p, "add up to more than the file"], peakUnder: 150)
        // One zero-length extent is still the rest of the file.
        let one = try HEIFFile(bytes: Self.heif(extents: [(100, 0)]), name: "one.heic")
        XCTAssertEqual(try one.data(of: one.primary).count, one.bytes.count - 100)
    }

    // MARK: Extended XMP

    /// Tests/Fixtures/solid-16x8.jpg with, after its SOI, a standard XMP packet naming extended XMP
    /// `guid` and `parts` APP1 extended-XMP segments (GUID, full length, offset, bytes).
    static func jpegWithExtendedXMP(guid: String, parts: [(total: Int, offset: Int, bytes: [UInt8])]) throws -> [UInt8] {
        let jpeg = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Repo.fixture("solid-16x8.jpg"))))
        func app1(_ payload: [UInt8]) -> [UInt8] { [0xFF, 0xE1] + bigEndian16(payload.count + 2) + payload }
        let xmp = "<x:xmpmeta xmlns:x=\"adobe:ns:meta/\"><rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\">"
            + "<rdf:Description xmlns:xmpNote=\"http://ns.adobe.com/xmp/note/\" xmpNote:HasExtendedXMP=\"\(guid)\"/></rdf:RDF></x:xmpmeta>"
        var segments = app1(JPEGSegments.xmpSignature + Array(xmp.utf8))
        for part in parts {
            segments += app1(JPEGSegments.extendedSignature + Array(guid.utf8) + bigEndian32(part.total) + bigEndian32(part.offset) + part.bytes)
        }
        return Array(jpeg[0..<2]) + segments + Array(jpeg[2...])
    }

    /// A chunk claiming a full length of 256 MiB − 1 with 10 bytes present: set aside with a note,
    /// without the old reader's 256 MiB zero-filled buffer (allocated before the parts were checked).
    func testExtendedXMPClaimingMoreThanItsChunksIsNotAllocated() throws {
        let guid = String(repeating: "A", count: 32)
        let bytes = try Self.jpegWithExtendedXMP(guid: guid, parts: [((1 << 28) - 1, 0, Array("<x:xmpmeta".utf8))])
        let segments = try JPEGSegments(bytes: bytes, name: "bomb.jpg")
        XCTAssertNil(segments.extendedXMP)
        XCTAssertEqual(segments.notes, ["extended XMP \(guid) is incomplete (10 of 268435455 bytes): cut?"])
        let p = try write(bytes, "bomb.jpg")
        let r = try PeakRun.depthlens(["info", "photo:" + p])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertLessThan(r.peakMiB, 150, "peak resident memory (MiB)")
        // Complete parts out of order still reassemble.
        let whole = try Self.jpegWithExtendedXMP(guid: guid, parts: [(12, 6, Array("World!".utf8)), (12, 0, Array("Hello ".utf8))])
        XCTAssertEqual(try JPEGSegments(bytes: whole, name: "ok.jpg").extendedXMP?.text, "Hello World!")
    }

    // MARK: RVL compressedDepth

    /// RVL code for `values` (nibbles of 3 bits, least significant group first, the 4th bit set
    /// when more follow; packed most significant nibble first into little-endian 32-bit words).
    static func rvlCode(_ values: [Int]) -> [UInt8] {
        var nibbles: [UInt32] = []
        for var v in values {
            repeat {
                let group = UInt32(v & 7)
                v >>= 3
                nibbles.append(v > 0 ? group | 8 : group)
            } while v > 0
        }
        while nibbles.count % 8 != 0 { nibbles.append(0) }
        var out: [UInt8] = []
        for w in stride(from: 0, to: nibbles.count, by: 8) {
            let word = (0..<8).reduce(UInt32(0)) { $0 << 4 | nibbles[w + $1] }
            out += withUnsafeBytes(of: word.littleEndian, Array.init)
        }
        return out
    }

    /// A compressedDepth `data`: the 12-byte ConfigHeader (format 0, A and B 0), cols, rows, code.
    static func rvlPayload(width: Int, height: Int, code: [UInt8]) -> ArraySlice<UInt8> {
        func le32(_ v: Int) -> [UInt8] { withUnsafeBytes(of: UInt32(v).littleEndian, Array.init) }
        return ([UInt8](repeating: 0, count: 12) + le32(width) + le32(height) + code)[...]
    }

    /// The 28-byte payload: one run of 2^28 zeros for a 16384×16384 image. Refused by size.
    func testRVLClaimingMoreThanTheLimitIsRefused() throws {
        let payload = Self.rvlPayload(width: 16384, height: 16384, code: Self.rvlCode([1 << 28, 0]))
        XCTAssertEqual(payload.count, 28)
        XCTAssertThrowsError(try CompressedDepth.decode(payload, format: "16UC1; compressedDepth rvl", file: "rec.db3", topic: "/depth")) { e in
            XCTAssertEqual("\(e)", "rec.db3: compressedDepth image (16UC1; compressedDepth rvl) on /depth claims 16384x16384, more than 16777216 pixels")
        }
        // The stream's size, when known, refuses another before anything is allocated.
        let small = Self.rvlPayload(width: 64, height: 48, code: Self.rvlCode([64 * 48, 0]))
        XCTAssertThrowsError(try CompressedDepth.decode(small, format: "16UC1; compressedDepth rvl", file: "rec.db3", topic: "/depth",
                                                        expect: (640, 480))) { e in
            XCTAssertTrue("\(e)".hasSuffix("is 64x48, the stream's images are 640x480"), "\(e)")
        }
    }

    /// At the limit (4096×4096), all zeros: decoded and expanded to meters with the zero runs
    /// never written, so the child doing it (this bundle on `testChildDecodesRVLAtTheLimit`)
    /// peaks far below the 32 MiB of values and 64 MiB of meters the picture claims.
    func testRVLOfZerosCommitsNoMemoryForItsRuns() throws {
        let r = try PeakRun.testBundle("CaptureTests.HostilePhotoTests/testChildDecodesRVLAtTheLimit",
                                       environment: ["DEPTHLENS_HOSTILE_RVL": "1"])
        XCTAssertEqual(r.status, 0, r.stdout + r.stderr)
        XCTAssertTrue(r.stdout.contains("decoded 4096x4096"), r.stdout)
        let baseline = try PeakRun.testBundle("CaptureTests.HostilePhotoTests/testChildDecodesRVLAtTheLimit", environment: [:])
        XCTAssertLessThan(r.peakMiB - baseline.peakMiB, 48, "the decode's peak over the bundle's own (MiB)")
    }

    /// The child of `testRVLOfZerosCommitsNoMemoryForItsRuns` (does nothing on its own).
    func testChildDecodesRVLAtTheLimit() throws {
        guard ProcessInfo.processInfo.environment["DEPTHLENS_HOSTILE_RVL"] != nil else { return }
        let n = CompressedDepth.maxPixels
        let payload = Self.rvlPayload(width: 4096, height: 4096, code: Self.rvlCode([n, 0]))
        let image = try CompressedDepth.decode(payload, format: "16UC1; compressedDepth rvl", file: "rec.db3", topic: "/depth")
        let meters = image.meters(units: 0.001)
        XCTAssertEqual(meters.sample(x: 4095, y: 4095), 0)
        print("decoded \(meters.width)x\(meters.height)")
    }
}
