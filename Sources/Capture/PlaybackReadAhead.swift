import Foundation

/// Frames of timed playback decoded ahead, on worker threads, by playback index: a recorded
/// source reads what the next frames need on its own thread (in file order) and hands their
/// decoding here, so two frames decode at once and before they are due (one 3840×2160 MJPEG or
/// JPEG frame takes most of a 30 fps frame's time to decode on one core). `take` gives a frame
/// begun, waiting for its worker; frames begun that playback then does not ask for (a seek, a
/// skip) are let go, and nothing is begun while paused. `MKVSource` and `ROS2Source` use it.
///
/// Used by the source's thread only (like the rest of a source); the workers touch nothing but
/// their own `Job`.
final class PlaybackReadAhead<Value: Sendable> {
    /// Frames decoded ahead of the one delivered.
    static var frames: Int { 2 }

    private var jobs: [Int: Job] = [:]
    /// Frames `take` gave (tests).
    private(set) var taken = 0

    /// Frame `i`'s decoded value, waited for, when it was begun; nil otherwise (the caller decodes it).
    func take(_ i: Int) -> Value? {
        guard let job = jobs.removeValue(forKey: i) else { return nil }
        taken += 1
        return job.wait()
    }

    /// The frames to begin after frame `i` was delivered: the next ones `clock` will ask for in
    /// timed playback (wrapping when it loops), less those begun already; frames begun that are
    /// not among them are let go. None while paused.
    func framesToBegin(after i: Int, clock: PlaybackClock) -> [Int] {
        guard !clock.paused else {
            jobs.removeAll()
            return []
        }
        var next: [Int] = []
        var j = i
        while next.count < Self.frames, let n = clock.neighbor(of: j, direction: 1), n != i, !next.contains(n) {
            next.append(n)
            j = n
        }
        jobs = jobs.filter { next.contains($0.key) }
        return next.filter { jobs[$0] == nil }
    }

    /// Starts decoding frame `i` on a worker thread.
    func begin(_ i: Int, _ work: @escaping @Sendable () -> Value) { jobs[i] = Job(work) }

    /// Lets every frame begun go (the source stopped or moved).
    func removeAll() { jobs.removeAll() }

    /// One frame being decoded on a worker thread.
    /// `@unchecked Sendable`: `value` is written once, by the worker, before it signals
    /// `finished`, and read only after waiting for that signal.
    private final class Job: @unchecked Sendable {
        private let finished = DispatchSemaphore(value: 0)
        private var value: Value?

        init(_ work: @escaping @Sendable () -> Value) {
            DispatchQueue.global(qos: .userInitiated).async {
                self.value = work()
                self.finished.signal()
            }
        }

        func wait() -> Value {
            finished.wait()
            finished.signal()
            guard let value else { preconditionFailure("a read-ahead job signalled without a value") }
            return value
        }
    }
}
