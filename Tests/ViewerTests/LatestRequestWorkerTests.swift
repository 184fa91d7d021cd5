import DepthKit
import Foundation
import XCTest
@testable import Viewer

/// The viewer's one worker: a request that waits is replaced by a newer one (the latest wins),
/// `poll` hands each output over once, `cancel` drops the waiting request and stops the running
/// one, and the worker's `deinit` joins its thread, after which no request runs. The work here
/// records what it ran and, where a test needs a request to stay running, waits on a gate the test
/// opens (no test depends on timing: every wait has a generous limit and is asserted).
final class LatestRequestWorkerTests: XCTestCase {
    /// What the work saw, in order, shared with the test.
    final class Log: Sendable {
        let ran = Locked<[Int]>([])
        let sawCancel = Locked<[Int]>([])
        /// Signaled as each request starts.
        let started = DispatchSemaphore(value: 0)
        /// A negative request waits here (or for a cancel) before it ends.
        let gate = DispatchSemaphore(value: 0)
    }

    /// A worker whose request `n` records itself and returns `n * 10`; a negative `n` first waits
    /// (up to 20 s) for the gate or for a cancel.
    func makeWorker(_ log: Log) -> LatestRequestWorker<Int, Int> {
        LatestRequestWorker(name: "depthlens test worker") { (n: consuming Int, c) -> Int in
            let n = n
            log.ran.withLock { $0.append(n) }
            log.started.signal()
            if n < 0 {
                let deadline = Date().addingTimeInterval(20)
                while !c.isCancelled, Date() < deadline {
                    if log.gate.wait(timeout: .now() + 0.005) == .success { break }
                }
                if c.isCancelled { log.sawCancel.withLock { $0.append(n) } }
            }
            return n * 10
        }
    }

    func testLatestRequestWins() {
        let log = Log()
        let worker = makeWorker(log)
        worker.submit(-1)
        XCTAssertEqual(log.started.wait(timeout: .now() + 20), .success, "the first request runs")
        XCTAssertFalse(worker.submit(2), "nothing waited")
        XCTAssertTrue(worker.submit(3), "3 replaces 2, which never runs")
        XCTAssertTrue(worker.submit(4), "4 replaces 3")
        XCTAssertTrue(worker.isBusy)
        log.gate.signal()
        XCTAssertTrue(worker.waitUntilIdle(timeout: 20))
        XCTAssertEqual(log.ran.current, [-1, 4])
        XCTAssertEqual(worker.poll(), 40, "the newest output")
        XCTAssertNil(worker.poll(), "once")
        XCTAssertEqual(worker.completed, 2)
        XCTAssertFalse(worker.isBusy)
    }

    func testPollReturnsEachOutputOnce() {
        let log = Log()
        let worker = makeWorker(log)
        XCTAssertNil(worker.poll(), "nothing submitted")
        for n in 1...5 {
            worker.submit(n)
            XCTAssertTrue(worker.waitUntilIdle(timeout: 20))
            XCTAssertEqual(worker.poll(), n * 10)
            XCTAssertNil(worker.poll())
        }
        XCTAssertEqual(log.ran.current, [1, 2, 3, 4, 5])
    }

    func testSubmitIfIdleRefusesWhileARequestRuns() {
        let log = Log()
        let worker = makeWorker(log)
        XCTAssertTrue(worker.submitIfIdle(-1))
        XCTAssertEqual(log.started.wait(timeout: .now() + 20), .success)
        XCTAssertFalse(worker.submitIfIdle(2), "busy")
        log.gate.signal()
        XCTAssertTrue(worker.waitUntilIdle(timeout: 20))
        XCTAssertTrue(worker.submitIfIdle(3), "idle again (the output need not be polled)")
        XCTAssertTrue(worker.waitUntilIdle(timeout: 20))
        XCTAssertEqual(log.ran.current, [-1, 3])
        XCTAssertEqual(worker.poll(), 30)
    }

    func testCancelDropsTheWaitingRequestAndStopsTheRunningOne() {
        let log = Log()
        let worker = makeWorker(log)
        worker.submit(-1)
        XCTAssertEqual(log.started.wait(timeout: .now() + 20), .success)
        worker.submit(2)
        worker.cancel()
        XCTAssertTrue(worker.waitUntilIdle(timeout: 20))
        XCTAssertEqual(log.ran.current, [-1], "the waiting request never ran")
        XCTAssertEqual(log.sawCancel.current, [-1], "the running one saw the cancel")
        XCTAssertEqual(worker.poll(), -10, "what a cancelled request returns is still delivered")
        // A request after a cancel runs (and is not cancelled).
        worker.submit(-5)
        XCTAssertEqual(log.started.wait(timeout: .now() + 20), .success)
        log.gate.signal()
        XCTAssertTrue(worker.waitUntilIdle(timeout: 20))
        XCTAssertEqual(worker.poll(), -50)
        XCTAssertEqual(log.sawCancel.current, [-1])
    }

    func testDeinitCancelsAndJoinsAndNoWorkRunsAfterIt() {
        let log = Log()
        do {
            let worker = makeWorker(log)
            worker.submit(-1)
            XCTAssertEqual(log.started.wait(timeout: .now() + 20), .success)
            worker.submit(2)
        }
        // The worker is gone: its deinit returned only after the running request ended.
        XCTAssertEqual(log.sawCancel.current, [-1], "deinit cancelled the running request and waited for it")
        XCTAssertEqual(log.ran.current, [-1], "the waiting request never ran")
        // The thread has ended: nothing more can run (the gate opened now reaches no one).
        log.gate.signal()
        XCTAssertEqual(log.started.wait(timeout: .now() + 0.2), .timedOut)
        XCTAssertEqual(log.ran.current, [-1])
    }

    func testAWorkerNeverAskedMakesNoThreadAndEndsAtOnce() {
        let log = Log()
        do { _ = makeWorker(log) }
        XCTAssertEqual(log.ran.current, [])
    }

    /// The frame loop's side allocates nothing: submitting a request and polling an output only
    /// move values through the slot.
    func testSubmitAndPollAllocateNothing() {
        let log = Log()
        let worker = makeWorker(log)
        worker.submit(1)
        XCTAssertTrue(worker.waitUntilIdle(timeout: 20))
        _ = worker.poll()
        var outputs = 0
        let allocations = AllocationCounter.ownAllocations(running: 100) { i in
            worker.submit(i)
            if worker.poll() != nil { outputs += 1 }
            _ = worker.isBusy
        }
        XCTAssertEqual(allocations, 0, "allocations in 100 submits and polls")
        XCTAssertTrue(worker.waitUntilIdle(timeout: 20))
        XCTAssertEqual(worker.poll(), 990, "the last request ran")
        _ = outputs
    }
}
