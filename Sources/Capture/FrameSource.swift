import DepthKit

/// One displayable frame: color, the depth paired with it (if any), when it was taken.
public struct FrameSet: @unchecked Sendable {
    /// The color image (rgba8 for every source in this target; gray16 only from a Y16 color camera).
    public var color: PixelBuffer
    /// Depth in meters (depthFloat32), or nil when none was paired with this color frame.
    public var depth: DepthData?
    /// Capture time in seconds: recorded timestamp for data sets, camera clock for V4L2.
    public var timestamp: Double
    /// Frame number in the sequence (playback), or count of frames delivered (live).
    public var index: Int

    public init(color: PixelBuffer, depth: DepthData?, timestamp: Double, index: Int) {
        self.color = color
        self.depth = depth
        self.timestamp = timestamp
        self.index = index
    }
}

/// A source of color (+ depth) frames, polled without blocking once per display frame.
///
/// Errors a source hits mid-run are thrown from `nextFrame` as `CaptureError` with a one-line
/// description; the caller shows them and keeps calling.
public protocol FrameSource: AnyObject {
    /// Human-readable name ("synthetic", "tum:/data/fr1_desk", "v4l2:/dev/video0").
    var name: String { get }
    /// Intrinsics of the color frames.
    var intrinsics: CameraIntrinsics { get }
    /// True for cameras (frames arrive in real time and cannot be replayed).
    var isLive: Bool { get }
    /// Opens devices / files. Throws `CaptureError`.
    func start() throws
    /// Releases devices; `start()` may be called again.
    func stop()
    /// The next frame if one is due at time `now` (seconds, any monotonic clock), else nil.
    func nextFrame(now: Double) throws -> FrameSet?
}

/// Playback controls of recorded sources (`TUMSource`, `SyntheticSource`).
public protocol PlaybackControl: AnyObject {
    var isPaused: Bool { get }
    func pause()
    func resume()
    /// Moves `delta` frames (±1 for single steps); the next `nextFrame` returns that frame even when paused.
    func step(by delta: Int) throws
    /// Moves to frame `index` (0-based); the next `nextFrame` returns it.
    func seek(toFrame index: Int) throws
    /// Start over at frame 0 after the last frame.
    var loop: Bool { get set }
    /// Frames per second to play at; nil plays at the recorded timestamps.
    var fps: Double? { get set }
    /// Number of frames; nil for endless sources.
    var frameCount: Int? { get }
    /// Index of the frame last delivered (or about to be, after `step`/`seek`).
    var currentIndex: Int { get }
    /// True when the last frame was shown and `loop` is off.
    var isFinished: Bool { get }
}
