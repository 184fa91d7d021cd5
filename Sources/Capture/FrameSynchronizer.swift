/// Pairs frames of a second stream (depth) with frames of a first (color) by nearest timestamp.
///
/// Depth frames are added as they arrive; each color frame takes the depth frame nearest in time
/// if it lies within half a frame interval, else none (the color frame is shown color-only).
/// Depth frames older than what the color stream has reached can match nothing later and are dropped.
public struct FrameSynchronizer<Payload> {
    /// Seconds between frames (1 / fps); matches must lie within half of it.
    public var frameInterval: Double
    /// Most unmatched frames kept (oldest dropped first).
    public var capacity: Int
    private(set) var pending: [(timestamp: Double, payload: Payload)] = []

    public init(frameInterval: Double, capacity: Int = 4) {
        precondition(frameInterval > 0 && capacity >= 1)
        self.frameInterval = frameInterval
        self.capacity = capacity
    }

    /// Frames waiting for a match.
    public var pendingCount: Int { pending.count }

    /// Adds a frame of the second stream.
    public mutating func add(_ payload: Payload, timestamp: Double) {
        pending.append((timestamp, payload))
        pending.sort { $0.timestamp < $1.timestamp }
        if pending.count > capacity { pending.removeFirst(pending.count - capacity) }
    }

    /// The pending frame nearest `timestamp` within `frameInterval / 2`, or nil. Frames up to the
    /// match (or too old to match this or any later timestamp) are removed.
    public mutating func match(timestamp: Double) -> Payload? {
        let tolerance = frameInterval / 2
        pending.removeAll { $0.timestamp < timestamp - tolerance }
        guard let best = pending.indices.min(by: {
            abs(pending[$0].timestamp - timestamp) < abs(pending[$1].timestamp - timestamp)
        }), abs(pending[best].timestamp - timestamp) <= tolerance else { return nil }
        let payload = pending[best].payload
        pending.removeFirst(best + 1)
        return payload
    }

    public mutating func removeAll() { pending.removeAll() }
}
