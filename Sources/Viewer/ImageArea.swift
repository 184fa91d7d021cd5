/// Where the picture goes: the whole window, or, with the panel shown, the part left of the
/// docked panel (the panel sits beside the picture, never over it). The present pass and the
/// hover / click readout both use `imageBox`, so the readout follows the picture. All of it comes
/// from the window's one `WindowLayout`, as the panel's and the status line's rectangles do.
extension ViewerApp {
    /// The docked panel's width in a window `windowWidth` wide: 360 px, at most half the window.
    static func panelWidth(windowWidth: Float) -> Float { WindowLayout.panelWidth(windowWidth: windowWidth) }

    /// The window's layout now: the panel, the picture's area, the status line's width.
    var layout: WindowLayout {
        WindowLayout(windowWidth: Float(swapchain.extent.width), windowHeight: Float(swapchain.extent.height),
                     showPanel: ui.showPanel, twoD: view == .twoD)
    }

    /// The window area the picture is letterboxed into (from the window's left edge).
    var imageArea: (width: Int, height: Int) {
        let p = layout.picture
        return (Int(p.width), Int(p.height))
    }

    /// The letterbox of `out` in `imageArea`.
    func imageBox(_ out: FrameProcessor.Output) -> Letterbox { PresentComposer.box(out, in: imageArea) }
}
