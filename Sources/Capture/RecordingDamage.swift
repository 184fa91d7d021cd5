/// A recording that says what of it could not be read — a file cut short, a chunk that does not
/// decompress — rather than hiding it behind a clean-looking frame count (issue 33: damage is
/// said). Its readable frames open and play; `info` and `convert` ask for the whole recording to
/// be checked at `start()` (`checksWholeRecording`), print `damage` and exit 1; the viewer shows
/// the same lines as notices (the source's warnings).
public protocol RecordingDamage: AnyObject {
    /// Set before `start()`: read every part of the recording once while opening (MCAP: every
    /// chunk, one at a time), so that `damage` is complete and the frame counts are those of the
    /// readable frames. Without it, opening says what it met (a file cut short; every chunk of a
    /// file without a summary, which is scanned whole anyway), and a bad chunk met later while
    /// playing is said as that frame's warning.
    var checksWholeRecording: Bool { get set }
    /// What could not be read, one line each (empty for a sound recording); after `start()`.
    var damage: [String] { get }
}
