import CGLFW
import Capture
import DepthKit
import Foundation

extension ViewerApp {
    /// Handles the queued keys and clicks, and the hover readout. Keys were routed when they came
    /// (`KeyRoute`: a panel text field gets them, else the key table); ImGui keeps the mouse while
    /// it is over a panel.
    func handleInput(now: Double) {
        let events = window.takeEvents()
        let imguiMouse = imgui.wantsMouse
        var keys = 0
        for e in events {
            switch e {
            case let .key(key, mods):
                keys += 1
                let shift = mods & GLFW_MOD_SHIFT != 0, ctrl = mods & GLFW_MOD_CONTROL != 0
                let action = KeyBindings.action(key: key, shift: shift, ctrl: ctrl, in3D: view == .threeD)
                logUI("key \(key) -> \(action.map { "\($0)" } ?? "none")")
                if let action { perform(action) }
            case let .panelKey(key):
                keys += 1
                logUI("key \(key) -> panel")
            case let .mouseButton(button, pressed, mods, x, y, time, batch):
                guard !imguiMouse else {
                    if !pressed { ui.quality.dragStart = nil }   // a ROI drag let go over the panel is dropped
                    continue
                }
                if view == .threeD {
                    if let s = view3D.scene {
                        view3D.input.mouseButton(button: button, pressed: pressed, mods: mods, x: x, y: y, now: time, batch: batch) {
                            s.pick(x: $0, y: $1)
                        }
                    }
                } else if button == GLFW_MOUSE_BUTTON_LEFT {
                    if pressed {
                        ui.pinnedReadout = readout(atWindowX: x, y: y)
                        if let r = ui.pinnedReadout, options.logReadout {
                            print("readout: \(r.text)")
                            fflush(nil)
                        }
                    }
                    qualityMouse(pressed: pressed, x: x, y: y)
                }
            case let .scroll(_, dy, x, y):
                guard !imguiMouse else { continue }
                if view == .threeD, let s = view3D.scene { view3D.input.scroll(dy: dy, x: x, y: y) { s.pick(x: $0, y: $1) } }
            }
        }
        logState(force: keys > 0)
        let (cx, cy) = window.cursor
        if view == .threeD {
            if !imguiMouse { view3D.input.drag(x: cx, y: cy, window: window) }
            // A point list's hover readout (CloudHover.swift); --log-readout prints each new one.
            if let s = view3D.scene, s.updateHover(x: cx, y: cy, active: !imguiMouse), options.logReadout, let r = s.hoverReadout {
                print("hover: \(r.text)")
                fflush(nil)
            }
        } else {
            ui.hoverReadout = imguiMouse ? nil : readout(atWindowX: cx, y: cy)
        }
    }

    /// The depth under a window point: window → letterbox → displayed image → depth map pixel.
    func readout(atWindowX x: Double, y: Double) -> DepthReadout? {
        guard settings.depthOn, let frame = depth.current, let depth = frame.depth, let out = composer.lastOutput else { return nil }
        let box = imageBox(out)
        guard let p = box.imagePixel(windowX: x, windowY: y) else { return nil }
        let map = depth.map
        let q = Letterbox.rescale(p, from: (out.width, out.height), to: (map.width, map.height))
        return DepthReadout(depth: depth, x: q.x, y: q.y)
    }

    func perform(_ action: ViewerAction) {
        do {
            switch action {
            case .togglePause:
                if let p = playback { p.isPaused ? p.resume() : p.pause() } else { notice("\(session.name) cannot pause") }
            case .stepBackward, .stepForward:
                let forward = action == .stepForward
                guard let p = playback else { notice("\(session.name) cannot step or seek"); return }
                if p.isPaused { try p.step(by: forward ? 1 : -1) } else {
                    try p.seek(toFrame: max(0, p.currentIndex + (forward ? 10 : -10)))
                }
            case .seekBackward: try playback?.seek(toFrame: max(0, (playback?.currentIndex ?? 0) - 10))
            case .seekForward: try playback?.seek(toFrame: (playback?.currentIndex ?? 0) + 10)
            case .seekStart: try playback?.seek(toFrame: 0)
            case .mode(let i):
                guard i < PreviewMode.all.count else { return }
                settings.mode = PreviewMode.all[i]
                settings.filterOn = true
                logUI("mode \(settings.mode.name)")
            case .snapshot: capture.snapshotRequested = true
            case .toggleRecord:
                if let source = session.source {
                    capture.toggleRecording(view: view, frame: depth.current, source: source, calibration: depth.calibration)
                } else {
                    notice("record: a PLY point list has no frames to record", isError: true)
                }
            case .exportPLY: capture.exportPLY(frame: depth.current)
            case .markStart: markExport(start: true)
            case .markEnd: markExport(start: false)
            case .toggleExport: toggleExport()
            case .toggleView:
                view = view == .twoD ? .threeD : .twoD
                if view == .threeD && view3D.scene == nil { notice("the 3D view is not available in this build") }
                if view == .twoD, view3D.showsPLY { notice("2D: a PLY point list has no color or depth image; Tab returns to 3D") }
                logUI("view \(view.rawValue)")
            case .quit: if !session.cancelLoad() { window.shouldClose = true }   // Esc during a long PLY load cancels it
            case .fullscreen: window.toggleFullscreen(); swapchain.needsRecreate = true
            case .toggleVsync:
                swapchain.vsync.toggle()
                swapchain.needsRecreate = true
                notice("vsync \(swapchain.vsync ? "on" : "off")")
            case .cycleColormap:
                settings.cycleColormap()
                logUI("colormap \(settings.colormap.rawValue)")
            case .cycleBackend:
                settings.backend = settings.backend.next
                notice("backend \(settings.backend.rawValue)")
            case .togglePanel: ui.showPanel.toggle()
            case .toggleHelp: ui.showHelp.toggle()
            case .toggleFilter: settings.filterOn.toggle()
            case .toggleDepth: settings.depthOn.toggle()
            case .toggleBlend: settings.blend.toggle()
            case .toggleRosyMatrix: settings.rosyMatrix.toggle()
            case .toggleRange: settings.equalized.toggle()
            case .toggleLoop:
                if let p = playback { p.loop.toggle(); notice("loop \(p.loop ? "on" : "off")") }
            case .toggleSmoothing:
                settings.smoothing.enabled.toggle()
                notice("smoothing \(settings.smoothing)")
            case .mixUp: settings.mix = Limits.mix.clamp(settings.mix + 0.1); logUI("mix \(settings.mix)")
            case .mixDown: settings.mix = Limits.mix.clamp(settings.mix - 0.1); logUI("mix \(settings.mix)")
            case .resetView, .zoomIn, .zoomOut, .pointSizeDown, .pointSizeUp, .orbitLeft, .orbitRight, .orbitUp, .orbitDown:
                view3D.scene?.perform(action)
            case .toggleEDL:
                view3D.scene?.perform(action)
                if let s = view3D.scene { logUI("3d eye-dome lighting \(s.renderer.eyeDomeLighting.enabled ? "on" : "off")") }
            case .cycleWorld:
                let world = view3D.world
                world.set(world.mode.next)
                let posed = session.source?.poses != nil
                notice("3D: \(world.mode.label)" + (posed || world.mode == .camera ? "" : " (\(session.name) has no camera poses)"))
                logUI("3d world \(world.mode.rawValue)")
            case .toggleQuality:
                ui.quality.toggle()
                if ui.quality.isOpen { ui.showPanel = true }
                logUI("quality \(ui.quality.isOpen ? "open" : "closed")")
            case .saveQualityCSV: saveQualityCSV()
            case .cyclePickTool, .measurePicks:
                view3D.scene?.perform(action)
            case .cycleColorBy, .togglePointMethod:
                view3D.scene?.perform(action)
                if let s = view3D.scene { logUI("3d points \(s.renderer.method.rawValue), color by \(s.renderer.colorBy.rawValue)") }
            }
        } catch {
            notice("\(error)", isError: true)
        }
    }
}
