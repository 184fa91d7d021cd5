#if canImport(Glibc)
import Glibc
#endif
import CDepthKit

/// Reads and writes the image files depthlens meets: PNG, JPEG, binary PGM/PPM and PFM.
///
/// Reading detects the format from the file's first bytes, never its extension. What comes back:
/// - 8-bit gray (PNG, JPEG, PGM) → `gray8`
/// - any 8- or 16-bit color or gray+alpha (PNG, JPEG, PPM) → `rgba8` (16-bit color rounded to 8 bits)
/// - 16-bit gray (PNG, PGM) → `gray16(depthScale: 0)`, raw counts (`DepthIO` applies a scale)
/// - gray PFM (`Pf`) → `depthFloat32`, raw values (NaN/Inf kept; `DepthIO` canonicalizes them)
///
/// PGM/PPM samples are kept raw whatever the maxval (depth maps use odd maxvals).
/// Writing picks the format from the extension and is atomic (see `FileSupport.atomicWrite`).
public enum ImageIO {
    public enum FileKind: String, Sendable { case png = "PNG", jpeg = "JPEG", pgm = "PGM", ppm = "PPM", pfm = "PFM" }

    /// The format of the file at `path` from its magic bytes.
    public static func detect(_ path: String) throws -> FileKind {
        let head = try FileSupport.readPrefix(path, count: 16)
        return try detect(head, path: path)
    }

    static func detect(_ head: [UInt8], path: String) throws -> FileKind {
        if head.count >= 8, head[0..<8].elementsEqual([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if head.count >= 3, head[0] == 0xFF, head[1] == 0xD8, head[2] == 0xFF { return .jpeg }
        if head.count >= 2, head[0] == UInt8(ascii: "P") {
            switch head[1] {
            case UInt8(ascii: "5"): return .pgm
            case UInt8(ascii: "6"): return .ppm
            case UInt8(ascii: "f"), UInt8(ascii: "F"): return .pfm
            case UInt8(ascii: "1")...UInt8(ascii: "4"), UInt8(ascii: "7"):
                throw DepthKitError.file(path: path, problem:
                    "ASCII or bitmap PNM (P\(Character(UnicodeScalar(head[1])))) is not supported; use binary P5/P6")
            default: break
            }
        }
        throw DepthKitError.file(path: path, problem: "not a PNG/JPEG/PGM/PPM/PFM image")
    }

    /// Reads any supported image (see the type's documentation for the formats that come back).
    /// - Parameter pgmLittleEndian: 16-bit PGM samples are little-endian (NYU's samples are),
    ///   not big-endian as the format says.
    public static func read(_ path: String, pgmLittleEndian: Bool = false) throws -> PixelBuffer {
        switch try detect(path) {
        case .png: return try readDecoded(path, kind: .png)
        case .jpeg: return try readDecoded(path, kind: .jpeg)
        case .pgm, .ppm: return try PNM.read(path, bytes: FileSupport.readAll(path), littleEndian: pgmLittleEndian)
        case .pfm: return try PNM.readPFM(path, bytes: FileSupport.readAll(path))
        }
    }

    /// Reads a color image as `rgba8`, the form every color kernel takes (gray is expanded).
    public static func readColor(_ path: String) throws -> PixelBuffer {
        let b = try read(path)
        switch b.format {
        case .rgba8: return b
        case .gray8, .rgb8, .bgra8: return toRGBA8(b)
        case .gray16: throw DepthKitError.file(path: path, problem: "16-bit gray image is not a color image (is it a depth map?)")
        case .depthFloat16, .depthFloat32, .disparityFloat16, .disparityFloat32: throw DepthKitError.file(path: path, problem: "\(b.format) image is not a color image (is it a depth map?)")
        }
    }

    /// A packed `rgba8` copy of an 8-bit color or gray buffer.
    /// `b` itself when it is 8-bit color or gray (what point clouds sample), else `toRGBA8(b)`.
    public static func toEightBit(_ b: PixelBuffer) -> PixelBuffer {
        [.rgba8, .bgra8, .rgb8, .gray8].contains(b.format) ? b : toRGBA8(b)
    }

    public static func toRGBA8(_ b: PixelBuffer) -> PixelBuffer {
        if b.format == .rgba8 { return b.clone() }
        let out = PixelBuffer(width: b.width, height: b.height, format: .rgba8)
        let fmt = b.format
        for y in 0..<b.height {
            let s = b.row(y, as: UInt8.self), d = out.row(y, as: UInt8.self)
            for x in 0..<b.width {
                let o = 4 * x
                switch fmt {
                case .gray8: d[o] = s[x]; d[o + 1] = s[x]; d[o + 2] = s[x]; d[o + 3] = 255
                case .rgb8: d[o] = s[3 * x]; d[o + 1] = s[3 * x + 1]; d[o + 2] = s[3 * x + 2]; d[o + 3] = 255
                case .bgra8: d[o] = s[o + 2]; d[o + 1] = s[o + 1]; d[o + 2] = s[o]; d[o + 3] = s[o + 3]
                case .rgba8, .gray16, .depthFloat16, .depthFloat32, .disparityFloat16, .disparityFloat32: preconditionFailure("toRGBA8 on \(fmt)")
                }
            }
        }
        return out
    }

    // MARK: PNG / JPEG through the C shim

    private static func readDecoded(_ path: String, kind: FileKind) throws -> PixelBuffer {
        try decoded(path, kind: kind) { img, err in
            kind == .png ? dl_png_read(path, &img, &err, err.count) : dl_jpeg_read(path, &img, &err, err.count)
        }
    }

    /// The width and height a PNG (its IHDR) or JPEG (its frame header) in memory claims, read
    /// without decoding; nil when the bytes are neither, or the header cannot be read (or claims
    /// more than 2^28 pixels: `decode` says which).
    public static func headerSize(_ bytes: UnsafeRawBufferPointer) -> (width: Int, height: Int)? {
        guard bytes.count >= 24, let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return nil }
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        if (0..<8).allSatisfy({ base[$0] == png[$0] }) {
            guard base[12] == UInt8(ascii: "I"), base[13] == UInt8(ascii: "H"), base[14] == UInt8(ascii: "D"),
                  base[15] == UInt8(ascii: "R") else { return nil }
            func be32(_ i: Int) -> Int { Int(base[i]) << 24 | Int(base[i + 1]) << 16 | Int(base[i + 2]) << 8 | Int(base[i + 3]) }
            return (be32(16), be32(20))
        }
        if base[0] == 0xFF, base[1] == 0xD8 {
            var w: UInt32 = 0, h: UInt32 = 0, gray: Int32 = 0
            var err = [CChar](repeating: 0, count: 256)
            guard dl_jpeg_info(base, bytes.count, &w, &h, &gray, &err, err.count) == 0 else { return nil }
            return (Int(w), Int(h))
        }
        return nil
    }

    /// Decodes a PNG or JPEG held in memory (a ROS `CompressedImage`), the format detected from its
    /// first bytes; the same pixel formats come back as from `read`. `name` (the file and message)
    /// is what errors name. A header claiming more than `maxPixels` (at most 2^28, the format
    /// limit) is refused before anything is allocated; the pixels' memory is committed as rows are
    /// decoded (`PixelBuffer.make`), so data that ends early costs the rows it held.
    ///
    /// `into`: where a color JPEG's rgba8 rows go — given the header's width and height, a buffer
    /// of that size and format (a network source's pool, so a stream of frames reuses the same
    /// pages), or nil for a new one.
    public static func decode(_ bytes: UnsafeRawBufferPointer, name: String,
                              maxPixels: Int = Int(DL_MAX_IMAGE_PIXELS),
                              into target: (_ width: Int, _ height: Int) -> PixelBuffer? = { _, _ in nil }) throws -> PixelBuffer {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count >= 8 else {
            throw DepthKitError.file(path: name, problem: "image data of \(bytes.count) bytes is neither PNG nor JPEG")
        }
        if maxPixels < Int(DL_MAX_IMAGE_PIXELS), let size = headerSize(bytes), size.width * size.height > maxPixels {
            throw DepthKitError.file(path: name, problem: "image size \(size.width)x\(size.height) is more than \(maxPixels) pixels")
        }
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        if (0..<8).allSatisfy({ base[$0] == png[$0] }) {
            return try decoded(name, kind: .png) { img, err in dl_png_decode(base, bytes.count, &img, &err, err.count) }
        }
        if base[0] == 0xFF, base[1] == 0xD8 {
            // A color JPEG straight into rgba8 rows (the pixels `dl_jpeg_decode` gives, without its
            // RGB buffer and the pass that spreads it to RGBA); gray ones as gray8.
            var w: UInt32 = 0, h: UInt32 = 0, gray: Int32 = 0
            var err = [CChar](repeating: 0, count: 512)
            // A header that cannot be read, or is over the size limit, goes the other way, which says so.
            if dl_jpeg_info(base, bytes.count, &w, &h, &gray, &err, err.count) == 0, gray == 0, w > 0, h > 0 {
                let given = target(Int(w), Int(h)).flatMap { $0.width == Int(w) && $0.height == Int(h) && $0.format == .rgba8 ? $0 : nil }
                let out = try given ?? PixelBuffer.make(width: Int(w), height: Int(h), format: .rgba8, for: name)
                let dst = out.baseAddress.assumingMemoryBound(to: UInt8.self)
                guard dl_jpeg_decode_rgba(base, bytes.count, dst, out.bytesPerRow, w, h, &err, err.count) == 0 else {
                    let msg = String(cBuffer: err)
                    throw DepthKitError.file(path: name, problem: "corrupt \(FileKind.jpeg.rawValue): \(msg.isEmpty ? "cannot decode" : msg)")
                }
                out.markModified()
                return out
            }
            return try decoded(name, kind: .jpeg) { img, err in dl_jpeg_decode(base, bytes.count, 0, 0, &img, &err, err.count) }
        }
        throw DepthKitError.file(path: name, problem: "image data is neither PNG nor JPEG (starts "
                                 + (0..<4).map { (base[$0] < 16 ? "0" : "") + String(base[$0], radix: 16) }.joined() + ")")
    }

    private static func decoded(_ path: String, kind: FileKind,
                                _ decode: (inout dl_image, inout [CChar]) -> Int32) throws -> PixelBuffer {
        var img = dl_image()
        var err = [CChar](repeating: 0, count: 512)
        let rc = decode(&img, &err)
        guard rc == 0, let pixels = img.pixels else {
            dl_image_free(&img)
            let msg = String(cBuffer: err)
            throw DepthKitError.file(path: path, problem: "corrupt \(kind.rawValue): \(msg.isEmpty ? "cannot decode" : msg)")
        }
        defer { dl_image_free(&img) }
        let w = Int(img.width), h = Int(img.height), ch = Int(img.channels), bits = Int(img.bit_depth)
        let rowBytes = img.row_bytes
        let src = UnsafeRawPointer(pixels)
        guard w > 0, h > 0, (1...4).contains(ch), bits == 8 || bits == 16 else {
            throw DepthKitError.file(path: path, problem: "unsupported \(kind.rawValue) layout (\(ch) channels, \(bits) bits)")
        }
        if ch == 1 {
            let out = try PixelBuffer.make(width: w, height: h, format: bits == 8 ? .gray8 : .gray16(depthScale: 0), for: path)
            let n = w * bits / 8
            for y in 0..<h { out.row(y).copyMemory(from: src + y * rowBytes, byteCount: n) }
            return out
        }
        let out = try PixelBuffer.make(width: w, height: h, format: .rgba8, for: path)
        // The common layouts (every JPEG file, 8-bit RGB and RGBA PNGs) row by row, in bands of rows.
        if bits == 8 && ch == 3 {
            RGB24.toRGBA(src, bytesPerLine: rowBytes, bgr: false, into: out)
            return out
        }
        if bits == 8 && ch == 4 {
            parallelRows(h) { rows in
                for y in rows { out.row(y).copyMemory(from: src + y * rowBytes, byteCount: 4 * w) }
            }
            return out
        }
        for y in 0..<h {
            let d = out.row(y, as: UInt8.self)
            let r8 = (src + y * rowBytes).assumingMemoryBound(to: UInt8.self)
            let r16 = (src + y * rowBytes).assumingMemoryBound(to: UInt16.self)
            for x in 0..<w {
                @inline(__always) func s(_ c: Int) -> UInt8 {
                    if bits == 8 { return r8[x * ch + c] }
                    return UInt8((UInt32(r16[x * ch + c]) * 255 + 32767) / 65535)
                }
                let o = 4 * x
                switch ch {
                case 2: let g = s(0); d[o] = g; d[o + 1] = g; d[o + 2] = g; d[o + 3] = s(1)
                case 3: d[o] = s(0); d[o + 1] = s(1); d[o + 2] = s(2); d[o + 3] = 255
                default: d[o] = s(0); d[o + 1] = s(1); d[o + 2] = s(2); d[o + 3] = s(3)
                }
            }
        }
        return out
    }

    // MARK: Writing

    /// Writes `buffer` to `path`, the format chosen by the extension:
    /// `.png` (rgba8, bgra8 swizzled to RGBA, rgb8, gray8, gray16), `.pgm` (gray8, gray16),
    /// `.ppm` (rgba8, bgra8, rgb8; alpha dropped), `.pfm` (depth/disparity Float32 or Float16).
    /// The write is atomic: on failure no file (and no temporary) is left behind.
    /// - Parameter pgmLittleEndian: write 16-bit PGM samples little-endian (default big-endian, as the format says).
    public static func write(_ buffer: PixelBuffer, to path: String, pgmLittleEndian: Bool = false) throws {
        let ext = fileExtension(path)
        switch ext {
        case "png": try writePNG(buffer, to: path, with: .standard)
        case "pgm", "ppm", "pnm":
            let bytes = try PNM.encode(buffer, path: path, ppm: ext == "ppm" || (ext == "pnm" && buffer.format.channelCount > 1),
                                       littleEndian: pgmLittleEndian)
            try FileSupport.atomicWrite(bytes, to: path)
        case "pfm":
            try FileSupport.atomicWrite(PNM.encodePFM(buffer, path: path), to: path)
        default:
            throw DepthKitError.file(path: path, problem:
                "cannot write images with extension \(ext.isEmpty ? "(none)" : "." + ext); use .png, .pgm, .ppm or .pfm")
        }
    }

    static func fileExtension(_ path: String) -> String {
        let name = FileSupport.fileName(of: path)
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "" }
        return String(name[name.index(after: dot)...]).lowercased()
    }

    /// How a PNG is encoded: zlib level and strategy, row filter, whether opaque RGBA is written as RGB.
    public struct PNGOptions: Sendable, Equatable {
        /// zlib's level, 0–9.
        public var level: Int32
        /// zlib's strategy: 0 default, 1 filtered, 2 Huffman only, 3 RLE (matches at distance 1 only).
        public var strategy: Int32
        /// The row filter: nil for libpng's adaptive choice per row, else 0–4 (none, sub, up, average, Paeth).
        public var filter: Int32?
        /// 8-bit RGBA whose alpha is 255 everywhere is written as RGB (readers get the same rgba8 back).
        public var dropOpaqueAlpha: Bool
        public init(level: Int32, strategy: Int32 = 0, filter: Int32?, dropOpaqueAlpha: Bool) {
            self.level = level; self.strategy = strategy; self.filter = filter; self.dropOpaqueAlpha = dropOpaqueAlpha
        }
        /// What `write` uses: level 1, adaptive filters, every channel kept.
        public static let standard = PNGOptions(level: 1, filter: nil, dropOpaqueAlpha: false)
        /// Color frames of a sequence (`TUMWriter`): level 1 RLE on the "up" filter, opaque RGBA as
        /// RGB. Camera images change little from row to row; libpng's adaptive choice tries all five
        /// filters on every row (more than the deflate costs), and after "up" RLE is faster than
        /// level 1's match search and smaller on noisy pictures (docs/PERFORMANCE.md, "convert vs ffmpeg").
        public static let frames = PNGOptions(level: 1, strategy: 3, filter: 2, dropOpaqueAlpha: true)
        /// Depth frames of a sequence: level 1 on the "up" filter (RLE would be 5 % larger on D435
        /// depth for no time saved).
        public static let depthFrames = PNGOptions(level: 1, strategy: 0, filter: 2, dropOpaqueAlpha: false)
    }

    /// Writes `buffer` as a PNG with `options` (formats as `write`), atomically.
    public static func writePNG(_ buffer: PixelBuffer, to path: String, options: PNGOptions) throws {
        try writePNG(buffer, to: path, with: options)
    }

    private static func writePNG(_ buffer: PixelBuffer, to path: String, with options: PNGOptions = .standard) throws {
        var source = buffer
        let channels: UInt32, bits: UInt32
        switch buffer.format {
        case .rgba8: channels = 4; bits = 8
        case .bgra8: source = toRGBA8(buffer); channels = 4; bits = 8
        case .rgb8: channels = 3; bits = 8
        case .gray8: channels = 1; bits = 8
        case .gray16: channels = 1; bits = 16
        case .depthFloat16, .depthFloat32, .disparityFloat16, .disparityFloat32:
            throw DepthKitError.file(path: path, problem:
                "cannot write \(buffer.format) as PNG (write depth as .pfm, or convert it to gray16)")
        }
        try FileSupport.atomicWrite(to: path) { temp in
            var err = [CChar](repeating: 0, count: 512)
            errno = 0
            let rc = dl_png_write_options(temp, UInt32(source.width), UInt32(source.height), channels, bits,
                                          source.bytesPerRow, source.baseAddress.assumingMemoryBound(to: UInt8.self),
                                          options.level, options.strategy, options.filter ?? -1, options.dropOpaqueAlpha ? 1 : 0,
                                          &err, err.count)
            guard rc == 0 else {
                // libpng says "Write Error"; the errno its fwrite left says why (a full disk).
                let code = errno
                let why = [ENOSPC, EFBIG, EDQUOT, EIO].contains(code) ? FileSupport.describe(code) : String(cBuffer: err)
                throw DepthKitError.file(path: path, problem: "cannot write PNG: \(why)")
            }
        }
        withExtendedLifetime(source) {}
    }
}
