import XCTest
import Foundation
@testable import DepthKit

/// Builds PLY files property by property: each vertex is a list of (type, value) written in the
/// file's encoding.
struct PLYBuilder {
    var format = "binary_little_endian"
    var properties: [(type: String, name: String)] = [("float", "x"), ("float", "y"), ("float", "z")]
    var vertices: [[Double]] = []
    var before = ""          // header lines for elements before the vertex element
    var beforeData: [UInt8] = []
    var after = ""           // header lines after the vertex element
    var afterData: [UInt8] = []
    var count: Int?          // declared vertex count (default: vertices.count)

    var bytes: [UInt8] {
        var header = "ply\nformat \(format) 1.0\ncomment test\n" + before + "element vertex \(count ?? vertices.count)\n"
        for p in properties { header += "property \(p.type) \(p.name)\n" }
        header += after + "end_header\n"
        var out = Array(header.utf8) + beforeData
        for v in vertices {
            if format == "ascii" {
                out += Array((v.map { formatASCII($0) }.joined(separator: " ") + "\n").utf8)
            } else {
                for (p, value) in zip(properties, v) { out += PLYBuilder.encode(value, p.type, big: format == "binary_big_endian") }
            }
        }
        return out + afterData
    }

    private func formatASCII(_ v: Double) -> String {
        v == v.rounded() && abs(v) < 1e15 ? String(Int64(v)) : "\(v)"
    }

    static func encode(_ v: Double, _ type: String, big: Bool) -> [UInt8] {
        func le<T: FixedWidthInteger>(_ x: T) -> [UInt8] {
            let y = big ? x.bigEndian : x.littleEndian
            return withUnsafeBytes(of: y) { Array($0) }
        }
        switch type {
        case "char", "int8": return le(Int8(v))
        case "uchar", "uint8": return le(UInt8(v))
        case "short", "int16": return le(Int16(v))
        case "ushort", "uint16": return le(UInt16(v))
        case "int", "int32": return le(Int32(v))
        case "uint", "uint32": return le(UInt32(v))
        case "float", "float32": return le(Float(v).bitPattern)
        case "double", "float64": return le(v.bitPattern)
        default: return [0, 0, 0, 0]   // unknown types and lists: bytes the reader must reject before reading
        }
    }
}

final class PLYReaderTests: XCTestCase {
    let xyzrgb: [(type: String, name: String)] = [("float", "x"), ("float", "y"), ("float", "z"),
                                                 ("uchar", "red"), ("uchar", "green"), ("uchar", "blue")]

    /// Every encoding, through a file and from memory, with a chunk so small that vertices, lines
    /// and the header straddle chunk boundaries.
    private func decodeAll(_ bytes: [UInt8], file: StaticString = #filePath, line: UInt = #line) throws -> PLYContents {
        let dir = TempDir()
        let path = dir.write("c.ply", bytes)
        var calls: [(Int, Int)] = []
        let loaded = try PLYReader.load(path) { calls.append(($0, $1)) }
        XCTAssertEqual(calls.last.map { [$0.0, $0.1] }, [bytes.count, bytes.count], "progress ends at the total", file: file, line: line)
        XCTAssertTrue(zip(calls, calls.dropFirst()).allSatisfy { $0.0 <= $1.0 }, "progress grows", file: file, line: line)
        for chunk in [16, 37, 1 << 20] {
            let decoded = try PLYReader.decode(bytes, chunkSize: chunk)
            XCTAssertEqual(decoded.cloud, loaded.cloud, "chunk \(chunk)", file: file, line: line)
            XCTAssertEqual(decoded.hasColor, loaded.hasColor, file: file, line: line)
            XCTAssertEqual(decoded.nonFiniteSkipped, loaded.nonFiniteSkipped, file: file, line: line)
        }
        return loaded
    }

    func testThreeEncodingsAgree() throws {
        var b = PLYBuilder(properties: xyzrgb)
        b.vertices = (0..<50).map { (i: Int) -> [Double] in
            let d = Double(i)
            return [d * 0.25, -d, 1 + d / 8, d * 5, 255, d]
        }
        var clouds: [PointCloud] = []
        for format in ["binary_little_endian", "binary_big_endian", "ascii"] {
            b.format = format
            let c = try decodeAll(b.bytes)
            XCTAssertTrue(c.hasColor, format)
            XCTAssertEqual(c.nonFiniteSkipped, 0)
            clouds.append(c.cloud)
        }
        XCTAssertEqual(clouds[0].count, 50)
        XCTAssertEqual(clouds[0].positions[3], SIMD3(0.75, -3, 1.375))
        XCTAssertEqual(clouds[0].colors[3], SIMD3(15, 255, 3))
        XCTAssertEqual(clouds[1], clouds[0])
        XCTAssertEqual(clouds[2], clouds[0])
    }

    func testWriterOutputReadsBackWithProgressOnChunks() throws {
        let positions = (0..<1000).map { SIMD3<Float>(Float($0) * 0.001, Float($0 % 7), -Float($0) / 3) }
        let colors = (0..<1000).map { SIMD3<UInt8>(UInt8($0 % 256), UInt8($0 % 13), 9) }
        let cloud = PointCloud(positions: positions, colors: colors)
        for ascii in [false, true] {
            let bytes = PLYWriter.encode(cloud, ascii: ascii)
            let dir = TempDir()
            let path = dir.write("w.ply", bytes)
            var calls = 0
            let c = try PLYReader.load(path, chunkSize: 1024) { _, total in
                XCTAssertEqual(total, bytes.count)
                calls += 1
            }
            XCTAssertEqual(c.cloud, cloud)
            XCTAssertGreaterThan(calls, bytes.count / 1024, "one progress call a chunk")
        }
    }

    func testDoublesNormalsAndOtherTypesAreSkippedOrConverted() throws {
        var b = PLYBuilder()
        b.properties = [("double", "x"), ("float64", "y"), ("int", "z"), ("float", "nx"), ("float32", "ny"), ("short", "nz"),
                        ("uint8", "red"), ("uchar", "green"), ("uint8", "blue"), ("uchar", "alpha"), ("ushort", "intensity"),
                        ("char", "c"), ("uint", "u"), ("int16", "s")]
        b.vertices = [[1.5, -2.25, 7, 0.1, 0.2, -3, 10, 20, 30, 255, 65535, -5, 4_000_000_000, -300]]
        for format in ["binary_little_endian", "binary_big_endian", "ascii"] {
            b.format = format
            let c = try decodeAll(b.bytes)
            XCTAssertEqual(c.cloud.positions, [SIMD3(1.5, -2.25, 7)], format)
            XCTAssertEqual(c.cloud.colors, [SIMD3(10, 20, 30)], format)
        }
    }

    func testFloatAndShortColorsAreScaled() throws {
        var b = PLYBuilder()
        b.properties += [("float", "red"), ("double", "green"), ("ushort", "blue")]
        // 0.5·255 = 127.5 rounds to 128; out of range clamps; ushort 0…65535 → 0…255.
        b.vertices = [[0, 0, 1, 0.5, 1.5, 65535], [0, 0, 2, -1, 0.2, 32768], [0, 0, 3, 1, 0, 0]]
        for format in ["binary_little_endian", "ascii"] {
            b.format = format
            let c = try decodeAll(b.bytes)
            XCTAssertTrue(c.hasColor)
            XCTAssertEqual(c.cloud.colors, [SIMD3(128, 255, 255), SIMD3(0, 51, 128), SIMD3(255, 0, 0)], format)
        }
    }

    /// Found by `scripts/fuzz ply`: an ASCII ushort color of 65735 trapped converting to a byte.
    /// ASCII values outside a color type's range clamp to it.
    func testASCIIColorsOutsideTheirTypeClamp() throws {
        var b = PLYBuilder()
        b.format = "ascii"
        b.properties += [("ushort", "red"), ("ushort", "green"), ("uchar", "blue")]
        b.vertices = [[1, 2, 3, 65735, -7, 300], [1, 2, 3, 1e18, -1e18, -5]]
        XCTAssertEqual(try decodeAll(b.bytes).cloud.colors, [SIMD3(255, 0, 255), SIMD3(255, 0, 0)])
        // The fuzzer's input itself: a face element before the vertices, a NaN vertex, garbage after.
        let found = Array("ply\nformat ascii 1.0\nelement face 1\nproperty list uchar int vertex_indices\nelement vertex 2\n"
            .utf8) + Array(("property float x\nproperty float y\nproperty float z\nproperty ushort red\nproperty ushort green\n"
            + "property ushort blue\nend_header\n3 0 1 1\n1 2 3 65735 0 7\nnan 1 2 0 0 0\n").utf8)
        let c = try decodeAll(found)
        XCTAssertEqual(c.cloud.colors, [SIMD3(255, 0, 0)])
        // And the exact bytes it found (garbage after the second vertex): one error, no trap.
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/fuzz/ply-ushort-color-out-of-range.ply")
        let bytes = try [UInt8](Data(contentsOf: fixture))
        XCTAssertThrowsError(try PLYReader.decode(bytes, name: "crash.ply")) { e in
            XCTAssertTrue("\(e)".contains("crash.ply"), "\(e)")
        }
    }

    func testNoColorIsWhiteAndPartialColorIsNoColor() throws {
        var b = PLYBuilder()
        b.vertices = [[1, 2, 3], [4, 5, 6]]
        var c = try decodeAll(b.bytes)
        XCTAssertFalse(c.hasColor)
        XCTAssertEqual(c.cloud.colors, [SIMD3(255, 255, 255), SIMD3(255, 255, 255)])
        b.properties += [("uchar", "red"), ("uchar", "green")]
        b.vertices = [[1, 2, 3, 9, 9]]
        c = try decodeAll(b.bytes)
        XCTAssertFalse(c.hasColor)
        XCTAssertEqual(c.cloud.colors, [SIMD3(255, 255, 255)])
    }

    func testNonFiniteVerticesAreSkippedAndCounted() throws {
        var b = PLYBuilder(properties: xyzrgb)
        b.vertices = [[1, 2, 3, 1, 2, 3], [.nan, 0, 1, 0, 0, 0], [0, .infinity, 1, 0, 0, 0], [0, 0, -.infinity, 0, 0, 0], [4, 5, 6, 4, 5, 6]]
        for format in ["binary_little_endian", "binary_big_endian", "ascii"] {
            b.format = format
            let c = try decodeAll(b.bytes)
            XCTAssertEqual(c.nonFiniteSkipped, 3, format)
            XCTAssertEqual(c.cloud.positions, [SIMD3(1, 2, 3), SIMD3(4, 5, 6)], format)
            XCTAssertEqual(c.cloud.colors, [SIMD3(1, 2, 3), SIMD3(4, 5, 6)], format)
        }
        // A double beyond Float's range is not finite as a Float.
        var d = PLYBuilder(properties: [("double", "x"), ("double", "y"), ("double", "z")])
        d.vertices = [[1e300, 0, 1], [0, 0, 1]]
        XCTAssertEqual(try decodeAll(d.bytes).nonFiniteSkipped, 1)
    }

    func testFaceElementsBeforeAndAfterAreSkipped() throws {
        var b = PLYBuilder(properties: xyzrgb)
        b.vertices = [[1, 2, 3, 4, 5, 6], [7, 8, 9, 10, 11, 12]]
        b.after = "element face 2\nproperty list uchar int vertex_indices\n"
        let face = [UInt8(3)] + [0, 1, 1].flatMap { PLYBuilder.encode($0, "int", big: false) }
        b.afterData = face + face
        let expected = try decodeAll(b.bytes).cloud
        XCTAssertEqual(expected.positions, [SIMD3(1, 2, 3), SIMD3(7, 8, 9)])
        // A mesh whose face and a fixed-size element come first.
        b.after = ""; b.afterData = []
        b.before = "element face 2\nproperty list uchar int vertex_indices\nproperty uchar flags\nelement camera 1\nproperty float view_px\nproperty double k\n"
        b.beforeData = face + [1] + face + [2] + [UInt8](repeating: 0, count: 12)
        XCTAssertEqual(try decodeAll(b.bytes).cloud, expected)
        b.format = "ascii"
        b.beforeData = Array("3 0 1 1 1\n\n3 0 1 1 2\n0.5 1\n".utf8)
        XCTAssertEqual(try decodeAll(b.bytes).cloud, expected)
    }

    func testASCIIWithCRLFTabsAndBlankLines() throws {
        let text = "ply\r\nformat ascii 1.0\r\nelement vertex 2\r\nproperty float x\r\nproperty float y\r\nproperty float z\r\nend_header\r\n"
            + "1\t2  3\r\n\r\n  -4e-1 5.5 6 \r\n"
        let c = try decodeAll(Array(text.utf8))
        XCTAssertEqual(c.cloud.positions, [SIMD3(1, 2, 3), SIMD3(-0.4, 5.5, 6)])
        // The last line may lack its newline.
        XCTAssertEqual(try decodeAll(Array(text.dropLast(2).utf8)).cloud, c.cloud)
    }

    func testEmptyCloud() throws {
        let c = try decodeAll(PLYBuilder(properties: xyzrgb).bytes)
        XCTAssertEqual(c.cloud.count, 0)
        XCTAssertTrue(c.hasColor)
    }

    // MARK: - Bad files (issue 8 item 5): each one error naming the file and the problem.

    func testBadPLYFiles() throws {
        let dir = TempDir()
        func check(_ name: String, _ bytes: [UInt8], _ fragment: String, line: UInt = #line) {
            let p = dir.write(name, bytes)
            XCTAssertFileError(try PLYReader.load(p), path: p, fragment, line: line)
            XCTAssertFileError(try PLYReader.decode(bytes, name: name, chunkSize: 16), path: name, fragment, line: line)
        }
        var b = PLYBuilder(properties: xyzrgb)
        b.vertices = [[1, 2, 3, 4, 5, 6], [1, 2, 3, 4, 5, 6], [1, 2, 3, 4, 5, 6]]
        // Truncated inside a vertex.
        check("t.ply", Array(b.bytes.dropLast(4)), "truncated PLY: the data ends inside vertex 2 of 3")
        // More vertices declared than the data holds, in every encoding.
        b.count = 5
        check("n.ply", b.bytes, "PLY header declares 5 vertices but the data holds only 3")
        b.format = "binary_big_endian"
        check("nb.ply", b.bytes, "PLY header declares 5 vertices but the data holds only 3")
        b.format = "ascii"
        check("na.ply", b.bytes, "PLY header declares 5 vertices but the data holds only 3")
        // A count too large to allocate is an error, not a crash.
        b.format = "binary_little_endian"; b.count = Int.max
        check("huge.ply", b.bytes, "PLY header declares \(Int.max) vertices but the data holds only 3")
        b.count = nil
        // Unknown property type.
        var u = b; u.properties[3].type = "half"
        check("u.ply", u.bytes, "unknown PLY property type 'half' (property red of element vertex)")
        var uf = b; uf.after = "element face 1\nproperty list uchar bogus vertex_indices\n"
        check("uf.ply", uf.bytes, "unknown PLY property type 'bogus'")
        // A list property in the vertex element.
        var l = b; l.properties.append(("list uchar int", "vertex_indices"))
        check("l.ply", l.bytes, "PLY vertex element has a list property 'vertex_indices'")
        // No vertex element.
        check("nv.ply", Array("ply\nformat ascii 1.0\nelement face 1\nproperty list uchar int vertex_indices\nend_header\n3 0 1 2\n".utf8),
              "PLY header has no vertex element")
        // Others.
        var nz = b; nz.properties[2].name = "w"
        check("nz.ply", nz.bytes, "PLY vertex element has no 'z' property")
        check("x.ply", Array("hello".utf8), "not a PLY file")
        check("h.ply", Array("ply\nformat ascii 1.0\n".utf8), "no end_header line")
        check("f.ply", Array("ply\nformat binary_middle_endian 1.0\nend_header\n".utf8), "PLY format binary_middle_endian is not supported")
        check("k.ply", Array("ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nbogus\nend_header\n".utf8), "corrupt PLY header: 'bogus'")
        var a = b; a.format = "ascii"
        let text = String(decoding: a.bytes, as: UTF8.self)
        check("a1.ply", Array(text.replacingOccurrences(of: "1 2 3 4 5 6\n", with: "1 2 x 4 5 6\n").utf8), "corrupt PLY: vertex 0 is not 6 numbers")
        check("a2.ply", Array(text.replacingOccurrences(of: "1 2 3 4 5 6\n", with: "1 2 3 4 5\n").utf8), "corrupt PLY: vertex 0 is not 6 numbers (found 5)")
        check("a3.ply", Array(text.replacingOccurrences(of: "1 2 3 4 5 6\n", with: "1 2 3 4 5 6 7\n").utf8), "corrupt PLY: vertex 0 has more than 6 numbers")
        check("a4.ply", Array(text.replacingOccurrences(of: "1 2 3 4 5 6\n", with: "1 2 3 4 5 6x\n").utf8), "corrupt PLY: vertex 0 is not 6 numbers")
        var face = b; face.before = "element face 2\nproperty list uchar int vertex_indices\n"; face.beforeData = [3, 0, 0]
        check("fb.ply", face.bytes, "truncated PLY: the data ends inside element face")
        XCTAssertFileError(try PLYReader.load(dir.file("none.ply")), "no such file")
        XCTAssertFileError(try PLYReader.load(dir.write("e.ply", [])), "file is empty")
        XCTAssertFileError(try PLYReader.load(dir.path), "is a directory")
    }
}
