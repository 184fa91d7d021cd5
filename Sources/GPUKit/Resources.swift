import CVulkan
import Foundation

/// A `VkBuffer` and its own `VkDeviceMemory`, destroyed on deinit.
final class GPUBuffer {
    let context: GPUContext
    let buffer: VkBuffer
    let memory: VkDeviceMemory
    let size: Int
    /// Mapped pointer for host-visible buffers this class allocated (not for imports).
    let mapped: UnsafeMutableRawPointer?
    /// For imports: the host pages' owner, kept alive for as long as they are imported
    /// (Vulkan requires imported host memory to outlive the VkDeviceMemory).
    var importedStorage: AnyObject?

    /// A buffer in fresh memory. Vulkan: `vkCreateBuffer`, `vkAllocateMemory`, `vkBindBufferMemory`, `vkMapMemory`.
    init(context: GPUContext, size: Int, usage: VkBufferUsageFlags, hostVisible: Bool) throws {
        self.context = context
        self.size = size
        let device = context.device
        buffer = try Self.makeBuffer(device, size: size, usage: usage, external: false)
        var req = VkMemoryRequirements()
        vkGetBufferMemoryRequirements(device, buffer, &req)
        let required: UInt32 = hostVisible ? Vk.flags(VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT, VK_MEMORY_PROPERTY_HOST_COHERENT_BIT)
                                           : VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT.rawValue
        let preferred: UInt32 = hostVisible ? VK_MEMORY_PROPERTY_HOST_CACHED_BIT.rawValue : 0
        guard let type = context.memoryType(bits: req.memoryTypeBits, required: required, preferred: preferred)
                ?? context.memoryType(bits: req.memoryTypeBits, required: hostVisible ? required : 0) else {
            vkDestroyBuffer(device, buffer, nil)
            throw GPUError.unsupported("no memory type for a \(hostVisible ? "host-visible" : "device") buffer")
        }
        let mem: VkDeviceMemory
        do {
            mem = try allocateMemory(device, size: req.size, type: type)
        } catch {
            vkDestroyBuffer(device, buffer, nil)
            throw error
        }
        memory = mem
        do {
            try vkCheck(vkBindBufferMemory(device, buffer, mem, 0), "vkBindBufferMemory")
            if hostVisible {
                var p: UnsafeMutableRawPointer?
                try vkCheck(vkMapMemory(device, mem, 0, VkDeviceSize(VK_WHOLE_SIZE), 0, &p), "vkMapMemory")
                mapped = p
            } else {
                mapped = nil
            }
        } catch {
            vkDestroyBuffer(device, buffer, nil)
            vkFreeMemory(device, mem, nil)
            throw error
        }
    }

    /// A buffer over host memory the caller owns (`VK_EXT_external_memory_host`); nil when the
    /// device cannot import this pointer. The memory must stay allocated while the buffer lives.
    /// Vulkan: `vkGetMemoryHostPointerPropertiesEXT`, `vkAllocateMemory` with `VkImportMemoryHostPointerInfoEXT`.
    init?(context: GPUContext, importing pointer: UnsafeMutableRawPointer, size: Int) {
        guard let align = context.hostImportAlignment, let getProps = context.getMemoryHostPointerProperties,
              Int(bitPattern: pointer) % align == 0, size % align == 0, size > 0 else { return nil }
        let device = context.device
        let handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT
        var hostProps = VkMemoryHostPointerPropertiesEXT()
        hostProps.sType = VK_STRUCTURE_TYPE_MEMORY_HOST_POINTER_PROPERTIES_EXT
        guard getProps(device, handleType, pointer, &hostProps) == VK_SUCCESS,
              let b = try? Self.makeBuffer(device, size: size,
                                           usage: Vk.flags(VK_BUFFER_USAGE_TRANSFER_SRC_BIT, VK_BUFFER_USAGE_TRANSFER_DST_BIT),
                                           external: true) else { return nil }
        var req = VkMemoryRequirements()
        vkGetBufferMemoryRequirements(device, b, &req)
        guard req.size <= VkDeviceSize(size),
              let type = context.memoryType(bits: req.memoryTypeBits & hostProps.memoryTypeBits,
                                            required: Vk.flags(VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT, VK_MEMORY_PROPERTY_HOST_COHERENT_BIT)) else {
            vkDestroyBuffer(device, b, nil)
            return nil
        }
        var importInfo = VkImportMemoryHostPointerInfoEXT()
        importInfo.sType = VK_STRUCTURE_TYPE_IMPORT_MEMORY_HOST_POINTER_INFO_EXT
        importInfo.handleType = handleType
        importInfo.pHostPointer = pointer
        var mem: VkDeviceMemory?
        let r: VkResult = withUnsafePointer(to: &importInfo) { ip in
            var alloc = VkMemoryAllocateInfo()
            alloc.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO
            alloc.pNext = UnsafeRawPointer(ip)
            alloc.allocationSize = VkDeviceSize(size)
            alloc.memoryTypeIndex = type
            return vkAllocateMemory(device, &alloc, nil, &mem)
        }
        guard r == VK_SUCCESS, let mem, vkBindBufferMemory(device, b, mem, 0) == VK_SUCCESS else {
            vkDestroyBuffer(device, b, nil)
            if let mem { vkFreeMemory(device, mem, nil) }
            return nil
        }
        self.context = context
        self.buffer = b
        self.memory = mem
        self.size = size
        self.mapped = nil
    }

    private static func makeBuffer(_ device: VkDevice, size: Int, usage: VkBufferUsageFlags, external: Bool) throws -> VkBuffer {
        var ext = VkExternalMemoryBufferCreateInfo()
        ext.sType = VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO
        ext.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT.rawValue
        var buffer: VkBuffer?
        let r: VkResult = withUnsafePointer(to: &ext) { ep in
            var info = VkBufferCreateInfo()
            info.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO
            info.pNext = external ? UnsafeRawPointer(ep) : nil
            info.size = VkDeviceSize(size)
            info.usage = usage
            info.sharingMode = VK_SHARING_MODE_EXCLUSIVE
            return vkCreateBuffer(device, &info, nil, &buffer)
        }
        try vkCheck(r, "vkCreateBuffer")
        guard let buffer else { throw VulkanError(result: VK_ERROR_OUT_OF_HOST_MEMORY, call: "vkCreateBuffer") }
        return buffer
    }

    deinit {
        vkDestroyBuffer(context.device, buffer, nil)
        vkFreeMemory(context.device, memory, nil)
    }
}

/// Fresh memory of one type, owned by the caller; a success without a handle counts as
/// OUT_OF_DEVICE_MEMORY. Vulkan: `vkAllocateMemory`.
func allocateMemory(_ device: VkDevice, size: VkDeviceSize, type: UInt32) throws -> VkDeviceMemory {
    var alloc = VkMemoryAllocateInfo()
    alloc.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO
    alloc.allocationSize = size
    alloc.memoryTypeIndex = type
    var mem: VkDeviceMemory?
    let r = vkAllocateMemory(device, &alloc, nil, &mem)
    guard r == VK_SUCCESS, let mem else {
        throw VulkanError(result: r == VK_SUCCESS ? VK_ERROR_OUT_OF_DEVICE_MEMORY : r, call: "vkAllocateMemory")
    }
    return mem
}

/// A 2D `VkImage` (one mip level, one layer, optimal tiling, starting UNDEFINED) in its own
/// memory, device-local where the device has it; destroyed on deinit, after its owner's views.
final class DeviceImage {
    let context: GPUContext
    let image: VkImage
    let memory: VkDeviceMemory

    /// - Parameter what: names the image in the error when no memory type fits.
    /// Vulkan: `vkCreateImage`, `vkAllocateMemory`, `vkBindImageMemory`.
    init(context: GPUContext, format: VkFormat, width: Int, height: Int, usage: VkImageUsageFlags,
         flags: VkImageCreateFlags = 0, what: String) throws {
        self.context = context
        let device = context.device
        var info = VkImageCreateInfo()
        info.sType = VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO
        info.flags = flags
        info.imageType = VK_IMAGE_TYPE_2D
        info.format = format
        info.extent = VkExtent3D(width: UInt32(width), height: UInt32(height), depth: 1)
        info.mipLevels = 1
        info.arrayLayers = 1
        info.samples = VK_SAMPLE_COUNT_1_BIT
        info.tiling = VK_IMAGE_TILING_OPTIMAL
        info.usage = usage
        info.sharingMode = VK_SHARING_MODE_EXCLUSIVE
        info.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED
        var img: VkImage?
        try vkCheck(vkCreateImage(device, &info, nil, &img), "vkCreateImage")
        guard let img else { throw VulkanError(result: VK_ERROR_OUT_OF_HOST_MEMORY, call: "vkCreateImage") }
        var req = VkMemoryRequirements()
        vkGetImageMemoryRequirements(device, img, &req)
        guard let type = context.memoryType(bits: req.memoryTypeBits, required: VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT.rawValue)
                ?? context.memoryType(bits: req.memoryTypeBits, required: 0) else {
            vkDestroyImage(device, img, nil)
            throw GPUError.unsupported("no memory type for \(what)")
        }
        let mem: VkDeviceMemory
        do {
            mem = try allocateMemory(device, size: req.size, type: type)
        } catch {
            vkDestroyImage(device, img, nil)
            throw error
        }
        do {
            try vkCheck(vkBindImageMemory(device, img, mem, 0), "vkBindImageMemory")
        } catch {
            vkDestroyImage(device, img, nil)
            vkFreeMemory(device, mem, nil)
            throw error
        }
        image = img
        memory = mem
    }

    deinit {
        vkDestroyImage(context.device, image, nil)
        vkFreeMemory(context.device, memory, nil)
    }
}

/// A `VkDescriptorSetLayout`, destroyed on deinit.
public final class DescriptorSetLayout {
    let context: GPUContext
    public let handle: VkDescriptorSetLayout

    /// - Parameter bindings: (descriptor type, stages) for bindings 0, 1, …
    public init(context: GPUContext, bindings: [(VkDescriptorType, VkShaderStageFlags)]) throws {
        self.context = context
        let b: [VkDescriptorSetLayoutBinding] = bindings.enumerated().map { i, t in
            var x = VkDescriptorSetLayoutBinding()
            x.binding = UInt32(i)
            x.descriptorType = t.0
            x.descriptorCount = 1
            x.stageFlags = t.1
            return x
        }
        var layout: VkDescriptorSetLayout?
        let r: VkResult = b.withUnsafeBufferPointer { bp in
            var info = VkDescriptorSetLayoutCreateInfo()
            info.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO
            info.bindingCount = UInt32(bp.count)
            info.pBindings = bp.baseAddress
            return vkCreateDescriptorSetLayout(context.device, &info, nil, &layout)
        }
        try vkCheck(r, "vkCreateDescriptorSetLayout")
        guard let layout else { throw VulkanError(result: VK_ERROR_OUT_OF_HOST_MEMORY, call: "vkCreateDescriptorSetLayout") }
        handle = layout
    }

    deinit { vkDestroyDescriptorSetLayout(context.device, handle, nil) }
}

/// A `VkDescriptorPool` that frees sets individually, destroyed (with its sets) on deinit.
public final class DescriptorPool {
    let context: GPUContext
    public let handle: VkDescriptorPool
    /// Sets the texture cache has promised from this pool.
    var reserved = 0
    static let texturePoolSize = 64

    public init(context: GPUContext, maxSets: Int, sizes: [(VkDescriptorType, Int)]) throws {
        self.context = context
        let ps: [VkDescriptorPoolSize] = sizes.map { VkDescriptorPoolSize(type: $0.0, descriptorCount: UInt32($0.1)) }
        var pool: VkDescriptorPool?
        let r: VkResult = ps.withUnsafeBufferPointer { pp in
            var info = VkDescriptorPoolCreateInfo()
            info.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO
            info.flags = VK_DESCRIPTOR_POOL_CREATE_FREE_DESCRIPTOR_SET_BIT.rawValue
            info.maxSets = UInt32(maxSets)
            info.poolSizeCount = UInt32(pp.count)
            info.pPoolSizes = pp.baseAddress
            return vkCreateDescriptorPool(context.device, &info, nil, &pool)
        }
        try vkCheck(r, "vkCreateDescriptorPool")
        guard let pool else { throw VulkanError(result: VK_ERROR_OUT_OF_HOST_MEMORY, call: "vkCreateDescriptorPool") }
        handle = pool
    }

    /// One set of `layout`; throws `VulkanError` (OUT_OF_POOL_MEMORY) when full.
    public func allocate(_ layout: DescriptorSetLayout) throws -> VkDescriptorSet {
        var l: VkDescriptorSetLayout? = layout.handle
        var set: VkDescriptorSet?
        let r: VkResult = withUnsafePointer(to: &l) { lp in
            var info = VkDescriptorSetAllocateInfo()
            info.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO
            info.descriptorPool = handle
            info.descriptorSetCount = 1
            info.pSetLayouts = lp
            return vkAllocateDescriptorSets(context.device, &info, &set)
        }
        try vkCheck(r, "vkAllocateDescriptorSets")
        guard let set else { throw VulkanError(result: VK_ERROR_OUT_OF_POOL_MEMORY, call: "vkAllocateDescriptorSets") }
        return set
    }

    func free(_ set: VkDescriptorSet) {
        var s: VkDescriptorSet? = set
        _ = vkFreeDescriptorSets(context.device, handle, 1, &s)
    }

    deinit { vkDestroyDescriptorPool(context.device, handle, nil) }
}

/// One-descriptor writes. Vulkan: `vkUpdateDescriptorSets`.
public enum DescriptorWrite {
    /// A storage image (read in GENERAL) or a combined image sampler (read in SHADER_READ_ONLY_OPTIMAL).
    public static func image(_ device: VkDevice, set: VkDescriptorSet, binding: UInt32, type: VkDescriptorType,
                             view: VkImageView, sampler: VkSampler?) {
        var info = VkDescriptorImageInfo(sampler: sampler, imageView: view,
                                         imageLayout: type == VK_DESCRIPTOR_TYPE_STORAGE_IMAGE ? VK_IMAGE_LAYOUT_GENERAL : VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL)
        withUnsafePointer(to: &info) { ip in
            write(device, set: set, binding: binding, type: type) { $0.pImageInfo = ip }
        }
    }

    /// The whole of `buffer` as a storage buffer.
    static func buffer(_ device: VkDevice, set: VkDescriptorSet, binding: UInt32, buffer: GPUBuffer) {
        var info = VkDescriptorBufferInfo(buffer: buffer.buffer, offset: 0, range: VkDeviceSize(buffer.size))
        withUnsafePointer(to: &info) { ip in
            write(device, set: set, binding: binding, type: VK_DESCRIPTOR_TYPE_STORAGE_BUFFER) { $0.pBufferInfo = ip }
        }
    }

    private static func write(_ device: VkDevice, set: VkDescriptorSet, binding: UInt32, type: VkDescriptorType,
                              _ payload: (inout VkWriteDescriptorSet) -> Void) {
        var w = VkWriteDescriptorSet()
        w.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET
        w.dstSet = set
        w.dstBinding = binding
        w.descriptorCount = 1
        w.descriptorType = type
        payload(&w)
        vkUpdateDescriptorSets(device, 1, &w, 0, nil)
    }
}

/// Pipeline barriers depthlens records. Images are rewritten whole every frame, so each frame
/// starts them from `VK_IMAGE_LAYOUT_UNDEFINED`: uploads → TRANSFER_DST → SHADER_READ_ONLY,
/// compute outputs → GENERAL → TRANSFER_SRC, render-pass outputs → COLOR_ATTACHMENT → TRANSFER_SRC.
enum Barrier {
    static func memory(_ cb: VkCommandBuffer, from src: VkPipelineStageFlags, _ srcAccess: VkAccessFlags,
                       to dst: VkPipelineStageFlags, _ dstAccess: VkAccessFlags) {
        var b = VkMemoryBarrier()
        b.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER
        b.srcAccessMask = srcAccess
        b.dstAccessMask = dstAccess
        vkCmdPipelineBarrier(cb, src, dst, 0, 1, &b, 0, nil, 0, nil)
    }

    static let transfer = VK_PIPELINE_STAGE_TRANSFER_BIT.rawValue
    static let shaders = Vk.flags(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_FRAGMENT_SHADER_BIT)
    static let compute = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT.rawValue
    static let shaderRW = Vk.flags(VK_ACCESS_SHADER_READ_BIT, VK_ACCESS_SHADER_WRITE_BIT)

    /// Transfer writes (uploads, fills) → shader reads and writes.
    static func transferToShaders(_ cb: VkCommandBuffer) {
        memory(cb, from: transfer, VK_ACCESS_TRANSFER_WRITE_BIT.rawValue, to: shaders, shaderRW)
    }

    /// One compute pass's writes → the next compute pass.
    static func computeToCompute(_ cb: VkCommandBuffer) {
        memory(cb, from: compute, VK_ACCESS_SHADER_WRITE_BIT.rawValue, to: compute, shaderRW)
    }

    /// Readback copies → host reads after the fence.
    static func transferToHost(_ cb: VkCommandBuffer) {
        memory(cb, from: transfer, VK_ACCESS_TRANSFER_WRITE_BIT.rawValue,
               to: VK_PIPELINE_STAGE_HOST_BIT.rawValue, VK_ACCESS_HOST_READ_BIT.rawValue)
    }

    /// A layout transition of one color image with its memory dependency.
    static func image(_ cb: VkCommandBuffer, _ image: VkImage, _ old: VkImageLayout, _ new: VkImageLayout,
                      from src: VkPipelineStageFlags, _ srcAccess: VkAccessFlags,
                      to dst: VkPipelineStageFlags, _ dstAccess: VkAccessFlags) {
        var b = VkImageMemoryBarrier()
        b.sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER
        b.srcAccessMask = srcAccess
        b.dstAccessMask = dstAccess
        b.oldLayout = old
        b.newLayout = new
        b.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED
        b.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED
        b.image = image
        b.subresourceRange = VkImageSubresourceRange(aspectMask: VK_IMAGE_ASPECT_COLOR_BIT.rawValue, baseMipLevel: 0,
                                                     levelCount: 1, baseArrayLayer: 0, layerCount: 1)
        vkCmdPipelineBarrier(cb, src, dst, 0, 0, nil, 0, nil, 1, &b)
    }
}
