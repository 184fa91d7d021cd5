import Foundation
import Synchronization

public enum BufferPoolError: Error, CustomStringConvertible, Equatable {
    case exhausted(format: FrameFormat, inUse: Int, threshold: Int)

    public var description: String {
        switch self {
        case let .exhausted(format, inUse, threshold):
            return "buffer pool for \(format) exhausted: \(inUse) buffers in use, threshold \(threshold)"
        }
    }
}

/// A pool of same-sized `PixelBuffer`s, the counterpart of CVPixelBufferPool.
///
/// It preallocates `outputRetainedBufferCountHint` buffers and hands free ones out in turn. A
/// buffer is free again as soon as only the pool holds it, so renderers hand buffers out and get
/// them back without bookkeeping. When
/// every buffer is in use the pool grows up to `allocationThreshold` and then reports exhaustion
/// instead of growing without bound.
///
/// `Sendable`, checked: `buffers` and `next` live in a `Mutex` (the uniqueness test that makes a
/// buffer free is made under it too); `format` and `allocationThreshold` are `let`s.
public final class BufferPool: Sendable {
    public let format: FrameFormat
    public let allocationThreshold: Int
    private struct State {
        var buffers: [PixelBuffer]
        /// Where the search for a free buffer starts.
        var next = 0
    }
    private let state: Mutex<State>

    /// - Parameters:
    ///   - outputRetainedBufferCountHint: buffers the consumer may hold at once; preallocated.
    ///   - allocationThreshold: the most buffers this pool will ever allocate (≥ the hint).
    public init(format: FrameFormat, outputRetainedBufferCountHint: Int, allocationThreshold: Int? = nil) {
        precondition(outputRetainedBufferCountHint >= 1)
        self.format = format
        let threshold = max(allocationThreshold ?? outputRetainedBufferCountHint * 2, outputRetainedBufferCountHint)
        self.allocationThreshold = threshold
        var buffers = (0..<outputRetainedBufferCountHint).map { _ in
            PixelBuffer(width: format.width, height: format.height, format: format.pixelFormat)
        }
        buffers.reserveCapacity(threshold)
        state = Mutex(State(buffers: buffers))
    }

    /// Buffers allocated so far.
    public var allocatedCount: Int { state.withLock { $0.buffers.count } }

    /// Buffers not held by anyone but the pool.
    public var freeCount: Int {
        state.withLock { s in
            var n = 0
            for i in s.buffers.indices where isKnownUniquelyReferenced(&s.buffers[i]) { n += 1 }
            return n
        }
    }

    /// A buffer nobody else holds; allocates one if all are in use and the threshold allows.
    ///
    /// Free buffers are handed out in turn, starting after the last one handed out, so every
    /// buffer is used within the first few frames: a consumer that makes per-buffer resources (the
    /// texture cache's images) makes them all during warm-up, not when a rare peak first reaches
    /// a buffer that always stayed free.
    public func makeBuffer() throws -> PixelBuffer {
        try state.withLock { s throws(BufferPoolError) -> PixelBuffer in
            let n = s.buffers.count
            for k in 0..<n {
                let i = (s.next + k) % n
                if isKnownUniquelyReferenced(&s.buffers[i]) {
                    s.next = (i + 1) % n
                    return s.buffers[i]
                }
            }
            guard n < allocationThreshold else {
                throw BufferPoolError.exhausted(format: format, inUse: n, threshold: allocationThreshold)
            }
            let b = PixelBuffer(width: format.width, height: format.height, format: format.pixelFormat)
            s.buffers.append(b)
            s.next = 0
            return b
        }
    }
}
