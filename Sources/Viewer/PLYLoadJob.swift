import Capture
import DepthKit
import Foundation

/// A PLY opened from the window (the panel's source field) is read on a thread of its own, so the
/// window stays responsive: `SourceSession` keeps showing the old source, draws a progress line,
/// and swaps the cloud in when the read is done; Esc cancels it (`PLYLoadControl`).
final class PLYLoadJob: Sendable {
    /// The `ply:` source and its file.
    let spec: SourceSpec
    let path: String
    let control = PLYLoadControl()
    /// Set by the reading thread when it is done.
    private let result = Locked<Result<PLYContents, Error>?>(nil)

    init(spec: SourceSpec, path: String) {
        self.spec = spec
        self.path = path
        let t = Thread { [control, result] in
            let r = Result { try PLYReader.load(path, control: control) }
            result.withLock { $0 = r }
        }
        t.name = "depthlens ply load"
        t.start()
    }

    /// The outcome once the read ended (success, error, or cancelled), else nil.
    func take() -> Result<PLYContents, Error>? { result.current }

    /// "loading FILE: 45% of 120.0 MB (Esc cancels)".
    static func line(_ name: String, done: Int, total: Int) -> String {
        let pct = total > 0 ? Double(done) * 100 / Double(total) : 0
        return "loading \(name): " + String(format: "%.0f%% of %.1f MB (Esc cancels)", pct, Double(total) / 1e6)
    }
}
