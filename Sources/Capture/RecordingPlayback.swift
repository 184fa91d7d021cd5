import Foundation

/// The playback controls of a recorded source, written once: every source that plays frames on a
/// timeline (TUM folders, bags, mkv files, the synthetic scene, PLY sequences) holds one and
/// offers it as its `playback` capability; its `nextFrame` reads `clock` for the frame due and
/// reports back with `clock.delivered`.
///
/// Pause, resume, step, seek (by frame or time), loop and rate act on the `PlaybackClock`; the
/// loop and rate settings outlive a reopen (`open` makes a new clock with them). A recording
/// whose frames are known only after its source starts throws on a step or seek before `open`,
/// with one line naming the source.
///
/// Used by the thread that calls the source's `nextFrame` (the viewer's prefetcher serializes
/// calls under its source lock). A source whose own thread reads the clock (`PLYSequence`)
/// passes that thread's lock (`Guarded`): every member then runs under it, and what a step or
/// seek must also do under it (drop the frame loaded for the old position) is its `moved`.
public final class RecordingPlayback: PlaybackControl {
    /// For a source whose own thread reads the clock: the lock that thread holds around it, what a
    /// move also does under the lock, and the index its consumer has taken (`currentIndex`).
    struct Guarded {
        let lock: NSLock
        let moved: () -> Void
        let shownIndex: () -> Int
    }

    /// Named in errors: "tum:/data/fr1: frame 9 is out of range 0..<5".
    let name: String
    /// Which frame is due: the source reads it in `nextFrame` (under `guarded`'s lock, if any).
    var clock: PlaybackClock
    /// False for endless sources (the synthetic scene): `loop` stays off.
    private let loops: Bool
    /// False until the recording's frames are known (`open`) and after `close`.
    private(set) var isOpen: Bool
    private var loopSetting = false
    private var fpsSetting: Double?
    private let guarded: Guarded?

    /// A recording whose frames are known once its source starts (`open`).
    init(name: String) {
        self.name = name
        clock = PlaybackClock(count: 0, timestamps: [], defaultFPS: 30)
        loops = true
        isOpen = false
        guarded = nil
    }

    /// An endless source played at `fps` (frame i at i / fps); it cannot loop.
    init(name: String, endlessAt fps: Double) {
        self.name = name
        clock = PlaybackClock(count: nil, timestamps: [], defaultFPS: fps)
        loops = false
        isOpen = true
        guarded = nil
    }

    /// A recording listed up front whose own thread reads the clock under `guarded.lock`.
    init(name: String, count: Int, timestamps: [Double], defaultFPS: Double, guarded: Guarded) {
        self.name = name
        clock = PlaybackClock(count: count, timestamps: timestamps, defaultFPS: defaultFPS)
        loops = true
        isOpen = true
        self.guarded = guarded
    }

    /// The source has opened its recording: `count` frames at `timestamps` (seconds; empty: at
    /// `defaultFPS`), played from frame 0 with the loop and rate set so far.
    func open(count: Int, timestamps: [Double], defaultFPS: Double) {
        clock = PlaybackClock(count: count, timestamps: timestamps, defaultFPS: defaultFPS)
        clock.loop = loopSetting
        clock.fps = fpsSetting
        isOpen = true
    }

    /// The source has stopped: steps and seeks throw until it opens again.
    func close() { isOpen = false }

    /// The frame due at `now` (nil when none is), made by `decode`. A frame that cannot be decoded
    /// is passed — the clock moves on, so the next call goes on with the next frame — reported
    /// through `warn` and thrown as a one-line error naming `path`. For sources read on the
    /// caller's thread (not `guarded`).
    func deliverDue(now: Double, path: String, decode: (Int) throws -> FrameSet,
                    warn: (String) -> Void) throws -> FrameSet? {
        guard let due = clock.due(now: now) else { return nil }
        clock.delivered(due.index, now: now, explicit: due.explicit)
        do {
            return try decode(due.index)
        } catch {
            let e = CaptureError.wrapping(error, path: path)
            warn("frame \(due.index): \(e)")
            throw e
        }
    }

    private func locked<R>(_ body: () throws -> R) rethrows -> R {
        guard let guarded else { return try body() }
        return try guarded.lock.withLock(body)
    }

    private func checkOpen(_ what: String) throws {
        guard isOpen else { throw CaptureError.invalidState("\(name): \(what) before start()") }
    }

    /// Records a step or seek (`guarded`'s `moved`, under its lock).
    private func moved() { guarded?.moved() }

    // MARK: PlaybackControl

    public var isPaused: Bool { locked { clock.paused } }
    public func pause() { locked { clock.paused = true } }
    public func resume() { locked { clock.paused = false } }
    public func restartTimeline() { locked { clock.restart() } }

    public func step(by delta: Int) throws {
        try locked {
            try checkOpen("step")
            clock.step(by: delta)
            moved()
        }
    }

    public func seek(toFrame index: Int) throws {
        try locked {
            try checkOpen("seek")
            if let n = clock.count {
                guard index >= 0 && index < n else {
                    throw CaptureError.invalidState("\(name): frame \(index) is out of range 0..<\(n)")
                }
            } else if index < 0 {
                throw CaptureError.invalidState("\(name): cannot seek to frame \(index)")
            }
            clock.seek(index)
            moved()
        }
    }

    /// Moves to the last frame recorded at or before `seconds` after the first frame (clamped to
    /// the recording); the next `nextFrame` returns it. Returns its index.
    @discardableResult
    public func seek(toTime seconds: Double) throws -> Int {
        try locked {
            try checkOpen("seek")
            guard seconds.isFinite else { throw CaptureError.invalidState("\(name): cannot seek to \(seconds) s") }
            guard clock.count != 0 else { throw CaptureError.invalidState("\(name): no frame to seek to") }
            let t = clock.timestamps
            var i: Int
            if t.isEmpty {
                i = max(0, Int((seconds * clock.defaultFPS + 1e-9).rounded(.down)))
                if let n = clock.count { i = min(i, max(n - 1, 0)) }
            } else {
                var lo = 0, hi = t.count - 1
                while lo < hi {
                    let mid = (lo + hi + 1) / 2
                    if t[mid] - t[0] <= seconds + 1e-9 { lo = mid } else { hi = mid - 1 }
                }
                i = lo
            }
            clock.seek(i)
            moved()
            return i
        }
    }

    public var loop: Bool {
        get { locked { loopSetting } }
        set {
            locked {
                guard loops else { return }
                loopSetting = newValue
                clock.loop = newValue
            }
        }
    }

    public var fps: Double? {
        get { locked { fpsSetting } }
        set {
            locked {
                fpsSetting = newValue.flatMap { $0 > 0 && $0.isFinite ? $0 : nil }
                clock.fps = fpsSetting
            }
        }
    }

    /// The rate set (`fps`), read by the source's own thread under `guarded`'s lock.
    var fpsLocked: Double? { fpsSetting }

    public var frameCount: Int? { locked { isOpen ? clock.count : nil } }
    public var currentIndex: Int {
        if let guarded { return guarded.shownIndex() }
        return clock.pending ?? max(clock.current, 0)
    }
    public var isFinished: Bool { locked { isOpen && clock.isFinished } }
}
