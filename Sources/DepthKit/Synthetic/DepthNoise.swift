import Foundation

/// Sensor-like corruption of a clean depth map, seeded and repeatable: Gaussian noise relative
/// to depth (real sensors' error grows with distance) and pixels dropped at random. For the
/// smoothing tests and `depthlens bench`'s `smooth` row.
public struct DepthNoise {
    /// Standard deviation relative to depth (0.003 = 3 mm at 1 m).
    public var relativeSigma: Float
    /// Probability that a pixel is invalid (0) in a frame.
    public var dropout: Float
    private var state: UInt64

    public init(relativeSigma: Float, dropout: Float, seed: UInt64) {
        self.relativeSigma = relativeSigma
        self.dropout = dropout
        state = seed &* 6364136223846793005 &+ 1442695040888963407
    }

    /// Uniform in [0, 1) (PCG-style LCG, top 24 bits).
    public mutating func uniform() -> Float {
        state = state &* 6364136223846793005 &+ 1442695040888963407
        return Float(state >> 40) / Float(1 << 24)
    }

    /// Standard normal (Box–Muller).
    public mutating func gaussian() -> Float {
        let u1 = max(uniform(), 1e-7), u2 = uniform()
        return (-2 * logf(u1)).squareRoot() * cosf(2 * Float.pi * u2)
    }

    /// A new depthFloat32 map: each valid pixel dropped with `dropout`, else d·(1 + σ·N(0,1)).
    public mutating func apply(to clean: PixelBuffer) -> PixelBuffer {
        precondition(clean.format == .depthFloat32)
        let out = PixelBuffer(width: clean.width, height: clean.height, format: .depthFloat32)
        for y in 0..<clean.height {
            let s = clean.row(y, as: Float.self), o = out.row(y, as: Float.self)
            for x in 0..<clean.width {
                let drop = uniform() < dropout
                let n = gaussian()
                o[x] = isValidDepth(s[x]) && !drop ? s[x] * (1 + relativeSigma * n) : 0
            }
        }
        return out
    }
}
