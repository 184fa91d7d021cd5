import DepthKit
import Foundation
import GPUKit

/// How the 3D view draws points (the panel's "3D points", `view --points`): the GPU's compute
/// rasterizer, its POINT_LIST pipeline, or DepthKit's `CPUPointRenderer` (the compute path's
/// picture made on the CPU and copied into the window as 2D CPU pictures are; a PLY point list
/// keeps a host copy for it).
public enum PointDrawing: String, CaseIterable, Sendable {
    case compute, raster, cpu
}

/// The 3D view's point drawing choices (keys T and G, the panel): compute, raster or cpu, color by
/// color texel, depth or height through the current colormap.
extension Scene3D {
    /// "points: compute (64-bit), color by height, 307200 drawn" for the status overlay.
    var pointsLine: String {
        let how = drawsOnCPU ? "cpu (\(activeCores) cores)"
            : renderer.method == .compute ? "compute (\(renderer.atomicBits)-bit atomics)" : "raster"
        return "points: \(how), color by \(renderer.colorBy.rawValue)"
    }

    /// The drawing chosen (cpu: `usesCPU`, else the renderer's method).
    var drawing: PointDrawing {
        get { usesCPU ? .cpu : renderer.method == .raster ? .raster : .compute }
        set {
            usesCPU = newValue == .cpu
            renderer.method = newValue == .raster ? .raster : .compute
            if newValue == .raster { renderer.colorBy = .color }   // the raster pipeline colors by texel only
        }
    }

    /// Whether this frame's points are drawn on the CPU: cpu chosen (a depth frame, or a point list
    /// with its host copy).
    var drawsOnCPU: Bool { usesCPU && (pointList == nil || pointList?.host != nil) }

    /// Panel rows under the 2D / 3D choice.
    func panel() {
        var m = PanelLists.pointDrawingCases.firstIndex(of: drawing) ?? 0
        if UI.combo("3D points", &m, joined: PanelLists.pointDrawings), PanelLists.pointDrawingCases[m] != drawing {
            drawing = PanelLists.pointDrawingCases[m]
            log?("3D points by \(drawing.rawValue)")
        }
        var c = PanelLists.colorByCases.firstIndex(of: renderer.colorBy) ?? 0
        if UI.combo("3D color by", &c, joined: PanelLists.colorBys) {
            renderer.colorBy = PanelLists.colorByCases[c]
            if renderer.colorBy != .color { renderer.method = .compute }
        }
    }

    /// The panel's last section, "3D shading" (last, so its rows move nothing above them): adaptive
    /// point size, eye-dome lighting with strength and radius.
    func shadingPanel() {
        guard UI.header("3D shading") else { return }
        var adaptive = adaptiveSize
        if UI.checkbox("adaptive point size (size = largest)", &adaptive) {
            adaptiveSize = adaptive
            log?(adaptive ? "3D adaptive point size on" : "3D adaptive point size off")
        }
        var edl = renderer.eyeDomeLighting
        if UI.checkbox("eye-dome lighting (N)", &edl.enabled) {
            if edl.enabled && drawing == .raster { drawing = .compute }   // raster does not shade
            log?(edl.enabled ? "3D eye-dome lighting on" : "3D eye-dome lighting off")
        }
        // Always shown, so the panel's layout does not move when the switch flips.
        UI.slider("EDL strength", &edl.strength, EyeDomeLighting.strengthRange)
        var radius = Float(edl.radius)
        if UI.slider("EDL radius (px)", &radius, 1...Float(EyeDomeLighting.radiusRange.upperBound), format: "%.0f") {
            edl.radius = Int(radius.rounded())
        }
        if edl.enabled && drawing == .raster { UI.text("eye-dome lighting needs compute or cpu points (raster does not shade)") }
        if edl != renderer.eyeDomeLighting { renderer.eyeDomeLighting = edl }
    }
}
