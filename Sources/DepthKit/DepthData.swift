/// A depth or disparity map with what is known about it: AVDepthData for depthlens.
///
/// Inside the program depth is meters and disparity is 1/meters; `converting(to:)` moves between
/// the two (`1/x`) and between Float16 and Float32. Invalid samples (0, NaN, ±Inf, negative)
/// stay invalid and come out as 0.
public struct DepthData: Sendable {
    public enum Accuracy: String, Sendable, Codable { case relative, absolute }

    public let map: PixelBuffer
    public var accuracy: Accuracy
    public var intrinsics: CameraIntrinsics

    public init(map: PixelBuffer, accuracy: Accuracy = .absolute, intrinsics: CameraIntrinsics? = nil) {
        precondition(map.format.isDepthLike, "DepthData needs a depth or disparity map, got \(map.format)")
        self.map = map
        self.accuracy = accuracy
        self.intrinsics = intrinsics ?? .default(width: map.width, height: map.height)
    }

    /// True for disparity maps (1/m), false for depth (m) and scaled 16-bit depth.
    public var isDisparity: Bool { map.format.isDisparity }

    /// Converts to `format`: depthFloat16/32 or disparityFloat16/32.
    public func converting(to format: PixelFormat) -> DepthData {
        precondition([.depthFloat16, .depthFloat32, .disparityFloat16, .disparityFloat32].contains(format),
                     "converting(to:) targets float depth or disparity")
        let src = map
        let out = PixelBuffer(width: src.width, height: src.height, format: format)
        let invert = src.format.isDisparity != format.isDisparity
        let scale: Float
        if case .gray16(let s) = src.format { scale = 1 / s } else { scale = 1 }
        let srcFormat = src.format
        parallelRows(src.height) { rows in
            for y in rows {
                for x in 0..<src.width {
                    var v: Float
                    switch srcFormat {
                    case .depthFloat32, .disparityFloat32: v = src.row(y, as: Float.self)[x]
                    case .depthFloat16, .disparityFloat16: v = Float(src.row(y, as: Float16.self)[x])
                    case .bgra8, .rgba8, .rgb8, .gray8, .gray16: v = Float(src.row(y, as: UInt16.self)[x]) * scale
                    }
                    if !isValidDepth(v) { v = 0 } else if invert { v = 1 / v }
                    switch format {
                    case .depthFloat32, .disparityFloat32: out.row(y, as: Float.self)[x] = v
                    case .bgra8, .rgba8, .rgb8, .gray8, .gray16, .depthFloat16, .disparityFloat16: out.row(y, as: Float16.self)[x] = Float16(v)
                    }
                }
            }
        }
        return DepthData(map: out, accuracy: accuracy, intrinsics: intrinsics)
    }

    /// Depth in meters as Float32, the form every kernel takes.
    public func depthFloat32() -> PixelBuffer {
        map.format == .depthFloat32 ? map : converting(to: .depthFloat32).map
    }

    /// Statistics over valid samples of the map as depth in meters.
    public func depthStatistics() -> (validCount: Int, min: Float, max: Float) {
        let d = depthFloat32()
        var n = 0, lo = Float.infinity, hi = -Float.infinity
        for y in 0..<d.height {
            let r = d.row(y, as: Float.self)
            for x in 0..<d.width where isValidDepth(r[x]) {
                n += 1; lo = min(lo, r[x]); hi = max(hi, r[x])
            }
        }
        return (n, n > 0 ? lo : 0, n > 0 ? hi : 0)
    }

    /// Middlebury-style disparity in pixels to depth in meters: `Z = f·B / (d + doffs)`.
    /// - Parameters: focal in pixels, baseline in meters (Middlebury gives mm: divide by 1000), doffs in pixels.
    public static func fromPixelDisparity(_ disparity: PixelBuffer, focal: Float, baseline: Float, doffs: Float,
                                          intrinsics: CameraIntrinsics? = nil) -> DepthData {
        let out = PixelBuffer(width: disparity.width, height: disparity.height, format: .depthFloat32)
        let fb = focal * baseline
        for y in 0..<disparity.height {
            let o = out.row(y, as: Float.self)
            for x in 0..<disparity.width {
                let d = disparity.sample(x: x, y: y)
                let z = d.isFinite && d + doffs > 0 ? fb / (d + doffs) : 0
                o[x] = isValidDepth(z) ? z : 0
            }
        }
        return DepthData(map: out, accuracy: .absolute, intrinsics: intrinsics)
    }
}
