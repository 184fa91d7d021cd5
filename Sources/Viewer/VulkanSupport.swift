import CVulkan
import GPUKit

/// Throws `VulkanError` for a negative result and hands back the others (`VK_SUBOPTIMAL_KHR`,
/// `VK_TIMEOUT`) for the caller to judge, as GPUKit's `vkCheck` does.
@discardableResult @inline(__always)
func check(_ result: VkResult, _ call: @autoclosure () -> String) throws -> VkResult {
    if result.rawValue < 0 { throw VulkanError(result: result, call: call()) }
    return result
}

func flags<T: RawRepresentable>(_ bits: T...) -> UInt32 where T.RawValue == UInt32 {
    bits.reduce(0) { $0 | $1.rawValue }
}

/// One layout transition of a color image (Vulkan: `vkCmdPipelineBarrier`).
func imageBarrier(_ cb: VkCommandBuffer, _ image: VkImage, _ old: VkImageLayout, _ new: VkImageLayout,
                  from src: VkPipelineStageFlags, _ srcAccess: VkAccessFlags,
                  to dst: VkPipelineStageFlags, _ dstAccess: VkAccessFlags) {
    var b = VkImageMemoryBarrier()
    b.sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER
    b.srcAccessMask = srcAccess
    b.dstAccessMask = dstAccess
    b.oldLayout = old
    b.newLayout = new
    b.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED
    b.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED
    b.image = image
    b.subresourceRange = VkImageSubresourceRange(aspectMask: VK_IMAGE_ASPECT_COLOR_BIT.rawValue, baseMipLevel: 0,
                                                 levelCount: 1, baseArrayLayer: 0, layerCount: 1)
    vkCmdPipelineBarrier(cb, src, dst, 0, 0, nil, 0, nil, 1, &b)
}
