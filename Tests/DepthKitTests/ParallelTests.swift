import CDepthKit
import Foundation
import XCTest
@testable import DepthKit
import TestSupport

/// The CPU kernels' worker pool (`parallelFor`, `parallelBands`): every index runs once, calls
/// from two threads at once and calls from inside a band both finish, and the bands cover the rows.
final class ParallelTests: XCTestCase {
    func testEveryIndexRunsExactlyOnce() {
        for count in [0, 1, 2, 3, 7, 64, 1000] {
            let hits = UnsafeMutablePointer<Int32>.allocate(capacity: max(count, 1))
            hits.initialize(repeating: 0, count: max(count, 1))
            defer { hits.deallocate() }
            for _ in 0..<20 {
                parallelFor(count) { i in hits[i] += 1 }   // each index is one band's alone
            }
            for i in 0..<count { XCTAssertEqual(hits[i], 20, "index \(i) of \(count)") }
        }
    }

    /// Jobs one after another (the workers still spinning from the last one) and jobs after a
    /// pause longer than the spin (the workers asleep on the condition variable): each runs every
    /// index exactly once, and none is lost between a worker's spin and its sleep.
    func testBackToBackAndSpacedJobsRunEveryIndexOnce() {
        let jobs = 3000, bands = 8
        let hits = UnsafeMutablePointer<Int32>.allocate(capacity: jobs * bands)
        hits.initialize(repeating: 0, count: jobs * bands)
        defer { hits.deallocate() }
        for job in 0..<jobs {
            if job % 50 == 0 { usleep(job % 100 == 0 ? 300 : 90) }   // past the 100 µs spin, and near its end
            parallelFor(bands) { i in hits[job * bands + i] += 1 }
        }
        for i in 0..<(jobs * bands) where hits[i] != 1 {
            XCTFail("job \(i / bands) band \(i % bands) ran \(hits[i]) times")
            break
        }
    }

    func testBandsCoverTheRowsOnce() {
        for rows in [1, 15, 16, 17, 100, 1081] {
            var seen = [Int](repeating: 0, count: rows)
            seen.withUnsafeMutableBufferPointer { s in
                parallelBands(rows) { band, r in
                    XCTAssertLessThan(band, bandCount(rows))
                    for y in r { s[y] += 1 }
                }
            }
            XCTAssertEqual(seen, [Int](repeating: 1, count: rows), "\(rows) rows")
        }
    }

    func testCallsFromTwoThreadsAndFromInsideABandFinish() {
        let total = LockedValue(0)
        let group = DispatchGroup()
        for _ in 0..<2 {
            DispatchQueue.global().async(group: group) {
                for _ in 0..<200 {
                    parallelFor(4) { _ in
                        parallelFor(3) { _ in total.withLock { $0 += 1 } }
                    }
                }
            }
        }
        XCTAssertEqual(group.wait(timeout: .now() + 60), .success, "no deadlock")
        XCTAssertEqual(total.current, 2 * 200 * 4 * 3)
        XCTAssertEqual(Int(dl_parallel_workers()), max(activeCores - 1, 0))
    }
}

