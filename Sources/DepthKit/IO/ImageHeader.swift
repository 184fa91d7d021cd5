import Foundation

/// The size a compressed image says it has, read from its header without decoding anything: a
/// JPEG's frame header (SOFn), a PNG's IHDR. A receiver checks it against its limit before a
/// decoder allocates for it (a 600-byte JPEG may claim 16384×16384, 1 GiB of rgba8), so a sample
/// over the limit costs only this walk over its first markers. Pure Swift over the bytes: no
/// allocation, no decoder state, every read bounds-checked (a fuzz target can call `read` with any
/// bytes).
public enum ImageHeader {
    public enum Kind: String, Sendable { case jpeg = "JPEG", png = "PNG" }

    /// What a header says.
    public struct Info: Sendable, Equatable {
        public var kind: Kind
        public var width: Int
        public var height: Int
        public init(kind: Kind, width: Int, height: Int) { self.kind = kind; self.width = width; self.height = height }
    }

    /// The kind and size `bytes` claim: a PNG's IHDR, or the first frame header (SOF0…SOF15) of a
    /// JPEG — the one libjpeg takes (it refuses a second). Throws `DepthKitError.file` naming `name`
    /// when the bytes are neither PNG nor JPEG or the header is cut short or malformed; a zero
    /// width or height is an error too (no decoder makes an image of it).
    public static func read(_ bytes: UnsafeRawBufferPointer, name: String) throws -> Info {
        func bad(_ why: String) -> DepthKitError { .file(path: name, problem: why) }
        let n = bytes.count
        func u8(_ i: Int) -> Int { Int(bytes[i]) }
        func be16(_ i: Int) -> Int { u8(i) << 8 | u8(i + 1) }
        func be32(_ i: Int) -> Int { u8(i) << 24 | u8(i + 1) << 16 | u8(i + 2) << 8 | u8(i + 3) }
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        if n >= 8, (0..<8).allSatisfy({ bytes[$0] == png[$0] }) {
            // The signature, then the IHDR chunk first: length 13, "IHDR", width, height (big-endian).
            guard n >= 24, be32(8) == 13, bytes[12] == 0x49, bytes[13] == 0x48, bytes[14] == 0x44, bytes[15] == 0x52 else {
                throw bad("PNG without an IHDR chunk first (\(n) bytes)")
            }
            let w = be32(16), h = be32(20)
            guard w > 0, h > 0 else { throw bad("PNG header says \(w)x\(h)") }
            return Info(kind: .png, width: w, height: h)
        }
        guard n >= 2, bytes[0] == 0xFF, bytes[1] == 0xD8 else {
            let head = (0..<min(4, n)).map { String(format: "%02x", bytes[$0]) }.joined()
            throw bad("image data is neither PNG nor JPEG (\(n) bytes, starts \(head.isEmpty ? "with nothing" : head))")
        }
        // Marker segments after SOI: 0xFF (fill bytes allowed), the marker, and for all but the
        // standalone ones a 2-byte length that counts itself. The frame header comes before SOS.
        var at = 2
        while true {
            guard at < n, bytes[at] == 0xFF else { throw bad("JPEG header cut short or malformed at byte \(at) (no frame header)") }
            while at < n, bytes[at] == 0xFF { at += 1 }
            guard at < n else { throw bad("JPEG header cut short (no frame header)") }
            let marker = u8(at)
            at += 1
            if marker == 0x01 || (0xD0...0xD7).contains(marker) { continue }  // TEM, RSTn: no length
            guard marker != 0xD8, marker != 0xD9, marker != 0xDA else {
                throw bad("JPEG has no frame header before marker \(String(format: "%02X", marker))")
            }
            guard at + 2 <= n else { throw bad("JPEG header cut short (no frame header)") }
            let length = be16(at)
            guard length >= 2 else { throw bad("JPEG marker \(String(format: "%02X", marker)) has length \(length)") }
            // SOF0…SOF15 but DHT (C4), JPG (C8) and DAC (CC): precision, height, width, components.
            if (0xC0...0xCF).contains(marker), marker != 0xC4, marker != 0xC8, marker != 0xCC {
                guard length >= 8, at + 8 <= n else { throw bad("JPEG frame header cut short") }
                let h = be16(at + 3), w = be16(at + 5)
                guard w > 0, h > 0 else { throw bad("JPEG frame header says \(w)x\(h)") }
                return Info(kind: .jpeg, width: w, height: h)
            }
            at += length
        }
    }

    /// `read` over an array's bytes.
    public static func read(_ bytes: some Collection<UInt8>, name: String) throws -> Info {
        if let r = try bytes.withContiguousStorageIfAvailable({ try read(UnsafeRawBufferPointer($0), name: name) }) { return r }
        return try Array(bytes).withUnsafeBytes { try read($0, name: name) }
    }
}
