import Capture
import Foundation

/// The loop's measurements: the frames shown, each stage's milliseconds and allocations (`lap`),
/// the GPU's timestamps (from `FrameSync`), the per-second figures (`FrameStats`: the status
/// line, `--stats`) and the steady state (`SteadyState`, printed at the end with `--stats`).
final class ViewerStats {
    typealias Counts = (own: UInt64, driver: UInt64)
    /// The last second's figures.
    var perSecond: FrameStats
    private var steady = SteadyState()
    /// When the window opened (`--exit-after` counts from here).
    let startTime: Double
    private(set) var framesShown = 0
    /// The loop thread's allocation counts when this frame began, and at the last lap.
    private var frameStart: Counts = (0, 0)
    private var lapStart: Counts = (0, 0)
    private var lapTime: UInt64 = 0
    private var lastTitle = 0.0
    /// The present thread, whose allocations count as the loop's (the present was the loop's work).
    var presenter: FramePresenter?

    /// The loop thread's counts plus the present thread's as of its last finished present.
    private var counts: Counts {
        let a = AllocationCounter.counts
        guard let p = presenter?.counts else { return a }
        return (a.own &+ p.own, a.driver &+ p.driver)
    }

    init(now: Double) {
        startTime = now
        perSecond = FrameStats(now: now)
    }

    /// Whether `--exit-after` or `--exit-after-frames` is reached.
    func exitDue(_ options: ViewerOptions, now: Double) -> Bool {
        if let t = options.exitAfter, now - startTime >= t { return true }
        if let n = options.exitAfterFrames, framesShown >= n { return true }
        return false
    }

    /// At the top of the loop: the frame's allocations count from here.
    func beginFrame() { frameStart = counts }

    /// The stages' clock starts (their allocations count from the frame's start).
    func startLaps() {
        lapTime = DispatchTime.now().uptimeNanoseconds
        lapStart = frameStart
    }

    /// The time and allocations since the last lap are `stage`'s.
    func lap(_ stage: String) {
        let t = DispatchTime.now().uptimeNanoseconds, a = counts
        perSecond.add(stage: stage, ms: Double(t - lapTime) / 1e6)
        perSecond.add(stage: stage, allocations: a.own &- lapStart.own, driver: a.driver &- lapStart.driver)
        lapTime = t
        lapStart = a
    }

    /// The kernels' lap: the CPU time of each kernel, with the uploads counted as their own stage.
    func lapKernels(_ cpuTimes: [(String, Double)]) {
        var uploadMs = 0.0
        for (name, ms) in cpuTimes {
            if name == "upload" { uploadMs += ms } else { perSecond.add(kernel: name, ms: ms) }
        }
        perSecond.add(stage: "upload", ms: uploadMs)
        lap("kernels")
        perSecond.add(stage: "kernels", ms: -uploadMs)
    }

    /// A frame was presented; returns the count so far.
    @discardableResult
    func frameShown() -> Int {
        framesShown += 1
        return framesShown
    }

    /// At the end of a shown frame: its allocations and the steady state. When a new second's
    /// figures are ready, `newSecond` runs, its own allocations not counted (it measures, it is not the frame).
    func endFrame(_ newSecond: () -> Void) {
        let a = counts
        perSecond.add(allocations: a.own &- frameStart.own, driver: a.driver &- frameStart.driver)
        steady.frameDone(frame: framesShown, allocations: a, offThread: presenter?.counts ?? (0, 0))
        AllocationCounter.uncounted {
            if perSecond.frameDone(now: monotonicSeconds()) { newSecond() }
        }
    }

    /// True once a second (the window title).
    func titleDue(now: Double) -> Bool {
        guard now - lastTitle > 1 else { return false }
        lastTitle = now
        return true
    }

    /// The steady-state line for `--stats` (after the loop; counting stops here).
    func finish() -> String? {
        let a = counts
        AllocationCounter.counting(false)
        return steady.line(frames: framesShown, allocations: a)
    }
}
