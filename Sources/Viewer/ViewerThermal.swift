import Capture
import Foundation

extension ViewerApp {
    /// Once a second: reads the thermal zones (a few small sysfs files); at serious or worse warns
    /// in the window and lowers the source's depth rate to 15 fps as the seed does; back below
    /// serious, restores it. Unreadable or absent zones are no warning: the panel's Status block
    /// says so (and `--log-ui` once), the status line reads "thermal unknown".
    func watchThermal(now: Double) {
        guard let (reading, problems) = thermal.poll(now: now) else { return }
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
