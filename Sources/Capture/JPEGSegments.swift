/// The structure of a JPEG file as depth photos use it, read from bytes: its marker segments up to
/// the end of the image (`EOI`, found by walking every scan's entropy-coded data, so progressive
/// files work), the standard XMP packet (APP1 `http://ns.adobe.com/xap/1.0/`), the extended XMP
/// (APP1 `http://ns.adobe.com/xmp/extension/`: GUID, full length, offset; chunks reassembled for
/// the GUID the standard packet names in `xmpNote:HasExtendedXMP`), and the MPF index (APP2 `MPF`:
/// CIPA DC-007, the images after the first, offsets from the MPF TIFF header). Every length is
/// checked; problems are `CaptureError.file` naming the file. No I/O.
public struct JPEGSegments: Sendable {
    /// One image of the MPF index.
    public struct MPImage: Sendable, Equatable {
        public var attribute: UInt32
        /// Byte range in the file.
        public var range: Range<Int>
    }

    /// Bytes of the first image: SOI … EOI.
    public let imageRange: Range<Int>
    /// The standard XMP packet, if any.
    public let xmp: XMPPacket?
    /// The extended XMP packet, when the standard one names it and all its chunks are here.
    public let extendedXMP: XMPPacket?
    /// Images the MPF index lists after the first (depth, mattes on iPhones).
    public let mpImages: [MPImage]
    /// Problems that did not stop the read (extended XMP incomplete, an MPF entry out of bounds).
    public let notes: [String]

    static let xmpSignature = Array("http://ns.adobe.com/xap/1.0/\0".utf8)
    static let extendedSignature = Array("http://ns.adobe.com/xmp/extension/\0".utf8)

    public static func looksLikeJPEG(_ bytes: ArraySlice<UInt8>) -> Bool {
        bytes.count >= 3 && bytes[bytes.startIndex] == 0xFF && bytes[bytes.startIndex + 1] == 0xD8 && bytes[bytes.startIndex + 2] == 0xFF
    }

    /// Reads the JPEG that starts at `start` in `bytes`.
    public init(bytes: [UInt8], start: Int = 0, name: String) throws {
        func bad(_ p: String) -> CaptureError { .file(path: name, problem: "JPEG: \(p)") }
        guard start >= 0, start <= bytes.count, Self.looksLikeJPEG(bytes[start...]) else { throw bad("no SOI marker at offset \(start)") }
        var i = start + 2
        var xmpPacket: XMPPacket?
        var chunks: [String: (total: Int, parts: [(Int, ArraySlice<UInt8>)])] = [:]
        var mpfTIFF: Range<Int>?
        var end: Int?
        var notes: [String] = []
        segments: while i < bytes.count {
            // Markers may be padded with fill bytes (FF FF …).
            guard bytes[i] == 0xFF else { throw bad("expected a marker at offset \(i), found 0x\(String(bytes[i], radix: 16))") }
            while i < bytes.count, bytes[i] == 0xFF { i += 1 }
            guard i < bytes.count else { break }
            let marker = bytes[i]
            i += 1
            switch marker {
            case 0xD9: end = i; break segments
            case 0x01, 0xD0...0xD7: continue
            default: break
            }
            guard i + 2 <= bytes.count else { throw bad("segment 0xFF\(String(marker, radix: 16, uppercase: true)) at offset \(i - 2) is cut off") }
            let length = Int(bytes[i]) << 8 | Int(bytes[i + 1])
            guard length >= 2, i + length <= bytes.count else {
                throw bad("segment 0xFF\(String(marker, radix: 16, uppercase: true)) at offset \(i - 2) claims \(length) bytes, \(bytes.count - i) left: truncated?")
            }
            let body = (i + 2)..<(i + length)
            i += length
            if marker == 0xE1 {
                let payload = bytes[body]
                if payload.starts(with: Self.xmpSignature), xmpPacket == nil {
                    xmpPacket = XMPPacket(bytes: payload.dropFirst(Self.xmpSignature.count))
                } else if payload.starts(with: Self.extendedSignature) {
                    let p = payload.dropFirst(Self.extendedSignature.count)
                    guard p.count >= 40 else { notes.append("an extended XMP segment is too short"); continue }
                    let guid = String(decoding: p.prefix(32), as: UTF8.self)
                    let total = Int(BEReader.be32(Array(p.dropFirst(32).prefix(4)), 0))
                    let offset = Int(BEReader.be32(Array(p.dropFirst(36).prefix(4)), 0))
                    var entry = chunks[guid] ?? (total, [])
                    entry.parts.append((offset, p.dropFirst(40)))
                    chunks[guid] = entry
                }
            } else if marker == 0xE2, mpfTIFF == nil, bytes[body].starts(with: Array("MPF\0".utf8)) {
                mpfTIFF = (body.lowerBound + 4)..<body.upperBound
            } else if marker == 0xDA {
                // Entropy-coded data: up to the next marker that is not a stuffed 0 or a restart.
                var j = i
                while j + 1 < bytes.count {
                    if bytes[j] == 0xFF, bytes[j + 1] != 0, !(0xD0...0xD7).contains(bytes[j + 1]) { break }
                    j += 1
                }
                guard j + 1 < bytes.count else { throw bad("the image data ends without an EOI marker: truncated?") }
                i = j
            }
        }
        guard let end else { throw bad("no EOI marker: truncated?") }
        imageRange = start..<end
        xmp = xmpPacket

        // Extended XMP: the GUID the standard packet names, every byte of its full length present.
        var extended: XMPPacket?
        if let guid = xmpPacket?.value(XMPPacket.NS.xmpNote, "HasExtendedXMP") {
            if let entry = chunks[guid], entry.total > 0, entry.total <= 1 << 28 {
                // The parts are checked (each inside the claimed length, together covering it from
                // 0 without a gap) before the packet is allocated: the claimed length is then at
                // most the bytes the segments really hold, never a zero-filled 256 MiB.
                let parts = entry.parts.sorted { $0.0 < $1.0 }
                var covered = 0
                for (offset, part) in parts {
                    guard offset >= 0, offset <= entry.total, part.count <= entry.total - offset else {
                        notes.append("an extended XMP chunk (offset \(offset), \(part.count) bytes) lies outside its \(entry.total) bytes")
                        covered = -1
                        break
                    }
                    if offset <= covered { covered = max(covered, offset + part.count) }
                }
                if covered == entry.total {
                    var out = [UInt8](repeating: 0, count: entry.total)
                    for (offset, part) in parts { out.replaceSubrange(offset..<(offset + part.count), with: part) }
                    extended = XMPPacket(bytes: out[...])
                } else if covered >= 0 {
                    notes.append("extended XMP \(guid) is incomplete (\(covered) of \(entry.total) bytes): cut?")
                }
            } else {
                notes.append("the XMP names extended XMP \(guid), but no complete chunk of it is in the file")
            }
        }
        extendedXMP = extended

        var images: [MPImage] = []
        if let tiff = mpfTIFF {
            do {
                for e in try Self.mpEntries(bytes, tiff: tiff, name: name) where e.offset != 0 {
                    let s = tiff.lowerBound + Int(e.offset)
                    guard Int(e.offset) <= bytes.count - tiff.lowerBound, Int(e.size) <= bytes.count - s, e.size > 0 else {
                        notes.append("MPF image at offset \(e.offset) (\(e.size) bytes) lies outside the file: truncated?")
                        continue
                    }
                    images.append(MPImage(attribute: e.attribute, range: s..<(s + Int(e.size))))
                }
            } catch {
                notes.append("\(CaptureError.wrapping(error, path: name).description.dropFirst(name.count + 2))")
            }
        }
        mpImages = images
        self.notes = notes
    }

    /// The MP Entry table of an MPF APP2 segment (its TIFF structure in either byte order).
    static func mpEntries(_ bytes: [UInt8], tiff: Range<Int>, name: String) throws -> [(attribute: UInt32, size: UInt32, offset: UInt32)] {
        func bad(_ p: String) -> CaptureError { .file(path: name, problem: "MPF: \(p)") }
        guard tiff.count >= 8 else { throw bad("index too short") }
        let little: Bool
        switch (bytes[tiff.lowerBound], bytes[tiff.lowerBound + 1]) {
        case (0x49, 0x49): little = true
        case (0x4D, 0x4D): little = false
        default: throw bad("no TIFF byte order mark")
        }
        func u16(_ o: Int) throws -> Int {
            guard o >= 0, o + 2 <= tiff.count else { throw bad("offset \(o) lies outside the index") }
            let a = Int(bytes[tiff.lowerBound + o]), b = Int(bytes[tiff.lowerBound + o + 1])
            return little ? a | b << 8 : a << 8 | b
        }
        func u32(_ o: Int) throws -> UInt32 {
            let hi = UInt32(try u16(little ? o + 2 : o)), lo = UInt32(try u16(little ? o : o + 2))
            return hi << 16 | lo
        }
        let ifd = Int(try u32(4))
        let count = try u16(ifd)
        for k in 0..<count {
            let e = ifd + 2 + 12 * k
            guard try u16(e) == 0xB002 else { continue }
            let n = Int(try u32(e + 4))
            guard n % 16 == 0, n > 0 else { throw bad("MP entry table of \(n) bytes") }
            let at = n <= 4 ? e + 8 : Int(try u32(e + 8))
            // The table must lie in the index before its entries are counted out (a claimed 4 GB
            // table would otherwise reserve gigabytes for entries that are not there).
            guard at >= 0, n <= tiff.count, at <= tiff.count - n else { throw bad("MP entry table of \(n) bytes at \(at) lies outside the index") }
            return try (0..<(n / 16)).map { j in
                let o = at + 16 * j
                return (try u32(o), try u32(o + 4), try u32(o + 8))
            }
        }
        throw bad("no MP entry table (tag 0xB002)")
    }
}
