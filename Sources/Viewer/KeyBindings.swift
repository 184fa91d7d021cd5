import CGLFW

/// Everything a key (or the panel) can ask the viewer to do.
public enum ViewerAction: Hashable, Sendable {
    case togglePause, stepBackward, stepForward, seekBackward, seekForward, seekStart
    case mode(Int)
    case snapshot, exportPLY, toggleView, quit, fullscreen, toggleVsync
    case toggleRecord
    case markStart, markEnd, toggleExport
    case cycleColormap, cycleBackend, togglePanel, toggleHelp
    case toggleFilter, toggleDepth, toggleBlend, toggleRosyMatrix, toggleRange, toggleLoop
    case mixUp, mixDown
    case toggleSmoothing
    case resetView, zoomIn, zoomOut, pointSizeDown, pointSizeUp
    case orbitLeft, orbitRight, orbitUp, orbitDown
    case cycleColorBy, togglePointMethod, toggleEDL
    case cycleWorld
    case toggleQuality, saveQualityCSV, cyclePickTool, measurePicks
}

/// One row of the key table: GLFW key codes (any of them), the label people read, and per view
/// the action. The input handler, the `?` overlay and docs/VIEWER.md's key table all read `KeyBindings.all`.
public struct KeyBinding: Sendable {
    public let keys: [Int32]
    /// Shift must be held (e.g. `?` is Shift+/ on a US layout).
    public let shift: Bool
    /// Ctrl must be held (Ctrl+R); such a row never fires without Ctrl.
    public let ctrl: Bool
    public let label: String
    public let action2D: ViewerAction?
    public let action3D: ViewerAction?
    public let help: String

    init(_ keys: [Int32], _ label: String, _ action: ViewerAction, _ help: String, shift: Bool = false, ctrl: Bool = false,
         in3D: ViewerAction?? = nil) {
        self.keys = keys
        self.label = label
        self.shift = shift
        self.ctrl = ctrl
        action2D = action
        action3D = in3D ?? action
        self.help = help
    }

    init(keys: [Int32], label: String, action2D: ViewerAction?, action3D: ViewerAction?, help: String) {
        self.keys = keys; self.label = label; self.shift = false; self.ctrl = false
        self.action2D = action2D; self.action3D = action3D; self.help = help
    }
}

public enum KeyBindings {
    public static let all: [KeyBinding] = {
        var rows: [KeyBinding] = [
            KeyBinding([GLFW_KEY_SPACE], "Space", .togglePause, "pause / play"),
            KeyBinding(keys: [GLFW_KEY_LEFT], label: "Left", action2D: .stepBackward, action3D: .orbitLeft,
                       help: "step back one frame when paused, else seek back 10 (3D: orbit left)"),
            KeyBinding(keys: [GLFW_KEY_RIGHT], label: "Right", action2D: .stepForward, action3D: .orbitRight,
                       help: "step forward one frame when paused, else seek forward 10 (3D: orbit right)"),
            KeyBinding(keys: [GLFW_KEY_UP], label: "Up", action2D: .mixUp, action3D: .orbitUp,
                       help: "blend toward the depth colormap (3D: orbit up)"),
            KeyBinding(keys: [GLFW_KEY_DOWN], label: "Down", action2D: .mixDown, action3D: .orbitDown,
                       help: "blend toward the color image (3D: orbit down)"),
            KeyBinding([GLFW_KEY_HOME], "Home", .seekStart, "back to the first frame"),
            KeyBinding([GLFW_KEY_COMMA], ",", .stepBackward, "step back one frame when paused, else seek back 10 (2D and 3D)"),
            KeyBinding([GLFW_KEY_PERIOD], ".", .stepForward, "step forward one frame when paused, else seek forward 10 (2D and 3D)"),
        ]
        let modes = PreviewMode.all.compactMap { m -> KeyBinding? in
            guard let n = m.numberKey else { return nil }
            return KeyBinding([GLFW_KEY_0 + Int32(n), GLFW_KEY_KP_0 + Int32(n)], "\(n)", .mode(n - 1), m.title)
        }
        rows += modes
        rows += [
            KeyBinding([GLFW_KEY_S], "S", .snapshot, "snapshot: filtered, color, 16-bit depth PNGs and JSON into --snapshot-dir"),
            KeyBinding([GLFW_KEY_P], "P", .exportPLY, "export the point cloud as PLY into --snapshot-dir"),
            KeyBinding([GLFW_KEY_R], "Ctrl+R", .toggleRecord, "record the 2D view as H.264 video into --snapshot-dir / stop", ctrl: true),
            KeyBinding([GLFW_KEY_I], "I", .markStart, "timeline: mark the export range's start at this frame"),
            KeyBinding([GLFW_KEY_O], "O", .markEnd, "timeline: mark the export range's end at this frame"),
            KeyBinding([GLFW_KEY_E], "Ctrl+E", .toggleExport,
                       "export the range as a TUM folder with the panel's Export settings / cancel", ctrl: true),
            KeyBinding([GLFW_KEY_TAB], "Tab", .toggleView, "2D / 3D view"),
            KeyBinding([GLFW_KEY_F], "F", .fullscreen, "fullscreen"),
            KeyBinding([GLFW_KEY_V], "V", .toggleVsync, "vsync on / off"),
            KeyBinding([GLFW_KEY_C], "C", .cycleColormap, "next colormap (JET, Turbo, Viridis, grayscale)"),
            KeyBinding([GLFW_KEY_B], "B", .cycleBackend, "next backend (GPU, CPU, auto)"),
            KeyBinding([GLFW_KEY_X], "X", .toggleFilter, "filter on / off (show the original)"),
            KeyBinding([GLFW_KEY_D], "D", .toggleDepth, "depth on / off"),
            KeyBinding([GLFW_KEY_M], "M", .toggleBlend, "blend the colormap with the color on / off"),
            KeyBinding([GLFW_KEY_K], "K", .toggleRosyMatrix, "rosy: shader / color matrix"),
            KeyBinding([GLFW_KEY_E], "E", .toggleRange, "colormap range: equalized / min-max"),
            KeyBinding([GLFW_KEY_L], "L", .toggleLoop, "loop playback on / off"),
            KeyBinding([GLFW_KEY_Z], "Z", .toggleSmoothing, "depth smoothing on / off (temporal, hole filling, spatial fill)"),
            KeyBinding([GLFW_KEY_Y], "Y", .toggleQuality, "the panel's Quality section open / closed (depth quality of the ROI, live)"),
            KeyBinding([GLFW_KEY_J], "J", .saveQualityCSV, "write the Quality section's rows as CSV (the Depth Quality Tool's) into --snapshot-dir"),
            KeyBinding(keys: [GLFW_KEY_R], label: "R", action2D: nil, action3D: .resetView, help: "3D: reset the view (also double-click)"),
            KeyBinding(keys: [GLFW_KEY_EQUAL, GLFW_KEY_KP_ADD], label: "+", action2D: nil, action3D: .zoomIn, help: "3D: zoom in"),
            KeyBinding(keys: [GLFW_KEY_MINUS, GLFW_KEY_KP_SUBTRACT], label: "-", action2D: nil, action3D: .zoomOut, help: "3D: zoom out"),
            KeyBinding(keys: [GLFW_KEY_LEFT_BRACKET], label: "[", action2D: nil, action3D: .pointSizeDown, help: "3D: smaller points"),
            KeyBinding(keys: [GLFW_KEY_RIGHT_BRACKET], label: "]", action2D: nil, action3D: .pointSizeUp, help: "3D: bigger points"),
            KeyBinding(keys: [GLFW_KEY_G], label: "G", action2D: nil, action3D: .cycleColorBy, help: "3D: color points by color / depth / height"),
            KeyBinding(keys: [GLFW_KEY_T], label: "T", action2D: nil, action3D: .togglePointMethod, help: "3D: draw points by compute / raster"),
            KeyBinding(keys: [GLFW_KEY_N], label: "N", action2D: nil, action3D: .toggleEDL,
                       help: "3D: eye-dome lighting on / off (compute and cpu points)"),
            KeyBinding(keys: [GLFW_KEY_W], label: "W", action2D: nil, action3D: .cycleWorld,
                       help: "3D, sources with poses: camera frame / world coordinates with the camera path / world, accumulating the fused cloud"),
            KeyBinding(keys: [GLFW_KEY_A], label: "A", action2D: nil, action3D: .cyclePickTool,
                       help: "3D: pick tool: distance / polygon area / volume above the floor / box"),
            KeyBinding(keys: [GLFW_KEY_ENTER, GLFW_KEY_KP_ENTER], label: "Enter", action2D: nil, action3D: .measurePicks,
                       help: "3D: measure the picks (area: their polygon; volume, box: the floor through them, none picked: RANSAC's)"),
            KeyBinding([GLFW_KEY_F1, GLFW_KEY_H], "F1 / H", .togglePanel, "control panel on / off"),
            KeyBinding([GLFW_KEY_SLASH], "?", .toggleHelp, "this key list", shift: true),
            KeyBinding([GLFW_KEY_ESCAPE, GLFW_KEY_Q], "Esc / Q", .quit, "quit (during a long PLY load: cancel it)"),
        ]
        return rows
    }()

    /// The action for a key press in a view, if any.
    public static func action(key: Int32, shift: Bool, ctrl: Bool = false, in3D: Bool) -> ViewerAction? {
        if ctrl, let b = all.first(where: { $0.ctrl && $0.keys.contains(key) }) { return in3D ? b.action3D : b.action2D }
        for b in all where b.keys.contains(key) && !b.ctrl {
            if b.shift && !shift { continue }
            return in3D ? b.action3D : b.action2D
        }
        return nil
    }

    /// Mouse gestures, listed with the keys.
    public static let mouse: [(String, String)] = [
        ("hover / click", "2D: depth (mm under 1 m, m above) and 3D position of the pixel"),
        ("hover", "3D, PLY cloud: the nearest point's index, depth, x y z and color"),
        ("left-drag", "3D: orbit"),
        ("right-drag, Shift+left-drag", "3D: roll"),
        ("middle-drag, Ctrl+left-drag", "3D: pan"),
        ("scroll", "3D: zoom toward the cursor"),
        ("double-click", "3D: reset the view"),
        ("click two points", "3D: distance between them in mm"),
        ("click points, Enter", "3D, pick tool area / volume / box (A): the polygon or the floor, then measure"),
        ("left-drag on the image", "2D, Quality section open: the ROI rectangle"),
    ]

    /// The key table as Markdown (docs/VIEWER.md's "Keys" section is exactly this text; a test).
    public static var markdown: String {
        var s = "| key | what it does |\n| --- | --- |\n"
        for b in all { s += "| \(b.label) | \(b.help) |\n" }
        for (g, h) in mouse { s += "| \(g) | \(h) |\n" }
        return s
    }

    /// The key table as lines for the `?` overlay.
    public static var overlayLines: [String] {
        let width = (all.map(\.label.count) + mouse.map(\.0.count)).max() ?? 8
        func pad(_ s: String) -> String { s + String(repeating: " ", count: max(0, width - s.count)) }
        return all.map { "\(pad($0.label))  \($0.help)" } + mouse.map { "\(pad($0.0))  \($0.1)" }
    }
}
