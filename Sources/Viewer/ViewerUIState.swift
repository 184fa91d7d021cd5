import Foundation

/// What the window's own interface keeps between frames: whether the docked panel and the key
/// list are shown, the panel's source field, the depth readouts, and the texts rebuilt only when
/// what they show changes (`TextMemo`), or once a second with the figures.
struct ViewerUIState {
    var showPanel: Bool
    var showHelp = false
    /// The panel's source field: a C buffer ImGui edits in place.
    var sourceText: [CChar]
    /// The depth under the pointer (2D), and at the last click.
    var hoverReadout: DepthReadout?
    var pinnedReadout: DepthReadout?
    /// Title and overlay lines, rebuilt only when they change (`TextMemo`).
    var texts = ViewerTexts()
    /// The "Camera controls" section's labels (ViewerCameraControls.swift).
    var cameraControls = CameraControlsPanel()
    /// The "IMU" section's plot buffers (IMUPlot.swift).
    var imuPlot = IMUPlot()
    /// The status line at the bottom of the window, rebuilt when the figures change (once a second).
    var statusText = ""
    /// The last `state:` line printed (`--log-ui`).
    var lastStateLine = ""
    /// The panel's layout was printed (`--log-ui`).
    var loggedLayout = false
    /// The shader errors last reported (`--watch-shaders`).
    var lastShaderErrors: [String] = []
    /// The "Quality" section: depth-quality metrics of the ROI, live (QualityPanel.swift).
    let quality = QualityPanel()

    init(showPanel: Bool, sourceText: String) {
        self.showPanel = showPanel
        self.sourceText = Array(sourceText.utf8CString) + [CChar](repeating: 0, count: 1024)
    }
}
