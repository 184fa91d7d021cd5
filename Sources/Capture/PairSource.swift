import DepthKit

/// One color + depth pair (`pair:COLOR,DEPTH`), delivered once after `start()` and then shown still.
public final class PairSource: FrameSource {
    public let colorPath: String
    public let depthPath: String
    public let depthScale: Float?
    public var name: String { "pair:\(colorPath),\(depthPath)" }
    public private(set) var intrinsics: CameraIntrinsics = .default(width: 640, height: 480)
    public var isLive: Bool { false }
    public var depthUnitsPerMeter: Float? { depthScale ?? DepthIO.defaultDepthScale }
    private var frame: RGBDFrame?
    private var delivered = false

    /// - Parameter depthScale: units per meter of 16-bit depth (nil: DepthIO's default, 1000).
    public init(color: String, depth: String, depthScale: Float? = nil) {
        colorPath = color
        depthPath = depth
        self.depthScale = depthScale
    }

    /// Loads both files. Throws `CaptureError.file` naming the bad file.
    public func start() throws {
        do {
            let f = try RGBDFrame.loadPair(color: colorPath, depth: depthPath, depthScale: depthScale)
            frame = f
            intrinsics = .default(width: f.color.width, height: f.color.height)
            delivered = false
        } catch {
            throw CaptureError.wrapping(error, path: colorPath)
        }
    }

    public func stop() { frame = nil }

    public func nextFrame(now: Double) throws -> FrameSet? {
        guard let frame else { throw CaptureError.invalidState("\(name): nextFrame before start()") }
        guard !delivered else { return nil }
        delivered = true
        return FrameSet(color: frame.color, depth: meters(frame.depth), timestamp: frame.timestamp, index: 0)
    }
}

/// Depth as depthFloat32 meters, whatever form it was loaded in.
func meters(_ d: DepthData) -> DepthData {
    d.map.format == .depthFloat32 ? d : DepthData(map: d.depthFloat32(), accuracy: d.accuracy, intrinsics: d.intrinsics)
}
