import CGLFW

/// Where one GLFW key event goes: the panel (ImGui) or the viewer's key table. A key is text only
/// while a text field is being edited (the source field, a slider value after Ctrl+click);
/// otherwise it always means what `KeyBindings` says, whether the panel is shown, hovered or was
/// clicked last. Tab is never the panel's (no focus hopping between widgets): it keeps its 2D/3D meaning.
struct KeyRoute: Equatable {
    var toPanel: Bool
    var toViewer: Bool

    /// - Parameters:
    ///   - key: the GLFW key code.
    ///   - action: GLFW_PRESS, GLFW_REPEAT or GLFW_RELEASE.
    ///   - textInput: a panel text field is being edited (`io.WantTextInput` of the last frame).
    init(key: Int32, action: Int32, textInput: Bool) {
        if Self.modifiers.contains(key) {
            // ImGui needs the modifier state for Ctrl+click on a slider; the viewer reads mods from events.
            toPanel = true
            toViewer = true
        } else if key == GLFW_KEY_TAB {
            toPanel = false
            toViewer = true
        } else if action == GLFW_RELEASE {
            // Releases only keep ImGui's key-down table right; the viewer acts on presses.
            toPanel = true
            toViewer = false
        } else {
            toPanel = textInput
            toViewer = !textInput
        }
    }

    init(toPanel: Bool, toViewer: Bool) {
        self.toPanel = toPanel
        self.toViewer = toViewer
    }

    static let modifiers: Set<Int32> = [GLFW_KEY_LEFT_SHIFT, GLFW_KEY_RIGHT_SHIFT, GLFW_KEY_LEFT_CONTROL, GLFW_KEY_RIGHT_CONTROL,
                                        GLFW_KEY_LEFT_ALT, GLFW_KEY_RIGHT_ALT, GLFW_KEY_LEFT_SUPER, GLFW_KEY_RIGHT_SUPER]
}
