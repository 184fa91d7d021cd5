import XCTest
import Foundation
@testable import GPUKit
import CVulkan

/// `CommandStream` as the window uses it (`FrameSync`): one frame in flight with `submit` and
/// `wait`, semaphores between submits, and the intervals between N timestamps.
final class CommandStreamTests: GPUTestCase {
    func testWaitWithNothingInFlightDoesNotBlock() throws {
        let stream = try CommandStream(context: context, timestamps: 4)
        XCTAssertFalse(stream.inFlight)
        XCTAssertFalse(try stream.wait(), "nothing was submitted")
    }

    func testSubmitWaitAndTimestampIntervals() throws {
        let stream = try CommandStream(context: context, timestamps: 4)
        XCTAssertEqual(stream.timestampCount, context.timestampPeriod == nil ? 0 : 4)
        for _ in 0..<3 {   // the same buffer, fence and queries, frame after frame
            _ = try stream.begin(hostBarrier: false)
            for slot in 0..<4 { stream.timestamp(UInt32(slot)) }
            stream.timestamp(4)   // past the pool: ignored (validation would fail the test otherwise)
            try stream.end()
            try stream.submit()
            XCTAssertTrue(stream.inFlight)
            XCTAssertTrue(try stream.wait())
            XCTAssertFalse(stream.inFlight)
            var seen: [Int] = []
            stream.timestampIntervals(count: 4) { i, ms in
                seen.append(i)
                XCTAssertTrue(ms.isFinite && ms >= 0, "interval \(i): \(ms) ms")
            }
            XCTAssertEqual(seen, context.timestampPeriod == nil ? [] : [1, 2, 3])
            var beyond = 0
            stream.timestampIntervals(count: 5) { _, _ in beyond += 1 }
            XCTAssertEqual(beyond, 0, "more timestamps than the pool holds are not read")
        }
    }

    /// A second submit waits on a semaphore the first signals (the window's acquire → render →
    /// present chain, without a surface); both go through `GPUContext.submit`'s queue lock.
    func testSemaphoreChainsTwoSubmits() throws {
        let first = try CommandStream(context: context), second = try CommandStream(context: context)
        let semaphore = try Commands.semaphore(context)
        defer { vkDestroySemaphore(context.device, semaphore, nil) }
        for _ in 0..<2 {
            _ = try first.begin()
            try first.end()
            try first.submit(signal: semaphore)
            _ = try second.begin()
            try second.end()
            try second.submit(wait: semaphore, waitStages: VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT.rawValue)
            XCTAssertTrue(try second.wait())
            XCTAssertTrue(try first.wait())
        }
    }
}
