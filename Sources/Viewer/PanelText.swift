import CImGui
import DepthKit
import GPUKit
import Foundation

// The panel's fixed lists and the text it formats on the stack (numbers that change every frame,
// shown without a String).

/// The panel's fixed lists, made once (a CaseIterable's `allCases` is a new array on every call).
enum PanelLists {
    static let modeLabels = PreviewMode.all.map { m in m.numberKey.map { "\($0)  \(m.title)" } ?? m.title }
    static let colormapCases = Colormap.allCases
    static let colormaps = UI.joined(Colormap.allCases.map(\.rawValue))
    static let backendCases = ViewerBackend.allCases
    static let backends = UI.joined(ViewerBackend.allCases.map(\.rawValue))
    static let pointDrawingCases = PointDrawing.allCases
    static let pointDrawings = UI.joined(PointDrawing.allCases.map(\.rawValue))
    static let colorByCases = PointCloudColorBy.allCases
    static let colorBys = UI.joined(PointCloudColorBy.allCases.map(\.rawValue))
    static let worldViewCases = WorldView.allCases
    static let worldViews = UI.joined(WorldView.allCases.map(\.label))
    static let voxelSizes = UI.joined(SceneWorld.voxelSizes.map(SceneWorld.centimeters))
}

/// Calls `body` with "prefix" + the decimal digits of `n` + "suffix" as a C string built on the
/// stack (a frame number shown every frame, without a String).
func withDecimalText<R>(_ prefix: String, _ n: Int, _ suffix: StaticString, _ body: (UnsafePointer<CChar>) throws -> R) rethrows -> R {
    var prefix = prefix
    return try prefix.withUTF8 { head in
        try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: head.count + suffix.utf8CodeUnitCount + 24) { buf in
            var k = 0
            for b in head { buf[k] = b; k += 1 }
            if n < 0 { buf[k] = 0x2D; k += 1 }
            let start = k
            var v = n.magnitude
            repeat { buf[k] = UInt8(truncatingIfNeeded: 0x30 + v % 10); v /= 10; k += 1 } while v > 0
            var i = start, j = k - 1
            while i < j { buf.swapAt(i, j); i += 1; j -= 1 }
            suffix.withUTF8Buffer { for b in $0 { buf[k] = b; k += 1 } }
            buf[k] = 0
            return try buf.baseAddress!.withMemoryRebound(to: CChar.self, capacity: k + 1) { try body($0) }
        }
    }
}

extension UI {
    /// Text from a C string (formatted on the stack).
    static func text(cString s: UnsafePointer<CChar>) { dl_imgui_text(s, 0, 0, 0, 0) }
    /// Overlay text from a C string (formatted on the stack, `DepthReadout.withText`).
    static func overlay(cString s: UnsafePointer<CChar>, x: Float, y: Float, color: SIMD3<Float> = [1, 1, 1]) {
        dl_imgui_overlay_text(x, y, s, color.x, color.y, color.z)
    }
}
