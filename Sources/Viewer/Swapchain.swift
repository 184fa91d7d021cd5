import CVulkan
import DepthKit
import Foundation
import GPUKit

/// The window's surface, its swapchain, image views, framebuffers and the render pass that draws
/// into them. Recreated on resize and whenever present or acquire say the swapchain is out of
/// date or suboptimal; an extent of zero (a minimized window) makes no swapchain at all.
final class Swapchain {
    let context: GPUContext
    let surface: VkSurfaceKHR
    let format: VkSurfaceFormatKHR
    /// Clears to the letterbox color, then the present pass and ImGui draw; ends in PRESENT_SRC.
    let renderPass: VkRenderPass
    /// The same, compatible, but loading what a copy left in the image (COLOR_ATTACHMENT_OPTIMAL):
    /// for pictures copied in (`GPUFrameRecorder.copyPicture`), the bars cleared inside the pass.
    let loadRenderPass: VkRenderPass
    /// The `PixelFormat` whose bytes the images take as they are (a copy is bytes, not colors),
    /// or nil when pictures cannot be copied in (an sRGB or other format, or no TRANSFER_DST usage).
    private(set) var copyFormat: PixelFormat?
    private(set) var handle: VkSwapchainKHR?
    private(set) var extent = VkExtent2D(width: 0, height: 0)
    private(set) var images: [VkImage] = []
    private var views: [VkImageView] = []
    private(set) var framebuffers: [VkFramebuffer] = []
    private(set) var presentMode = VK_PRESENT_MODE_FIFO_KHR
    /// Modes the surface offers (for the status line and V).
    private(set) var availableModes: [VkPresentModeKHR] = []
    var vsync: Bool
    /// Set when the swapchain must be made again before the next frame: the window changed
    /// (fullscreen, vsync, minimized) or acquire or present said it is out of date or suboptimal.
    var needsRecreate = true

    /// Takes ownership of `surface`: destroyed with this object, or here when this throws.
    init(context: GPUContext, surface: VkSurfaceKHR, vsync: Bool) throws {
        self.context = context
        self.surface = surface
        self.vsync = vsync
        do {
            let f = try Self.surfaceFormat(context, surface)
            let clearing = try Self.makeRenderPass(context.device, format: f.format, load: false)
            let loading: VkRenderPass
            do {
                loading = try Self.makeRenderPass(context.device, format: f.format, load: true)
            } catch {
                vkDestroyRenderPass(context.device, clearing, nil)
                throw error
            }
            format = f
            renderPass = clearing
            loadRenderPass = loading
        } catch {
            vkDestroySurfaceKHR(context.instance, surface, nil)
            throw error
        }
    }

    /// The surface's pixel format: UNORM, not sRGB (the kernels' bytes are display values and
    /// reach the screen unchanged), BGRA or RGBA order, else the first offered.
    private static func surfaceFormat(_ context: GPUContext, _ surface: VkSurfaceKHR) throws -> VkSurfaceFormatKHR {
        var supported: VkBool32 = 0
        try vkCheck(vkGetPhysicalDeviceSurfaceSupportKHR(context.physicalDevice, context.queueFamilyIndex, surface, &supported),
                  "vkGetPhysicalDeviceSurfaceSupportKHR")
        guard supported == VkBool32(VK_TRUE) else {
            throw ViewerError.noVulkan("the Vulkan device \(context.name) cannot present to this window")
        }
        let formats = try Vk.enumerate(VkSurfaceFormatKHR(), { vkGetPhysicalDeviceSurfaceFormatsKHR(context.physicalDevice, surface, $0, $1) },
                                       name: "vkGetPhysicalDeviceSurfaceFormatsKHR")
        let preferred = [VK_FORMAT_B8G8R8A8_UNORM, VK_FORMAT_R8G8B8A8_UNORM]
        guard let f = preferred.lazy.compactMap({ p in formats.first { $0.format == p } }).first ?? formats.first else {
            throw ViewerError.noVulkan("the window surface offers no pixel format")
        }
        return f
    }

    deinit {
        destroySwapchainObjects()
        if let handle { vkDestroySwapchainKHR(context.device, handle, nil) }
        vkDestroyRenderPass(context.device, renderPass, nil)
        vkDestroyRenderPass(context.device, loadRenderPass, nil)
        vkDestroySurfaceKHR(context.instance, surface, nil)
    }

    var isUsable: Bool { handle != nil && extent.width > 0 && extent.height > 0 }

    /// FIFO with vsync; without, MAILBOX, else IMMEDIATE, else FIFO (always there).
    private func pickPresentMode() -> VkPresentModeKHR {
        if vsync { return VK_PRESENT_MODE_FIFO_KHR }
        for m in [VK_PRESENT_MODE_MAILBOX_KHR, VK_PRESENT_MODE_IMMEDIATE_KHR] where availableModes.contains(m) { return m }
        return VK_PRESENT_MODE_FIFO_KHR
    }

    var presentModeName: String {
        switch presentMode {
        case VK_PRESENT_MODE_FIFO_KHR: return "FIFO (vsync)"
        case VK_PRESENT_MODE_MAILBOX_KHR: return "MAILBOX"
        case VK_PRESENT_MODE_IMMEDIATE_KHR: return "IMMEDIATE"
        default: return "mode \(presentMode.rawValue)"
        }
    }

    /// (Re)creates the swapchain for a framebuffer of `width`×`height`; returns false (and keeps
    /// no swapchain) while the surface has no area. The caller has waited for the device to idle.
    /// Vulkan: `vkCreateSwapchainKHR` with the old swapchain, `vkCreateImageView`, `vkCreateFramebuffer`.
    @discardableResult
    func recreate(width: Int, height: Int) throws -> Bool {
        let device = context.device
        var caps = VkSurfaceCapabilitiesKHR()
        try vkCheck(vkGetPhysicalDeviceSurfaceCapabilitiesKHR(context.physicalDevice, surface, &caps),
                  "vkGetPhysicalDeviceSurfaceCapabilitiesKHR")
        var e = caps.currentExtent
        if e.width == UInt32.max {
            e.width = UInt32(max(0, width)); e.height = UInt32(max(0, height))
            e.width = min(max(e.width, caps.minImageExtent.width), caps.maxImageExtent.width)
            e.height = min(max(e.height, caps.minImageExtent.height), caps.maxImageExtent.height)
        }
        destroySwapchainObjects()
        guard e.width > 0, e.height > 0, width > 0, height > 0 else {
            if let handle { vkDestroySwapchainKHR(device, handle, nil); self.handle = nil }
            extent = VkExtent2D(width: 0, height: 0)
            return false
        }
        availableModes = try Vk.enumerate(VK_PRESENT_MODE_FIFO_KHR, { vkGetPhysicalDeviceSurfacePresentModesKHR(context.physicalDevice, surface, $0, $1) },
                                          name: "vkGetPhysicalDeviceSurfacePresentModesKHR")
        presentMode = pickPresentMode()
        var imageCount = max(caps.minImageCount, 2) + (presentMode == VK_PRESENT_MODE_MAILBOX_KHR ? 1 : 0)
        if caps.maxImageCount > 0 { imageCount = min(imageCount, caps.maxImageCount) }

        var info = VkSwapchainCreateInfoKHR()
        info.sType = VK_STRUCTURE_TYPE_SWAPCHAIN_CREATE_INFO_KHR
        info.surface = surface
        info.minImageCount = imageCount
        info.imageFormat = format.format
        info.imageColorSpace = format.colorSpace
        info.imageExtent = e
        info.imageArrayLayers = 1
        info.imageUsage = VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT.rawValue
        // Pictures made on the CPU are copied in (no fragment pass) where the images take
        // transfers and store bytes as the picture has them (UNORM, RGBA or BGRA order).
        let copyable: PixelFormat? = format.format == VK_FORMAT_B8G8R8A8_UNORM ? .bgra8
            : format.format == VK_FORMAT_R8G8B8A8_UNORM ? .rgba8 : nil
        if copyable != nil, caps.supportedUsageFlags & VK_IMAGE_USAGE_TRANSFER_DST_BIT.rawValue != 0 {
            info.imageUsage |= VK_IMAGE_USAGE_TRANSFER_DST_BIT.rawValue
            copyFormat = copyable
        } else {
            copyFormat = nil
        }
        info.imageSharingMode = VK_SHARING_MODE_EXCLUSIVE
        info.preTransform = caps.currentTransform
        info.compositeAlpha = VK_COMPOSITE_ALPHA_OPAQUE_BIT_KHR
        if caps.supportedCompositeAlpha & VK_COMPOSITE_ALPHA_OPAQUE_BIT_KHR.rawValue == 0 {
            for a in [VK_COMPOSITE_ALPHA_INHERIT_BIT_KHR, VK_COMPOSITE_ALPHA_PRE_MULTIPLIED_BIT_KHR, VK_COMPOSITE_ALPHA_POST_MULTIPLIED_BIT_KHR]
            where caps.supportedCompositeAlpha & a.rawValue != 0 { info.compositeAlpha = a; break }
        }
        info.presentMode = presentMode
        info.clipped = VkBool32(VK_TRUE)
        info.oldSwapchain = handle
        var sc: VkSwapchainKHR?
        let r = vkCreateSwapchainKHR(device, &info, nil, &sc)
        if let old = handle { vkDestroySwapchainKHR(device, old, nil); handle = nil }
        try vkCheck(r, "vkCreateSwapchainKHR")
        guard let sc else { throw VulkanError(result: VK_ERROR_INITIALIZATION_FAILED, call: "vkCreateSwapchainKHR") }
        handle = sc
        extent = e
        images = try Vk.enumerate(VkImage?.none, { vkGetSwapchainImagesKHR(device, sc, $0, $1) }, name: "vkGetSwapchainImagesKHR")
            .compactMap { $0 }
        for img in images {
            let v = try RenderPass.imageView(device, image: img, format: format.format)
            views.append(v)
            framebuffers.append(try RenderPass.framebuffer(device, renderPass: renderPass, views: [v],
                                                           width: e.width, height: e.height))
        }
        needsRecreate = false
        return true
    }

    private func destroySwapchainObjects() {
        let device = context.device
        framebuffers.forEach { vkDestroyFramebuffer(device, $0, nil) }
        views.forEach { vkDestroyImageView(device, $0, nil) }
        framebuffers = []; views = []; images = []
    }

    /// Vulkan: `vkCreateRenderPass` (one color attachment: clear, store, UNDEFINED → PRESENT_SRC;
    /// with `load`, load, store, COLOR_ATTACHMENT_OPTIMAL → PRESENT_SRC).
    private static func makeRenderPass(_ device: VkDevice, format: VkFormat, load: Bool) throws -> VkRenderPass {
        var color = RenderPass.attachment(format: format, load: load ? VK_ATTACHMENT_LOAD_OP_LOAD : VK_ATTACHMENT_LOAD_OP_CLEAR,
                                          store: VK_ATTACHMENT_STORE_OP_STORE, finalLayout: VK_IMAGE_LAYOUT_PRESENT_SRC_KHR)
        if load { color.initialLayout = VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL }
        // The acquire semaphore is waited at COLOR_ATTACHMENT_OUTPUT: the layout change must wait too.
        let dependency = VkSubpassDependency(
            srcSubpass: VK_SUBPASS_EXTERNAL, dstSubpass: 0,
            srcStageMask: VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT.rawValue,
            dstStageMask: VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT.rawValue,
            srcAccessMask: 0,
            dstAccessMask: Vk.flags(VK_ACCESS_COLOR_ATTACHMENT_READ_BIT, VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT),
            dependencyFlags: 0)
        return try RenderPass.make(device, color: color, dependencies: [dependency])
    }
}
