import DepthKit

/// What a recorded stream holds.
public enum StreamKind: String, Sendable, CaseIterable {
    case color, depth, ir
}

/// One stream of a recording on its own clock: every frame it holds, each with its own timestamp.
public struct RecordedStream: Sendable, Equatable {
    public var kind: StreamKind
    /// Where the recording keeps it: a bag topic, an mkv track title, a TUM index file.
    public var name: String
    public var width: Int
    public var height: Int
    /// Each frame's timestamp in seconds, on the recording's own clock (the stamp `FrameSet.timestamp`
    /// carries for frames this stream leads), in the stream's order.
    public var timestamps: [Double]
    public var frameCount: Int { timestamps.count }

    public init(kind: StreamKind, name: String, width: Int, height: Int, timestamps: [Double]) {
        self.kind = kind; self.name = name; self.width = width; self.height = height; self.timestamps = timestamps
    }
}

/// One decoded frame of a stream: color and IR as images (rgba8, gray8 or gray16), depth in meters.
public enum StreamFrame: Sendable {
    case image(PixelBuffer)
    case depth(DepthData)
}

/// One frame of a stream read from the recording but not decoded yet (`RecordedStreams.payload`):
/// `decode` needs nothing of the source, so any thread may run it, and several frames of one
/// stream may be decoded on several threads at once (`convert` does). It gives what `decodeFrame`
/// gives for that frame, byte for byte, and throws what it throws (`CaptureError.file` naming the
/// recording).
public struct StreamPayload: Sendable {
    public let decode: @Sendable () throws -> StreamFrame

    public init(decode: @escaping @Sendable () throws -> StreamFrame) { self.decode = decode }
}

/// The capability of a recorded source whose streams can be read each on its own clock, frame by
/// frame, without the pairing playback does (`convert` writes every frame of every stream once,
/// under its own stamp, and pairs them only in associations.txt). `BagSource`, `MKVSource`,
/// `TUMSource` and `ROS2Source` offer it; consumers ask for it with the capability accessor
/// `FrameSource.recordedStreams` (nil for other sources), never by a cast. Valid after `start()`;
/// like the rest of a source, used from one thread.
public protocol RecordedStreams: AnyObject {
    /// The streams the recording holds (at most one of each kind: the ones playback uses). The
    /// first call may read the whole index (a bag's header stamps).
    func streams() throws -> [RecordedStream]
    /// The timestamp of each frame playback numbers (`PlaybackControl` frame i, the viewer's frame
    /// N): `convert --frames A:B` selects, of every stream, the frames nearest in time to those.
    func playbackTimestamps() throws -> [Double]
    /// Decodes frame `index` of stream `stream` (an index into `streams()`), without
    /// moving playback. Throws `CaptureError.file` naming the recording for a frame that cannot be read.
    func decodeFrame(_ index: Int, ofStream stream: Int) throws -> StreamFrame
    /// Frame `index` of `stream` read (what the recording stores for it: a packet, a message, a
    /// file's name) but not decoded, on the source's thread and in the order `convert` wants the
    /// frames; nil where the stream's frames depend on each other (inter-coded video), which
    /// `decodeFrame` then decodes in order. Throws as `decodeFrame` does for a frame that cannot be read.
    func payload(_ index: Int, ofStream stream: Int) throws -> StreamPayload?
}

public extension RecordedStreams {
    /// No payloads: every frame through `decodeFrame`.
    func payload(_ index: Int, ofStream stream: Int) throws -> StreamPayload? { nil }

    /// The first stream of `kind`, as an index into `streams()`.
    func streamIndex(of kind: StreamKind) throws -> Int? {
        try streams().firstIndex { $0.kind == kind }
    }
}

/// The index in `times` (sorted ascending) nearest `t`; the earlier one on a tie; nil when empty.
public func nearestIndex(in times: [Double], to t: Double) -> Int? {
    guard !times.isEmpty else { return nil }
    var lo = 0, hi = times.count
    while lo < hi {
        let mid = (lo + hi) / 2
        if times[mid] < t { lo = mid + 1 } else { hi = mid }
    }
    if lo == times.count { return times.count - 1 }
    if lo == 0 { return 0 }
    return t - times[lo - 1] <= times[lo] - t ? lo - 1 : lo
}
