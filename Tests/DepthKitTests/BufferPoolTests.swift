import XCTest
@testable import DepthKit

final class BufferPoolTests: XCTestCase {
    func testPreallocatesHintAndReusesFreedBuffers() throws {
        let f = FrameFormat(width: 8, height: 4, pixelFormat: .rgba8)
        let pool = BufferPool(format: f, outputRetainedBufferCountHint: 2, allocationThreshold: 3)
        XCTAssertEqual(pool.allocatedCount, 2)
        var a: PixelBuffer? = try pool.makeBuffer()
        let id = ObjectIdentifier(a!)
        a = nil
        let b = try pool.makeBuffer()
        XCTAssertNotEqual(ObjectIdentifier(b), id, "free buffers are handed out in turn")
        let c = try pool.makeBuffer()
        XCTAssertEqual(ObjectIdentifier(c), id, "a released buffer comes back")
        XCTAssertEqual(pool.allocatedCount, 2)
        XCTAssertTrue(b !== c)
    }

    /// Every preallocated buffer is in use within `hint` frames even when the consumer lets each
    /// one go before asking for the next (so per-buffer resources are all made during warm-up).
    func testHandsEveryBufferOutInTurn() throws {
        let f = FrameFormat(width: 2, height: 2, pixelFormat: .gray8)
        let pool = BufferPool(format: f, outputRetainedBufferCountHint: 4)
        var seen = Set<ObjectIdentifier>()
        for _ in 0..<8 { seen.insert(ObjectIdentifier(try pool.makeBuffer())) }
        XCTAssertEqual(seen.count, 4)
        XCTAssertEqual(pool.allocatedCount, 4, "no growth while buffers come back")
    }

    func testReportsExhaustionInsteadOfGrowing() throws {
        let f = FrameFormat(width: 2, height: 2, pixelFormat: .gray8)
        let pool = BufferPool(format: f, outputRetainedBufferCountHint: 1, allocationThreshold: 2)
        let held = try [pool.makeBuffer(), pool.makeBuffer()]
        XCTAssertEqual(pool.allocatedCount, 2)
        XCTAssertThrowsError(try pool.makeBuffer()) { e in
            guard case BufferPoolError.exhausted(_, let inUse, let threshold) = e else { return XCTFail("\(e)") }
            XCTAssertEqual(inUse, 2); XCTAssertEqual(threshold, 2)
        }
        XCTAssertEqual(held.count, 2)
    }

    func testBuffersArePageAligned() {
        let b = PixelBuffer(width: 3, height: 3, format: .rgb8)
        XCTAssertEqual(Int(bitPattern: b.baseAddress) % PixelBuffer.alignment, 0)
        XCTAssertEqual(b.allocationSize % PixelBuffer.alignment, 0)
    }
}

final class PixelStorageTests: XCTestCase {
    func testStorageOutlivesItsBufferWhileSomeoneHoldsIt() {
        var freed = false
        let raw = UnsafeMutableRawPointer.allocate(byteCount: 16, alignment: 16)
        var buffer: PixelBuffer? = PixelBuffer(wrapping: raw, width: 4, height: 1, bytesPerRow: 16, format: .rgba8,
                                               deallocate: { p in p.deallocate(); freed = true })
        var held: PixelStorage? = buffer!.storage   // what a GPU import holds
        buffer = nil
        XCTAssertFalse(freed, "pages stay while imported")
        XCTAssertEqual(held?.size, 16)
        held = nil
        XCTAssertTrue(freed)
    }
}
