import DepthKit

/// `--source synthetic:COLORWxH,DEPTHWxH`: the synthetic scene with color and depth at their own
/// sizes (a RealSense-like 1280x720 color with 640x480 depth), for the viewer's speed check.
/// Two `SyntheticSource`s rendering each frame on one clock: color from the first, depth from the second.
public final class SizedSyntheticSource: FrameSource, DepthRateLimiting {
    private let color: SyntheticSource
    private let depth: SyntheticSource
    /// Pause, step, seek and rate of both (endless: no loop, no frame count).
    public let recording: RecordingPlayback
    public var playback: PlaybackControl? { recording }
    public var depthRate: DepthRateLimiting? { self }
    private var started = false
    public var name: String { "synthetic:\(color.width)x\(color.height),\(depth.width)x\(depth.height)" }
    public var intrinsics: CameraIntrinsics { color.intrinsics }
    public var isLive: Bool { false }

    public init(colorSize: PixelSize, depthSize: PixelSize) {
        // The color source's depth is never used: skip its depth pass.
        color = SyntheticSource(width: colorSize.width, height: colorSize.height, renderDepth: false)
        depth = SyntheticSource(width: depthSize.width, height: depthSize.height)
        recording = RecordingPlayback(name: "synthetic:\(colorSize),\(depthSize)", endlessAt: color.defaultFPS)
    }

    public func start() throws {
        try color.start(); try depth.start()
        if !started { recording.clock.pending = max(recording.clock.current, 0) }
        started = true
    }
    public func stop() { color.stop(); depth.stop(); started = false }

    public func nextFrame(now: Double) throws -> FrameSet? {
        guard started else { throw CaptureError.invalidState("\(name): nextFrame before start()") }
        guard let (i, explicit) = recording.clock.due(now: now) else { return nil }
        let t = recording.clock.offset(i)
        let c = try color.frame(i, time: t), d = try depth.frame(i, time: t)
        recording.clock.delivered(i, now: now, explicit: explicit)
        return FrameSet(color: c.color, depth: d.depth, timestamp: c.timestamp, index: c.index)
    }

    /// The depth source skips its depth pass between depth frames; the last depth is kept meanwhile.
    public var depthRateLimit: Double? {
        get { depth.depthRateLimit }
        set { depth.depthRateLimit = newValue }
    }
    public var nominalFrameRate: Double? { color.defaultFPS }
    /// The scene's exact intrinsics for each size, one camera (no offset between color and depth).
    public var calibration: RGBDCalibration? {
        RGBDCalibration(depth: CameraModel(intrinsics: depth.intrinsics), color: CameraModel(intrinsics: color.intrinsics),
                        origin: "synthetic scene")
    }
}
