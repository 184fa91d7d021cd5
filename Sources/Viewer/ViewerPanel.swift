import Capture
import DepthKit
import Foundation

extension ViewerApp {
    /// The ImGui frame: control panel (F1 / H), status line, readout, notices, `?` key list.
    func buildUI(now: Double) {
        let w = Float(swapchain.extent.width), h = Float(swapchain.extent.height)
        if showPanel { buildPanel(width: w) }

        // Status line (always): FPS, stages, dropped frames, device.
        var status = String(format: "%.0f fps", stats.fps)
        status += "  " + stats.stageMs.filter { $0.1 > 0.005 }.map { String(format: "%@ %.1f", $0.0, $0.1) }.joined(separator: "  ")
        if !stats.gpuMs.isEmpty {
            status += "  | GPU " + stats.gpuMs.map { String(format: "%@ %.2f", $0.0, $0.1) }.joined(separator: " ")
        }
        status += "  | dropped \(stats.dropped)  | \(context.name)"
        UI.overlay(status, x: 8, y: h - 22, color: [0.8, 0.9, 0.8])

        // What is shown, top left.
        var what = "\(settings.mode.title)"
        if let out = lastOutput { what += " - \(out.label)" }
        if view == .threeD { what = "3D point cloud" }
        if let p = playback { what += p.isPaused ? "  [paused, frame \(p.currentIndex)]" : "  [frame \(p.currentIndex)]" }
        UI.overlay(what + "   (? for keys)", x: 8, y: 8)

        // Readout: hover, and the last click pinned.
        var y: Float = 30
        if view == .twoD {
            if let r = hoverReadout { UI.overlay(r.text, x: 8, y: y, color: [1, 1, 0.6]); y += 22 }
            if let r = pinnedReadout { UI.overlay("clicked " + r.text, x: 8, y: y, color: [0.6, 1, 1]); y += 22 }
        } else if let s = scene3D {
            s.drawOverlay()
            for line in s.overlayLines { UI.overlay(line, x: 8, y: y, color: [0.6, 1, 1]); y += 22 }
        }
        if let note = lastOutput?.note, view == .twoD { UI.overlay(note, x: 8, y: y, color: [1, 0.7, 0.3]); y += 22 }

        // Errors that persist, then notices that fade.
        var lines: [(String, Bool)] = []
        if let e = sourceError { lines.append(("source: \(e)", true)) }
        let shaderErrors = processor.shaderErrors + [present.lastError, scene3D?.shaderError].compactMap({ $0 })
        if shaderErrors != lastShaderErrors {
            lastShaderErrors = shaderErrors
            for e in shaderErrors { logUI("shader error: \(e.split(separator: "\n").first.map(String.init) ?? e)") }
        }
        for e in shaderErrors {
            lines.append(("shader: \(e.split(separator: "\n").first.map(String.init) ?? e)", true))
        }
        notices.removeAll { $0.until < now }
        lines += notices.map { ($0.text, $0.isError) }
        var ny = h - 48
        for (text, isError) in lines.reversed() {
            UI.overlay(text, x: 8, y: ny, color: isError ? [1, 0.45, 0.4] : [0.9, 0.9, 0.9])
            ny -= 22
        }

        if showHelp {
            // One column when it fits, else two side by side (a 640×480 window).
            let lines = ["Keys and mouse (? closes)", ""] + KeyBindings.overlayLines
            let perColumn = Int((h - 80) / 17)
            let columns = lines.count <= perColumn ? [lines] : [Array(lines.prefix((lines.count + 1) / 2)), Array(lines.dropFirst((lines.count + 1) / 2))]
            let colWidth = min(620, (w - 30) / Float(columns.count))
            for (i, col) in columns.enumerated() {
                if UI.begin("Keys\(i)", x: 10 + Float(i) * (colWidth + 10), y: 36, width: colWidth, height: h - 80, alpha: 0.92,
                            decorated: false) {
                    for l in col { UI.text(l) }
                }
                UI.end()
            }
        }
    }

    private func buildPanel(width: Float) {
        let panelWidth: Float = 360
        defer { UI.end() }
        guard UI.begin("depthlens", x: max(0, width - panelWidth - 10), y: 10, width: panelWidth, height: 0) else { return }
        func log(_ name: String) {
            guard options.logUI, !loggedLayout, framesShown >= 2 else { return }
            let r = UI.lastItemRect
            print(String(format: "layout: %@ %.0f %.0f %.0f %.0f", name, r.x, r.y, r.w, r.h))
        }

        if UI.header("Mode") {
            for (i, m) in PreviewMode.all.enumerated() {
                let label = m.numberKey.map { "\($0)  \(m.title)" } ?? m.title
                if UI.radio(label, settings.mode == m) { perform(.mode(i)) }
                log("mode-\(m.name)")
            }
            if UI.radio("2D", view == .twoD), view != .twoD { perform(.toggleView) }
            UI.sameLine()
            if UI.radio("3D", view == .threeD), view != .threeD { perform(.toggleView) }
        }
        if UI.header("Filter") {
            UI.checkbox("filter on", &settings.filterOn)
            UI.sameLine()
            UI.checkbox("depth on", &settings.depthOn)
            UI.checkbox("rosy as color matrix", &settings.rosyMatrix)
            UI.checkbox("blend with color", &settings.blend)
            log("blend")
            if UI.slider("mix", &settings.mix, 0...1) { logUI(String(format: "mix %.3f", settings.mix)) }
            log("mix")
            var cm = Colormap.allCases.firstIndex(of: settings.colormap) ?? 0
            if UI.combo("colormap", &cm, Colormap.allCases.map(\.rawValue)) { settings.colormap = Colormap.allCases[cm] }
            UI.checkbox("equalized range", &settings.equalized)
            if !settings.equalized {
                UI.slider("min m", &settings.rangeMin, 0...10)
                UI.slider("max m", &settings.rangeMax, 0.01...16)
            }
            UI.slider("focus", &settings.focus, 0...1)
            var b = ViewerBackend.allCases.firstIndex(of: settings.backend) ?? 0
            if UI.combo("backend", &b, ViewerBackend.allCases.map(\.rawValue)) { settings.backend = ViewerBackend.allCases[b] }
        }
        if UI.header("Playback") {
            if let p = playback {
                if UI.button(p.isPaused ? "play" : "pause") { perform(.togglePause) }
                UI.sameLine()
                if UI.button("< step") { if !p.isPaused { p.pause() }; perform(.stepBackward) }
                UI.sameLine()
                if UI.button("step >") { if !p.isPaused { p.pause() }; perform(.stepForward) }
                var loop = p.loop
                UI.sameLine()
                if UI.checkbox("loop", &loop) { p.loop = loop }
                var fps = Float(p.fps ?? 0)
                if UI.slider("fps", &fps, 0...120, format: fps == 0 ? "recorded" : "%.0f") { p.fps = fps < 0.5 ? nil : Double(fps) }
                if let n = p.frameCount {
                    var f = Float(p.currentIndex)
                    if UI.slider("frame", &f, 0...Float(max(n - 1, 1)), format: "%.0f") { try? p.seek(toFrame: Int(f)) }
                } else {
                    UI.text("frame \(p.currentIndex)")
                }
            } else {
                UI.text("\(source.name): live")
            }
            UI.text("source")
            UI.sameLine()
            let enter = UI.inputText("##source", &sourceText)
            if UI.button("reopen") || enter { reopenSource() }
        }
        if UI.header("Status") {
            UI.text(String(format: "%.1f fps, %d dropped", stats.fps, stats.dropped))
            UI.text("device: \(context.name)")
            UI.text("present: \(swapchain.presentModeName), \(swapchain.extent.width)x\(swapchain.extent.height)")
            for (k, v) in stats.stageMs { UI.text(String(format: "  %-9@ %6.2f ms", k, v)) }
            if !stats.kernelMs.isEmpty { UI.text("CPU per kernel") }
            for (k, v) in stats.kernelMs { UI.text(String(format: "  %-12@ %6.2f ms", k, v)) }
            if !stats.gpuMs.isEmpty { UI.text("GPU (timestamps)") }
            for (k, v) in stats.gpuMs { UI.text(String(format: "  %-12@ %6.2f ms", k, v)) }
            if let f = current {
                UI.text("color \(f.color.width)x\(f.color.height)" + (f.depth.map { ", depth \($0.map.width)x\($0.map.height)" } ?? ", no depth"))
            }
        }
        if options.logUI && !loggedLayout && framesShown >= 2 {
            let r = UI.windowRect
            print(String(format: "layout: panel %.0f %.0f %.0f %.0f", r.x, r.y, r.w, r.h))
            fflush(stdout)
            loggedLayout = true
        }
    }
}
