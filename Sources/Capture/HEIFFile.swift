/// The item structure of a HEIF file (ISO/IEC 23008-12 over the ISO base media file format,
/// ISO/IEC 14496-12), read from bytes: `ftyp`; `meta` with `hdlr`, `pitm`, `iinf`/`infe`, `iloc`
/// (versions 0–2, any offset/length/base-offset/index sizes, construction methods 0 (file) and 1
/// (`idat`)), `iref` (every reference type: `auxl`, `dimg`, `thmb`, `cdsc`…; no limit on their
/// number), `iprp` (`ipco` properties, `ipma` associations: `hvcC`, `ispe`, `auxC`, `irot`, `imir`,
/// `pixi`, `colr`, `clap`). Item payloads are resolved on demand (`data(of:)`); nothing is decoded
/// here.
///
/// Every box and field length is checked against what is left of its parent before it is read;
/// any inconsistency is a `CaptureError.file(path:problem:)` naming the file and the box. No I/O:
/// the same code serves files, memory and the fuzzer.
public struct HEIFFile: Sendable {
    /// One item property (`ipco` child), as far as depthlens uses it.
    public enum Property: Sendable, Equatable {
        /// HEVC decoder configuration: the box payload, which libavcodec takes as extradata.
        case hvcC([UInt8])
        /// Image spatial extents.
        case ispe(width: Int, height: Int)
        /// Auxiliary type URN ("urn:mpeg:hevc:2015:auxid:2" depth, Apple's matte URNs…) and the
        /// `aux_subtype` bytes after it (an HEVC depth SEI for Apple's depth; Apple's
        /// `AuxiliaryImageSubType` when ImageIO writes one, e.g. `portraiteffectsmatte`).
        case auxC(String, subtype: [UInt8])
        /// Rotation anticlockwise in quarter turns (0–3).
        case irot(Int)
        /// Mirror: axis 0 about a vertical axis (left ↔ right), 1 about a horizontal axis (top ↔ bottom).
        case imir(axis: Int)
        /// Bits per channel.
        case pixi([Int])
        /// `colr` nclx: ISO/IEC 23091-2 code points.
        case nclx(primaries: Int, transfer: Int, matrix: Int, fullRange: Bool)
        /// `colr` with an ICC profile (`prof`, `rICC`).
        case icc([UInt8])
        /// Clean aperture (fractions width, height, horizontal and vertical offset).
        case clap(width: Double, height: Double, horizontalOffset: Double, verticalOffset: Double)
        /// A property depthlens does not use, by its box type.
        case other(String)
    }

    /// Where one extent of an item's data lies.
    public struct Extent: Sendable, Equatable {
        public var offset: UInt64
        /// 0: to the end of the file (or of `idat`).
        public var length: UInt64
    }

    public struct Item: Sendable, Equatable {
        public var id: UInt32
        /// Four-character type: "hvc1", "grid", "Exif", "mime", "iden", "av01"…
        public var type: String
        public var name: String
        /// For `mime` items ("application/rdf+xml" for XMP).
        public var contentType: String?
        public var hidden: Bool
        /// 0: file offsets; 1: offsets into `idat`.
        public var constructionMethod: Int
        public var extents: [Extent]
        /// Properties in `ipma` order (transformations apply in this order).
        public var properties: [Property]
    }

    /// One reference: `from` → `to` items, of a type ("auxl", "dimg", "thmb", "cdsc").
    public struct Reference: Sendable, Equatable {
        public var type: String
        public var from: UInt32
        public var to: [UInt32]
    }

    /// The name errors carry.
    public let name: String
    public let majorBrand: String
    public let compatibleBrands: [String]
    public let primaryID: UInt32
    public let items: [Item]
    public let references: [Reference]
    /// The whole file (item data is cut from it).
    public let bytes: [UInt8]
    private let idat: Range<Int>?
    private let itemIndex: [UInt32: Int]

    /// Most items, references and properties accepted (a box may claim any u32 count).
    public static let maxEntries = 1 << 16
    /// Most extents one item may have (an encoder splits an item into a few; iPhones write one).
    public static let maxExtentsPerItem = 1024

    /// True when `bytes` start like an ISO-BMFF file whose `ftyp` names a HEIF brand.
    public static func looksLikeHEIF(_ bytes: [UInt8]) -> Bool {
        guard bytes.count >= 12, Array(bytes[4..<8]) == Array("ftyp".utf8) else { return false }
        let size = Int(BEReader.be32(bytes, 0))
        let end = min(bytes.count, max(size, 12))
        var brands: [String] = [BEReader.fourCC(bytes, 8)]
        var i = 16
        while i + 4 <= end { brands.append(BEReader.fourCC(bytes, i)); i += 4 }
        return brands.contains { ["heic", "heix", "heim", "heis", "hevc", "hevx", "mif1", "msf1", "mif2"].contains($0) }
    }

    /// Parses the boxes. Throws `CaptureError.file` naming `name` and the bad box.
    public init(bytes: [UInt8], name: String) throws {
        self.name = name
        self.bytes = bytes
        var top = BEReader(bytes: bytes, range: 0..<bytes.count, name: name, what: "file")
        var ftyp: (String, [String])?
        var meta: Range<Int>?
        while top.remaining > 0 {
            let box = try top.box()
            switch box.type {
            case "ftyp":
                var r = top.sub(box.payload, "ftyp")
                let major = try r.fourCC()
                _ = try r.u32()
                var compatible: [String] = []
                while r.remaining >= 4 { compatible.append(try r.fourCC()) }
                ftyp = (major, compatible)
            case "meta":
                if meta == nil { meta = box.payload }
            default: break
            }
        }
        guard let ftyp else { throw CaptureError.file(path: name, problem: "no ftyp box: not an ISO-BMFF (HEIF) file") }
        majorBrand = ftyp.0
        compatibleBrands = ftyp.1
        guard let meta else { throw CaptureError.file(path: name, problem: "no meta box: a HEIF file without items") }

        var m = BEReader(bytes: bytes, range: meta, name: name, what: "meta")
        _ = try m.fullBoxHeader()
        var primary: UInt32?
        var infos: [(id: UInt32, type: String, name: String, content: String?, hidden: Bool)] = []
        var locations: [UInt32: (method: Int, extents: [Extent])] = [:]
        var refs: [Reference] = []
        var properties: [Property] = []
        var associations: [UInt32: [Int]] = [:]
        var idatRange: Range<Int>?
        while m.remaining > 0 {
            let box = try m.box()
            var r = m.sub(box.payload, box.type)
            switch box.type {
            case "pitm":
                let (version, _) = try r.fullBoxHeader()
                primary = version == 0 ? UInt32(try r.u16()) : try r.u32()
            case "iinf":
                let (version, _) = try r.fullBoxHeader()
                let count = version == 0 ? Int(try r.u16()) : Int(try r.u32())
                guard count <= Self.maxEntries else { throw r.bad("claims \(count) items") }
                while r.remaining > 0 {
                    let b = try r.box()
                    guard b.type == "infe" else { continue }
                    infos.append(try Self.infe(r.sub(b.payload, "infe")))
                }
            case "iloc":
                locations = try Self.iloc(&r, fileSize: UInt64(bytes.count))
            case "iref":
                let (version, _) = try r.fullBoxHeader()
                while r.remaining > 0 {
                    let b = try r.box()
                    var e = r.sub(b.payload, "iref \(b.type)")
                    let from = version == 0 ? UInt32(try e.u16()) : try e.u32()
                    let n = Int(try e.u16())
                    try e.need(n * (version == 0 ? 2 : 4))
                    var to: [UInt32] = []
                    to.reserveCapacity(n)
                    for _ in 0..<n { to.append(version == 0 ? UInt32(try e.u16()) : try e.u32()) }
                    refs.append(Reference(type: b.type, from: from, to: to))
                    guard refs.count <= Self.maxEntries else { throw r.bad("holds over \(Self.maxEntries) references") }
                }
            case "iprp":
                while r.remaining > 0 {
                    let b = try r.box()
                    var p = r.sub(b.payload, b.type)
                    if b.type == "ipco" {
                        while p.remaining > 0 {
                            let pb = try p.box()
                            properties.append(try Self.property(pb.type, p.sub(pb.payload, pb.type)))
                            guard properties.count <= Self.maxEntries else { throw p.bad("holds over \(Self.maxEntries) properties") }
                        }
                    } else if b.type == "ipma" {
                        let (version, flags) = try p.fullBoxHeader()
                        let n = Int(try p.u32())
                        guard n <= Self.maxEntries else { throw p.bad("claims \(n) entries") }
                        for _ in 0..<n {
                            let id = version < 1 ? UInt32(try p.u16()) : try p.u32()
                            let k = Int(try p.u8())
                            var list = associations[id] ?? []
                            for _ in 0..<k {
                                let index = flags & 1 != 0 ? Int(try p.u16() & 0x7fff) : Int(try p.u8() & 0x7f)
                                list.append(index)
                            }
                            associations[id] = list
                        }
                    }
                }
            case "idat":
                idatRange = box.payload
            default: break
            }
        }
        guard let primary else { throw CaptureError.file(path: name, problem: "meta has no pitm (primary item) box") }
        var items: [Item] = []
        var index: [UInt32: Int] = [:]
        for info in infos where index[info.id] == nil {
            let loc = locations[info.id]
            var props: [Property] = []
            for i in associations[info.id] ?? [] where i > 0 {
                guard i <= properties.count else {
                    throw CaptureError.file(path: name, problem: "ipma: item \(info.id) names property \(i), but ipco holds \(properties.count)")
                }
                props.append(properties[i - 1])
            }
            index[info.id] = items.count
            items.append(Item(id: info.id, type: info.type, name: info.name, contentType: info.content, hidden: info.hidden,
                              constructionMethod: loc?.method ?? 0, extents: loc?.extents ?? [], properties: props))
        }
        guard index[primary] != nil else { throw CaptureError.file(path: name, problem: "the primary item \(primary) is not in iinf") }
        self.primaryID = primary
        self.items = items
        self.references = refs
        self.idat = idatRange
        self.itemIndex = index
    }

    public func item(_ id: UInt32) -> Item? { itemIndex[id].map { items[$0] } }
    public var primary: Item { items[itemIndex[primaryID]!] }

    /// Items that reference `id` with `type` ("auxl": its auxiliary images, "cdsc": its metadata).
    public func items(referencing id: UInt32, type: String) -> [Item] {
        references.filter { $0.type == type && $0.to.contains(id) }.compactMap { item($0.from) }
    }

    /// Items `id` references with `type`, in order ("dimg": a grid's tiles).
    public func referenced(from id: UInt32, type: String) -> [UInt32] {
        references.first { $0.type == type && $0.from == id }?.to ?? []
    }

    /// An item's bytes: its extents concatenated. Throws when an extent lies outside the file (or
    /// `idat`), or when the extents together are more than it holds: the memory is at most the
    /// file's size, allocated once the extents are checked.
    public func data(of item: Item) throws -> [UInt8] {
        let (source, what): (Range<Int>, String)
        switch item.constructionMethod {
        case 0: (source, what) = (0..<bytes.count, "the file")
        case 1:
            guard let idat else { throw CaptureError.file(path: name, problem: "item \(item.id) lies in idat, but meta has none") }
            (source, what) = (idat, "idat")
        default:
            throw CaptureError.file(path: name, problem: "item \(item.id): iloc construction method \(item.constructionMethod) is not supported")
        }
        guard !item.extents.isEmpty else { throw CaptureError.file(path: name, problem: "item \(item.id) (\(item.type)) has no data (no iloc entry)") }
        let size = UInt64(source.count)
        var pieces: [Range<Int>] = []
        var total: UInt64 = 0
        for e in item.extents {
            guard e.offset <= size else {
                throw CaptureError.file(path: name, problem: "item \(item.id) (\(item.type)) starts at \(e.offset), past the end of \(what) (\(size) bytes): truncated file?")
            }
            // Length 0 ("to the end") is a single extent's only (`iloc` refuses it among others).
            let length = e.length == 0 ? size - e.offset : e.length
            guard length <= size - e.offset else {
                throw CaptureError.file(path: name, problem: "item \(item.id) (\(item.type)) needs \(e.offset + length) bytes of \(what), which has \(size): truncated file?")
            }
            total += length  // ≤ maxExtentsPerItem × size: no overflow
            guard total <= size else {
                throw CaptureError.file(path: name, problem: "item \(item.id) (\(item.type)): its extents add up to more than \(what) (\(size) bytes)")
            }
            let start = source.lowerBound + Int(e.offset)
            pieces.append(start..<(start + Int(length)))
        }
        if pieces.count == 1 { return Array(bytes[pieces[0]]) }
        var out: [UInt8] = []
        out.reserveCapacity(Int(total))
        for piece in pieces { out.append(contentsOf: bytes[piece]) }
        return out
    }

    // MARK: - Boxes

    private static func infe(_ reader: BEReader) throws -> (id: UInt32, type: String, name: String, content: String?, hidden: Bool) {
        var r = reader
        let (version, flags) = try r.fullBoxHeader()
        let id: UInt32
        var type = "", content: String?
        if version >= 2 {
            id = version == 2 ? UInt32(try r.u16()) : try r.u32()
            _ = try r.u16()
            type = try r.fourCC()
        } else {
            id = UInt32(try r.u16())
            _ = try r.u16()
        }
        let itemName = r.remaining > 0 ? try r.cString() : ""
        if version < 2 || type == "mime" {
            if r.remaining > 0 { content = try r.cString() }
            if version < 2 { type = "mime" }
        }
        return (id, type, itemName, content, flags & 1 != 0)
    }

    /// The item locations. Per item: at most `maxExtentsPerItem` extents, a length of 0 ("to the
    /// end") only as the item's single extent, and lengths that add up to no more than the file
    /// (`fileSize`; `idat` lies inside it), so that `data(of:)` never holds more than the file.
    private static func iloc(_ r: inout BEReader, fileSize: UInt64) throws -> [UInt32: (method: Int, extents: [Extent])] {
        let (version, _) = try r.fullBoxHeader()
        guard version <= 2 else { throw r.bad("version \(version) is not 0, 1 or 2") }
        let a = try r.u8(), b = try r.u8()
        let offsetSize = Int(a >> 4), lengthSize = Int(a & 15), baseSize = Int(b >> 4)
        let indexSize = version >= 1 ? Int(b & 15) : 0
        for s in [offsetSize, lengthSize, baseSize, indexSize] where ![0, 4, 8].contains(s) {
            throw r.bad("field size \(s) is not 0, 4 or 8")
        }
        let count = version < 2 ? Int(try r.u16()) : Int(try r.u32())
        guard count <= maxEntries else { throw r.bad("claims \(count) items") }
        var out: [UInt32: (Int, [Extent])] = [:]
        for _ in 0..<count {
            let id = version < 2 ? UInt32(try r.u16()) : try r.u32()
            let method = version >= 1 ? Int(try r.u16() & 15) : 0
            _ = try r.u16()  // data_reference_index
            let base = try r.uint(baseSize)
            let n = Int(try r.u16())
            try r.need(n * (indexSize + offsetSize + lengthSize))
            guard n <= maxExtentsPerItem else { throw r.bad("item \(id) has \(n) extents (at most \(maxExtentsPerItem))") }
            var extents: [Extent] = []
            var total: UInt64 = 0
            for _ in 0..<n {
                _ = try r.uint(indexSize)
                let offset = try r.uint(offsetSize), length = try r.uint(lengthSize)
                let (sum, overflow) = base.addingReportingOverflow(offset)
                guard !overflow else { throw r.bad("item \(id): offset overflows") }
                guard length > 0 || n == 1 else {
                    throw r.bad("item \(id): an extent of length 0 (the rest of the file) among \(n) extents")
                }
                guard length <= fileSize, total + length <= fileSize else {
                    throw r.bad("item \(id): its extents add up to more than the file's \(fileSize) bytes")
                }
                total += length
                extents.append(Extent(offset: sum, length: length))
            }
            out[id] = (method, extents)
        }
        return out
    }

    private static func property(_ type: String, _ reader: BEReader) throws -> Property {
        var r = reader
        switch type {
        case "hvcC": return .hvcC(Array(r.bytes[r.range]))
        case "ispe":
            _ = try r.fullBoxHeader()
            return .ispe(width: Int(try r.u32()), height: Int(try r.u32()))
        case "auxC":
            _ = try r.fullBoxHeader()
            let type = r.remaining > 0 ? try r.cString() : ""
            return .auxC(type, subtype: Array(r.bytes[r.at..<r.range.upperBound]))
        case "irot": return .irot(Int(try r.u8() & 3))
        case "imir": return .imir(axis: Int(try r.u8() & 1))
        case "pixi":
            _ = try r.fullBoxHeader()
            let n = Int(try r.u8())
            try r.need(n)
            return .pixi(try (0..<n).map { _ in Int(try r.u8()) })
        case "colr":
            let kind = try r.fourCC()
            if kind == "nclx" {
                let p = Int(try r.u16()), t = Int(try r.u16()), m = Int(try r.u16())
                return .nclx(primaries: p, transfer: t, matrix: m, fullRange: try r.u8() & 0x80 != 0)
            }
            return .icc(Array(r.bytes[r.at..<r.range.upperBound]))
        case "clap":
            func fraction() throws -> Double {
                let n = Int32(bitPattern: try r.u32()), d = Int32(bitPattern: try r.u32())
                guard d != 0 else { throw r.bad("a fraction with denominator 0") }
                return Double(n) / Double(d)
            }
            return .clap(width: try fraction(), height: try fraction(), horizontalOffset: try fraction(), verticalOffset: try fraction())
        default: return .other(type)
        }
    }
}

/// A bounds-checked big-endian reader over a range of bytes (ISO-BMFF boxes, TIFF/MPF in
/// Motorola order, JPEG segments).
struct BEReader {
    let bytes: [UInt8]
    let range: Range<Int>
    var at: Int
    let name: String
    let what: String

    init(bytes: [UInt8], range: Range<Int>, name: String, what: String) {
        self.bytes = bytes
        self.range = range
        self.at = range.lowerBound
        self.name = name
        self.what = what
    }

    var remaining: Int { range.upperBound - at }

    static func be32(_ b: [UInt8], _ i: Int) -> UInt32 {
        UInt32(b[i]) << 24 | UInt32(b[i + 1]) << 16 | UInt32(b[i + 2]) << 8 | UInt32(b[i + 3])
    }

    static func fourCC(_ b: [UInt8], _ i: Int) -> String {
        String(decoding: b[i..<(i + 4)].map { (0x20...0x7e).contains($0) ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
    }

    func bad(_ problem: String) -> CaptureError { .file(path: name, problem: "\(what): \(problem)") }

    /// A reader over `range` (within this one's) for a child box.
    func sub(_ r: Range<Int>, _ what: String) -> BEReader { BEReader(bytes: bytes, range: r, name: name, what: what) }

    mutating func need(_ n: Int) throws {
        guard n >= 0, n <= remaining else {
            throw bad("shorter than its contents say (needs \(n) bytes at offset \(at), \(remaining) left): truncated?")
        }
    }

    mutating func u8() throws -> UInt8 {
        try need(1)
        defer { at += 1 }
        return bytes[at]
    }

    mutating func u16() throws -> UInt16 {
        try need(2)
        defer { at += 2 }
        return UInt16(bytes[at]) << 8 | UInt16(bytes[at + 1])
    }

    mutating func u32() throws -> UInt32 {
        try need(4)
        defer { at += 4 }
        return Self.be32(bytes, at)
    }

    mutating func u64() throws -> UInt64 { UInt64(try u32()) << 32 | UInt64(try u32()) }

    /// An unsigned integer of 0, 4 or 8 bytes (iloc's sizes; 0 reads nothing and gives 0).
    mutating func uint(_ size: Int) throws -> UInt64 {
        switch size {
        case 0: return 0
        case 4: return UInt64(try u32())
        default: return try u64()
        }
    }

    mutating func fourCC() throws -> String {
        try need(4)
        defer { at += 4 }
        return Self.fourCC(bytes, at)
    }

    /// A NUL-terminated UTF-8 string (the rest, when the NUL is missing).
    mutating func cString() throws -> String {
        let end = bytes[at..<range.upperBound].firstIndex(of: 0) ?? range.upperBound
        defer { at = min(end + 1, range.upperBound) }
        return String(decoding: bytes[at..<end], as: UTF8.self)
    }

    mutating func fullBoxHeader() throws -> (version: Int, flags: UInt32) {
        let v = try u32()
        return (Int(v >> 24), v & 0xff_ffff)
    }

    /// The next box: its type and payload range (after size, type, largesize, uuid); the reader
    /// moves past it. Size 0 runs to the end of the parent.
    mutating func box() throws -> (type: String, payload: Range<Int>) {
        let start = at
        let size32 = try u32()
        var type = try fourCC()
        var size: UInt64 = UInt64(size32)
        if size32 == 1 { size = try u64() } else if size32 == 0 { size = UInt64(range.upperBound - start) }
        if type == "uuid" { try need(16); at += 16; type = "uuid" }
        let header = UInt64(at - start)
        guard size >= header, size - header <= UInt64(remaining) else {
            throw bad("box '\(type)' at offset \(start) claims \(size) bytes, but its parent has \(range.upperBound - start) left: truncated?")
        }
        let end = start + Int(size)
        defer { at = end }
        return (type, at..<end)
    }
}
