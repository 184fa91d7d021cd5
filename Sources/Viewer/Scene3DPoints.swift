import DepthKit
import Foundation
import GPUKit

/// The 3D view's point drawing choices (keys T and G, the panel): compute or raster, color by
/// color texel, depth or height through the current colormap.
extension Scene3D {
    /// "points: compute (64-bit), color by height, 307200 drawn" for the status overlay.
    var pointsLine: String {
        let how = renderer.method == .compute ? "compute (\(renderer.atomicBits)-bit atomics)" : "raster"
        return "points: \(how), color by \(renderer.colorBy.rawValue)"
    }

    /// Panel rows under the 2D / 3D choice.
    func panel() {
        var m = PanelLists.pointMethodCases.firstIndex(of: renderer.method) ?? 0
        if UI.combo("3D points", &m, joined: PanelLists.pointMethods), PanelLists.pointMethodCases[m] != renderer.method {
            perform(.togglePointMethod)
        }
        var c = PanelLists.colorByCases.firstIndex(of: renderer.colorBy) ?? 0
        if UI.combo("3D color by", &c, joined: PanelLists.colorBys) {
            renderer.colorBy = PanelLists.colorByCases[c]
            if renderer.colorBy != .color { renderer.method = .compute }
        }
    }
}
