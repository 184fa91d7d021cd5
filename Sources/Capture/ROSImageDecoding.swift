import CPlatform
import DepthKit

/// A raw ROS image, ROS 1's `sensor_msgs/Image` or ROS 2's `sensor_msgs/msg/Image` (the same fields).
public protocol RawROSImage {
    var height: Int { get }
    var width: Int { get }
    var encoding: String { get }
    var isBigEndian: Bool { get }
    var step: Int { get }
    /// How many pixel bytes there are.
    var dataCount: Int { get }
    /// Runs `body` over the pixel bytes.
    func withData<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R
}

extension ROSMessage.Image: RawROSImage {
    public var dataCount: Int { data.count }
    public func withData<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R { try data.withUnsafeBytes(body) }
}
extension ROS2Message.Image: RawROSImage {
    public var dataCount: Int { data.count }
    public func withData<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R { try data.withUnsafeBytes(body) }
}
/// A DDS sample's image, its pixels where the sample is (not copied).
extension ROS2Message.ImageView: RawROSImage {
    public var dataCount: Int { pixels.count }
    public func withData<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R { try body(pixels) }
}

/// Raw ROS images into depthlens' pixel formats, for both ROS generations (`BagSource`,
/// `ROS2Source`): depth (`mono16`, `16UC1` raw units; `32FC1` meters) → depthFloat32 meters; color
/// (`rgb8`, `bgr8`, `rgba8`, `bgra8`, `mono8`/`8UC1`, `yuyv`/`YUYV`, `yuv422`/`uyvy`/`UYVY`) → rgba8
/// through `PixelConversion`.
public enum ROSImageDecoding {
    /// The largest width or height accepted, and the most pixels (DL_MAX_IMAGE_PIXELS, as for image files).
    public static let maxSide = 65536
    public static let maxPixels = 1 << 28

    public static func isDepthEncoding(_ e: String) -> Bool { ["mono16", "16UC1", "32FC1"].contains(e) }
    public static func isColorEncoding(_ e: String) -> Bool {
        ["rgb8", "bgr8", "rgba8", "bgra8", "mono8", "8UC1", "yuyv", "YUYV", "yuv422", "uyvy", "UYVY"].contains(e)
    }
    static func bytesPerPixel(_ e: String) -> Int {
        switch e {
        case "rgb8", "bgr8": return 3
        case "rgba8", "bgra8", "32FC1": return 4
        case "mono8", "8UC1": return 1
        default: return 2
        }
    }

    /// A plausible size (1…65536 a side, at most 2^28 pixels).
    public static func checkDimensions(width: Int, height: Int, file: String, topic: String) throws {
        guard width >= 1, height >= 1, width <= maxSide, height <= maxSide, width * height <= maxPixels else {
            throw CaptureError.file(path: file, problem: "image on \(topic) is \(width)x\(height)")
        }
    }

    /// The checks before converting: a supported encoding, a plausible size, rows that hold the
    /// width, an even width for 4:2:2. (The decoders already checked `step × height ≤ data`.)
    public static func check(_ image: some RawROSImage, file: String, topic: String) throws {
        guard isDepthEncoding(image.encoding) || isColorEncoding(image.encoding) else {
            throw CaptureError.file(path: file, problem: "unsupported encoding \(image.encoding) on topic \(topic)")
        }
        try checkDimensions(width: image.width, height: image.height, file: file, topic: topic)
        let bpp = bytesPerPixel(image.encoding)
        guard image.step >= image.width * bpp else {
            throw CaptureError.file(path: file, problem: "image on \(topic): step \(image.step) is less than \(image.width) pixels of \(image.encoding)")
        }
        let (needed, overflow) = image.step.multipliedReportingOverflow(by: image.height)
        guard !overflow, needed <= image.dataCount else {
            throw CaptureError.file(path: file, problem: "image on \(topic) holds \(image.dataCount) bytes, "
                                    + "its step \(image.step) × height \(image.height) needs more")
        }
        if ["yuyv", "YUYV", "yuv422", "uyvy", "UYVY"].contains(image.encoding), image.width % 2 != 0 {
            throw CaptureError.file(path: file, problem: "image on \(topic): \(image.encoding) needs an even width, got \(image.width)")
        }
    }

    /// Depth → depthFloat32 meters: 16-bit raw × `units` (meters per unit), `32FC1` as it is; zero,
    /// negative, NaN and infinite depth become 0 (invalid). Call `check` first. Into `out` when given
    /// (depthFloat32 of the image's size: a pooled buffer), else a new buffer.
    public static func depthMeters(_ image: some RawROSImage, units: Float, into out: PixelBuffer? = nil) -> PixelBuffer {
        precondition(out.map { $0.format == .depthFloat32 && $0.width == image.width && $0.height == image.height } ?? true)
        let out = out ?? PixelBuffer(width: image.width, height: image.height, format: .depthFloat32)
        let width = image.width, step = image.step, big = image.isBigEndian, isFloat = image.encoding == "32FC1"
        image.withData { raw in
            guard let base = raw.baseAddress else { return }
            parallelRows(image.height) { rows in
                for y in rows {
                    let row = base + y * step
                    let d = out.row(y, as: Float.self)
                    if isFloat {
                        for x in 0..<width {
                            var bits = row.loadUnaligned(fromByteOffset: 4 * x, as: UInt32.self)
                            bits = big ? UInt32(bigEndian: bits) : UInt32(littleEndian: bits)
                            let v = Float(bitPattern: bits)
                            d[x] = v > 0 && v.isFinite ? v : 0
                        }
                    } else if big {
                        for x in 0..<width {
                            d[x] = Float(UInt16(bigEndian: row.loadUnaligned(fromByteOffset: 2 * x, as: UInt16.self))) * units
                        }
                    } else {
                        for x in 0..<width {
                            d[x] = Float(UInt16(littleEndian: row.loadUnaligned(fromByteOffset: 2 * x, as: UInt16.self))) * units
                        }
                    }
                }
            }
        }
        out.markModified()
        return out
    }

    /// Color → rgba8. Call `check` first. Into `out` when given (rgba8 of the image's size: a pooled
    /// buffer), else a new buffer.
    public static func rgba(_ image: some RawROSImage, into out: PixelBuffer? = nil) -> PixelBuffer {
        precondition(out.map { $0.format == .rgba8 && $0.width == image.width && $0.height == image.height } ?? true)
        let out = out ?? PixelBuffer(width: image.width, height: image.height, format: .rgba8)
        image.withData { raw in
            guard let base = raw.baseAddress else { return }
            switch image.encoding {
            case "rgb8": PixelConversion.rgb24ToRGBA(base, bytesPerLine: image.step, bgr: false, into: out)
            case "bgr8": PixelConversion.rgb24ToRGBA(base, bytesPerLine: image.step, bgr: true, into: out)
            case "mono8", "8UC1": PixelConversion.greyToRGBA(base, bytesPerLine: image.step, into: out)
            case "yuyv", "YUYV": PixelConversion.yuyvToRGBA(base, bytesPerLine: image.step, into: out)
            case "yuv422", "uyvy", "UYVY": PixelConversion.uyvyToRGBA(base, bytesPerLine: image.step, into: out)
            default: // rgba8, bgra8
                let bgr = image.encoding == "bgra8"
                for y in 0..<image.height {
                    let src = (base + y * image.step).assumingMemoryBound(to: UInt8.self)
                    let d = out.row(y, as: UInt8.self)
                    for x in 0..<image.width {
                        d[4 * x] = src[4 * x + (bgr ? 2 : 0)]
                        d[4 * x + 1] = src[4 * x + 1]
                        d[4 * x + 2] = src[4 * x + (bgr ? 0 : 2)]
                        d[4 * x + 3] = src[4 * x + 3]
                    }
                }
                out.markModified()
            }
        }
        return out
    }

    /// A `sensor_msgs/CompressedImage` color frame (PNG or JPEG, `format` "jpeg", "png",
    /// "rgb8; png compressed bgr8", …) → rgba8. The file holds true colors whatever the format
    /// string's encodings say (image_transport's `compressed` converts to bgr8 before OpenCV writes
    /// it, and OpenCV stores BGR mats as RGB files). 16-bit PNGs are not color: an error. The size
    /// the header claims is checked (`checkDimensions`) before decoding; the pixels are committed as
    /// rows are decoded.
    /// `into`: a buffer for a color JPEG's rgba8 rows of the header's size (`ImageIO.decode`'s).
    public static func compressedColor(_ data: ArraySlice<UInt8>, format: String, file: String, topic: String,
                                       into target: (_ width: Int, _ height: Int) -> PixelBuffer? = { _, _ in nil }) throws -> PixelBuffer {
        let decoded: PixelBuffer
        do {
            decoded = try data.withUnsafeBytes { bytes in
                // The size the header claims against the limits before anything is decoded.
                if let size = ImageIO.headerSize(bytes) {
                    try checkDimensions(width: size.width, height: size.height, file: file, topic: topic)
                }
                return try ImageIO.decode(bytes, name: file, into: target)
            }
        } catch let e as DepthKitError {
            switch e {
            case let .file(_, problem), let .invalidArgument(problem):
                throw CaptureError.file(path: file, problem: "compressed image (\(format)) on \(topic): \(problem)")
            }
        }
        try checkDimensions(width: decoded.width, height: decoded.height, file: file, topic: topic)
        switch decoded.format {
        case .rgba8: return decoded
        case .gray8, .rgb8, .bgra8: return ImageIO.toRGBA8(decoded)
        case .gray16, .depthFloat16, .depthFloat32, .disparityFloat16, .disparityFloat32:
            throw CaptureError.file(path: file, problem: "compressed image (\(format)) on \(topic) is \(decoded.format), not 8-bit color or gray")
        }
    }
}

/// A raw image librealsense's ROS 2 writer (2.59, compression on) stored zstd-compressed in a
/// `CompressedImage` — the formats PNG cannot hold losslessly (YUYV, UYVY) —, decompressed: the
/// format string gives its layout (`YUYV; zstd; 640x480 step=1280`), its data is the raw pixels
/// (little-endian, as the writer's host).
public struct LibrealsenseZstdImage: RawROSImage, Sendable {
    public var height: Int
    public var width: Int
    /// The ROS encoding of librealsense's format (`YUYV` → `yuyv`, `Z16` → `16UC1`, …; an unknown
    /// format as it is, which `check` refuses).
    public var encoding: String
    public var isBigEndian: Bool { false }
    public var step: Int
    public var data: ArraySlice<UInt8>
    public var dataCount: Int { data.count }
    public func withData<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R { try data.withUnsafeBytes(body) }
}

extension ROSImageDecoding {
    /// librealsense's format names (rs2_format_to_string) → ROS encodings.
    static let librealsenseFormats: [String: String] = [
        "YUYV": "yuyv", "UYVY": "uyvy", "RGB8": "rgb8", "BGR8": "bgr8", "RGBA8": "rgba8", "BGRA8": "bgra8",
        "Y8": "mono8", "Y16": "mono16", "Z16": "16UC1",
    ]

    /// The layout of a librealsense zstd format string: `FORMAT; zstd; WxH step=S`; nil for any other.
    static func librealsenseZstdLayout(_ format: String) -> (format: String, width: Int, height: Int, step: Int)? {
        let parts = format.split(separator: ";", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        guard parts.count == 3, parts[1] == "zstd", !parts[0].isEmpty else { return nil }
        let geometry = parts[2].split(separator: " ")
        guard geometry.count == 2, geometry[1].hasPrefix("step=") else { return nil }
        let size = geometry[0].split(separator: "x")
        guard size.count == 2, let w = Int(size[0]), let h = Int(size[1]), let step = Int(geometry[1].dropFirst(5)) else { return nil }
        return (parts[0], w, h, step)
    }

    /// True for librealsense's zstd format strings (`YUYV; zstd; 640x480 step=1280`).
    public static func isLibrealsenseZstd(_ format: String) -> Bool { librealsenseZstdLayout(format) != nil }

    /// A librealsense zstd frame decompressed into exactly step × height bytes, checked like a raw
    /// `Image` (`check`): a supported encoding, a plausible size, rows that hold the width.
    public static func librealsenseZstd(_ data: ArraySlice<UInt8>, format: String, file: String, topic: String) throws -> LibrealsenseZstdImage {
        guard let layout = librealsenseZstdLayout(format) else {
            throw CaptureError.file(path: file, problem: "compressed image (\(format.prefix(60))) on \(topic): not librealsense's 'FORMAT; zstd; WxH step=S'")
        }
        try checkDimensions(width: layout.width, height: layout.height, file: file, topic: topic)
        let (size, overflow) = layout.step.multipliedReportingOverflow(by: layout.height)
        guard layout.step >= 1, !overflow, size <= ROS2Recording.maxMessageSize else {
            throw CaptureError.file(path: file, problem: "compressed image (\(format.prefix(60))) on \(topic): step \(layout.step) × height \(layout.height) is not a usable size")
        }
        var code: Int32 = 0
        let pixels = [UInt8](unsafeUninitializedCapacity: size) { buf, initialized in
            code = data.withUnsafeBufferPointer { src in
                guard let s = src.baseAddress, let d = buf.baseAddress else { return Int32(DL_DECOMPRESS_TOO_SHORT) }
                return dl_zstd_decompress(s, src.count, d, size)
            }
            // On failure the array stays empty: bytes the decoder did not write are never exposed.
            initialized = code == 0 ? size : 0
        }
        guard code == 0 else {
            throw CaptureError.file(path: file, problem: "compressed image (\(format.prefix(60))) on \(topic): zstd: \(String(cString: dl_decompress_error(code)))")
        }
        let image = LibrealsenseZstdImage(height: layout.height, width: layout.width,
                                          encoding: librealsenseFormats[layout.format] ?? layout.format, step: layout.step, data: pixels[...])
        try check(image, file: file, topic: topic)
        return image
    }
}

extension ROSImageDecoding {
    /// The camera of a CameraInfo's K, D and distortion model (either ROS generation), at the
    /// stream's size (scaled when the info names another size; 0 × 0 means the stream's). Plausible
    /// pinhole values only: nil for a non-positive, NaN, infinite or absurd (≥ 1e6) focal length or
    /// principal point, or a NaN or infinite coefficient, so a corrupt or hostile file never gives
    /// a NaN camera.
    public static func cameraModel(K k: [Double], D: [Double], distortionModel: String, width: Int, height: Int,
                            streamWidth: Int, streamHeight: Int) -> CameraModel? {
        guard k.count == 9, k[0] > 0, k[4] > 0, k[0] < 1e6, k[4] < 1e6, abs(k[2]) < 1e6, abs(k[5]) < 1e6,
              D.allSatisfy({ $0.isFinite && abs($0) < 1e6 }) else { return nil }
        let w = width > 0 ? width : streamWidth, h = height > 0 ? height : streamHeight
        var cam = CameraModel(intrinsics: CameraIntrinsics(fx: Float(k[0]), fy: Float(k[4]), cx: Float(k[2]), cy: Float(k[5]),
                                                           width: w, height: h),
                              model: BagSource.distortionModel(distortionModel), coeffs: D.map { Float($0) })
        if w != streamWidth || h != streamHeight { cam = cam.scaled(toWidth: streamWidth, height: streamHeight) }
        return cam
    }
}
