import Capture
import Foundation
import Synchronization

/// The machine's temperature, watched for the window: zones read once a second on a worker
/// (`LatestRequestWorker`, so the render loop does not allocate for it: reading them lists a
/// folder and reads small files). At serious or worse it warns in the window and asks for the
/// source's depth rate to be lowered to 15 fps as the seed does; back below serious, for the full
/// rate again. Unreadable or absent zones are no warning: the panel's Status block says so (and
/// `--log-ui` once), the status line reads "thermal unknown".
///
/// One request is in flight at a time: the loop's `poll` asks for the next look at the zones as it
/// takes the last one's answer, and the worker looks every 50 ms (`ThermalMonitor` reads the zones
/// when a second has passed), so no answer is ever replaced before the loop took it.
final class ThermalWatch {
    /// The monitor, used only by the worker's thread (behind a `Mutex` so the work closure is
    /// `Sendable`; never contended).
    private final class Zones: Sendable {
        let monitor: Mutex<ThermalMonitor>
        init(_ monitor: sending ThermalMonitor) { self.monitor = Mutex(monitor) }
    }

    private let worker: LatestRequestWorker<Void, (reading: ThermalReading, newProblems: [String])?>
    private let log: ViewerLog
    /// A look at the zones was asked for and its answer not taken yet.
    private var asked = false
    private var stopped = false
    /// The last reading taken (the loop's own).
    private(set) var reading: ThermalReading?
    /// At serious or worse.
    private(set) var hot = false

    init(log: ViewerLog, monitor: sending ThermalMonitor = ThermalMonitor()) {
        self.log = log
        let zones = Zones(monitor)
        worker = LatestRequestWorker(name: "depthlens thermal") { _, cancellation in
            Thread.sleep(forTimeInterval: 0.05)
            if cancellation.isCancelled { return nil }
            return zones.monitor.withLock { $0.poll(now: ProcessInfo.processInfo.systemUptime) }
        }
    }

    /// No more looks at the zones (the worker's `deinit` joins its thread).
    func stop() {
        stopped = true
        worker.cancel()
    }

    /// When a new reading came: the depth rate limit it asks for (nil inside: the full rate);
    /// nil when there is no new reading. The first call starts the worker.
    func poll() -> Double?? {
        guard !stopped else { return .none }
        if !asked {
            asked = true
            worker.submit(())
            return .none
        }
        guard let answer = worker.poll() else { return .none }
        worker.submit(())   // the next look
        guard let (reading, problems) = answer else { return .none }
        self.reading = reading
        for p in problems { log.ui("thermal: \(p)") }
        let hot = reading.state >= .serious
        if hot != self.hot {
            self.hot = hot
            log.ui("thermal \(reading.state.rawValue)")
            if hot {
                log.notice("thermal \(reading.summary): depth lowered to \(Int(ThermalState.reducedDepthFPS)) fps", isError: true, seconds: 10)
            } else {
                log.notice("thermal \(reading.summary): depth back to the full rate")
            }
        }
        return .some(hot ? ThermalState.reducedDepthFPS : nil)
    }

    /// The panel's lines: state and hottest zone, then what could not be read.
    var panelLines: [String] {
        guard let r = reading else { return ["thermal: not read yet"] }
        return ["thermal: \(r.summary)"] + r.problems.map { "  \($0)" }
    }

    /// The status line's thermal part ("thermal nominal"), and the persistent warning while hot.
    var status: String { "thermal \(reading?.state.rawValue ?? "unknown")" }
    var warning: String? {
        guard hot, let r = reading else { return nil }
        return "thermal \(r.summary): depth at \(Int(ThermalState.reducedDepthFPS)) fps"
    }
}
