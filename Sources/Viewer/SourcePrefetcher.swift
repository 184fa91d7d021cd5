import Capture
import Foundation

/// Runs a `FrameSource` on its own thread so the next frame is produced (rendered, decoded,
/// converted) while the current one is drawn. Finished frames wait in a two-deep queue; the
/// render loop's `take` never blocks on the source (it only takes a short lock to swap a slot):
/// it gets a live source's newest frame, a recording's oldest (every frame of a recording is
/// shown in order: a render loop that stalls for up to two frames' time shows them a little late
/// rather than not at all), or nil when nothing new arrived. When the loop falls further behind,
/// the oldest queued frame is dropped (its index gap is counted as dropped, as before).
///
/// Playback commands (pause, step, seek) go through this object: they run on the source under
/// the same lock as `nextFrame` and empty the queue, so a stepped or sought frame is the next one shown.
///
/// A recording's timeline starts when its first frame has been drawn, not when the thread starts:
/// the source makes its first frame and nothing more until the render loop has taken it and come
/// back for the next (so it drew it: the first frame's textures and pipelines are made then), then
/// restarts its timeline (`restartTimeline`), so the window's start-up (a second on lavapipe) is
/// not played past with frames dropped.
///
/// `@unchecked Sendable`: the source (and its playback) is called only under `sourceLock`; `queue`,
/// `error`, `warnings`, `running`, `generation`, `mirror`, `start`, `pendingDepthRateLimit` and
/// `pollSleeps` are read and written under `queueLock` (a command holding `sourceLock` takes `queueLock` too to update the
/// mirror: the order is always `sourceLock`, then `queueLock`); the source's `onWarning` is set
/// before the thread starts. `source.depthRate` is asked outside `sourceLock`: a
/// capability accessor reads no state the source's thread writes.
final class SourcePrefetcher: PlaybackControl, @unchecked Sendable {
    let source: FrameSource
    private let sourceLock = NSLock()   // held around every call into `source`
    private let queueLock = NSLock()    // held around `queue`, `error`, `warnings`, `running`
    private var queue: [FrameSet] = []
    private var error: Error?
    private var warnings: [String] = []
    private var running = true
    private var generation = 0
    private let idle = DispatchSemaphore(value: 0)
    /// What the panel asks every frame, kept here (under `queueLock`) so asking never waits for a
    /// frame being made.
    private var mirror = PlaybackMirror()
    private struct PlaybackMirror {
        /// The index of the frame last taken (or the source's, right after a step or seek).
        var shownIndex = 0
        var loop = false
        var fps: Double?
        var count: Int?
        var paused = false
    }
    /// A depth rate limit waiting to be set by the source's thread (`.some(nil)` lifts it).
    private var pendingDepthRateLimit: Double??
    /// Where a recording's start stands: its first frame made (or being made) and not taken yet,
    /// taken and being drawn, drawn (the render loop came back for more: the timeline is to
    /// restart), or playing.
    private var start = TimelineStart.firstFrameNotTaken
    private enum TimelineStart { case firstFrameNotTaken, firstFrameTaken, firstFrameDrawn, playing }

    /// The playback index the source stood at when this prefetcher took it over (nil for a live
    /// source): frames before the first one taken, which the queue may have let go, count from here.
    let startIndex: Int?

    /// The source's playback controls (nil for a live or still source), called under `sourceLock`.
    private let sourcePlayback: PlaybackControl?
    /// Times the thread slept 1 ms because nothing was due (polling), under `queueLock`.
    private var pollSleeps = 0

    /// Takes `source` over (started) and starts its thread. The source's warnings are delivered
    /// by `take`: its callback is set here, before the thread that calls it starts.
    init(_ source: FrameSource) {
        self.source = source
        sourcePlayback = source.playback
        queue.reserveCapacity(2)
        startIndex = sourcePlayback?.currentIndex
        if let p = sourcePlayback {
            mirror = PlaybackMirror(shownIndex: p.currentIndex, loop: p.loop, fps: p.fps, count: p.frameCount, paused: p.isPaused)
        }
        source.onWarning = { [weak self] in self?.post(warning: $0) }
        let t = Thread { [weak self] in self?.produce() }
        t.name = "depthlens source"
        t.start()   // a running Thread is kept alive by Foundation; `stop` waits for it through `idle`
    }

    /// Stops the thread (waits for it) and leaves the source started; the caller stops it. Once is enough.
    func stop() {
        let wasRunning = queueLock.withLock { () -> Bool in defer { running = false }; return running }
        if wasRunning { idle.wait() }
    }

    /// A warning from the source's own callbacks, delivered by the next `take`.
    private func post(warning: String) { queueLock.withLock { warnings.append(warning) } }

    /// The next finished frame — a live source's newest, a recording's oldest — (nil when none
    /// arrived since the last call), and the source's last error and warnings since then.
    func take() -> (frame: FrameSet?, error: Error?, warnings: [String]) {
        queueLock.withLock {
            let f: FrameSet?
            if sourcePlayback != nil {
                f = queue.first
                if !queue.isEmpty { queue.removeFirst() }
            } else {
                f = queue.last
                queue.removeAll(keepingCapacity: true)
            }
            if let f { mirror.shownIndex = f.index }
            switch start {
            case .firstFrameNotTaken: if f != nil { start = .firstFrameTaken }
            case .firstFrameTaken: start = .firstFrameDrawn
            case .firstFrameDrawn, .playing: break
            }
            let e = error
            error = nil
            var w: [String] = []
            if !warnings.isEmpty { swap(&w, &warnings) }
            return (f, e, w)
        }
    }

    private func produce() {
        defer { idle.signal() }
        // The source's frame signal (a network stream's): this thread waits on it, outside
        // `sourceLock` (thread-safe by its contract), instead of polling every 1 ms.
        let readiness = source.readiness
        while queueLock.withLock({ running }) {
            // A recording's first frame made and not drawn yet: nothing more until it is.
            let waiting = queueLock.withLock {
                sourcePlayback != nil && (start == .firstFrameNotTaken && !queue.isEmpty || start == .firstFrameTaken)
            }
            if waiting {
                usleep(1000)
                continue
            }
            // The generation is read under the source lock, which a step or seek holds while it
            // bumps it: a frame is stale only if a step or seek came after it was made. (Read
            // before taking the source lock, a step in between made the stepped frame itself look
            // stale, and a paused source never made it again: the picture stayed behind.)
            let (started, result) = sourceLock.withLock { () -> (Int, Result<FrameSet?, Error>) in
                let (started, limit, restart) = queueLock.withLock { () -> (Int, Double??, Bool) in
                    defer {
                        pendingDepthRateLimit = nil
                        if start == .firstFrameDrawn { start = .playing }
                    }
                    return (generation, pendingDepthRateLimit, start == .firstFrameDrawn)
                }
                if let limit, let s = source.depthRate, s.depthRateLimit != limit { s.depthRateLimit = limit }
                if restart { sourcePlayback?.restartTimeline() }
                return (started, Result { try source.nextFrame(now: monotonicSeconds()) })
            }
            switch result {
            case .success(let f?):
                queueLock.withLock {
                    // A frame begun before a seek or step is stale.
                    guard started == generation else { return }
                    if queue.count == 2 { queue.removeFirst() }
                    queue.append(f)
                }
            case .success(nil):
                // A source that signals its frames wakes this thread when one is ready (a frame from
                // the network reaches the queue at once); it returns at once only when stopped.
                if let r = readiness {
                    let t0 = monotonicSeconds()
                    if r.waitForFrame(seconds: 0.02) || monotonicSeconds() - t0 > 0.001 { continue }
                }
                queueLock.withLock { pollSleeps += 1 }
                usleep(1000)   // nothing due yet: poll again in 1 ms
            case .failure(let e):
                queueLock.withLock { error = e }
                usleep(20_000)
            }
        }
    }

    /// Times the source's thread slept to poll again (a source that signals its frames needs none).
    var pollSleepCount: Int { queueLock.withLock { pollSleeps } }

    /// Asks the source for a depth rate limit (thermal watch): the source's thread sets it before
    /// its next frame, so the render loop never waits for a frame being made. False when the
    /// source cannot lower its depth rate.
    @discardableResult
    func setDepthRateLimit(_ limit: Double?) -> Bool {
        guard source.depthRate != nil else { return false }
        queueLock.withLock { pendingDepthRateLimit = .some(limit) }
        return true
    }

    /// Runs `body` on the source under the source lock. A move (`moves`: step, seek) empties the
    /// queue and makes frames begun before it stale, so the frame it asked for is the next one
    /// shown. Other commands (pause, resume, loop, rate) keep what the source already made: a frame
    /// that was due before a pause is still shown, so the picture and the reported index agree.
    private func control<R>(moves: Bool = false, _ body: (PlaybackControl) throws -> R) rethrows -> R {
        try sourceLock.withLock {
            // Only reached through `playback`, which is nil without the source's controls.
            guard let p = sourcePlayback else { preconditionFailure("playback control of a source without playback") }
            let r = try body(p)
            queueLock.withLock {
                if moves {
                    queue.removeAll(keepingCapacity: true); generation += 1
                    mirror.shownIndex = p.currentIndex
                }
                mirror.paused = p.isPaused
            }
            return r
        }
    }

    /// Self when the source has playback controls.
    var playback: PlaybackControl? { sourcePlayback == nil ? nil : self }

    // MARK: PlaybackControl, forwarded under the lock
    var isPaused: Bool { queueLock.withLock { mirror.paused } }
    func pause() { control { $0.pause() } }
    func resume() { control { $0.resume() } }
    func restartTimeline() { control { $0.restartTimeline() } }
    func step(by delta: Int) throws { try control(moves: true) { try $0.step(by: delta) } }
    func seek(toFrame index: Int) throws { try control(moves: true) { try $0.seek(toFrame: index) } }
    var loop: Bool {
        get { queueLock.withLock { mirror.loop } }
        set { control { p in p.loop = newValue; let v = p.loop; queueLock.withLock { mirror.loop = v } } }
    }
    var fps: Double? {
        get { queueLock.withLock { mirror.fps } }
        set { control { p in p.fps = newValue; let v = p.fps; queueLock.withLock { mirror.fps = v } } }
    }
    var frameCount: Int? { queueLock.withLock { mirror.count } }
    /// The index of the frame last taken (or the source's, right after a step or seek).
    var currentIndex: Int { queueLock.withLock { mirror.shownIndex } }
    var isFinished: Bool { sourceLock.withLock { sourcePlayback?.isFinished ?? false } }
}
