import CVulkan
import Foundation

/// Timing of the last render, for `depthlens bench` and `--backend auto`.
public struct GPUTiming: Sendable, Equatable, Codable {
    /// Wall clock of the whole render: upload, dispatch, readback and the wait, in ms.
    public var endToEndMs: Double
    /// GPU time between the timestamps around the kernel's dispatches/draws (`vkCmdWriteTimestamp`
    /// scaled by `timestampPeriod`); nil when the queue has no timestamp bits.
    public var dispatchMs: Double?
}

/// One command buffer, its fence and a pool of timestamp queries, reused frame after frame: the
/// one place that records, submits (through `GPUContext.submit`, under the queue lock) and waits.
/// `submitAndWait` runs one synchronous frame (`FrameRunner`); `submit` and `wait` keep one frame
/// in flight (the window's loop, `FrameSync`).
/// Vulkan: `vkCreateCommandPool`, `vkAllocateCommandBuffers`, `vkCreateFence`, `vkCreateQueryPool`.
public final class CommandStream {
    public let context: GPUContext
    private let pool: VkCommandPool
    public let commandBuffer: VkCommandBuffer
    private let fence: VkFence
    private let queryPool: VkQueryPool?
    /// How many timestamp queries there are: 0 when the queue cannot write timestamps.
    public let timestampCount: UInt32
    private let timestampMask: UInt64
    /// Submitted and not yet waited for.
    public private(set) var inFlight = false

    /// - Parameter timestamps: the number of timestamp queries (when the queue has timestamps).
    public init(context: GPUContext, timestamps: UInt32 = 2) throws {
        self.context = context
        let device = context.device
        let p = try Commands.pool(context)
        let cb: VkCommandBuffer
        let f: VkFence
        let q: VkQueryPool?
        do {
            cb = try Commands.buffer(context, pool: p)
            f = try Commands.fence(context, signaled: false)
            do {
                q = context.timestampPeriod != nil && timestamps > 0 ? try Commands.timestampQueries(context, count: timestamps) : nil
            } catch {
                vkDestroyFence(device, f, nil)
                throw error
            }
        } catch {
            vkDestroyCommandPool(device, p, nil)
            throw error
        }
        pool = p
        commandBuffer = cb
        fence = f
        queryPool = q
        timestampCount = q == nil ? 0 : timestamps
        let families = (try? Vk.enumerate(VkQueueFamilyProperties(), { vkGetPhysicalDeviceQueueFamilyProperties(context.physicalDevice, $0, $1); return VK_SUCCESS },
                                         name: "vkGetPhysicalDeviceQueueFamilyProperties")) ?? []
        let bits = Int(context.queueFamilyIndex) < families.count ? families[Int(context.queueFamilyIndex)].timestampValidBits : 64
        timestampMask = bits >= 64 ? ~0 : (UInt64(1) << UInt64(bits)) &- 1
    }

    deinit {
        let device = context.device
        if inFlight { _ = try? wait() }
        if let queryPool { vkDestroyQueryPool(device, queryPool, nil) }
        vkDestroyFence(device, fence, nil)
        vkDestroyCommandPool(device, pool, nil)  // frees the command buffer
    }

    /// Resets and begins the command buffer for one frame and resets the timestamp queries.
    /// - Parameter hostBarrier: earlier frames' writes (waited on by the host) are made visible to
    ///   this frame's commands by a full memory barrier first.
    /// Vulkan: `vkBeginCommandBuffer`, `vkCmdResetQueryPool`.
    public func begin(hostBarrier: Bool = true) throws -> VkCommandBuffer {
        try Commands.begin(commandBuffer)
        if let queryPool { vkCmdResetQueryPool(commandBuffer, queryPool, 0, timestampCount) }
        if hostBarrier {
            Barrier.memory(commandBuffer, from: VK_PIPELINE_STAGE_ALL_COMMANDS_BIT.rawValue, VK_ACCESS_MEMORY_WRITE_BIT.rawValue,
                           to: VK_PIPELINE_STAGE_ALL_COMMANDS_BIT.rawValue,
                           Vk.flags(VK_ACCESS_MEMORY_READ_BIT, VK_ACCESS_MEMORY_WRITE_BIT))
        }
        return commandBuffer
    }

    /// Writes timestamp `slot`: slot 0 at the top of the pipe (the start), the others at the
    /// bottom (when the work recorded before them is done). Vulkan: `vkCmdWriteTimestamp`.
    public func timestamp(_ slot: UInt32) {
        guard let queryPool, slot < timestampCount else { return }
        let stage = slot == 0 ? VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT : VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT
        vkCmdWriteTimestamp(commandBuffer, stage, queryPool, slot)
    }

    /// Ends the command buffer. Vulkan: `vkEndCommandBuffer`.
    public func end() throws {
        try vkCheck(vkEndCommandBuffer(commandBuffer), "vkEndCommandBuffer")
    }

    /// Submits the ended command buffer (waiting for `wait` at `waitStages`, signaling `signal`)
    /// with the stream's fence; `wait()` waits for it. Vulkan: `vkQueueSubmit`.
    public func submit(wait: VkSemaphore? = nil, waitStages: VkPipelineStageFlags = 0, signal: VkSemaphore? = nil) throws {
        try context.submit(commandBuffer, wait: wait, waitStages: waitStages, signal: signal, fence: fence)
        inFlight = true
    }

    /// Waits for the submitted work (nothing to do when none is in flight); true when there was some.
    /// Vulkan: `vkWaitForFences`, `vkResetFences`.
    @discardableResult
    public func wait() throws -> Bool {
        guard inFlight else { return false }
        var f: VkFence? = fence
        while try vkCheck(vkWaitForFences(context.device, 1, &f, VkBool32(VK_TRUE), 1_000_000_000), "vkWaitForFences") == VK_TIMEOUT {}
        try vkCheck(vkResetFences(context.device, 1, &f), "vkResetFences")
        inFlight = false
        return true
    }

    /// After `wait()`: calls `each(i, ms)` for i in 1..<count with the GPU milliseconds between
    /// timestamps i-1 and i. Nothing is allocated (the stamps are read onto the stack); nothing is
    /// called without timestamps or when they cannot be read. Vulkan: `vkGetQueryPoolResults`.
    public func timestampIntervals(count: Int, _ each: (Int, Double) -> Void) {
        guard let queryPool, let period = context.timestampPeriod, count >= 2, count <= Int(timestampCount) else { return }
        withUnsafeTemporaryAllocation(of: UInt64.self, capacity: count) { stamps in
            let r = vkGetQueryPoolResults(context.device, queryPool, 0, UInt32(count), count * 8, stamps.baseAddress, 8,
                                          VK_QUERY_RESULT_64_BIT.rawValue)
            guard r == VK_SUCCESS else { return }
            for i in 1..<count {
                let ticks = (stamps[i] & timestampMask) &- (stamps[i - 1] & timestampMask)
                each(i, Double(ticks & timestampMask) * period / 1e6)
            }
        }
    }

    /// Ends, submits, waits; returns the GPU milliseconds between timestamps 0 and 1 (nil
    /// without timestamps). Vulkan: `vkEndCommandBuffer`, `vkQueueSubmit`, `vkWaitForFences`, `vkGetQueryPoolResults`.
    public func submitAndWait() throws -> Double? {
        try end()
        try submit()
        try wait()
        guard let queryPool, let period = context.timestampPeriod else { return nil }
        // A tuple, not an array: this runs every frame where the viewer smooths depth on the GPU.
        var stamps: (UInt64, UInt64) = (0, 0)
        let r = withUnsafeMutableBytes(of: &stamps) {
            vkGetQueryPoolResults(context.device, queryPool, 0, 2, 16, $0.baseAddress, 8,
                                  Vk.flags(VK_QUERY_RESULT_64_BIT, VK_QUERY_RESULT_WAIT_BIT))
        }
        guard try vkCheck(r, "vkGetQueryPoolResults") == VK_SUCCESS else { return nil }
        let ticks = (stamps.1 & timestampMask) &- (stamps.0 & timestampMask)
        return Double(ticks & timestampMask) * period / 1e6
    }
}

/// Command pools, command buffers, fences and timestamp query pools. What these return belongs
/// to the caller, whose deinit destroys it.
public enum Commands {
    /// A pool on the context's queue family whose buffers reset one by one. Vulkan: `vkCreateCommandPool`.
    public static func pool(_ context: GPUContext) throws -> VkCommandPool {
        var info = VkCommandPoolCreateInfo()
        info.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO
        info.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT.rawValue
        info.queueFamilyIndex = context.queueFamilyIndex
        var p: VkCommandPool?
        try vkCheck(vkCreateCommandPool(context.device, &info, nil, &p), "vkCreateCommandPool")
        guard let p else { throw VulkanError(result: VK_ERROR_OUT_OF_HOST_MEMORY, call: "vkCreateCommandPool") }
        return p
    }

    /// One primary command buffer, freed with its pool. Vulkan: `vkAllocateCommandBuffers`.
    public static func buffer(_ context: GPUContext, pool: VkCommandPool) throws -> VkCommandBuffer {
        var info = VkCommandBufferAllocateInfo()
        info.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO
        info.commandPool = pool
        info.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY
        info.commandBufferCount = 1
        var cb: VkCommandBuffer?
        try vkCheck(vkAllocateCommandBuffers(context.device, &info, &cb), "vkAllocateCommandBuffers")
        guard let cb else { throw VulkanError(result: VK_ERROR_OUT_OF_HOST_MEMORY, call: "vkAllocateCommandBuffers") }
        return cb
    }

    /// - Parameter signaled: true when the first wait must not block. Vulkan: `vkCreateFence`.
    public static func fence(_ context: GPUContext, signaled: Bool) throws -> VkFence {
        var info = VkFenceCreateInfo()
        info.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO
        info.flags = signaled ? VK_FENCE_CREATE_SIGNALED_BIT.rawValue : 0
        var f: VkFence?
        try vkCheck(vkCreateFence(context.device, &info, nil, &f), "vkCreateFence")
        guard let f else { throw VulkanError(result: VK_ERROR_OUT_OF_HOST_MEMORY, call: "vkCreateFence") }
        return f
    }

    /// `count` timestamp queries. Vulkan: `vkCreateQueryPool`.
    public static func timestampQueries(_ context: GPUContext, count: UInt32) throws -> VkQueryPool {
        var info = VkQueryPoolCreateInfo()
        info.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO
        info.queryType = VK_QUERY_TYPE_TIMESTAMP
        info.queryCount = count
        var q: VkQueryPool?
        try vkCheck(vkCreateQueryPool(context.device, &info, nil, &q), "vkCreateQueryPool")
        guard let q else { throw VulkanError(result: VK_ERROR_OUT_OF_HOST_MEMORY, call: "vkCreateQueryPool") }
        return q
    }

    /// A binary semaphore. Vulkan: `vkCreateSemaphore`.
    public static func semaphore(_ context: GPUContext) throws -> VkSemaphore {
        var info = VkSemaphoreCreateInfo()
        info.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO
        var s: VkSemaphore?
        try vkCheck(vkCreateSemaphore(context.device, &info, nil, &s), "vkCreateSemaphore")
        guard let s else { throw VulkanError(result: VK_ERROR_OUT_OF_HOST_MEMORY, call: "vkCreateSemaphore") }
        return s
    }

    /// Resets `cb` and begins it for one submit. Vulkan: `vkResetCommandBuffer`, `vkBeginCommandBuffer`.
    public static func begin(_ cb: VkCommandBuffer) throws {
        try vkCheck(vkResetCommandBuffer(cb, 0), "vkResetCommandBuffer")
        var info = VkCommandBufferBeginInfo()
        info.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO
        info.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT.rawValue
        try vkCheck(vkBeginCommandBuffer(cb, &info), "vkBeginCommandBuffer")
    }
}
