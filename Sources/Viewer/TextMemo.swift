import CImGui
import DepthKit
import GPUKit
import Foundation

/// A line of text the render loop shows or looks things up by, rebuilt only when what it is made
/// from changes: comparing the parts allocates nothing, building the string does (steady state:
/// no allocation per frame, see `AllocationCounter`).
struct TextMemo<Parts: Equatable> {
    private var parts: Parts?
    private var text = ""

    /// The text for `parts`: the last one when the parts are the same, else `make(parts)`.
    mutating func text(for parts: Parts, _ make: (Parts) -> String) -> String {
        if parts != self.parts {
            self.parts = parts
            text = make(parts)
        }
        return text
    }
}

/// What a frame's label is made from: "jet blend 0.50 (GPU)".
struct OutputLabelParts: Equatable {
    var name: String
    var blend: Float?
    var gpu: Bool

    var text: String {
        name + (blend.map { " blend " + String(format: "%.2f", $0) } ?? "") + (gpu ? " (GPU)" : " (CPU)")
    }
}

/// What `--backend auto`'s key for a kernel and its sizes is made from (`FrameProcessor.autoKey`).
struct AutoKeyParts: Equatable {
    var stage: PreviewMode.Stage
    var rosyMatrix: Bool, blend: Bool
    var colormap: String, mode: String
    var colorWidth: Int, colorHeight: Int, depthWidth: Int, depthHeight: Int
}

/// The panel's fixed lists, made once (a CaseIterable's `allCases` is a new array on every call).
enum PanelLists {
    static let modeLabels = PreviewMode.all.map { m in m.numberKey.map { "\($0)  \(m.title)" } ?? m.title }
    static let colormapCases = Colormap.allCases
    static let colormaps = UI.joined(Colormap.allCases.map(\.rawValue))
    static let backendCases = ViewerBackend.allCases
    static let backends = UI.joined(ViewerBackend.allCases.map(\.rawValue))
    static let pointMethodCases = PointCloudMethod.allCases
    static let pointMethods = UI.joined(PointCloudMethod.allCases.map(\.rawValue))
    static let colorByCases = PointCloudColorBy.allCases
    static let colorBys = UI.joined(PointCloudColorBy.allCases.map(\.rawValue))
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

/// What a CPU depth-mask result was made from (`FrameProcessor`'s one-entry cache): compared,
/// never formatted into a string.
struct CPUEffectKey: Equatable {
    var color: ObjectIdentifier, colorGeneration: UInt64
    var depth: ObjectIdentifier, depthGeneration: UInt64
    var mode: String, focus: Float
}

extension UI {
    /// Text from a C string (formatted on the stack).
    static func text(cString s: UnsafePointer<CChar>) { dl_imgui_text(s, 0, 0, 0, 0) }
    /// Overlay text from a C string (formatted on the stack, `DepthReadout.withText`).
    static func overlay(cString s: UnsafePointer<CChar>, x: Float, y: Float, color: SIMD3<Float> = [1, 1, 1]) {
        dl_imgui_overlay_text(x, y, s, color.x, color.y, color.z)
    }
}

/// What the CPU colormap filter's cache key is made from ("colormap-jet-…").
struct CPUColormapKeyParts: Equatable {
    var name: String
    var range: DepthRange
}
