import DepthKit
import CShim
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
        precondition(dst.format == .rgba8)
        let width = dst.width
        parallelRows(dst.height) { rows in
            for y in rows {
                let s = (src + y * bytesPerLine).assumingMemoryBound(to: UInt8.self)
                let d = dst.row(y, as: UInt8.self)
                var x = 0
                while x < width {
                    let i = x / 2 * 4
                    let dd = Int(s[i + 1]) - 128, e = Int(s[i + 3]) - 128
                    let rv = 409 * e + 128, gv = -100 * dd - 208 * e + 128, bv = 516 * dd + 128
                    var c = 298 * (Int(s[i]) - 16)
                    d[4 * x] = clamp8((c + rv) >> 8)
                    d[4 * x + 1] = clamp8((c + gv) >> 8)
                    d[4 * x + 2] = clamp8((c + bv) >> 8)
                    d[4 * x + 3] = 255
                    if x + 1 < width {
                        c = 298 * (Int(s[i + 2]) - 16)
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

    /// RGB24 (or BGR24 when `bgr`) → rgba8, alpha 255.
    public static func rgb24ToRGBA(_ src: UnsafeRawPointer, bytesPerLine: Int, bgr: Bool, into dst: PixelBuffer) {
        precondition(dst.format == .rgba8)
        let width = dst.width
        let (r, b) = bgr ? (2, 0) : (0, 2)
        parallelRows(dst.height) { rows in
            for y in rows {
                let s = (src + y * bytesPerLine).assumingMemoryBound(to: UInt8.self)
                let d = dst.row(y, as: UInt8.self)
                for x in 0..<width {
                    d[4 * x] = s[3 * x + r]
                    d[4 * x + 1] = s[3 * x + 1]
                    d[4 * x + 2] = s[3 * x + b]
                    d[4 * x + 3] = 255
                }
            }
        }
        dst.markModified()
    }

    /// GREY (8-bit) → rgba8 (r = g = b, alpha 255).
    public static func greyToRGBA(_ src: UnsafeRawPointer, bytesPerLine: Int, into dst: PixelBuffer) {
        precondition(dst.format == .rgba8)
        let width = dst.width
        parallelRows(dst.height) { rows in
            for y in rows {
                let s = (src + y * bytesPerLine).assumingMemoryBound(to: UInt8.self)
                let d = dst.row(y, as: UInt8.self)
                for x in 0..<width {
                    let v = s[x]
                    d[4 * x] = v; d[4 * x + 1] = v; d[4 * x + 2] = v; d[4 * x + 3] = 255
                }
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
            let problem = String(cString: message)
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
