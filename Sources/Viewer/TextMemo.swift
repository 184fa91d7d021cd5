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

/// The window's texts that change only with what is shown: its title and the overlay's top line.
struct ViewerTexts {
    struct TitleParts: Equatable {
        var source: ObjectIdentifier
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
    var sourceLive = TextMemo<ObjectIdentifier>()
    /// The panel's Status section, made once a second with the figures (`makePanelStatusLines`).
    var panelStatus: [String] = []
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
        let source = session.source
        let parts = ViewerTexts.TitleParts(source: ObjectIdentifier(source), mode: settings.mode.title)
        var changed = false
        let title = ui.texts.title.text(for: parts) { p in
            changed = true
            return "depthlens - \(source.name) - \(p.mode)"
        }
        if changed { window.setTitle(title) }
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

extension ViewerApp {
    /// The panel's Status section from the last second's figures.
    func makePanelStatusLines() -> [String] {
        let stats = self.stats.frame
        var lines = [String(format: "%.1f fps, %d dropped", stats.fps, stats.dropped), "device: \(swapchain.context.name)"]
        lines += thermal.panelLines
        lines += ["present: \(swapchain.presentModeName), \(swapchain.extent.width)x\(swapchain.extent.height)"]
        for (k, v) in stats.stageMs { lines.append(String(format: "  %-9@ %6.2f ms", k, v)) }
        if !stats.kernelMs.isEmpty { lines.append("CPU per kernel") }
        for (k, v) in stats.kernelMs { lines.append(String(format: "  %-12@ %6.2f ms", k, v)) }
        if !stats.gpuMs.isEmpty { lines.append("GPU (timestamps)") }
        for (k, v) in stats.gpuMs { lines.append(String(format: "  %-12@ %6.2f ms", k, v)) }
        if let f = session.current {
            lines.append("color \(f.color.width)x\(f.color.height)" + (f.depth.map { ", depth \($0.map.width)x\($0.map.height)" } ?? ", no depth"))
        }
        return lines
    }
}

/// What the CPU colormap filter's cache key is made from ("colormap-jet-…").
struct CPUColormapKeyParts: Equatable {
    var name: String
    var range: DepthRange
}
