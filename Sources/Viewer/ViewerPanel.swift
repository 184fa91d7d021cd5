import CPlatform
import Capture
import DepthKit
import Foundation

extension ViewerApp {
    /// The ImGui frame: control panel (F1 / H), status line, readout, notices, `?` key list.
    func buildUI(now: Double) {
        let w = Float(swapchain.extent.width), h = Float(swapchain.extent.height)
        export.poll(sourceGeneration: session.generation)
        if ui.showPanel { buildPanel(width: w) }

        // Status line (always): FPS, stages, dropped frames, device; rebuilt once a second with the figures.
        UI.overlay(ui.statusText, x: 8, y: h - 22, color: [0.8, 0.9, 0.8])

        // What is shown, top left.
        drawOverlayTitle(x: 8, y: 8)

        // Readout: hover, and the last click pinned.
        var y: Float = 30
        if view == .twoD {
            if let r = ui.hoverReadout { r.withText(prefix: "") { UI.overlay(cString: $0, x: 8, y: y, color: [1, 1, 0.6]) }; y += 22 }
            if let r = ui.pinnedReadout { r.withText(prefix: "clicked ") { UI.overlay(cString: $0, x: 8, y: y, color: [0.6, 1, 1]) }; y += 22 }
        } else if let s = view3D.scene {
            view3D.input.pollMeasurement()
            view3D.input.drawOverlay()
            view3D.world.drawPath(view3D.input)
            s.withOverlayLines { UI.overlay(cString: $0, x: 8, y: y, color: [0.6, 1, 1]); y += 22 }
            if let l = view3D.world.line { UI.overlay(l, x: 8, y: y, color: [0.6, 1, 1]); y += 22 }
            if let r = s.hoverReadout { r.withText(prefix: "") { UI.overlay(cString: $0, x: 8, y: y, color: [1, 1, 0.6]) }; y += 22 }
        }
        if view == .twoD { drawQualityROI() }
        if let note = composer.lastOutput?.note, view == .twoD { UI.overlay(note, x: 8, y: y, color: [1, 0.7, 0.3]); y += 22 }
        if let w = session.waitingText { UI.overlay(w, x: 8, y: y, color: [1, 0.7, 0.3]); y += 22 }

        // Errors that persist, then notices that fade.
        var lines: [(String, Bool)] = []
        if let e = session.error { lines.append(("source: \(e)", true)) }
        if let w = session.thermal.warning { lines.append((w, true)) }
        if let rec = capture.recordingStatus { lines.append((rec, true)) }
        if let load = session.ply.loadLine() { lines.append((load, false)) }
        // Shader errors come only from reloads (--watch-shaders).
        let shaderErrors = options.watchShaders ? composer.shaderErrors : []
        if shaderErrors != ui.lastShaderErrors {
            ui.lastShaderErrors = shaderErrors
            for e in shaderErrors { logUI("shader error: \(e.split(separator: "\n").first.map(String.init) ?? e)") }
        }
        for e in shaderErrors {
            lines.append(("shader: \(e.split(separator: "\n").first.map(String.init) ?? e)", true))
        }
        log.expire(now: now)
        // Bottom up: notices (newest lowest), then the persistent errors; no array built per frame.
        var ny = h - 48
        for n in log.notices.reversed() {
            UI.overlay(n.text, x: 8, y: ny, color: n.isError ? [1, 0.45, 0.4] : [0.9, 0.9, 0.9])
            ny -= 22
        }
        for (text, isError) in lines.reversed() {
            UI.overlay(text, x: 8, y: ny, color: isError ? [1, 0.45, 0.4] : [0.9, 0.9, 0.9])
            ny -= 22
        }

        if ui.showHelp {
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
        // Docked at the right edge, full height; the picture is letterboxed into what is left (ImageArea).
        let panelWidth = Self.panelWidth(windowWidth: width)
        defer { UI.end() }
        guard UI.beginDocked("depthlens", x: width - panelWidth, y: 0, width: panelWidth, height: Float(swapchain.extent.height)) else { return }
        func log(_ name: @autoclosure () -> String) {
            guard options.logUI, !ui.loggedLayout, stats.framesShown >= 2 else { return }
            let r = UI.lastItemRect
            print(String(format: "layout: %@ %.0f %.0f %.0f %.0f", name(), r.x, r.y, r.w, r.h))
        }

        if UI.header("Mode") {
            for (i, m) in PreviewMode.all.enumerated() {
                if UI.radio(PanelLists.modeLabels[i], settings.mode == m) { perform(.mode(i)) }
                log("mode-\(m.name)")
            }
            if UI.radio("2D", view == .twoD), view != .twoD { perform(.toggleView) }
            UI.sameLine()
            if UI.radio("3D", view == .threeD), view != .threeD { perform(.toggleView) }
            if view == .threeD, let s = view3D.scene {
                var size = s.pointSize
                if UI.slider("point size", &size, Limits.pointSize, format: "%.0f px") { s.pointSize = size }
            }
            if let s = view3D.scene { s.panel() }
        }
        if UI.header("Filter") {
            UI.checkbox("filter on", &settings.filterOn)
            UI.sameLine()
            UI.checkbox("depth on", &settings.depthOn)
            UI.checkbox("align depth to color", &settings.alignDepth)
            UI.checkbox("rosy as color matrix", &settings.rosyMatrix)
            UI.checkbox("blend with color", &settings.blend)
            log("blend")
            if UI.slider("mix", &settings.mix, Limits.mix) { logUI(String(format: "mix %.3f", settings.mix)) }
            log("mix")
            var cm = PanelLists.colormapCases.firstIndex(of: settings.colormap) ?? 0
            if UI.combo("colormap", &cm, joined: PanelLists.colormaps) { settings.colormap = PanelLists.colormapCases[cm] }
            UI.checkbox("equalized range", &settings.equalized)
            if !settings.equalized {
                if UI.slider("min m", &settings.rangeMin, Limits.depthMin) {
                    (settings.rangeMin, settings.rangeMax) = Limits.orderedDepthRange(min: settings.rangeMin, max: settings.rangeMax, editedMax: false)
                }
                if UI.slider("max m", &settings.rangeMax, Limits.depthMax) {
                    (settings.rangeMin, settings.rangeMax) = Limits.orderedDepthRange(min: settings.rangeMin, max: settings.rangeMax, editedMax: true)
                }
            }
            UI.slider("focus", &settings.focus, Limits.focus)
            var b = PanelLists.backendCases.firstIndex(of: settings.backend) ?? 0
            if UI.combo("backend", &b, joined: PanelLists.backends) { settings.backend = PanelLists.backendCases[b] }
        }
        buildSmoothingSection()
        buildCameraControlsSection()
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
                // Below the lowest rate (the slider's left end) plays at the recorded timestamps.
                if UI.slider("fps", &fps, 0...Limits.fps.upperBound, format: fps < Limits.fps.lowerBound ? "recorded" : "%.1f") {
                    p.fps = fps < Limits.fps.lowerBound ? nil : Double(fps)
                }
                if let n = p.frameCount {
                    var f = Float(p.currentIndex)
                    if UI.slider("frame", &f, 0...Float(max(n - 1, 1)), format: "%.0f") { try? p.seek(toFrame: Int(f)) }
                    // The timeline: frame index, the frame's own timestamp, time into the recording of its duration.
                    if let frame = depth.current {
                        let elapsed = session.timeline.firstTimestamp.map { frame.timestamp - $0 } ?? -1
                        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 128) { buf in
                            _ = dl_format_timeline(buf.baseAddress!, 128, frame.index, n, frame.timestamp, elapsed,
                                                   elapsed >= 0 ? session.timeline.durationSeconds ?? 0 : 0)
                            UI.text(cString: buf.baseAddress!)
                        }
                    } else if let line = session.ply.sequenceLine {
                        UI.text(line)   // a PLY sequence: index, file name, time
                    }
                } else {
                    withDecimalText("frame ", p.currentIndex, "") { UI.text(cString: $0) }
                }
            } else {
                let name = session.name, live = session.source?.isLive ?? false
                UI.text(ui.texts.sourceLive.text(for: session.generation) { _ in live ? "\(name): live" : "\(name): no playback" })
            }
            UI.text("source")
            UI.sameLine()
            let enter = UI.inputText("##source", &ui.sourceText)
            log("source")
            if UI.button("reopen") || enter { reopenSource() }
            if UI.button(!capture.isRecording ? "record (Ctrl+R)" : "stop recording (Ctrl+R)") { perform(.toggleRecord) }
            UI.sameLine()
            UI.checkbox("RGB-D as mkv", &capture.recordsRGBD)
        }
        if let imu = session.timeline.imu, UI.header("IMU") {
            // Around the frame shown (its timestamp: the clock the recording stamps IMU samples with).
            if let frame = depth.current {
                ui.imuPlot.draw(imu, at: frame.timestamp)
                log("imu")
            } else {
                UI.text("no frame shown yet")
            }
        }
        buildExportSection()
        buildQualitySection()
        if UI.header("Cameras") { buildCameraList() }
        if UI.header("Status") {
            // Lines made once a second with the figures (makePanelStatusLines), not per frame.
            for line in ui.texts.panelStatus { UI.text(line) }
        }
        if let s = view3D.scene { s.shadingPanel() }
        if view3D.scene != nil { view3D.world.panel(log: logUI) }
        if options.logUI && !ui.loggedLayout && stats.framesShown >= 2 {
            let r = UI.windowRect
            print(String(format: "layout: panel %.0f %.0f %.0f %.0f", r.x, r.y, r.w, r.h))
            fflush(nil)
            ui.loggedLayout = true
        }
    }
}
