/// Sources that can deliver depth less often than color (the seed drops the depth stream to
/// 15 fps when the device runs hot). Frames in between carry the previous depth.
public protocol DepthRateLimiting: AnyObject {
    /// Most depth frames per second; nil delivers depth with every frame.
    var depthRateLimit: Double? { get set }
}

/// Decides, by frame timestamp, which frames get fresh depth under a rate limit. A frame is
/// admitted when 90% of the limit's interval has passed since the last admitted one (so a 30 fps
/// stream with a little jitter keeps every second depth frame at 15 fps), or when time went
/// backwards (seek, loop).
public struct DepthRateGate: Sendable {
    public var limit: Double? {
        didSet { if limit != oldValue { last = nil } }
    }
    private var last: Double?

    public init(limit: Double? = nil) { self.limit = limit }

    public mutating func admits(timestamp t: Double) -> Bool {
        guard let limit, limit > 0, limit.isFinite else { last = t; return true }
        if let l = last, t >= l, t - l < 0.9 / limit { return false }
        last = t
        return true
    }

    public mutating func reset() { last = nil }
}
