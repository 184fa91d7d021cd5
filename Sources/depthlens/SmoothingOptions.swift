import ArgumentParser
import DepthKit
import Foundation
import GPUKit

/// `--smooth` and its stages' switches and parameters (view, record, process).
struct SmoothingOptions: ParsableArguments {
    @Flag(help: "Smooth depth before every consumer: temporal filter, hole filling, spatial fill (each can be switched off).")
    var smooth = false
    @Flag(help: "With --smooth: no temporal exponential smoothing.")
    var noTemporal = false
    @Option(help: "Weight of the new depth in the temporal filter, 0.01...1 (default 0.4).")
    var smoothAlpha: Float?
    @Option(help: "Depth step, relative to depth, that resets the temporal filter and stops spatial fills, 0.001...0.5 (default 0.03 = 3%).")
    var smoothThreshold: Float?
    @Flag(help: "With --smooth: no hole filling from earlier frames.")
    var noHoleFill = false
    @Option(help: "Frames a pixel keeps its last valid depth while invalid, 1...60 (default 4).")
    var holeFrames: Int?
    @Flag(help: "With --smooth: no spatial fill of small holes from neighbours.")
    var noSpatialFill = false
    @Option(help: "Radius of the spatial fill window in pixels, 1...4 (default 2).")
    var fillRadius: Int?

    /// The settings asked for; stage options without --smooth and numbers out of range are errors.
    func settings() throws -> DepthSmoothingSettings {
        var s = DepthSmoothingSettings()
        let given = noTemporal || noHoleFill || noSpatialFill || smoothAlpha != nil || smoothThreshold != nil
            || holeFrames != nil || fillRadius != nil
        if given && !smooth {
            throw DepthKitError.invalidArgument("smoothing options (--smooth-alpha, --hole-frames, --no-temporal, …) need --smooth")
        }
        s.enabled = smooth
        s.temporal = !noTemporal
        s.holeFill = !noHoleFill
        s.spatial = !noSpatialFill
        if let a = smoothAlpha { s.alpha = a }
        if let t = smoothThreshold { s.threshold = t }
        if let n = holeFrames { s.holeFrames = n }
        if let r = fillRadius { s.radius = r }
        try s.validate()
        return s
    }

    /// A smoother for `--backend`: the GPU port for gpu (the CPU with one line when there is no
    /// Vulkan device), the CPU reference otherwise.
    static func makeSmoother(_ settings: DepthSmoothingSettings, gpu: Bool) -> DepthSmoothing {
        guard gpu else { return DepthSmoother(settings: settings) }
        do {
            return try GPUDepthSmoother(settings: settings, context: try GPUContext.shared())
        } catch {
            GPUBackend.noteOnce("\(error); smoothing runs on the CPU")
            return DepthSmoother(settings: settings)
        }
    }
}
