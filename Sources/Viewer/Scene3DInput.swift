import CGLFW
import DepthKit
import Foundation
import GPUKit

/// The 3D view's input and camera (the window's side of `Scene3D`, owned by `ViewerApp`): the
/// `OrbitCamera` and the framing of the last draw, the mouse (left-drag orbits, right-drag or
/// Shift+left-drag rolls, middle-drag or Ctrl+left-drag pans, scroll zooms toward the cursor,
/// double-click resets), the camera's keys, the picks (clicking two points measures them), the
/// user's point size and `--spin`'s clock. `Scene3D` (the picture cache and point layers) draws
/// through it and picks the points for it.
final class Scene3DInput {
    var camera: OrbitCamera?
    /// The framing of the last draw (for picking and the overlay), set by `Scene3D`'s draws.
    var viewProjection = Matrix4.identity
    var extent = (width: 1, height: 1)
    var focal: Float = 500
    /// Picked points (world, meters): at most two for a distance, a polygon's corners for the other tools.
    var picks: [SIMD3<Float>] = []
    /// The pick tool (A) and its last area, volume or box (Scene3DMeasure.swift).
    let measure = MeasureTool()
    /// The point size set by keys or the panel (nil: the fitted one); see `Scene3D.pointSize`.
    var userPointSize: Float?
    private(set) var press: (button: Int32, mods: Int32, x: Double, y: Double, moved: Bool)?
    private var lastPos: (x: Double, y: Double)?
    private var lastClick: (time: Double, x: Double, y: Double, batch: Int)?
    /// `--spin`: when the camera was last turned (ViewerSpin.swift).
    var spunAt: Double?
    /// Where picks, resets and the 3D keys' changes are told (`--log-readout`, `--log-ui`).
    var log: ((String) -> Void)?
    /// The renderer's camera for the last matrix, made again (an array of 16 floats) only when the view moved.
    private var lastCamera: (matrix: Matrix4, camera: PointCloudCamera)?

    init(log: ((String) -> Void)? = nil) { self.log = log }

    /// Sets the framing of a draw: what picking, the picks' line and the overlay use.
    func frame(viewProjection m: Matrix4, width: Int, height: Int, focal f: Float) {
        viewProjection = m
        extent = (width, height)
        focal = f
    }

    /// The renderer's camera for `m`. A moving view gets a new matrix every frame: its floats are
    /// written into the last camera's array (unique once the last frame's copies are gone), so
    /// turning allocates nothing.
    func pointCloudCamera(_ m: Matrix4) -> PointCloudCamera {
        guard var last = lastCamera else {
            let c = PointCloudCamera(viewProjection: m.floats)
            lastCamera = (m, c)
            return c
        }
        if last.matrix == m { return last.camera }
        lastCamera = nil   // the one reference left is `last`'s: the write below is in place
        last.camera.viewProjection.withUnsafeMutableBufferPointer { f in
            func put(_ i: Int, _ c: SIMD4<Float>) { f[4 * i] = c.x; f[4 * i + 1] = c.y; f[4 * i + 2] = c.z; f[4 * i + 3] = c.w }
            put(0, m.c0); put(1, m.c1); put(2, m.c2); put(3, m.c3)
        }
        last.matrix = m
        lastCamera = last
        return last.camera
    }

    /// Where a world point lands in the window (nil behind the eye).
    func screen(_ p: SIMD3<Float>) -> (Float, Float)? {
        PointPicker.project(p, viewProjection, width: Float(extent.width), height: Float(extent.height)).map { ($0.x, $0.y) }
    }

    var measuredDistance: Float? {
        guard measure.tool == .distance, picks.count == 2 else { return nil }
        let d = picks[0] - picks[1]
        return (d * d).sum().squareRoot()
    }

    /// The picks on screen: a line (distance), or a polygon closed once it has three corners.
    func drawOverlay() {
        for shape in measure.shapes {   // what the last area or box found, in green
            for i in shape.indices {
                if let a = screen(shape[i]), let b = screen(shape[(i + 1) % shape.count]) { UI.line(from: a, to: b, color: [0.3, 1, 0.4]) }
            }
        }
        guard !picks.isEmpty else { return }
        let pts = picks.compactMap { screen($0) }
        switch measure.tool {
        case .distance:
            if pts.count == 2 { UI.line(from: pts[0], to: pts[1]) }
            else if pts.count == 1 { UI.line(from: pts[0], to: pts[0]) }
        case .area, .volume, .box:
            let color: SIMD3<Float> = measure.tool == .area ? [1, 1, 0] : [0.4, 0.8, 1]
            for i in pts.indices {
                if i + 1 < pts.count { UI.line(from: pts[i], to: pts[i + 1], color: color) }
                else if pts.count >= 3 { UI.line(from: pts[i], to: pts[0], color: color) }
                else if pts.count == 1 { UI.line(from: pts[i], to: pts[i], color: color) }
            }
        }
    }

    /// A measurement that finished (`MeasureTool`) goes to the overlay and, as `measure:` lines, to the log.
    func pollMeasurement() {
        guard let lines = measure.poll() else { return }
        for line in lines { log?("measure: \(line)") }
    }

    /// True while a mouse drag is held (the view moves under the user).
    var isDragging: Bool { press?.moved == true }

    /// A button went down or up at window point (x, y). `pick` finds the point drawn there
    /// (`Scene3D.pick`), asked for a click that did not move.
    func mouseButton(button: Int32, pressed: Bool, mods: Int32, x: Double, y: Double, now: Double, batch: Int,
                     pick: (Double, Double) -> SIMD3<Float>?) {
        if pressed {
            if button == GLFW_MOUSE_BUTTON_LEFT, let c = lastClick, now - c.time < 1, now - c.time < 0.4 || batch - c.batch <= 1,
               abs(c.x - x) < 5, abs(c.y - y) < 5 {
                reset()
                lastClick = nil
                press = nil
                return
            }
            press = (button, mods, x, y, false)
            lastPos = (x, y)
            if button == GLFW_MOUSE_BUTTON_LEFT { lastClick = (now, x, y, batch) }
            return
        }
        guard press?.button == button else { return }
        // Events can outrun frames (a fast drag ends before the next poll): finish the drag here.
        drag(x: x, y: y, window: nil)
        guard let p = press else { return }
        press = nil
        lastPos = nil
        if button == GLFW_MOUSE_BUTTON_LEFT, !p.moved, p.mods & (GLFW_MOD_SHIFT | GLFW_MOD_CONTROL) == 0 {
            if let point = pick(x, y) {
                if measure.measured || picks.count >= measure.tool.maxPicks {
                    picks.removeAll()
                    measure.clear()
                }
                picks.append(point)
                log?(String(format: "pick: x %.3f y %.3f z %.3f m", point.x, point.y, point.z))
                if let d = measuredDistance { log?(String(format: "distance: %.0f mm", d * 1000)) }
            }
        }
    }

    /// Applies the drag since the last frame (polled: smooth whatever the event rate).
    func drag(x: Double, y: Double, window: Window?) {
        guard var p = press, let last = lastPos, var cam = camera else { return }
        let dx = Float(x - last.x), dy = Float(y - last.y)
        lastPos = (x, y)
        guard dx != 0 || dy != 0 else { return }
        if abs(x - p.x) + abs(y - p.y) > 3 { p.moved = true; press = p }
        guard p.moved else { return }
        let shift = p.mods & GLFW_MOD_SHIFT != 0, ctrl = p.mods & GLFW_MOD_CONTROL != 0
        switch p.button {
        case GLFW_MOUSE_BUTTON_RIGHT: cam.roll(by: dx * 0.01)
        case GLFW_MOUSE_BUTTON_MIDDLE: cam.pan(pixels: dx, dy, focalPixels: focal)
        default:
            if shift { cam.roll(by: dx * 0.01) }
            else if ctrl { cam.pan(pixels: dx, dy, focalPixels: focal) }
            else { cam.orbit(yaw: -dx * 0.005, pitch: dy * 0.005) }
        }
        camera = cam
    }

    /// Zooms toward the point under (x, y) (`pick`, see `mouseButton`).
    func scroll(dy: Double, x: Double, y: Double, pick: (Double, Double) -> SIMD3<Float>?) {
        guard var cam = camera else { return }
        cam.zoom(by: Float(pow(0.85, dy)), toward: pick(x, y))
        camera = cam
    }

    func reset() {
        camera?.reset()
        picks.removeAll()
        measure.clear()
        userPointSize = nil
        log?("reset")
    }

    /// The camera's keys (`Scene3D.perform` routes the 3D view's keys here and keeps the drawing's).
    /// Every action is named: one added to `ViewerAction` must be routed or listed (a compile error until it is).
    func perform(_ action: ViewerAction) {
        guard var cam = camera else { return }
        let step: Float = 5 * .pi / 180
        switch action {
        case .resetView: reset(); return
        case .zoomIn: cam.zoom(by: 0.8)
        case .zoomOut: cam.zoom(by: 1.25)
        case .orbitLeft: cam.orbit(yaw: step, pitch: 0)
        case .orbitRight: cam.orbit(yaw: -step, pitch: 0)
        case .orbitUp: cam.orbit(yaw: 0, pitch: -step)
        case .orbitDown: cam.orbit(yaw: 0, pitch: step)
        case .pointSizeUp, .pointSizeDown, .cycleColorBy, .togglePointMethod, .toggleEDL, .cyclePickTool, .measurePicks:
            return   // the drawing's (Scene3D.perform)
        case .togglePause, .stepBackward, .stepForward, .seekBackward, .seekForward, .seekStart, .mode, .snapshot, .exportPLY,
             .toggleView, .quit, .fullscreen, .toggleVsync, .toggleRecord, .cycleColormap, .cycleBackend, .togglePanel,
             .toggleHelp, .toggleFilter, .toggleDepth, .toggleBlend, .toggleRosyMatrix, .toggleRange, .toggleLoop,
             .mixUp, .mixDown, .toggleSmoothing, .markStart, .markEnd, .toggleExport, .cycleWorld, .toggleQuality, .saveQualityCSV:
            return   // the window's actions (ViewerApp.perform), not the 3D view's
        }
        camera = cam
    }
}
