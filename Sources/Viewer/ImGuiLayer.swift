import CImGui
import CVulkan
import Foundation
import GPUKit

/// Dear ImGui in the window (through CImGui's `dl_` C surface): its descriptor pool, the font
/// upload, and thin Swift wrappers for the widgets the panel uses.
final class ImGuiLayer {
    let context: GPUContext
    private let pool: VkDescriptorPool

    init(window: Window, context: GPUContext, renderPass: VkRenderPass, imageCount: Int,
         oneShot: ((VkCommandBuffer) throws -> Void) throws -> Void) throws {
        self.context = context
        var size = VkDescriptorPoolSize(type: VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, descriptorCount: 16)
        var p: VkDescriptorPool?
        let r: VkResult = withUnsafePointer(to: &size) { sp in
            var info = VkDescriptorPoolCreateInfo()
            info.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO
            info.flags = VK_DESCRIPTOR_POOL_CREATE_FREE_DESCRIPTOR_SET_BIT.rawValue
            info.maxSets = 16
            info.poolSizeCount = 1
            info.pPoolSizes = sp
            return vkCreateDescriptorPool(context.device, &info, nil, &p)
        }
        try vkCheck(r, "vkCreateDescriptorPool")
        pool = p!
        func raw<T>(_ h: T) -> UnsafeMutableRawPointer? { unsafeBitCast(h, to: UnsafeMutableRawPointer?.self) }
        guard dl_imgui_init(UnsafeMutableRawPointer(window.handle), raw(context.instance), raw(context.physicalDevice),
                            raw(context.device), context.queueFamilyIndex, raw(context.queue), raw(pool),
                            raw(renderPass), UInt32(imageCount)) != 0 else {
            vkDestroyDescriptorPool(context.device, pool, nil)
            throw ViewerError.window("Dear ImGui could not start")
        }
        try oneShot { cb in
            guard dl_imgui_upload_fonts(UnsafeMutableRawPointer(cb)) != 0 else { throw ViewerError.window("ImGui font upload failed") }
        }
        dl_imgui_fonts_uploaded()
    }

    deinit {
        dl_imgui_shutdown()
        vkDestroyDescriptorPool(context.device, pool, nil)
    }

    var wantsKeyboard: Bool { dl_imgui_want_keyboard() != 0 }
    var wantsMouse: Bool { dl_imgui_want_mouse() != 0 }

    func newFrame() { dl_imgui_new_frame() }
    func render(_ cb: VkCommandBuffer) { dl_imgui_render(UnsafeMutableRawPointer(cb)) }
    func endFrame() { dl_imgui_end_frame() }
    func setImageCount(_ n: Int) { dl_imgui_set_min_image_count(UInt32(n)) }
}

/// The widget calls of one ImGui frame, Swift-shaped.
enum UI {
    static func begin(_ title: String, x: Float, y: Float, width: Float, height: Float = 0, alpha: Float = 0.85,
                      decorated: Bool = true) -> Bool {
        dl_imgui_begin(title, x, y, width, height, alpha, decorated ? 1 : 0) != 0
    }
    static func end() { dl_imgui_end() }
    static func text(_ s: String, color: SIMD3<Float>? = nil) {
        if let c = color { dl_imgui_text(s, c.x, c.y, c.z, 1) } else { dl_imgui_text(s, 0, 0, 0, 0) }
    }
    @discardableResult
    static func checkbox(_ label: String, _ value: inout Bool) -> Bool {
        var v: Int32 = value ? 1 : 0
        let changed = dl_imgui_checkbox(label, &v) != 0
        value = v != 0
        return changed
    }
    @discardableResult
    static func slider(_ label: String, _ value: inout Float, _ range: ClosedRange<Float>, format: String = "%.2f") -> Bool {
        dl_imgui_slider_float(label, &value, range.lowerBound, range.upperBound, format) != 0
    }
    static func radio(_ label: String, _ active: Bool) -> Bool { dl_imgui_radio(label, active ? 1 : 0) != 0 }
    @discardableResult
    static func combo(_ label: String, _ current: inout Int, _ items: [String]) -> Bool {
        var c = Int32(current)
        var joined = items.joined(separator: "\0") + "\0\0"
        let changed = joined.withUTF8 { p in
            p.withMemoryRebound(to: CChar.self) { dl_imgui_combo(label, &c, $0.baseAddress) != 0 }
        }
        current = Int(c)
        return changed
    }
    static func button(_ label: String) -> Bool { dl_imgui_button(label) != 0 }
    static func sameLine() { dl_imgui_same_line() }
    static func separator() { dl_imgui_separator() }
    static func header(_ label: String) -> Bool { dl_imgui_header(label) != 0 }
    /// A text field over a fixed C buffer; true when Enter was pressed.
    static func inputText(_ label: String, _ buffer: inout [CChar]) -> Bool {
        let n = buffer.count
        return buffer.withUnsafeMutableBufferPointer { dl_imgui_input_text(label, $0.baseAddress, n) != 0 }
    }
    static var lastItemRect: (x: Float, y: Float, w: Float, h: Float) {
        var r = [Float](repeating: 0, count: 4)
        dl_imgui_last_item_rect(&r)
        return (r[0], r[1], r[2], r[3])
    }
    static var windowRect: (x: Float, y: Float, w: Float, h: Float) {
        var r = [Float](repeating: 0, count: 4)
        dl_imgui_window_rect(&r)
        return (r[0], r[1], r[2], r[3])
    }
    static func overlay(_ s: String, x: Float, y: Float, color: SIMD3<Float> = [1, 1, 1]) {
        dl_imgui_overlay_text(x, y, s, color.x, color.y, color.z)
    }
    static func line(from a: (Float, Float), to b: (Float, Float), color: SIMD3<Float> = [1, 1, 0]) {
        dl_imgui_overlay_line(a.0, a.1, b.0, b.1, color.x, color.y, color.z)
    }
}
