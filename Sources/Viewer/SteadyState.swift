/// The run's steady state, printed once at the end with `--stats`: the render loop's heap
/// allocations per frame (depthlens' own and the driver's, see `AllocationCounter`) and the
/// resident set size from the end of warm-up to the last frame. Warm-up is the first `warmUp`
/// frames or the first half of a shorter run (first frames create pipelines, textures, the auto
/// backend choice, ImGui's fonts and buffers). With `DEPTHLENS_ALLOC_TRACE=K` the first K
/// allocations after warm-up print their backtraces to stderr.
struct SteadyState {
    typealias Counts = (own: UInt64, driver: UInt64)
    var warmUp = 200
    private var start: (frame: Int, allocations: Counts, rss: Double)?
    private var worst: Counts = (0, 0)
    /// Frames after warm-up in which depthlens' own code allocated at all.
    private var ownFrames = 0
    private var last: Counts = (0, 0)

    /// After each frame: `frame` frames shown so far, `allocations` the loop's total counts: the
    /// loop thread's and, of them, `offThread` the present thread's (`FramePresenter`).
    mutating func frameDone(frame: Int, allocations: Counts, offThread: Counts = (0, 0)) {
        var seen = allocations
        defer { last = seen }
        if let start, frame > start.frame {
            worst = (max(worst.own, allocations.own &- last.own), max(worst.driver, allocations.driver &- last.driver))
            if allocations.own != last.own { ownFrames += 1 }
        } else if frame == warmUp {
            // The counts are taken after what this measurement itself allocates, so it does not show
            // up as the next frame's: `traceLimit` is a lazy static whose first read builds the
            // environment dictionary (about 120 allocations, once).
            let traceLimit = AllocationCounter.traceLimit
            let rss = AllocationCounter.residentMiB()
            let loop = AllocationCounter.counts
            let now = (loop.own &+ offThread.own, loop.driver &+ offThread.driver)
            start = (frame, now, rss)
            seen = now
            if traceLimit > 0 { AllocationCounter.trace(traceLimit) }
        }
    }

    /// "steady state: frames 10000 after 200 warm-up, own allocations/frame 0.00 (worst frame 0,
    /// frames with any 0), driver allocations/frame 31.00 (worst frame 35), rss 180.1 -> 180.3 MiB (+0.2)".
    func line(frames: Int, allocations: Counts) -> String? {
        guard let start, frames > start.frame else {
            return "steady state: only \(frames) frames, fewer than the \(warmUp) of warm-up"
        }
        let n = Double(frames - start.frame)
        let rss = AllocationCounter.residentMiB()
        return "steady state: frames \(frames) after \(start.frame) warm-up, "
            + String(format: "own allocations/frame %.2f (worst frame %llu, frames with any %d), driver allocations/frame %.2f (worst frame %llu), ",
                     Double(allocations.own &- start.allocations.own) / n, worst.own, ownFrames,
                     Double(allocations.driver &- start.allocations.driver) / n, worst.driver)
            + String(format: "rss %.2f -> %.2f MiB (%+.2f)", start.rss, rss, rss - start.rss)
            // Unoptimized Swift allocates where optimized code does not (array literals, unspecialized
            // generics): zero own allocations is a property of the optimized build.
            + buildSuffix
    }
}

#if DEBUG
private let buildSuffix = ", debug build"
#else
private let buildSuffix = ", optimized build"
#endif
