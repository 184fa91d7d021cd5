import CVulkan
import DepthKit
import Foundation

/// GPU-resident frames, for the viewer: uploads, kernels and the caller's own passes recorded
/// into the caller's command buffer, with nothing read back. (`GPUFilter.render` is the
/// synchronous, read-back path the CLI and tests use; both run the same pipelines.)
///
/// Every texture this records ends in `VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL`, visible to
/// vertex, fragment and compute shaders, so a caller's render pass can sample it directly.
/// Images are rewritten whole every frame and start from `UNDEFINED`.
public final class GPUFrameRecorder {
    public let cache: TextureCache
    public var context: GPUContext { cache.context }

    public init(cache: TextureCache) { self.cache = cache }

    /// Records one frame with the cache locked (the staging ring starts over). The caller must
    /// have waited for the previous frame's GPU work (its fence) before calling this.
    public func frame<R>(_ body: () throws -> R) throws -> R { try cache.withFrame(body) }

    /// Copies `buffer` into its texture (imported host memory where the device allows, else the
    /// staging ring). Vulkan: `vkCmdCopyBufferToImage`.
    public func upload(_ cb: VkCommandBuffer, _ buffer: PixelBuffer) throws -> GPUTexture {
        let t = try cache.texture(for: buffer)
        Barrier.image(cb, t.image, VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                      from: VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT.rawValue, 0,
                      to: Barrier.transfer, VK_ACCESS_TRANSFER_WRITE_BIT.rawValue)
        try cache.recordUpload(cb, t, from: buffer)
        toShaderRead(cb, t, from: VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, stage: Barrier.transfer,
                     access: VK_ACCESS_TRANSFER_WRITE_BIT.rawValue)
        return t
    }

    /// The texture standing for `buffer` without uploading it: a kernel's output that stays on the GPU.
    public func target(for buffer: PixelBuffer) throws -> GPUTexture { try cache.texture(for: buffer) }

    /// Runs a prepared `filter` from `input` into `output` (both from this recorder).
    public func apply(_ cb: VkCommandBuffer, _ filter: GPUFilter, input: GPUTexture, output: GPUTexture) throws {
        guard filter.textureCache === cache else { throw GPUError.unsupported("\(filter.description) belongs to another texture cache") }
        if filter.watchesShaders { filter.kernels.forEach { $0.reloadIfNeeded() } }
        Barrier.image(cb, output.image, VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_GENERAL,
                      from: VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT.rawValue, 0,
                      to: Barrier.compute, VK_ACCESS_SHADER_WRITE_BIT.rawValue)
        try filter.encode(cb, input: input, output: output)
        toShaderRead(cb, output, from: VK_IMAGE_LAYOUT_GENERAL, stage: Barrier.compute,
                     access: VK_ACCESS_SHADER_WRITE_BIT.rawValue)
    }

    /// Runs the fragment mixer (a real render pass) from `a` and `b` into `output` (rgba8, a's size).
    public func mix(_ cb: VkCommandBuffer, _ mixer: GPUFragmentMixer, a: GPUTexture, b: GPUTexture, output: GPUTexture) throws {
        guard mixer.textureCache === cache else { throw GPUError.unsupported("the mixer belongs to another texture cache") }
        if mixer.watchesShaders { mixer.reloadIfNeeded() }
        try mixer.encode(cb, a, b, output)
        // The offscreen render pass ends in TRANSFER_SRC (for readback); hand it to shaders instead.
        toShaderRead(cb, output, from: VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, stage: Barrier.transfer, access: 0)
    }

    /// Records copying `texture` (in SHADER_READ_ONLY, as this recorder leaves every texture) back
    /// into the buffer it stands for, and returns that buffer; the texture is back in
    /// SHADER_READ_ONLY afterwards. The pixels are in the buffer once `frame`'s body has submitted
    /// and waited for the command buffer (a snapshot: the one readback the viewer does).
    /// Vulkan: `vkCmdCopyImageToBuffer`.
    public func readback(_ cb: VkCommandBuffer, _ texture: GPUTexture) throws -> PixelBuffer {
        guard let owner = texture.owner else { throw GPUError.unsupported("the texture's buffer is gone") }
        Barrier.image(cb, texture.image, VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                      from: Barrier.allShaders, VK_ACCESS_SHADER_READ_BIT.rawValue | VK_ACCESS_SHADER_WRITE_BIT.rawValue,
                      to: Barrier.transfer, VK_ACCESS_TRANSFER_READ_BIT.rawValue)
        try cache.recordReadback(cb, texture, into: owner)
        Barrier.transferToHost(cb)
        toShaderRead(cb, texture, from: VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, stage: Barrier.transfer, access: 0)
        owner.markModified()
        return owner
    }

    /// True when `copyPicture` can run: the device imports host memory, so the buffer is copied
    /// from its own pages.
    public var canCopyPictures: Bool { cache.usesHostImport }

    /// Draws a picture made on the CPU into a window's swapchain image by copying it, bytes as they
    /// are (so `picture` is already in the image's channel order and size), to (x, y): no sampled
    /// fragment pass, which on a CPU Vulkan driver costs milliseconds a frame. The image's old
    /// contents are discarded; it is left in COLOR_ATTACHMENT_OPTIMAL for a render pass that loads
    /// it (and clears what the picture does not cover). The submit must wait for the image's
    /// acquire semaphore at the transfer stage. Vulkan: `vkCmdCopyBufferToImage`.
    public func copyPicture(_ cb: VkCommandBuffer, _ picture: PixelBuffer, into image: VkImage, x: Int, y: Int) throws {
        Barrier.image(cb, image, VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                      from: Barrier.transfer, 0, to: Barrier.transfer, VK_ACCESS_TRANSFER_WRITE_BIT.rawValue)
        try cache.recordCopy(cb, from: picture, to: image, x: Int32(x), y: Int32(y))
        Barrier.image(cb, image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL,
                      from: Barrier.transfer, VK_ACCESS_TRANSFER_WRITE_BIT.rawValue,
                      to: VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT.rawValue,
                      Vk.flags(VK_ACCESS_COLOR_ATTACHMENT_READ_BIT, VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT))
    }

    private func toShaderRead(_ cb: VkCommandBuffer, _ t: GPUTexture, from layout: VkImageLayout,
                              stage: VkPipelineStageFlags, access: VkAccessFlags) {
        Barrier.image(cb, t.image, layout, VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL,
                      from: stage, access,
                      to: Barrier.allShaders, VK_ACCESS_SHADER_READ_BIT.rawValue)
    }
}

extension Barrier {
    /// Every shader stage that may sample a texture: the point cloud reads depth in its vertex shader.
    static let allShaders = Vk.flags(VK_PIPELINE_STAGE_VERTEX_SHADER_BIT, VK_PIPELINE_STAGE_FRAGMENT_SHADER_BIT,
                                     VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT)
}

extension GPUTexture {
    /// The Vulkan image (for barriers in callers' passes).
    public var vkImage: VkImage { image }
    /// The view shaders sample (swizzled so color is always RGBA).
    public var view: VkImageView { sampledView }
}

extension TextureCache {
    /// The linear, clamp-to-edge sampler every sampled texture uses.
    public var linearSampler: VkSampler { sampler }
}
