import XCTest
@testable import Capture

final class FrameSynchronizerTests: XCTestCase {
    func testPairsNearestWithinHalfAFrameInterval() {
        var sync = FrameSynchronizer<Int>(frameInterval: 0.1)
        sync.add(1, timestamp: 1.00)
        sync.add(2, timestamp: 1.10)
        sync.add(3, timestamp: 1.20)
        XCTAssertEqual(sync.match(timestamp: 1.11), 2)     // nearest, 0.01 away
        XCTAssertEqual(sync.pendingCount, 1)               // 1 and 2 are used up
        XCTAssertNil(sync.match(timestamp: 1.26))          // 3 is 0.06 > 0.05 away: color-only
        XCTAssertEqual(sync.pendingCount, 0)               // and too old for any later color frame
        sync.add(4, timestamp: 1.30)
        XCTAssertEqual(sync.match(timestamp: 1.34), 4)     // 0.04 away
    }

    func testExactlyHalfAnIntervalMatchesAndOldFramesAreDropped() {
        var sync = FrameSynchronizer<String>(frameInterval: 0.5)
        sync.add("old", timestamp: 0.0)
        sync.add("edge", timestamp: 1.25)
        XCTAssertEqual(sync.match(timestamp: 1.0), "edge")
        XCTAssertEqual(sync.pendingCount, 0)
        XCTAssertNil(sync.match(timestamp: 2.0))
    }

    func testCapacityDropsOldest() {
        var sync = FrameSynchronizer<Int>(frameInterval: 1, capacity: 2)
        sync.add(1, timestamp: 10)
        sync.add(2, timestamp: 11)
        sync.add(3, timestamp: 12)
        XCTAssertEqual(sync.pendingCount, 2)
        XCTAssertNil(sync.match(timestamp: 10))   // 1 was dropped; 2 is a whole interval away
        XCTAssertEqual(sync.match(timestamp: 12.2), 3)
    }
}
