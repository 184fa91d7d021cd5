import CMedia
import CDepthKit
import DepthKit

/// One coded picture (a HEIF HEVC item or tile, a PNG or JPEG payload) decoded through CMedia's
/// `dl_picture_decoder` (libavcodec). Errors are `CaptureError.file` naming `name` and `what`.
final class PictureDecoder {
    private let handle: OpaquePointer
    let name: String

    enum Output { case rgba8, gray8, gray16 }

    /// - Parameters: `codec` libavcodec's decoder name ("hevc", "png"); `extradata` an hvcC
    ///   payload (or empty); `matrix`/`fullRange` a HEIF nclx's overrides (nil: the stream's).
    init(codec: String, extradata: [UInt8] = [], matrix: Int? = nil, fullRange: Bool? = nil, name: String, what: String) throws {
        var h: OpaquePointer?
        var message = [CChar](repeating: 0, count: 512)
        let r = extradata.withUnsafeBufferPointer {
            dl_picture_decoder_open(codec, $0.baseAddress, $0.count, Int32(matrix ?? -1), fullRange.map { $0 ? 1 : 0 } ?? -1,
                                    &h, &message, message.count)
        }
        guard r == 0, let h else { throw CaptureError.file(path: name, problem: "\(what): \(String(cBuffer: message))") }
        handle = h
        self.name = name
    }

    deinit { dl_picture_decoder_close(handle) }

    /// Decodes `data` into a new buffer (rgba8, gray8, or gray16 with no depth scale).
    func decode(_ data: [UInt8], as output: Output, what: String) throws -> PixelBuffer {
        var picture = dl_picture()
        var message = [CChar](repeating: 0, count: 512)
        let format: Int32
        switch output {
        case .rgba8: format = DL_MEDIA_RGBA8
        case .gray8: format = DL_MEDIA_GRAY8
        case .gray16: format = DL_MEDIA_GRAY16
        }
        let r = data.withUnsafeBufferPointer { dl_picture_decode(handle, $0.baseAddress, $0.count, format, &picture, &message, message.count) }
        defer { dl_picture_free(&picture) }
        guard r == 0, let px = picture.pixels, picture.width > 0, picture.height > 0 else {
            throw CaptureError.file(path: name, problem: "\(what): \(String(cBuffer: message))")
        }
        let pf: PixelFormat
        switch output {
        case .rgba8: pf = .rgba8
        case .gray8: pf = .gray8
        case .gray16: pf = .gray16(depthScale: 0)
        }
        let out = try PixelBuffer.make(width: Int(picture.width), height: Int(picture.height), format: pf, name: name, what: what)
        let rowBytes = Int(picture.width) * pf.bytesPerPixel
        for y in 0..<out.height {
            out.row(y).copyMemory(from: px + y * picture.stride, byteCount: rowBytes)
        }
        return out
    }

    /// A JPEG through libjpeg (`dl_jpeg_decode`, the decoder the image files use): rgba8, or
    /// gray8 for `gray` (a color JPEG's gray is its luma as libjpeg converts it).
    static func jpeg(_ data: ArraySlice<UInt8>, gray: Bool, name: String, what: String) throws -> PixelBuffer {
        var image = dl_image()
        var message = [CChar](repeating: 0, count: 256)
        let r = data.withUnsafeBufferPointer { dl_jpeg_decode($0.baseAddress, $0.count, 0, 0, &image, &message, message.count) }
        defer { dl_image_free(&image) }
        guard r == 0, let px = image.pixels, image.width > 0, image.height > 0 else {
            throw CaptureError.file(path: name, problem: "\(what): \(String(cBuffer: message))")
        }
        let w = Int(image.width), h = Int(image.height), channels = Int(image.channels)
        let out = try PixelBuffer.make(width: w, height: h, format: gray ? .gray8 : .rgba8, name: name, what: what)
        for y in 0..<h {
            let s = px + y * image.row_bytes
            let d = out.row(y, as: UInt8.self)
            for x in 0..<w {
                if gray {
                    // libjpeg gives gray for one-component files; for color, the ITU-R BT.601 luma.
                    if channels == 1 {
                        d[x] = s[x]
                    } else {
                        let r = 299 * Int(s[3 * x]), g = 587 * Int(s[3 * x + 1]), b = 114 * Int(s[3 * x + 2])
                        d[x] = UInt8(min(255, (r + g + b + 500) / 1000))
                    }
                } else if channels == 1 {
                    d[4 * x] = s[x]; d[4 * x + 1] = s[x]; d[4 * x + 2] = s[x]; d[4 * x + 3] = 255
                } else {
                    d[4 * x] = s[3 * x]; d[4 * x + 1] = s[3 * x + 1]; d[4 * x + 2] = s[3 * x + 2]; d[4 * x + 3] = 255
                }
            }
        }
        return out
    }
}

extension PixelBuffer {
    /// `make` for a size a photo or message gives: a size that cannot be allocated is a
    /// `CaptureError.file` naming `name` and `what` (the item, the topic), never a trap.
    static func make(width: Int, height: Int, format: PixelFormat, name: String, what: String) throws -> PixelBuffer {
        do {
            return try make(width: width, height: height, format: format, for: name)
        } catch let DepthKitError.file(_, problem) {
            throw CaptureError.file(path: name, problem: "\(what): \(problem)")
        }
    }
}
