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
    func run(inputs: [PixelBuffer], output: PixelBuffer,
             encode: (VkCommandBuffer, [GPUTexture], GPUTexture) throws -> Void) throws -> GPUTiming {
        let start = DispatchTime.now()
        let dispatchMs: Double? = try cache.withFrame {
            let tin = try inputs.map { try cache.texture(for: $0) }
            let tout = try cache.texture(for: output)
            let cb = try stream.begin()
            cache.prepareLayouts(cb, tin + [tout])
            for (t, b) in zip(tin, inputs) { try cache.recordUpload(cb, t, from: b) }
            Barrier.transferToShaders(cb)
            stream.timestamp(0)
            try encode(cb, tin, tout)
            stream.timestamp(1)
            Barrier.shadersToTransfer(cb)
            try cache.recordReadback(cb, tout, into: output)
            Barrier.transferToHost(cb)
            return try stream.submitAndWait()
        }
        output.markModified()
        return GPUTiming(endToEndMs: milliseconds(since: start), dispatchMs: dispatchMs)
    }
}
