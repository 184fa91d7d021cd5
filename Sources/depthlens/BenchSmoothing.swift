import DepthKit
import Foundation
import GPUKit

extension BenchKernel {
    /// `smooth`: all three smoothing stages (default settings) on the synthetic depth with 0.3 %
    /// noise and 5 % dropouts, cycling through 4 noisy frames so the temporal path runs. CPU: the
    /// DepthSmoother reference; GPU: GPUDepthSmoother end to end (copy in, 2 dispatches, copy out).
    static let smooth = BenchKernel(name: "smooth", input: { $0.depth.map }) { factory, frame in
        var noise = DepthNoise(relativeSigma: 0.003, dropout: 0.05, seed: 1)
        let frames = (0..<4).map { _ in noise.apply(to: frame.depth.depthFloat32()) }
        var s = DepthSmoothingSettings()
        s.enabled = true
        let smoother: DepthSmoothing
        if let gpu = factory as? GPUFilterFactory {
            smoother = try GPUDepthSmoother(settings: s, context: gpu.context, library: gpu.library)
        } else {
            smoother = DepthSmoother(settings: s)
        }
        var i = 0
        return Prepared(renderer: smoother as AnyObject) {
            defer { i += 1 }
            return try smoother.smooth(frames[i % frames.count])
        }
    }
}

extension GPUDepthSmoother: DispatchTimed { var lastDispatchMs: Double? { lastTiming?.dispatchMs } }

/// Largest difference between two depthFloat32 maps in micrometers (rounded up); a sample valid
/// in one and invalid in the other counts as Int.max.
func maxDepthDiffMicrometers(_ a: PixelBuffer, _ b: PixelBuffer) -> Int {
    var m: Float = 0
    for y in 0..<a.height {
        let p = a.row(y, as: Float.self), q = b.row(y, as: Float.self)
        for x in 0..<a.width {
            if (p[x] > 0) != (q[x] > 0) { return Int.max }
            m = max(m, abs(p[x] - q[x]))
        }
    }
    return Int((m * 1e6).rounded(.up))
}
