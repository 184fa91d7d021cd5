import DepthKit

/// DepthKit's animated `SyntheticScene` as a frame source: default 640×480 at 30 fps, frame i
/// rendered at scene time i / fps, with the scene's exact intrinsics. Endless; pause, step and seek work.
/// With `renderDepth` false, frames carry color only (no depth pass; for a color stream whose depth
/// comes from elsewhere).
public final class SyntheticSource: FrameSource, DepthRateLimiting {
    public let width: Int
    public let height: Int
    public let renderDepth: Bool
    public let scene = SyntheticScene()
    public var name: String { width == 640 && height == 480 ? "synthetic" : "synthetic:\(width)x\(height)" }
    public var intrinsics: CameraIntrinsics { SyntheticScene.intrinsics(width: width, height: height) }
    public var isLive: Bool { false }

    /// Pause, step, seek and rate (endless: no loop, no frame count).
    public let recording: RecordingPlayback
    public var playback: PlaybackControl? { recording }
    public var depthRate: DepthRateLimiting? { self }
    private var colorPool: BufferPool?
    private var depthPool: BufferPool?
    private var scratch: PixelBuffer?
    private var started = false
    private var depthGate = DepthRateGate()
    /// The last depth rendered, carried by frames the depth rate limit skips.
    private var lastDepth: DepthData?
    /// Under a limit, frames between depth frames skip the depth pass and carry the last depth.
    public var depthRateLimit: Double? {
        get { depthGate.limit }
        set { depthGate.limit = newValue }
    }

    public init(width: Int = 640, height: Int = 480, fps: Double = 30, renderDepth: Bool = true) {
        precondition(width > 0 && height > 0 && fps > 0)
        self.width = width
        self.height = height
        self.renderDepth = renderDepth
        recording = RecordingPlayback(name: "synthetic", endlessAt: fps)
        defaultFPS = fps
    }
    /// The rate frame times are spaced at (frame i is scene time i / defaultFPS).
    public let defaultFPS: Double
    public var nominalFrameRate: Double? { defaultFPS }
    /// The scene's exact intrinsics; color and depth are one camera.
    public var calibration: RGBDCalibration? {
        RGBDCalibration(depth: CameraModel(intrinsics: intrinsics), color: CameraModel(intrinsics: intrinsics),
                        origin: "synthetic scene")
    }

    public func start() throws {
        colorPool = BufferPool(format: FrameFormat(width: width, height: height, pixelFormat: .rgba8),
                               outputRetainedBufferCountHint: framesHeldByConsumer, allocationThreshold: 8)
        // One more depth buffer: the source keeps the last depth map to pair with the next colors.
        depthPool = renderDepth
            ? BufferPool(format: FrameFormat(width: width, height: height, pixelFormat: .depthFloat32),
                         outputRetainedBufferCountHint: framesHeldByConsumer + 1, allocationThreshold: 9)
            : nil
        scratch = PixelBuffer(width: width, height: height, format: .depthFloat32)
        if !started { recording.clock.pending = max(recording.clock.current, 0) }
        started = true
    }

    public func stop() {
        started = false
        colorPool = nil; depthPool = nil; scratch = nil; lastDepth = nil
        depthGate.reset()
    }

    public func nextFrame(now: Double) throws -> FrameSet? {
        guard started, colorPool != nil, depthPool != nil || !renderDepth else {
            throw CaptureError.invalidState("synthetic: nextFrame before start()")
        }
        guard let (i, explicit) = recording.clock.due(now: now) else { return nil }
        let f = try frame(i, time: recording.clock.offset(i))
        recording.clock.delivered(i, now: now, explicit: explicit)
        return f
    }

    /// Frame `i` at scene time `t` (its depth the last one rendered when the depth rate limit skips it).
    func frame(_ i: Int, time t: Double) throws -> FrameSet {
        guard let colorPool, let scratch else { throw CaptureError.invalidState("synthetic: nextFrame before start()") }
        let freshDepth = depthPool != nil && (depthGate.admits(timestamp: t) || lastDepth == nil)
        let color: PixelBuffer, depth: PixelBuffer?
        do { color = try colorPool.makeBuffer(); depth = freshDepth ? try depthPool?.makeBuffer() : nil } catch {
            throw CaptureError.invalidState("synthetic: \(error) (frames are held too long)")
        }
        if let depth {
            scene.render(color: color, depth: depth, scratch: scratch, time: t)
            depth.markModified()
            lastDepth = DepthData(map: depth, accuracy: .absolute, intrinsics: intrinsics)
        } else {
            scene.render(color: color, scratch: scratch, time: t)
        }
        color.markModified()
        return FrameSet(color: color, depth: renderDepth ? lastDepth : nil, timestamp: t, index: i)
    }
}
