import Capture
import DepthKit
import Foundation
import GPUKit

/// Depth smoothing in the window: `settings.smoothing` (Z, the panel's Smoothing section,
/// `--smooth …`) drives `smoothingStage`, which smooths each new frame's depth before anything
/// reads it (colormaps, masks, effects, readout, 3D, PLY, snapshots). The smoother runs on the
/// GPU (synchronously, with a readback: the CPU consumers need the depth too) when the backend is
/// gpu; under cpu and auto on the CPU (on lavapipe the CPU reference is the faster one).
extension ViewerApp {
    /// Applies panel/key changes and backend switches; a changed setting re-smooths a paused frame.
    func syncSmoothing() {
        settings.smoothing = settings.smoothing.clamped()
        let wantGPU = settings.backend == .gpu
        if wantGPU != (smoothingStage.smoother is GPUDepthSmoother) {
            if wantGPU {
                do {
                    smoothingStage.replaceSmoother(try GPUDepthSmoother(settings: settings.smoothing, context: context))
                } catch {
                    notice("smoothing on the GPU failed: \(error); it runs on the CPU", isError: true)
                    settings.backend = .cpu
                }
            } else {
                smoothingStage.replaceSmoother(DepthSmoother(settings: settings.smoothing))
            }
        }
        guard settings.smoothing != smoothingStage.settings else { return }
        smoothingStage.settings = settings.smoothing
        logUI("smoothing \(settings.smoothing)")
        if playback?.isPaused ?? false || !(source.isLive || playback != nil) {
            do {
                if let f = try smoothingStage.reapplyLast() { current = f }
            } catch {
                notice("smoothing failed: \(error)", isError: true)
            }
        }
    }

    /// A frame from the source with its depth smoothed (as delivered when smoothing is off or fails).
    func smoothed(_ f: FrameSet) -> FrameSet {
        do {
            return try smoothingStage.apply(f, playing: !(playback?.isPaused ?? false))
        } catch {
            notice("smoothing failed: \(error)", isError: true, seconds: 3)
            return f
        }
    }

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
