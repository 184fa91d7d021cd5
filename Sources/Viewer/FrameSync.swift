import CVulkan
import Foundation
import GPUKit

/// The window's one frame in flight: its command buffer, fence and timestamp queries (GPUKit's
/// `CommandStream`, which submits through `GPUContext.submit` under the queue lock), the
/// semaphore an acquired image is waited on and one "render finished" semaphore per swapchain
/// image. Each frame: `waitForFrame` (the previous frame's fence; its GPU timestamps go to the
/// statistics), `acquire`, `beginFrame`, `mark`s between the stages, `endFrame`,
/// `submitAndPresent` (handed to `FramePresenter`'s thread: `finishPresent` waits for it, and
/// `waitForFrame` and `acquire` do so first). `oneShot` records and runs a command buffer of its
/// own between frames (font upload, snapshot, video frame). The semaphores are destroyed on deinit, the stream's objects by it.
final class FrameSync {
    let context: GPUContext
    private let stream: CommandStream
    private let stats: ViewerStats
    /// The last present, running on its own thread while the loop makes the next frame.
    let presenter: FramePresenter
    /// The swapchain the pending present is for (its result marks it for recreation).
    private var presentingOn: Swapchain?
    private let acquireSemaphore: VkSemaphore
    /// One per swapchain image: presentation may still wait on the previous one when the next frame signals.
    private var renderDone: [VkSemaphore] = []
    /// What each timestamp of the frame in flight marks the end of ("start" for the first).
    private var labels: [String] = []
    static let timestampCount: UInt32 = 16

    init(context: GPUContext, stats: ViewerStats) throws {
        self.context = context
        self.stats = stats
        stream = try CommandStream(context: context, timestamps: Self.timestampCount)
        let acquired = try Commands.semaphore(context)
        acquireSemaphore = acquired
        // The frame waits for the acquired image at the color output stage (and at transfer when
        // a copy writes it), and signals the image's "render finished" semaphore.
        presenter = FramePresenter(context: context) { [stream] transfer, signal in
            try stream.submit(wait: acquired, waitStages: Self.waitStages(transfer: transfer), signal: signal)
        }
        stats.presenter = presenter
        labels.reserveCapacity(Int(Self.timestampCount))
    }

    deinit {
        presenter.stop()
        _ = try? stream.wait()
        context.waitIdle()   // presentation may still wait on a semaphore
        renderDone.forEach { vkDestroySemaphore(context.device, $0, nil) }
        vkDestroySemaphore(context.device, acquireSemaphore, nil)
    }

    /// Makes the "render finished" semaphores up to one per swapchain image.
    func prepare(imageCount: Int) throws {
        while renderDone.count < imageCount { renderDone.append(try Commands.semaphore(context)) }
    }

    /// Waits for the frame in flight (if any) and adds its GPU timestamps to the statistics.
    /// Vulkan: `vkWaitForFences`, `vkGetQueryPoolResults`.
    func waitForFrame() throws {
        try finishPresent()   // the frame may not be submitted yet
        guard try stream.wait() else { return }
        if labels.count >= 2 {
            stream.timestampIntervals(count: labels.count) { i, ms in stats.perSecond.add(gpu: labels[i], ms: ms) }
        }
        labels.removeAll(keepingCapacity: true)
    }

    /// The next swapchain image, its acquisition signaling the acquire semaphore; nil (and the
    /// swapchain marked for recreation) when there is none or it is out of date.
    /// Vulkan: `vkAcquireNextImageKHR`.
    func acquire(from swapchain: Swapchain) throws -> UInt32? {
        try finishPresent()
        guard let sc = swapchain.handle else { swapchain.needsRecreate = true; return nil }
        var imageIndex: UInt32 = 0
        let acquired = vkAcquireNextImageKHR(context.device, sc, UInt64.max, acquireSemaphore, nil, &imageIndex)
        if acquired == VK_ERROR_OUT_OF_DATE_KHR { swapchain.needsRecreate = true; return nil }
        try vkCheck(acquired, "vkAcquireNextImageKHR")
        if acquired == VK_SUBOPTIMAL_KHR { swapchain.needsRecreate = true }
        return imageIndex
    }

    /// Begins the frame's command buffer with its first timestamp.
    func beginFrame() throws -> VkCommandBuffer {
        let cb = try stream.begin(hostBarrier: false)
        labels.removeAll(keepingCapacity: true)
        if stream.timestampCount > 0 {
            stream.timestamp(0)
            labels.append("start")
        }
        return cb
    }

    /// A timestamp: the GPU time since the previous one is counted as `label`'s.
    func mark(_ label: String) {
        guard stream.timestampCount > 0, labels.count < Int(Self.timestampCount) - 1 else { return }
        stream.timestamp(UInt32(labels.count))
        labels.append(label)
    }

    func endFrame() throws { try stream.end() }

    /// Submits the frame and presents `image` once it rendered, both on the present thread
    /// (`FramePresenter`): returns at once, and `finishPresent` (called by `waitForFrame`,
    /// `acquire` and the next `submitAndPresent`) takes the result.
    func submitAndPresent(image: UInt32, on swapchain: Swapchain, transfer: Bool, threaded: Bool = FramePresenter.threaded) throws {
        try finishPresent()
        guard let handle = swapchain.handle else {
            // Nothing to present to: the frame is still submitted (its fence is waited for).
            try stream.submit(wait: acquireSemaphore, waitStages: Self.waitStages(transfer: transfer), signal: nil)
            swapchain.needsRecreate = true
            return
        }
        presentingOn = swapchain
        presenter.start(handle, image: image, transfer: transfer, wait: renderDone[Int(image)], threaded: threaded)
    }

    /// Where a frame waits for its acquired image: the color output stage, and transfer when a copy
    /// writes the image.
    static func waitStages(transfer: Bool) -> VkPipelineStageFlags {
        VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT.rawValue | (transfer ? VK_PIPELINE_STAGE_TRANSFER_BIT.rawValue : 0)
    }

    /// Waits for the present in flight, if any: an out-of-date or suboptimal swapchain is marked
    /// for recreation, another failure thrown.
    func finishPresent() throws {
        guard let presented = try presenter.finish() else { return }
        let swapchain = presentingOn
        presentingOn = nil
        if presented == VK_ERROR_OUT_OF_DATE_KHR || presented == VK_SUBOPTIMAL_KHR {
            swapchain?.needsRecreate = true
        } else {
            try vkCheck(presented, "vkQueuePresentKHR")
        }
    }

    /// Records `body` into the command buffer, submits it and waits (font upload, snapshot, video).
    func oneShot(_ body: (VkCommandBuffer) throws -> Void) throws {
        try waitForFrame()
        let cb = try stream.begin(hostBarrier: false)
        try body(cb)
        try stream.end()
        try stream.submit()
        try waitForFrame()
    }
}
