import TestSupport
import Capture
import DepthKit
import Foundation
import XCTest
@testable import Viewer

/// The source on its own thread: frames arrive without the caller asking the source, and after a
/// pause and a step the next frame taken is the stepped one (nothing stale from the queue).
final class SourcePrefetcherTests: XCTestCase {
    func next(_ p: SourcePrefetcher, timeout: Double = 10) -> FrameSet? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let f = p.take().frame { return f }
            usleep(2000)
        }
        return nil
    }

    func testFramesArriveAndStepsAreNotStale() throws {
        let source = SyntheticSource(width: 64, height: 48, fps: 200)
        try source.start()
        let p = SourcePrefetcher(source)
        defer { p.stop(); source.stop() }
        let first = try XCTUnwrap(next(p), "a frame from the source's thread")
        let second = try XCTUnwrap(next(p))
        XCTAssertGreaterThan(second.index, first.index, "newer frames keep coming")
        XCTAssertNotNil(p.playback, "the synthetic source has playback controls")

        p.pause()
        XCTAssertTrue(p.isPaused)
        usleep(50_000)
        try p.step(by: 1)
        let stepped = p.currentIndex
        let f = try XCTUnwrap(next(p), "the stepped frame arrives while paused")
        XCTAssertEqual(f.index, stepped, "the first frame after a step is the stepped one")
        usleep(50_000)
        XCTAssertNil(p.take().frame, "paused: nothing more comes")
        try p.seek(toFrame: 3)
        XCTAssertEqual(try XCTUnwrap(next(p)).index, 3)
        p.resume()
        XCTAssertFalse(p.isPaused)
        XCTAssertGreaterThan(try XCTUnwrap(next(p)).index, 3)
        p.stop()
        p.stop()   // twice is fine
    }

    /// A pause keeps the frames the source already made: what is shown after it is the frame the
    /// source stands at, so a step back shows the frame before the one on screen. (A pause that
    /// emptied the queue left the picture a frame or two behind the source, and the first step
    /// back showed the same picture again.)
    func testAStepBackAfterAPauseShowsTheFrameBeforeTheOneOnScreen() throws {
        let source = SyntheticSource(width: 64, height: 48, fps: 200)
        try source.start()
        let p = SourcePrefetcher(source)
        defer { p.stop(); source.stop() }
        var shown = try XCTUnwrap(next(p)).index
        for round in 0..<20 {
            usleep(30_000)   // the source runs ahead of what was taken: its queue is full
            p.pause()
            let deadline = Date().addingTimeInterval(0.05)
            while Date() < deadline {
                if let f = p.take().frame { shown = f.index }
                usleep(2000)
            }
            XCTAssertEqual(p.currentIndex, shown, "round \(round): the reported frame is the one shown")
            try p.step(by: -1)
            let back = try XCTUnwrap(next(p), "round \(round): the stepped frame arrives")
            XCTAssertEqual(back.index, max(shown - 1, 0), "round \(round): a step back shows the frame before the one on screen")
            shown = back.index
            p.resume()
            shown = try XCTUnwrap(next(p)).index
        }
    }

    /// A recording's timeline starts when its first frame has been drawn (taken, and the render
    /// loop back for the next): frames that fall due while the window is still starting are not
    /// played past (before, the start-up dropped the first ten frames of a 30 fps recording).
    func testTheTimelineStartsWhenTheFirstFrameHasBeenDrawn() throws {
        let source = SyntheticSource(width: 64, height: 48, fps: 20)
        try source.start()
        let p = SourcePrefetcher(source)
        defer { p.stop(); source.stop() }
        usleep(600_000)   // the window starting: 12 frames' time
        let first = try XCTUnwrap(next(p))
        XCTAssertEqual(first.index, 0, "the first frame is the recording's first")
        let second = try XCTUnwrap(next(p))
        XCTAssertLessThan(second.index, 4, "the frames after it count from when it was taken, not from when the thread started")
    }

    /// A recording's frames are taken oldest first, so a render loop that stalls for two frames'
    /// time shows both, late, instead of only the newer one.
    func testARecordingsQueuedFramesAreTakenInOrder() throws {
        let source = SyntheticSource(width: 64, height: 48, fps: 20)
        try source.start()
        let p = SourcePrefetcher(source)
        defer { p.stop(); source.stop() }
        _ = try XCTUnwrap(next(p))
        _ = try XCTUnwrap(next(p))
        usleep(400_000)   // the render loop stalls: the two-deep queue fills
        let a = try XCTUnwrap(p.take().frame)
        let b = try XCTUnwrap(p.take().frame, "the newer queued frame is still there")
        XCTAssertEqual(b.index, a.index + 1, "taken in order")
    }

    /// A source that signals its frames (a `dds:` stream) wakes the source thread when one is
    /// ready: every frame reaches the queue and the thread never sleeps to poll (before, it polled
    /// every 1 ms, a frame waiting up to that long before the viewer had it).
    func testASourceThatSignalsItsFramesIsWaitedForNotPolled() throws {
        let source = SignallingSource()
        let p = SourcePrefetcher(source)
        defer { p.stop() }
        for i in 0..<5 {
            usleep(30_000)   // the thread waits for the frame meanwhile (its 20 ms wait runs out at least once)
            source.push(index: i)
            XCTAssertEqual(try XCTUnwrap(next(p), "frame \(i) reaches the queue").index, i)
        }
        XCTAssertEqual(p.pollSleepCount, 0, "the thread waited on the source's signal, never slept to poll")
        XCTAssertGreaterThanOrEqual(source.waits, 5, "the thread asked the source to wait for each frame")
    }

    /// A source that is stopped returns from its wait at once: the thread then polls (sleeps), not spins.
    func testAStoppedSignallingSourceIsPolled() throws {
        let source = SignallingSource()
        source.stop()
        let p = SourcePrefetcher(source)
        defer { p.stop() }
        let deadline = Date().addingTimeInterval(10)
        while p.pollSleepCount < 3, Date() < deadline { usleep(2000) }
        XCTAssertGreaterThanOrEqual(p.pollSleepCount, 3, "a wait that returns at once falls back to 1 ms polls")
    }
}

/// Frames pushed by the test; `waitForFrame` wakes when one is pushed (as `DDSSource`'s receive
/// thread signals a waiting consumer).
///
/// `@unchecked Sendable`: every `var` is read and written under `lock`.
private final class SignallingSource: FrameSource, FrameReadiness, @unchecked Sendable {
    let lock = NSCondition()
    private var frames: [FrameSet] = []
    private var running = true
    private var waitCount = 0
    var name: String { "signalling" }
    var intrinsics: CameraIntrinsics { .default(width: 4, height: 4) }
    var isLive: Bool { true }
    var readiness: FrameReadiness? { self }
    var waits: Int { lock.withLock { waitCount } }
    func start() throws {}
    func stop() { lock.withLock { running = false; lock.broadcast() } }
    func push(index: Int) {
        lock.withLock {
            frames.append(FrameSet(color: PixelBuffer(width: 4, height: 4, format: .rgba8), depth: nil, timestamp: Double(index), index: index))
            lock.broadcast()
        }
    }
    func nextFrame(now: Double) throws -> FrameSet? { lock.withLock { frames.isEmpty ? nil : frames.removeFirst() } }
    func waitForFrame(seconds: Double) -> Bool {
        let deadline = Date(timeIntervalSinceNow: seconds)
        lock.lock()
        defer { lock.unlock() }
        waitCount += 1
        while frames.isEmpty && running {
            guard lock.wait(until: deadline) else { break }
        }
        return !frames.isEmpty
    }
}
