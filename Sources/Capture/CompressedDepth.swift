import DepthKit

/// image_transport's `compressedDepth` (ros-perception/image_transport_plugins,
/// compressed_depth_image_transport `codec.cpp`, `rvl_codec.cpp`), decoded from bytes.
///
/// A `sensor_msgs/CompressedImage` whose `format` is "ENCODING; compressedDepth CODEC" (CODEC `png`
/// or `rvl`; a bare "compressedDepth", or no `;` at all, is PNG, as the plugin reads them). `data`
/// is a 12-byte ConfigHeader (int32 format, float32 depthQuantA, float32 depthQuantB, little-endian
/// as the plugin memcpy's it on x86) and then the image:
/// - PNG: a 16-bit gray PNG.
/// - RVL: uint32 cols, uint32 rows, then Wilson's RVL code (32-bit little-endian words of 4-bit
///   nibbles, most significant first; each value a run of nibbles of 3 bits each, least significant
///   group first, the 4th bit set when more follow; per run: zeros count, nonzeros count, then each
///   nonzero as the zigzag of its difference from the previous nonzero).
/// For `16UC1`/`mono16` the 16-bit values are the depth in the recording's units. For `32FC1` they
/// are quantized inverse depth: depth = depthQuantA / (v − depthQuantB) in meters, v = 0 invalid.
public enum CompressedDepth {
    public enum Codec: String, Sendable { case png, rvl }

    /// What the `format` string says: the original encoding and the codec.
    public struct Format: Sendable, Equatable {
        public var encoding: String
        public var codec: Codec
        /// `32FC1`: the values are quantized inverse depth.
        public var isInverseDepth: Bool { encoding == "32FC1" }
    }

    /// The ConfigHeader's size in bytes.
    public static let configHeaderSize = 12

    /// True when `format` names compressedDepth (the only sure sign; topics usually end in
    /// `/compressedDepth` too).
    public static func isCompressedDepth(_ format: String) -> Bool { format.contains("compressedDepth") }

    /// Parses `format` as the plugin does. Throws for a codec it does not know, or an encoding that
    /// is not 16-bit or 32-bit float single-channel depth.
    public static func format(_ text: String, file: String, topic: String) throws -> Format {
        let parts = text.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false)
        let encoding = parts[0].filter { $0 != " " }
        var codec = Codec.png
        if parts.count == 2 {
            let rest = parts[1]
            if rest.contains("compressedDepth png") {
                codec = .png
            } else if rest.contains("compressedDepth rvl") {
                codec = .rvl
            } else if rest.contains("compressedDepth"), !rest.contains("compressedDepth ") {
                codec = .png
            } else {
                throw CaptureError.file(path: file, problem: "unsupported compressedDepth format '\(text)' on topic \(topic)")
            }
        }
        guard ["16UC1", "mono16", "32FC1"].contains(encoding) else {
            throw CaptureError.file(path: file, problem: "unsupported encoding \(encoding) on topic \(topic) (compressedDepth holds 16UC1, mono16 or 32FC1)")
        }
        return Format(encoding: String(encoding), codec: codec)
    }

    /// The most pixels a compressedDepth image may claim: 2^24 (4096 × 4096; depth cameras give up
    /// to about 5 megapixels). RVL codes a run of zeros of any length in a few bits, so the size
    /// the 8-byte header claims is all that bounds the image: 2^28 pixels (the image files' limit)
    /// would be 512 MiB of values and 1 GiB of meters from a 28-byte payload.
    public static let maxPixels = 1 << 24

    /// A decoded compressedDepth image: the 16-bit values and what they mean.
    public struct Image: Sendable {
        public var format: Format
        /// The values, `gray16` with no depth scale. Its pages are committed as values are written
        /// (`PixelBuffer.make`): RVL's runs of zeros are never written.
        public var pixels: PixelBuffer
        public var width: Int { pixels.width }
        public var height: Int { pixels.height }
        /// Row-major, `width × height` (a copy, for tests and tools).
        public var values: [UInt16] {
            var out: [UInt16] = []
            out.reserveCapacity(width * height)
            for y in 0..<height { out += UnsafeBufferPointer(start: pixels.row(y, as: UInt16.self), count: width) }
            return out
        }
        public var depthQuantA: Float
        public var depthQuantB: Float

        /// Depth in meters: 16-bit values × `units` (meters per unit), or for `32FC1` the inverse
        /// depth expanded as the plugin does (A / (v − B), in float32); 0 stays 0 (invalid), and
        /// so does any non-positive or non-finite result. Zeros are not written (the new buffer
        /// is zero), so an image of invalid depth commits no memory for its rows.
        public func meters(units: Float) -> PixelBuffer {
            let out = PixelBuffer(width: width, height: height, format: .depthFloat32)
            let a = depthQuantA, b = depthQuantB, inverse = format.isInverseDepth
            for y in 0..<height {
                let v = pixels.row(y, as: UInt16.self)
                let d = out.row(y, as: Float.self)
                for x in 0..<width {
                    let raw = v[x]
                    if raw == 0 { continue }
                    let m = inverse ? a / (Float(raw) - b) : Float(raw) * units
                    if m > 0 && m.isFinite { d[x] = m }
                }
            }
            out.markModified()
            return out
        }
    }

    /// Decodes a compressedDepth message's `data` given its `format` string. `expect`: the stream's
    /// size where it is known (the first message's, the CameraInfo's): an image that claims another
    /// is refused before anything is allocated. Any claimed size over `maxPixels` is refused.
    public static func decode(_ data: ArraySlice<UInt8>, format text: String, file: String, topic: String,
                              expect: (width: Int, height: Int)? = nil) throws -> Image {
        let format = try format(text, file: file, topic: topic)
        let what = "compressedDepth image (\(text)) on \(topic)"
        guard data.count > configHeaderSize else {
            throw CaptureError.file(path: file, problem: "\(what) holds \(data.count) bytes, not a 12-byte header and an image")
        }
        let s = data.startIndex
        let a = Float(bitPattern: le32(data, s + 4)), b = Float(bitPattern: le32(data, s + 8))
        if format.isInverseDepth {
            guard a.isFinite, b.isFinite, a != 0 else {
                throw CaptureError.file(path: file, problem: "\(what) has depthQuantA \(a), depthQuantB \(b)")
            }
        }
        let payload = data[(s + configHeaderSize)...]
        /// The claimed size against the limit and the expected size, before any allocation.
        func checkSize(_ width: Int, _ height: Int) throws {
            try ROSImageDecoding.checkDimensions(width: width, height: height, file: file, topic: topic)
            guard width * height <= maxPixels else {
                throw CaptureError.file(path: file, problem: "\(what) claims \(width)x\(height), more than \(maxPixels) pixels")
            }
            if let expect, expect.width != width || expect.height != height {
                throw CaptureError.file(path: file, problem: "\(what) is \(width)x\(height), the stream's images are \(expect.width)x\(expect.height)")
            }
        }
        let pixels: PixelBuffer
        switch format.codec {
        case .png:
            let png: PixelBuffer
            do {
                png = try payload.withUnsafeBytes { bytes in
                    if let size = ImageIO.headerSize(bytes) { try checkSize(size.width, size.height) }
                    return try ImageIO.decode(bytes, name: file)
                }
            } catch let e as DepthKitError {
                switch e {
                case let .file(_, problem), let .invalidArgument(problem):
                    throw CaptureError.file(path: file, problem: "\(what): \(problem)")
                }
            }
            guard case .gray16 = png.format else {
                throw CaptureError.file(path: file, problem: "\(what): the PNG is \(png.format), not 16-bit gray")
            }
            try checkSize(png.width, png.height)
            pixels = png
        case .rvl:
            guard payload.count >= 8 else {
                throw CaptureError.file(path: file, problem: "\(what): RVL data of \(payload.count) bytes has no size")
            }
            let p = payload.startIndex
            let (width, height) = (Int(le32(payload, p)), Int(le32(payload, p + 4)))
            try checkSize(width, height)
            pixels = try rvl(payload[(p + 8)...], width: width, height: height, file: file, what: what)
        }
        return Image(format: format, pixels: pixels, depthQuantA: a, depthQuantB: b)
    }

    /// Decodes `width × height` values of RVL code into a `gray16` buffer. Throws when the code ends
    /// early, a run passes the end of the image or a value needs more than 32 bits. The code is
    /// walked once before the image is allocated, so a header claiming a huge image costs nothing
    /// unless the code really holds it, and only the non-zero values are written (the buffer's
    /// pages are committed as they are).
    public static func rvl(_ code: ArraySlice<UInt8>, width: Int, height: Int, file: String, what: String) throws -> PixelBuffer {
        let count = width * height
        try rvlWalk(code, count: count, file: file, what: what, into: nil)
        let out = try PixelBuffer.make(width: width, height: height, format: .gray16(depthScale: 0), name: file, what: what)
        // Packed rows (`make` without bytesPerRow): the values are one run of `count`.
        let values = UnsafeMutableBufferPointer(start: out.row(0, as: UInt16.self), count: count)
        try rvlWalk(code, count: count, file: file, what: what, into: values)
        out.markModified()
        return out
    }

    private static func rvlWalk(_ code: ArraySlice<UInt8>, count: Int, file: String, what: String,
                                into out: UnsafeMutableBufferPointer<UInt16>?) throws {
        var at = code.startIndex
        var word: UInt32 = 0, nibblesLeft = 0
        func bad(_ why: String) -> CaptureError { .file(path: file, problem: "\(what): corrupt RVL data (\(why))") }
        func value() throws -> Int {
            var v = 0, shift = 0
            while true {
                if nibblesLeft == 0 {
                    guard code.endIndex - at >= 4 else { throw bad("the code ends before the image is complete") }
                    word = le32(code, at)
                    at += 4
                    nibblesLeft = 8
                }
                let nibble = word >> 28
                word <<= 4
                nibblesLeft -= 1
                v |= Int(nibble & 7) << shift
                shift += 3
                if nibble & 8 == 0 { return v }
                guard shift < 33 else { throw bad("a value longer than 32 bits") }
            }
        }
        var filled = 0
        var previous: UInt16 = 0
        while filled < count {
            let zeros = try value()
            guard zeros <= count - filled else { throw bad("a run of \(zeros) zeros passes the image's \(count) pixels") }
            filled += zeros  // the output starts zeroed
            let nonzeros = try value()
            guard nonzeros <= count - filled else { throw bad("a run of \(nonzeros) values passes the image's \(count) pixels") }
            for _ in 0..<nonzeros {
                let positive = try value()
                let delta = (positive >> 1) ^ -(positive & 1)
                previous = UInt16(truncatingIfNeeded: Int(previous) + delta)
                if previous != 0 { out?[filled] = previous }  // the output starts zeroed
                filled += 1
            }
        }
    }

    @inline(__always)
    static func le32(_ b: ArraySlice<UInt8>, _ i: Int) -> UInt32 {
        UInt32(b[i]) | UInt32(b[i + 1]) << 8 | UInt32(b[i + 2]) << 16 | UInt32(b[i + 3]) << 24
    }
}
