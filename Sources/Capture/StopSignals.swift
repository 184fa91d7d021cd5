#if canImport(Glibc)
import Glibc
#endif
import CPlatform

/// SIGINT, SIGTERM and SIGHUP — Ctrl+C, `kill`, `timeout`, systemd, a closed terminal or a
/// logout — all mean "stop": every writer (recordings, exports, convert) finishes what it has
/// written, as for Ctrl+C, and the program then exits with 128 + the signal's number. A second
/// signal while the first is pending kills at once (the default action).
public enum StopSignals {
    /// Installs the handlers (idempotent).
    public static func install() { dl_stop_signals_install() }

    /// The pending signal's number, nil while none came.
    public static var pending: Int32? {
        let s = dl_stop_signal()
        return s == 0 ? nil : s
    }

    /// Forgets a pending signal (tests).
    public static func clear() { dl_stop_signal_clear() }

    /// "SIGTERM" for 15.
    public static func name(_ signal: Int32) -> String {
        switch signal {
        case SIGINT: return "SIGINT"
        case SIGTERM: return "SIGTERM"
        case SIGHUP: return "SIGHUP"
        default: return "signal \(signal)"
        }
    }
}
