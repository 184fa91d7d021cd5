import CVulkan
import DepthKit
import Foundation

/// The 3D point-cloud view: pointCloud.vert/.frag as a graphics pipeline with one point per depth
/// pixel and no vertex buffer. The vertex shader fetches the depth texel of `gl_VertexIndex` and
/// unprojects it with the depth intrinsics (docs/design/kernels.md, point cloud); the fragment shader colors the
/// point from the color texture, sampled nearest at (⌊u·Wc/Wd⌋, ⌊v·Hc/Hd⌋). Invalid depth draws
/// nothing. A depth attachment makes near points cover far ones. It renders offscreen into an rgba8
/// texture of the same `TextureCache` the 2D view uses.
///
/// Two ways in: `record` adds the pass to the viewer's command buffer (output left in
/// SHADER_READ_ONLY_OPTIMAL for the window's present pass), `render` uploads, draws, reads back
/// and waits (`render3d`, tests). Depth images, framebuffers and descriptor sets are made once per
/// texture and reused, so steady-state frames create no Vulkan object (`counters` and the cache's).
/// Not thread-safe: one thread renders.
public final class PointCloudRenderer {
    /// What this renderer created; with `TextureCache.Counters` they must not move in steady state.
    public struct Counters: Equatable, Sendable, CustomStringConvertible {
        public var descriptorSetsAllocated = 0
        public var descriptorPoolsCreated = 0
        public var depthImagesCreated = 0
        public var framebuffersCreated = 0
        public var creations: [Int] { [descriptorSetsAllocated, descriptorPoolsCreated, depthImagesCreated, framebuffersCreated] }
        public var description: String {
            "sets \(descriptorSetsAllocated), pools \(descriptorPoolsCreated), depth images \(depthImagesCreated), framebuffers \(framebuffersCreated)"
        }
    }

    public let context: GPUContext
    public let textureCache: TextureCache
    /// The recorder `render` uses (and the viewer may share): same cache.
    public let recorder: GPUFrameRecorder
    /// The depth attachment's format (D32_SFLOAT where supported).
    public let depthFormat: VkFormat
    /// Point sizes the device draws: 1…pointSizeRange.max with `largePoints`, else exactly 1.
    public let pointSizeRange: ClosedRange<Float>
    /// How points look (size, background, colors, lighting, adaptive size): one value, the same
    /// type the CPU renderer holds. The point size is clamped to `pointSizeRange` (NaN → 1).
    /// Settable between frames.
    public var style: PointStyle {
        get { storedStyle }
        set {
            storedStyle = newValue
            let s = newValue.pointSize
            storedStyle.pointSize = s.isNaN ? 1 : min(max(s, pointSizeRange.lowerBound), pointSizeRange.upperBound)
        }
    }
    private var storedStyle = PointStyle()
    /// Point diameter in output pixels, clamped to `pointSizeRange` (NaN → 1). Settable between frames.
    public var pointSize: Float {
        get { style.pointSize }
        set { style.pointSize = newValue }
    }
    /// Background, RGBA in [0, 1]; dark gray by default.
    public var clearColor: SIMD4<Float> {
        get { style.clearColor }
        set { storedStyle.clearColor = newValue }
    }
    /// The last `render` / `draw`: wall clock of the whole call, GPU time of the draw.
    public private(set) var lastTiming: GPUTiming?
    public var counters: Counters { _counters }
    /// Poll shader files every frame and rebuild the pipeline on change.
    public var watchesShaders = false
    /// The last shader reload's error; the previous pipeline keeps running.
    public var lastShaderError: Error? { reloader.lastError }

    /// Compute rasterizer (default) or the POINT_LIST pipeline. Settable between frames.
    public var method: PointCloudMethod = .compute
    /// Use the 32-bit atomics fallback even where 64-bit buffer atomics exist (tests, comparison).
    public var forces32BitAtomics = false
    /// The compute path's atomics: 64 where `shaderBufferInt64Atomics` is enabled and not forced off, else 32.
    public var atomicBits: Int { context.bufferInt64Atomics && !forces32BitAtomics ? 64 : 32 }
    /// What colors points (compute path; the raster path always uses the color texel).
    public var colorBy: PointCloudColorBy {
        get { style.colorBy }
        set { storedStyle.colorBy = newValue }
    }
    /// The colormap of `colorBy` depth / height.
    public var colormap: Colormap {
        get { style.colormap }
        set { storedStyle.colormap = newValue }
    }
    /// Meters mapped onto the colormap: depth (near end = warm) or height (−y).
    public var colorRange: ClosedRange<Float> = 0...5
    /// Eye-dome lighting after the compute path's resolve (off by default; DepthKit's
    /// `EyeDomeLighting`, pointCloudEDL.comp). The raster path does not shade.
    public var eyeDomeLighting: EyeDomeLighting {
        get { style.eyeDomeLighting }
        set { storedStyle.eyeDomeLighting = newValue }
    }
    /// Adaptive point size (compute path; 0: off, every point `pointSize`): `AdaptivePointSize`'s
    /// scale; each point gets ⌈scale·z / w⌉ (depth frames) or ⌈scale / w⌉ (point buffers) pixels,
    /// clamped to 1…pointSize.
    public var adaptiveSizeScale: Float {
        get { style.adaptiveSizeScale }
        set { storedStyle.adaptiveSizeScale = newValue }
    }
    /// Draw every n-th point of a point buffer (progressive drawing of big clouds while dragging); 1…16.
    public var pointStride = 1

    private var _counters = Counters()
    private let compute: PointCloudCompute
    private let stream: CommandStream
    private let renderPass: VkRenderPass
    private let depthSetLayout: DescriptorSetLayout
    private let layout: PipelineLayout
    private var pipeline: Pipeline
    private let reloader: PipelineReloader
    private var pools: [DescriptorPool] = []
    private var depthSets: [ObjectIdentifier: (texture: Weak<GPUTexture>, set: VkDescriptorSet, pool: DescriptorPool)] = [:]
    private var targets: [ObjectIdentifier: PointCloudTarget] = [:]
    private var outputPool: BufferPool?
    /// A weak reference as a value: the set cache must not keep textures alive.
    private struct Weak<T: AnyObject> {
        weak var value: T?
        init(_ value: T) { self.value = value }
    }
    private static let pushConstantSize = 100   // mat4, vec4, ivec4, float
    private static let setsPerPool = 16

    /// - Parameters:
    ///   - context: the device; `context.largePoints` decides whether point sizes above 1 work.
    ///   - cache: the 2D view's texture cache, so both views share textures.
    ///   - library: where pointCloud.vert/.frag are compiled from.
    /// Vulkan: `vkCreateRenderPass`, `vkCreatePipelineLayout`, `vkCreateGraphicsPipelines`.
    public init(context: GPUContext, cache: TextureCache, library: ShaderLibrary) throws {
        guard cache.context === context else { throw GPUError.unsupported("the texture cache belongs to another GPU context") }
        self.context = context
        textureCache = cache
        recorder = GPUFrameRecorder(cache: cache)
        let range = context.properties.limits.pointSizeRange
        pointSizeRange = context.largePoints ? max(1, range.0)...max(1, range.1) : 1...1
        depthFormat = try PointCloudPipeline.depthFormat(context)
        stream = try CommandStream(context: context)
        depthSetLayout = try DescriptorSetLayout(context: context,
                                                 bindings: [(VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, VK_SHADER_STAGE_VERTEX_BIT.rawValue)])
        layout = try PipelineLayout(context: context, setLayouts: [depthSetLayout, cache.sampledLayout],
                                    pushConstantSize: Self.pushConstantSize, stages: VK_SHADER_STAGE_VERTEX_BIT.rawValue)
        reloader = try PipelineReloader(library: library, names: ["pointCloud.vert", "pointCloud.frag"])
        let rp = try PointCloudPipeline.makeRenderPass(context, depthFormat: depthFormat)
        do {
            pipeline = try PointCloudPipeline.build(context: context, layout: layout, renderPass: rp, shaders: reloader.shaders)
        } catch {
            vkDestroyRenderPass(context.device, rp, nil)
            throw error
        }
        renderPass = rp
        compute = try PointCloudCompute(context: context, cache: cache, library: library)
    }

    deinit {
        context.waitIdle()
        targets.removeAll()
        depthSets.removeAll()
        pools.removeAll()
        vkDestroyRenderPass(context.device, renderPass, nil)
    }

    /// Rebuilds the pipeline if a shader file changed (when `watchesShaders`, or `force`).
    @discardableResult
    public func reloadIfNeeded(force: Bool = false) -> Bool {
        guard watchesShaders || force else { return false }
        return reloader.reloadIfNeeded(force: force) { shaders in
            pipeline = try PointCloudPipeline.build(context: context, layout: layout, renderPass: renderPass, shaders: shaders)
        }
    }

    // MARK: Viewer path

    /// Records the point-cloud pass into the caller's command buffer, inside `recorder.frame {}`.
    /// - Parameters:
    ///   - depth: a depthFloat32 texture (meters) from `recorder.upload`, in SHADER_READ_ONLY_OPTIMAL.
    ///   - color: an rgba8/bgra8 texture of any size, in SHADER_READ_ONLY_OPTIMAL.
    ///   - intrinsics: the depth camera's; scaled to the depth size if they refer to another.
    ///   - output: an rgba8 texture (`recorder.target(for:)`), rewritten whole, left in SHADER_READ_ONLY_OPTIMAL.
    ///   - camera: world (depth camera frame) → clip space.
    /// Vulkan: `vkCmdBeginRenderPass`, `vkCmdPushConstants`, `vkCmdDraw(W·H points)`.
    public func record(cb: VkCommandBuffer, recorder: GPUFrameRecorder, depth: GPUTexture, color: GPUTexture,
                       intrinsics: CameraIntrinsics, output: GPUTexture, camera: PointCloudCamera) throws {
        guard recorder.cache === textureCache else { throw GPUError.unsupported("the point cloud belongs to another texture cache") }
        guard depth.pixelFormat == .depthFloat32 else {
            throw GPUError.unsupported("point-cloud depth must be depthFloat32 (meters), not \(depth.pixelFormat)")
        }
        guard color.pixelFormat == .rgba8 || color.pixelFormat == .bgra8 else {
            throw GPUError.unsupported("point-cloud color must be rgba8 or bgra8, not \(color.pixelFormat)")
        }
        let k = try Self.check(intrinsics, camera, depthWidth: depth.width, depthHeight: depth.height)
        if watchesShaders { reloadIfNeeded() }
        if method == .compute {
            let source = PointCloudCompute.Source(
                depth: try textureCache.sampledSet(depth), color: try textureCache.sampledSet(color), points: nil,
                intrinsics: SIMD4(k.fx, k.fy, k.cx, k.cy),   // not array literals: those allocate per call
                sizes: SIMD4(Int32(depth.width), Int32(depth.height), Int32(color.width), Int32(color.height)),
                count: depth.width * depth.height, isBuffer: false)
            try recordCompute(cb, source: source, output: output, camera: camera, stride: 1)
            return
        }
        let target = try self.target(for: output)
        let sets: [VkDescriptorSet?] = [try depthSet(depth), try textureCache.sampledSet(color)]

        var clears = [VkClearValue](repeating: VkClearValue(), count: 2)
        clears[0].color.float32 = (clearColor.x, clearColor.y, clearColor.z, clearColor.w)
        clears[1].depthStencil = VkClearDepthStencilValue(depth: 1, stencil: 0)
        RenderPass.beginFull(cb, renderPass: renderPass, framebuffer: target.framebuffer,
                             width: output.width, height: output.height, clears: clears)
        vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_GRAPHICS, pipeline.handle)
        sets.withUnsafeBufferPointer { sp in
            vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_GRAPHICS, layout.handle, 0, 2, sp.baseAddress, 0, nil)
        }
        var p = PushWords()
        for v in camera.viewProjection { p.f(v) }
        p.f(k.fx); p.f(k.fy); p.f(k.cx); p.f(k.cy)
        p.i(depth.width); p.i(depth.height); p.i(color.width); p.i(color.height)
        p.f(pointSize)
        precondition(p.count * 4 == Self.pushConstantSize)
        p.withUnsafeBytes { pp in
            vkCmdPushConstants(cb, layout.handle, VK_SHADER_STAGE_VERTEX_BIT.rawValue, 0, UInt32(pp.count), pp.baseAddress)
        }
        vkCmdDraw(cb, UInt32(depth.width * depth.height), 1, 0, 0)
        vkCmdEndRenderPass(cb)
    }

    /// Records a point buffer (`GPUPointCloud`, a PLY) into `output` with the compute rasterizer
    /// (whatever `method` says: the raster pipeline draws depth frames only), every `pointStride`-th point.
    public func record(cb: VkCommandBuffer, recorder: GPUFrameRecorder, cloud: GPUPointCloud, output: GPUTexture,
                       camera: PointCloudCamera) throws {
        guard recorder.cache === textureCache else { throw GPUError.unsupported("the point cloud belongs to another texture cache") }
        guard camera.viewProjection.allSatisfy(\.isFinite) else { throw GPUError.unsupported("the camera matrix is not finite") }
        let dummy = try dummyTexture(recorder, cb)
        let set = try textureCache.sampledSet(dummy)
        let source = PointCloudCompute.Source(depth: set, color: set, points: cloud.buffer.set, intrinsics: SIMD4(1, 1, 0, 0),
                                              sizes: SIMD4(repeating: 1), count: cloud.count, isBuffer: true)
        try recordCompute(cb, source: source, output: output, camera: camera, stride: pointStride)
    }

    /// Points drawn by the last `record` of a point buffer at `pointStride`.
    public func drawnPoints(_ cloud: GPUPointCloud) -> Int {
        let s = min(max(pointStride, 1), 16)
        return (cloud.count + s - 1) / s
    }

    private func recordCompute(_ cb: VkCommandBuffer, source: PointCloudCompute.Source, output: GPUTexture,
                               camera: PointCloudCamera, stride: Int) throws {
        guard output.pixelFormat == .rgba8 else { throw GPUError.unsupported("the point cloud renders into rgba8 textures, not \(output.pixelFormat)") }
        if watchesShaders { compute.kernels.forEach { $0.watchesFiles = true; $0.reloadIfNeeded() } }
        try compute.record(cb, source: source, output: output, camera: camera, pointSize: pointSize, background: clearColor,
                           colorBy: colorBy, colormap: colormap, range: colorRange, stride: stride,
                           force32Bit: forces32BitAtomics, eyeDomeLighting: eyeDomeLighting,
                           adaptiveScale: adaptiveSizeScale)
    }

    /// A 1×1 depth/color stand-in bound where a point buffer has no textures (set layouts are shared).
    private var dummy: PixelBuffer?
    private func dummyTexture(_ recorder: GPUFrameRecorder, _ cb: VkCommandBuffer) throws -> GPUTexture {
        let b = dummy ?? PixelBuffer(width: 1, height: 1, format: .rgba8)
        dummy = b
        return try recorder.upload(cb, b)   // 4 bytes a frame
    }

    /// The intrinsics at the depth's size, after checking them and the camera.
    private static func check(_ intrinsics: CameraIntrinsics, _ camera: PointCloudCamera,
                              depthWidth: Int, depthHeight: Int) throws -> CameraIntrinsics {
        guard camera.viewProjection.allSatisfy(\.isFinite) else { throw GPUError.unsupported("the camera matrix is not finite") }
        guard intrinsics.width > 0, intrinsics.height > 0 else {
            throw GPUError.unsupported("point-cloud intrinsics refer to an empty image: \(intrinsics)")
        }
        let k = intrinsics.width == depthWidth && intrinsics.height == depthHeight
            ? intrinsics : intrinsics.scaled(toWidth: depthWidth, height: depthHeight)
        guard k.fx > 0, k.fy > 0, k.fx.isFinite, k.fy.isFinite, k.cx.isFinite, k.cy.isFinite else {
            throw GPUError.unsupported("point-cloud intrinsics need positive, finite focal lengths: \(k)")
        }
        return k
    }

    // MARK: Synchronous path

    /// Uploads depth and color, draws the cloud into a `width`×`height` rgba8 image, reads it back
    /// and waits. The command buffer, fence, images, framebuffer and sets are reused across calls
    /// (pass the same input buffers to reuse their textures too).
    /// - Parameters: see `record`; `depth` is depthFloat32 meters, `color` rgba8/bgra8.
    /// - Returns: a buffer from a pool of two; it is reused once the caller lets go of it.
    public func render(depth: PixelBuffer, color: PixelBuffer, intrinsics: CameraIntrinsics, camera: PointCloudCamera,
                       width: Int, height: Int) throws -> PixelBuffer {
        let out = try outputBuffer(width: width, height: height)
        lastTiming = try run(depth: depth, color: color, intrinsics: intrinsics, camera: camera, output: out, readBack: true)
        out.markModified()
        return out
    }

    /// `render` with the depth's own intrinsics (its map converted to depthFloat32 if needed: a
    /// new buffer, so convert once outside a loop).
    public func render(depth: DepthData, color: PixelBuffer, camera: PointCloudCamera, width: Int, height: Int) throws -> PixelBuffer {
        try render(depth: depth.depthFloat32(), color: color, intrinsics: depth.intrinsics, camera: camera, width: width, height: height)
    }

    /// What the viewer pays per frame: upload, record, submit and wait, without the readback.
    /// For timing (`render3d --repeat`); returns the same as `lastTiming`.
    @discardableResult
    public func draw(depth: PixelBuffer, color: PixelBuffer, intrinsics: CameraIntrinsics, camera: PointCloudCamera,
                     width: Int, height: Int) throws -> GPUTiming {
        let out = try outputBuffer(width: width, height: height)
        let t = try run(depth: depth, color: color, intrinsics: intrinsics, camera: camera, output: out, readBack: false)
        lastTiming = t
        return t
    }

    private func outputBuffer(width: Int, height: Int) throws -> PixelBuffer {
        let limit = Int(min(context.properties.limits.maxFramebufferWidth, context.properties.limits.maxFramebufferHeight))
        guard width > 0, height > 0, width <= limit, height <= limit else {
            throw GPUError.unsupported("point-cloud output must be 1…\(limit) pixels a side, got \(width)x\(height)")
        }
        let format = FrameFormat(width: width, height: height, pixelFormat: .rgba8)
        if outputPool?.format != format { outputPool = BufferPool(format: format, outputRetainedBufferCountHint: 2) }
        return try outputPool!.makeBuffer()
    }

    private func run(depth: PixelBuffer, color: PixelBuffer, intrinsics: CameraIntrinsics, camera: PointCloudCamera,
                     output: PixelBuffer, readBack: Bool) throws -> GPUTiming {
        guard depth.format == .depthFloat32 else {
            throw GPUError.unsupported("point-cloud depth must be depthFloat32 (meters), not \(depth.format)")
        }
        guard color.format == .rgba8 || color.format == .bgra8 else {
            throw GPUError.unsupported("point-cloud color must be rgba8 or bgra8, not \(color.format)")
        }
        _ = try Self.check(intrinsics, camera, depthWidth: depth.width, depthHeight: depth.height)
        return try run(output: output, readBack: readBack) { cb in
            let td = try recorder.upload(cb, depth)
            let tc = try recorder.upload(cb, color)
            return { to in
                try self.record(cb: cb, recorder: self.recorder, depth: td, color: tc, intrinsics: intrinsics, output: to, camera: camera)
            }
        }
    }

    /// `render` of a point buffer (PLY): draws every `pointStride`-th point, reads back, waits.
    public func render(cloud: GPUPointCloud, camera: PointCloudCamera, width: Int, height: Int) throws -> PixelBuffer {
        let out = try outputBuffer(width: width, height: height)
        lastTiming = try run(output: out, readBack: true) { cb in
            { to in try self.record(cb: cb, recorder: self.recorder, cloud: cloud, output: to, camera: camera) }
        }
        out.markModified()
        return out
    }

    /// `draw` of a point buffer: record, submit and wait, no readback (timing).
    @discardableResult
    public func draw(cloud: GPUPointCloud, camera: PointCloudCamera, width: Int, height: Int) throws -> GPUTiming {
        let out = try outputBuffer(width: width, height: height)
        let t = try run(output: out, readBack: false) { cb in
            { to in try self.record(cb: cb, recorder: self.recorder, cloud: cloud, output: to, camera: camera) }
        }
        lastTiming = t
        return t
    }

    /// One submitted frame: `prepare` uploads and returns the drawing, timed between timestamps.
    private func run(output: PixelBuffer, readBack: Bool,
                     prepare: (VkCommandBuffer) throws -> (GPUTexture) throws -> Void) throws -> GPUTiming {
        let start = DispatchTime.now()
        let dispatchMs: Double? = try recorder.frame {
            let cb = try stream.begin()
            let drawing = try prepare(cb)
            let to = try recorder.target(for: output)
            stream.timestamp(0)
            try drawing(to)
            stream.timestamp(1)
            if readBack {
                Barrier.image(cb, to.image, VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                              from: Vk.flags(VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT),
                              Vk.flags(VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT, VK_ACCESS_SHADER_WRITE_BIT),
                              to: Barrier.transfer, VK_ACCESS_TRANSFER_READ_BIT.rawValue)
                try textureCache.recordReadback(cb, to, into: output)
                Barrier.transferToHost(cb)
            }
            return try stream.submitAndWait()
        }
        return GPUTiming(endToEndMs: milliseconds(since: start), dispatchMs: dispatchMs)
    }

    // MARK: Per-texture objects

    /// The output's depth attachment and framebuffer, made on first use.
    private func target(for output: GPUTexture) throws -> PointCloudTarget {
        let key = ObjectIdentifier(output)
        if let t = targets[key], t.output === output { return t }
        targets = targets.filter { $0.value.output != nil }
        let t = try PointCloudTarget(context: context, output: output, renderPass: renderPass, depthFormat: depthFormat)
        _counters.depthImagesCreated += 1
        _counters.framebuffersCreated += 1
        targets[key] = t
        return t
    }

    /// The depth texture bound for the vertex stage (the cache's sets are fragment/compute only).
    private func depthSet(_ t: GPUTexture) throws -> VkDescriptorSet {
        let key = ObjectIdentifier(t)
        if let e = depthSets[key], e.texture.value === t { return e.set }
        // Sets of textures that are gone are never used again: free them into their pools.
        for (k, e) in depthSets where e.texture.value == nil || k == key {
            e.pool.free(e.set)
            e.pool.reserved -= 1
            depthSets[k] = nil
        }
        let pool: DescriptorPool
        if let p = pools.first(where: { $0.reserved < Self.setsPerPool }) {
            pool = p
        } else {
            pool = try DescriptorPool(context: context, maxSets: Self.setsPerPool,
                                      sizes: [(VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, Self.setsPerPool)])
            _counters.descriptorPoolsCreated += 1
            pools.append(pool)
        }
        let set = try pool.allocate(depthSetLayout)
        pool.reserved += 1
        _counters.descriptorSetsAllocated += 1
        DescriptorWrite.image(context.device, set: set, binding: 0, type: VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER,
                              view: t.sampledView, sampler: textureCache.sampler)
        depthSets[key] = (Weak(t), set, pool)
        return set
    }
}
