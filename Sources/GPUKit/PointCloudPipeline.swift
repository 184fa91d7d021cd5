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
        let color = RenderPass.attachment(format: VK_FORMAT_R8G8B8A8_UNORM, load: VK_ATTACHMENT_LOAD_OP_CLEAR,
                                          store: VK_ATTACHMENT_STORE_OP_STORE, finalLayout: VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL)
        let depth = RenderPass.attachment(format: depthFormat, load: VK_ATTACHMENT_LOAD_OP_CLEAR,
                                          store: VK_ATTACHMENT_STORE_OP_DONT_CARE,
                                          finalLayout: VK_IMAGE_LAYOUT_DEPTH_STENCIL_ATTACHMENT_OPTIMAL)
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
        return try RenderPass.make(context.device, color: color, depth: depth, dependencies: dependencies)
    }

    /// Points, depth test LESS with writes, no blending; dynamic viewport and scissor so one
    /// pipeline serves every output size. Vulkan: `vkCreateGraphicsPipelines`.
    static func build(context: GPUContext, layout: PipelineLayout, renderPass: VkRenderPass,
                      shaders: [CompiledShader]) throws -> Pipeline {
        let description = GraphicsPipelineDescription(vertexCode: shaders[0].code, fragmentCode: shaders[1].code,
                                                      topology: VK_PRIMITIVE_TOPOLOGY_POINT_LIST, depthTest: true,
                                                      layout: layout.handle, renderPass: renderPass)
        return Pipeline(context: context, handle: try description.makePipeline(context))
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
    /// The depth image and its memory, released after `deinit` has destroyed the view.
    private let depth: DeviceImage
    private let view: VkImageView
    let framebuffer: VkFramebuffer

    /// Vulkan (through `DeviceImage` and `RenderPass`): `vkCreateImage`, `vkAllocateMemory`, `vkCreateImageView`, `vkCreateFramebuffer`.
    init(context: GPUContext, output: GPUTexture, renderPass: VkRenderPass, depthFormat: VkFormat) throws {
        guard output.pixelFormat == .rgba8 else {
            throw GPUError.unsupported("the point cloud renders into rgba8 textures, not \(output.pixelFormat)")
        }
        self.context = context
        self.output = output
        width = output.width
        height = output.height
        let device = context.device
        depth = try DeviceImage(context: context, format: depthFormat, width: width, height: height,
                                usage: VK_IMAGE_USAGE_DEPTH_STENCIL_ATTACHMENT_BIT.rawValue, what: "a depth image")
        let v = try RenderPass.imageView(device, image: depth.image, format: depthFormat,
                                         aspect: VK_IMAGE_ASPECT_DEPTH_BIT.rawValue)
        do {
            framebuffer = try RenderPass.framebuffer(device, renderPass: renderPass, views: [output.sampledView, v],
                                                     width: UInt32(output.width), height: UInt32(output.height))
        } catch {
            vkDestroyImageView(device, v, nil)
            throw error
        }
        view = v
    }

    deinit {
        let device = context.device
        vkDestroyFramebuffer(device, framebuffer, nil)
        vkDestroyImageView(device, view, nil)
    }
}
