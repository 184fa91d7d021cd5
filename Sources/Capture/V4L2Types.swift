import CShim
import DepthKit

/// A V4L2 pixel format code (`v4l2_fourcc`), printed as its four characters.
public struct V4L2FourCC: Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt32
    public init(_ rawValue: UInt32) { self.rawValue = rawValue }

    public static let yuyv = V4L2FourCC(DL_V4L2_PIX_FMT_YUYV)
    public static let mjpeg = V4L2FourCC(DL_V4L2_PIX_FMT_MJPEG)
    public static let rgb24 = V4L2FourCC(DL_V4L2_PIX_FMT_RGB24)
    public static let bgr24 = V4L2FourCC(DL_V4L2_PIX_FMT_BGR24)
    public static let grey = V4L2FourCC(DL_V4L2_PIX_FMT_GREY)
    public static let z16 = V4L2FourCC(DL_V4L2_PIX_FMT_Z16)
    public static let y16 = V4L2FourCC(DL_V4L2_PIX_FMT_Y16)

    /// Formats depthlens can convert, in order of preference for a color camera.
    public static let colorPreference: [V4L2FourCC] = [.yuyv, .mjpeg, .rgb24, .bgr24, .grey, .y16]
    /// Formats depthlens can convert, in order of preference for a depth camera.
    public static let depthPreference: [V4L2FourCC] = [.z16, .y16]
    public static let supported: Set<V4L2FourCC> = [.yuyv, .mjpeg, .rgb24, .bgr24, .grey, .z16, .y16]

    /// Bytes per pixel of the uncompressed formats (0 for MJPEG).
    public var bytesPerPixel: Int {
        switch self {
        case .yuyv, .z16, .y16: return 2
        case .rgb24, .bgr24: return 3
        case .grey: return 1
        default: return 0
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
public struct CapturedFrame: @unchecked Sendable {
    /// rgba8 for color formats, depthFloat32 (meters) for Z16, gray16 for Y16.
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
