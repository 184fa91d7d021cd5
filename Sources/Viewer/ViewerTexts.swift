import DepthKit
import Foundation

/// The window's texts that change only with what is shown: its title and the overlay's top line.
struct ViewerTexts {
    struct TitleParts: Equatable {
        var source: Int
        var mode: String
    }
    struct OverlayParts: Equatable {
        var mode: String
        var label: String?
        var threeD: Bool
        var paused: Bool?
    }
    var title = TextMemo<TitleParts>()
    var overlay = TextMemo<OverlayParts>()
    var sourceLive = TextMemo<Int>()
    /// The panel's Status section, made once a second with the figures (`makePanelStatusLines`).
    var panelStatus: [String] = []

    /// The status line's note on the shown depth: relative depth (a portrait photo's) is not meters.
    static func depthNote(_ depth: DepthData?) -> String {
        depth?.accuracy == .relative ? "  | relative depth: near/far only, not meters" : ""
    }
}

/// The window's texts: the overlay's top line and the title (rebuilt when what they show
/// changes), the status line and the panel's Status section (rebuilt once a second with the figures).
extension ViewerApp {
    /// Draws the top-left line: mode, what the last output was, playback position, "(? for keys)".
    /// The text before the frame number is rebuilt only when it changes; the number (new every
    /// frame during playback) is written with it into a stack buffer (`withDecimalText`).
    func drawOverlayTitle(x: Float, y: Float) {
        let parts = ViewerTexts.OverlayParts(mode: settings.mode.title, label: composer.lastOutput?.label, threeD: view == .threeD,
                                             paused: playback?.isPaused)
        let base = ui.texts.overlay.text(for: parts) { p in
            var what = p.mode
            if let label = p.label { what += " - \(label)" }
            if p.threeD { what = "3D point cloud" }
            if let paused = p.paused { what += paused ? "  [paused, frame " : "  [frame " }
            return p.paused == nil ? what + "   (? for keys)" : what
        }
        if let frame = playback?.currentIndex, parts.paused != nil {
            withDecimalText(base, frame, "]   (? for keys)") { UI.overlay(cString: $0, x: x, y: y) }
        } else {
            UI.overlay(base, x: x, y: y)
        }
    }

    /// Sets the window title when the source or the mode changed.
    func updateWindowTitle() {
        let name = session.name
        let parts = ViewerTexts.TitleParts(source: session.generation, mode: settings.mode.title)
        var changed = false
        let title = ui.texts.title.text(for: parts) { p in
            changed = true
            return "depthlens - \(name) - \(p.mode)"
        }
        if changed { window.setTitle(title) }
    }

    /// The panel's Status section from the last second's figures.
    func makePanelStatusLines() -> [String] {
        let stats = self.stats.perSecond
        var lines = [String(format: "%.1f fps, %d dropped", stats.fps, stats.dropped), "device: \(swapchain.context.name)"]
        if let d = deliveryLine { lines.append(d) }
        lines += session.thermal.panelLines
        lines += ["present: \(swapchain.presentModeName), \(swapchain.extent.width)x\(swapchain.extent.height)"]
        for (k, v) in stats.stageMs { lines.append(String(format: "  %-9@ %6.2f ms", k, v)) }
        if !stats.kernelMs.isEmpty { lines.append("CPU per kernel") }
        for (k, v) in stats.kernelMs { lines.append(String(format: "  %-12@ %6.2f ms", k, v)) }
        if !stats.gpuMs.isEmpty { lines.append("GPU (timestamps)") }
        for (k, v) in stats.gpuMs { lines.append(String(format: "  %-12@ %6.2f ms", k, v)) }
        if let f = depth.current {
            lines.append("color \(f.color.width)x\(f.color.height)" + (f.depth.map { ", depth \($0.map.width)x\($0.map.height)" } ?? ", no depth"))
        }
        return lines
    }

    /// The window's status line from the last second's figures: FPS, stages, GPU times, dropped frames, device.
    func makeStatusText() -> String {
        let stats = self.stats.perSecond
        // A portrait photo's depth separates near from far but is not meters (docs/PHOTOS.md):
        // said first, so a narrow window shows it too.
        var status = String(format: "%.0f fps", stats.fps) + ViewerTexts.depthNote(depth.current?.depth)
        status += "  " + stats.stageMs.filter { $0.1 > 0.005 }.map { String(format: "%@ %.1f", $0.0, $0.1) }.joined(separator: "  ")
        if !stats.gpuMs.isEmpty {
            status += "  | GPU " + stats.gpuMs.map { String(format: "%@ %.2f", $0.0, $0.1) }.joined(separator: " ")
        }
        // Which intrinsics the 3D view, readout and exports use: recorded, given, or assumed.
        let calibration = depth.calibration.map { c in
            c.origin.hasPrefix("default") ? "assumed intrinsics (525·W/640, center)" : "calibration: \(c.origin)"
        }
        return status + "  | dropped \(stats.dropped)" + (deliveryLine.map { "  | \($0)" } ?? "")
            + "  | \(session.thermal.status)" + (calibration.map { "  | \($0)" } ?? "") + "  | \(swapchain.context.name)"
    }

    /// What a network source received and lost on the way ("dds: 600 images received, 2 lost
    /// (0.33 %), 0 overrun"), nil for other sources: the status line, the panel and `--stats`.
    /// Read once a second; losses never hold a frame back (the source shows what arrives).
    var deliveryLine: String? {
        guard let d = session.source?.delivery else { return nil }
        return d.deliveryCounts.line(String(session.name.prefix { $0 != ":" }))
    }
}
