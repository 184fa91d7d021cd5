import Foundation
import Synchronization

/// Work the frame loop hands off and picks up later, on one thread of its own: the viewer's one
/// "thread + request slot + poll" (the hover's point map, a PLY read from the panel, the thermal
/// zones, a measurement, the Quality section's metrics, an export). The loop `submit`s a request
/// and returns at once; one request waits at a time, and a newer one replaces it (the latest
/// request wins: the loop never queues work it no longer wants); the thread runs the waiting
/// request with `work`, and `poll` hands the newest finished output to the loop once. `cancel`
/// drops the waiting request and asks the running one to stop (`Cancellation.isCancelled`; what
/// the work then returns is still delivered). The thread starts with the first request, and the
/// worker's `deinit` stops it and joins it: it cancels the running request, drops the waiting
/// one, and returns once the thread has ended, so no work runs after the owner is gone.
///
/// Nothing is allocated per request: the thread and `work` are made once, and a request and an
/// output move through a `Mutex`-guarded slot (`submit`, `poll` and `cancel` take it for a few
/// instructions; none waits for the work). A request that owns storage (an array) hands it to the
/// thread without a copy when the caller gives up its own reference (`consume`).
///
/// `Sendable`, checked: every field is a `let` of a Sendable type; the slots live in the `Mutex`.
/// `work` must not hold the worker's owner (the owner's `deinit` would then run on the thread and
/// wait for itself).
final class LatestRequestWorker<Request: Sendable, Output: Sendable>: Sendable {
    /// What a running request sees of `cancel` (and of the worker's `deinit`).
    struct Cancellation: Sendable {
        fileprivate let core: Core
        /// True once `cancel` (or `deinit`) asked the running request to stop.
        var isCancelled: Bool { core.state.withLock { $0.cancelled } }
    }

    fileprivate final class Core: Sendable {
        struct State {
            var request: Request?
            var output: Output?
            /// A request is being worked on.
            var running = false
            /// The running request was asked to stop.
            var cancelled = false
            var started = false
            var stopping = false
            /// Requests that ran to their end.
            var completed = 0
            /// Callers in `waitUntilIdle`, each woken once by `idle` when the worker goes idle.
            var idleWaiters = 0
        }

        let state = Mutex(State())
        /// Signaled by `submit` and `deinit`: the thread looks at the slot again.
        let wake = DispatchSemaphore(value: 0)
        /// Signaled once per waiter when the thread goes idle (a hint: waiters look at the state again).
        let idle = DispatchSemaphore(value: 0)
        /// Signaled by the thread as it ends (`deinit` waits for it).
        let exited = DispatchSemaphore(value: 0)
        let work: @Sendable (consuming Request, Cancellation) -> Output

        init(work: @escaping @Sendable (consuming Request, Cancellation) -> Output) { self.work = work }

        func run() {
            let cancellation = Cancellation(core: self)
            while true {
                wake.wait()
                let next = state.withLock { s -> (stop: Bool, request: Request?) in
                    if s.stopping { return (true, nil) }
                    guard let r = s.request.take() else { return (false, nil) }
                    s.running = true
                    s.cancelled = false
                    return (false, r)
                }
                if next.stop { break }
                guard let request = next.request else { continue }
                let output = work(consume request, cancellation)
                let waiters = state.withLock { s -> Int in
                    s.output = output
                    s.running = false
                    s.completed += 1
                    guard s.request == nil else { return 0 }
                    defer { s.idleWaiters = 0 }
                    return s.idleWaiters
                }
                for _ in 0..<waiters { idle.signal() }
            }
            let waiters = state.withLock { s -> Int in defer { s.idleWaiters = 0 }; return s.idleWaiters }
            for _ in 0..<waiters { idle.signal() }
            exited.signal()
        }
    }

    private let core: Core
    private let name: String
    private let qualityOfService: QualityOfService

    /// `work` runs each request on the worker's thread (named `name`), made when the first request comes.
    init(name: String, qualityOfService: QualityOfService = .utility,
         work: @escaping @Sendable (consuming Request, Cancellation) -> Output) {
        core = Core(work: work)
        self.name = name
        self.qualityOfService = qualityOfService
    }

    /// Cancels the running request, drops the waiting one, and waits for the thread to end.
    deinit {
        let started = core.state.withLock { s -> Bool in
            s.stopping = true
            s.cancelled = true
            s.request = nil
            return s.started
        }
        guard started else { return }
        core.wake.signal()
        core.exited.wait()
    }

    /// Hands `request` to the thread, in place of the one waiting (if any): true when it replaced one.
    @discardableResult
    func submit(_ request: consuming Request) -> Bool {
        var slot: Request? = consume request
        let (replaced, start) = core.state.withLock { s -> (Bool, Bool) in
            let replaced = s.request != nil
            s.request = slot.take()
            defer { s.started = true }
            return (replaced, !s.started)
        }
        if start { startThread() }
        core.wake.signal()
        return replaced
    }

    /// Hands `request` to the thread only when nothing waits or runs (the output of the last one
    /// may not be polled yet); false, and nothing done, otherwise.
    func submitIfIdle(_ request: consuming Request) -> Bool {
        var slot: Request? = consume request
        let (taken, start) = core.state.withLock { s -> (Bool, Bool) in
            guard s.request == nil, !s.running else { return (false, false) }
            s.request = slot.take()
            defer { s.started = true }
            return (true, !s.started)
        }
        guard taken else { return false }
        if start { startThread() }
        core.wake.signal()
        return true
    }

    /// The newest output finished since the last call, once; nil when none.
    func poll() -> Output? { core.state.withLock { $0.output.take() } }

    /// Drops the waiting request (it never runs) and asks the running one to stop.
    func cancel() {
        core.state.withLock { s in
            s.request = nil
            if s.running { s.cancelled = true }
        }
    }

    /// A request waits or runs.
    var isBusy: Bool { core.state.withLock { $0.request != nil || $0.running } }

    /// Requests that ran to their end so far.
    var completed: Int { core.state.withLock { $0.completed } }

    /// Waits until no request waits or runs (the last output is then ready to `poll`); false
    /// when `timeout` seconds passed first (nil: no limit).
    @discardableResult
    func waitUntilIdle(timeout: Double? = nil) -> Bool {
        let deadline: DispatchTime = timeout.map { .now() + $0 } ?? .distantFuture
        while true {
            let busy = core.state.withLock { s -> Bool in
                let busy = (s.request != nil || s.running) && !s.stopping
                if busy { s.idleWaiters += 1 }
                return busy
            }
            guard busy else { return true }
            if core.idle.wait(timeout: deadline) == .timedOut {
                return !core.state.withLock { s -> Bool in
                    if s.idleWaiters > 0 { s.idleWaiters -= 1 }
                    return s.request != nil || s.running
                }
            }
        }
    }

    private func startThread() {
        let t = Thread { [core] in core.run() }
        t.name = name
        t.qualityOfService = qualityOfService
        t.start()
    }
}
