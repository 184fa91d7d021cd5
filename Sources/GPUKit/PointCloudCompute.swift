import CDepthKit
import CVulkan
import DepthKit
import Foundation

/// How the 3D view draws points: compute shaders (atomicMin into a buffer, then a resolve pass;
/// the default) or the graphics pipeline's POINT_LIST (for comparison).
public enum PointCloudMethod: String, CaseIterable, Sendable {
    case compute, raster
}

/// Points on the GPU that are not a depth frame (a PLY file): xyz and packed rgba8 per point in a
/// storage buffer, uploaded in chunks through one small staging buffer, never one giant copy.
public final class GPUPointCloud {
    public private(set) var count: Int
    /// Axis-aligned bounds of the points (zero box for an empty cloud).
    public private(set) var bounds: (min: SIMD3<Float>, max: SIMD3<Float>)
    /// Points the buffer has room for: `replace` refills it in place up to this many.
    public let capacity: Int
    let buffer: KernelBuffer
    private let context: GPUContext
    /// The staging buffer and command stream of the uploads, kept for `replace`.
    private let staging: GPUBuffer
    private let stream: CommandStream
    /// Points per upload chunk (16 bytes each): 4 MiB of staging.
    public static let chunkPoints = 262_144

    /// Uploads `count` points produced by `point(i) -> (xyz, rgba8 packed r | g<<8 | b<<16 | a<<24)`.
    /// Vulkan: `vkCmdCopyBuffer` per chunk, one submit and wait per chunk.
    public init(renderer: PointCloudRenderer, count: Int, point: (Int) -> (SIMD3<Float>, UInt32)) throws {
        context = renderer.context
        self.count = count
        capacity = max(count, 1)
        buffer = try KernelBuffer(cache: renderer.textureCache, size: capacity * 16)
        staging = try GPUBuffer(context: context, size: min(capacity, Self.chunkPoints) * 16,
                                usage: VK_BUFFER_USAGE_TRANSFER_SRC_BIT.rawValue, hostVisible: true)
        stream = try CommandStream(context: context)
        bounds = (.zero, .zero)
        bounds = try upload(count: count, point: point)
    }

    /// A DepthKit point cloud (PLY, `export-ply`) with its 8-bit colors.
    public convenience init(renderer: PointCloudRenderer, cloud: PointCloud) throws {
        let positions = cloud.positions, colors = cloud.colors
        try self.init(renderer: renderer, count: positions.count) { i in
            let c = colors[i]
            return (positions[i], UInt32(c.x) | UInt32(c.y) << 8 | UInt32(c.z) << 16 | 0xFF00_0000)
        }
    }

    /// Refills the buffer with `cloud` in place (no allocation on the device or for staging); false,
    /// leaving it as it was, when the cloud is larger than `capacity`. The GPU must not be reading
    /// the buffer meanwhile (the viewer calls it after waiting for the frame in flight).
    public func replace(with cloud: PointCloud) throws -> Bool {
        guard cloud.positions.count <= capacity else { return false }
        let positions = cloud.positions, colors = cloud.colors
        bounds = try upload(count: positions.count) { i in
            let c = colors[i]
            return (positions[i], UInt32(c.x) | UInt32(c.y) << 8 | UInt32(c.z) << 16 | 0xFF00_0000)
        }
        count = positions.count
        return true
    }

    private func upload(count: Int, point: (Int) -> (SIMD3<Float>, UInt32)) throws -> (min: SIMD3<Float>, max: SIMD3<Float>) {
        guard let mapped = staging.mapped else { throw GPUError.unsupported("the staging buffer is not mapped") }
        let chunk = min(capacity, Self.chunkPoints)
        var lo = SIMD3<Float>(repeating: .infinity), hi = SIMD3<Float>(repeating: -.infinity)
        var start = 0
        while start < count {
            let n = min(chunk, count - start)
            let words = mapped.bindMemory(to: Float.self, capacity: n * 4)
            for k in 0..<n {
                let (p, c) = point(start + k)
                lo = pointwiseMin(lo, p); hi = pointwiseMax(hi, p)
                words[4 * k] = p.x; words[4 * k + 1] = p.y; words[4 * k + 2] = p.z
                words[4 * k + 3] = Float(bitPattern: c)
            }
            let cb = try stream.begin()
            var region = VkBufferCopy(srcOffset: 0, dstOffset: VkDeviceSize(start * 16), size: VkDeviceSize(n * 16))
            vkCmdCopyBuffer(cb, staging.buffer, buffer.buffer.buffer, 1, &region)
            _ = try stream.submitAndWait()
            start += n
        }
        return count > 0 ? (lo, hi) : (.zero, .zero)
    }
}

/// The compute rasterizer behind `PointCloudRenderer.method == .compute` (Schütz et al. 2021):
/// project every point, keep the nearest per output pixel with `atomicMin`, resolve into the
/// rgba8 output (background, and for point size > 1 the nearest covered pixel within the radius).
/// With `shaderBufferInt64Atomics` one pass of 64-bit (key << 32 | color) minima; else (or
/// `force32Bit`) a depth pass and a color pass of 32-bit atomics.
final class PointCloudCompute {
    let context: GPUContext
    private let library: ShaderLibrary
    private let cache: TextureCache
    /// The plain passes (no adaptive size): what every draw runs unless asked for more.
    private let plain: Passes
    /// The DL_POINTS_ADAPTIVE variants, made on the first draw with adaptive size.
    private var adaptivePasses: Passes?
    /// Resolve variants by index (`resolveKernel`: plain, adaptive, EDL, both), made on first use;
    /// the plain one is the shader without either #define, so eye-dome lighting and adaptive size
    /// cost nothing when off.
    private var resolves = [ComputeKernel?](repeating: nil, count: 4)
    private var edl: ComputeKernel?
    private var frame: KernelBuffer?
    /// Bytes `frame` holds: keys and colors (8 a pixel), then EDL's log depth (4 a pixel) when lit.
    private var frameCapacity = 0
    private let emptyPoints: KernelBuffer
    private let pointsPerInvocation: Int
    static let pushSize = 120
    static let adaptivePushSize = 128

    /// One set of projection passes: 64-bit where the device has the atomics, else the 32-bit pair.
    private struct Passes {
        let project64: ComputeKernel?
        let depth32: ComputeKernel
        let color32: ComputeKernel
        var all: [ComputeKernel] { [project64, depth32, color32].compactMap { $0 } }
    }

    init(context: GPUContext, cache: TextureCache, library: ShaderLibrary) throws {
        self.context = context
        self.cache = cache
        self.library = library
        plain = try Self.passes(context: context, cache: cache, library: library, adaptive: false)
        resolves[0] = try Self.resolveKernel(context: context, cache: cache, library: library, index: 0)
        emptyPoints = try KernelBuffer(cache: cache, size: 16)
        pointsPerInvocation = Int(DL_POINTS_PER_INVOCATION)
    }

    private static func passes(context: GPUContext, cache: TextureCache, library: ShaderLibrary, adaptive: Bool) throws -> Passes {
        let sets = [cache.sampledLayout, cache.sampledLayout, cache.bufferLayout, cache.bufferLayout]
        func k(_ name: String) throws -> ComputeKernel {
            try ComputeKernel(context: context, library: library, name: adaptive ? name + ":DL_POINTS_ADAPTIVE" : name,
                              setLayouts: sets, pushConstantSize: adaptive ? adaptivePushSize : pushSize,
                              localSize: (Int(DL_POINT_GROUP), 1))
        }
        return Passes(project64: context.bufferInt64Atomics ? try k("pointCloudProject.comp") : nil,
                      depth32: try k("pointCloudDepth32.comp"), color32: try k("pointCloudColor32.comp"))
    }

    /// Resolve variant `index`: bit 0 adaptive size, bit 1 eye-dome lighting's log depth.
    private static func resolveKernel(context: GPUContext, cache: TextureCache, library: ShaderLibrary, index: Int) throws -> ComputeKernel {
        let defines = [index & 1 != 0 ? "DL_RESOLVE_ADAPTIVE" : nil, index & 2 != 0 ? "DL_RESOLVE_EDL" : nil].compactMap { $0 }
        let name = defines.isEmpty ? "pointCloudResolve.comp" : "pointCloudResolve.comp:" + defines.joined(separator: ",")
        return try ComputeKernel(context: context, library: library, name: name,
                                 setLayouts: [cache.bufferLayout, cache.storageLayout],
                                 pushConstantSize: index & 2 != 0 ? 32 : 24)
    }

    private func resolve(_ index: Int) throws -> ComputeKernel {
        if let k = resolves[index] { return k }
        let k = try Self.resolveKernel(context: context, cache: cache, library: library, index: index)
        resolves[index] = k
        return k
    }

    /// Every kernel made so far (for --watch-shaders).
    var kernels: [ComputeKernel] {
        plain.all + (adaptivePasses?.all ?? []) + (resolves + [edl]).compactMap { $0 }
    }

    /// What one draw needs besides the camera: the point source's sets and push words.
    struct Source {
        var depth: VkDescriptorSet
        var color: VkDescriptorSet
        var points: VkDescriptorSet?
        var intrinsics: SIMD4<Float>
        var sizes: SIMD4<Int32>
        var count: Int
        var isBuffer: Bool
    }

    /// Records the passes; `output` goes UNDEFINED → GENERAL → SHADER_READ_ONLY_OPTIMAL.
    func record(_ cb: VkCommandBuffer, source: Source, output: GPUTexture, camera: PointCloudCamera, pointSize: Float,
                background: SIMD4<Float>, colorBy: PointCloudColorBy, colormap: Colormap, range: ClosedRange<Float>,
                stride: Int, force32Bit: Bool, eyeDomeLighting: EyeDomeLighting = EyeDomeLighting(),
                adaptiveScale: Float = 0) throws {
        let adaptive = adaptiveScale > 0 && adaptiveScale.isFinite
        let lighting = eyeDomeLighting.enabled
        let passes: Passes
        if adaptive {
            if adaptivePasses == nil {
                adaptivePasses = try Self.passes(context: context, cache: cache, library: library, adaptive: true)
            }
            passes = adaptivePasses!
        } else {
            passes = plain
        }
        let wide = passes.project64 != nil && !force32Bit
        let pixels = output.width * output.height
        let bytes = pixels * 8   // 64-bit words, or 32-bit keys then 32-bit colors: the same size
        // With eye-dome lighting, then 4 bytes a pixel of log depth. The buffer is kept while it is
        // big enough: a point list moving at a stride is drawn at half size and still at full size,
        // and remaking it at each switch allocated (and grew the resident set) mid-orbit.
        let needed = bytes + (lighting ? pixels * 4 : 0)
        if frame == nil || frameCapacity < needed {
            frame = try KernelBuffer(cache: cache, size: needed)
            frameCapacity = needed
        }
        let frame = frame!
        vkCmdFillBuffer(cb, frame.buffer.buffer, 0, VkDeviceSize(bytes), 0xFFFF_FFFF)
        Barrier.transferToShaders(cb)

        var p = PushWords()
        for v in camera.viewProjection { p.f(v) }
        p.vec4(source.intrinsics)
        p.i(Int(source.sizes.x)); p.i(Int(source.sizes.y)); p.i(Int(source.sizes.z)); p.i(Int(source.sizes.w))
        let flags = Self.flags(source: source.isBuffer ? DL_POINT_SOURCE_BUFFER : DL_POINT_SOURCE_DEPTH,
                               colorBy: colorBy, colormap: colormap, stride: stride, pointSize: pointSize)
        let drawn = (source.count + max(stride, 1) - 1) / max(stride, 1)
        p.i(output.width); p.i(output.height); p.i(source.count); p.i(flags)
        p.f(range.lowerBound); p.f(range.upperBound)
        if adaptive { p.f(adaptiveScale); p.f(Float(max(1, Int(pointSize.rounded())))) }
        // Inline sets and words: nothing allocated per frame.
        let sets = DescriptorSets(source.depth, source.color, frame.set, source.points ?? emptyPoints.set)
        let threads = ((drawn + pointsPerInvocation - 1) / pointsPerInvocation, 1)
        if drawn > 0 {
            if wide, let project64 = passes.project64 {
                project64.dispatch(cb, sets: sets, push: p, threads: threads)
            } else {
                passes.depth32.dispatch(cb, sets: sets, push: p, threads: threads)
                Barrier.computeToCompute(cb)
                passes.color32.dispatch(cb, sets: sets, push: p, threads: threads)
            }
        }
        Barrier.computeToCompute(cb)
        Barrier.image(cb, output.image, VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_GENERAL,
                      from: VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT.rawValue, 0,
                      to: Barrier.compute, VK_ACCESS_SHADER_WRITE_BIT.rawValue)
        var r = PushWords()
        r.i(output.width); r.i(output.height)
        let window = Self.window(pointSize)
        r.i(window.back)
        r.u(packRGBA(background))
        r.u(wide ? 1 : 0)
        r.i(window.reach)
        if lighting {
            let terms = EyeDomeLighting.depthTerms(camera.viewProjection)
            r.f(terms.a); r.f(terms.b)
        }
        let outputSets = DescriptorSets(frame.set, try cache.storageSet(output))
        try resolve((adaptive ? 1 : 0) | (lighting ? 2 : 0)).dispatch(cb, sets: outputSets, push: r,
                                                                      threads: (output.width, output.height))
        if lighting {
            if edl == nil {
                edl = try ComputeKernel(context: context, library: library, name: "pointCloudEDL.comp",
                                        setLayouts: [cache.bufferLayout, cache.storageLayout], pushConstantSize: 20)
            }
            Barrier.computeToCompute(cb)
            var e = PushWords()
            e.i(output.width); e.i(output.height)
            e.i(eyeDomeLighting.radius); e.i(eyeDomeLighting.diagonal); e.f(eyeDomeLighting.factor)
            edl!.dispatch(cb, sets: outputSets, push: e, threads: (output.width, output.height))
        }
        Barrier.image(cb, output.image, VK_IMAGE_LAYOUT_GENERAL, VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL,
                      from: Barrier.compute, VK_ACCESS_SHADER_WRITE_BIT.rawValue,
                      to: Vk.flags(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_FRAGMENT_SHADER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT),
                      Vk.flags(VK_ACCESS_SHADER_READ_BIT, VK_ACCESS_TRANSFER_READ_BIT))
    }

    /// The s×s window an empty pixel searches for the nearest point, as offsets [−back, reach] on
    /// both axes: s = round(pointSize) pixels, back ⌊(s−1)/2⌋, reach ⌊s/2⌋, so a point landed at x
    /// covers [x − ⌊s/2⌋, x + ⌊(s−1)/2⌋] (s = 2: the pixel and its right/lower neighbors, 4 reads
    /// rather than 9).
    static func window(_ pointSize: Float) -> (back: Int, reach: Int) {
        let s = max(1, Int(pointSize.rounded()))
        return ((s - 1) / 2, s / 2)
    }

    /// Whether points land on the pixel nearest their position rather than the one they fall in:
    /// for even sizes, so the s×s square [−s/2, s/2 − 1] around it covers exactly the pixel centers
    /// within s/2 of the point (as a raster point sprite does). Landing by ⌊x⌋ there shifts a point
    /// whose x sits a rounding error below a whole number by one pixel and leaves a one-pixel gap
    /// column (seen at 2× upscaling).
    static func landsOnNearestPixel(_ pointSize: Float) -> Bool {
        max(1, Int(pointSize.rounded())) % 2 == 0
    }

    /// The rasterizer's flags word (DL_POINT_* of dl_codes.h).
    static func flags(source: UInt32, colorBy: PointCloudColorBy, colormap: Colormap, stride: Int, pointSize: Float) -> Int {
        let strideField = UInt32(min(max(stride, 1), 16) - 1)
        var f = source << DL_POINT_SOURCE_SHIFT | colorBy.code << DL_POINT_COLOR_BY_SHIFT
            | colormap.code << DL_POINT_COLORMAP_SHIFT
            | strideField << DL_POINT_STRIDE_SHIFT
        if landsOnNearestPixel(pointSize) { f |= DL_POINT_NEAREST_PIXEL_BIT }
        return Int(f)
    }

    private func packRGBA(_ c: SIMD4<Float>) -> UInt32 {
        func u(_ v: Float) -> UInt32 { UInt32(min(max(v.isNaN ? 0 : v, 0), 1) * 255 + 0.5) }
        return u(c.x) | u(c.y) << 8 | u(c.z) << 16 | u(c.w) << 24
    }
}
