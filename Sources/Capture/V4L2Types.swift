import CPlatform
import DepthKit

/// A V4L2 pixel format code (`v4l2_fourcc`), printed as its four characters.
public struct V4L2FourCC: Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt32
    public init(_ rawValue: UInt32) { self.rawValue = rawValue }

    public static let yuyv = V4L2FourCC(DL_V4L2_PIX_FMT_YUYV)
    public static let uyvy = V4L2FourCC(DL_V4L2_PIX_FMT_UYVY)
    public static let nv12 = V4L2FourCC(DL_V4L2_PIX_FMT_NV12)
    public static let mjpeg = V4L2FourCC(DL_V4L2_PIX_FMT_MJPEG)
    public static let rgb24 = V4L2FourCC(DL_V4L2_PIX_FMT_RGB24)
    public static let bgr24 = V4L2FourCC(DL_V4L2_PIX_FMT_BGR24)
    /// 8-bit gray (`Y8` is the same code): IR on depth cameras.
    public static let grey = V4L2FourCC(DL_V4L2_PIX_FMT_GREY)
    /// 10- and 12-bit gray in 16-bit little-endian words (high bits 0).
    public static let y10 = V4L2FourCC(DL_V4L2_PIX_FMT_Y10)
    public static let y12 = V4L2FourCC(DL_V4L2_PIX_FMT_Y12)
    /// RealSense's interleaved IR pairs: Y8I two bytes a pixel (left, right); Y12I three bytes a pixel pair.
    public static let y8i = V4L2FourCC(DL_V4L2_PIX_FMT_Y8I)
    public static let y12i = V4L2FourCC(DL_V4L2_PIX_FMT_Y12I)
    public static let z16 = V4L2FourCC(DL_V4L2_PIX_FMT_Z16)
    public static let y16 = V4L2FourCC(DL_V4L2_PIX_FMT_Y16)

    /// Formats depthlens can convert, in order of preference for a color (or IR) camera.
    public static let colorPreference: [V4L2FourCC] = [.yuyv, .uyvy, .mjpeg, .nv12, .rgb24, .bgr24,
                                                       .grey, .y8i, .y10, .y12, .y12i, .y16]
    /// Formats depthlens can convert, in order of preference for a depth camera.
    public static let depthPreference: [V4L2FourCC] = [.z16, .y16]
    public static let supported: Set<V4L2FourCC> = Set(colorPreference + depthPreference)

    /// Bytes per pixel of the uncompressed formats' (first) plane (0 for MJPEG; NV12's luma plane: 1).
    public var bytesPerPixel: Int {
        switch self {
        case .yuyv, .uyvy, .z16, .y16, .y10, .y12, .y8i: return 2
        case .rgb24, .bgr24, .y12i: return 3
        case .grey, .nv12: return 1
        default: return 0
        }
    }

    /// Bytes a frame of this format needs at least, rows `bytesPerLine` apart (1 for MJPEG).
    /// NV12's interleaved chroma plane (⌈H/2⌉ rows of 2·⌈W/2⌉ bytes) follows the luma plane at
    /// `bytesPerLine · height`, with the same row pitch.
    public func minimumFrameBytes(width: Int, height: Int, bytesPerLine: Int) -> Int {
        if self == .mjpeg { return 1 }
        if self == .nv12 { return bytesPerLine * height + bytesPerLine * ((height + 1) / 2 - 1) + 2 * ((width + 1) / 2) }
        return bytesPerLine * (height - 1) + width * bytesPerPixel
    }

    /// What a node offering this format streams: depth, infrared (gray) or color.
    public var streamKind: String {
        switch self {
        case .z16: return "depth"
        case .grey, .y10, .y12, .y16, .y8i, .y12i: return "infrared"
        default: return "color"
        }
    }

    public var description: String {
        var s = ""
        for shift in stride(from: 0, to: 32, by: 8) {
            let c = UInt8((rawValue >> UInt32(shift)) & 0xFF)
            s.append(c >= 32 && c < 127 ? Character(Unicode.Scalar(c)) : "?")
        }
        return s.trimmingCharacters(in: " ")
    }
}

private extension String {
    func trimmingCharacters(in c: Character) -> String {
        var s = Substring(self)
        while s.last == c { s.removeLast() }
        return String(s)
    }
}

/// A frame size and the frame rates a device offers at it.
public struct V4L2FrameSize: Hashable, Sendable, CustomStringConvertible {
    public var width: Int
    public var height: Int
    /// Frames per second, highest first (empty when the driver does not enumerate intervals).
    public var frameRates: [Double]

    public init(width: Int, height: Int, frameRates: [Double] = []) {
        self.width = width; self.height = height; self.frameRates = frameRates
    }

    public var description: String {
        let rates = frameRates.map { formatRate($0) }.joined(separator: ", ")
        return "\(width)x\(height)" + (rates.isEmpty ? "" : " @ \(rates) fps")
    }
}

/// One pixel format a device offers (`VIDIOC_ENUM_FMT`) with its sizes and rates.
public struct V4L2FormatInfo: Hashable, Sendable, CustomStringConvertible {
    public var fourcc: V4L2FourCC
    public var name: String
    public var isCompressed: Bool
    /// Emulated by libv4l2's conversion (not native to the device).
    public var isEmulated: Bool
    public var sizes: [V4L2FrameSize]

    public var description: String {
        "\(fourcc) (\(name))\(isEmulated ? " [emulated]" : ""): " + sizes.map(\.description).joined(separator: "; ")
    }
}

/// What the caller asks a camera for; the camera picks the nearest the device offers.
public struct V4L2Request: Hashable, Sendable {
    public var width: Int
    public var height: Int
    public var fps: Double
    /// Formats in order of preference; the first the device offers (at the best size) wins.
    public var formats: [V4L2FourCC]

    public init(width: Int = 640, height: Int = 480, fps: Double = 30, formats: [V4L2FourCC] = V4L2FourCC.colorPreference) {
        self.width = width; self.height = height; self.fps = fps; self.formats = formats
    }

    public static func color(width: Int = 640, height: Int = 480, fps: Double = 30) -> V4L2Request {
        V4L2Request(width: width, height: height, fps: fps, formats: V4L2FourCC.colorPreference)
    }

    public static func depth(width: Int = 640, height: Int = 480, fps: Double = 30) -> V4L2Request {
        V4L2Request(width: width, height: height, fps: fps, formats: V4L2FourCC.depthPreference)
    }
}

/// What the device actually agreed to (read back from `VIDIOC_S_FMT` / `VIDIOC_S_PARM`).
public struct V4L2Configuration: Hashable, Sendable, CustomStringConvertible {
    public var fourcc: V4L2FourCC
    public var width: Int
    public var height: Int
    public var bytesPerLine: Int
    public var sizeImage: Int
    /// Frames per second the driver reports, nil when it does not support `timeperframe`.
    public var fps: Double?

    public var description: String {
        "\(fourcc) \(width)x\(height)" + (fps.map { " @ \(formatRate($0)) fps" } ?? "")
    }
}

/// A frame as read from a camera, converted into a pooled buffer.
public struct CapturedFrame: Sendable {
    /// rgba8 for color formats and (by default) gray/IR ones, depthFloat32 (meters) for Z16 and
    /// depth-node Y16, gray16 for gray formats of more than 8 bits when `V4L2Camera.grayOutput` is `.gray16`.
    public var buffer: PixelBuffer
    /// Driver timestamp in seconds (CLOCK_MONOTONIC on UVC).
    public var timestamp: Double
    /// Driver sequence number.
    public var sequence: Int
}

func formatRate(_ r: Double) -> String {
    r == r.rounded() ? String(Int(r)) : String((r * 100).rounded() / 100)
}

/// Copies `s` NUL-terminated into a fixed C char array (imported as a tuple).
package func copyCString<T>(_ s: String, into tuple: inout T) {
    withUnsafeMutableBytes(of: &tuple) { raw in
        raw.initializeMemory(as: UInt8.self, repeating: 0)
        let bytes = Array(s.utf8.prefix(raw.count - 1))
        raw.copyBytes(from: bytes)
    }
}

/// Reads a NUL-terminated C char array (imported as a tuple) as a String.
package func stringFromCTuple<T>(_ tuple: T) -> String {
    withUnsafeBytes(of: tuple) { raw in
        let bytes = raw.prefix { $0 != 0 }
        return String(decoding: bytes, as: UTF8.self)
    }
}
