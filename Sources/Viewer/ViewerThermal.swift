import Capture
import Foundation

extension ViewerApp {
    /// Once a second (the zones are read on `BackgroundThermal`'s thread, so the render loop does
    /// not allocate for it): at serious or worse warns
    /// in the window and lowers the source's depth rate to 15 fps as the seed does; back below
    /// serious, restores it. Unreadable or absent zones are no warning: the panel's Status block
    /// says so (and `--log-ui` once), the status line reads "thermal unknown".
    func watchThermal(now: Double) {
        guard let (reading, problems) = thermal.take() else { return }
        for p in problems { logUI("thermal: \(p)") }
        let hot = reading.state >= .serious
        let limit: Double? = hot ? ThermalState.reducedDepthFPS : nil
        if hot != thermalHot {
            thermalHot = hot
            logUI("thermal \(reading.state.rawValue)")
            if hot {
                notice("thermal \(reading.summary): depth lowered to \(Int(ThermalState.reducedDepthFPS)) fps", isError: true, seconds: 10)
            } else {
                notice("thermal \(reading.summary): depth back to the full rate")
            }
        }
        if limit != appliedDepthRateLimit { applyDepthRateLimit(limit) }
    }

    /// Sets the depth rate limit on the current source (also after a reopen); says once when the source cannot.
    func applyDepthRateLimit(_ limit: Double?) {
        appliedDepthRateLimit = limit
        let limitable = prefetcher.setDepthRateLimit(limit)
        if !limitable, limit != nil && !thermalSaidUnlimited {
            thermalSaidUnlimited = true
            notice("thermal: \(source.name) cannot lower its depth rate", isError: true)
        }
    }

    /// The panel's lines: state and hottest zone, then what could not be read.
    var thermalPanelLines: [String] {
        guard let r = thermal.reading else { return ["thermal: not read yet"] }
        return ["thermal: \(r.summary)"] + r.problems.map { "  \($0)" }
    }

    /// The status line's thermal part ("thermal nominal"), and the persistent warning while hot.
    var thermalStatus: String { "thermal \(thermal.reading?.state.rawValue ?? "unknown")" }
    var thermalWarning: String? {
        guard thermalHot, let r = thermal.reading else { return nil }
        return "thermal \(r.summary): depth at \(Int(ThermalState.reducedDepthFPS)) fps"
    }
}

/// The thermal zones read once a second on a thread of their own: reading them lists a folder and
/// reads small files, which allocates, and the render loop stays allocation-free (`--stats`). The
/// loop takes each new reading with `take()` and keeps it in `reading`.
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
