import CVulkan
import DepthKit
import Foundation

/// fragmentMixer.vert/.frag as a real graphics pipeline: a 4-vertex triangle strip, two sampled
/// textures (bound with the cache's linear clamp-to-edge sampler), mixFactor as a push constant,
/// rendered offscreen into an rgba8 image at a's size. Both inputs rgba8; mixFactor clamped to
/// [0, 1], NaN → 0. The shader weights b's four texels itself (exact float weights), because a
/// sampler's filtering precision varies by device and would break the 1-LSB agreement.
public final class GPUFragmentMixer: MixerRenderer {
    public let context: GPUContext
    public let textureCache: TextureCache
    public let description = "mix"
    /// 0 = a, 1 = b; clamped to [0, 1], NaN counts as 0. Settable between frames (the viewer's slider).
    public var mixFactor: Float {
        get { storedMix }
        set { storedMix = newValue.isNaN ? 0 : min(max(newValue, 0), 1) }
    }
    private var storedMix: Float = 0
    public private(set) var inputFormat: FrameFormat?
    public private(set) var secondInputFormat: FrameFormat?
    public private(set) var outputFormat: FrameFormat?
    public private(set) var lastTiming: GPUTiming?
    /// Poll shader files every render and rebuild the pipeline on change.
    public var watchesShaders = false
    /// The last shader reload's error; the previous pipeline keeps running.
    public var lastShaderError: Error? { reloader.lastError }

    private let runner: FrameRunner
    private let layout: PipelineLayout
    private var pipeline: Pipeline
    private let reloader: PipelineReloader
    private var pool: BufferPool?

    public init(mixFactor: Float, context: GPUContext, cache: TextureCache, library: ShaderLibrary) throws {
        self.storedMix = mixFactor.isNaN ? 0 : min(max(mixFactor, 0), 1)
        self.context = context
        textureCache = cache
        runner = try FrameRunner(cache: cache)
        layout = try PipelineLayout(context: context, setLayouts: [cache.sampledLayout, cache.sampledLayout],
                                    pushConstantSize: 24, stages: VK_SHADER_STAGE_FRAGMENT_BIT.rawValue)
        reloader = try PipelineReloader(library: library, names: ["fragmentMixer.vert", "fragmentMixer.frag"])
        pipeline = try Self.build(context: context, layout: layout, renderPass: cache.renderPass, shaders: reloader.shaders)
    }

    /// A 4-vertex triangle strip, no depth. Vulkan: `vkCreateGraphicsPipelines`.
    private static func build(context: GPUContext, layout: PipelineLayout, renderPass: VkRenderPass,
                              shaders: [CompiledShader]) throws -> Pipeline {
        let description = GraphicsPipelineDescription(vertexCode: shaders[0].code, fragmentCode: shaders[1].code,
                                                      topology: VK_PRIMITIVE_TOPOLOGY_TRIANGLE_STRIP,
                                                      layout: layout.handle, renderPass: renderPass)
        return Pipeline(context: context, handle: try description.makePipeline(context))
    }

    /// Rebuilds the pipeline if a shader file changed (when `watchesShaders`, or `force`).
    @discardableResult
    public func reloadIfNeeded(force: Bool = false) -> Bool {
        guard watchesShaders || force else { return false }
        return reloader.reloadIfNeeded(force: force) { shaders in
            pipeline = try Self.build(context: context, layout: layout, renderPass: textureCache.renderPass, shaders: shaders)
        }
    }

    public func prepare(input: FrameFormat, secondInput: FrameFormat, outputRetainedBufferCountHint: Int) throws {
        for f in [input, secondInput] where f.pixelFormat != .rgba8 || f.width <= 0 || f.height <= 0 {
            throw RenderError.formatMismatch(kernel: description, expected: "rgba8", got: f)
        }
        guard outputRetainedBufferCountHint >= 1 else {
            throw RenderError.invalidParameter("outputRetainedBufferCountHint must be ≥ 1, got \(outputRetainedBufferCountHint)")
        }
        pool = BufferPool(format: input, outputRetainedBufferCountHint: outputRetainedBufferCountHint)
        inputFormat = input
        secondInputFormat = secondInput
        outputFormat = input
    }

    public func reset() {
        pool = nil
        inputFormat = nil
        secondInputFormat = nil
        outputFormat = nil
    }

    public func render(_ a: PixelBuffer, _ b: PixelBuffer) throws -> PixelBuffer {
        try requirePrepared(a, b)
        guard let pool else { throw RenderError.notPrepared(description) }
        if watchesShaders { reloadIfNeeded() }
        let out = try pool.makeBuffer()
        lastTiming = try runner.run(inputs: [a, b], output: out, outputUse: .colorAttachment) { cb, tin, tout in
            try encode(cb, tin[0], tin[1], tout)
        }
        return out
    }

    /// Vulkan: `vkCmdBeginRenderPass`, `vkCmdPushConstants`, `vkCmdDraw(4)`.
    func encode(_ cb: VkCommandBuffer, _ ta: GPUTexture, _ tb: GPUTexture, _ tout: GPUTexture) throws {
        let sets = DescriptorSets(try textureCache.sampledSet(ta), try textureCache.sampledSet(tb))
        RenderPass.beginFull(cb, renderPass: textureCache.renderPass, framebuffer: try textureCache.framebuffer(tout),
                             width: tout.width, height: tout.height)
        vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_GRAPHICS, pipeline.handle)
        sets.withUnsafeBufferPointer { sp in
            vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_GRAPHICS, layout.handle, 0, 2, sp.baseAddress, 0, nil)
        }
        var p = PushWords()
        p.f(Float(ta.width)); p.f(Float(ta.height)); p.f(Float(tb.width)); p.f(Float(tb.height)); p.f(mixFactor); p.f(0)
        p.withUnsafeBytes { pp in
            vkCmdPushConstants(cb, layout.handle, VK_SHADER_STAGE_FRAGMENT_BIT.rawValue, 0, UInt32(pp.count), pp.baseAddress)
        }
        vkCmdDraw(cb, 4, 1, 0, 0)
        vkCmdEndRenderPass(cb)
    }
}
