import CDepthKit
import CVulkan
import DepthKit
import Foundation

/// What every GPU `FilterRenderer` shares: prepare/reset, the output pool sized by the hint,
/// one `FrameRunner`, shader reloading and the last frame's timing.
public class GPUFilter: FilterRenderer {
    public let context: GPUContext
    public let textureCache: TextureCache
    public let description: String
    public private(set) var inputFormat: FrameFormat?
    public private(set) var outputFormat: FrameFormat?
    /// Upload + dispatch + readback of the last `render`, and its GPU dispatch time.
    public private(set) var lastTiming: GPUTiming?
    /// Poll shader files every render and rebuild pipelines on change (`--watch-shaders`).
    public var watchesShaders = false { didSet { kernels.forEach { $0.watchesFiles = watchesShaders } } }
    /// The last shader reload's error; the previous pipeline keeps running.
    public var lastShaderError: Error? { kernels.lazy.compactMap(\.lastError).first }

    let runner: FrameRunner
    var kernels: [ComputeKernel] = []
    private var pool: BufferPool?
    private let allowedInputs: [PixelFormat]

    init(description: String, context: GPUContext, cache: TextureCache, allowedInputs: [PixelFormat]) throws {
        self.description = description
        self.context = context
        self.textureCache = cache
        self.allowedInputs = allowedInputs
        runner = try FrameRunner(cache: cache)
    }

    /// Output format for an input: rgba8 for depth kernels, the input's for color kernels.
    func outputPixelFormat(for input: PixelFormat) -> PixelFormat { .rgba8 }
    /// Output size for an input: the input's (override for kernels that resample).
    func outputSize(for input: FrameFormat) -> (width: Int, height: Int) { (input.width, input.height) }
    /// What the kernel writes for `out` (override when the output format is not a kernel output:
    /// the kernel writes another buffer and `finish` converts it into `out`).
    func kernelTarget(for out: PixelBuffer) -> PixelBuffer { out }
    func finish(_ target: PixelBuffer, into out: PixelBuffer) {}
    /// Allocates per-size resources (override; called by `prepare`).
    func prepareResources(_ input: FrameFormat) throws {}
    /// Records the kernel between the upload and the readback (override).
    func encode(_ cb: VkCommandBuffer, input: GPUTexture, output: GPUTexture) throws {}

    public func prepare(input: FrameFormat, outputRetainedBufferCountHint: Int) throws {
        guard input.width > 0, input.height > 0, allowedInputs.contains(input.pixelFormat) else {
            throw RenderError.formatMismatch(kernel: description, expected: allowedInputs.map(\.description).joined(separator: " or "),
                                             got: input)
        }
        guard outputRetainedBufferCountHint >= 1 else {
            throw RenderError.invalidParameter("outputRetainedBufferCountHint must be ≥ 1, got \(outputRetainedBufferCountHint)")
        }
        reset()
        try prepareResources(input)
        let size = outputSize(for: input)
        let out = FrameFormat(width: size.width, height: size.height, pixelFormat: outputPixelFormat(for: input.pixelFormat))
        pool = BufferPool(format: out, outputRetainedBufferCountHint: outputRetainedBufferCountHint)
        inputFormat = input
        outputFormat = out
    }

    public func reset() {
        pool = nil
        inputFormat = nil
        outputFormat = nil
    }

    public func render(_ buffer: PixelBuffer) throws -> PixelBuffer {
        guard let pool, let inputFormat else { throw RenderError.notPrepared(description) }
        guard buffer.frameFormat == inputFormat else {
            throw RenderError.formatMismatch(kernel: description, expected: inputFormat.description, got: buffer.frameFormat)
        }
        if watchesShaders { kernels.forEach { $0.reloadIfNeeded() } }
        let out = try pool.makeBuffer()
        let target = kernelTarget(for: out)
        lastTiming = try runner.run(inputs: [buffer], output: target) { cb, tin, tout in
            try encode(cb, input: tin[0], output: tout)
        }
        if target !== out { finish(target, into: out); out.markModified() }
        return out
    }

    /// Invocations covering a w×h image when each invocation colors `pixelsPerInvocation`
    /// consecutive pixels of a row (`DL_PIXELS_PER_INVOCATION` of common.glsl).
    func pixelThreads(_ w: Int, _ h: Int, _ pixelsPerInvocation: Int) -> (x: Int, y: Int) {
        ((w + pixelsPerInvocation - 1) / pixelsPerInvocation, h)
    }

    func kernel(_ name: String, _ library: ShaderLibrary, sets: [DescriptorSetLayout], push: Int,
                localSize: (x: Int, y: Int) = (Int(DL_LOCAL_SIZE_X), Int(DL_LOCAL_SIZE_Y))) throws -> ComputeKernel {
        let k = try ComputeKernel(context: context, library: library, name: name, setLayouts: sets,
                                  pushConstantSize: push, localSize: localSize)
        kernels.append(k)
        return k
    }
}

/// A small device-local storage buffer with its own descriptor set (binding 0).
final class KernelBuffer {
    let buffer: GPUBuffer
    let set: VkDescriptorSet
    private let pool: DescriptorPool

    init(cache: TextureCache, size: Int) throws {
        buffer = try GPUBuffer(context: cache.context, size: max(size, 16),
                               usage: Vk.flags(VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, VK_BUFFER_USAGE_TRANSFER_DST_BIT),
                               hostVisible: false)
        pool = try DescriptorPool(context: cache.context, maxSets: 1, sizes: [(VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1)])
        set = try pool.allocate(cache.bufferLayout)
        DescriptorWrite.buffer(cache.context.device, set: set, binding: 0, buffer: buffer)
    }
}

/// rosyEffect.comp: out = (R, 0, B, 255); rgba8 or bgra8 in, the same out.
public final class GPURosyFilter: GPUFilter {
    private var main: ComputeKernel!
    private var pixelsPerInvocation = 1

    public init(context: GPUContext, cache: TextureCache, library: ShaderLibrary) throws {
        try super.init(description: "rosy", context: context, cache: cache, allowedInputs: [.rgba8, .bgra8])
        main = try kernel("rosyEffect.comp", library, sets: [cache.sampledLayout, cache.storageLayout], push: 12)
        pixelsPerInvocation = Int(DL_PIXELS_PER_INVOCATION)
    }

    override func outputPixelFormat(for input: PixelFormat) -> PixelFormat { input }

    override func encode(_ cb: VkCommandBuffer, input: GPUTexture, output: GPUTexture) throws {
        var p = PushWords()
        p.i(input.width); p.i(input.height); p.u(output.pixelFormat == .bgra8 ? 1 : 0)
        main.dispatch(cb, sets: DescriptorSets(try textureCache.sampledSet(input), try textureCache.storageSet(output)), push: p,
                      threads: pixelThreads(input.width, input.height, pixelsPerInvocation))
    }
}

/// colorMatrix.comp: out = clamp(M·(R,G,B,A) + bias); rgba8 or bgra8 in, the same out.
public final class GPUColorMatrixFilter: GPUFilter {
    public let matrix: ColorMatrix
    private var main: ComputeKernel!
    private var pixelsPerInvocation = 1

    public init(matrix: ColorMatrix, context: GPUContext, cache: TextureCache, library: ShaderLibrary) throws {
        self.matrix = matrix
        try super.init(description: "colorMatrix", context: context, cache: cache, allowedInputs: [.rgba8, .bgra8])
        main = try kernel("colorMatrix.comp", library, sets: [cache.sampledLayout, cache.storageLayout], push: 92)
        pixelsPerInvocation = Int(DL_PIXELS_PER_INVOCATION)
    }

    override func outputPixelFormat(for input: PixelFormat) -> PixelFormat { input }

    override func prepareResources(_ input: FrameFormat) throws {
        let m = matrix
        for v in [m.r, m.g, m.b, m.a, m.bias] where !(v.x.isFinite && v.y.isFinite && v.z.isFinite && v.w.isFinite) {
            throw RenderError.invalidParameter("colorMatrix: matrix entries must be finite")
        }
    }

    override func encode(_ cb: VkCommandBuffer, input: GPUTexture, output: GPUTexture) throws {
        var p = PushWords()
        p.vec4(matrix.r); p.vec4(matrix.g); p.vec4(matrix.b); p.vec4(matrix.a); p.vec4(matrix.bias)
        p.i(input.width); p.i(input.height); p.u(output.pixelFormat == .bgra8 ? 1 : 0)
        main.dispatch(cb, sets: DescriptorSets(try textureCache.sampledSet(input), try textureCache.storageSet(output)), push: p,
                      threads: pixelThreads(input.width, input.height, pixelsPerInvocation))
    }
}

/// depthToGrayscale.comp: v = clamp((d − offset)/range), offset/range given or the frame's
/// min and max − min from depthMinMax.comp (a GPU reduction); depthFloat32 in, rgba8 out.
public final class GPUDepthToGrayscaleFilter: GPUFilter {
    /// Settable between frames (push constants); nil = from the frame.
    public var offset: Float?
    public var range: Float?
    private var statsPass: DepthStatsPass!
    private var main: ComputeKernel!
    private var pixelsPerInvocation = 1

    public init(offset: Float?, range: Float?, context: GPUContext, cache: TextureCache, library: ShaderLibrary) throws {
        self.offset = offset
        self.range = range
        try super.init(description: "grayscale", context: context, cache: cache, allowedInputs: [.depthFloat32])
        statsPass = try DepthStatsPass({ try self.kernel($0, library, sets: $1, push: $2, localSize: $3) }, cache: cache, library: library)
        pixelsPerInvocation = Int(DL_PIXELS_PER_INVOCATION)
        main = try kernel("depthToGrayscale.comp", library,
                          sets: [cache.sampledLayout, cache.storageLayout, cache.bufferLayout], push: 24)
    }

    override func prepareResources(_ input: FrameFormat) throws {
        if let o = offset, !o.isFinite { throw RenderError.invalidParameter("grayscale: offset must be finite") }
        if let r = range, !r.isFinite { throw RenderError.invalidParameter("grayscale: range must be finite") }
    }

    override func encode(_ cb: VkCommandBuffer, input: GPUTexture, output: GPUTexture) throws {
        try prepareResources(FrameFormat(width: input.width, height: input.height, pixelFormat: input.pixelFormat))
        let inSet = try textureCache.sampledSet(input)
        statsPass.encode(cb, depthSet: inSet, width: input.width, height: input.height, reduce: offset == nil || range == nil)
        var p = PushWords()
        p.i(input.width); p.i(input.height)
        p.f(offset ?? 0); p.f(range ?? 0)
        p.u(offset == nil ? 1 : 0); p.u(range == nil ? 1 : 0)
        main.dispatch(cb, sets: DescriptorSets(inSet, try textureCache.storageSet(output), statsPass.stats.set), push: p,
                      threads: pixelThreads(input.width, input.height, pixelsPerInvocation))
    }
}

/// depthToJET.comp and friends: equalized (depthHistogram.comp → depthPrefixSum.comp → color
/// pass, all on the GPU) or fixed range; any `Colormap`; depthFloat32 in, rgba8 out.
public final class GPUDepthColormapFilter: GPUFilter {
    /// Settable between frames (a push constant).
    public var colormap: Colormap
    /// A raw DL_COLORMAP_* code pushed instead of `colormap.code`: for the test that an unknown code
    /// comes out magenta, as it does in C (no `Colormap` case can name one).
    var codeForTesting: UInt32?
    /// Settable between frames; a new equalization range re-sizes the histogram on the next frame.
    public var range: DepthRange { didSet { if range != oldValue { rangeChanged = true } } }
    private var rangeChanged = false
    private var histogram: ComputeKernel!
    private var prefixSum: ComputeKernel!
    private var main: ComputeKernel!
    private var bins = 1
    private var counts: KernelBuffer?
    private var pixelsPerInvocation = 1
    private var histogramRun = 1

    public init(colormap: Colormap, range: DepthRange, context: GPUContext, cache: TextureCache, library: ShaderLibrary) throws {
        self.colormap = colormap
        self.range = range
        try super.init(description: colormap.rawValue, context: context, cache: cache, allowedInputs: [.depthFloat32])
        histogram = try kernel("depthHistogram.comp", library, sets: [cache.sampledLayout, cache.bufferLayout], push: 20,
                               localSize: (Int(DL_RUN_GROUP_X), Int(DL_RUN_GROUP_Y)))
        prefixSum = try kernel("depthPrefixSum.comp", library, sets: [cache.bufferLayout], push: 4, localSize: (Int(DL_SCAN_SIZE), 1))
        main = try kernel("depthToJET.comp", library, sets: [cache.sampledLayout, cache.storageLayout, cache.bufferLayout], push: 32)
        pixelsPerInvocation = Int(DL_PIXELS_PER_INVOCATION)
        histogramRun = Int(DL_HISTOGRAM_RUN)
    }

    override func prepareResources(_ input: FrameFormat) throws {
        let n = try range.validatedBinCount(kernel: description)
        if case .equalized = range {
            if counts == nil || n != bins { counts = try KernelBuffer(cache: textureCache, size: n * 4) }
            bins = n
        } else if counts == nil {
            counts = try KernelBuffer(cache: textureCache, size: 16)
        }
    }

    override func encode(_ cb: VkCommandBuffer, input: GPUTexture, output: GPUTexture) throws {
        if rangeChanged {
            try prepareResources(FrameFormat(width: input.width, height: input.height, pixelFormat: input.pixelFormat))
            rangeChanged = false
        }
        guard let counts else { throw RenderError.notPrepared(description) }
        let inSet = try textureCache.sampledSet(input)
        var lo: Float = 0, hi: Float = 1, perMeter: Float = 1, equalized: UInt32 = 0
        switch range {
        case let .equalized(a, b, m):
            lo = a; hi = b; perMeter = Float(m); equalized = 1
            vkCmdFillBuffer(cb, counts.buffer.buffer, 0, VkDeviceSize(VK_WHOLE_SIZE), 0)
            Barrier.transferToShaders(cb)
            var p = PushWords()
            p.i(input.width); p.i(input.height); p.f(lo); p.f(perMeter); p.i(bins)
            // One invocation per run of DL_HISTOGRAM_RUN consecutive pixels of a row.
            histogram.dispatch(cb, sets: DescriptorSets(inSet, counts.set), push: p,
                               threads: pixelThreads(input.width, input.height, histogramRun))
            Barrier.computeToCompute(cb)
            var q = PushWords()
            q.i(bins)
            prefixSum.dispatch(cb, sets: DescriptorSets(counts.set), push: q, threads: (prefixSum.localSize.x, 1))
            Barrier.computeToCompute(cb)
        case let .fixed(a, b):
            lo = a; hi = b
        }
        var p = PushWords()
        p.i(input.width); p.i(input.height)
        p.u(codeForTesting ?? colormap.code); p.u(equalized)
        p.f(lo); p.f(hi); p.f(perMeter); p.i(bins)
        main.dispatch(cb, sets: DescriptorSets(inSet, try textureCache.storageSet(output), counts.set), push: p,
                      threads: pixelThreads(input.width, input.height, pixelsPerInvocation))
    }

}
