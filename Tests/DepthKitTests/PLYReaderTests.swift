import XCTest
import TestSupport
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
            XCTAssertEqual(decoded.normals, loaded.normals, "chunk \(chunk)", file: file, line: line)
            XCTAssertEqual(decoded.alphas, loaded.alphas, "chunk \(chunk)", file: file, line: line)
            XCTAssertEqual(decoded.header, loaded.header, "chunk \(chunk)", file: file, line: line)
        }
        XCTAssertEqual(loaded.normals.map(\.count) ?? loaded.cloud.count, loaded.cloud.count, "one normal a point", file: file, line: line)
        XCTAssertEqual(loaded.alphas.map(\.count) ?? loaded.cloud.count, loaded.cloud.count, "one alpha a point", file: file, line: line)
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

    func testACloudThatWouldNotFitInMemoryIsRefusedBeforeLoading() throws {
        var b = PLYBuilder(properties: xyzrgb)
        b.vertices = (0..<1000).map { i in [Double(i), 0, 1, 1, 2, 3] }
        let dir = TempDir()
        let path = dir.write("big.ply", b.bytes)
        // 1,000 points of position and color need 20,000 bytes (16 + 4 a point).
        XCTAssertEqual(PLYReader.bytesPerPoint(PLYReader.VertexLayout(PLYReader.Element(name: "vertex", count: 0,
            properties: xyzrgb.map { PLYReader.Property(name: $0.name, type: PLYReader.ScalarType(Substring($0.type))!, typeName: $0.type) }))), 20)
        setenv("DEPTHLENS_MEMORY_AVAILABLE", "19999", 1)
        defer { unsetenv("DEPTHLENS_MEMORY_AVAILABLE") }
        XCTAssertThrowsError(try PLYReader.load(path)) { error in
            XCTAssertEqual("\(error)", "\(path): 1000 points need 0 MiB of memory and only 0 MiB is available; not loaded "
                           + "(close other programs, or thin the cloud first)")
        }
        setenv("DEPTHLENS_MEMORY_AVAILABLE", "20000", 1)
        XCTAssertEqual(try PLYReader.load(path).cloud.count, 1000, "exactly enough memory loads")
        unsetenv("DEPTHLENS_MEMORY_AVAILABLE")
        XCTAssertNotNil(MemoryBudget.available(), "MemAvailable is readable on Linux")
        XCTAssertEqual(MemoryBudget.describe(3 * 1_048_576), "3 MiB")
        XCTAssertEqual(MemoryBudget.describe(1_073_741_824 + 268_435_456), "1.25 GiB")
        XCTAssertEqual(MemoryBudget.describe(20 * 1_073_741_824 + 10_737_418), "20.01 GiB")
        XCTAssertEqual(MemoryBudget.field("MemAvailable:", in: Array("MemTotal: 10 kB\nMemAvailable:    2048 kB\n".utf8)), 2048)
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

// MARK: - PLY from every writer (issue 19 item 4)

extension PLYReaderTests {
    private static let formats = ["binary_little_endian", "binary_big_endian", "ascii"]

    /// One vertex `values` (x y z then the other properties) in `format`, ending ASCII lines with `ending`.
    private func body(_ vertices: [[Double]], _ types: [String], _ format: String, ending: String = "\n") -> [UInt8] {
        if format == "ascii" {
            return Array(vertices.map { $0.map { "\($0)" }.joined(separator: " ") + ending }.joined().utf8)
        }
        return vertices.flatMap { v in zip(v, types).flatMap { PLYBuilder.encode($0, $1, big: format == "binary_big_endian") } }
    }

    /// Header lines ending in LF, CRLF or a bare CR; the binary body starts right after `end_header`
    /// and its one line ending, also when the first data byte is itself a LF or a CR.
    func testHeaderLineEndingsAndTheFirstBodyByte() throws {
        // Floats whose first byte in the file is 0x0A or 0x0D: little-endian low bytes, big-endian high bytes.
        let xs = [Float(bitPattern: 0x3F80_000A), Float(bitPattern: 0x3F80_000D),
                  Float(bitPattern: 0x0A00_000D), Float(bitPattern: 0x0D00_000A)]
        let types = ["float", "float", "float", "uchar", "uchar", "uchar"]
        for ending in ["\n", "\r\n", "\r"] {
            for format in Self.formats {
                for x in xs {
                    let header = ["ply", "format \(format) 1.0", "element vertex 2", "property float x", "property float y",
                                  "property float z", "property uchar red", "property uchar green", "property uchar blue",
                                  "end_header"].joined(separator: ending) + ending
                    let bytes = Array(header.utf8) + body([[Double(x), 2, 3, 10, 20, 30], [-1, -2, -3, 40, 50, 60]], types, format, ending: ending)
                    let what = "\(format), ending \(Array(ending.utf8)), x \(x.bitPattern)"
                    let c = try decodeAll(bytes)
                    XCTAssertEqual(c.cloud.positions, [SIMD3(x, 2, 3), SIMD3(-1, -2, -3)], what)
                    XCTAssertEqual(c.cloud.colors, [SIMD3(10, 20, 30), SIMD3(40, 50, 60)], what)
                    XCTAssertEqual(c.header?.bareCRLineEnds, ending == "\r", what)
                    XCTAssertEqual(c.header?.format, format)
                }
            }
        }
    }

    /// Blanks and tabs around keywords and counts (a first line `ply ` with trailing blanks, a byte
    /// order mark), comments and obj_info anywhere, elements with list properties before and after
    /// the vertices: in every encoding and with every line ending.
    func testBlanksTabsCommentsAndElementsAround() throws {
        let types = ["float", "float32", "double", "uchar", "uint8", "uchar"]
        let vertices: [[Double]] = [[1.5, -2, 3, 1, 2, 3], [4, 5.25, -6, 250, 0, 7]]
        for ending in ["\n", "\r\n", "\r"] {
            for format in Self.formats {
                for first in ["ply ", "ply\t \t", "  ply", "\u{FEFF}ply"] {
                    let lines = [first, "comment first comment", "\tformat  \(format)\t1.0 ", "obj_info made by hand",
                                 "element  face\t2 ", "comment inside an element", "property list uchar int vertex_indices",
                                 " property\tuchar  flags ", "element\tvertex  2\t", "comment between properties",
                                 "property  float\tx", "property float32 y  ", "obj_info again", "property\tdouble z",
                                 "property uchar red", "property uint8 green", "  comment indented", "property uchar blue",
                                 "element edge 1 ", "property list uint8 float32 weights", "comment last", "end_header \t"]
                    var bytes = Array((lines.joined(separator: ending) + ending).utf8)
                    if format == "ascii" {
                        bytes += Array(("3 0 1 1 9" + ending + "4 1 1 0 0 255" + ending).utf8)
                    } else {
                        let big = format == "binary_big_endian"
                        for (indices, flags) in [([0.0, 1, 1], 9.0), ([1.0, 1, 0, 0], 255)] {
                            bytes += [UInt8(indices.count)] + indices.flatMap { PLYBuilder.encode($0, "int", big: big) } + [UInt8(flags)]
                        }
                    }
                    bytes += body(vertices, types, format, ending: ending)
                    bytes += format == "ascii" ? Array(("2 0.5 0.25" + ending).utf8)
                                               : [2] + [0.5, 0.25].flatMap { PLYBuilder.encode($0, "float", big: format == "binary_big_endian") }
                    let what = "\(format), first line \(Array(first.utf8)), ending \(Array(ending.utf8))"
                    let c = try decodeAll(bytes)
                    XCTAssertEqual(c.cloud.positions, [SIMD3(1.5, -2, 3), SIMD3(4, 5.25, -6)], what)
                    XCTAssertEqual(c.cloud.colors, [SIMD3(1, 2, 3), SIMD3(250, 0, 7)], what)
                    XCTAssertEqual(c.header?.elements.map(\.name), ["face", "vertex", "edge"], what)
                    XCTAssertEqual(c.header?.elements.map(\.count), [2, 2, 1], what)
                    XCTAssertEqual(c.header?.elements[1].properties.map(\.description),
                                   ["float x", "float32 y", "double z", "uchar red", "uint8 green", "uchar blue"], what)
                    XCTAssertEqual(c.header?.elements[0].properties.map(\.description),
                                   ["list uchar int vertex_indices", "uchar flags"], what)
                }
            }
        }
    }

    /// Every type in both spellings, for coordinates and colors.
    func testBothSpellingsOfEveryType() throws {
        // (spelling, other spelling, value, its color byte: integers clamped, ushort scaled, floats 0…1 ×255)
        let types: [(String, String, Double, UInt8)] = [
            ("char", "int8", -7, 0), ("char", "int8", 100, 100), ("uchar", "uint8", 200, 200),
            ("short", "int16", -3000, 0), ("ushort", "uint16", 60000, 233), ("int", "int32", -70000, 0),
            ("uint", "uint32", 4_000_000, 255), ("float", "float32", 0.5, 128), ("double", "float64", -2.25, 0)]
        for (a, b, v, byte) in types {
            for format in Self.formats {
                var builder = PLYBuilder(format: format)
                builder.properties = [(a, "x"), (b, "y"), (a, "z"), (b, "red"), (a, "green"), (b, "blue")]
                builder.vertices = [[v, v, v, v, v, v]]
                let c = try decodeAll(builder.bytes)
                XCTAssertEqual(c.cloud.positions, [SIMD3(repeating: Float(v))], "\(a)/\(b) \(format)")
                XCTAssertEqual(c.cloud.colors, [SIMD3(repeating: byte)], "\(a)/\(b) \(format)")
                XCTAssertEqual(c.header?.elements[0].properties.map(\.type), [a, b, a, b, a, b])
            }
        }
    }

    /// Color as red/green/blue, r/g/b or diffuse_*, with or without alpha, integer or float;
    /// normals as nx ny nz or normal_x normal_y normal_z; all kept in step when a vertex is skipped.
    func testColorAlphaAndNormalProperties() throws {
        struct Case {
            var properties: [(type: String, name: String)]
            var values: [Double]          // after x y z
            var colors: [SIMD3<UInt8>]?   // nil: no color (white)
            var alpha: UInt8?
            var normal: SIMD3<Float>?
            var colorNames: [String]
            var alphaName: String?
            var normalNames: [String]
        }
        let cases = [
            Case(properties: [("uchar", "r"), ("uchar", "g"), ("uchar", "b"), ("uchar", "a")], values: [10, 20, 30, 40],
                 colors: [SIMD3(10, 20, 30)], alpha: 40, colorNames: ["r", "g", "b"], alphaName: "a", normalNames: []),
            Case(properties: [("float", "diffuse_red"), ("float", "diffuse_green"), ("float", "diffuse_blue"), ("float", "diffuse_alpha")],
                 values: [0.5, 1, 0, 0.25], colors: [SIMD3(128, 255, 0)], alpha: 64,   // 63.75 rounds to 64
                 colorNames: ["diffuse_red", "diffuse_green", "diffuse_blue"], alphaName: "diffuse_alpha", normalNames: []),
            Case(properties: [("ushort", "red"), ("ushort", "green"), ("ushort", "blue"), ("ushort", "alpha")],
                 values: [65535, 0, 32768, 257], colors: [SIMD3(255, 0, 128)], alpha: 1,
                 colorNames: ["red", "green", "blue"], alphaName: "alpha", normalNames: []),
            Case(properties: [("float", "nx"), ("float", "ny"), ("float", "nz"), ("uchar", "red"), ("uchar", "green"), ("uchar", "blue")],
                 values: [0.5, -0.25, 1, 1, 2, 3], colors: [SIMD3(1, 2, 3)], normal: SIMD3(0.5, -0.25, 1),
                 colorNames: ["red", "green", "blue"], normalNames: ["nx", "ny", "nz"]),
            Case(properties: [("double", "normal_x"), ("double", "normal_y"), ("double", "normal_z"), ("float", "curvature")],
                 values: [0, -1, 0.125, 7], normal: SIMD3(0, -1, 0.125),
                 colorNames: [], normalNames: ["normal_x", "normal_y", "normal_z"]),
            // "a" is alpha only beside r g b; "alpha" alone is kept for a white cloud.
            Case(properties: [("uchar", "a")], values: [9], colorNames: [], normalNames: []),
            Case(properties: [("uchar", "alpha")], values: [9], alpha: 9, colorNames: [], alphaName: "alpha", normalNames: []),
            // Sets are not mixed: red green and b is no color.
            Case(properties: [("uchar", "red"), ("uchar", "green"), ("uchar", "b")], values: [1, 2, 3], colorNames: [], normalNames: []),
        ]
        for (i, k) in cases.enumerated() {
            for format in Self.formats {
                var b = PLYBuilder(format: format)
                b.properties += k.properties
                // A non-finite vertex between two good ones: its color, alpha and normal go with it.
                let bad = [Double.nan, 1, 1] + k.values.map { _ in 0 }
                b.vertices = [[1, 2, 3] + k.values, bad, [4, 5, 6] + k.values]
                let c = try decodeAll(b.bytes)
                let what = "case \(i), \(format)"
                XCTAssertEqual(c.cloud.positions, [SIMD3(1, 2, 3), SIMD3(4, 5, 6)], what)
                XCTAssertEqual(c.nonFiniteSkipped, 1, what)
                XCTAssertEqual(c.hasColor, k.colors != nil, what)
                XCTAssertEqual(c.cloud.colors, (k.colors ?? [SIMD3(255, 255, 255)]) + (k.colors ?? [SIMD3(255, 255, 255)]), what)
                XCTAssertEqual(c.alphas, k.alpha.map { [$0, $0] }, what)
                XCTAssertEqual(c.normals, k.normal.map { [$0, $0] }, what)
                XCTAssertEqual(c.header?.colorProperties, k.colorNames, what)
                XCTAssertEqual(c.header?.alphaProperty, k.alphaName, what)
                XCTAssertEqual(c.header?.normalProperties, k.normalNames, what)
                XCTAssertEqual(c.header?.colorFromSphericalHarmonics, false, what)
            }
        }
    }

    /// 3D Gaussian Splatting: color from the SH DC term, 0.5 + 0.28209479·f_dc clamped, ×255
    /// rounded; alpha = sigmoid(opacity) ×255 rounded. Values worked by hand.
    func testGaussianSplattingColorAndOpacity() throws {
        var b = PLYBuilder()
        b.properties += [("float", "nx"), ("float", "ny"), ("float", "nz"), ("float", "f_dc_0"), ("float", "f_dc_1"),
                         ("float", "f_dc_2")] + (0..<45).map { ("float", "f_rest_\($0)") }
                        + [("float", "opacity"), ("float", "scale_0"), ("float", "scale_1"), ("float", "scale_2"),
                           ("float", "rot_0"), ("float", "rot_1"), ("float", "rot_2"), ("float", "rot_3")]
        let rest = [Double](repeating: 0.75, count: 45), scaleRot = [Double](repeating: -3, count: 7)
        func vertex(_ i: Double, _ dc: [Double], _ opacity: Double) -> [Double] {
            [i, 0, 1, 0, 0, 0] + dc + rest + [opacity] + scaleRot
        }
        b.vertices = [
            vertex(0, [0, 1, -1], 0),                 // 127.5 → 128; 0.78209 → 199.43 → 199; 0.21791 → 55.57 → 56; σ(0) = 0.5 → 128
            vertex(1, [10, -10, .nan], 1.0986123),    // clamped 255, 0, NaN 0; σ(ln 3) = 0.75 → 191.25 → 191
            vertex(2, [1, 1, 1], -.infinity),         // σ(−∞) = 0
            vertex(3, [0.5, -0.5, 2], 100),           // 0.64105 → 163.47 → 163; 0.35895 → 91.53 → 92; 1.06419 → 255; σ(100) → 255
            vertex(4, [-1.7724539, 0, 0], -2),        // 0.5 − 0.5 → 0 (exactly 2.2e-8 → 0); σ(−2) = 0.1192 → 30.40 → 30
        ]
        for format in Self.formats {
            b.format = format
            let c = try decodeAll(b.bytes)
            XCTAssertTrue(c.hasColor, format)
            XCTAssertEqual(c.cloud.colors, [SIMD3(128, 199, 56), SIMD3(255, 0, 0), SIMD3(199, 199, 199), SIMD3(163, 92, 255),
                                            SIMD3(0, 128, 128)], format)
            XCTAssertEqual(c.alphas, [128, 191, 0, 255, 30], format)
            XCTAssertEqual(c.rgba8(at: 0), 128 | 199 << 8 | 56 << 16 | 128 << 24, format)
            XCTAssertEqual(c.rgba8(at: 2), 199 | 199 << 8 | 199 << 16, format)
            XCTAssertEqual(c.normals, [SIMD3<Float>](repeating: .zero, count: 5), format)
            XCTAssertEqual(c.header?.colorProperties, ["f_dc_0", "f_dc_1", "f_dc_2"])
            XCTAssertEqual(c.header?.colorFromSphericalHarmonics, true)
            XCTAssertEqual(c.header?.alphaProperty, "opacity")
            XCTAssertEqual(c.header?.alphaIsLogit, true)
        }
        // Explicit colors win over the SH term (the opacity still gives alpha); an opacity without
        // the SH term (not a 3DGS file) is no alpha.
        var rgb = PLYBuilder()
        rgb.properties += [("float", "f_dc_0"), ("float", "f_dc_1"), ("float", "f_dc_2"), ("float", "opacity"),
                           ("uchar", "red"), ("uchar", "green"), ("uchar", "blue")]
        rgb.vertices = [[0, 0, 1, 5, 5, 5, 0, 1, 2, 3]]
        var c = try decodeAll(rgb.bytes)
        XCTAssertEqual(c.cloud.colors, [SIMD3(1, 2, 3)])
        XCTAssertEqual(c.rgba8(at: 0), 1 | 2 << 8 | 3 << 16 | 128 << 24)
        XCTAssertEqual(c.alphas, [128])
        XCTAssertEqual(c.header?.colorFromSphericalHarmonics, false)
        var plain = PLYBuilder()
        plain.properties += [("float", "opacity")]
        plain.vertices = [[0, 0, 1, 3]]
        c = try decodeAll(plain.bytes)
        XCTAssertNil(c.alphas)
        XCTAssertEqual(c.rgba8(at: 0), 0xFFFF_FFFF, "white, opaque")
        XCTAssertFalse(c.hasColor)
    }

    /// Bad files with the new quirks still give one error naming the file and the problem.
    func testBadFilesWithOtherLineEndings() throws {
        func check(_ bytes: [UInt8], _ fragment: String, line: UInt = #line) {
            for chunk in [16, 1 << 20] {
                XCTAssertFileError(try PLYReader.decode(bytes, name: "q.ply", chunkSize: chunk), path: "q.ply", fragment, line: line)
            }
        }
        check(Array("ply".utf8), "no end_header line")
        check(Array("ply \t".utf8), "no end_header line")
        check(Array("plyx\n".utf8), "not a PLY file")
        check(Array("  ply x\n".utf8), "not a PLY file")
        check(Array("PLY\n".utf8), "not a PLY file")
        check([0xEF, 0xBB, 0xBF] + Array("hello".utf8), "not a PLY file")
        check(Array("ply\rformat ascii 1.0\relement vertex 1\rproperty float x\r".utf8), "no end_header line")
        let cr = "ply\rformat binary_little_endian 1.0\relement vertex 2\rproperty float x\rproperty float y\rproperty float z\rend_header\r"
        check(Array(cr.utf8) + [UInt8](repeating: 0x0A, count: 20), "truncated PLY: the data ends inside vertex 1 of 2")
        check(Array(cr.utf8) + [UInt8](repeating: 0x0A, count: 12), "PLY header declares 2 vertices but the data holds only 1")
        let crASCII = cr.replacingOccurrences(of: "binary_little_endian", with: "ascii")
        check(Array((crASCII + "1 2 3\r").utf8), "PLY header declares 2 vertices but the data holds only 1")
        check(Array((crASCII + "1 2 3\r4 5\r").utf8), "corrupt PLY: vertex 1 is not 3 numbers (found 2)")
        // A hostile count in a bare-CR ASCII file allocates nothing big: the error comes first.
        check(Array((crASCII.replacingOccurrences(of: "vertex 2", with: "vertex \(Int.max)") + "1 2 3\r").utf8),
              "PLY header declares \(Int.max) vertices but the data holds only 1")
    }

    /// Files written by Python's plyfile and trimesh (scripts/ply-corpus, a venv made on the first
    /// run): binary and ASCII, faces before and edges after the vertices, uchar/float/ushort colors
    /// with alpha, normals, and 3D Gaussian Splatting's layout. The expected points come from the
    /// values the Python script wrote, worked out there with the formulas (not with depthlens).
    func testFilesFromIndependentWriters() throws {
        struct Expected: Decodable {
            struct Element: Decodable { var name: String; var count: Int }
            var file, writer, format: String
            var elements: [Element]
            var vertexProperties: [String]
            var positions: [[Double]]
            var colors: [[Int]]?
            var alphas: [Int]?
            var normals: [[Double]]?
            var colorProperties: [String]
            var colorFromSH: Bool
            var alphaProperty: String?
            var alphaIsLogit: Bool
            var normalProperties: [String]
            var nonFinite: Int
        }
        let dir = TempDir()
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let r = try TestProcess.result(root.appendingPathComponent("scripts/ply-corpus").path, [dir.path], timeout: 600)
        let messages = r.stderr
        guard r.status == 0 else {
            return XCTFail("scripts/ply-corpus failed (exit \(r.status)): \(messages)")
        }
        let manifest = try JSONDecoder().decode([Expected].self, from: Data(contentsOf: URL(fileURLWithPath: dir.file("manifest.json"))))
        XCTAssertEqual(manifest.count, 9)
        XCTAssertEqual(Set(manifest.map(\.writer)), ["plyfile", "trimesh"])
        XCTAssertEqual(Set(manifest.map(\.format)), Set(Self.formats))
        func float3(_ v: [Double]) -> SIMD3<Float> { SIMD3(Float(v[0]), Float(v[1]), Float(v[2])) }
        for e in manifest {
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: dir.file(e.file))))
            let c = try decodeAll(bytes)
            XCTAssertGreaterThan(e.positions.count, 50, e.file)
            XCTAssertEqual(c.cloud.positions, e.positions.map(float3), e.file)
            XCTAssertEqual(c.nonFiniteSkipped, e.nonFinite, e.file)
            XCTAssertEqual(c.hasColor, e.colors != nil, e.file)
            if let colors = e.colors {
                XCTAssertEqual(c.cloud.colors, colors.map { SIMD3(UInt8($0[0]), UInt8($0[1]), UInt8($0[2])) }, e.file)
            }
            XCTAssertEqual(c.alphas, e.alphas.map { $0.map(UInt8.init) }, e.file)
            XCTAssertEqual(c.normals, e.normals.map { $0.map(float3) }, e.file)
            let h = try XCTUnwrap(c.header)
            XCTAssertEqual(h.format, e.format, e.file)
            XCTAssertEqual(h.elements.map(\.name), e.elements.map(\.name), e.file)
            XCTAssertEqual(h.elements.map(\.count), e.elements.map(\.count), e.file)
            XCTAssertEqual(h.elements.first { $0.name == "vertex" }?.properties.map(\.name), e.vertexProperties, e.file)
            XCTAssertEqual(h.colorProperties, e.colorProperties, e.file)
            XCTAssertEqual(h.colorFromSphericalHarmonics, e.colorFromSH, e.file)
            XCTAssertEqual(h.alphaProperty, e.alphaProperty, e.file)
            XCTAssertEqual(h.alphaIsLogit, e.alphaIsLogit, e.file)
            XCTAssertEqual(h.normalProperties, e.normalProperties, e.file)
        }
    }
}
