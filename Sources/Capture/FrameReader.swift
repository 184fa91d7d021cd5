import DepthKit
import Foundation

/// Reads a source's frames in order, the way every headless command does (record, process,
/// export-ply, render3d, convert): a recorded source (`playback` with a known end) frame by
/// frame from `first` as fast as it loads, stopping at its end; an endless recorded one (the
/// synthetic scene) frame by frame until the caller stops; a still source (a pair, a snapshot) its
/// one frame; a live source in real time, failing after `timeout` seconds without a frame.
public final class FrameReader {
    public let source: FrameSource
    public let timeout: Double
    private let first: Int
    private var started = false
    private var finished = false
    private var lastFrameTime = 0.0
    private var virtualNow = 0.0

    /// Starts the source. Throws its one-line error.
    public init(source: FrameSource, first: Int = 0, timeout: Double = 10) throws {
        self.source = source
        self.first = first
        self.timeout = timeout
        try source.start()
    }

    deinit { source.stop() }

    private var playback: PlaybackControl? { source.isLive ? nil : source.playback }

    /// The next frame, nil after the last.
    public func next() throws -> FrameSet? {
        guard !finished else { return nil }
        if let playback {
            if !started {
                started = true
                playback.pause()
                playback.loop = false
                try playback.seek(toFrame: first)
            } else {
                if let n = playback.frameCount, playback.currentIndex >= n - 1 { finished = true; return nil }
                try playback.step(by: 1)
            }
            virtualNow += 1
            guard let f = try source.nextFrame(now: virtualNow) else { finished = true; return nil }
            return f
        }
        if !started {
            started = true
            lastFrameTime = monotonicSeconds()
            if first > 0 && !source.isLive {
                throw CaptureError.invalidState("\(source.name) has one frame; --frame \(first) is out of range")
            }
        }
        while true {
            let now = monotonicSeconds()
            if let f = try source.nextFrame(now: now) {
                lastFrameTime = now
                if !source.isLive { finished = true }   // a still source has one frame
                return f
            }
            if !source.isLive { finished = true; return nil }
            if now - lastFrameTime > timeout {
                throw CaptureError.invalidState("\(source.name): no frame for \(Int(timeout)) s")
            }
            usleep(2000)
        }
    }

    /// Frame `index` of a recorded source (or the one frame of a still one): the headless
    /// single-frame commands' input.
    public static func frame(_ index: Int, of source: FrameSource) throws -> FrameSet {
        let reader = try FrameReader(source: source, first: index)
        guard let f = try reader.next() else {
            throw CaptureError.invalidState("\(source.name): no frame \(index)")
        }
        if source.recordedFrameCount != nil, f.index != index {
            throw CaptureError.invalidState("\(source.name): frame \(index) could not be read (\(source.warnings.last ?? "skipped"))")
        }
        return f
    }
}
