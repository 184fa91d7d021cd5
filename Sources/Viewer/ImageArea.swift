/// Where the picture goes: the whole window, or, with the panel shown, the part left of the
/// docked panel (the panel sits beside the picture, never over it). The present pass and the
/// hover / click readout both use `imageBox`, so the readout follows the picture.
extension ViewerApp {
    /// The docked panel's width in a window `windowWidth` wide: 360 px, at most half the window.
    static func panelWidth(windowWidth: Float) -> Float { min(360, max(0, windowWidth / 2).rounded(.down)) }

    /// The window area the picture is letterboxed into (from the window's left edge).
    var imageArea: (width: Int, height: Int) {
        let w = Int(swapchain.extent.width), h = Int(swapchain.extent.height)
        return ui.showPanel && view == .twoD ? (w - Int(Self.panelWidth(windowWidth: Float(w))), h) : (w, h)
    }

    /// The letterbox of `out` in `imageArea`.
    func imageBox(_ out: FrameProcessor.Output) -> Letterbox { PresentComposer.box(out, in: imageArea) }
}
