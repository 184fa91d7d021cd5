import DepthKit
import Foundation

/// Depth smoothing between a source and every depth consumer (viewer, recorder): replaces each
/// frame's depth by the smoother's output while `settings.enabled`, and starts the history over
/// where the frames stop following each other.
///
/// History resets on `reset()` (a new source), on a settings change, and when a frame's index is
/// not the next one: a step back, a seek, a loop, or any jump while paused. While playing, forward
/// gaps of up to `droppedFrameGap` frames are frames the viewer dropped and keep the history (the
/// temporal step test still resets every pixel whose depth moved).
public final class DepthSmoothingStage {
    public static let droppedFrameGap = 4
    public private(set) var smoother: DepthSmoothing
    private var lastIndex: Int?
    /// The last frame as the source delivered it (for re-smoothing a paused frame).
    public private(set) var lastRaw: FrameSet?

    public init(smoother: DepthSmoothing) { self.smoother = smoother }

    public var settings: DepthSmoothingSettings {
        get { smoother.settings }
        set {
            guard newValue.clamped() != smoother.settings else { return }
            smoother.settings = newValue
            reset()
        }
    }

    /// Swaps the implementation (CPU ↔ GPU), keeping the settings; the history starts over.
    public func replaceSmoother(_ s: DepthSmoothing) {
        s.settings = smoother.settings
        smoother = s
        reset()
    }

    public func reset() {
        smoother.reset()
        lastIndex = nil
    }

    /// The frame with its depth smoothed (unchanged when off or without depth).
    /// - Parameter playing: false while paused: then any jump is a seek.
    public func apply(_ frame: FrameSet, playing: Bool = true) throws -> FrameSet {
        lastRaw = frame
        guard settings.enabled, let depth = frame.depth else { return frame }
        if let last = lastIndex {
            let gap = frame.index - last
            if gap < 1 || (gap > 1 && (!playing || gap > Self.droppedFrameGap)) { smoother.reset() }
        }
        lastIndex = frame.index
        var out = frame
        out.depth = try smoother.smooth(depth)
        return out
    }

    /// The last raw frame smoothed again from no history (after a settings change while paused).
    public func reapplyLast() throws -> FrameSet? {
        guard let raw = lastRaw else { return nil }
        reset()
        return try apply(raw, playing: false)
    }
}
