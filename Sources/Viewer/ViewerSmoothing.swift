import Capture
import DepthKit
import Foundation
import GPUKit

/// Depth smoothing in the window: `settings.smoothing` (Z, the panel's Smoothing section,
/// `--smooth …`) drives `SourceSession`'s smoothing stage, which smooths each new frame's depth
/// before anything reads it (colormaps, masks, effects, readout, 3D, PLY, snapshots). The smoother
/// runs on the GPU (synchronously, with a readback: the CPU consumers need the depth too) when the
/// backend is gpu; under cpu and auto on the CPU (on lavapipe the CPU reference is the faster one).
extension ViewerApp {
    /// The panel's Smoothing section: a switch and parameters per stage, clamped to their ranges
    /// (`DepthSmoothingSettings.*Range`; typed values outside a slider's range are clamped too).
    func buildSmoothingSection() {
        // Collapsed at first unless the run started with --smooth: the panel then fits a 720-pixel window.
        guard UI.header("Smoothing", open: options.smoothing.enabled) else { return }
        typealias S = DepthSmoothingSettings
        var s = settings.smoothing
        UI.checkbox("smooth depth (Z)", &s.enabled)
        UI.checkbox("temporal", &s.temporal)
        UI.slider("alpha", &s.alpha, S.alphaRange)
        var step = s.threshold * 100
        if UI.slider("step %", &step, (S.thresholdRange.lowerBound * 100)...(S.thresholdRange.upperBound * 100), format: "%.1f") {
            s.threshold = step / 100
        }
        UI.checkbox("hole filling", &s.holeFill)
        var frames = Float(s.holeFrames)
        if UI.slider("hold frames", &frames, Float(S.holeFramesRange.lowerBound)...Float(S.holeFramesRange.upperBound), format: "%.0f") {
            s.holeFrames = frames.isFinite ? Int(min(max(frames, 0), 1000).rounded()) : S().holeFrames
        }
        UI.checkbox("spatial fill", &s.spatial)
        var radius = Float(s.radius)
        if UI.slider("radius", &radius, Float(S.radiusRange.lowerBound)...Float(S.radiusRange.upperBound), format: "%.0f") {
            s.radius = radius.isFinite ? Int(min(max(radius, 0), 1000).rounded()) : S().radius
        }
        settings.smoothing = s.clamped()
    }
}
