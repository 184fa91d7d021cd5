import CVulkan
import DepthKit
import Foundation

/// The GPU port of `DepthSmoother`: depthSmoothTemporal.comp (stages 1–2, history in a
/// device-local buffer that lives across frames) then depthSmoothSpatial.comp (stage 3).
/// Depth goes in and comes out through host-visible storage buffers, one synchronous submit per
/// frame, so every consumer (colormaps, masks, readout, PLY, recording) gets the same depth.
///
/// Agreement with the CPU reference: stages 1–2 bit for bit (`precise`, same operations); a
/// spatial fill is a mean `sum / n` whose division GLSL allows to be a few ULP off, so outputs
/// agree within 1e-6 relative and valid/invalid exactly.
public final class GPUDepthSmoother: DepthSmoothing {
    public var settings: DepthSmoothingSettings {
        didSet {
            settings = settings.clamped()
            if settings.restartsHistory(from: oldValue) { reset() }
        }
    }
    public let backendName = "GPU"
    /// Upload + dispatches + readback of the last `smooth`, and the GPU time of the dispatches.
    public private(set) var lastTiming: GPUTiming?

    let context: GPUContext
    private let stream: CommandStream
    private let layout: DescriptorSetLayout
    private let temporal: ComputeKernel
    private let spatial: ComputeKernel
    private var resources: Resources?
    private var needsClear = true
    private var pool: BufferPool?

    /// Per-size buffers and their descriptor sets (binding 0 of one set each).
    private final class Resources {
        let width: Int, height: Int
        let input: GPUBuffer, state: GPUBuffer, stage: GPUBuffer, output: GPUBuffer
        let sets: (input: VkDescriptorSet, state: VkDescriptorSet, stage: VkDescriptorSet, output: VkDescriptorSet)
        private let descriptorPool: DescriptorPool

        init(context: GPUContext, layout: DescriptorSetLayout, width: Int, height: Int) throws {
            self.width = width; self.height = height
            let n = width * height
            let storage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT.rawValue
            input = try GPUBuffer(context: context, size: n * 4, usage: storage, hostVisible: true)
            state = try GPUBuffer(context: context, size: n * 8,
                                  usage: Vk.flags(VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, VK_BUFFER_USAGE_TRANSFER_DST_BIT), hostVisible: false)
            stage = try GPUBuffer(context: context, size: n * 4, usage: storage, hostVisible: false)
            output = try GPUBuffer(context: context, size: n * 4, usage: storage, hostVisible: true)
            let dp = try DescriptorPool(context: context, maxSets: 4, sizes: [(VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 4)])
            func set(_ b: GPUBuffer) throws -> VkDescriptorSet {
                let s = try dp.allocate(layout)
                DescriptorWrite.buffer(context.device, set: s, binding: 0, buffer: b)
                return s
            }
            sets = (try set(input), try set(state), try set(stage), try set(output))
            descriptorPool = dp
        }
    }

    public init(settings: DepthSmoothingSettings = DepthSmoothingSettings(), context: GPUContext? = nil,
                library: ShaderLibrary? = nil) throws {
        let ctx = try context ?? GPUContext.shared()
        let lib = try library ?? ShaderLibrary.shared()
        self.context = ctx
        self.settings = settings.clamped()
        stream = try CommandStream(context: ctx)
        layout = try DescriptorSetLayout(context: ctx, bindings: [(VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, VK_SHADER_STAGE_COMPUTE_BIT.rawValue)])
        temporal = try ComputeKernel(context: ctx, library: lib, name: "depthSmoothTemporal.comp",
                                     setLayouts: [layout, layout, layout], pushConstantSize: 28)
        spatial = try ComputeKernel(context: ctx, library: lib, name: "depthSmoothSpatial.comp",
                                    setLayouts: [layout, layout], pushConstantSize: 24)
    }

    public func reset() { needsClear = true }

    public func smooth(_ depth: PixelBuffer) throws -> PixelBuffer {
        guard depth.width > 0, depth.height > 0, depth.format == .depthFloat32 else {
            throw RenderError.formatMismatch(kernel: "smooth", expected: "depthFloat32", got: depth.frameFormat)
        }
        let w = depth.width, h = depth.height
        if resources?.width != w || resources?.height != h {
            resources = nil
            resources = try Resources(context: context, layout: layout, width: w, height: h)
            pool = BufferPool(format: FrameFormat(width: w, height: h, pixelFormat: .depthFloat32), outputRetainedBufferCountHint: 3)
            needsClear = true
        }
        guard let r = resources, let pool, let inPtr = r.input.mapped, let outPtr = r.output.mapped else {
            throw RenderError.notPrepared("smooth")
        }
        let start = DispatchTime.now()
        for y in 0..<h { (inPtr + y * w * 4).copyMemory(from: depth.row(y), byteCount: w * 4) }
        let s = settings
        let cb = try stream.begin()
        if needsClear {
            vkCmdFillBuffer(cb, r.state.buffer, 0, VkDeviceSize(VK_WHOLE_SIZE), 0)
            Barrier.transferToShaders(cb)
            needsClear = false
        }
        stream.timestamp(0)
        var p = PushWords()
        p.i(w); p.i(h); p.f(s.alpha); p.f(s.threshold)
        p.u(s.temporal ? 1 : 0); p.u(s.holeFill ? 1 : 0); p.i(s.holeFrames)
        temporal.dispatch(cb, sets: DescriptorSets(r.sets.input, r.sets.state, r.sets.stage), push: p, threads: (w, h))
        Barrier.computeToCompute(cb)
        var q = PushWords()
        q.i(w); q.i(h); q.f(s.threshold); q.u(s.spatial ? 1 : 0); q.i(s.radius); q.i(DepthSmoothingSettings.spatialMinNeighbours)
        spatial.dispatch(cb, sets: DescriptorSets(r.sets.stage, r.sets.output), push: q, threads: (w, h))
        Barrier.memory(cb, from: Barrier.compute, VK_ACCESS_SHADER_WRITE_BIT.rawValue,
                       to: VK_PIPELINE_STAGE_HOST_BIT.rawValue, VK_ACCESS_HOST_READ_BIT.rawValue)
        stream.timestamp(1)
        let dispatchMs = try stream.submitAndWait()
        let out = try pool.makeBuffer()
        for y in 0..<h { out.row(y).copyMemory(from: outPtr + y * w * 4, byteCount: w * 4) }
        out.markModified()
        lastTiming = GPUTiming(endToEndMs: milliseconds(since: start), dispatchMs: dispatchMs)
        return out
    }
}
