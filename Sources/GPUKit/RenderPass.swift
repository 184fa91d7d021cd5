import CVulkan

/// Render passes, framebuffers and image views: one subpass, a color attachment and optionally
/// a depth attachment. The caller owns what these return and destroys it.
public enum RenderPass {
    /// Begins `renderPass` over the whole `width`×`height` target and sets the viewport and
    /// scissor to cover it (the offscreen passes draw into all of their target).
    /// Vulkan: `vkCmdBeginRenderPass`, `vkCmdSetViewport`, `vkCmdSetScissor`.
    public static func beginFull(_ cb: VkCommandBuffer, renderPass: VkRenderPass, framebuffer: VkFramebuffer,
                                 width: Int, height: Int, clears: [VkClearValue] = []) {
        var begin = VkRenderPassBeginInfo()
        begin.sType = VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO
        begin.renderPass = renderPass
        begin.framebuffer = framebuffer
        begin.renderArea = VkRect2D(offset: VkOffset2D(x: 0, y: 0),
                                    extent: VkExtent2D(width: UInt32(width), height: UInt32(height)))
        clears.withUnsafeBufferPointer { cp in
            begin.clearValueCount = UInt32(cp.count)
            begin.pClearValues = cp.baseAddress
            vkCmdBeginRenderPass(cb, &begin, VK_SUBPASS_CONTENTS_INLINE)
        }
        var viewport = VkViewport(x: 0, y: 0, width: Float(width), height: Float(height), minDepth: 0, maxDepth: 1)
        vkCmdSetViewport(cb, 0, 1, &viewport)
        var scissor = begin.renderArea
        vkCmdSetScissor(cb, 0, 1, &scissor)
    }

    /// One attachment starting UNDEFINED; stencil is never loaded or stored.
    public static func attachment(format: VkFormat, load: VkAttachmentLoadOp, store: VkAttachmentStoreOp,
                                  finalLayout: VkImageLayout) -> VkAttachmentDescription {
        var a = VkAttachmentDescription()
        a.format = format
        a.samples = VK_SAMPLE_COUNT_1_BIT
        a.loadOp = load
        a.storeOp = store
        a.stencilLoadOp = VK_ATTACHMENT_LOAD_OP_DONT_CARE
        a.stencilStoreOp = VK_ATTACHMENT_STORE_OP_DONT_CARE
        a.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED
        a.finalLayout = finalLayout
        return a
    }

    /// One graphics subpass drawing into `color` (attachment 0) and `depth` (attachment 1, if any).
    /// Vulkan: `vkCreateRenderPass`.
    public static func make(_ device: VkDevice, color: VkAttachmentDescription, depth: VkAttachmentDescription? = nil,
                            dependencies: [VkSubpassDependency]) throws -> VkRenderPass {
        let attachments = [color] + (depth.map { [$0] } ?? [])
        var colorRef = VkAttachmentReference(attachment: 0, layout: VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL)
        var depthRef = VkAttachmentReference(attachment: 1, layout: VK_IMAGE_LAYOUT_DEPTH_STENCIL_ATTACHMENT_OPTIMAL)
        var rp: VkRenderPass?
        let r: VkResult = withUnsafePointer(to: &colorRef) { cp in
            withUnsafePointer(to: &depthRef) { dp in
                var subpass = VkSubpassDescription()
                subpass.pipelineBindPoint = VK_PIPELINE_BIND_POINT_GRAPHICS
                subpass.colorAttachmentCount = 1
                subpass.pColorAttachments = cp
                subpass.pDepthStencilAttachment = depth == nil ? nil : dp
                return withUnsafePointer(to: &subpass) { sp in
                    attachments.withUnsafeBufferPointer { ap in
                        dependencies.withUnsafeBufferPointer { dep in
                            var info = VkRenderPassCreateInfo()
                            info.sType = VK_STRUCTURE_TYPE_RENDER_PASS_CREATE_INFO
                            info.attachmentCount = UInt32(ap.count)
                            info.pAttachments = ap.baseAddress
                            info.subpassCount = 1
                            info.pSubpasses = sp
                            info.dependencyCount = UInt32(dep.count)
                            info.pDependencies = dep.baseAddress
                            return vkCreateRenderPass(device, &info, nil, &rp)
                        }
                    }
                }
            }
        }
        try vkCheck(r, "vkCreateRenderPass")
        guard let rp else { throw VulkanError(result: VK_ERROR_OUT_OF_HOST_MEMORY, call: "vkCreateRenderPass") }
        return rp
    }

    /// A one-layer framebuffer of `views` for `renderPass`. Vulkan: `vkCreateFramebuffer`.
    public static func framebuffer(_ device: VkDevice, renderPass: VkRenderPass, views: [VkImageView],
                                   width: UInt32, height: UInt32) throws -> VkFramebuffer {
        let attachments: [VkImageView?] = views
        var fb: VkFramebuffer?
        let r: VkResult = attachments.withUnsafeBufferPointer { vp in
            var info = VkFramebufferCreateInfo()
            info.sType = VK_STRUCTURE_TYPE_FRAMEBUFFER_CREATE_INFO
            info.renderPass = renderPass
            info.attachmentCount = UInt32(vp.count)
            info.pAttachments = vp.baseAddress
            info.width = width
            info.height = height
            info.layers = 1
            return vkCreateFramebuffer(device, &info, nil, &fb)
        }
        try vkCheck(r, "vkCreateFramebuffer")
        guard let fb else { throw VulkanError(result: VK_ERROR_OUT_OF_HOST_MEMORY, call: "vkCreateFramebuffer") }
        return fb
    }

    /// A 2D view of one mip level and layer of `image`. Vulkan: `vkCreateImageView`.
    public static func imageView(_ device: VkDevice, image: VkImage, format: VkFormat,
                                 aspect: VkImageAspectFlags = VK_IMAGE_ASPECT_COLOR_BIT.rawValue,
                                 components: VkComponentMapping = VkComponentMapping()) throws -> VkImageView {
        var info = VkImageViewCreateInfo()
        info.sType = VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO
        info.image = image
        info.viewType = VK_IMAGE_VIEW_TYPE_2D
        info.format = format
        info.components = components
        info.subresourceRange = VkImageSubresourceRange(aspectMask: aspect, baseMipLevel: 0,
                                                        levelCount: 1, baseArrayLayer: 0, layerCount: 1)
        var v: VkImageView?
        try vkCheck(vkCreateImageView(device, &info, nil, &v), "vkCreateImageView")
        guard let v else { throw VulkanError(result: VK_ERROR_OUT_OF_HOST_MEMORY, call: "vkCreateImageView") }
        return v
    }
}
