import CVulkan
import DepthKit
import Foundation

/// A GPU image standing for one `PixelBuffer`: the image, its views, descriptor sets and (where
/// the device imports host memory) a `VkBuffer` over the buffer's own pages.
public final class GPUTexture {
    let context: GPUContext
    /// The buffer this texture mirrors; weak so pools still see their buffers as free.
    weak var owner: PixelBuffer?
    public let width: Int
    public let height: Int
    public let pixelFormat: PixelFormat
    /// The image and its memory, released after `deinit` has destroyed the views.
    private let allocation: DeviceImage
    var image: VkImage { allocation.image }
    /// Sampled view (swizzled so shaders always see RGBA).
    let sampledView: VkImageView
    /// R32_UINT view of 8-bit color images, written with manually packed pixels.
    let storageView: VkImageView?
    var sampledSet: VkDescriptorSet?
    var storageSet: VkDescriptorSet?
    var framebuffer: VkFramebuffer?
    /// Host memory imported as a buffer (no copy on the CPU); nil → the staging ring.
    let hostBuffer: GPUBuffer?
    var lastUsedEpoch = 0
    /// The pool this texture's descriptor sets come from (kept alive by the texture).
    fileprivate var poolStrong: DescriptorPool?

    init(context: GPUContext, buffer: PixelBuffer, hostBuffer: GPUBuffer?) throws {
        self.context = context
        owner = buffer
        width = buffer.width
        height = buffer.height
        pixelFormat = buffer.format
        self.hostBuffer = hostBuffer
        let device = context.device
        let format: VkFormat
        var usage = Vk.flags(VK_IMAGE_USAGE_SAMPLED_BIT, VK_IMAGE_USAGE_TRANSFER_DST_BIT, VK_IMAGE_USAGE_TRANSFER_SRC_BIT)
        var flags: VkImageCreateFlags = 0
        var swizzle = VkComponentMapping(r: VK_COMPONENT_SWIZZLE_IDENTITY, g: VK_COMPONENT_SWIZZLE_IDENTITY,
                                         b: VK_COMPONENT_SWIZZLE_IDENTITY, a: VK_COMPONENT_SWIZZLE_IDENTITY)
        let color: Bool
        switch buffer.format {
        case .rgba8, .bgra8:
            format = VK_FORMAT_R8G8B8A8_UNORM
            usage |= Vk.flags(VK_IMAGE_USAGE_STORAGE_BIT, VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT)
            flags = VK_IMAGE_CREATE_MUTABLE_FORMAT_BIT.rawValue
            if buffer.format == .bgra8 {
                swizzle = VkComponentMapping(r: VK_COMPONENT_SWIZZLE_B, g: VK_COMPONENT_SWIZZLE_G,
                                             b: VK_COMPONENT_SWIZZLE_R, a: VK_COMPONENT_SWIZZLE_A)
            }
            color = true
        case .depthFloat32, .disparityFloat32:
            format = VK_FORMAT_R32_SFLOAT
            color = false
        case .rgb8, .gray8, .gray16, .depthFloat16, .disparityFloat16:
            throw GPUError.unsupported("the GPU texture cache takes rgba8, bgra8 or depthFloat32 buffers, not \(buffer.format)")
        }
        guard buffer.bytesPerRow % buffer.format.bytesPerPixel == 0 else {
            throw GPUError.unsupported("bytesPerRow \(buffer.bytesPerRow) is not a whole number of \(buffer.format) pixels")
        }

        let allocation = try DeviceImage(context: context, format: format, width: width, height: height, usage: usage,
                                         flags: flags, what: "an image")
        self.allocation = allocation
        let sv = try RenderPass.imageView(device, image: allocation.image, format: format, components: swizzle)
        do {
            storageView = color ? try RenderPass.imageView(device, image: allocation.image, format: VK_FORMAT_R32_UINT) : nil
        } catch {
            vkDestroyImageView(device, sv, nil)
            throw error
        }
        sampledView = sv
    }

    deinit {
        let device = context.device
        if let pool = poolStrong {
            if let s = sampledSet { pool.free(s) }
            if let s = storageSet { pool.free(s) }
            pool.reserved -= 2
        }
        if let framebuffer { vkDestroyFramebuffer(device, framebuffer, nil) }
        if let storageView { vkDestroyImageView(device, storageView, nil) }
        vkDestroyImageView(device, sampledView, nil)
    }
}

/// Maps CPU `PixelBuffer`s to GPU images and back: the Linux counterpart of CVMetalTextureCache.
///
/// Images, views, descriptor sets and framebuffers are made once per buffer identity
/// (`ObjectIdentifier`, checked against a weak reference so a reused address is not mistaken
/// for the old buffer), format and size, and reused every frame after. Uploads and readbacks
/// copy between the image and the buffer's own pages imported with `VK_EXT_external_memory_host`
/// where the device allows (page-aligned `PixelBuffer` storage), else through one reused staging
/// buffer. `flush()` drops textures whose buffers are gone or that were not used since the
/// previous flush. The counters let tests assert that steady-state frames create nothing.
///
/// Imported pages must stay allocated while imported: the import holds the buffer's
/// `PixelStorage`, so the pages outlive a released buffer until its texture is dropped (at the
/// next flush or when a new texture is made); the GPU never uses such a texture again.
///
/// `@unchecked Sendable`: `pools`, `entries`, `copySources`, the staging ring, `pendingReadbacks`,
/// the epochs and `_counters` are read and written under `lock`: `flush` and the counters take it,
/// and the internal recording calls (`texture(for:)`, the descriptor sets, uploads, readbacks) run
/// inside `withFrame`, which holds it for the whole frame. The Vulkan handles are `let`s.
public final class TextureCache: @unchecked Sendable {
    /// Creation counters (and two per-frame counters, uploads and readbacks).
    public struct Counters: Equatable, Sendable, CustomStringConvertible {
        public var imagesCreated = 0
        public var memoryAllocations = 0
        public var descriptorSetsAllocated = 0
        public var framebuffersCreated = 0
        public var hostImports = 0
        public var stagingUploads = 0
        public var stagingReadbacks = 0
        public var uploads = 0
        public var readbacks = 0
        /// The counters that must not move in steady state.
        public var creations: [Int] { [imagesCreated, memoryAllocations, descriptorSetsAllocated, framebuffersCreated, hostImports] }
        public var description: String {
            "images \(imagesCreated), memory \(memoryAllocations), sets \(descriptorSetsAllocated), framebuffers \(framebuffersCreated), imports \(hostImports), staging up/down \(stagingUploads)/\(stagingReadbacks)"
        }
    }

    public let context: GPUContext
    /// True when uploads and readbacks use imported host memory.
    public let usesHostImport: Bool
    let sampledLayout: DescriptorSetLayout
    let storageLayout: DescriptorSetLayout
    /// One storage buffer at binding 0 (kernels' histograms and statistics).
    let bufferLayout: DescriptorSetLayout
    let sampler: VkSampler
    /// An rgba8 render pass for offscreen graphics (the fragment mixer); compatible framebuffers live on textures.
    let renderPass: VkRenderPass
    private var pools: [DescriptorPool] = []
    private var entries: [ObjectIdentifier: GPUTexture] = [:]
    /// Buffers imported only to be copied from (`recordCopy`), with no image of their own.
    private var copySources: [ObjectIdentifier: CopySource] = [:]
    private var staging: GPUBuffer?
    private var stagingOffset = 0
    private var retiredStaging: [GPUBuffer] = []
    private var pendingReadbacks: [(staging: GPUBuffer, offset: Int, buffer: PixelBuffer)] = []
    private var epoch = 1
    private var flushEpoch = 0
    private var _counters = Counters()
    let lock = NSLock()

    public var counters: Counters { lock.withLock { _counters } }
    /// Textures currently cached.
    public var count: Int { lock.withLock { entries.count } }

    /// - Parameter allowHostImport: false forces the staging path (tests cover both).
    public init(context: GPUContext, allowHostImport: Bool = true) throws {
        self.context = context
        usesHostImport = allowHostImport && context.hostImportAlignment != nil && Self.canImportBuffers(context)
        let stages = Vk.flags(VK_SHADER_STAGE_COMPUTE_BIT, VK_SHADER_STAGE_FRAGMENT_BIT)
        sampledLayout = try DescriptorSetLayout(context: context, bindings: [(VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, stages)])
        storageLayout = try DescriptorSetLayout(context: context, bindings: [(VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, VK_SHADER_STAGE_COMPUTE_BIT.rawValue)])
        bufferLayout = try DescriptorSetLayout(context: context, bindings: [(VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, VK_SHADER_STAGE_COMPUTE_BIT.rawValue)])

        var si = VkSamplerCreateInfo()
        si.sType = VK_STRUCTURE_TYPE_SAMPLER_CREATE_INFO
        si.magFilter = VK_FILTER_LINEAR
        si.minFilter = VK_FILTER_LINEAR
        si.mipmapMode = VK_SAMPLER_MIPMAP_MODE_NEAREST
        si.addressModeU = VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE
        si.addressModeV = VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE
        si.addressModeW = VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE
        si.maxLod = 0
        var s: VkSampler?
        try vkCheck(vkCreateSampler(context.device, &si, nil, &s), "vkCreateSampler")
        guard let s else { throw VulkanError(result: VK_ERROR_OUT_OF_HOST_MEMORY, call: "vkCreateSampler") }
        sampler = s

        let color = RenderPass.attachment(format: VK_FORMAT_R8G8B8A8_UNORM, load: VK_ATTACHMENT_LOAD_OP_DONT_CARE,
                                          store: VK_ATTACHMENT_STORE_OP_STORE, finalLayout: VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL)
        // Color writes → the readback copy (the transition to TRANSFER_SRC happens at the end).
        let dependency = VkSubpassDependency(srcSubpass: 0, dstSubpass: VK_SUBPASS_EXTERNAL,
                                             srcStageMask: VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT.rawValue,
                                             dstStageMask: VK_PIPELINE_STAGE_TRANSFER_BIT.rawValue,
                                             srcAccessMask: VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT.rawValue,
                                             dstAccessMask: VK_ACCESS_TRANSFER_READ_BIT.rawValue, dependencyFlags: 0)
        do {
            renderPass = try RenderPass.make(context.device, color: color, dependencies: [dependency])
        } catch {
            vkDestroySampler(context.device, s, nil)
            throw error
        }
    }

    deinit {
        entries.removeAll()
        pools.removeAll()
        vkDestroyRenderPass(context.device, renderPass, nil)
        vkDestroySampler(context.device, sampler, nil)
    }

    private static func canImportBuffers(_ context: GPUContext) -> Bool {
        var info = VkPhysicalDeviceExternalBufferInfo()
        info.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_BUFFER_INFO
        info.usage = Vk.flags(VK_BUFFER_USAGE_TRANSFER_SRC_BIT, VK_BUFFER_USAGE_TRANSFER_DST_BIT)
        info.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT
        var props = VkExternalBufferProperties()
        props.sType = VK_STRUCTURE_TYPE_EXTERNAL_BUFFER_PROPERTIES
        vkGetPhysicalDeviceExternalBufferProperties(context.physicalDevice, &info, &props)
        return props.externalMemoryProperties.externalMemoryFeatures & VK_EXTERNAL_MEMORY_FEATURE_IMPORTABLE_BIT.rawValue != 0
    }

    /// Drops textures whose buffers were deallocated or that were not used since the last flush.
    public func flush() {
        lock.withLock {
            entries = entries.filter { _, t in t.owner != nil && t.lastUsedEpoch > flushEpoch }
            copySources = copySources.filter { _, c in c.owner != nil && c.lastUsedEpoch > flushEpoch }
            flushEpoch = epoch
            epoch += 1
        }
    }

    // MARK: Frame recording (callers hold `lock` for the whole frame)

    /// Runs one frame's recording with the cache locked: resets the staging ring first and copies
    /// staged readbacks into their buffers after `body` (which submits and waits) returns.
    func withFrame<R>(_ body: () throws -> R) throws -> R {
        try lock.withLock {
            stagingOffset = 0
            pendingReadbacks.removeAll(keepingCapacity: true)
            epoch += 1
            defer { retiredStaging.removeAll(); pendingReadbacks.removeAll(keepingCapacity: true) }
            let r = try body()
            for p in pendingReadbacks { copyOut(p.staging, from: p.offset, into: p.buffer) }
            return r
        }
    }

    /// The texture for `buffer`, made on first use.
    func texture(for buffer: PixelBuffer) throws -> GPUTexture {
        let key = ObjectIdentifier(buffer)
        if let t = entries[key] {
            if t.owner === buffer && t.width == buffer.width && t.height == buffer.height && t.pixelFormat == buffer.format {
                t.lastUsedEpoch = epoch
                return t
            }
            entries[key] = nil
        }
        // A new buffer: drop textures of buffers that are gone (their pages may be freed).
        entries = entries.filter { $0.value.owner != nil }
        let t = try GPUTexture(context: context, buffer: buffer, hostBuffer: usesHostImport ? importHost(buffer) : nil)
        _counters.imagesCreated += 1
        _counters.memoryAllocations += 1
        t.lastUsedEpoch = epoch
        entries[key] = t
        return t
    }

    /// `buffer`'s pages imported as a `VkBuffer` that holds its storage (imported pages must stay
    /// allocated while imported), counted; nil when the device refuses them.
    private func importHost(_ buffer: PixelBuffer) -> GPUBuffer? {
        guard let host = GPUBuffer(context: context, importing: buffer.baseAddress, size: buffer.allocationSize) else { return nil }
        host.importedStorage = buffer.storage
        _counters.hostImports += 1
        _counters.memoryAllocations += 1
        return host
    }

    /// The pool a texture's sets come from: each texture reserves two slots (sampled + storage)
    /// in one pool on first use, so its sets always fit and are freed into the pool they came from.
    private func pool(for t: GPUTexture) throws -> DescriptorPool {
        if let p = t.poolStrong { return p }
        let p: DescriptorPool
        if let last = pools.last, last.reserved + 2 <= DescriptorPool.texturePoolSize {
            p = last
        } else if let free = pools.first(where: { $0.reserved + 2 <= DescriptorPool.texturePoolSize }) {
            p = free
        } else {
            p = try DescriptorPool(context: context, maxSets: DescriptorPool.texturePoolSize,
                                   sizes: [(VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, DescriptorPool.texturePoolSize),
                                           (VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, DescriptorPool.texturePoolSize)])
            pools.append(p)
        }
        p.reserved += 2
        t.poolStrong = p
        return p
    }

    /// Set with the texture as a combined image sampler at binding 0.
    func sampledSet(_ t: GPUTexture) throws -> VkDescriptorSet {
        if let s = t.sampledSet { return s }
        let set = try pool(for: t).allocate(sampledLayout)
        _counters.descriptorSetsAllocated += 1
        DescriptorWrite.image(context.device, set: set, binding: 0, type: VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER,
                              view: t.sampledView, sampler: sampler)
        t.sampledSet = set
        return set
    }

    /// Set with the texture's R32_UINT view as a storage image at binding 0.
    func storageSet(_ t: GPUTexture) throws -> VkDescriptorSet {
        if let s = t.storageSet { return s }
        guard let view = t.storageView else { throw GPUError.unsupported("\(t.pixelFormat) cannot be a kernel output") }
        let set = try pool(for: t).allocate(storageLayout)
        _counters.descriptorSetsAllocated += 1
        DescriptorWrite.image(context.device, set: set, binding: 0, type: VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, view: view, sampler: nil)
        t.storageSet = set
        return set
    }

    /// Framebuffer of an rgba8 texture for `renderPass`.
    func framebuffer(_ t: GPUTexture) throws -> VkFramebuffer {
        if let f = t.framebuffer { return f }
        guard t.pixelFormat == .rgba8 else { throw GPUError.unsupported("graphics output must be rgba8, not \(t.pixelFormat)") }
        let fb = try RenderPass.framebuffer(context.device, renderPass: renderPass, views: [t.sampledView],
                                            width: UInt32(t.width), height: UInt32(t.height))
        _counters.framebuffersCreated += 1
        t.framebuffer = fb
        return fb
    }

    private func stagingRegion(_ size: Int) throws -> (GPUBuffer, Int) {
        let aligned = (stagingOffset + 255) & ~255
        if let s = staging, aligned + size <= s.size {
            stagingOffset = aligned + size
            return (s, aligned)
        }
        if let old = staging { retiredStaging.append(old) }
        let capacity = max(size, (staging?.size ?? 0) * 2, 1 << 20)
        let s = try GPUBuffer(context: context, size: capacity,
                              usage: Vk.flags(VK_BUFFER_USAGE_TRANSFER_SRC_BIT, VK_BUFFER_USAGE_TRANSFER_DST_BIT), hostVisible: true)
        _counters.memoryAllocations += 1
        staging = s
        stagingOffset = size
        return (s, 0)
    }

    private func region(_ t: GPUTexture, bufferOffset: Int, rowLength: Int) -> VkBufferImageCopy {
        region(width: t.width, height: t.height, at: (0, 0), bufferOffset: bufferOffset, rowLength: rowLength)
    }

    /// A `width`×`height` copy between a buffer (rows `rowLength` texels apart) and an image at `at`.
    private func region(width: Int, height: Int, at: (x: Int32, y: Int32), bufferOffset: Int, rowLength: Int) -> VkBufferImageCopy {
        VkBufferImageCopy(bufferOffset: VkDeviceSize(bufferOffset), bufferRowLength: UInt32(rowLength), bufferImageHeight: 0,
                          imageSubresource: VkImageSubresourceLayers(aspectMask: VK_IMAGE_ASPECT_COLOR_BIT.rawValue,
                                                                     mipLevel: 0, baseArrayLayer: 0, layerCount: 1),
                          imageOffset: VkOffset3D(x: at.x, y: at.y, z: 0),
                          imageExtent: VkExtent3D(width: UInt32(width), height: UInt32(height), depth: 1))
    }

    /// Records the copy of `buffer`'s pixels into its texture. Vulkan: `vkCmdCopyBufferToImage`.
    func recordUpload(_ cb: VkCommandBuffer, _ t: GPUTexture, from buffer: PixelBuffer) throws {
        _counters.uploads += 1
        if let host = t.hostBuffer {
            var reg = region(t, bufferOffset: 0, rowLength: buffer.bytesPerRow / buffer.format.bytesPerPixel)
            vkCmdCopyBufferToImage(cb, host.buffer, t.image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &reg)
            return
        }
        let rowBytes = buffer.width * buffer.format.bytesPerPixel
        let (s, offset) = try stagingRegion(rowBytes * buffer.height)
        guard let mapped = s.mapped else { throw GPUError.unsupported("staging buffer is not mapped") }
        if buffer.isPacked {
            memcpy(mapped + offset, buffer.baseAddress, rowBytes * buffer.height)
        } else {
            for y in 0..<buffer.height { memcpy(mapped + offset + y * rowBytes, buffer.row(y), rowBytes) }
        }
        _counters.stagingUploads += 1
        var reg = region(t, bufferOffset: offset, rowLength: buffer.width)
        vkCmdCopyBufferToImage(cb, s.buffer, t.image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &reg)
    }

    /// Records the copy of `buffer`'s pixels, bytes as they are, into `image` (TRANSFER_DST_OPTIMAL,
    /// a 4-byte color format, large enough) at (x, y), from the buffer's own imported pages: made
    /// once per buffer, like a texture, with no image of its own. Only with host import (the
    /// caller checks `usesHostImport`): a staging copy would need the frame's staging ring, and
    /// this may be recorded outside the frame that filled it. Vulkan: `vkCmdCopyBufferToImage`.
    func recordCopy(_ cb: VkCommandBuffer, from buffer: PixelBuffer, to image: VkImage, x: Int32, y: Int32) throws {
        guard usesHostImport else { throw GPUError.unsupported("copying a buffer into an image needs host import") }
        guard buffer.format.bytesPerPixel == 4, buffer.bytesPerRow % 4 == 0 else {
            throw GPUError.unsupported("only 4-byte pixels are copied into images, not \(buffer.format)")
        }
        let key = ObjectIdentifier(buffer)
        let source: CopySource
        if let c = copySources[key], c.owner === buffer {
            source = c
        } else {
            copySources = copySources.filter { $0.value.owner != nil }
            guard let host = importHost(buffer) else { throw GPUError.unsupported("the device did not import the buffer's memory") }
            source = CopySource(owner: buffer, buffer: host)
            copySources[key] = source
        }
        source.lastUsedEpoch = epoch
        _counters.uploads += 1
        var reg = region(width: buffer.width, height: buffer.height, at: (x, y), bufferOffset: 0, rowLength: buffer.bytesPerRow / 4)
        vkCmdCopyBufferToImage(cb, source.buffer.buffer, image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &reg)
    }

    /// Records the copy of the texture into `buffer` (finished by `withFrame`). Vulkan: `vkCmdCopyImageToBuffer`.
    func recordReadback(_ cb: VkCommandBuffer, _ t: GPUTexture, into buffer: PixelBuffer) throws {
        _counters.readbacks += 1
        if let host = t.hostBuffer {
            var reg = region(t, bufferOffset: 0, rowLength: buffer.bytesPerRow / buffer.format.bytesPerPixel)
            vkCmdCopyImageToBuffer(cb, t.image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, host.buffer, 1, &reg)
            return
        }
        let rowBytes = buffer.width * buffer.format.bytesPerPixel
        let (s, offset) = try stagingRegion(rowBytes * buffer.height)
        _counters.stagingReadbacks += 1
        var reg = region(t, bufferOffset: offset, rowLength: buffer.width)
        vkCmdCopyImageToBuffer(cb, t.image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, s.buffer, 1, &reg)
        pendingReadbacks.append((s, offset, buffer))
    }

    private func copyOut(_ staging: GPUBuffer, from offset: Int, into buffer: PixelBuffer) {
        guard let mapped = staging.mapped else { return }
        let rowBytes = buffer.width * buffer.format.bytesPerPixel
        if buffer.isPacked {
            memcpy(buffer.baseAddress, mapped + offset, rowBytes * buffer.height)
        } else {
            for y in 0..<buffer.height { memcpy(buffer.row(y), mapped + offset + y * rowBytes, rowBytes) }
        }
    }
}

/// A `PixelBuffer`'s pages imported as a `VkBuffer` to copy from (`TextureCache.recordCopy`).
private final class CopySource {
    weak var owner: PixelBuffer?
    let buffer: GPUBuffer
    var lastUsedEpoch = 0
    init(owner: PixelBuffer, buffer: GPUBuffer) {
        self.owner = owner
        self.buffer = buffer
    }
}
