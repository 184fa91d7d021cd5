import CVulkan
import Foundation
import GPUKit

/// Submits a recorded frame and presents it (`vkQueueSubmit`, `vkQueuePresentKHR`) on a thread
/// of its own, so the loop can make the next frame meanwhile. On lavapipe both are CPU work the
/// loop need not wait for: the submit transforms and bins the frame's draws (ImGui's panel is
/// thousands of vertices), and the present waits for the frame's commands to finish (the
/// software WSI does) and then hands the whole image to the X server (`xcb_put_image`, 3.6 MB at
/// 1280×720). `start` hands a frame over and returns at once; `finish` waits for it and gives
/// its result. One frame at a time: `FrameSync` finishes the last one before it waits for the
/// frame's fence, acquires (a swapchain is externally synchronized), records or presents again,
/// and before the swapchain is made again. The queue is taken under `GPUContext`'s lock.
///
/// Nothing is allocated per frame by this code (two semaphores, stored fields, the submit closure
/// made once); the thread
/// counts its own allocations and the driver's as the loop does (`AllocationCounter`), and
/// `counts` gives them to the loop's statistics, which add them to the frame that finished the
/// present. `DEPTHLENS_PRESENT_THREAD=0` submits and presents on the loop's thread instead (A/B runs).
///
/// `@unchecked Sendable`: ownership passes between the loop and the present thread through the
/// two semaphores: the loop writes `frame` and `stopping` before `go.signal()`, the thread reads
/// them after `go.wait()` and writes `result`, `submitError` and `threadCounts` before
/// `done.signal()`, which the loop reads after `done.wait()` (`finish`). `submit` and `context`
/// are `let`s; `pending`, `started`, `onThread` and `finishedCounts` belong to the loop. One frame
/// is in flight at a time (`start` preconditions it), so the two never touch a field at once.
final class FramePresenter: @unchecked Sendable {
    /// Whether presents run on the thread (`DEPTHLENS_PRESENT_THREAD=0`: on the caller's).
    static let threaded = ProcessInfo.processInfo.environment["DEPTHLENS_PRESENT_THREAD"] != "0"

    private let context: GPUContext
    /// Submits the recorded frame, signaling `wait` when it is done (`FrameSync`'s, made once).
    private let submit: (_ transfer: Bool, _ signal: VkSemaphore) throws -> Void
    private let go = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)
    // Written by the loop before `go.signal()`, read by the thread after `go.wait()`, and the
    // other way round for `result` and `threadCounts` with `done`: the semaphores order them.
    private var frame: Handover?
    private var submitError: Error?
    private var stopping = false
    private var result = VK_SUCCESS
    private var threadCounts: ViewerStats.Counts = (0, 0)
    /// `threadCounts` as of the last `finish` (the loop's own copy).
    private var finishedCounts: ViewerStats.Counts = (0, 0)
    /// A present was handed over and not finished yet (the loop's own).
    private(set) var pending = false
    private var started = false
    /// Whether the frame handed over last went to the thread (`start`'s `threaded`).
    private var onThread = false

    /// The frame handed over: its swapchain and image, whether a copy writes the image, and the
    /// semaphore its submit signals and its present waits for.
    private struct Handover {
        var swapchain: VkSwapchainKHR
        var image: UInt32
        var transfer: Bool
        var wait: VkSemaphore
    }

    init(context: GPUContext, submit: @escaping (_ transfer: Bool, _ signal: VkSemaphore) throws -> Void) {
        self.context = context
        self.submit = submit
    }

    /// The thread's allocations so far (own, driver), as of the last finished present.
    var counts: ViewerStats.Counts { finishedCounts }

    /// Submits the recorded frame (`transfer`: a copy writes the image), signaling `wait` when it
    /// is done, and presents `image` of `swapchain` once `wait` is signaled: on the thread (the result comes with
    /// `finish`), or here when not threaded (then `finish` returns it).
    /// `threaded` false runs this frame here (a GPU-drawn point list: its progressive stride is
    /// measured frame to frame, which a frame still in flight would make one frame late).
    func start(_ swapchain: VkSwapchainKHR, image: UInt32, transfer: Bool, wait: VkSemaphore, threaded: Bool = FramePresenter.threaded) {
        precondition(!pending, "a frame is still being submitted and presented")
        frame = Handover(swapchain: swapchain, image: image, transfer: transfer, wait: wait)
        pending = true
        onThread = threaded
        if threaded {
            if !started { started = true; startThread() }
            go.signal()
        } else {
            run()
        }
    }

    /// Waits for the frame handed over last (if any): throws its submit's error, else returns its
    /// present's result (nil: none pending).
    func finish() throws -> VkResult? {
        guard pending else { return nil }
        if onThread {
            done.wait()
            finishedCounts = threadCounts
        }
        pending = false
        if let e = submitError { submitError = nil; throw e }
        return result
    }

    /// The submit, then (when it worked) the present.
    private func run() {
        do {
            guard let f = frame else { return }
            try submit(f.transfer, f.wait)
            result = context.present(f.swapchain, image: f.image, wait: f.wait)
        } catch {
            submitError = error
        }
    }

    /// Ends the thread (after finishing a pending present).
    func stop() {
        _ = try? finish()
        guard started else { return }
        stopping = true
        go.signal()
        done.wait()
        started = false
    }

    private func startThread() {
        let t = Thread { [self] in
            AllocationCounter.counting(true)
            while true {
                go.wait()
                if stopping { done.signal(); return }
                run()
                threadCounts = AllocationCounter.counts
                done.signal()
            }
        }
        t.name = "depthlens present"
        t.start()
    }
}
