import Capture
import Foundation

/// What the window tells people and tests: notices shown at the bottom of the window until their
/// time runs out (warnings, errors), and with `--log-ui` the `ui:` and `notice:` lines on stdout.
/// Every owner that has something to say holds the one log.
final class ViewerLog {
    struct Notice {
        let text: String
        let until: Double
        let isError: Bool
    }

    /// `--log-ui`: UI events on stdout for tests.
    let logsUI: Bool
    /// The notices shown, oldest first (at most six).
    private(set) var notices: [Notice] = []

    init(logsUI: Bool) { self.logsUI = logsUI }

    /// A line shown for `seconds` (red when `isError`), and `notice: …` with `--log-ui`.
    func notice(_ s: String, isError: Bool = false, seconds: Double = 6) {
        notices.append(Notice(text: s, until: monotonicSeconds() + seconds, isError: isError))
        if notices.count > 6 { notices.removeFirst(notices.count - 6) }
        if logsUI { print("notice: \(s)"); fflush(nil) }
    }

    /// `ui: …` with `--log-ui`.
    func ui(_ s: String) {
        if logsUI { print("ui: \(s)"); fflush(nil) }
    }

    /// `frame N` with `--log-ui`, after each shown frame: window tests wait for frames to be drawn
    /// after an event instead of sleeping a fixed time.
    func frame(_ n: Int) {
        if logsUI { print("frame \(n)"); fflush(nil) }
    }

    /// Drops the notices whose time ran out.
    func expire(now: Double) { notices.removeAll { $0.until < now } }
}
