import DepthKit
import CDepthKit
#if canImport(Glibc)
import Glibc
#endif

/// Conversions from V4L2 frame payloads into depthlens' pixel formats. Each writes into a caller's
/// (pooled) buffer and allocates nothing, except MJPEG, whose decoder mallocs its scratch image.
public enum PixelConversion {
    /// YUYV 4:2:2 → rgba8 with BT.601 limited-range coefficients in 8.8 fixed point
    /// (the usual integer form: C = Y−16, D = U−128, E = V−128,
    /// R = (298C + 409E + 128) >> 8, G = (298C − 100D − 208E + 128) >> 8, B = (298C + 516D + 128) >> 8,
    /// each clamped to 0…255; `>>` floors). Integer math keeps CPU results bit-exact everywhere.
    /// - Parameters: `src` rows are `bytesPerLine` apart; each 4 bytes Y0 U Y1 V cover 2 pixels.
    public static func yuyvToRGBA(_ src: UnsafeRawPointer, bytesPerLine: Int, into dst: PixelBuffer) {
        packed422ToRGBA(src, bytesPerLine: bytesPerLine, y0: 0, u: 1, y1: 2, v: 3, into: dst)
    }

    /// UYVY 4:2:2 → rgba8: each 4 bytes U Y0 V Y1 cover 2 pixels; the same coefficients and rounding
    /// as `yuyvToRGBA`, so UYVY of the same Y, U, V gives the same pixels.
    public static func uyvyToRGBA(_ src: UnsafeRawPointer, bytesPerLine: Int, into dst: PixelBuffer) {
        packed422ToRGBA(src, bytesPerLine: bytesPerLine, y0: 1, u: 0, y1: 3, v: 2, into: dst)
    }

    /// Packed 4:2:2 with the byte offsets of Y0, U, Y1, V inside each 4-byte group.
    private static func packed422ToRGBA(_ src: UnsafeRawPointer, bytesPerLine: Int, y0: Int, u: Int, y1: Int, v: Int,
                                        into dst: PixelBuffer) {
        precondition(dst.format == .rgba8)
        let width = dst.width
        parallelRows(dst.height) { rows in
            for y in rows {
                let s = (src + y * bytesPerLine).assumingMemoryBound(to: UInt8.self)
                let d = dst.row(y, as: UInt8.self)
                var x = 0
                while x < width {
                    let i = x / 2 * 4
                    let dd = Int(s[i + u]) - 128, e = Int(s[i + v]) - 128
                    let rv = 409 * e + 128, gv = -100 * dd - 208 * e + 128, bv = 516 * dd + 128
                    var c = 298 * (Int(s[i + y0]) - 16)
                    d[4 * x] = clamp8((c + rv) >> 8)
                    d[4 * x + 1] = clamp8((c + gv) >> 8)
                    d[4 * x + 2] = clamp8((c + bv) >> 8)
                    d[4 * x + 3] = 255
                    if x + 1 < width {
                        c = 298 * (Int(s[i + y1]) - 16)
                        d[4 * x + 4] = clamp8((c + rv) >> 8)
                        d[4 * x + 5] = clamp8((c + gv) >> 8)
                        d[4 * x + 6] = clamp8((c + bv) >> 8)
                        d[4 * x + 7] = 255
                    }
                    x += 2
                }
            }
        }
        dst.markModified()
    }

    /// NV12 (4:2:0: a luma plane of H rows, then ⌈H/2⌉ rows of interleaved U V, both `bytesPerLine`
    /// apart, the chroma plane at `bytesPerLine · H`) → rgba8; pixel (x, y) takes the U V pair at
    /// (x/2, y/2) and the YUYV path's coefficients and rounding.
    public static func nv12ToRGBA(_ src: UnsafeRawPointer, bytesPerLine: Int, into dst: PixelBuffer) {
        precondition(dst.format == .rgba8)
        let width = dst.width
        let chroma = src + bytesPerLine * dst.height
        parallelRows(dst.height) { rows in
            for y in rows {
                let s = (src + y * bytesPerLine).assumingMemoryBound(to: UInt8.self)
                let c = (chroma + (y / 2) * bytesPerLine).assumingMemoryBound(to: UInt8.self)
                let d = dst.row(y, as: UInt8.self)
                for x in 0..<width {
                    let i = x / 2 * 2
                    let dd = Int(c[i]) - 128, e = Int(c[i + 1]) - 128
                    let l = 298 * (Int(s[x]) - 16)
                    d[4 * x] = clamp8((l + 409 * e + 128) >> 8)
                    d[4 * x + 1] = clamp8((l - 100 * dd - 208 * e + 128) >> 8)
                    d[4 * x + 2] = clamp8((l + 516 * dd + 128) >> 8)
                    d[4 * x + 3] = 255
                }
            }
        }
        dst.markModified()
    }

    /// RGB24 (or BGR24 when `bgr`) → rgba8, alpha 255 (DepthKit's `RGB24`, which image files share).
    public static func rgb24ToRGBA(_ src: UnsafeRawPointer, bytesPerLine: Int, bgr: Bool, into dst: PixelBuffer) {
        RGB24.toRGBA(src, bytesPerLine: bytesPerLine, bgr: bgr, into: dst)
    }

    /// GREY (8-bit) → rgba8 (r = g = b, alpha 255).
    public static func greyToRGBA(_ src: UnsafeRawPointer, bytesPerLine: Int, into dst: PixelBuffer) {
        grayBytesToRGBA(src, bytesPerLine: bytesPerLine, bytesPerPixel: 1, into: dst)
    }

    /// Y8I (RealSense's interleaved IR pair, 2 bytes a pixel: left, right) → rgba8 of the left image.
    public static func y8iLeftToRGBA(_ src: UnsafeRawPointer, bytesPerLine: Int, into dst: PixelBuffer) {
        grayBytesToRGBA(src, bytesPerLine: bytesPerLine, bytesPerPixel: 2, into: dst)
    }

    /// The first byte of each `bytesPerPixel`-byte pixel as gray → rgba8 (r = g = b, alpha 255).
    private static func grayBytesToRGBA(_ src: UnsafeRawPointer, bytesPerLine: Int, bytesPerPixel: Int, into dst: PixelBuffer) {
        precondition(dst.format == .rgba8)
        let width = dst.width
        parallelRows(dst.height) { rows in
            for y in rows {
                let s = (src + y * bytesPerLine).assumingMemoryBound(to: UInt8.self)
                let d = dst.row(y, as: UInt8.self)
                for x in 0..<width {
                    let v = s[bytesPerPixel * x]
                    d[4 * x] = v; d[4 * x + 1] = v; d[4 * x + 2] = v; d[4 * x + 3] = 255
                }
            }
        }
        dst.markModified()
    }

    /// Y10, Y12 or Y16 (`bits` significant bits in little-endian 16-bit words; higher bits are
    /// ignored) → rgba8 gray of the top 8 bits: v8 = (w & (2^bits − 1)) >> (bits − 8).
    public static func grayWordsToRGBA(_ src: UnsafeRawPointer, bytesPerLine: Int, bits: Int, into dst: PixelBuffer) {
        precondition(dst.format == .rgba8 && (8...16).contains(bits))
        let width = dst.width
        let mask = UInt16(truncatingIfNeeded: (1 << bits) - 1), shift = UInt16(bits - 8)
        parallelRows(dst.height) { rows in
            for y in rows {
                let s = src + y * bytesPerLine
                let d = dst.row(y, as: UInt8.self)
                for x in 0..<width {
                    let w = UInt16(littleEndian: s.loadUnaligned(fromByteOffset: 2 * x, as: UInt16.self)) & mask
                    let v = UInt8(truncatingIfNeeded: w >> shift)
                    d[4 * x] = v; d[4 * x + 1] = v; d[4 * x + 2] = v; d[4 * x + 3] = 255
                }
            }
        }
        dst.markModified()
    }

    /// Y10, Y12 or Y16 → gray16 at full 16-bit scale by bit replication (librealsense's Y10 → Y16):
    /// v = w & (2^bits − 1), out = v << (16 − bits) | v >> (2·bits − 16); so 0 → 0 and the
    /// largest value → 65535, and the top 8 bits equal `grayWordsToRGBA`'s.
    public static func grayWordsToGray16(_ src: UnsafeRawPointer, bytesPerLine: Int, bits: Int, into dst: PixelBuffer) {
        guard case .gray16 = dst.format, (8...16).contains(bits) else { preconditionFailure("grayWordsToGray16 into \(dst.format)") }
        let width = dst.width
        let mask = UInt16(truncatingIfNeeded: (1 << bits) - 1)
        let up = UInt16(16 - bits), down = UInt16(2 * bits - 16)
        for y in 0..<dst.height {
            let s = src + y * bytesPerLine
            let d = dst.row(y, as: UInt16.self)
            for x in 0..<width {
                let v = UInt16(littleEndian: s.loadUnaligned(fromByteOffset: 2 * x, as: UInt16.self)) & mask
                d[x] = v << up | v >> down
            }
        }
        dst.markModified()
    }

    /// The left pixel of a Y12I pair (3 bytes b0 b1 b2). The byte layout is librealsense's
    /// `y12i_pixel` {rl:8, rh:4, ll:4, lh:8}: left = b2 << 4 | b1 >> 4, right = (b1 & 15) << 8 | b0.
    /// (The kernel's pixfmt-y12i page names the two halves the other way round; librealsense, which
    /// reads the D400s that send Y12I, shows this half as the left imager, IR 1.) As librealsense does,
    /// the value holds 10 significant bits; larger values are clamped to 1023.
    @inline(__always)
    static func y12iLeft(_ s: UnsafePointer<UInt8>, _ x: Int) -> UInt16 {
        let v = UInt16(s[3 * x + 2]) << 4 | UInt16(s[3 * x + 1] >> 4)
        return min(v, 1023)
    }

    /// Y12I → rgba8 gray of the left image's top 8 bits: v8 = left >> 2.
    public static func y12iLeftToRGBA(_ src: UnsafeRawPointer, bytesPerLine: Int, into dst: PixelBuffer) {
        precondition(dst.format == .rgba8)
        let width = dst.width
        parallelRows(dst.height) { rows in
            for y in rows {
                let s = (src + y * bytesPerLine).assumingMemoryBound(to: UInt8.self)
                let d = dst.row(y, as: UInt8.self)
                for x in 0..<width {
                    let v = UInt8(truncatingIfNeeded: y12iLeft(s, x) >> 2)
                    d[4 * x] = v; d[4 * x + 1] = v; d[4 * x + 2] = v; d[4 * x + 3] = 255
                }
            }
        }
        dst.markModified()
    }

    /// Y12I → gray16 of the left image as librealsense's Y12I → Y16: left << 6 | left >> 4.
    public static func y12iLeftToGray16(_ src: UnsafeRawPointer, bytesPerLine: Int, into dst: PixelBuffer) {
        guard case .gray16 = dst.format else { preconditionFailure("y12iLeftToGray16 into \(dst.format)") }
        let width = dst.width
        for y in 0..<dst.height {
            let s = (src + y * bytesPerLine).assumingMemoryBound(to: UInt8.self)
            let d = dst.row(y, as: UInt16.self)
            for x in 0..<width {
                let v = y12iLeft(s, x)
                d[x] = v << 6 | v >> 4
            }
        }
        dst.markModified()
    }

    /// Z16 (little-endian 16-bit depth units) → depthFloat32 meters: d = v / unitsPerMeter, 0 stays 0 (invalid).
    public static func z16ToMeters(_ src: UnsafeRawPointer, bytesPerLine: Int, unitsPerMeter: Float, into dst: PixelBuffer) {
        precondition(dst.format == .depthFloat32 && unitsPerMeter > 0)
        let width = dst.width
        let inv = 1 / unitsPerMeter
        parallelRows(dst.height) { rows in
            for y in rows {
                let s = src + y * bytesPerLine
                let d = dst.row(y, as: Float.self)
                for x in 0..<width {
                    let v = UInt16(littleEndian: s.loadUnaligned(fromByteOffset: 2 * x, as: UInt16.self))
                    d[x] = Float(v) * inv
                }
            }
        }
        dst.markModified()
    }

    /// Y16 (little-endian 16-bit gray) → gray16, row by row.
    public static func y16ToGray16(_ src: UnsafeRawPointer, bytesPerLine: Int, into dst: PixelBuffer) {
        guard case .gray16 = dst.format else { preconditionFailure("y16ToGray16 into \(dst.format)") }
        let width = dst.width
        for y in 0..<dst.height {
            let s = src + y * bytesPerLine
            let d = dst.row(y, as: UInt16.self)
            for x in 0..<width {
                d[x] = UInt16(littleEndian: s.loadUnaligned(fromByteOffset: 2 * x, as: UInt16.self))
            }
        }
        dst.markModified()
    }

    /// MJPEG (one JPEG per frame) → rgba8 through libjpeg (`dl_jpeg_decode`). Throws a one-line
    /// problem string when the data is corrupt or its size differs from `dst`.
    public static func mjpegToRGBA(_ data: UnsafeRawPointer, count: Int, into dst: PixelBuffer) throws -> Void {
        var image = dl_image()
        var message = [CChar](repeating: 0, count: 256)
        // The frame's size is checked against dst's before the decoder allocates anything.
        let r = dl_jpeg_decode(data.assumingMemoryBound(to: UInt8.self), count, UInt32(dst.width), UInt32(dst.height),
                               &image, &message, message.count)
        defer { dl_image_free(&image) }
        guard r == 0, let px = image.pixels else {
            let problem = String(cBuffer: message)
            throw ConversionProblem(r == -2 ? "MJPEG \(problem)" : "corrupt MJPEG frame: \(problem)")
        }
        if image.channels == 1 {
            greyToRGBA(px, bytesPerLine: image.row_bytes, into: dst)
        } else {
            rgb24ToRGBA(px, bytesPerLine: image.row_bytes, bgr: false, into: dst)
        }
    }

    @inline(__always)
    static func clamp8(_ v: Int) -> UInt8 { UInt8(truncatingIfNeeded: v < 0 ? 0 : (v > 255 ? 255 : v)) }
}

/// A frame that could not be converted; the camera turns it into a `CaptureError`.
struct ConversionProblem: Error { let message: String; init(_ m: String) { message = m } }
