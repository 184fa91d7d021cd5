import CVulkan
import Foundation
import GPUKit

/// The window's own draws into the letterbox rectangle of the swapchain's render pass (dynamic
/// viewport and scissor, no vertex buffer), two programs over present.vert:
/// - present.frag: one texture, the frame's final image;
/// - presentMix.frag: the GPU blend done here, color and colormapped depth mixed at each window
///   pixel straight into the swapchain image (no intermediate image, no second pass).
/// With `watchesShaders` an edited shader is recompiled; when it does not compile, the old
/// pipeline keeps drawing and `lastError` says why.
final class PresentPipeline {
    let context: GPUContext
    var watchesShaders = false
    var lastError: String? { programs.lazy.compactMap { $0.reloader.lastError.map { "\($0)" } }.first }
    private let pool: DescriptorPool
    private let programs: [Program]
    /// Whose render pass the pipelines draw in (held: the pass lives as long as the swapchain object).
    private let swapchain: Swapchain

    /// One pipeline (rebuilt by GPUKit's `PipelineReloader` when its shaders change), its
    /// descriptor set and the views bound to it.
    private final class Program {
        let setLayout: DescriptorSetLayout
        let layout: PipelineLayout
        let set: VkDescriptorSet
        var pipeline: Pipeline
        let reloader: PipelineReloader
        var bound: [VkImageView?]

        init(_ context: GPUContext, library: ShaderLibrary, pool: DescriptorPool, renderPass: VkRenderPass,
             names: [String], textures: Int, pushSize: Int) throws {
            setLayout = try DescriptorSetLayout(context: context, bindings: Array(repeating: (VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER,
                                                                                            VK_SHADER_STAGE_FRAGMENT_BIT.rawValue), count: textures))
            layout = try PipelineLayout(context: context, setLayouts: [setLayout], pushConstantSize: pushSize,
                                        stages: VK_SHADER_STAGE_FRAGMENT_BIT.rawValue)
            set = try pool.allocate(setLayout)
            reloader = try PipelineReloader(library: library, names: names)
            reloader.pollInterval = 0.5
            pipeline = try PresentPipeline.build(context, layout: layout.handle, renderPass: renderPass, shaders: reloader.shaders)
            bound = Array(repeating: nil, count: textures)
        }
    }

    init(context: GPUContext, library: ShaderLibrary, swapchain: Swapchain) throws {
        self.context = context
        self.swapchain = swapchain
        let renderPass = swapchain.renderPass
        pool = try DescriptorPool(context: context, maxSets: 2, sizes: [(VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, 3)])
        programs = [
            try Program(context, library: library, pool: pool, renderPass: renderPass,
                        names: ["present.vert", "present.frag"], textures: 1, pushSize: 0),
            try Program(context, library: library, pool: pool, renderPass: renderPass,
                        names: ["present.vert", "presentMix.frag"], textures: 2, pushSize: 4),
        ]
    }

    /// Rebuilds a pipeline when one of its shader files changed (polled twice a second). The caller
    /// waited for the previous frame's fence, so the old pipeline is not in use. A failed build is
    /// tried again only after the next edit; the old pipeline keeps drawing meanwhile.
    func reloadIfNeeded() {
        guard watchesShaders else { return }
        for p in programs {
            p.reloader.reloadIfNeeded { shaders in
                p.pipeline = try Self.build(context, layout: p.layout.handle, renderPass: swapchain.renderPass, shaders: shaders)
            }
        }
    }

    /// Records the draw of `texture` into `rect` (window pixels) inside the open render pass.
    /// Vulkan: `vkCmdDraw(4)`.
    func draw(_ cb: VkCommandBuffer, texture: GPUTexture, sampler: VkSampler, rect: Letterbox.Rect) {
        record(cb, programs[0], views: texture.view, nil, sampler: sampler, rect: rect, mix: nil)
    }

    /// Records color `a` and colormapped depth `b` mixed by `mixFactor` (0 = a) into `rect`.
    func drawMix(_ cb: VkCommandBuffer, a: GPUTexture, b: GPUTexture, mixFactor: Float, sampler: VkSampler, rect: Letterbox.Rect) {
        record(cb, programs[1], views: a.view, b.view, sampler: sampler, rect: rect, mix: mixFactor)
    }

    /// A program's descriptor set is rewritten only when its textures change; the caller waited
    /// for the previous frame's fence, so the set is not in use. Vulkan: `vkUpdateDescriptorSets`.
    private func record(_ cb: VkCommandBuffer, _ p: Program, views a: VkImageView, _ b: VkImageView?, sampler: VkSampler,
                        rect: Letterbox.Rect, mix: Float?) {
        for i in 0..<p.bound.count {
            let view: VkImageView? = i == 0 ? a : b
            guard p.bound[i] != view else { continue }
            if let view {
                DescriptorWrite.image(context.device, set: p.set, binding: UInt32(i), type: VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER,
                                      view: view, sampler: sampler)
            }
            p.bound[i] = view
        }
        vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_GRAPHICS, p.pipeline.handle)
        var viewport = VkViewport(x: rect.x, y: rect.y, width: rect.width, height: rect.height, minDepth: 0, maxDepth: 1)
        vkCmdSetViewport(cb, 0, 1, &viewport)
        var scissor = VkRect2D(offset: VkOffset2D(x: Int32(max(0, rect.x.rounded(.down))), y: Int32(max(0, rect.y.rounded(.down)))),
                               extent: VkExtent2D(width: UInt32(max(1, rect.width.rounded(.up))),
                                                  height: UInt32(max(1, rect.height.rounded(.up)))))
        vkCmdSetScissor(cb, 0, 1, &scissor)
        var s: VkDescriptorSet? = p.set
        vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_GRAPHICS, p.layout.handle, 0, 1, &s, 0, nil)
        if var m = mix {
            vkCmdPushConstants(cb, p.layout.handle, VK_SHADER_STAGE_FRAGMENT_BIT.rawValue, 0, 4, &m)
        }
        vkCmdDraw(cb, 4, 1, 0, 0)
    }

    /// Forgets the bound textures (their images may be gone after a source change).
    func invalidate() { programs.forEach { $0.bound = Array(repeating: nil, count: $0.bound.count) } }

    /// A 4-vertex triangle strip, no depth, owned by the `Pipeline`. Vulkan: `vkCreateGraphicsPipelines`.
    static func build(_ context: GPUContext, layout: VkPipelineLayout, renderPass: VkRenderPass,
                      shaders: [CompiledShader]) throws -> Pipeline {
        let description = GraphicsPipelineDescription(vertexCode: shaders[0].code, fragmentCode: shaders[1].code,
                                                      topology: VK_PRIMITIVE_TOPOLOGY_TRIANGLE_STRIP,
                                                      layout: layout, renderPass: renderPass)
        return Pipeline(context: context, handle: try description.makePipeline(context))
    }
}
