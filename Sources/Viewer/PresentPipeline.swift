import CVulkan
import Foundation
import GPUKit

/// present.vert/.frag: draws the frame's final texture into the letterbox rectangle of the
/// swapchain's render pass (dynamic viewport and scissor, one sampled texture, no vertex buffer).
/// With `watchesShaders` an edited shader is recompiled; when it does not compile, the old
/// pipeline keeps drawing and `lastError` says why.
final class PresentPipeline {
    let context: GPUContext
    let library: ShaderLibrary
    var watchesShaders = false
    private(set) var lastError: String?
    private let setLayout: DescriptorSetLayout
    private let layout: PipelineLayout
    private let pool: DescriptorPool
    private let set: VkDescriptorSet
    private var pipeline: VkPipeline
    private var shaders: [CompiledShader]
    private let renderPass: VkRenderPass
    private var lastPoll = 0.0
    private var boundView: VkImageView?

    init(context: GPUContext, library: ShaderLibrary, renderPass: VkRenderPass) throws {
        self.context = context
        self.library = library
        self.renderPass = renderPass
        setLayout = try DescriptorSetLayout(context: context, bindings: [(VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER,
                                                                          VK_SHADER_STAGE_FRAGMENT_BIT.rawValue)])
        layout = try PipelineLayout(context: context, setLayouts: [setLayout], pushConstantSize: 0,
                                    stages: VK_SHADER_STAGE_FRAGMENT_BIT.rawValue)
        pool = try DescriptorPool(context: context, maxSets: 1, sizes: [(VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, 1)])
        set = try pool.allocate(setLayout)
        shaders = [try library.shader(named: "present.vert"), try library.shader(named: "present.frag")]
        pipeline = try Self.build(context, layout: layout.handle, renderPass: renderPass, shaders: shaders)
    }

    /// The layouts and the pool (which frees the set) go with their own objects after this.
    deinit { vkDestroyPipeline(context.device, pipeline, nil) }

    /// Rebuilds the pipeline when a shader file changed (polled twice a second). The caller waited
    /// for the previous frame's fence, so the old pipeline is not in use. A failed build is tried
    /// again only after the next edit.
    func reloadIfNeeded(now: Double) {
        guard watchesShaders, now - lastPoll > 0.5 else { return }
        lastPoll = now
        guard shaders.contains(where: { library.isStale($0) }) else { return }
        let dates = Dictionary(uniqueKeysWithValues: shaders.flatMap { $0.dependencies.keys }.map { ($0, Self.mtime($0)) })
        guard dates != lastTried else { return }
        lastTried = dates
        do {
            let fresh = [try library.shader(named: "present.vert"), try library.shader(named: "present.frag")]
            let p = try Self.build(context, layout: layout.handle, renderPass: renderPass, shaders: fresh)
            vkDestroyPipeline(context.device, pipeline, nil)
            pipeline = p
            shaders = fresh
            lastError = nil
        } catch {
            lastError = "\(error)"
        }
    }

    private var lastTried: [String: Date] = [:]

    private static func mtime(_ path: String) -> Date {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date) ?? .distantPast
    }

    /// Records the draw of `texture` into `rect` (window pixels) inside the open render pass.
    /// The descriptor set is rewritten only when the texture changes; the caller waited for the
    /// previous frame's fence, so the set is not in use. Vulkan: `vkUpdateDescriptorSets`, `vkCmdDraw(4)`.
    func draw(_ cb: VkCommandBuffer, texture: GPUTexture, sampler: VkSampler, rect: Letterbox.Rect) {
        let view = texture.view
        if boundView != view {
            DescriptorWrite.image(context.device, set: set, binding: 0, type: VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER,
                                  view: view, sampler: sampler)
            boundView = view
        }
        vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_GRAPHICS, pipeline)
        var viewport = VkViewport(x: rect.x, y: rect.y, width: rect.width, height: rect.height, minDepth: 0, maxDepth: 1)
        vkCmdSetViewport(cb, 0, 1, &viewport)
        var scissor = VkRect2D(offset: VkOffset2D(x: Int32(max(0, rect.x.rounded(.down))), y: Int32(max(0, rect.y.rounded(.down)))),
                               extent: VkExtent2D(width: UInt32(max(1, rect.width.rounded(.up))),
                                                  height: UInt32(max(1, rect.height.rounded(.up)))))
        vkCmdSetScissor(cb, 0, 1, &scissor)
        var s: VkDescriptorSet? = set
        vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_GRAPHICS, layout.handle, 0, 1, &s, 0, nil)
        vkCmdDraw(cb, 4, 1, 0, 0)
    }

    /// Forgets the bound texture (its image may be gone after a source change).
    func invalidate() { boundView = nil }

    /// A 4-vertex triangle strip, no depth. Vulkan: `vkCreateGraphicsPipelines`.
    static func build(_ context: GPUContext, layout: VkPipelineLayout, renderPass: VkRenderPass,
                      shaders: [CompiledShader]) throws -> VkPipeline {
        try GraphicsPipelineDescription(vertexCode: shaders[0].code, fragmentCode: shaders[1].code,
                                        topology: VK_PRIMITIVE_TOPOLOGY_TRIANGLE_STRIP,
                                        layout: layout, renderPass: renderPass).makePipeline(context)
    }
}
