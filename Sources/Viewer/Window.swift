import CGLFW
import CVulkan
import DepthKit
import Foundation
import GPUKit

/// One input event, queued by GLFW's callbacks during `glfwPollEvents` and handled after it.
enum InputEvent {
    case key(key: Int32, mods: Int32)
    case mouseButton(button: Int32, pressed: Bool, mods: Int32, x: Double, y: Double, time: Double, batch: Int)
    case scroll(dx: Double, dy: Double, x: Double, y: Double)
    /// A key press that went to a panel text field instead of the key table (for `--log-ui`).
    case panelKey(key: Int32)
}

/// The GLFW window (no client API: Vulkan draws into it) and its input queue.
final class Window {
    let handle: OpaquePointer
    fileprivate(set) var events: [InputEvent] = []
    /// The pointer as of the last event handled (glfwGetCursorPos asks the X server for where it
    /// is now, which is wrong for a click queued behind later motion).
    fileprivate var eventCursor: (x: Double, y: Double)?
    private var windowedRect: (x: Int32, y: Int32, w: Int32, h: Int32) = (0, 0, 1280, 720)
    /// The panel's share of the input, while it exists: mouse, scroll, focus and enter events, and
    /// keys and characters only as `KeyRoute` says.
    weak var panel: ImGuiLayer?

    /// The last GLFW error (set by the error callback, on whichever thread called GLFW), for messages.
    static let lastGLFWError = Locked<String?>(nil)
    static var lastError: String? { lastGLFWError.current }

    /// Starts GLFW. Throws `ViewerError.noDisplay` when there is no X server to talk to and
    /// `.noVulkan` when GLFW finds no Vulkan loader.
    static func initialize() throws {
        glfwSetErrorCallback { _, description in
            let text = description.map { String(cString: $0) }
            Window.lastGLFWError.withLock { $0 = text }
        }
        let env = ProcessInfo.processInfo.environment
        let display = env["DISPLAY"] ?? ""
        let wayland = env["WAYLAND_DISPLAY"] ?? ""
        if display.isEmpty && wayland.isEmpty {
            throw ViewerError.noDisplay("DISPLAY is not set")
        }
        guard glfwInit() == GLFW_TRUE else {
            let why = Window.lastError ?? "GLFW could not start"
            throw ViewerError.noDisplay(display.isEmpty ? why : "cannot reach the X server at DISPLAY=\(display) (\(why))")
        }
        guard glfwVulkanSupported() == GLFW_TRUE else {
            glfwTerminate()
            throw ViewerError.noVulkan("GLFW found no Vulkan loader (install libvulkan1 and a driver, e.g. mesa-vulkan-drivers for lavapipe)")
        }
    }

    /// The instance extensions the window surface needs (`glfwGetRequiredInstanceExtensions`).
    static func requiredInstanceExtensions() -> [String] {
        var count: UInt32 = 0
        guard let names = glfwGetRequiredInstanceExtensions(&count) else { return [] }
        return (0..<Int(count)).compactMap { names[$0].map { String(cString: $0) } }
    }

    init(width: Int, height: Int, title: String) throws {
        glfwDefaultWindowHints()
        glfwWindowHint(GLFW_CLIENT_API, GLFW_NO_API)
        glfwWindowHint(GLFW_RESIZABLE, GLFW_TRUE)
        guard let w = glfwCreateWindow(Int32(width), Int32(height), title, nil, nil) else {
            throw ViewerError.window(Window.lastError ?? "glfwCreateWindow failed")
        }
        handle = w
        glfwSetWindowUserPointer(w, Unmanaged.passUnretained(self).toOpaque())
        // ImGui's backend installs no callbacks: these forward to it (see `panel`).
        glfwSetKeyCallback(w) { win, key, scancode, action, mods in
            guard let me = Window.from(win) else { return }
            let route = KeyRoute(key: key, action: action, textInput: me.panel?.wantsTextInput ?? false)
            if route.toPanel { me.panel?.key(key, scancode: scancode, action: action, mods: mods) }
            guard action == GLFW_PRESS || action == GLFW_REPEAT else { return }
            me.events.append(route.toViewer ? .key(key: key, mods: mods) : .panelKey(key: key))
        }
        glfwSetCharCallback(w) { win, c in
            guard let me = Window.from(win), let panel = me.panel, panel.wantsTextInput else { return }
            panel.character(c)
        }
        glfwSetCursorPosCallback(w) { win, x, y in
            guard let me = Window.from(win) else { return }
            me.eventCursor = me.toFramebuffer(x, y)
        }
        glfwSetCursorEnterCallback(w) { win, entered in
            Window.from(win)?.panel?.cursorEntered(entered == GLFW_TRUE)
        }
        glfwSetWindowFocusCallback(w) { win, focused in
            Window.from(win)?.panel?.focused(focused == GLFW_TRUE)
        }
        glfwSetMouseButtonCallback(w) { win, button, action, mods in
            guard let me = Window.from(win) else { return }
            me.panel?.mouseButton(button, action: action, mods: mods)
            let (x, y) = me.eventCursor ?? me.cursor
            me.events.append(.mouseButton(button: button, pressed: action == GLFW_PRESS, mods: mods, x: x, y: y, time: glfwGetTime(), batch: me.batch))
        }
        glfwSetScrollCallback(w) { win, dx, dy in
            guard let me = Window.from(win) else { return }
            me.panel?.scroll(dx, dy)
            let (x, y) = me.eventCursor ?? me.cursor
            me.events.append(.scroll(dx: dx, dy: dy, x: x, y: y))
        }
    }

    var isHovered: Bool { glfwGetWindowAttrib(handle, GLFW_HOVERED) == GLFW_TRUE }
    var isFocused: Bool { glfwGetWindowAttrib(handle, GLFW_FOCUSED) == GLFW_TRUE }

    deinit {
        glfwDestroyWindow(handle)
    }

    private static func from(_ w: OpaquePointer?) -> Window? {
        guard let w, let p = glfwGetWindowUserPointer(w) else { return nil }
        return Unmanaged<Window>.fromOpaque(p).takeUnretainedValue()
    }

    /// Counts `takeEvents` calls: events of one poll share a batch. GLFW stamps events when it
    /// handles them, so two clicks of a double-click can be a slow frame apart.
    fileprivate(set) var batch = 0

    func takeEvents() -> [InputEvent] {
        defer { events.removeAll(keepingCapacity: true); batch += 1 }
        return events
    }

    var shouldClose: Bool {
        get { glfwWindowShouldClose(handle) == GLFW_TRUE }
        set { glfwSetWindowShouldClose(handle, newValue ? GLFW_TRUE : GLFW_FALSE) }
    }

    /// Framebuffer size in pixels (0 × 0 while minimized).
    var framebufferSize: (width: Int, height: Int) {
        var w: Int32 = 0, h: Int32 = 0
        glfwGetFramebufferSize(handle, &w, &h)
        return (Int(w), Int(h))
    }

    var isIconified: Bool { glfwGetWindowAttrib(handle, GLFW_ICONIFIED) == GLFW_TRUE }

    /// Cursor position in framebuffer pixels.
    var cursor: (x: Double, y: Double) {
        var x = 0.0, y = 0.0
        glfwGetCursorPos(handle, &x, &y)
        return toFramebuffer(x, y)
    }

    /// Window coordinates → framebuffer pixels (they differ on HiDPI screens).
    func toFramebuffer(_ x: Double, _ y: Double) -> (x: Double, y: Double) {
        var ww: Int32 = 0, wh: Int32 = 0
        glfwGetWindowSize(handle, &ww, &wh)
        let fb = framebufferSize
        let sx = ww > 0 ? Double(fb.width) / Double(ww) : 1, sy = wh > 0 ? Double(fb.height) / Double(wh) : 1
        return (x * sx, y * sy)
    }

    func isMouseDown(_ button: Int32) -> Bool { glfwGetMouseButton(handle, button) == GLFW_PRESS }

    var isFullscreen: Bool { glfwGetWindowMonitor(handle) != nil }

    /// Fullscreen on the monitor the window is mostly on (the primary one), and back.
    func toggleFullscreen() {
        if isFullscreen {
            glfwSetWindowMonitor(handle, nil, windowedRect.x, windowedRect.y, windowedRect.w, windowedRect.h, 0)
            return
        }
        var x: Int32 = 0, y: Int32 = 0, w: Int32 = 0, h: Int32 = 0
        glfwGetWindowPos(handle, &x, &y)
        glfwGetWindowSize(handle, &w, &h)
        windowedRect = (x, y, w, h)
        guard let monitor = glfwGetPrimaryMonitor(), let mode = glfwGetVideoMode(monitor) else { return }
        glfwSetWindowMonitor(handle, monitor, 0, 0, mode.pointee.width, mode.pointee.height, mode.pointee.refreshRate)
    }

    /// Vulkan: `glfwCreateWindowSurface`.
    func makeSurface(instance: VkInstance) throws -> VkSurfaceKHR {
        var surface: VkSurfaceKHR?
        let r = glfwCreateWindowSurface(instance, handle, nil, &surface)
        try vkCheck(r, "glfwCreateWindowSurface")
        guard let surface else { throw ViewerError.window("glfwCreateWindowSurface gave no surface") }
        return surface
    }

    func setTitle(_ s: String) { glfwSetWindowTitle(handle, s) }
}
