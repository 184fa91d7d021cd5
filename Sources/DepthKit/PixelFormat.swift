/// The layout of one pixel in a `PixelBuffer`.
///
/// Depth is meters in `Float32` inside the program; `gray16` carries the scale of its source in
/// units per meter (TUM 5000, RealSense/Kinect 1000) so it can be read as depth.
public enum PixelFormat: Hashable, Sendable, CustomStringConvertible {
    case bgra8
    case rgba8
    case rgb8
    case gray8
    /// 16-bit unsigned samples; `depthScale` units per meter when read as depth (0 = not depth).
    case gray16(depthScale: Float)
    case depthFloat16
    case depthFloat32
    case disparityFloat16
    case disparityFloat32

    public var bytesPerPixel: Int {
        switch self {
        case .bgra8, .rgba8: return 4
        case .rgb8: return 3
        case .gray8: return 1
        case .gray16, .depthFloat16, .disparityFloat16: return 2
        case .depthFloat32, .disparityFloat32: return 4
        }
    }

    public var channelCount: Int {
        switch self {
        case .bgra8, .rgba8: return 4
        case .rgb8: return 3
        case .gray8, .gray16, .depthFloat16, .depthFloat32, .disparityFloat16, .disparityFloat32: return 1
        }
    }

    /// True for formats that hold color (8 bits a channel).
    public var isColor: Bool {
        switch self {
        case .bgra8, .rgba8, .rgb8, .gray8: return true
        case .gray16, .depthFloat16, .depthFloat32, .disparityFloat16, .disparityFloat32: return false
        }
    }

    /// True for formats that can be read as depth or disparity.
    public var isDepthLike: Bool {
        switch self {
        case .depthFloat16, .depthFloat32, .disparityFloat16, .disparityFloat32: return true
        case .gray16(let scale): return scale > 0
        case .bgra8, .rgba8, .rgb8, .gray8: return false
        }
    }

    public var isDisparity: Bool { self == .disparityFloat16 || self == .disparityFloat32 }

    public var description: String {
        switch self {
        case .bgra8: return "bgra8"
        case .rgba8: return "rgba8"
        case .rgb8: return "rgb8"
        case .gray8: return "gray8"
        case .gray16(let s): return s > 0 ? "gray16 (\(formatScale(s)) units/m)" : "gray16"
        case .depthFloat16: return "depthFloat16"
        case .depthFloat32: return "depthFloat32"
        case .disparityFloat16: return "disparityFloat16"
        case .disparityFloat32: return "disparityFloat32"
        }
    }
}

private func formatScale(_ s: Float) -> String {
    s == s.rounded() ? String(Int(s)) : String(s)
}

/// Size and pixel format of a frame: what a `FilterRenderer` is prepared for.
public struct FrameFormat: Hashable, Sendable, CustomStringConvertible {
    public var width: Int
    public var height: Int
    public var pixelFormat: PixelFormat

    public init(width: Int, height: Int, pixelFormat: PixelFormat) {
        self.width = width
        self.height = height
        self.pixelFormat = pixelFormat
    }

    public var description: String { "\(width)x\(height) \(pixelFormat)" }
}
