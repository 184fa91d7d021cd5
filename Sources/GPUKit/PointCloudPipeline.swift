import CVulkan
import DepthKit
import Foundation

/// The Vulkan objects behind `PointCloudRenderer`: its render pass (rgba8 color + a depth
/// attachment), the depth image and framebuffer of each output texture, and the graphics pipeline.
enum PointCloudPipeline {
    /// The first depth format the device can attach in optimal tiling: D32_SFLOAT, else X8_D24, else D16.
    static func depthFormat(_ context: GPUContext) throws -> VkFormat {
        for f in [VK_FORMAT_D32_SFLOAT, VK_FORMAT_X8_D24_UNORM_PACK32, VK_FORMAT_D16_UNORM] {
            var fp = VkFormatProperties()
            vkGetPhysicalDeviceFormatProperties(context.physicalDevice, f, &fp)
            if fp.optimalTilingFeatures & VK_FORMAT_FEATURE_DEPTH_STENCIL_ATTACHMENT_BIT.rawValue != 0 { return f }
        }
        throw GPUError.unsupported("no depth attachment format (D32_SFLOAT, X8_D24, D16) on \(context.name)")
    }

    /// Color cleared and left in SHADER_READ_ONLY_OPTIMAL (the window samples it; readback adds a
    /// transition); depth cleared, never stored. Vulkan: `vkCreateRenderPass`.
    static func makeRenderPass(_ context: GPUContext, depthFormat: VkFormat) throws -> VkRenderPass {
        var attachments = [VkAttachmentDescription](repeating: VkAttachmentDescription(), count: 2)
        attachments[0].format = VK_FORMAT_R8G8B8A8_UNORM
        attachments[0].samples = VK_SAMPLE_COUNT_1_BIT
        attachments[0].loadOp = VK_ATTACHMENT_LOAD_OP_CLEAR
        attachments[0].storeOp = VK_ATTACHMENT_STORE_OP_STORE
        attachments[0].stencilLoadOp = VK_ATTACHMENT_LOAD_OP_DONT_CARE
        attachments[0].stencilStoreOp = VK_ATTACHMENT_STORE_OP_DONT_CARE
        attachments[0].initialLayout = VK_IMAGE_LAYOUT_UNDEFINED
        attachments[0].finalLayout = VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL
        attachments[1].format = depthFormat
        attachments[1].samples = VK_SAMPLE_COUNT_1_BIT
        attachments[1].loadOp = VK_ATTACHMENT_LOAD_OP_CLEAR
        attachments[1].storeOp = VK_ATTACHMENT_STORE_OP_DONT_CARE
        attachments[1].stencilLoadOp = VK_ATTACHMENT_LOAD_OP_DONT_CARE
        attachments[1].stencilStoreOp = VK_ATTACHMENT_STORE_OP_DONT_CARE
        attachments[1].initialLayout = VK_IMAGE_LAYOUT_UNDEFINED
        attachments[1].finalLayout = VK_IMAGE_LAYOUT_DEPTH_STENCIL_ATTACHMENT_OPTIMAL
        var colorRef = VkAttachmentReference(attachment: 0, layout: VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL)
        var depthRef = VkAttachmentReference(attachment: 1, layout: VK_IMAGE_LAYOUT_DEPTH_STENCIL_ATTACHMENT_OPTIMAL)
        let fragmentTests = Vk.flags(VK_PIPELINE_STAGE_EARLY_FRAGMENT_TESTS_BIT, VK_PIPELINE_STAGE_LATE_FRAGMENT_TESTS_BIT)
        let readers = Barrier.allShaders | Barrier.transfer
        let dependencies = [
            // The previous frame's sampling / readback of the output and its depth writes → this pass.
            VkSubpassDependency(srcSubpass: VK_SUBPASS_EXTERNAL, dstSubpass: 0,
                                srcStageMask: readers | fragmentTests,
                                dstStageMask: VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT.rawValue | fragmentTests,
                                srcAccessMask: VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_WRITE_BIT.rawValue,
                                dstAccessMask: Vk.flags(VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT, VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_READ_BIT,
                                                        VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_WRITE_BIT),
                                dependencyFlags: 0),
            // Color writes → shaders that sample the output, and the readback copy.
            VkSubpassDependency(srcSubpass: 0, dstSubpass: VK_SUBPASS_EXTERNAL,
                                srcStageMask: VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT.rawValue,
                                dstStageMask: readers,
                                srcAccessMask: VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT.rawValue,
                                dstAccessMask: Vk.flags(VK_ACCESS_SHADER_READ_BIT, VK_ACCESS_TRANSFER_READ_BIT),
                                dependencyFlags: 0),
        ]
        var rp: VkRenderPass?
        let r: VkResult = withUnsafePointer(to: &colorRef) { cp in
            withUnsafePointer(to: &depthRef) { dp in
                var subpass = VkSubpassDescription()
                subpass.pipelineBindPoint = VK_PIPELINE_BIND_POINT_GRAPHICS
                subpass.colorAttachmentCount = 1
                subpass.pColorAttachments = cp
                subpass.pDepthStencilAttachment = dp
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
                            return vkCreateRenderPass(context.device, &info, nil, &rp)
                        }
                    }
                }
            }
        }
        try vkCheck(r, "vkCreateRenderPass")
        guard let rp else { throw VulkanError(result: VK_ERROR_OUT_OF_HOST_MEMORY, call: "vkCreateRenderPass") }
        return rp
    }

    /// Points, depth test LESS with writes, no blending; dynamic viewport and scissor so one
    /// pipeline serves every output size. Vulkan: `vkCreateGraphicsPipelines`.
    static func build(context: GPUContext, layout: PipelineLayout, renderPass: VkRenderPass,
                      shaders: [CompiledShader]) throws -> Pipeline {
        let vert = try ShaderModule(context: context, code: shaders[0].code)
        let frag = try ShaderModule(context: context, code: shaders[1].code)
        var p: VkPipeline?
        let r: VkResult = "main".withCString { entry in
            var stages = [VkPipelineShaderStageCreateInfo](repeating: VkPipelineShaderStageCreateInfo(), count: 2)
            for (i, (stage, module)) in [(VK_SHADER_STAGE_VERTEX_BIT, vert), (VK_SHADER_STAGE_FRAGMENT_BIT, frag)].enumerated() {
                stages[i].sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO
                stages[i].stage = stage
                stages[i].module = module.handle
                stages[i].pName = entry
            }
            var vertexInput = VkPipelineVertexInputStateCreateInfo()
            vertexInput.sType = VK_STRUCTURE_TYPE_PIPELINE_VERTEX_INPUT_STATE_CREATE_INFO
            var assembly = VkPipelineInputAssemblyStateCreateInfo()
            assembly.sType = VK_STRUCTURE_TYPE_PIPELINE_INPUT_ASSEMBLY_STATE_CREATE_INFO
            assembly.topology = VK_PRIMITIVE_TOPOLOGY_POINT_LIST
            var viewport = VkPipelineViewportStateCreateInfo()
            viewport.sType = VK_STRUCTURE_TYPE_PIPELINE_VIEWPORT_STATE_CREATE_INFO
            viewport.viewportCount = 1
            viewport.scissorCount = 1
            var raster = VkPipelineRasterizationStateCreateInfo()
            raster.sType = VK_STRUCTURE_TYPE_PIPELINE_RASTERIZATION_STATE_CREATE_INFO
            raster.polygonMode = VK_POLYGON_MODE_FILL
            raster.cullMode = VK_CULL_MODE_NONE.rawValue
            raster.frontFace = VK_FRONT_FACE_COUNTER_CLOCKWISE
            raster.lineWidth = 1
            var multisample = VkPipelineMultisampleStateCreateInfo()
            multisample.sType = VK_STRUCTURE_TYPE_PIPELINE_MULTISAMPLE_STATE_CREATE_INFO
            multisample.rasterizationSamples = VK_SAMPLE_COUNT_1_BIT
            var depthStencil = VkPipelineDepthStencilStateCreateInfo()
            depthStencil.sType = VK_STRUCTURE_TYPE_PIPELINE_DEPTH_STENCIL_STATE_CREATE_INFO
            depthStencil.depthTestEnable = VkBool32(VK_TRUE)
            depthStencil.depthWriteEnable = VkBool32(VK_TRUE)
            depthStencil.depthCompareOp = VK_COMPARE_OP_LESS
            depthStencil.minDepthBounds = 0
            depthStencil.maxDepthBounds = 1
            var blendAttachment = VkPipelineColorBlendAttachmentState()
            blendAttachment.colorWriteMask = Vk.flags(VK_COLOR_COMPONENT_R_BIT, VK_COLOR_COMPONENT_G_BIT,
                                                      VK_COLOR_COMPONENT_B_BIT, VK_COLOR_COMPONENT_A_BIT)
            let dynamicStates: [VkDynamicState] = [VK_DYNAMIC_STATE_VIEWPORT, VK_DYNAMIC_STATE_SCISSOR]
            return stages.withUnsafeBufferPointer { sp in
                withUnsafePointer(to: &blendAttachment) { bap in
                    dynamicStates.withUnsafeBufferPointer { dp in
                        var blend = VkPipelineColorBlendStateCreateInfo()
                        blend.sType = VK_STRUCTURE_TYPE_PIPELINE_COLOR_BLEND_STATE_CREATE_INFO
                        blend.attachmentCount = 1
                        blend.pAttachments = bap
                        var dynamic = VkPipelineDynamicStateCreateInfo()
                        dynamic.sType = VK_STRUCTURE_TYPE_PIPELINE_DYNAMIC_STATE_CREATE_INFO
                        dynamic.dynamicStateCount = UInt32(dp.count)
                        dynamic.pDynamicStates = dp.baseAddress
                        var info = VkGraphicsPipelineCreateInfo()
                        info.sType = VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_CREATE_INFO
                        info.stageCount = 2
                        info.pStages = sp.baseAddress
                        info.layout = layout.handle
                        info.renderPass = renderPass
                        info.subpass = 0
                        return withUnsafePointer(to: &vertexInput) { vi in
                        withUnsafePointer(to: &assembly) { ia in
                        withUnsafePointer(to: &viewport) { vp in
                        withUnsafePointer(to: &raster) { rs in
                        withUnsafePointer(to: &multisample) { ms in
                        withUnsafePointer(to: &depthStencil) { dss in
                        withUnsafePointer(to: &blend) { bs in
                        withUnsafePointer(to: &dynamic) { ds in
                            info.pVertexInputState = vi
                            info.pInputAssemblyState = ia
                            info.pViewportState = vp
                            info.pRasterizationState = rs
                            info.pMultisampleState = ms
                            info.pDepthStencilState = dss
                            info.pColorBlendState = bs
                            info.pDynamicState = ds
                            return vkCreateGraphicsPipelines(context.device, nil, 1, &info, nil, &p)
                        }}}}}}}}
                    }
                }
            }
        }
        try vkCheck(r, "vkCreateGraphicsPipelines")
        guard let p else { throw VulkanError(result: VK_ERROR_OUT_OF_HOST_MEMORY, call: "vkCreateGraphicsPipelines") }
        return Pipeline(context: context, handle: p)
    }
}

/// The depth attachment and framebuffer of one output texture: made on the texture's first
/// render, reused after, destroyed with the entry (framebuffer first, then the depth image).
/// One per output, so frames in flight on different outputs never share a depth buffer.
final class PointCloudTarget {
    let context: GPUContext
    weak var output: GPUTexture?
    let width: Int
    let height: Int
    private let image: VkImage
    private let memory: VkDeviceMemory
    private let view: VkImageView
    let framebuffer: VkFramebuffer

    /// Vulkan: `vkCreateImage`, `vkAllocateMemory`, `vkCreateImageView`, `vkCreateFramebuffer`.
    init(context: GPUContext, output: GPUTexture, renderPass: VkRenderPass, depthFormat: VkFormat) throws {
        guard output.pixelFormat == .rgba8 else {
            throw GPUError.unsupported("the point cloud renders into rgba8 textures, not \(output.pixelFormat)")
        }
        self.context = context
        self.output = output
        width = output.width
        height = output.height
        let device = context.device
        var info = VkImageCreateInfo()
        info.sType = VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO
        info.imageType = VK_IMAGE_TYPE_2D
        info.format = depthFormat
        info.extent = VkExtent3D(width: UInt32(width), height: UInt32(height), depth: 1)
        info.mipLevels = 1
        info.arrayLayers = 1
        info.samples = VK_SAMPLE_COUNT_1_BIT
        info.tiling = VK_IMAGE_TILING_OPTIMAL
        info.usage = VK_IMAGE_USAGE_DEPTH_STENCIL_ATTACHMENT_BIT.rawValue
        info.sharingMode = VK_SHARING_MODE_EXCLUSIVE
        info.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED
        var img: VkImage?
        try vkCheck(vkCreateImage(device, &info, nil, &img), "vkCreateImage")
        guard let img else { throw VulkanError(result: VK_ERROR_OUT_OF_HOST_MEMORY, call: "vkCreateImage") }
        var req = VkMemoryRequirements()
        vkGetImageMemoryRequirements(device, img, &req)
        guard let type = context.memoryType(bits: req.memoryTypeBits, required: VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT.rawValue)
                ?? context.memoryType(bits: req.memoryTypeBits, required: 0) else {
            vkDestroyImage(device, img, nil)
            throw GPUError.unsupported("no memory type for a depth image")
        }
        var alloc = VkMemoryAllocateInfo()
        alloc.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO
        alloc.allocationSize = req.size
        alloc.memoryTypeIndex = type
        var mem: VkDeviceMemory?
        let ar = vkAllocateMemory(device, &alloc, nil, &mem)
        guard ar == VK_SUCCESS, let mem else {
            vkDestroyImage(device, img, nil)
            throw VulkanError(result: ar == VK_SUCCESS ? VK_ERROR_OUT_OF_DEVICE_MEMORY : ar, call: "vkAllocateMemory")
        }
        var v: VkImageView?
        var fb: VkFramebuffer?
        do {
            try vkCheck(vkBindImageMemory(device, img, mem, 0), "vkBindImageMemory")
            var vi = VkImageViewCreateInfo()
            vi.sType = VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO
            vi.image = img
            vi.viewType = VK_IMAGE_VIEW_TYPE_2D
            vi.format = depthFormat
            vi.subresourceRange = VkImageSubresourceRange(aspectMask: VK_IMAGE_ASPECT_DEPTH_BIT.rawValue, baseMipLevel: 0,
                                                          levelCount: 1, baseArrayLayer: 0, layerCount: 1)
            try vkCheck(vkCreateImageView(device, &vi, nil, &v), "vkCreateImageView")
            guard let v else { throw VulkanError(result: VK_ERROR_OUT_OF_HOST_MEMORY, call: "vkCreateImageView") }
            let views: [VkImageView?] = [output.sampledView, v]
            let (fw, fh) = (UInt32(output.width), UInt32(output.height))
            let r: VkResult = views.withUnsafeBufferPointer { vp in
                var fi = VkFramebufferCreateInfo()
                fi.sType = VK_STRUCTURE_TYPE_FRAMEBUFFER_CREATE_INFO
                fi.renderPass = renderPass
                fi.attachmentCount = 2
                fi.pAttachments = vp.baseAddress
                fi.width = fw
                fi.height = fh
                fi.layers = 1
                return vkCreateFramebuffer(device, &fi, nil, &fb)
            }
            try vkCheck(r, "vkCreateFramebuffer")
            guard fb != nil else { throw VulkanError(result: VK_ERROR_OUT_OF_HOST_MEMORY, call: "vkCreateFramebuffer") }
        } catch {
            if let v { vkDestroyImageView(device, v, nil) }
            vkDestroyImage(device, img, nil)
            vkFreeMemory(device, mem, nil)
            throw error
        }
        image = img
        memory = mem
        view = v!
        framebuffer = fb!
    }

    deinit {
        let device = context.device
        vkDestroyFramebuffer(device, framebuffer, nil)
        vkDestroyImageView(device, view, nil)
        vkDestroyImage(device, image, nil)
        vkFreeMemory(device, memory, nil)
    }
}
