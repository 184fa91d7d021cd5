import DepthKit

/// DepthKit's animated `SyntheticScene` as a frame source: default 640×480 at 30 fps, frame i
/// rendered at scene time i / fps, with the scene's exact intrinsics. Endless; pause, step and seek work.
/// With `renderDepth` false, frames carry color only (no depth pass; for a color stream whose depth
/// comes from elsewhere).
public final class SyntheticSource: FrameSource, PlaybackControl {
    public let width: Int
    public let height: Int
    public let renderDepth: Bool
    public let scene = SyntheticScene()
    public var name: String { "synthetic" }
    public var intrinsics: CameraIntrinsics { SyntheticScene.intrinsics(width: width, height: height) }
    public var isLive: Bool { false }

    private var clock: PlaybackClock
    private var colorPool: BufferPool?
    private var depthPool: BufferPool?
    private var scratch: PixelBuffer?
    private var started = false

    public init(width: Int = 640, height: Int = 480, fps: Double = 30, renderDepth: Bool = true) {
        precondition(width > 0 && height > 0 && fps > 0)
        self.width = width
        self.height = height
        self.renderDepth = renderDepth
        clock = PlaybackClock(count: nil, timestamps: [], defaultFPS: fps)
    }

    public func start() throws {
        colorPool = BufferPool(format: FrameFormat(width: width, height: height, pixelFormat: .rgba8),
                               outputRetainedBufferCountHint: 3, allocationThreshold: 8)
        depthPool = renderDepth
            ? BufferPool(format: FrameFormat(width: width, height: height, pixelFormat: .depthFloat32),
                         outputRetainedBufferCountHint: 3, allocationThreshold: 8)
            : nil
        scratch = PixelBuffer(width: width, height: height, format: .depthFloat32)
        if !started { clock.pending = max(clock.current, 0) }
        started = true
    }

    public func stop() {
        started = false
        colorPool = nil; depthPool = nil; scratch = nil
    }

    public func nextFrame(now: Double) throws -> FrameSet? {
        guard started, let colorPool, let scratch, depthPool != nil || !renderDepth else {
            throw CaptureError.invalidState("synthetic: nextFrame before start()")
        }
        guard let (i, explicit) = clock.due(now: now) else { return nil }
        let color: PixelBuffer, depth: PixelBuffer?
        do { color = try colorPool.makeBuffer(); depth = try depthPool?.makeBuffer() } catch {
            throw CaptureError.invalidState("synthetic: \(error) (frames are held too long)")
        }
        let t = clock.offset(i)
        if let depth {
            scene.render(color: color, depth: depth, scratch: scratch, time: t)
            depth.markModified()
        } else {
            scene.render(color: color, scratch: scratch, time: t)
        }
        color.markModified()
        clock.delivered(i, now: now, explicit: explicit)
        return FrameSet(color: color, depth: depth.map { DepthData(map: $0, accuracy: .absolute, intrinsics: intrinsics) },
                        timestamp: t, index: i)
    }

    // MARK: PlaybackControl
    public var isPaused: Bool { clock.paused }
    public func pause() { clock.paused = true }
    public func resume() { clock.paused = false }
    public func step(by delta: Int) throws { clock.step(by: delta) }
    public func seek(toFrame index: Int) throws {
        guard index >= 0 else { throw CaptureError.invalidState("synthetic: cannot seek to frame \(index)") }
        clock.seek(index)
    }
    public var loop: Bool { get { false } set {} }
    public var fps: Double? { get { clock.fps } set { clock.fps = newValue.flatMap { $0 > 0 ? $0 : nil } } }
    public var frameCount: Int? { nil }
    public var currentIndex: Int { clock.pending ?? max(clock.current, 0) }
    public var isFinished: Bool { false }
}
