import Foundation
import DepthKit

/// What `record(source:frames:to:)` wrote.
public struct RecordingSummary: Sendable {
    public var directory: String
    public var framesWritten: Int
    /// Frames written without depth (stored as all-invalid depth).
    public var framesWithoutDepth: Int
    /// Warnings from the source (skipped frames).
    public var warnings: [String]
    /// The stop signal (SIGINT, SIGTERM, SIGHUP) that ended the recording early, if one did.
    public var stoppedBy: Int32? = nil
}

/// Writes the frames of any `FrameSource` into a TUM RGB-D folder (`rgb/`, `depth/` as 16-bit PNG
/// at 5000 units per meter, `rgb.txt`, `depth.txt`, `associations.txt`) through DepthKit's
/// `TUMWriter`, so `TUMSequence` reads it back.
///
/// Recorded sources (with `playback`) are stepped frame by frame from frame 0, as fast as they
/// load, and stop at their end; live sources are polled in real time until `frames` arrive.
public enum TUMRecorder {
    /// - Parameters:
    ///   - timeout: seconds a live source may go without a frame before recording fails.
    ///   - progress: called after each frame with the count written so far.
    ///   - smoothing: smooths each frame's depth before it is written (`record --smooth`).
    ///   - each: called with every frame before it is written (the video recording of `depthlens record --video`).
    ///   - directory: the TUM folder; nil records to `each` only.
    @discardableResult
    public static func record(source: FrameSource, frames: Int, to directory: String?, timeout: Double = 10,
                              smoothing: DepthSmoothingStage? = nil, each: ((FrameSet) throws -> Void)? = nil,
                              progress: ((Int) -> Void)? = nil) throws -> RecordingSummary {
        guard frames > 0 else { throw CaptureError.invalidSource("--frames must be at least 1, got \(frames)") }
        var writer: TUMWriter?
        if let directory {
            do { writer = try TUMWriter(directory: directory) } catch { throw CaptureError.wrapping(error, path: directory) }
        }
        let reader = try FrameReader(source: source, timeout: timeout)
        var summary = RecordingSummary(directory: directory ?? "", framesWritten: 0, framesWithoutDepth: 0, warnings: [])

        func write(_ raw: FrameSet) throws {
            let f = try smoothing?.apply(raw) ?? raw
            try each?(f)
            let depth: DepthData
            if let d = f.depth { depth = d } else {
                summary.framesWithoutDepth += 1
                depth = DepthData(map: PixelBuffer(width: f.color.width, height: f.color.height, format: .depthFloat32))
            }
            if let writer, let directory {
                do {
                    try writer.append(RGBDFrame(color: f.color, depth: depth, timestamp: f.timestamp))
                } catch { throw CaptureError.wrapping(error, path: directory) }
            }
            summary.framesWritten += 1
            progress?(summary.framesWritten)
        }

        // On an error or a stop signal the folder still lists exactly the frames written.
        func finish() throws {
            if let writer, let directory {
                do { try writer.finish() } catch { throw CaptureError.wrapping(error, path: directory) }
            }
        }
        do {
            while summary.framesWritten < frames {
                if let s = StopSignals.pending { summary.stoppedBy = s; break }
                guard let f = try reader.next() else { break }
                try write(f)
            }
        } catch {
            try? finish()
            throw error
        }
        try finish()
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
