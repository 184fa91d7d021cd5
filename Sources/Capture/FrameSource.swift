import DepthKit
import Foundation

/// One displayable frame: color, the depth paired with it (if any), when it was taken.
public struct FrameSet: Sendable {
    /// The color image (rgba8 for every source in this target; gray16 only from a V4L2 camera whose
    /// `grayOutput` is `.gray16`, or an mkv recording without a COLOR track).
    public var color: PixelBuffer
    /// Depth in meters (depthFloat32), or nil when none was paired with this color frame.
    public var depth: DepthData?
    /// Capture time in seconds: recorded timestamp for data sets, camera clock for V4L2.
    public var timestamp: Double
    /// Frame number in the sequence (playback), or count of frames delivered (live).
    public var index: Int
    /// The frame's own name in its recording (a color/ + depth/ folder's file name), if it has one.
    public var name: String?
    /// A subject matte (gray8, 255 the subject … 0 the background, any size: scaled to the color
    /// image), when the source has one: a portrait photo's portrait effects or semantic mattes
    /// (`PhotoSource`). The viewer's depth-mask and portrait modes use it as their mask.
    public var matte: PixelBuffer?
    /// When the depth was taken, on `timestamp`'s clock, where the source knows it and it differs
    /// from the color's (a camera or recording whose streams have their own stamps, paired by
    /// nearest time); nil: at `timestamp`. A writer lists the depth under it (`record` as `convert`).
    public var depthTimestamp: Double?

    public init(color: PixelBuffer, depth: DepthData?, timestamp: Double, index: Int, name: String? = nil, matte: PixelBuffer? = nil,
                depthTimestamp: Double? = nil) {
        self.color = color
        self.depth = depth
        self.timestamp = timestamp
        self.index = index
        self.name = name
        self.matte = matte
        self.depthTimestamp = depthTimestamp
    }
}

/// How many of a source's frames its consumer may hold at once, for sources that fill pooled
/// buffers: the viewer's prefetch thread holds the frame it is making and up to two finished ones
/// in its queue, and the render loop holds the frame shown and the one the GPU still reads. A pool
/// smaller than this grows when those peaks coincide, which can be any time (in the steady state a
/// new buffer is a new texture: allocations and a buffer's worth of memory in the middle of a run).
public let framesHeldByConsumer = 5

/// A source of color (+ depth) frames, polled without blocking once per display frame.
///
/// Errors a source hits mid-run are thrown from `nextFrame` as `CaptureError` with a one-line
/// description; the caller shows them and keeps calling.
///
/// What a source can do beyond frames is a capability it offers (`playback`, `depthRate`,
/// `cameraControls`, `reconnection`, `imu`; nil when it cannot): a consumer asks the source, never casts
/// it to a concrete type, so a new source kind adopts what it has and every consumer follows.
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

    /// Both cameras, depth→color extrinsics and depth units, as recorded or configured; nil when
    /// the source knows none (consumers then assume `RGBDCalibration.assumed` and say so).
    /// Valid after `start()`.
    var calibration: RGBDCalibration? { get }
    /// What the source knows about itself: kind, device, streams, duration. Valid after `start()`.
    var metadata: SourceMetadata { get }
    /// One line per skipped or bad frame, oldest first.
    var warnings: [String] { get }
    /// Called with each warning as it happens, on the thread that calls `nextFrame`.
    var onWarning: ((String) -> Void)? { get set }
    /// Frames per second of the recording or device, when known (recorders use it for video).
    var nominalFrameRate: Double? { get }
    /// Units per meter of the 16-bit depth the source reads (what a writer of the same units uses);
    /// nil for sources whose depth is not stored as integers (the synthetic scene).
    var depthUnitsPerMeter: Float? { get }
    /// The stereo baseline in meters of a stereo depth camera (the depth-quality sub-pixel RMS),
    /// nil when the source does not know it. Valid after `start()`.
    var stereoBaselineMeters: Float? { get }

    // MARK: Capabilities

    /// Pause, step, seek, loop and rate of a recording or the synthetic scene (`RecordingPlayback`);
    /// nil for cameras and still sources (a pair, a snapshot).
    var playback: PlaybackControl? { get }
    /// A lower depth rate when the machine runs hot (the thermal watch); nil when the source cannot.
    var depthRate: DepthRateLimiting? { get }
    /// A camera's controls (V4L2: enumerated, restored, `--ctrl` set on open); nil for other sources.
    var cameraControls: V4L2SourceControls? { get }
    /// Waiting for an unplugged camera and resuming it (`ReconnectingSource`); nil for other sources.
    var reconnection: CameraReconnection? { get }
    /// Images a network source received and lost on the way (`DDSSource`); nil for other sources.
    var delivery: DeliveryCounting? { get }
    /// A live source that says when its next frame is ready (`DDSSource`), so a consumer waits for
    /// it instead of polling; nil for other sources.
    var readiness: FrameReadiness? { get }
    /// Each frame's camera pose in the world (optical frame), when the recording has them (phone
    /// scans, a TUM folder with groundtruth.txt); nil otherwise. Valid after `start()`.
    var poses: FramePoses? { get }
    /// Every frame of each recorded stream on its own clock, unpaired (what `convert` writes); nil
    /// for sources that only play pairs. Valid after `start()`.
    var recordedStreams: RecordedStreams? { get }
    /// The accelerometer and gyroscope samples a recording holds (bag, ros2, mkv, a Stray Scanner
    /// scan); nil when it has none. Valid after `start()`.
    var imu: IMURecording? { get }
}

/// Defaults for sources that know nothing more: no calibration, no warnings.
public extension FrameSource {
    var calibration: RGBDCalibration? { nil }
    var metadata: SourceMetadata { SourceMetadata(kind: String(name.prefix { $0 != ":" })) }
    var warnings: [String] { [] }
    var onWarning: ((String) -> Void)? {
        get { nil }
        set {}
    }
    var nominalFrameRate: Double? { nil }
    var depthUnitsPerMeter: Float? { calibration?.depthScale }
    var stereoBaselineMeters: Float? { nil }
    var poses: FramePoses? { nil }
    var playback: PlaybackControl? { nil }
    var depthRate: DepthRateLimiting? { nil }
    var cameraControls: V4L2SourceControls? { nil }
    var reconnection: CameraReconnection? { nil }
    var delivery: DeliveryCounting? { nil }
    var readiness: FrameReadiness? { nil }
    var recordedStreams: RecordedStreams? { nil }
    var imu: IMURecording? { nil }
}

public extension FrameSource {
    /// A recording with a known end (a data-set folder, a bag, an mkv, a PLY sequence): what the
    /// headless commands read frame by frame to its last frame. Valid after `start()`.
    var recordedFrameCount: Int? { isLive ? nil : playback?.frameCount }
}

/// A network source's counts of what arrived: the viewer's status line and `--stats`, `subscribe`.
/// Read from any thread (the source keeps them under its own short lock).
public protocol DeliveryCounting: AnyObject {
    var deliveryCounts: DeliveryCounts { get }
}

public struct DeliveryCounts: Sendable, Equatable {
    /// Image samples received (each color and each depth image counts).
    public var received = 0
    /// Image samples lost on the way (sequence gaps, the middleware's lost-sample count).
    public var lost = 0
    /// Frames made but pushed out of the source's queue before the consumer took them.
    public var overrun = 0
    /// Image samples over the source's size limit, dropped before decoding (`DDSImageLimit`).
    public var oversize = 0
    public init(received: Int = 0, lost: Int = 0, overrun: Int = 0, oversize: Int = 0) {
        self.received = received; self.lost = lost; self.overrun = overrun; self.oversize = oversize
    }

    /// "dds: 600 images received, 2 lost (0.33 %), 0 overrun" (", 5 over the size limit" when any
    /// were) — `what` names the transport.
    public func line(_ what: String) -> String {
        let total = received &+ lost
        return "\(what): \(received) images received, \(lost) lost"
            + (total > 0 ? String(format: " (%.2f %%)", 100 * Double(lost) / Double(total)) : "") + ", \(overrun) overrun"
            + (oversize > 0 ? ", \(oversize) over the size limit" : "")
    }
}

/// A source whose frames arrive on a thread of its own, which wakes a waiting consumer when one is
/// ready (no polling interval between a frame's arrival and its consumer).
public protocol FrameReadiness: AnyObject {
    /// Waits up to `seconds` for a frame `nextFrame` would return: true when one is ready (at
    /// once if one already is), false after `seconds` or at once when the source is stopped. Any
    /// thread, outside `nextFrame`.
    func waitForFrame(seconds: Double) -> Bool
}

/// A camera source that waits for its camera when it is unplugged and resumes it when it is back.
public protocol CameraReconnection: AnyObject {
    /// Streaming, or waiting for the camera (named) to come back.
    var state: ReconnectingSource.State { get }
    /// Counts state changes: a reader compares it with the last it saw (no allocation per frame).
    var stateChanges: Int { get }
    /// After a resume: what came back ("/dev/video4 (HD Webcam): 640x480 YUYV at 30 fps").
    var resumedDescription: String? { get }
}

/// A source's description of itself, for `info`, `convert`'s calibration.json and the panel.
public struct SourceMetadata: Sendable, Equatable {
    public struct Device: Sendable, Equatable {
        public var name: String?
        public var serial: String?
        public var firmware: String?
        public init(name: String? = nil, serial: String? = nil, firmware: String? = nil) {
            self.name = name; self.serial = serial; self.firmware = firmware
        }
    }
    public struct Stream: Sendable, Equatable {
        /// "color", "depth", "ir" (or the recording's own name for other streams).
        public var name: String
        public var width: Int
        public var height: Int
        public var fps: Double?
        /// As recorded: "rgb8", "mono16", "MJPG", "b16g", "Z16"…
        public var encoding: String
        /// Frames in the recording; nil for live streams.
        public var frames: Int?
        public init(name: String, width: Int, height: Int, fps: Double? = nil, encoding: String, frames: Int? = nil) {
            self.name = name; self.width = width; self.height = height; self.fps = fps
            self.encoding = encoding; self.frames = frames
        }
    }
    /// The `--source` kind: "synthetic", "tum", "pair", "v4l2", "bag", "mkv"…
    public var kind: String
    public var device: Device?
    public var streams: [Stream]
    /// Seconds from the first to the last frame; nil for live or unknown.
    public var durationSeconds: Double?
    /// Anything else the recording says (Azure Kinect's K4A_* tags, bag options), by name.
    public var tags: [String: String]

    public init(kind: String, device: Device? = nil, streams: [Stream] = [], durationSeconds: Double? = nil,
                tags: [String: String] = [:]) {
        self.kind = kind; self.device = device; self.streams = streams
        self.durationSeconds = durationSeconds; self.tags = tags
    }
}

/// Playback controls of recorded sources: `RecordingPlayback`, the one implementation every source
/// holds, and the viewer's prefetcher, which forwards them to its source's thread.
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
    /// The frames after the one delivered last fall due from now on, as after a resume: its
    /// consumer has just shown it, and the time it took to appear (a window starting) is not
    /// played past with frames skipped.
    func restartTimeline()
}
