import Foundation

/// Progress and cancellation of a PLY load running on another thread (the viewer's in-window loads):
/// the loading thread reports bytes read after every chunk; any thread may read them or cancel. A
/// cancelled load ends at its next chunk with the one-line error "FILE: load cancelled", and nothing
/// it read is kept.
public final class PLYLoadControl: Sendable {
    private struct State { var cancelled = false, done = 0, total = 0 }
    private let state = Locked(State())

    public init() {}

    public func cancel() { state.withLock { $0.cancelled = true } }
    public var isCancelled: Bool { state.current.cancelled }
    /// Bytes read so far and the file's size (0, 0 before the first chunk).
    public var progress: (done: Int, total: Int) { state.withLock { ($0.done, $0.total) } }

    fileprivate func report(_ d: Int, _ t: Int) { state.withLock { $0.done = d; $0.total = t } }
}

extension PLYReader {
    /// `load(_:progress:)` under `control`: progress goes to it, and `control.cancel()` from any
    /// thread stops the load before its next chunk (`DepthKitError.file(path, "load cancelled")`).
    public static func load(_ path: String, control: PLYLoadControl) throws -> PLYContents {
        try load(path, chunkSize: defaultChunkSize, progress: { control.report($0, $1) }, isCancelled: { control.isCancelled })
    }
}
