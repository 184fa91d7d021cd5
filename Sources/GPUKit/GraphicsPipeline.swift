import CVulkan

/// What differs between depthlens' graphics pipelines. The rest is fixed: no vertex buffers
/// (shaders make their vertices), fill, no culling, one sample, one color attachment with
/// blending off, and dynamic viewport and scissor so one pipeline serves every size.
public struct GraphicsPipelineDescription {
    /// SPIR-V of the vertex and fragment shaders (entry point `main`).
    public var vertexCode: [UInt32]
    public var fragmentCode: [UInt32]
    public var topology: VkPrimitiveTopology
    /// Depth test LESS with writes; the render pass then needs a depth attachment.
    public var depthTest: Bool
    public var layout: VkPipelineLayout
    public var renderPass: VkRenderPass

    public init(vertexCode: [UInt32], fragmentCode: [UInt32], topology: VkPrimitiveTopology, depthTest: Bool = false,
                layout: VkPipelineLayout, renderPass: VkRenderPass) {
        self.vertexCode = vertexCode
        self.fragmentCode = fragmentCode
        self.topology = topology
        self.depthTest = depthTest
        self.layout = layout
        self.renderPass = renderPass
    }

    /// The pipeline, owned by the caller (who destroys it with `vkDestroyPipeline`); the shader
    /// modules are destroyed before this returns.
    /// Vulkan: `vkCreateShaderModule`, `vkCreateGraphicsPipelines`.
    public func makePipeline(_ context: GPUContext) throws -> VkPipeline {
        let vert = try ShaderModule(context: context, code: vertexCode)
        let frag = try ShaderModule(context: context, code: fragmentCode)
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
            assembly.topology = topology
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
                        info.layout = layout
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
                            info.pDepthStencilState = depthTest ? dss : nil
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
        return p
    }
}
