/// Binary PGM/PPM (P5/P6) and PFM (Pf) codecs. Headers are whitespace-separated tokens with
/// `#` comments to the end of a line; exactly one whitespace byte separates header and data.
enum PNM {
    /// The most pixels a header may claim (guards allocations against a lying header).
    static let maxPixels = 1 << 28

    private static func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D || b == 0x0B || b == 0x0C }

    /// Parses `count` tokens after the 2-byte magic; returns them and the offset of the pixel data.
    static func header(_ bytes: [UInt8], tokens count: Int, kind: String, path: String) throws -> ([String], Int) {
        var i = 2
        var tokens: [String] = []
        func corrupt(_ what: String) -> DepthKitError {
            .file(path: path, problem: "corrupt \(kind) header: \(what)")
        }
        guard bytes.count > 2, isSpace(bytes[2]) else { throw corrupt("no whitespace after the magic number") }
        while tokens.count < count {
            while i < bytes.count {
                if isSpace(bytes[i]) { i += 1; continue }
                if bytes[i] == UInt8(ascii: "#") {
                    while i < bytes.count && bytes[i] != 0x0A && bytes[i] != 0x0D { i += 1 }
                    continue
                }
                break
            }
            let start = i
            while i < bytes.count && !isSpace(bytes[i]) && bytes[i] != UInt8(ascii: "#") && i - start < 64 { i += 1 }
            guard i > start, i < bytes.count else { throw corrupt("ends before the pixel data") }
            tokens.append(String(decoding: bytes[start..<i], as: UTF8.self))
        }
        guard isSpace(bytes[i]) else { throw corrupt("no whitespace after the header") }
        return (tokens, i + 1)
    }

    static func dimensions(_ tokens: [String], kind: String, path: String) throws -> (Int, Int) {
        guard let w = Int(tokens[0]), let h = Int(tokens[1]), w > 0, h > 0,
              w <= maxPixels, h <= maxPixels, w.multipliedReportingOverflow(by: h).partialValue <= maxPixels,
              !w.multipliedReportingOverflow(by: h).overflow else {
            throw DepthKitError.file(path: path, problem: "corrupt \(kind) header: bad size \(tokens[0])x\(tokens[1])")
        }
        return (w, h)
    }

    /// Reads P5 (→ gray8 / gray16, samples as stored) or P6 (→ rgba8; samples rescaled to 8 bits by
    /// maxval, those above it clamped).
    static func read(_ path: String, bytes: [UInt8], littleEndian: Bool) throws -> PixelBuffer {
        let ppm = bytes[1] == UInt8(ascii: "6")
        let kind = ppm ? "PPM" : "PGM"
        let (tokens, offset) = try header(bytes, tokens: 3, kind: kind, path: path)
        let (w, h) = try dimensions(tokens, kind: kind, path: path)
        guard let maxval = Int(tokens[2]), (1...65535).contains(maxval) else {
            throw DepthKitError.file(path: path, problem: "corrupt \(kind) header: maxval \(tokens[2]) is not in 1...65535")
        }
        let bps = maxval <= 255 ? 1 : 2
        let ch = ppm ? 3 : 1
        let expected = w * h * ch * bps
        let found = bytes.count - offset
        guard found >= expected else {
            throw DepthKitError.file(path: path, problem:
                "truncated \(kind): expected \(expected) bytes of pixel data, found \(found)")
        }
        return try bytes.withUnsafeBufferPointer { all -> PixelBuffer in
            let data = all.baseAddress! + offset
            @inline(__always) func sample16(_ i: Int) -> UInt16 {
                let a = UInt16(data[2 * i]), b = UInt16(data[2 * i + 1])
                return littleEndian ? (a | b << 8) : (a << 8 | b)
            }
            if !ppm {
                let out = try PixelBuffer.make(width: w, height: h, format: bps == 1 ? .gray8 : .gray16(depthScale: 0), for: path)
                for y in 0..<h {
                    if bps == 1 {
                        out.row(y).copyMemory(from: data + y * w, byteCount: w)
                    } else {
                        let r = out.row(y, as: UInt16.self)
                        for x in 0..<w { r[x] = sample16(y * w + x) }
                    }
                }
                return out
            }
            // Samples are rescaled from 0...maxval to 0...255; a sample above maxval (which netpbm
            // calls invalid) counts as maxval, as netpbm's own readers clamp it.
            let out = try PixelBuffer.make(width: w, height: h, format: .rgba8, for: path)
            let m = UInt32(maxval)
            for y in 0..<h {
                let r = out.row(y, as: UInt8.self)
                for x in 0..<w {
                    for c in 0..<3 {
                        let i = (y * w + x) * 3 + c
                        if maxval == 255 { r[4 * x + c] = data[i]; continue }
                        let v = min(bps == 1 ? UInt32(data[i]) : UInt32(sample16(i)), m)
                        r[4 * x + c] = UInt8((v * 255 + m / 2) / m)
                    }
                    r[4 * x + 3] = 255
                }
            }
            return out
        }
    }

    /// Reads a gray PFM as raw `depthFloat32` values, rows flipped (PFM stores them bottom-to-top).
    /// The sign of the scale gives the byte order: negative = little-endian.
    static func readPFM(_ path: String, bytes: [UInt8]) throws -> PixelBuffer {
        if bytes[1] == UInt8(ascii: "F") {
            throw DepthKitError.file(path: path, problem: "color PFM (PF) is not supported; depth and disparity are gray PFM (Pf)")
        }
        let (tokens, offset) = try header(bytes, tokens: 3, kind: "PFM", path: path)
        let (w, h) = try dimensions(tokens, kind: "PFM", path: path)
        guard let scale = Float(tokens[2]), scale.isFinite, scale != 0 else {
            throw DepthKitError.file(path: path, problem: "corrupt PFM header: scale \(tokens[2]) is not a non-zero number")
        }
        let little = scale < 0
        let expected = w * h * 4
        let found = bytes.count - offset
        guard found == expected else {
            throw DepthKitError.file(path: path, problem:
                "PFM header size \(w)x\(h) does not match the data (expected \(expected) bytes, found \(found))")
        }
        let out = try PixelBuffer.make(width: w, height: h, format: .depthFloat32, for: path)
        bytes.withUnsafeBytes { raw in
            let data = raw.baseAddress! + offset
            for fileRow in 0..<h {
                let r = out.row(h - 1 - fileRow, as: Float.self)
                for x in 0..<w {
                    let bits = data.loadUnaligned(fromByteOffset: (fileRow * w + x) * 4, as: UInt32.self)
                    r[x] = Float(bitPattern: little ? UInt32(littleEndian: bits) : UInt32(bigEndian: bits))
                }
            }
        }
        return out
    }

    /// P5 for gray8/gray16, P6 for color (alpha dropped).
    static func encode(_ b: PixelBuffer, path: String, ppm: Bool, littleEndian: Bool) throws -> [UInt8] {
        let w = b.width, h = b.height
        var out: [UInt8]
        if ppm {
            guard [.rgba8, .bgra8, .rgb8].contains(b.format) else {
                throw DepthKitError.file(path: path, problem: "cannot write \(b.format) as PPM (needs rgba8, bgra8 or rgb8)")
            }
            out = Array("P6\n\(w) \(h)\n255\n".utf8)
            out.reserveCapacity(out.count + w * h * 3)
            for y in 0..<h {
                for x in 0..<w {
                    let c = b.rgba(x: x, y: y)
                    out.append(c.0); out.append(c.1); out.append(c.2)
                }
            }
            return out
        }
        switch b.format {
        case .gray8:
            out = Array("P5\n\(w) \(h)\n255\n".utf8)
            for y in 0..<h { out.append(contentsOf: UnsafeBufferPointer(start: b.row(y, as: UInt8.self), count: w)) }
        case .gray16:
            out = Array("P5\n\(w) \(h)\n65535\n".utf8)
            out.reserveCapacity(out.count + w * h * 2)
            for y in 0..<h {
                let r = b.row(y, as: UInt16.self)
                for x in 0..<w {
                    let v = r[x]
                    if littleEndian { out.append(UInt8(v & 0xFF)); out.append(UInt8(v >> 8)) }
                    else { out.append(UInt8(v >> 8)); out.append(UInt8(v & 0xFF)) }
                }
            }
        case .bgra8, .rgba8, .rgb8, .depthFloat16, .depthFloat32, .disparityFloat16, .disparityFloat32:
            throw DepthKitError.file(path: path, problem: "cannot write \(b.format) as PGM (needs gray8 or gray16)")
        }
        return out
    }

    /// Gray PFM, little-endian (scale −1), rows bottom-to-top.
    static func encodePFM(_ b: PixelBuffer, path: String) throws -> [UInt8] {
        guard [.depthFloat32, .disparityFloat32, .depthFloat16, .disparityFloat16].contains(b.format) else {
            throw DepthKitError.file(path: path, problem:
                "cannot write \(b.format) as PFM (needs depth or disparity as Float32 or Float16)")
        }
        let w = b.width, h = b.height
        var out = Array("Pf\n\(w) \(h)\n-1\n".utf8)
        out.reserveCapacity(out.count + w * h * 4)
        for fileRow in 0..<h {
            let y = h - 1 - fileRow
            for x in 0..<w {
                let v = b.sample(x: x, y: y).bitPattern.littleEndian
                out.append(UInt8(v & 0xFF)); out.append(UInt8((v >> 8) & 0xFF))
                out.append(UInt8((v >> 16) & 0xFF)); out.append(UInt8(v >> 24))
            }
        }
        return out
    }
}
