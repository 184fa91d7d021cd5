import Capture
import DepthKit
import Foundation

/// A PLY opened from the window (the panel's source field), read on `PLYInput`'s worker
/// (`LatestRequestWorker`), so the window stays responsive: `SourceSession` keeps showing the old
/// source, draws a progress line, and swaps the cloud in when the read is done; Esc cancels it
/// (`PLYLoadControl`). A class: the read's outcome comes back with the job it belongs to, and an
/// outcome of a job replaced since is dropped.
final class PLYLoadJob: Sendable {
    /// The `ply:` source and its file.
    let spec: SourceSpec
    let path: String
    let control = PLYLoadControl()

    init(spec: SourceSpec, path: String) {
        self.spec = spec
        self.path = path
    }

    /// Reads the file (on the worker's thread) under `control`.
    func read() -> Result<PLYContents, Error> { Result { try PLYReader.load(path, control: control) } }

    /// "loading FILE: 45% of 120.0 MB (Esc cancels)".
    static func line(_ name: String, done: Int, total: Int) -> String {
        let pct = total > 0 ? Double(done) * 100 / Double(total) : 0
        return "loading \(name): " + String(format: "%.0f%% of %.1f MB (Esc cancels)", pct, Double(total) / 1e6)
    }
}
