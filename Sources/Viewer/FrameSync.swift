import CVulkan
import Foundation
import GPUKit

/// The window's one frame in flight: its command buffer, fence and timestamp queries (GPUKit's
/// `CommandStream`, which submits through `GPUContext.submit` under the queue lock), the
/// semaphore an acquired image is waited on and one "render finished" semaphore per swapchain
/// image. Each frame: `waitForFrame` (the previous frame's fence; its GPU timestamps go to the
/// statistics), `acquire`, `beginFrame`, `mark`s between the stages, `endFrame`, `submit`,
/// `present`. `oneShot` records and runs a command buffer of its own between frames (font upload,
/// snapshot, video frame). The semaphores are destroyed on deinit, the stream's objects by it.
final class FrameSync {
    let context: GPUContext
    private let stream: CommandStream
    private let stats: ViewerStats
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
        acquireSemaphore = try Commands.semaphore(context)
        labels.reserveCapacity(Int(Self.timestampCount))
    }

    deinit {
        _ = try? stream.wait()
        vkDeviceWaitIdle(context.device)   // presentation may still wait on a semaphore
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

    /// Submits the frame: waits for the acquired image at the color output stage (and at transfer
    /// when a copy writes it, `transfer`), signals the image's "render finished" semaphore.
    func submit(image: UInt32, transfer: Bool) throws {
        let stages = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT.rawValue | (transfer ? VK_PIPELINE_STAGE_TRANSFER_BIT.rawValue : 0)
        try stream.submit(wait: acquireSemaphore, waitStages: stages, signal: renderDone[Int(image)])
    }

    /// Presents `image` once its frame rendered; an out-of-date or suboptimal swapchain is marked
    /// for recreation. Vulkan: `vkQueuePresentKHR` (under the queue lock).
    func present(image: UInt32, on swapchain: Swapchain) throws {
        guard let handle = swapchain.handle else { swapchain.needsRecreate = true; return }
        let presented = context.present(handle, image: image, wait: renderDone[Int(image)])
        if presented == VK_ERROR_OUT_OF_DATE_KHR || presented == VK_SUBOPTIMAL_KHR {
            swapchain.needsRecreate = true
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
