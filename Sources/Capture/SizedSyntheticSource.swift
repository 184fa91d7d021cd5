import DepthKit

/// `--source synthetic:COLORWxH,DEPTHWxH`: the synthetic scene with color and depth at their own
/// sizes (a RealSense-like 1280x720 color with 640x480 depth), for the viewer's speed check.
/// Two `SyntheticSource`s on one clock: color from the first, depth from the second.
public final class SizedSyntheticSource: FrameSource, PlaybackControl, DepthRateLimiting {
    private let color: SyntheticSource
    private let depth: SyntheticSource
    private var lastDepth: DepthData?
    public var name: String { "synthetic:\(color.width)x\(color.height),\(depth.width)x\(depth.height)" }
    public var intrinsics: CameraIntrinsics { color.intrinsics }
    public var isLive: Bool { false }

    public init(colorSize: PixelSize, depthSize: PixelSize) {
        // The color source's depth is never used: skip its depth pass.
        color = SyntheticSource(width: colorSize.width, height: colorSize.height, renderDepth: false)
        depth = SyntheticSource(width: depthSize.width, height: depthSize.height)
    }

    public func start() throws { try color.start(); try depth.start() }
    public func stop() { color.stop(); depth.stop() }

    public func nextFrame(now: Double) throws -> FrameSet? {
        guard let c = try color.nextFrame(now: now) else { return nil }
        // Both clocks start together, so depth is due with color; keep the last one if it is not.
        if let d = try depth.nextFrame(now: now) { lastDepth = d.depth }
        return FrameSet(color: c.color, depth: lastDepth, timestamp: c.timestamp, index: c.index)
    }

    public var isPaused: Bool { color.isPaused }
    public func pause() { color.pause(); depth.pause() }
    public func resume() { color.resume(); depth.resume() }
    public func step(by delta: Int) throws { try color.step(by: delta); try depth.step(by: delta) }
    public func seek(toFrame index: Int) throws { try color.seek(toFrame: index); try depth.seek(toFrame: index) }
    public var loop: Bool { get { false } set {} }
    public var fps: Double? {
        get { color.fps }
        set { color.fps = newValue; depth.fps = newValue }
    }
    public var frameCount: Int? { nil }
    /// The depth source skips its depth pass between depth frames; the last depth is kept meanwhile.
    public var depthRateLimit: Double? {
        get { depth.depthRateLimit }
        set { depth.depthRateLimit = newValue }
    }
    public var currentIndex: Int { color.currentIndex }
    public var isFinished: Bool { false }
    public var nominalFrameRate: Double? { color.defaultFPS }
    /// The scene's exact intrinsics for each size, one camera (no offset between color and depth).
    public var calibration: RGBDCalibration? {
        RGBDCalibration(depth: CameraModel(intrinsics: depth.intrinsics), color: CameraModel(intrinsics: color.intrinsics),
                        origin: "synthetic scene")
    }
}
