import CVulkan
import DepthKit
import Foundation

/// One synchronous GPU frame: upload the inputs, run the kernel's commands between two
/// timestamps, read the output back, wait. Command buffer, fence and queries are reused.
final class FrameRunner {
    let cache: TextureCache
    let stream: CommandStream

    init(cache: TextureCache) throws {
        self.cache = cache
        stream = try CommandStream(context: cache.context)
    }

    /// - Parameter encode: records the kernel's work with the input textures and the output texture.
    /// - Returns: the frame's timing (wall clock from the call, timestamps around `encode`).
    /// How the kernel writes its output: a storage image (compute) or a render-pass attachment.
    enum OutputUse { case storage, colorAttachment }

    func run(inputs: [PixelBuffer], output: PixelBuffer, outputUse: OutputUse = .storage,
             encode: (VkCommandBuffer, [GPUTexture], GPUTexture) throws -> Void) throws -> GPUTiming {
        let start = DispatchTime.now()
        let dispatchMs: Double? = try cache.withFrame {
            let tin = try inputs.map { try cache.texture(for: $0) }
            let tout = try cache.texture(for: output)
            let cb = try stream.begin()
            let top = VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT.rawValue
            for (t, b) in zip(tin, inputs) {
                Barrier.image(cb, t.image, VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                              from: top, 0, to: Barrier.transfer, VK_ACCESS_TRANSFER_WRITE_BIT.rawValue)
                try cache.recordUpload(cb, t, from: b)
                Barrier.image(cb, t.image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL,
                              from: Barrier.transfer, VK_ACCESS_TRANSFER_WRITE_BIT.rawValue,
                              to: Barrier.shaders, VK_ACCESS_SHADER_READ_BIT.rawValue)
            }
            if outputUse == .storage {
                Barrier.image(cb, tout.image, VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_GENERAL,
                              from: top, 0, to: Barrier.compute, VK_ACCESS_SHADER_WRITE_BIT.rawValue)
            }
            stream.timestamp(0)
            try encode(cb, tin, tout)
            if outputUse == .storage {
                Barrier.image(cb, tout.image, VK_IMAGE_LAYOUT_GENERAL, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                              from: Barrier.compute, VK_ACCESS_SHADER_WRITE_BIT.rawValue,
                              to: Barrier.transfer, VK_ACCESS_TRANSFER_READ_BIT.rawValue)
            }
            // The end timestamp comes after the barrier that waits for the kernel: drivers that run
            // dispatches asynchronously (lavapipe) otherwise stamp it before a one-pass kernel ran.
            stream.timestamp(1)
            try cache.recordReadback(cb, tout, into: output)
            Barrier.transferToHost(cb)
            return try stream.submitAndWait()
        }
        output.markModified()
        return GPUTiming(endToEndMs: milliseconds(since: start), dispatchMs: dispatchMs)
    }
}
