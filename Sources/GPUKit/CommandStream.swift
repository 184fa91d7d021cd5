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

/// One command buffer, its fence and a two-slot timestamp query pool, reused every frame.
/// Vulkan: `vkCreateCommandPool`, `vkAllocateCommandBuffers`, `vkCreateFence`, `vkCreateQueryPool`.
final class CommandStream {
    let context: GPUContext
    private let pool: VkCommandPool
    let commandBuffer: VkCommandBuffer
    private let fence: VkFence
    private let queryPool: VkQueryPool?
    private let timestampMask: UInt64

    init(context: GPUContext) throws {
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
                q = context.timestampPeriod != nil ? try Commands.timestampQueries(context, count: 2) : nil
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
        var props = VkQueueFamilyProperties()
        var count: UInt32 = 0
        vkGetPhysicalDeviceQueueFamilyProperties(context.physicalDevice, &count, nil)
        var all = [VkQueueFamilyProperties](repeating: props, count: Int(count))
        vkGetPhysicalDeviceQueueFamilyProperties(context.physicalDevice, &count, &all)
        props = all[Int(context.queueFamilyIndex)]
        let bits = props.timestampValidBits
        timestampMask = bits >= 64 ? ~0 : (UInt64(1) << UInt64(bits)) &- 1
    }

    deinit {
        let device = context.device
        if let queryPool { vkDestroyQueryPool(device, queryPool, nil) }
        vkDestroyFence(device, fence, nil)
        vkDestroyCommandPool(device, pool, nil)  // frees the command buffer
    }

    /// Resets and begins the command buffer for one frame. Vulkan: `vkBeginCommandBuffer`.
    func begin() throws -> VkCommandBuffer {
        try Commands.begin(commandBuffer)
        if let queryPool { vkCmdResetQueryPool(commandBuffer, queryPool, 0, 2) }
        // Earlier frames' writes (waited on by the host) become visible to this frame's commands.
        Barrier.memory(commandBuffer, from: VK_PIPELINE_STAGE_ALL_COMMANDS_BIT.rawValue, VK_ACCESS_MEMORY_WRITE_BIT.rawValue,
                       to: VK_PIPELINE_STAGE_ALL_COMMANDS_BIT.rawValue,
                       Vk.flags(VK_ACCESS_MEMORY_READ_BIT, VK_ACCESS_MEMORY_WRITE_BIT))
        return commandBuffer
    }

    /// Marks the start (0) or end (1) of the timed section. Vulkan: `vkCmdWriteTimestamp`.
    func timestamp(_ slot: UInt32) {
        guard let queryPool else { return }
        let stage = slot == 0 ? VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT : VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT
        vkCmdWriteTimestamp(commandBuffer, stage, queryPool, slot)
    }

    /// Ends, submits, waits; returns the timed section's GPU milliseconds (nil without timestamps).
    /// Vulkan: `vkEndCommandBuffer`, `vkQueueSubmit`, `vkWaitForFences`, `vkGetQueryPoolResults`.
    func submitAndWait() throws -> Double? {
        try vkCheck(vkEndCommandBuffer(commandBuffer), "vkEndCommandBuffer")
        try context.submit(commandBuffer, fence: fence)
        var f: VkFence? = fence
        while try vkCheck(vkWaitForFences(context.device, 1, &f, VkBool32(VK_TRUE), 10_000_000_000), "vkWaitForFences") == VK_TIMEOUT {}
        try vkCheck(vkResetFences(context.device, 1, &f), "vkResetFences")
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

    /// Resets `cb` and begins it for one submit. Vulkan: `vkResetCommandBuffer`, `vkBeginCommandBuffer`.
    public static func begin(_ cb: VkCommandBuffer) throws {
        try vkCheck(vkResetCommandBuffer(cb, 0), "vkResetCommandBuffer")
        var info = VkCommandBufferBeginInfo()
        info.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO
        info.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT.rawValue
        try vkCheck(vkBeginCommandBuffer(cb, &info), "vkBeginCommandBuffer")
    }
}
