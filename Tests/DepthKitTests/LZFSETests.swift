import XCTest
import Foundation
import TestSupport
@testable import DepthKit

/// LZFSE (Record3D's `.r3d` depth and confidence frames) against Apple's reference encoder and
/// decoder: PyPI `lzfse` (the reference C in the venv under .build/pyref, made here when missing)
/// compresses chosen inputs in Tests/Fixtures/lzfse_reference.py, and `LZFSE.decode` must give
/// back every input byte for byte — each block kind the reference writes (raw `bvx-`, LZVN
/// `bvxn`, LZFSE v2 `bvx2`), many blocks with matches across them, and `bvx1`, which the
/// reference encoder never writes: the script rewrites a reference v2 stream's headers in the v1
/// layout (the reference decoder checks it), and `testHandBuiltV1Block` builds one from the spec.
/// Hostile streams (cut short, bytes flipped, distances before the start, more output than
/// allowed) are each one error line, never a crash. Never skipped.
final class LZFSETests: XCTestCase {
    private struct Case {
        let name: String
        let raw: [UInt8]
        let stream: [UInt8]
        let blocks: [String]
    }

    private func python() throws -> String { try PythonReference.python(importing: ["lzfse", "numpy"]) }

    /// The reference streams (about a second to write).
    private func referenceCases() throws -> [String: Case] {
        let py = try python()
        let tmp = TemporaryFolder("lzfse")
        let r = try TestProcess.run([py, Repo.fixture("lzfse_reference.py"), tmp.path], timeout: 300)
        XCTAssertEqual(r.status, 0, r.output)
        let manifest = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: tmp.file("cases.json"))))
            as? [[String: Any]])
        var cases: [String: Case] = [:]
        for entry in manifest {
            let name = try XCTUnwrap(entry["name"] as? String)
            let raw = [UInt8](try Data(contentsOf: URL(fileURLWithPath: tmp.file(name + ".raw"))))
            XCTAssertEqual(raw.count, try XCTUnwrap(entry["size"] as? Int))
            cases[name] = Case(name: name, raw: raw,
                               stream: [UInt8](try Data(contentsOf: URL(fileURLWithPath: tmp.file(name + ".lzfse")))),
                               blocks: try XCTUnwrap(entry["blocks"] as? [String]))
        }
        return cases
    }

    /// Asserts `body` throws the one-line "NAME: corrupt LZFSE data (…)" error, and returns its text.
    @discardableResult
    private func assertCorrupt(_ body: @autoclosure () throws -> [UInt8], _ fragment: String = "",
                               file: StaticString = #filePath, line: UInt = #line) -> String? {
        var text: String?
        XCTAssertThrowsError(try body(), file: file, line: line) { error in
            let s = "\(error)"
            text = s
            XCTAssertTrue(s.hasPrefix("in.depth: corrupt LZFSE data ("), s, file: file, line: line)
            XCTAssertFalse(s.contains("\n"), s, file: file, line: line)
            if !fragment.isEmpty { XCTAssertTrue(s.contains(fragment), "'\(s)' does not contain '\(fragment)'", file: file, line: line) }
        }
        return text
    }

    private func decode(_ bytes: some Collection<UInt8>, _ maxOutput: Int) throws -> [UInt8] {
        try LZFSE.decode(bytes, maxOutput: maxOutput, name: "in.depth")
    }

    func testDecodesWhatTheReferenceEncoderWrites() throws {
        let cases = try referenceCases()
        XCTAssertEqual(cases.count, 15)
        var kinds = Set<String>()
        for c in cases.values.sorted(by: { $0.name < $1.name }) {
            kinds.formUnion(c.blocks)
            XCTAssertEqual(c.blocks.last, "bvx$", c.name)
            let out = try decode(c.stream, c.raw.count)
            XCTAssertEqual(out.count, c.raw.count, c.name)
            XCTAssertTrue(out == c.raw, "\(c.name): decoded bytes differ")
            // An exact slice of a larger buffer (a ZIP entry in a mapped .r3d) decodes the same.
            let padded = [0x55, 0x55] + c.stream + [0xAA]
            XCTAssertTrue(try decode(padded[2..<(padded.count - 1)], c.raw.count) == c.raw, c.name)
        }
        XCTAssertEqual(kinds, ["bvx-", "bvxn", "bvx1", "bvx2", "bvx$"])
        // Which kind the reference picks: LZVN below 4 KB, v2 above, raw when nothing is gained.
        XCTAssertEqual(cases["text-600"]?.blocks, ["bvxn", "bvx$"])
        XCTAssertEqual(cases["lzvn-4095"]?.blocks, ["bvxn", "bvx$"])
        XCTAssertEqual(cases["random-3000"]?.blocks, ["bvx-", "bvx$"])
        XCTAssertEqual(cases["empty"]?.blocks, ["bvx-", "bvx$"])
        XCTAssertEqual(cases["random-2M"]?.blocks, ["bvx-", "bvx$"])
        XCTAssertEqual(Set(cases["depth-192x256"]?.blocks ?? []), ["bvx2", "bvx$"])
        XCTAssertEqual(Set(cases["conf-192x256"]?.blocks ?? []), ["bvx2", "bvx$"])
        XCTAssertEqual(Set(cases["mixed"]?.blocks ?? []), ["bvx-", "bvxn", "bvx2", "bvx$"])
        XCTAssertGreaterThan(cases["depth-1920x1440"]?.blocks.count ?? 0, 100, "an 11 MB frame is many v2 blocks")
        XCTAssertGreaterThan(cases["depth-192x256"]?.blocks.count ?? 0, 2)
        XCTAssertEqual(cases["v1-depth-192x256"]?.blocks.count, cases["depth-192x256"]?.blocks.count)
        XCTAssertEqual(cases["v1-conf-192x256"]?.blocks, ["bvx1", "bvx$"])
        // Record3D's depth: 192x256 little-endian float32 meters.
        let depth = try XCTUnwrap(cases["depth-192x256"])
        let meters = try decode(depth.stream, 192 * 256 * 4).withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        XCTAssertEqual(meters.count, 192 * 256)
        XCTAssertEqual(meters[45 * 192 + 40], 0, "a hole")
        XCTAssertEqual(meters[0], 0.8, accuracy: 0.01)
    }

    func testStreamsCutShortFail() throws {
        let cases = try referenceCases()
        for name in ["empty", "text-600", "lzvn-4095", "random-3000", "conf-192x256", "depth-192x256",
                     "v1-depth-192x256", "mixed"] {
            let c = try XCTUnwrap(cases[name])
            let step = max(1, c.stream.count / 600)
            var cut = 0
            while cut < c.stream.count {
                assertCorrupt(try decode(c.stream[..<cut], c.raw.count))
                cut += cut < 64 ? 1 : step  // every byte of the headers, then every step-th
            }
            assertCorrupt(try decode(c.stream.dropLast(), c.raw.count), "end-of-stream block")
        }
        assertCorrupt(try decode([UInt8](), 100), "ends at byte 0 without its end-of-stream block")
    }

    /// A flipped byte anywhere in each block kind: either the one error line or bytes decoded
    /// inside the declared size (a flipped literal is still a valid stream) — never a crash, a
    /// read outside the stream or a write outside the output (the fuzz target runs this under
    /// AddressSanitizer). Flipped magics and header fields always fail.
    func testFlippedBytesFailOrStayInBounds() throws {
        let cases = try referenceCases()
        for name in ["text-600", "random-3000", "conf-192x256", "v1-depth-192x256", "mixed"] {
            let c = try XCTUnwrap(cases[name])
            let step = max(1, c.stream.count / 400)
            var failures = 0, flips = 0
            var at = 0
            while at < c.stream.count {
                for mask: UInt8 in [0x01, 0xFF] {
                    var s = c.stream
                    s[at] ^= mask
                    flips += 1
                    do {
                        let out = try decode(s, c.raw.count)
                        XCTAssertLessThanOrEqual(out.count, c.raw.count)
                    } catch {
                        let text = "\(error)"
                        XCTAssertTrue(text.hasPrefix("in.depth: corrupt LZFSE data ("), text)
                        XCTAssertFalse(text.contains("\n"), text)
                        failures += 1
                    }
                }
                at += at < 64 ? 1 : step
            }
            XCTAssertGreaterThan(failures, 0, name)
            for i in 0..<4 {  // the first block's magic
                var s = c.stream
                s[i] ^= 0x20
                assertCorrupt(try decode(s, c.raw.count))
            }
            var s = c.stream  // the first block's n_raw_bytes, one more
            s[4] = s[4] &+ 1
            assertCorrupt(try decode(s, c.raw.count + 1))
            print("LZFSE \(name): \(failures) of \(flips) flips fail")
        }
    }

    // MARK: Hand-built streams

    private func le32(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }
    private func le16(_ v: UInt16) -> [UInt8] { [UInt8(truncatingIfNeeded: v), UInt8(truncatingIfNeeded: v >> 8)] }
    private var end: [UInt8] { Array("bvx$".utf8) }
    private func raw(_ bytes: [UInt8]) -> [UInt8] { Array("bvx-".utf8) + le32(UInt32(bytes.count)) + bytes }
    private func lzvn(rawBytes: UInt32, _ payload: [UInt8]) -> [UInt8] {
        Array("bvxn".utf8) + le32(rawBytes) + le32(UInt32(payload.count)) + payload
    }
    private let lzvnEnd: [UInt8] = [0x06, 0, 0, 0, 0, 0, 0, 0]

    /// The reference decoder's output for a stream built here, or nil when it fails.
    private func referenceDecode(_ stream: [UInt8]) throws -> [UInt8]? {
        let py = try python()
        let tmp = TemporaryFolder("lzfse")
        XCTAssertTrue(FileManager.default.createFile(atPath: tmp.file("in"), contents: Data(stream)))
        let r = try TestProcess.run([py, "-c", "import lzfse, sys; open(sys.argv[2], 'wb').write(lzfse.decompress(open(sys.argv[1], 'rb').read()))",
                                     tmp.file("in"), tmp.file("out")], timeout: 120)
        guard r.status == 0 else { return nil }
        return [UInt8](try Data(contentsOf: URL(fileURLWithPath: tmp.file("out"))))
    }

    func testLZVNMatchBeforeTheStartFails() throws {
        // "abc" (small literal), then a small-distance match of 3 bytes from 3 back: "abcabc".
        let good = lzvn(rawBytes: 6, [0xE3, 0x61, 0x62, 0x63, 0x00, 0x03] + lzvnEnd) + end
        XCTAssertEqual(try decode(good, 6), Array("abcabc".utf8))
        XCTAssertEqual(try referenceDecode(good), Array("abcabc".utf8))
        // The same match from 5 back: before the first byte.
        let bad = lzvn(rawBytes: 6, [0xE3, 0x61, 0x62, 0x63, 0x00, 0x05] + lzvnEnd) + end
        assertCorrupt(try decode(bad, 6), "match distance 5 before the start of the output (3 bytes written)")
        // A match repeating "the previous distance" before any distance.
        assertCorrupt(try decode(lzvn(rawBytes: 4, [0xE1, 0x61, 0xF3] + lzvnEnd) + end, 4), "match distance 0")
        // Earlier blocks count: the same distance-5 match after a 2-byte raw block is fine.
        XCTAssertEqual(try decode(raw([0x78, 0x79]) + Array(bad.dropLast(4)) + end, 8), Array("xyabcxya".utf8))
        // Undefined opcodes, a literal past the payload, output past the header's size.
        assertCorrupt(try decode(lzvn(rawBytes: 1, [0x70] + lzvnEnd) + end, 1), "undefined LZVN opcode 0x70")
        assertCorrupt(try decode(lzvn(rawBytes: 15, [0xEF, 0x61]) + end, 15), "cut short")
        assertCorrupt(try decode(lzvn(rawBytes: 2, [0xE3, 0x61, 0x62, 0x63] + lzvnEnd) + end, 100), "writes past the 2 bytes")
        assertCorrupt(try decode(lzvn(rawBytes: 4, [0xE3, 0x61, 0x62, 0x63] + lzvnEnd) + end, 100), "decodes to 3 bytes, its header says 4")
        assertCorrupt(try decode(lzvn(rawBytes: 3, [0xE3, 0x61, 0x62, 0x63]) + end, 100), "without its end-of-stream opcode")
    }

    /// A v1 LZFSE block (`bvx1`: flat frequency tables), which the reference encoder never
    /// writes, built from the format: every state of each table on one symbol, so no state bits
    /// are read — four literals 'A' (symbol 65), L = 4 (symbol 4), M = 10 (symbol 10), D from
    /// symbol 18 (base 92, 4 extra bits, all zero here) = 92. After a 100-byte raw block the
    /// match copies bytes 12…21; alone it reaches before the start of the output.
    private func v1Block() -> [UInt8] {
        var h = Array("bvx1".utf8) + le32(14)                  // magic, n_raw_bytes
        h += le32(8) + le32(4) + le32(1) + le32(0) + le32(8)     // payload, literals, matches, literal payload, L,M,D payload
        h += le32(0) + le16(0) + le16(0) + le16(0) + le16(0)     // literal_bits, literal states
        h += le32(0) + le16(0) + le16(0) + le16(0)               // lmd_bits, L, M, D states
        var freqs = [UInt16](repeating: 0, count: 20 + 20 + 64 + 256)
        freqs[4] = 64                 // L
        freqs[20 + 10] = 64           // M
        freqs[40 + 18] = 256          // D
        freqs[104 + 65] = 1024        // literal 'A'
        for f in freqs { h += le16(f) }
        h += [0, 0]                   // the header struct's tail padding: 772 bytes
        XCTAssertEqual(h.count, 772)
        return h + [UInt8](repeating: 0, count: 8)  // the L,M,D stream: its 8 padding bytes hold the bits
    }

    func testHandBuiltV1Block() throws {
        let prefix = (0..<100).map { UInt8($0) }
        let stream = raw(prefix) + v1Block() + end
        let expected = prefix + Array("AAAA".utf8) + (12..<22).map { UInt8($0) }
        XCTAssertEqual(try decode(stream, 114), expected)
        XCTAssertEqual(try referenceDecode(stream), expected, "the reference decoder reads the hand-built block the same")
        assertCorrupt(try decode(v1Block() + end, 14), "match 0: distance 92 before the start of the output (4 bytes written)")
        // Table and header fields out of range.
        var b = v1Block()
        b[50 + 8] = 65  // L frequencies sum to 65 of 64 states
        assertCorrupt(try decode(b + end, 14), "L frequencies sum to 65")
        b = v1Block()
        b[16] = 0x11; b[17] = 0x27  // 10001 matches
        assertCorrupt(try decode(b + end, 14), "10001 matches")
        b = v1Block()
        b[28] = 1  // literal_bits 1
        assertCorrupt(try decode(b + end, 14), "bit counts 1 and 0")
        b = v1Block()
        b[12] = 2  // 2 literals; the match takes 4
        assertCorrupt(try decode(raw(prefix) + b + end, 114), "match 0 takes 4 literals, 2 are left of 2")
        b = v1Block()
        b[4] = 15  // n_raw_bytes 15; the block writes 14
        assertCorrupt(try decode(raw(prefix) + b + end, 115), "decodes to 14 bytes, its header says 15")
    }

    func testOutputOverTheLimitFails() throws {
        let cases = try referenceCases()
        for name in ["text-600", "random-3000", "depth-192x256", "v1-depth-192x256"] {
            let c = try XCTUnwrap(cases[name])
            assertCorrupt(try decode(c.stream, c.raw.count - 1), "decodes to \(c.raw.count) bytes, more than the \(c.raw.count - 1) expected")
        }
        // A 24-byte stream declaring 4 GB: refused before anything is allocated.
        assertCorrupt(try decode(lzvn(rawBytes: .max, lzvnEnd) + end, 1 << 20), "decodes to 4294967295 bytes, more than the 1048576 expected")
        XCTAssertThrowsError(try LZFSE.decode([UInt8](), maxOutput: -1, name: "x"))
        XCTAssertEqual(try decode(cases["empty"]!.stream, 0), [])
    }
}
