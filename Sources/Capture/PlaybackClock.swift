/// Decides which frame of a recorded sequence is due at a given time: playback at recorded
/// timestamps or a fixed rate, pause, step, seek and loop. Sources load the frame it names and
/// report back with `delivered(_:now:explicit:)`.
///
/// The clock is anchored when a frame is delivered explicitly (start, step, seek, loop, resume):
/// frame i is then due at anchorTime + offset(i) − offset(anchor). Timed deliveries keep the
/// anchor, so late polls never accumulate drift; frames whose time has passed are skipped.
struct PlaybackClock {
    /// Frame count; nil for endless sources (offsets then follow `fps ?? defaultFPS`).
    var count: Int?
    /// Recorded timestamps (seconds) when `fps` is nil; empty for endless sources.
    var timestamps: [Double]
    var defaultFPS: Double
    var fps: Double? { didSet { reanchor = true } }
    var loop = false
    var paused = false { didSet { if !paused { reanchor = true } } }
    private(set) var current = -1
    /// Frame to deliver on the next poll regardless of time (start, step, seek).
    var pending: Int? = 0
    /// Direction of the last explicit move, for skipping unreadable frames.
    var direction = 1
    private var reanchor = true
    private var anchorTime = 0.0
    private var anchorOffset = 0.0

    init(count: Int?, timestamps: [Double], defaultFPS: Double) {
        self.count = count
        self.timestamps = timestamps
        self.defaultFPS = defaultFPS
    }

    var lastIndex: Int? { count.map { $0 - 1 } }
    var isFinished: Bool { pending == nil && !loop && current >= 0 && current == lastIndex }

    func offset(_ i: Int) -> Double {
        if let fps { return Double(i) / fps }
        if timestamps.isEmpty { return Double(i) / defaultFPS }
        return timestamps[i] - timestamps[0]
    }

    /// Seconds the last frame stays on screen before a loop starts over.
    var lastInterval: Double {
        if let fps { return 1 / fps }
        guard let n = count, n > 1, !timestamps.isEmpty else { return 1 / defaultFPS }
        return max(offset(n - 1) / Double(n - 1), 1e-3)
    }

    /// The largest index whose offset is ≤ `o`.
    func index(atOffset o: Double) -> Int {
        guard let n = count else { return max(0, Int((o * (fps ?? defaultFPS) + 1e-9).rounded(.down))) }
        var lo = 0, hi = n - 1
        while lo < hi {
            let mid = (lo + hi + 1) / 2
            if offset(mid) <= o + 1e-9 { lo = mid } else { hi = mid - 1 }
        }
        return lo
    }

    /// The frame due at `now`, and whether it is an explicit move (which re-anchors), or nil.
    mutating func due(now: Double) -> (index: Int, explicit: Bool)? {
        if let p = pending { pending = nil; return (p, true) }
        if paused || current < 0 { return nil }
        if reanchor {
            reanchor = false
            anchorTime = now
            anchorOffset = offset(current)
            return nil
        }
        let elapsed = now - anchorTime
        let target = index(atOffset: anchorOffset + elapsed)
        if target > current { return (target, false) }
        if let last = lastIndex, current == last, loop, elapsed >= offset(last) - anchorOffset + lastInterval {
            direction = 1
            return (0, true)
        }
        return nil
    }

    /// Records that frame `i` was delivered (or skipped as unreadable) at `now`.
    mutating func delivered(_ i: Int, now: Double, explicit: Bool) {
        current = i
        if explicit {
            reanchor = false
            anchorTime = now
            anchorOffset = offset(i)
        }
    }

    /// The next index in `direction` after `i`, wrapping when looping; nil past either end.
    func neighbor(of i: Int, direction d: Int) -> Int? {
        let j = i + d
        guard let n = count else { return j >= 0 ? j : nil }
        if j >= 0 && j < n { return j }
        return loop ? (j + n) % n : nil
    }

    /// Moves `delta` frames from the current one (clamped, or wrapped when looping).
    mutating func step(by delta: Int) {
        let from = pending ?? max(current, 0)
        var t = from + delta
        if let n = count {
            t = loop ? ((t % n) + n) % n : min(max(t, 0), n - 1)
        } else {
            t = max(t, 0)
        }
        direction = delta < 0 ? -1 : 1
        pending = t
    }

    /// The next frames fall due from the next poll on (as after a resume).
    mutating func restart() { reanchor = true }

    mutating func seek(_ i: Int) {
        direction = i >= max(current, 0) ? 1 : -1
        pending = i
    }
}
