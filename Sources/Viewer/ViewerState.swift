import Foundation

extension ViewerApp {
    /// What the keys and the panel control, as one `key=value` line: `--log-ui` prints it as
    /// `state: …` after every key and whenever it changes, so tests see what a key did.
    var stateLine: String {
        var f: [(String, String)] = [
            ("view", view.rawValue), ("mode", settings.mode.name), ("colormap", settings.colormap.rawValue),
            ("backend", settings.backend.rawValue), ("filter", flag(settings.filterOn)), ("depth", flag(settings.depthOn)),
            ("blend", flag(settings.blend)), ("rosymatrix", flag(settings.rosyMatrix)), ("equalized", flag(settings.equalized)),
            ("mix", String(format: "%.3f", settings.mix)), ("focus", String(format: "%.3f", settings.focus)),
            ("range", String(format: "%.2f-%.2f", settings.rangeMin, settings.rangeMax)),
            ("smooth", flag(settings.smoothing.enabled)), ("recording", flag(capture.isRecording)),
            ("markin", export.selection.start.map { "\($0)" } ?? "-"), ("markout", export.selection.end.map { "\($0)" } ?? "-"),
            ("exports", "\(export.started)"), ("exporting", flag(export.isRunning)),
        ]
        if let p = playback {
            f += [("paused", flag(p.isPaused)), ("loop", flag(p.loop)), ("frame", "\(p.currentIndex)"),
                  ("fps", p.fps.map { String(format: "%.1f", $0) } ?? "recorded")]
        }
        f += [("panel", flag(ui.showPanel)), ("help", flag(ui.showHelp)), ("vsync", flag(swapchain.vsync)),
              ("fullscreen", flag(window.isFullscreen)), ("text", flag(imgui.wantsTextInput)), ("quality", flag(ui.quality.isOpen))]
        if let s = view3D.scene {
            f += [("points", String(format: "%.0f", s.pointSize)), ("colorby", s.renderer.colorBy.rawValue),
                  ("pointsby", s.drawing.rawValue), ("edl", flag(s.renderer.eyeDomeLighting.enabled)),
                  ("world", view3D.world.mode.rawValue), ("picktool", view3D.input.measure.tool.rawValue)]
            if let c = view3D.input.camera {
                f += [("zoom", String(format: "%.4f", c.distance)), ("yaw", String(format: "%.1f", c.pose.yaw * 180 / .pi)),
                      ("pitch", String(format: "%.1f", c.pose.pitch * 180 / .pi))]
            }
        }
        return f.map { "\($0.0)=\($0.1)" }.joined(separator: " ")
    }

    private func flag(_ b: Bool) -> String { b ? "1" : "0" }

    /// Prints the state line (`--log-ui`) when it changed, or always with `force` (after a key).
    func logState(force: Bool) {
        guard options.logUI else { return }
        let line = stateLine
        guard force || line != ui.lastStateLine else { return }
        ui.lastStateLine = line
        print("state: \(line)")
        fflush(nil)
    }
}
