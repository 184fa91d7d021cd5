import CDepthKit
import CVulkan
import Foundation

/// Rebuilds a pipeline when its shader files change (`--watch-shaders`): on a compile error the
/// old pipeline keeps running and `lastError` says why.
public final class PipelineReloader {
    public let library: ShaderLibrary
    public private(set) var shaders: [CompiledShader]
    /// The last reload's error (nil after a successful reload).
    public private(set) var lastError: Error?
    public private(set) var reloadCount = 0
    private var lastCheck = DispatchTime(uptimeNanoseconds: 0)
    /// Seconds between modification-time polls.
    public var pollInterval: Double = 0.25

    public init(library: ShaderLibrary, names: [String]) throws {
        self.library = library
        shaders = try names.map { try library.shader(named: $0) }
    }

    /// Polls the files (at most every `pollInterval`) and calls `rebuild` with fresh SPIR-V when
    /// one changed. Returns true when the pipeline was swapped.
    @discardableResult
    public func reloadIfNeeded(force: Bool = false, _ rebuild: ([CompiledShader]) throws -> Void) -> Bool {
        if !force && milliseconds(since: lastCheck) < pollInterval * 1000 { return false }
        lastCheck = .now()
        guard force || shaders.contains(where: library.isStale) else { return false }
        do {
            let fresh = try shaders.map { try library.shader(named: $0.name) }
            try rebuild(fresh)
            shaders = fresh
            lastError = nil
            reloadCount += 1
            return true
        } catch {
            // Remember the new modification dates so a broken file is not recompiled every poll.
            shaders = shaders.map { s in
                CompiledShader(name: s.name, code: s.code,
                               dependencies: s.dependencies.mapValues { _ in Date.distantPast }.merging(
                                   s.dependencies.keys.map { ($0, ShaderLibrary.modificationDate($0) ?? .distantPast) },
                                   uniquingKeysWith: { $1 }),
                               fromCache: s.fromCache)
            }
            lastError = error
            return false
        }
    }
}

/// A `VkShaderModule`, destroyed on deinit.
final class ShaderModule {
    let context: GPUContext
    let handle: VkShaderModule

    init(context: GPUContext, code: [UInt32]) throws {
        self.context = context
        var m: VkShaderModule?
        let r: VkResult = code.withUnsafeBufferPointer { cp in
            var info = VkShaderModuleCreateInfo()
            info.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO
            info.codeSize = cp.count * 4
            info.pCode = cp.baseAddress
            return vkCreateShaderModule(context.device, &info, nil, &m)
        }
        try vkCheck(r, "vkCreateShaderModule")
        guard let m else { throw VulkanError(result: VK_ERROR_OUT_OF_HOST_MEMORY, call: "vkCreateShaderModule") }
        handle = m
    }

    deinit { vkDestroyShaderModule(context.device, handle, nil) }
}

/// A `VkPipelineLayout`, destroyed on deinit.
public final class PipelineLayout {
    let context: GPUContext
    public let handle: VkPipelineLayout
    let pushConstantSize: Int
    private let setLayouts: [DescriptorSetLayout]

    public init(context: GPUContext, setLayouts: [DescriptorSetLayout], pushConstantSize: Int, stages: VkShaderStageFlags) throws {
        precondition(pushConstantSize % 4 == 0 && pushConstantSize <= 128, "push constants: a multiple of 4, at most 128 bytes")
        self.context = context
        self.setLayouts = setLayouts
        self.pushConstantSize = pushConstantSize
        let handles: [VkDescriptorSetLayout?] = setLayouts.map(\.handle)
        var range = VkPushConstantRange(stageFlags: stages, offset: 0, size: UInt32(pushConstantSize))
        var layout: VkPipelineLayout?
        let r: VkResult = handles.withUnsafeBufferPointer { hp in
            withUnsafePointer(to: &range) { rp in
                var info = VkPipelineLayoutCreateInfo()
                info.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO
                info.setLayoutCount = UInt32(hp.count)
                info.pSetLayouts = hp.baseAddress
                info.pushConstantRangeCount = pushConstantSize > 0 ? 1 : 0
                info.pPushConstantRanges = pushConstantSize > 0 ? rp : nil
                return vkCreatePipelineLayout(context.device, &info, nil, &layout)
            }
        }
        try vkCheck(r, "vkCreatePipelineLayout")
        guard let layout else { throw VulkanError(result: VK_ERROR_OUT_OF_HOST_MEMORY, call: "vkCreatePipelineLayout") }
        handle = layout
    }

    deinit { vkDestroyPipelineLayout(context.device, handle, nil) }
}

/// A `VkPipeline`, destroyed on deinit.
public final class Pipeline {
    let context: GPUContext
    public let handle: VkPipeline
    /// Takes ownership of `handle`.
    public init(context: GPUContext, handle: VkPipeline) { self.context = context; self.handle = handle }
    deinit { vkDestroyPipeline(context.device, handle, nil) }
}

/// One compute shader of `Shaders/` as a pipeline: binds, pushes constants, dispatches with the
/// group count rounded up (shaders bounds-check partial tiles).
public final class ComputeKernel {
    let context: GPUContext
    let name: String
    let layout: PipelineLayout
    private(set) var pipeline: Pipeline
    private let reloader: PipelineReloader
    /// Workgroup size: the shader's `local_size` from dl_codes.h (`DL_LOCAL_SIZE_X/Y` by default).
    public let localSize: (x: Int, y: Int)
    /// Poll the shader files and rebuild on change (`--watch-shaders`).
    public var watchesFiles = false

    /// The last reload's compile error; the previous pipeline keeps running meanwhile.
    public var lastError: Error? { reloader.lastError }
    public var reloadCount: Int { reloader.reloadCount }

    init(context: GPUContext, library: ShaderLibrary, name: String, setLayouts: [DescriptorSetLayout],
         pushConstantSize: Int, localSize: (x: Int, y: Int) = (Int(DL_LOCAL_SIZE_X), Int(DL_LOCAL_SIZE_Y))) throws {
        self.context = context
        self.name = name
        self.localSize = localSize
        layout = try PipelineLayout(context: context, setLayouts: setLayouts, pushConstantSize: pushConstantSize,
                                    stages: VK_SHADER_STAGE_COMPUTE_BIT.rawValue)
        reloader = try PipelineReloader(library: library, names: [name])
        pipeline = try Self.build(context: context, layout: layout, code: reloader.shaders[0].code)
    }

    private static func build(context: GPUContext, layout: PipelineLayout, code: [UInt32]) throws -> Pipeline {
        let module = try ShaderModule(context: context, code: code)
        var p: VkPipeline?
        let r: VkResult = "main".withCString { entry in
            var stage = VkPipelineShaderStageCreateInfo()
            stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO
            stage.stage = VK_SHADER_STAGE_COMPUTE_BIT
            stage.module = module.handle
            stage.pName = entry
            var info = VkComputePipelineCreateInfo()
            info.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO
            info.stage = stage
            info.layout = layout.handle
            return vkCreateComputePipelines(context.device, nil, 1, &info, nil, &p)
        }
        try vkCheck(r, "vkCreateComputePipelines")
        guard let p else { throw VulkanError(result: VK_ERROR_OUT_OF_HOST_MEMORY, call: "vkCreateComputePipelines") }
        return Pipeline(context: context, handle: p)
    }

    /// Rebuilds the pipeline if a shader file changed (only when `watchesFiles`, or `force`).
    @discardableResult
    public func reloadIfNeeded(force: Bool = false) -> Bool {
        guard watchesFiles || force else { return false }
        return reloader.reloadIfNeeded(force: force) { shaders in
            pipeline = try Self.build(context: context, layout: layout, code: shaders[0].code)
        }
    }

    /// Records: bind pipeline and sets, push constants (exactly the layout's size), dispatch
    /// ⌈threads / localSize⌉ groups. Vulkan: `vkCmdBindPipeline`, `vkCmdPushConstants`, `vkCmdDispatch`.
    func dispatch(_ cb: VkCommandBuffer, sets: DescriptorSets, push: PushWords, threads: (x: Int, y: Int)) {
        precondition(push.count * 4 == layout.pushConstantSize, "push constants do not match the layout")
        vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.handle)
        sets.withUnsafeBufferPointer { sp in
            vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, layout.handle, 0, UInt32(sp.count), sp.baseAddress, 0, nil)
        }
        if push.count > 0 {
            push.withUnsafeBytes { pp in
                vkCmdPushConstants(cb, layout.handle, VK_SHADER_STAGE_COMPUTE_BIT.rawValue, 0, UInt32(pp.count), pp.baseAddress)
            }
        }
        let gx = (threads.x + localSize.x - 1) / localSize.x
        let gy = (threads.y + localSize.y - 1) / localSize.y
        vkCmdDispatch(cb, UInt32(max(gx, 1)), UInt32(max(gy, 1)), 1)
    }
}

/// Push-constant words: floats by bit pattern, in declaration order (std430 scalars and vec4s).
/// Held inline (Vulkan guarantees 128 bytes of push constants; every layout here fits), so
/// building and pushing them allocates nothing per frame.
struct PushWords {
    static let capacity = 32
    private var storage: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
                          UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) =
        (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    private(set) var count = 0
    mutating func u(_ v: UInt32) {
        precondition(count < Self.capacity, "more than 128 bytes of push constants")
        withUnsafeMutableBytes(of: &storage) { $0.storeBytes(of: v, toByteOffset: count * 4, as: UInt32.self) }
        count += 1
    }
    mutating func f(_ v: Float) { u(v.bitPattern) }
    mutating func i(_ v: Int) { u(UInt32(truncatingIfNeeded: v)) }
    mutating func vec4(_ v: SIMD4<Float>) { f(v.x); f(v.y); f(v.z); f(v.w) }
    /// The words as bytes, without copying them anywhere.
    func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try Swift.withUnsafeBytes(of: storage) { try body(UnsafeRawBufferPointer(rebasing: $0[0..<(count * 4)])) }
    }
}

/// Up to six descriptor sets for one dispatch, held inline: `dispatch(sets: DescriptorSets(a, b), …)`
/// allocates nothing, where an array literal would allocate its buffer on every call.
struct DescriptorSets {
    private var storage: (VkDescriptorSet?, VkDescriptorSet?, VkDescriptorSet?, VkDescriptorSet?, VkDescriptorSet?, VkDescriptorSet?)
    let count: Int
    init(_ a: VkDescriptorSet, _ b: VkDescriptorSet? = nil, _ c: VkDescriptorSet? = nil, _ d: VkDescriptorSet? = nil,
         _ e: VkDescriptorSet? = nil, _ f: VkDescriptorSet? = nil) {
        storage = (a, b, c, d, e, f)
        count = f != nil ? 6 : e != nil ? 5 : d != nil ? 4 : c != nil ? 3 : b != nil ? 2 : 1
    }
    func withUnsafeBufferPointer<R>(_ body: (UnsafeBufferPointer<VkDescriptorSet?>) throws -> R) rethrows -> R {
        var copy = storage
        return try Swift.withUnsafeMutableBytes(of: &copy) { raw in
            try body(UnsafeBufferPointer(start: raw.baseAddress!.assumingMemoryBound(to: VkDescriptorSet?.self), count: count))
        }
    }
}
