import CImGui
import CVulkan
import DepthKit
import Foundation
import GPUKit

/// Dear ImGui in the window (through CImGui's `dl_` C surface): its descriptor pool, the font
/// upload, and thin Swift wrappers for the widgets the panel uses.
final class ImGuiLayer {
    let context: GPUContext
    private let pool: DescriptorPool
    /// Kept alive while ImGui's GLFW side uses it (shut down in deinit, before the window goes).
    private let window: Window
    private let glfwWindow: UnsafeMutableRawPointer

    init(window: Window, context: GPUContext, renderPass: VkRenderPass, imageCount: Int,
         oneShot: ((VkCommandBuffer) throws -> Void) throws -> Void) throws {
        self.context = context
        self.window = window
        glfwWindow = UnsafeMutableRawPointer(window.handle)
        pool = try DescriptorPool(context: context, maxSets: 16, sizes: [(VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, 16)])
        func raw<T>(_ h: T) -> UnsafeMutableRawPointer? { unsafeBitCast(h, to: UnsafeMutableRawPointer?.self) }
        guard dl_imgui_init(UnsafeMutableRawPointer(window.handle), raw(context.instance), raw(context.physicalDevice),
                            raw(context.device), context.queueFamilyIndex, raw(context.queue), raw(pool.handle),
                            raw(renderPass), UInt32(imageCount)) != 0 else {
            throw ViewerError.window("Dear ImGui could not start")
        }
        try oneShot { cb in
            guard dl_imgui_upload_fonts(UnsafeMutableRawPointer(cb)) != 0 else { throw ViewerError.window("ImGui font upload failed") }
        }
        dl_imgui_fonts_uploaded()
        window.panel = self
        cursorEntered(window.isHovered)
        if window.isFocused { focused(true) }
    }

    /// The descriptor pool goes after this, with the object.
    deinit { dl_imgui_shutdown() }

    var wantsMouse: Bool { dl_imgui_want_mouse() != 0 }
    /// A text field is being edited: keys are text (see `KeyRoute`).
    var wantsTextInput: Bool { dl_imgui_want_text_input() != 0 }

    // GLFW events forwarded by `Window`'s callbacks.
    func key(_ key: Int32, scancode: Int32, action: Int32, mods: Int32) { dl_imgui_glfw_key(glfwWindow, key, scancode, action, mods) }
    func character(_ c: UInt32) { dl_imgui_glfw_char(glfwWindow, c) }
    func mouseButton(_ button: Int32, action: Int32, mods: Int32) { dl_imgui_glfw_mouse_button(glfwWindow, button, action, mods) }
    func scroll(_ dx: Double, _ dy: Double) { dl_imgui_glfw_scroll(glfwWindow, dx, dy) }
    func cursorEntered(_ entered: Bool) { dl_imgui_glfw_cursor_enter(glfwWindow, entered ? 1 : 0) }
    func focused(_ focused: Bool) { dl_imgui_glfw_focus(glfwWindow, focused ? 1 : 0) }

    func newFrame() { dl_imgui_new_frame() }
    func render(_ cb: VkCommandBuffer) { dl_imgui_render(UnsafeMutableRawPointer(cb)) }
    func endFrame() { dl_imgui_end_frame() }
    /// ImGui's Vulkan backend calls `vkDeviceWaitIdle` when the count changes: under the queue lock
    /// (Vulkan requires every queue externally synchronized for it; see `GPUContext.waitIdle`).
    func setImageCount(_ n: Int) { context.withQueue { _ in dl_imgui_set_min_image_count(UInt32(n)) } }
}

/// The widget calls of one ImGui frame, Swift-shaped.
enum UI {
    static func begin(_ title: String, x: Float, y: Float, width: Float, height: Float = 0, alpha: Float = 0.85,
                      decorated: Bool = true) -> Bool {
        title.withCString { dl_imgui_begin($0, x, y, width, height, alpha, decorated ? 1 : 0) != 0 }
    }
    /// The docked side panel: fixed at (x, y), w×h, not movable (end with `end`).
    static func beginDocked(_ title: String, x: Float, y: Float, width: Float, height: Float, alpha: Float = 1) -> Bool {
        title.withCString { dl_imgui_begin_docked($0, x, y, width, height, alpha) != 0 }
    }
    static func end() { dl_imgui_end() }
    static func text(_ s: String, color: SIMD3<Float>? = nil) {
        // withCString: a String passed straight as `const char *` is copied to the heap on every call.
        s.withCString { cs in if let c = color { dl_imgui_text(cs, c.x, c.y, c.z, 1) } else { dl_imgui_text(cs, 0, 0, 0, 0) } }
    }
    @discardableResult
    static func checkbox(_ label: String, _ value: inout Bool) -> Bool {
        var v: Int32 = value ? 1 : 0
        let changed = label.withCString { dl_imgui_checkbox($0, &v) != 0 }
        value = v != 0
        return changed
    }
    /// A slider that never leaves `range`, typed values (Ctrl+click) included; a typed "nan" keeps the old value.
    @discardableResult
    static func slider(_ label: String, _ value: inout Float, _ range: ClosedRange<Float>, format: String = "%.2f") -> Bool {
        let old = value
        let changed = label.withCString { l in format.withCString { dl_imgui_slider_float(l, &value, range.lowerBound, range.upperBound, $0) != 0 } }
        value = value.isNaN ? old : min(max(value, range.lowerBound), range.upperBound)
        return changed && value != old
    }
    /// A slider over a parameter's shared limits (`Limits`, the same the CLI checks).
    @discardableResult
    static func slider(_ label: String, _ value: inout Float, _ limits: ParameterRange, format: String = "%.2f") -> Bool {
        slider(label, &value, limits.range, format: format)
    }
    static func radio(_ label: String, _ active: Bool) -> Bool { label.withCString { dl_imgui_radio($0, active ? 1 : 0) != 0 } }
    @discardableResult
    static func combo(_ label: String, _ current: inout Int, _ items: [String]) -> Bool {
        combo(label, &current, joined: joined(items))
    }
    /// The same with the items already joined ("a\0b\0\0", `UI.joined`): nothing built per frame.
    @discardableResult
    static func combo(_ label: String, _ current: inout Int, joined: String) -> Bool {
        var c = Int32(current)
        var joined = joined
        let changed = joined.withUTF8 { p in
            p.withMemoryRebound(to: CChar.self) { items in label.withCString { dl_imgui_combo($0, &c, items.baseAddress) != 0 } }
        }
        current = Int(c)
        return changed
    }
    /// Combo items joined as ImGui wants them.
    static func joined(_ items: [String]) -> String { items.joined(separator: "\0") + "\0\0" }
    static func button(_ label: String) -> Bool { label.withCString { dl_imgui_button($0) != 0 } }
    static func sameLine() { dl_imgui_same_line() }
    static func separator() { dl_imgui_separator() }
    /// A collapsing section header; `open` is its state the first time it is drawn.
    static func header(_ label: String, open: Bool = true) -> Bool { label.withCString { dl_imgui_header($0, open ? 1 : 0) != 0 } }
    /// A text field over a fixed C buffer; true when Enter was pressed.
    static func inputText(_ label: String, _ buffer: inout [CChar]) -> Bool {
        let n = buffer.count
        return buffer.withUnsafeMutableBufferPointer { b in label.withCString { dl_imgui_input_text($0, b.baseAddress, n) != 0 } }
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
        s.withCString { dl_imgui_overlay_text(x, y, $0, color.x, color.y, color.z) }
    }
    static func line(from a: (Float, Float), to b: (Float, Float), color: SIMD3<Float> = [1, 1, 0]) {
        dl_imgui_overlay_line(a.0, a.1, b.0, b.1, color.x, color.y, color.z)
    }
}
