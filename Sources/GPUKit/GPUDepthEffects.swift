import CDepthKit
import CVulkan
import DepthKit
import Foundation

/// The depth-mask stats pass both mask kernels start with: depthMinMax.comp into a small buffer
/// (valid min, max and count of the depth map: what turns 1/d into normalized disparity).
struct DepthStatsPass {
    let kernel: ComputeKernel
    let stats: KernelBuffer
    let reduceRows: Int

    init(_ filterKernel: (String, [DescriptorSetLayout], Int, (x: Int, y: Int)) throws -> ComputeKernel,
         cache: TextureCache, library: ShaderLibrary) throws {
        kernel = try filterKernel("depthMinMax.comp", [cache.sampledLayout, cache.bufferLayout], 8, (Int(DL_REDUCE_SIZE), 1))
        stats = try KernelBuffer(cache: cache, size: 16)
        reduceRows = Int(DL_REDUCE_ROWS)
    }

    /// Records clearing the stats and (when `reduce`) the reduction over `depth` (sampled set
    /// `depthSet`), each followed by a barrier for the readers.
    func encode(_ cb: VkCommandBuffer, depthSet: VkDescriptorSet, width: Int, height: Int, reduce: Bool = true) {
        // min = all ones, max = 0, count = 0
        vkCmdFillBuffer(cb, stats.buffer.buffer, 0, 4, 0xFFFF_FFFF)
        vkCmdFillBuffer(cb, stats.buffer.buffer, 4, 12, 0)
        Barrier.transferToShaders(cb)
        guard reduce else { return }
        var p = PushWords()
        p.i(width); p.i(height)
        // One workgroup per band of DL_REDUCE_ROWS rows; each invocation loops over its pixels.
        let bands = (height + reduceRows - 1) / reduceRows
        kernel.dispatch(cb, sets: DescriptorSets(depthSet, stats.set), push: p, threads: (kernel.localSize.x * bands, 1))
        Barrier.computeToCompute(cb)
    }
}

extension PushWords {
    /// DL_MASK_* of dl_codes.h.
    static func maskCode(_ kind: DepthMaskKind) -> UInt32 {
        switch kind {
        case .highpass: return DL_MASK_HIGHPASS
        case .bandpass: return DL_MASK_BANDPASS
        }
    }

    /// The mask parameters in depthMask.glsl's DLMaskParams order.
    mutating func mask(_ m: DepthMaskSpec) {
        u(Self.maskCode(m.kind)); f(m.focus); f(m.slope); f(m.width)
    }
}

/// depthMask.comp: `DepthMaskFilter` on the GPU. depthFloat32 in; the kernel writes the mask as
/// gray rgba8 at the output size (what the viewer shows), `render` returns it as gray8 like the CPU.
public final class GPUDepthMaskFilter: GPUFilter {
    /// Settable between frames (push constants).
    public var spec: DepthMaskSpec
    public let outputWidth: Int
    public let outputHeight: Int
    private var statsPass: DepthStatsPass!
    private var main: ComputeKernel!
    private var pixelsPerInvocation = 1
    private var rgba: PixelBuffer?

    public init(spec: DepthMaskSpec, outputWidth: Int, outputHeight: Int,
                context: GPUContext, cache: TextureCache, library: ShaderLibrary) throws {
        self.spec = spec
        self.outputWidth = outputWidth
        self.outputHeight = outputHeight
        try super.init(description: spec.kind.rawValue, context: context, cache: cache, allowedInputs: [.depthFloat32])
        statsPass = try DepthStatsPass({ try self.kernel($0, library, sets: $1, push: $2, localSize: $3) }, cache: cache, library: library)
        main = try kernel("depthMask.comp", library, sets: [cache.sampledLayout, cache.storageLayout, cache.bufferLayout], push: 32)
        pixelsPerInvocation = Int(DL_PIXELS_PER_INVOCATION)
    }

    override func outputPixelFormat(for input: PixelFormat) -> PixelFormat { .gray8 }
    override func outputSize(for input: FrameFormat) -> (width: Int, height: Int) { (outputWidth, outputHeight) }

    override func prepareResources(_ input: FrameFormat) throws {
        guard outputWidth > 0, outputHeight > 0 else {
            throw RenderError.invalidParameter("\(description): output size \(outputWidth)x\(outputHeight) must be positive")
        }
        try spec.validate(kernel: description)
    }

    override func kernelTarget(for out: PixelBuffer) -> PixelBuffer {
        if let rgba, rgba.width == out.width, rgba.height == out.height { return rgba }
        let b = PixelBuffer(width: out.width, height: out.height, format: .rgba8)
        rgba = b
        return b
    }

    /// Gray rgba8 → gray8 (R of every pixel).
    override func finish(_ target: PixelBuffer, into out: PixelBuffer) {
        for y in 0..<out.height {
            let s = target.row(y, as: UInt8.self), o = out.row(y, as: UInt8.self)
            for x in 0..<out.width { o[x] = s[4 * x] }
        }
    }

    override func encode(_ cb: VkCommandBuffer, input: GPUTexture, output: GPUTexture) throws {
        try spec.validate(kernel: description)
        let inSet = try textureCache.sampledSet(input)
        statsPass.encode(cb, depthSet: inSet, width: input.width, height: input.height)
        var p = PushWords()
        p.i(output.width); p.i(output.height); p.i(input.width); p.i(input.height); p.mask(spec)
        main.dispatch(cb, sets: DescriptorSets(inSet, try textureCache.storageSet(output), statsPass.stats.set), push: p,
                      threads: pixelThreads(output.width, output.height, pixelsPerInvocation))
    }
}

/// comicEffect.comp, greenscreenEffect.comp, blurEffect.comp (after summedArea.comp): the
/// depth-masked effects of `DepthEffectFilter` on the GPU, with the mask computed from the
/// depth map and scaled to the color size inside the effect kernel. Color (rgba8 or bgra8) and
/// depth (depthFloat32, any size) in; the color's format and size out.
public final class GPUDepthEffectFilter: EffectRenderer {
    public let context: GPUContext
    public let textureCache: TextureCache
    public let kind: DepthEffectKind
    /// Settable between frames (push constants).
    public var mask: DepthMaskSpec
    /// greenscreen: the background (the color's pixel format, any size); nil is solid green.
    public var background: PixelBuffer?
    public var description: String { kind.rawValue }
    public private(set) var inputFormat: FrameFormat?
    public private(set) var secondInputFormat: FrameFormat?
    public private(set) var outputFormat: FrameFormat?
    public private(set) var lastTiming: GPUTiming?
    /// Poll shader files every render and rebuild pipelines on change (`--watch-shaders`).
    public var watchesShaders = false { didSet { kernels.forEach { $0.watchesFiles = watchesShaders } } }
    public var lastShaderError: Error? { kernels.lazy.compactMap(\.lastError).first }

    private let runner: FrameRunner
    private var kernels: [ComputeKernel] = []
    private var statsPass: DepthStatsPass!
    private var main: ComputeKernel!
    private var summedArea: ComputeKernel?
    private var sat: KernelBuffer?
    private var pool: BufferPool?
    private var pixelsPerInvocation = 1

    public init(kind: DepthEffectKind, mask: DepthMaskSpec, context: GPUContext, cache: TextureCache, library: ShaderLibrary) throws {
        self.kind = kind
        self.mask = mask
        self.context = context
        textureCache = cache
        runner = try FrameRunner(cache: cache)
        func make(_ name: String, _ sets: [DescriptorSetLayout], _ push: Int,
                  _ localSize: (x: Int, y: Int) = (Int(DL_LOCAL_SIZE_X), Int(DL_LOCAL_SIZE_Y))) throws -> ComputeKernel {
            let k = try ComputeKernel(context: context, library: library, name: name, setLayouts: sets,
                                      pushConstantSize: push, localSize: localSize)
            kernels.append(k)
            return k
        }
        statsPass = try DepthStatsPass(make, cache: cache, library: library)
        let extra = kind == .blur ? cache.bufferLayout : cache.sampledLayout
        let name: String
        switch kind {
        case .comic: name = "comicEffect.comp"
        case .greenscreen: name = "greenscreenEffect.comp"
        case .blur: name = "blurEffect.comp"
        }
        main = try make(name, [cache.sampledLayout, cache.sampledLayout, cache.storageLayout, cache.bufferLayout, extra], 48)
        if kind == .blur {
            summedArea = try make("summedArea.comp", [cache.sampledLayout, cache.bufferLayout], 12, (Int(DL_REDUCE_SIZE), 1))
        }
        pixelsPerInvocation = Int(DL_PIXELS_PER_INVOCATION)
    }

    public func prepare(input: FrameFormat, secondInput: FrameFormat, outputRetainedBufferCountHint: Int) throws {
        guard input.width > 0, input.height > 0, input.pixelFormat == .rgba8 || input.pixelFormat == .bgra8 else {
            throw RenderError.formatMismatch(kernel: description, expected: "rgba8 or bgra8", got: input)
        }
        guard secondInput.width > 0, secondInput.height > 0, secondInput.pixelFormat == .depthFloat32 else {
            throw RenderError.formatMismatch(kernel: description, expected: "depthFloat32", got: secondInput)
        }
        guard outputRetainedBufferCountHint >= 1 else {
            throw RenderError.invalidParameter("outputRetainedBufferCountHint must be ≥ 1, got \(outputRetainedBufferCountHint)")
        }
        try mask.validate(kernel: description)
        reset()
        if kind == .blur {
            sat = try KernelBuffer(cache: textureCache, size: (input.width + 1) * (input.height + 1) * 16)
        }
        pool = BufferPool(format: input, outputRetainedBufferCountHint: outputRetainedBufferCountHint)
        inputFormat = input
        secondInputFormat = secondInput
        outputFormat = input
    }

    public func reset() {
        pool = nil; sat = nil
        inputFormat = nil; secondInputFormat = nil; outputFormat = nil
    }

    /// The background this frame uses (greenscreen only), checked against the color format.
    private func checkedBackground(_ color: FrameFormat) throws -> PixelBuffer? {
        guard kind == .greenscreen, let background else { return nil }
        guard background.format == color.pixelFormat else {
            throw RenderError.formatMismatch(kernel: description, expected: "background in \(color.pixelFormat)", got: background.frameFormat)
        }
        return background
    }

    public func render(_ color: PixelBuffer, _ depth: PixelBuffer) throws -> PixelBuffer {
        try requirePrepared(color, depth)
        guard let pool else { throw RenderError.notPrepared(description) }
        var bg = try checkedBackground(color.frameFormat)
        // The same buffer twice would be one texture uploaded twice: use a copy.
        if let b = bg, b === color { bg = b.clone() }
        if watchesShaders { kernels.forEach { $0.reloadIfNeeded() } }
        let out = try pool.makeBuffer()
        lastTiming = try runner.run(inputs: [color, depth] + (bg.map { [$0] } ?? []), output: out) { cb, tin, tout in
            try encode(cb, color: tin[0], depth: tin[1], background: tin.count > 2 ? tin[2] : nil, output: tout)
        }
        return out
    }

    /// Records the stats pass, the summed-area passes (blur) and the effect from textures in
    /// SHADER_READ_ONLY into `output` (in GENERAL).
    func encode(_ cb: VkCommandBuffer, color: GPUTexture, depth: GPUTexture, background: GPUTexture?, output: GPUTexture) throws {
        guard let inputFormat else { throw RenderError.notPrepared(description) }
        guard color.width == inputFormat.width, color.height == inputFormat.height else {
            throw RenderError.formatMismatch(kernel: description, expected: inputFormat.description,
                                             got: FrameFormat(width: color.width, height: color.height, pixelFormat: color.pixelFormat))
        }
        try mask.validate(kernel: description)
        let colorSet = try textureCache.sampledSet(color), depthSet = try textureCache.sampledSet(depth)
        statsPass.encode(cb, depthSet: depthSet, width: depth.width, height: depth.height)
        let extraSet: VkDescriptorSet
        var extraSize = (color.width, color.height)
        if kind == .blur, let summedArea, let sat {
            let sw = color.width + 1
            vkCmdFillBuffer(cb, sat.buffer.buffer, 0, VkDeviceSize(sw * 16), 0)
            Barrier.transferToShaders(cb)
            for pass in 0..<2 {
                var p = PushWords()
                p.i(color.width); p.i(color.height); p.u(UInt32(pass))
                summedArea.dispatch(cb, sets: DescriptorSets(colorSet, sat.set), push: p, threads: (pass == 0 ? color.height : sw, 1))
                Barrier.computeToCompute(cb)
            }
            extraSet = sat.set
        } else if let background {
            extraSet = try textureCache.sampledSet(background)
            extraSize = (background.width, background.height)
        } else {
            extraSet = colorSet
        }
        var p = PushWords()
        p.i(color.width); p.i(color.height); p.i(depth.width); p.i(depth.height); p.i(extraSize.0); p.i(extraSize.1)
        p.mask(mask)
        p.u(output.pixelFormat == .bgra8 ? 1 : 0); p.u(background != nil ? 1 : 0)
        main.dispatch(cb, sets: DescriptorSets(colorSet, depthSet, try textureCache.storageSet(output), statsPass.stats.set, extraSet),
                      push: p, threads: ((color.width + pixelsPerInvocation - 1) / pixelsPerInvocation, color.height))
    }
}

extension GPUFilterFactory {
    public func makeMask(_ spec: DepthMaskSpec, outputWidth: Int, outputHeight: Int) throws -> FilterRenderer {
        try makeGPUMask(spec, outputWidth: outputWidth, outputHeight: outputHeight)
    }

    public func makeGPUMask(_ spec: DepthMaskSpec, outputWidth: Int, outputHeight: Int) throws -> GPUDepthMaskFilter {
        let f = try GPUDepthMaskFilter(spec: spec, outputWidth: outputWidth, outputHeight: outputHeight,
                                       context: context, cache: textureCache, library: library)
        f.watchesShaders = watchesShaders
        return f
    }

    public func makeEffect(_ kind: DepthEffectKind, mask: DepthMaskSpec) throws -> EffectRenderer {
        try makeGPUEffect(kind, mask: mask)
    }

    public func makeGPUEffect(_ kind: DepthEffectKind, mask: DepthMaskSpec) throws -> GPUDepthEffectFilter {
        let e = try GPUDepthEffectFilter(kind: kind, mask: mask, context: context, cache: textureCache, library: library)
        e.watchesShaders = watchesShaders
        return e
    }
}

extension GPUFrameRecorder {
    /// Runs a prepared depth effect from `color` and `depth` (and greenscreen's `background`)
    /// into `output` (the color's format and size), all textures of this recorder.
    public func applyEffect(_ cb: VkCommandBuffer, _ effect: GPUDepthEffectFilter, color: GPUTexture, depth: GPUTexture,
                            background: GPUTexture? = nil, output: GPUTexture) throws {
        guard effect.textureCache === cache else { throw GPUError.unsupported("\(effect.description) belongs to another texture cache") }
        if effect.watchesShaders { effect.reloadShaders() }
        Barrier.image(cb, output.image, VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_GENERAL,
                      from: VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT.rawValue, 0,
                      to: Barrier.compute, VK_ACCESS_SHADER_WRITE_BIT.rawValue)
        try effect.encode(cb, color: color, depth: depth, background: background, output: output)
        Barrier.image(cb, output.image, VK_IMAGE_LAYOUT_GENERAL, VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL,
                      from: Barrier.compute, VK_ACCESS_SHADER_WRITE_BIT.rawValue,
                      to: Barrier.allShaders, VK_ACCESS_SHADER_READ_BIT.rawValue)
    }
}

extension GPUDepthEffectFilter {
    func reloadShaders() { kernels.forEach { $0.reloadIfNeeded() } }
}
