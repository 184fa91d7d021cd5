import Foundation
import DepthKit

/// What `record(source:frames:to:)` wrote.
public struct RecordingSummary: Sendable {
    public var directory: String
    /// Frames written: playback or live frames, or (stream by stream) the most images any one stream got.
    public var framesWritten: Int
    /// Frames written without depth (stored as all-invalid depth).
    public var framesWithoutDepth: Int
    /// Warnings from the source (skipped frames).
    public var warnings: [String]
    /// The stop signal (SIGINT, SIGTERM, SIGHUP) that ended the recording early, if one did.
    public var stoppedBy: Int32? = nil
    /// Images written per stream when the folder was written stream by stream (`RecordedStreams`), else nil.
    public var imagesWritten: [StreamKind: Int]? = nil
    /// Frames of the recording that could not be read: skipped, each said in `warnings`.
    public var skippedFrames = 0

    init(directory: String, framesWritten: Int, framesWithoutDepth: Int, warnings: [String]) {
        self.directory = directory; self.framesWritten = framesWritten
        self.framesWithoutDepth = framesWithoutDepth; self.warnings = warnings
    }

    /// Nothing recorded yet (`record` writing an output that reads the source itself: MCAP by stream).
    public init() { self.init(directory: "", framesWritten: 0, framesWithoutDepth: 0, warnings: []) }
}

/// Writes the frames of any `FrameSource` into a TUM RGB-D folder through `DatasetExporter`, the
/// writer `convert` uses, so the two cannot differ: `rgb/`, `depth/` (16-bit PNG in the source's
/// own depth units, which calibration.json's `depth_scale` says: not TUM's 5000 unless the source's), `rgb.txt`,
/// `depth.txt`, `associations.txt`, `calibration.json` (and `groundtruth.txt`, `imu.csv` where
/// the source has poses or IMU samples), which `tum:` and `TUMSequence` read back.
///
/// A recording whose streams have their own clocks (`recordedStreams`: bag, ros2, mkv, tum) is
/// written as `convert --frames 0:N-1` writes it, stream by stream, each frame once under its own
/// stamp; the other outputs (`each`: video, Matroska, MCAP) then read the playback frames in a
/// second pass. With smoothing (which runs across playback frames), and for every other source
/// (live cameras, DDS, the synthetic scene), the folder is written frame by frame: the color under
/// its stamp, the depth under its own (`FrameSet.depthTimestamp`) — a pair in associations.txt.
/// Recorded sources are stepped from frame 0 as fast as they load and stop at their end; live
/// sources are polled in real time until `frames` arrive.
public enum TUMRecorder {
    /// - Parameters:
    ///   - timeout: seconds a live source may go without a frame before recording fails.
    ///   - progress: called after each frame with the count written so far.
    ///   - smoothing: smooths each frame's depth before it is written (`record --smooth`).
    ///   - each: called with every frame before it is written (the video recording of `depthlens record --video`).
    ///   - directory: the TUM folder; nil records to `each` only.
    ///   - calibration: `--calibration` / `--intrinsics`, written into calibration.json instead of what the source recorded.
    @discardableResult
    public static func record(source: FrameSource, frames: Int, to directory: String?, timeout: Double = 10,
                              smoothing: DepthSmoothingStage? = nil, each: ((FrameSet) throws -> Void)? = nil,
                              calibration: CalibrationOverride = CalibrationOverride(),
                              progress: ((Int) -> Void)? = nil) throws -> RecordingSummary {
        guard frames > 0 else { throw CaptureError.invalidSource("--frames must be at least 1, got \(frames)") }
        guard let directory else {
            return try recordFrames(source: source, frames: frames, timeout: timeout, smoothing: smoothing, each: each, progress: progress)
        }
        let exporter = DatasetExporter(source: source, directory: directory)
        exporter.timeout = timeout
        exporter.calibrationOverride = calibration
        var summary = RecordingSummary(directory: directory, framesWritten: 0, framesWithoutDepth: 0, warnings: [])
        if source.recordedStreams != nil && smoothing == nil {
            exporter.selection.frames = 0...(frames - 1)
            // Progress in frames: the share of the images written.
            let s = try exporter.run(progress: { (p: ExportProgress) in
                let total = max(1, p.total ?? 1)
                progress?(min(frames, p.written * frames / total))
            })
            summary.framesWritten = s.frameCount
            summary.imagesWritten = s.imagesWritten
            summary.skippedFrames = s.skippedFrames
            summary.stoppedBy = s.stoppedBy
            summary.warnings = s.warnings
            if let each, s.stoppedBy == nil {
                let again = try recordFrames(source: source, frames: frames, timeout: timeout, smoothing: nil, each: each, progress: nil)
                summary.stoppedBy = again.stoppedBy
            }
            return summary
        }
        // Frame by frame. A frame without depth is written with all-invalid depth, so that the
        // folder pairs every color frame (TUMSequence lists pairs).
        exporter.streamByStream = false
        exporter.frameLimit = frames
        exporter.eachFrame = { raw in
            var f = try smoothing?.apply(raw) ?? raw
            try each?(f)
            if f.depth == nil {
                summary.framesWithoutDepth += 1
                f.depth = DepthData(map: PixelBuffer(width: f.color.width, height: f.color.height, format: .depthFloat32))
            }
            return f
        }
        let s = try exporter.run(progress: { (p: ExportProgress) in progress?(p.written) })
        summary.framesWritten = s.framesWritten
        summary.skippedFrames = s.skippedFrames
        summary.stoppedBy = s.stoppedBy
        summary.warnings = s.warnings
        return summary
    }

    /// The frames read in order and handed to `each` only (no folder).
    private static func recordFrames(source: FrameSource, frames: Int, timeout: Double, smoothing: DepthSmoothingStage?,
                                     each: ((FrameSet) throws -> Void)?, progress: ((Int) -> Void)?) throws -> RecordingSummary {
        let reader = try FrameReader(source: source, timeout: timeout)
        var summary = RecordingSummary(directory: "", framesWritten: 0, framesWithoutDepth: 0, warnings: [])
        while summary.framesWritten < frames {
            if let s = StopSignals.pending { summary.stoppedBy = s; break }
            guard let raw = try reader.next() else { break }
            let f = try smoothing?.apply(raw) ?? raw
            try each?(f)
            if f.depth == nil { summary.framesWithoutDepth += 1 }
            summary.framesWritten += 1
            progress?(summary.framesWritten)
        }
        summary.warnings = source.warnings
        return summary
    }
}

/// Records `frames` frames of `source` into the TUM folder `directory` (see `TUMRecorder`).
@discardableResult
public func record(source: FrameSource, frames: Int, to directory: String) throws -> RecordingSummary {
    try TUMRecorder.record(source: source, frames: frames, to: directory)
}

/// Frames per second of a source, for a video of it: the playback rate when one is set, else the
/// recorded rate (TUM timestamps), the camera's configured rate, or 30.
public func nominalFrameRate(of source: FrameSource) -> Double {
    if let fps = source.playback?.fps, fps > 0 { return fps }
    return source.nominalFrameRate ?? 30
}

/// CLOCK_MONOTONIC in seconds: the clock to pass as `now` to `nextFrame`.
public func monotonicSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}
