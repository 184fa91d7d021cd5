import CVulkan
import DepthKit
import Foundation
import GPUKit

/// Puts a picture made on the CPU into the window without a fragment pass: scaled on the CPU to
/// its letterbox rectangle (`ImageScaler`: the linear clamp-to-edge sampler's formula) in the
/// swapchain's byte order, copied into the swapchain image (`GPUFrameRecorder.copyPicture`), and
/// the window's render pass then loads the image (`Swapchain.loadRenderPass`) and clears the bars
/// around the picture (`clearBars`). On lavapipe the sampled pass costs 4–5 ms of fragment
/// shading a frame at 1280×720; the scale and the copy cost a fraction of that. GPU-made
/// pictures (and the GPU blend of `presentMix.frag`) are still drawn by `PresentPipeline`.
final class PictureCopy {
    /// Whether CPU pictures are copied in on `context`'s device: on a CPU Vulkan device (lavapipe),
    /// where the fragment pass is CPU time too and costlier than the scale; a real GPU draws them
    /// for free and keeps the CPU for the kernels. `DEPTHLENS_PRESENT=copy|draw` decides instead
    /// (A/B runs of the two ways).
    static func enabled(on context: GPUContext) -> Bool {
        switch ProcessInfo.processInfo.environment["DEPTHLENS_PRESENT"] {
        case "draw": return false
        case "copy": return true
        default: return context.properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU
        }
    }

    private let scaler = ImageScaler()
    /// The picture at the rectangle's size in the swapchain's byte order, reused while the size holds.
    private var scaled: PixelBuffer?
    /// What `scaled` was made from: a paused frame is copied again without scaling again.
    private weak var madeFrom: PixelBuffer?
    private var madeGeneration = UInt64.max
    /// Where the last copy went, window pixels: the bars are the rest of the image.
    private(set) var rect = (x: 0, y: 0, width: 0, height: 0)

    /// Records the copy of `picture` into swapchain image `image` (`extent`, bytes as `format`)
    /// at `box`'s rectangle. Returns false, having recorded nothing, when the rectangle is empty.
    func record(_ cb: VkCommandBuffer, recorder: GPUFrameRecorder, picture: PixelBuffer, box: Letterbox,
                image: VkImage, extent: VkExtent2D, format: PixelFormat) throws -> Bool {
        let x = max(0, Int(box.rect.x)), y = max(0, Int(box.rect.y))
        let w = min(Int(box.rect.width), Int(extent.width) - x), h = min(Int(box.rect.height), Int(extent.height) - y)
        guard w > 0, h > 0 else { return false }
        if scaled?.width != w || scaled?.height != h || scaled?.format != format {
            scaled = PixelBuffer(width: w, height: h, format: format)
            madeFrom = nil
        }
        guard let target = scaled else { return false }
        if madeFrom !== picture || madeGeneration != picture.generation {
            try scaler.scale(picture, into: target)
            madeFrom = picture
            madeGeneration = picture.generation
        }
        try recorder.copyPicture(cb, target, into: image, x: x, y: y)
        rect = (x, y, w, h)
        return true
    }

    /// Inside the render pass that loaded the copy: clears what the picture does not cover to
    /// `color` (up to four bars). Vulkan: `vkCmdClearAttachments`.
    func clearBars(_ cb: VkCommandBuffer, extent: VkExtent2D, color: VkClearColorValue) {
        let ww = Int(extent.width), wh = Int(extent.height)
        let r = rect
        var attachment = VkClearAttachment(aspectMask: VK_IMAGE_ASPECT_COLOR_BIT.rawValue, colorAttachment: 0,
                                           clearValue: VkClearValue(color: color))
        for bar in 0..<4 {   // above, below, left, right (no array: nothing allocated per frame)
            let (bx, by, bw, bh): (Int, Int, Int, Int)
            switch bar {
            case 0: (bx, by, bw, bh) = (0, 0, ww, r.y)
            case 1: (bx, by, bw, bh) = (0, r.y + r.height, ww, wh - r.y - r.height)
            case 2: (bx, by, bw, bh) = (0, r.y, r.x, r.height)
            default: (bx, by, bw, bh) = (r.x + r.width, r.y, ww - r.x - r.width, r.height)
            }
            guard bw > 0, bh > 0 else { continue }
            var clear = VkClearRect(rect: VkRect2D(offset: VkOffset2D(x: Int32(bx), y: Int32(by)),
                                                   extent: VkExtent2D(width: UInt32(bw), height: UInt32(bh))),
                                    baseArrayLayer: 0, layerCount: 1)
            vkCmdClearAttachments(cb, 1, &attachment, 1, &clear)
        }
    }
}
