import Capture
import Foundation

/// The machine's temperature, watched for the window: zones read once a second on their own
/// thread (`BackgroundThermal`, so the render loop does not allocate for it). At serious or worse
/// it warns in the window and asks for the source's depth rate to be lowered to 15 fps as the
/// seed does; back below serious, for the full rate again. Unreadable or absent zones are no
/// warning: the panel's Status block says so (and `--log-ui` once), the status line reads "thermal unknown".
final class ThermalWatch {
    private let thermal = BackgroundThermal()
    private let log: ViewerLog
    /// At serious or worse.
    private(set) var hot = false

    init(log: ViewerLog) { self.log = log }

    deinit { thermal.stop() }

    func stop() { thermal.stop() }

    /// When a new reading came: the depth rate limit it asks for (nil inside: the full rate);
    /// nil when there is no new reading.
    func poll() -> Double?? {
        guard let (reading, problems) = thermal.take() else { return .none }
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
        guard let r = thermal.reading else { return ["thermal: not read yet"] }
        return ["thermal: \(r.summary)"] + r.problems.map { "  \($0)" }
    }

    /// The status line's thermal part ("thermal nominal"), and the persistent warning while hot.
    var status: String { "thermal \(thermal.reading?.state.rawValue ?? "unknown")" }
    var warning: String? {
        guard hot, let r = thermal.reading else { return nil }
        return "thermal \(r.summary): depth at \(Int(ThermalState.reducedDepthFPS)) fps"
    }
}

/// The thermal zones read once a second on a thread of their own: reading them lists a folder and
/// reads small files, which allocates, and the render loop stays allocation-free (`--stats`). The
/// loop takes each new reading with `take()` and keeps it in `reading`.
///
/// `@unchecked Sendable`: `pending`, `stopped` and `started` are read and written under `lock`;
/// `monitor` (not Sendable) is used only by the thread once `take` started it; `reading` belongs
/// to the loop.
final class BackgroundThermal: @unchecked Sendable {
    private let monitor: ThermalMonitor
    private let lock = NSLock()
    private var pending: (reading: ThermalReading, newProblems: [String])?
    private var stopped = false
    private var started = false
    /// The last reading the loop took (the loop's own copy).
    private(set) var reading: ThermalReading?

    init(monitor: ThermalMonitor = ThermalMonitor()) { self.monitor = monitor }

    /// The newest reading since the last call and its problems not reported before; starts the
    /// thread on first use.
    func take() -> (reading: ThermalReading, newProblems: [String])? {
        lock.lock()
        if !started { started = true; startThread() }
        guard let p = pending else { lock.unlock(); return nil }
        pending = nil
        lock.unlock()
        reading = p.reading
        return p
    }

    func stop() { lock.lock(); stopped = true; lock.unlock() }

    private func startThread() {
        let t = Thread { [self] in
            while true {
                lock.lock(); let stop = stopped; lock.unlock()
                if stop { return }
                if let r = monitor.poll(now: ProcessInfo.processInfo.systemUptime) {
                    lock.lock()
                    // Problems not yet taken are kept with the newer reading.
                    let earlier = pending?.newProblems ?? []
                    pending = (r.reading, earlier + r.newProblems)
                    lock.unlock()
                }
                Thread.sleep(forTimeInterval: 0.05)
            }
        }
        t.name = "depthlens thermal"
        t.start()
    }
}
