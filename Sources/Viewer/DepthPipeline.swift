import Capture
import DepthKit
import GPUKit

/// What the window does to each frame its source gives (`SourceSession`) before anything reads it:
/// depth smoothed (`DepthSmoothingStage`, CPU or GPU by the backend), the calibration resolved
/// (`--calibration`/`--intrinsics`, else the source's, else defaults) and, when the cameras differ
/// and alignment is on, depth aligned to color. `current` is the frame every consumer shows.
final class DepthPipeline {
    private let options: ViewerOptions
    private let context: GPUContext
    private let log: ViewerLog
    /// Depth smoothing between the source and every consumer, made on the first `sync` from the settings then.
    private var smoothing: DepthSmoothingStage?
    private let alignment: DepthAlignmentStage
    /// The frame shown: the newest taken, its depth smoothed and aligned.
    private(set) var current: FrameSet?
    /// The calibration of `current`: `--calibration`/`--intrinsics`, else the source's, else
    /// defaults (its `origin` says which; the status line shows it). After alignment it is the
    /// aligned one.
    private(set) var calibration: RGBDCalibration?
    /// `current` before alignment: its depth in the depth camera's own pixels and intrinsics (what
    /// the Quality section measures, as `depthlens quality` does); `current` itself when nothing is aligned.
    private(set) var unaligned: FrameSet?
    /// The calibration before alignment (what `info` would print).
    private(set) var recordedCalibration: RGBDCalibration?
    /// What `recordedCalibration` was resolved for: the source's generation and the frame sizes.
    private var resolvedFor: (Int, SIMD4<Int>)?
    private var saidCalibration = false

    init(options: ViewerOptions, context: GPUContext, log: ViewerLog) {
        self.options = options
        self.context = context
        self.log = log
        alignment = DepthAlignmentStage(mode: options.align)
    }

    /// Another source was opened: nothing of the last one is shown or carried over.
    func reset() {
        current = nil
        unaligned = nil
        smoothing?.reset()
        calibration = nil
        recordedCalibration = nil
        saidCalibration = false
    }

    /// A new frame from `session`'s source: smoothed, calibrated and aligned, it becomes `current`.
    func take(_ f: FrameSet, from session: SourceSession, alignDepth: Bool) {
        guard let source = session.source else { return }
        current = prepared(smoothed(f, playing: !(session.playback?.isPaused ?? false)), source: source,
                           generation: session.generation, alignDepth: alignDepth)
    }

    // MARK: Smoothing

    /// Applies panel/key changes and backend switches (smoothing on the GPU when the backend is
    /// gpu, else on the CPU, which on lavapipe is the faster one); a changed setting re-smooths a
    /// paused or still frame of `session`'s source. Runs once a frame, before the source is polled.
    func sync(_ settings: inout ViewSettings, session: SourceSession) {
        settings.smoothing = settings.smoothing.clamped()
        let stage = smoothing ?? DepthSmoothingStage(smoother: DepthSmoother(settings: settings.smoothing))
        smoothing = stage
        let wantGPU = settings.backend == .gpu
        if wantGPU != (stage.smoother is GPUDepthSmoother) {
            if wantGPU {
                do {
                    stage.replaceSmoother(try GPUDepthSmoother(settings: settings.smoothing, context: context))
                } catch {
                    log.notice("smoothing on the GPU failed: \(error); it runs on the CPU", isError: true)
                    settings.backend = .cpu
                }
            } else {
                stage.replaceSmoother(DepthSmoother(settings: settings.smoothing))
            }
        }
        guard settings.smoothing != stage.settings else { return }
        stage.settings = settings.smoothing
        log.ui("smoothing \(settings.smoothing)")
        let playback = session.playback
        if playback?.isPaused ?? false || !((session.source?.isLive ?? false) || playback != nil), let source = session.source {
            do {
                if let f = try stage.reapplyLast() {
                    current = prepared(f, source: source, generation: session.generation, alignDepth: settings.alignDepth)
                }
            } catch {
                log.notice("smoothing failed: \(error)", isError: true)
            }
        }
    }

    /// A frame from the source with its depth smoothed (as delivered when smoothing is off or fails).
    private func smoothed(_ f: FrameSet, playing: Bool) -> FrameSet {
        guard let smoothing else { return f }
        do {
            return try smoothing.apply(f, playing: playing)
        } catch {
            log.notice("smoothing failed: \(error)", isError: true, seconds: 3)
            return f
        }
    }

    // MARK: Calibration and alignment

    /// The frame with its calibration resolved and, when the cameras differ and `alignDepth` is
    /// on, its depth aligned to color (smoothing ran before, on the depth camera's own pixels).
    private func prepared(_ f: FrameSet, source: FrameSource, generation: Int, alignDepth: Bool) -> FrameSet {
        var frame = f
        // Resolved once per source and frame sizes (a calibration holds arrays: made per frame,
        // it would be the frame's allocations).
        let key = SIMD4(f.color.width, f.color.height, f.depth?.map.width ?? 0, f.depth?.map.height ?? 0)
        let resolved: RGBDCalibration
        if let r = recordedCalibration, let k = resolvedFor, k.0 == generation, k.1 == key {
            resolved = r
        } else {
            do { resolved = try options.calibration.resolve(for: source, frame: f) } catch {
                // A calibration file for another aspect ratio: said once, and the source's own used.
                log.notice("\(error); the source's own calibration is used", isError: true)
                resolved = (try? CalibrationOverride().resolve(for: source, frame: f))
                    ?? .assumed(depthWidth: key.z, depthHeight: key.w, colorWidth: key.x, colorHeight: key.y)
            }
            recordedCalibration = resolved
            resolvedFor = (generation, key)
        }
        options.calibration.apply(resolved, to: &frame)
        unaligned = frame
        if !saidCalibration {
            saidCalibration = true
            log.notice("calibration: \(resolved.origin)" + (resolved.needsAlignment ? "; depth and color are different cameras" : ""))
        }
        alignment.mode = alignDepth ? options.align : .none
        do {
            let (aligned, c) = try alignment.apply(frame, calibration: resolved)
            calibration = c
            return aligned
        } catch {
            log.notice("alignment failed: \(error); raw depth shown", isError: true, seconds: 3)
            calibration = resolved
            return frame
        }
    }
}
