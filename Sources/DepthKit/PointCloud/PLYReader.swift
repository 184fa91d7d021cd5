#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads point clouds from PLY files, streamed in chunks so that a 20-million-point file never sits
/// in memory twice: the host holds the resulting arrays (20 bytes a point, plus 16 with normals and
/// 1 with alpha) and one reused chunk.
///
/// - Formats: `ascii`, `binary_little_endian`, `binary_big_endian` (version 1.0). Header lines end
///   in LF, CRLF or a bare CR (decided by the first line); the binary body starts right after
///   `end_header` and its one line ending. The first line is `ply`; blanks and tabs may surround
///   every keyword and count; `comment` and `obj_info` lines may stand anywhere in the header; type
///   names in both spellings (`float`/`float32`, `uchar`/`uint8`, …).
/// - The `vertex` element needs scalar `x y z` of any type. Color from `red green blue`, `r g b` or
///   `diffuse_red diffuse_green diffuse_blue` (the first complete set): `uchar`/`uint8` as they are,
///   `float`/`double` in 0…1 scaled by 255 and rounded (clamped to 0…1 first, NaN is 0), `ushort`
///   scaled from 0…65535, other integer types clamped to 0…255; alpha from `alpha`,
///   `diffuse_alpha` or (with `r g b`) `a`, converted the same way. Without color, a 3D Gaussian
///   Splatting file's SH DC term `f_dc_0..2` gives it: 0.5 + C0·f_dc (C0 = 0.28209479…), clamped,
///   ×255, rounded; its `opacity` (a logit) gives alpha = sigmoid(opacity). Without any color the
///   cloud is white and `hasColor` is false. Normals from `nx ny nz` or `normal_x normal_y normal_z`.
/// - Other vertex properties of any scalar type are skipped; a list property in the vertex element
///   is an error. Elements before the vertex element (list properties included, ASCII or binary)
///   are skipped; reading stops after the vertex element, so elements after it are never read.
/// - Vertices with a non-finite coordinate are skipped and counted (their normal and alpha too).
public enum PLYReader {
    /// Bytes read per `read(2)` call; the chunk buffer grows only for a longer header line or vertex.
    public static let defaultChunkSize = 4 << 20
    /// Longest header, ASCII line or binary vertex accepted (the chunk buffer never grows past it).
    static let maxChunkSize = 16 << 20

    /// Reads a point cloud file for viewing. `progress(done, total)` is called after every chunk
    /// read with the bytes read so far and the file size (for a progress bar on long loads), and
    /// once with `(total, total)` at the end.
    public static func load(_ path: String, progress: ((_ done: Int, _ total: Int) -> Void)? = nil) throws -> PLYContents {
        try load(path, chunkSize: defaultChunkSize, progress: progress)
    }

    /// The point cloud of a PLY file (colors white when it has none).
    public static func read(_ path: String) throws -> PointCloud {
        try load(path).cloud
    }

    /// Decodes PLY bytes held in memory, exactly as `load` decodes a file; `name` is the file
    /// name errors mention.
    public static func decode(_ bytes: [UInt8], name: String = "<memory>", chunkSize: Int = defaultChunkSize) throws -> PLYContents {
        var offset = 0
        let input = ChunkedInput(name: name, total: bytes.count, chunkSize: chunkSize) { dest, count in
            let n = min(count, bytes.count - offset)
            bytes.withUnsafeBytes { src in
                if n > 0 { dest.copyMemory(from: src.baseAddress! + offset, byteCount: n) }
            }
            offset += n
            return n
        }
        if bytes.isEmpty { throw DepthKitError.file(path: name, problem: "file is empty") }
        return try parse(input, progress: nil)
    }

    static func load(_ path: String, chunkSize: Int, progress: ((_ done: Int, _ total: Int) -> Void)?,
                     isCancelled: (() -> Bool)? = nil) throws -> PLYContents {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw FileSupport.openError(path, errno) }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw DepthKitError.file(path: path, problem: FileSupport.describe(errno)) }
        if (st.st_mode & S_IFMT) == S_IFDIR { throw DepthKitError.file(path: path, problem: "is a directory, not a file") }
        let size = Int(st.st_size)
        if size == 0 { throw DepthKitError.file(path: path, problem: "file is empty") }
        let input = ChunkedInput(name: path, total: size, chunkSize: chunkSize) { dest, count in
            while true {
                let n = Glibc.read(fd, dest, count)
                if n >= 0 { return n }
                if errno != EINTR {
                    throw DepthKitError.file(path: path, problem: "read failed: \(FileSupport.describe(errno))")
                }
            }
        }
        input.isCancelled = isCancelled
        return try parse(input, progress: progress)
    }

    // MARK: - Header

    enum ScalarType: Equatable {
        case int8, uint8, int16, uint16, int32, uint32, float32, float64

        init?(_ name: Substring) {
            switch name {
            case "char", "int8": self = .int8
            case "uchar", "uint8": self = .uint8
            case "short", "int16": self = .int16
            case "ushort", "uint16": self = .uint16
            case "int", "int32": self = .int32
            case "uint", "uint32": self = .uint32
            case "float", "float32": self = .float32
            case "double", "float64": self = .float64
            default: return nil
            }
        }

        var size: Int {
            switch self {
            case .int8, .uint8: return 1
            case .int16, .uint16: return 2
            case .int32, .uint32, .float32: return 4
            case .float64: return 8
            }
        }
    }

    struct Property {
        var name: String
        var type: ScalarType
        /// The type of the item count for a list property.
        var countType: ScalarType?
        /// The type names as the file spells them (`float` or `float32`…).
        var typeName: String
        var countTypeName: String?

        init(name: String, type: ScalarType, countType: ScalarType? = nil, typeName: String, countTypeName: String? = nil) {
            self.name = name; self.type = type; self.countType = countType
            self.typeName = typeName; self.countTypeName = countTypeName
        }
    }

    struct Element {
        var name: String
        var count: Int
        var properties: [Property] = []
    }

    enum Encoding {
        case ascii, littleEndian, bigEndian

        var name: String {
            switch self {
            case .ascii: return "ascii"
            case .littleEndian: return "binary_little_endian"
            case .bigEndian: return "binary_big_endian"
            }
        }
    }

    struct Header {
        var encoding: Encoding
        var elements: [Element]
        var vertexIndex: Int
    }

    /// Checks that the first line is `ply` (blanks and tabs around it allowed, and a UTF-8 byte
    /// order mark before it) and returns what ends the header's lines: LF (a CR before it is a
    /// blank, so CRLF works too) or, when the first line ends in a CR not followed by LF, a bare CR
    /// (old Mac-style writers such as Rhino). Consumes nothing.
    static func lineTerminator(_ input: ChunkedInput) throws -> UInt8 {
        let notPLY = input.error("not a PLY file")
        var i = 0
        if try input.ensure(3), input.byte(0) == 0xEF, input.byte(1) == 0xBB, input.byte(2) == 0xBF { i = 3 }
        while try input.ensure(i + 1), input.byte(i) == 0x20 || input.byte(i) == 0x09 { i += 1 }
        guard try input.ensure(i + 3), input.byte(i) == 0x70, input.byte(i + 1) == 0x6C, input.byte(i + 2) == 0x79 else {
            throw notPLY
        }
        i += 3
        while true {
            guard try input.ensure(i + 1) else { throw input.error("corrupt PLY header: no end_header line") }
            switch input.byte(i) {
            case 0x20, 0x09: i += 1
            case 0x0A: return 0x0A
            case 0x0D: return try input.ensure(i + 2) && input.byte(i + 1) == 0x0A ? 0x0A : 0x0D
            default: throw notPLY
            }
        }
    }

    /// Reads header lines up to `end_header`, leaving the input at the first data byte: right after
    /// `end_header` and its one line ending (LF, CRLF, or a bare CR in a file whose lines end so).
    static func parseHeader(_ input: ChunkedInput) throws -> Header {
        func bad(_ problem: String) -> DepthKitError { input.error(problem) }
        input.terminator = try lineTerminator(input)
        var encoding: Encoding?
        var elements: [Element] = []
        var first = true
        while true {
            guard let line = try input.nextLine() else { throw bad("corrupt PLY header: no end_header line") }
            if first { first = false; continue }   // "ply", checked by lineTerminator
            // Fields separated by blanks, tabs and the other line-end byte.
            let f = UnsafeRawBufferPointer(start: input.base + line.lowerBound, count: line.count)
                .split(whereSeparator: { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D || $0 == 0x0A })
                .map { Substring(String(decoding: $0, as: UTF8.self)) }
            guard let key = f.first else { continue }
            let text = f.joined(separator: " ")
            switch key {
            case "comment", "obj_info": continue
            case "end_header":
                guard let e = encoding else { throw bad("corrupt PLY header: no format line") }
                guard let v = elements.firstIndex(where: { $0.name == "vertex" }) else {
                    throw bad("PLY header has no vertex element")
                }
                let vertex = elements[v]
                if let list = vertex.properties.first(where: { $0.countType != nil }) {
                    throw bad("PLY vertex element has a list property '\(list.name)'; vertex properties must be scalars")
                }
                for axis in ["x", "y", "z"] where !vertex.properties.contains(where: { $0.name == axis }) {
                    throw bad("PLY vertex element has no '\(axis)' property")
                }
                return Header(encoding: e, elements: elements, vertexIndex: v)
            case "format":
                guard f.count == 3, f[2] == "1.0" || f[2] == "1" else { throw bad("corrupt PLY header: '\(text)'") }
                switch f[1] {
                case "ascii": encoding = .ascii
                case "binary_little_endian": encoding = .littleEndian
                case "binary_big_endian": encoding = .bigEndian
                default: throw bad("PLY format \(f[1]) is not supported (ascii, binary_little_endian, binary_big_endian)")
                }
            case "element":
                guard f.count == 3, let n = Int(f[2]), n >= 0 else { throw bad("corrupt PLY header: '\(text)'") }
                if f[1] == "vertex", elements.contains(where: { $0.name == "vertex" }) {
                    throw bad("corrupt PLY header: two vertex elements")
                }
                elements.append(Element(name: String(f[1]), count: n))
            case "property":
                guard !elements.isEmpty else { throw bad("corrupt PLY header: property before any element: '\(text)'") }
                let element = elements[elements.count - 1].name
                if f.count >= 2, f[1] == "list" {
                    guard f.count == 5 else { throw bad("corrupt PLY header: '\(text)'") }
                    guard let count = ScalarType(f[2]) else { throw unknownType(f[2], f[4], element, input) }
                    guard let item = ScalarType(f[3]) else { throw unknownType(f[3], f[4], element, input) }
                    if count == .float32 || count == .float64 { throw bad("PLY list property '\(f[4])' has a non-integer count type \(f[2])") }
                    elements[elements.count - 1].properties.append(
                        Property(name: String(f[4]), type: item, countType: count, typeName: String(f[3]), countTypeName: String(f[2])))
                } else {
                    guard f.count == 3 else { throw bad("corrupt PLY header: '\(text)'") }
                    guard let type = ScalarType(f[1]) else { throw unknownType(f[1], f[2], element, input) }
                    elements[elements.count - 1].properties.append(Property(name: String(f[2]), type: type, typeName: String(f[1])))
                }
            default:
                throw bad("corrupt PLY header: '\(text)'")
            }
        }
    }

    private static func unknownType(_ type: Substring, _ property: Substring, _ element: String, _ input: ChunkedInput) -> DepthKitError {
        input.error("unknown PLY property type '\(type)' (property \(property) of element \(element))")
    }

    // MARK: - Data

    typealias Field = (offset: Int, index: Int, type: ScalarType)

    /// The SH degree-0 constant of 3D Gaussian Splatting: color = 0.5 + C0 · f_dc.
    static let shC0 = 0.28209479177387814

    /// Where the fields a point needs sit in a vertex: offsets in bytes (binary) and indices (ASCII),
    /// and which properties give color, alpha and normals.
    struct VertexLayout {
        var stride = 0
        var x: Field, y: Field, z: Field
        var color: [Field]?
        /// The color is 3D Gaussian Splatting's SH DC term (`f_dc_0..2`), not a color value.
        var colorFromSH = false
        var colorNames: [String] = []
        var alpha: Field?
        /// The alpha is 3DGS's `opacity`, a logit (alpha = sigmoid(opacity)).
        var alphaIsLogit = false
        var alphaName: String?
        var normal: [Field]?
        var normalNames: [String] = []
        var types: [ScalarType]

        init(_ element: Element) {
            var fields: [String: Field] = [:]
            var offset = 0
            for (i, p) in element.properties.enumerated() {
                if fields[p.name] == nil { fields[p.name] = (offset, i, p.type) }
                offset += p.type.size
            }
            stride = offset
            types = element.properties.map(\.type)
            x = fields["x"]!; y = fields["y"]!; z = fields["z"]!
            func all(_ names: [String]) -> [Field]? {
                let found = names.compactMap { fields[$0] }
                return found.count == names.count ? found : nil
            }
            for names in [["red", "green", "blue"], ["r", "g", "b"], ["diffuse_red", "diffuse_green", "diffuse_blue"]] {
                if let found = all(names) { color = found; colorNames = names; break }
            }
            let dc = ["f_dc_0", "f_dc_1", "f_dc_2"]
            let gaussian = all(dc) != nil
            if color == nil, let found = all(dc) { color = found; colorNames = dc; colorFromSH = true }
            var alphaNames = ["alpha", "diffuse_alpha"]
            if colorNames == ["r", "g", "b"] { alphaNames.append("a") }
            if let name = alphaNames.first(where: { fields[$0] != nil }) {
                alpha = fields[name]; alphaName = name
            } else if gaussian, let o = fields["opacity"] {
                alpha = o; alphaName = "opacity"; alphaIsLogit = true
            }
            for names in [["nx", "ny", "nz"], ["normal_x", "normal_y", "normal_z"]] {
                if let found = all(names) { normal = found; normalNames = names; break }
            }
        }
    }

    static func parse(_ input: ChunkedInput, progress: ((_ done: Int, _ total: Int) -> Void)?) throws -> PLYContents {
        input.progress = progress
        let header = try parseHeader(input)
        for element in header.elements[..<header.vertexIndex] {
            try skip(element, encoding: header.encoding, input: input)
        }
        let vertex = header.elements[header.vertexIndex]
        let layout = VertexLayout(vertex)
        guard layout.stride <= maxChunkSize else { throw input.error("PLY vertex of \(layout.stride) bytes is too large") }
        // Never reserve more than the rest of the file can hold (a hostile count must not allocate).
        let left = max(0, input.total - input.consumed)
        let bound = header.encoding == .ascii ? left / (2 * vertex.properties.count) + 1 : left / layout.stride
        let capacity = min(vertex.count, bound)
        try checkMemory(points: capacity, layout: layout, input)
        var out = Points(capacity: capacity, layout: layout)
        if header.encoding == .ascii {
            try readASCII(vertex, layout, input, &out)
        } else {
            try readBinary(vertex, layout, bigEndian: header.encoding == .bigEndian, input, &out)
        }
        progress?(input.total, input.total)
        let colors = out.colors ?? [SIMD3<UInt8>](repeating: SIMD3(255, 255, 255), count: out.positions.count)
        let described = PLYHeader(
            format: header.encoding.name,
            elements: header.elements.map { e in
                PLYElement(name: e.name, count: e.count, properties: e.properties.map {
                    PLYProperty(name: $0.name, type: $0.typeName, listCountType: $0.countTypeName)
                })
            },
            bareCRLineEnds: input.terminator == 0x0D,
            colorProperties: layout.colorNames, colorFromSphericalHarmonics: layout.colorFromSH,
            alphaProperty: layout.alphaName, alphaIsLogit: layout.alphaIsLogit, normalProperties: layout.normalNames)
        return PLYContents(cloud: PointCloud(positions: out.positions, colors: colors),
                           hasColor: layout.color != nil, nonFiniteSkipped: out.nonFinite,
                           normals: out.normals, alphas: out.alphas, header: described)
    }

    /// Host bytes a loaded point takes: position and color always (white when the file has none),
    /// normal and alpha when the file has them.
    static func bytesPerPoint(_ layout: VertexLayout) -> Int {
        MemoryLayout<SIMD3<Float>>.stride + MemoryLayout<SIMD3<UInt8>>.stride
            + (layout.normal != nil ? MemoryLayout<SIMD3<Float>>.stride : 0) + (layout.alpha != nil ? 1 : 0)
    }

    /// Refuses, before allocating, a cloud whose arrays would not fit in the memory still available
    /// (`MemoryBudget`): one line naming the file, the points and both sizes, instead of a load
    /// killed half-way or a machine driven into swap.
    static func checkMemory(points: Int, layout: VertexLayout, _ input: ChunkedInput) throws {
        let needed = points * bytesPerPoint(layout)
        guard let available = MemoryBudget.available(), needed > available else { return }
        throw input.error("\(points) points need \(MemoryBudget.describe(needed)) of memory and only "
                          + "\(MemoryBudget.describe(available)) is available; not loaded (close other programs, "
                          + "or thin the cloud first)")
    }

    struct Points {
        var positions: [SIMD3<Float>] = []
        var colors: [SIMD3<UInt8>]?
        var alphas: [UInt8]?
        var normals: [SIMD3<Float>]?
        var nonFinite = 0
        init(capacity: Int, layout: VertexLayout) {
            positions.reserveCapacity(capacity)
            if layout.color != nil { colors = []; colors!.reserveCapacity(capacity) }
            if layout.alpha != nil { alphas = []; alphas!.reserveCapacity(capacity) }
            if layout.normal != nil { normals = []; normals!.reserveCapacity(capacity) }
        }
    }

    private static func shortage(_ n: Int, found: Int, partial: Bool, _ input: ChunkedInput) -> DepthKitError {
        partial ? input.error("truncated PLY: the data ends inside vertex \(found) of \(n)")
                : input.error("PLY header declares \(n) vertices but the data holds only \(found)")
    }

    static func readBinary(_ vertex: Element, _ layout: VertexLayout, bigEndian: Bool, _ input: ChunkedInput, _ out: inout Points) throws {
        let n = vertex.count, stride = layout.stride
        var done = 0
        while done < n {
            let k = min(input.available / stride, n - done)
            if k == 0 {
                guard try input.refill() else { throw shortage(n, found: done, partial: input.available > 0, input) }
                continue
            }
            let base = UnsafeRawPointer(input.base + input.start)
            for i in 0..<k {
                let p = base + i * stride
                let point = SIMD3(scalar(p + layout.x.offset, layout.x.type, bigEndian),
                                  scalar(p + layout.y.offset, layout.y.type, bigEndian),
                                  scalar(p + layout.z.offset, layout.z.type, bigEndian))
                guard point.x.isFinite, point.y.isFinite, point.z.isFinite else { out.nonFinite += 1; continue }
                out.positions.append(point)
                if let c = layout.color {
                    if layout.colorFromSH {
                        out.colors!.append(SIMD3(colorByte(sh: Double(scalar(p + c[0].offset, c[0].type, bigEndian))),
                                                 colorByte(sh: Double(scalar(p + c[1].offset, c[1].type, bigEndian))),
                                                 colorByte(sh: Double(scalar(p + c[2].offset, c[2].type, bigEndian)))))
                    } else {
                        out.colors!.append(SIMD3(colorByte(p + c[0].offset, c[0].type, bigEndian),
                                                 colorByte(p + c[1].offset, c[1].type, bigEndian),
                                                 colorByte(p + c[2].offset, c[2].type, bigEndian)))
                    }
                }
                if let a = layout.alpha {
                    out.alphas!.append(layout.alphaIsLogit ? colorByte(logit: Double(scalar(p + a.offset, a.type, bigEndian)))
                                                           : colorByte(p + a.offset, a.type, bigEndian))
                }
                if let m = layout.normal {
                    out.normals!.append(SIMD3(scalar(p + m[0].offset, m[0].type, bigEndian),
                                              scalar(p + m[1].offset, m[1].type, bigEndian),
                                              scalar(p + m[2].offset, m[2].type, bigEndian)))
                }
            }
            input.start += k * stride
            done += k
        }
    }

    /// A binary scalar as Float (doubles beyond Float's range become infinite).
    @inline(__always)
    static func scalar(_ p: UnsafeRawPointer, _ type: ScalarType, _ big: Bool) -> Float {
        switch type {
        case .float32:
            let b = p.loadUnaligned(as: UInt32.self)
            return Float(bitPattern: big ? UInt32(bigEndian: b) : UInt32(littleEndian: b))
        case .float64:
            let b = p.loadUnaligned(as: UInt64.self)
            return Float(Double(bitPattern: big ? UInt64(bigEndian: b) : UInt64(littleEndian: b)))
        case .int8, .uint8, .int16, .uint16, .int32, .uint32:
            return Float(integer(p, type, big))
        }
    }

    @inline(__always)
    static func integer(_ p: UnsafeRawPointer, _ type: ScalarType, _ big: Bool) -> Int64 {
        switch type {
        case .int8: return Int64(p.load(as: Int8.self))
        case .uint8: return Int64(p.load(as: UInt8.self))
        case .int16:
            let b = p.loadUnaligned(as: UInt16.self)
            return Int64(Int16(bitPattern: big ? UInt16(bigEndian: b) : UInt16(littleEndian: b)))
        case .uint16:
            let b = p.loadUnaligned(as: UInt16.self)
            return Int64(big ? UInt16(bigEndian: b) : UInt16(littleEndian: b))
        case .int32:
            let b = p.loadUnaligned(as: UInt32.self)
            return Int64(Int32(bitPattern: big ? UInt32(bigEndian: b) : UInt32(littleEndian: b)))
        case .uint32:
            let b = p.loadUnaligned(as: UInt32.self)
            return Int64(big ? UInt32(bigEndian: b) : UInt32(littleEndian: b))
        case .float32, .float64:
            preconditionFailure("integer(_:_:_:) of a float type")
        }
    }

    @inline(__always)
    static func colorByte(_ p: UnsafeRawPointer, _ type: ScalarType, _ big: Bool) -> UInt8 {
        switch type {
        case .uint8: return p.load(as: UInt8.self)
        case .float32, .float64: return colorByte(unit: Double(scalar(p, type, big)))
        case .int8, .int16, .uint16, .int32, .uint32: return colorByte(integer: integer(p, type, big), type)
        }
    }

    /// A 0…1 color component as a byte: clamped, ×255, rounded; NaN is 0.
    static func colorByte(unit v: Double) -> UInt8 {
        guard v > 0 else { return 0 }
        return UInt8((min(v, 1) * 255).rounded())
    }

    /// A 3DGS SH DC coefficient as a color byte: 0.5 + C0·f_dc, clamped to 0…1, ×255, rounded.
    static func colorByte(sh v: Double) -> UInt8 { colorByte(unit: 0.5 + shC0 * v) }

    /// A 3DGS opacity logit as an alpha byte: sigmoid, ×255, rounded (NaN is 0).
    static func colorByte(logit v: Double) -> UInt8 { colorByte(unit: 1 / (1 + exp(-v))) }

    /// An integer color component as a byte: `ushort` scaled from 0…65535, other types clamped to 0…255.
    /// (An ASCII file can give a ushort any integer: clamped to 0…65535 first.)
    static func colorByte(integer v: Int64, _ type: ScalarType) -> UInt8 {
        if type == .uint16 { return UInt8((Double(min(max(v, 0), 65535)) * 255 / 65535).rounded()) }
        return UInt8(clamping: v)
    }

    static func readASCII(_ vertex: Element, _ layout: VertexLayout, _ input: ChunkedInput, _ out: inout Points) throws {
        let n = vertex.count, count = layout.types.count
        var values = [Double](repeating: 0, count: count)
        var floats = [Float](repeating: 0, count: count)
        var done = 0
        while done < n {
            guard let line = try input.nextLine() else { throw shortage(n, found: done, partial: false, input) }
            var p = input.base + line.lowerBound
            let end = input.base + line.upperBound
            func skipBlanks() { while p < end, isBlank(p.load(as: UInt8.self)) { p += 1 } }
            skipBlanks()
            if p == end { continue }   // blank line
            for i in 0..<count {
                skipBlanks()
                guard p < end else { throw input.error("corrupt PLY: vertex \(done) is not \(count) numbers (found \(i))") }
                var stop: UnsafeMutablePointer<CChar>?
                let s = UnsafeMutableRawPointer(p).assumingMemoryBound(to: CChar.self)
                // strtof for float properties reads the decimal exactly as a Float (no double rounding).
                if layout.types[i] == .float32 { floats[i] = strtof(s, &stop); values[i] = Double(floats[i]) }
                else { values[i] = strtod(s, &stop); floats[i] = Float(values[i]) }
                guard let e = stop.map(UnsafeMutableRawPointer.init), e > p, e <= end,
                      e == end || isBlank(e.load(as: UInt8.self)) else {
                    throw input.error("corrupt PLY: vertex \(done) is not \(count) numbers")
                }
                p = e
            }
            skipBlanks()
            guard p == end else { throw input.error("corrupt PLY: vertex \(done) has more than \(count) numbers") }
            done += 1
            let point = SIMD3(floats[layout.x.index], floats[layout.y.index], floats[layout.z.index])
            guard point.x.isFinite, point.y.isFinite, point.z.isFinite else { out.nonFinite += 1; continue }
            out.positions.append(point)
            func byte(_ f: Field) -> UInt8 {
                let v = values[f.index]
                switch f.type {
                case .float32, .float64: return colorByte(unit: v)
                case .int8, .uint8, .int16, .uint16, .int32, .uint32: return colorByte(integer: v.isFinite ? Int64(max(-1e15, min(1e15, v))) : 0, f.type)
                }
            }
            if let c = layout.color {
                if layout.colorFromSH {
                    out.colors!.append(SIMD3(colorByte(sh: values[c[0].index]), colorByte(sh: values[c[1].index]),
                                             colorByte(sh: values[c[2].index])))
                } else {
                    out.colors!.append(SIMD3(byte(c[0]), byte(c[1]), byte(c[2])))
                }
            }
            if let a = layout.alpha {
                out.alphas!.append(layout.alphaIsLogit ? colorByte(logit: values[a.index]) : byte(a))
            }
            if let m = layout.normal {
                out.normals!.append(SIMD3(floats[m[0].index], floats[m[1].index], floats[m[2].index]))
            }
        }
    }

    /// Space, tab, or the other byte of a CRLF line end (the CR in a file whose lines end in LF,
    /// the LF in one whose lines end in a bare CR): what separates ASCII values.
    @inline(__always)
    static func isBlank(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0D || b == 0x0A }

    /// Skips an element that precedes the vertex element.
    static func skip(_ element: Element, encoding: Encoding, input: ChunkedInput) throws {
        let truncated = input.error("truncated PLY: the data ends inside element \(element.name)")
        if encoding == .ascii {
            var k = 0
            while k < element.count {
                guard let line = try input.nextLine() else { throw truncated }
                let blank = UnsafeRawBufferPointer(start: input.base + line.lowerBound, count: line.count).allSatisfy(isBlank)
                if !blank { k += 1 }
            }
            return
        }
        let big = encoding == .bigEndian
        if element.properties.allSatisfy({ $0.countType == nil }) {
            let size = element.properties.reduce(0) { $0 + $1.type.size }
            let (bytes, overflow) = size.multipliedReportingOverflow(by: element.count)
            guard !overflow, try input.skip(bytes) else { throw truncated }
            return
        }
        for _ in 0..<element.count {
            for p in element.properties {
                if let countType = p.countType {
                    guard try input.ensure(countType.size) else { throw truncated }
                    let items = integer(UnsafeRawPointer(input.base + input.start), countType, big)
                    guard items >= 0 else { throw input.error("corrupt PLY: negative list length in element \(element.name)") }
                    input.start += countType.size
                    guard try input.skip(Int(items) * p.type.size) else { throw truncated }
                } else {
                    guard try input.skip(p.type.size) else { throw truncated }
                }
            }
        }
    }
}

/// A byte stream read in chunks into one reused buffer; `[start, end)` is what has been read and
/// not yet consumed. A zero byte always follows `end` so C number parsers stop there.
final class ChunkedInput {
    let name: String
    let total: Int
    private let fill: (UnsafeMutableRawPointer, Int) throws -> Int
    private(set) var base: UnsafeMutableRawPointer
    private var capacity: Int
    var start = 0
    private(set) var end = 0
    /// Bytes consumed before `base` (the file offset of `base[0]`).
    private(set) var shifted = 0
    private(set) var bytesRead = 0
    private(set) var atEOF = false
    var progress: ((_ done: Int, _ total: Int) -> Void)?
    /// Asked before every chunk read: true ends the load with "load cancelled" (`PLYLoadControl`).
    var isCancelled: (() -> Bool)?
    /// The byte that ends a line for `nextLine`: LF, or CR in a file whose lines end in a bare CR.
    var terminator: UInt8 = 0x0A

    init(name: String, total: Int, chunkSize: Int, fill: @escaping (UnsafeMutableRawPointer, Int) throws -> Int) {
        self.name = name
        self.total = total
        self.fill = fill
        capacity = max(16, chunkSize)
        base = .allocate(byteCount: capacity + 1, alignment: 16)
        base.storeBytes(of: 0, as: UInt8.self)
    }

    deinit { base.deallocate() }

    var available: Int { end - start }
    /// The file offset of `start`.
    var consumed: Int { shifted + start }

    func error(_ problem: String) -> DepthKitError { .file(path: name, problem: problem) }

    /// Moves the unconsumed bytes to the front and reads more; false at the end of the input.
    /// Grows the buffer (up to `PLYReader.maxChunkSize`) only when it is full of unconsumed bytes.
    func refill() throws -> Bool {
        if atEOF { return false }
        if start > 0 {
            if available > 0 { memmove(base, base + start, available) }
            shifted += start; end -= start; start = 0
        }
        if end == capacity {
            guard capacity < PLYReader.maxChunkSize else {
                throw error("corrupt PLY: a header line, text line or vertex longer than \(PLYReader.maxChunkSize >> 20) MiB")
            }
            let grown = UnsafeMutableRawPointer.allocate(byteCount: 2 * capacity + 1, alignment: 16)
            grown.copyMemory(from: base, byteCount: end)
            base.deallocate()
            base = grown
            capacity *= 2
        }
        if isCancelled?() == true { throw error("load cancelled") }
        let n = try fill(base + end, capacity - end)
        end += n
        base.storeBytes(of: 0, toByteOffset: end, as: UInt8.self)
        bytesRead += n
        if n == 0 { atEOF = true; return false }
        progress?(min(bytesRead, total), total)
        return true
    }

    /// The byte `offset` bytes after `start` (which must be available).
    @inline(__always)
    func byte(_ offset: Int) -> UInt8 { base.load(fromByteOffset: start + offset, as: UInt8.self) }

    /// True when `count` bytes are available (reading as needed).
    func ensure(_ count: Int) throws -> Bool {
        while available < count { guard try refill() else { return false } }
        return true
    }

    /// Consumes `count` bytes; false when the input ends first.
    func skip(_ count: Int) throws -> Bool {
        var left = count
        while left > 0 {
            if available == 0 { guard try refill() else { return false } }
            let k = min(left, available)
            start += k; left -= k
        }
        return true
    }

    /// The next line's byte range in `base` (without its `terminator`), consumed; the last line may
    /// lack the terminator. Nil at the end of the input.
    func nextLine() throws -> Range<Int>? {
        var searched = 0
        while true {
            if let nl = memchr(base + start + searched, Int32(terminator), available - searched) {
                let lineEnd = base.distance(to: nl)
                let line = start..<lineEnd
                start = lineEnd + 1
                return line
            }
            searched = available
            guard try refill() else {
                if available == 0 { return nil }
                let line = start..<end
                start = end
                return line
            }
        }
    }
}
