import TestSupport
import CVulkan
import Foundation
import GPUKit
import XCTest
@testable import Viewer

/// `FramePresenter` hands a frame's submit and present to its own thread and gives back what
/// happened there: the submit runs off the caller's thread with the arguments given, its error
/// comes back from `finish` (and the present is then not attempted), and the thread's heap
/// allocations are reported for the loop's statistics. A real present needs a window: the
/// window tests cover it (every window test presents through this thread).
final class FramePresenterTests: XCTestCase {
    private struct SubmitFailed: Error, Equatable { let transfer: Bool }

    func testSubmitRunsOnItsThreadAndItsErrorAndAllocationsComeBack() throws {
        guard FramePresenter.threaded else { throw XCTSkip("DEPTHLENS_PRESENT_THREAD=0 presents on the caller's thread") }
        setenv("DEPTHLENS_VALIDATION", "1", 1)
        let context = try GPUContext()
        let caller = pthread_self()
        let lock = NSLock()
        var ranOn: pthread_t?
        var signals: [VkSemaphore] = []
        var kept: [[Int]] = []
        let presenter = FramePresenter(context: context) { transfer, signal in
            // Allocates on the presenter's thread: two arrays of its own.
            let a = Array(repeating: 7, count: 1000), b = Array(repeating: 9, count: 2000)
            lock.withLock {
                ranOn = pthread_self()
                signals.append(signal)
                kept.append(a); kept.append(b)
            }
            throw SubmitFailed(transfer: transfer)
        }
        defer { presenter.stop() }
        XCTAssertNil(try presenter.finish(), "nothing handed over: nothing to finish")

        // Stand-in handles: the submit fails first, so neither is used by Vulkan.
        let swapchain = try XCTUnwrap(VkSwapchainKHR(bitPattern: 0x10))
        let semaphore = try XCTUnwrap(VkSemaphore(bitPattern: 0x20))
        let before = presenter.counts
        presenter.start(swapchain, image: 1, transfer: true, wait: semaphore)
        XCTAssertTrue(presenter.pending)
        XCTAssertThrowsError(try presenter.finish()) { e in
            XCTAssertEqual(e as? SubmitFailed, SubmitFailed(transfer: true), "the submit's own error, with the flag passed through")
        }
        XCTAssertFalse(presenter.pending)
        XCTAssertNil(try presenter.finish(), "finished once")
        lock.withLock {
            XCTAssertEqual(signals, [semaphore], "the frame signals the semaphore the present waits on")
            XCTAssertNotNil(ranOn)
            if let t = ranOn { XCTAssertEqual(pthread_equal(t, caller), 0, "submitted on the presenter's thread, not the caller's") }
        }
        let after = presenter.counts
        XCTAssertGreaterThanOrEqual(after.own &- before.own, 2, "the thread's own allocations are reported: \(before) -> \(after)")

        // A second frame runs too, with its own flag.
        presenter.start(swapchain, image: 0, transfer: false, wait: semaphore)
        XCTAssertThrowsError(try presenter.finish()) { e in XCTAssertEqual(e as? SubmitFailed, SubmitFailed(transfer: false)) }
        XCTAssertGreaterThanOrEqual(presenter.counts.own &- after.own, 2)
    }
}
