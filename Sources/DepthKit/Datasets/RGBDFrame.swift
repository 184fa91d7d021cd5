/// One color + depth pair: the unit every data-set reader, the synthetic scene and the recorder
/// hand around. Color is `rgba8`; depth is meters as `depthFloat32` (invalid = 0).
public struct RGBDFrame: Sendable {
    public var color: PixelBuffer
    public var depth: DepthData
    /// Seconds (data-set time for recordings, scene time for the synthetic scene).
    public var timestamp: Double
    /// Where the color and depth came from ("" for generated frames).
    public var colorPath: String
    public var depthPath: String

    public init(color: PixelBuffer, depth: DepthData, timestamp: Double, colorPath: String = "", depthPath: String = "") {
        self.color = color
        self.depth = depth
        self.timestamp = timestamp
        self.colorPath = colorPath
        self.depthPath = depthPath
    }

    /// Largest relative difference of aspect ratios still taken as "the same" (RealSense pairs
    /// 1280x720 color with 848x480 depth: 0.6 % apart).
    public static let aspectTolerance = 0.01

    /// Loads a color image and a depth map (see `DepthIO.readDepth`) as one frame.
    /// Different resolutions are fine when the aspect ratios agree; otherwise this throws,
    /// naming both files.
    public static func loadPair(color colorPath: String, depth depthPath: String, depthScale: Float? = nil,
                                pgmLittleEndian: Bool = false, timestamp: Double = 0) throws -> RGBDFrame {
        _ = try DepthIO.validatedScale(depthScale)
        let color = try ImageIO.readColor(colorPath)
        let depth = try DepthIO.readDepth(depthPath, depthScale: depthScale, pgmLittleEndian: pgmLittleEndian)
        try checkAspect(colorWidth: color.width, colorHeight: color.height,
                        depthWidth: depth.map.width, depthHeight: depth.map.height,
                        colorPath: colorPath, depthPath: depthPath)
        return RGBDFrame(color: color, depth: depth, timestamp: timestamp, colorPath: colorPath, depthPath: depthPath)
    }

    /// Throws `.file(depthPath, …)` naming both files when the aspect ratios differ by more than `aspectTolerance`.
    public static func checkAspect(colorWidth cw: Int, colorHeight ch: Int, depthWidth dw: Int, depthHeight dh: Int,
                                   colorPath: String, depthPath: String) throws {
        let a = Double(cw) / Double(ch), b = Double(dw) / Double(dh)
        if abs(a - b) / max(a, b) > aspectTolerance {
            throw DepthKitError.file(path: depthPath, problem:
                "color \(cw)x\(ch) and depth \(dw)x\(dh) differ in aspect ratio (color: \(colorPath))")
        }
    }
}
