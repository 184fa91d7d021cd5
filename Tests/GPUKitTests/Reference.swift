import DepthKit
import TestSupport
import Foundation

/// The kernel formulas of docs/design/kernels.md written plainly, the reference until (and besides) the CPU kernels.
enum Reference {
    static func color(_ src: PixelBuffer, _ f: (SIMD4<Float>) -> SIMD4<Float>) -> PixelBuffer {
        let out = PixelBuffer(width: src.width, height: src.height, format: src.format)
        for y in 0..<src.height {
            for x in 0..<src.width {
                let (r, g, b, a) = src.rgba(x: x, y: y)
                let v = f(SIMD4<Float>(Float(r), Float(g), Float(b), Float(a)) / 255)
                out.setRGBA(x: x, y: y, (unorm8(v.x), unorm8(v.y), unorm8(v.z), unorm8(v.w)))
            }
        }
        return out
    }

    static func rosy(_ src: PixelBuffer) -> PixelBuffer { color(src) { SIMD4($0.x, 0, $0.z, 1) } }

    static func colorMatrix(_ src: PixelBuffer, _ m: ColorMatrix) -> PixelBuffer {
        color(src) { p in
            m.bias + SIMD4(m.r.x, m.g.x, m.b.x, m.a.x) * p.x + SIMD4(m.r.y, m.g.y, m.b.y, m.a.y) * p.y
                + SIMD4(m.r.z, m.g.z, m.b.z, m.a.z) * p.z + SIMD4(m.r.w, m.g.w, m.b.w, m.a.w) * p.w
        }
    }

    static func depthMap(_ d: PixelBuffer, _ f: (Float) -> SIMD3<Float>?) -> PixelBuffer {
        let out = PixelBuffer(width: d.width, height: d.height, format: .rgba8)
        for y in 0..<d.height {
            for x in 0..<d.width {
                let v = d.row(y, as: Float.self)[x]
                if isValidDepth(v), let c = f(v) {
                    out.setRGBA(x: x, y: y, (unorm8(c.x), unorm8(c.y), unorm8(c.z), 255))
                } else {
                    out.setRGBA(x: x, y: y, (0, 0, 0, 255))
                }
            }
        }
        return out
    }

    static func stats(_ d: PixelBuffer) -> (Float, Float) {
        var lo = Float.infinity, hi = -Float.infinity, n = 0
        for y in 0..<d.height { for x in 0..<d.width { let v = d.row(y, as: Float.self)[x]; if isValidDepth(v) { n += 1; lo = min(lo, v); hi = max(hi, v) } } }
        return n > 0 ? (lo, hi) : (0, 0)
    }

    static func grayscale(_ d: PixelBuffer, offset: Float?, range: Float?) -> PixelBuffer {
        let (lo, hi) = stats(d)
        let off = offset ?? lo, rng = range ?? (hi - lo)
        return depthMap(d) { v in
            let g: Float = rng > 0 ? (v - off) / rng : 0
            return SIMD3(repeating: g)
        }
    }

    static func colormap(_ d: PixelBuffer, _ map: Colormap, _ range: DepthRange) -> PixelBuffer {
        switch range {
        case let .fixed(lo, hi):
            return depthMap(d) { map.color(1 - clamp01(($0 - lo) / (hi - lo))) }
        case let .equalized(lo, hi, perMeter):
            let bins = max(1, Int(((hi - lo) * Float(perMeter)).rounded(.up)))
            func bin(_ v: Float) -> Int { Int(min(max((v - lo) * Float(perMeter), 0), Float(bins - 1))) }
            var counts = [UInt32](repeating: 0, count: bins)
            for y in 0..<d.height { for x in 0..<d.width { let v = d.row(y, as: Float.self)[x]; if isValidDepth(v) { counts[bin(v)] += 1 } } }
            for i in 1..<max(bins, 1) { counts[i] += counts[i - 1] }
            let total = Float(counts[bins - 1])
            return depthMap(d) { map.color(1 - Float(counts[bin($0)]) / total) }
        }
    }

    static func mix(_ a: PixelBuffer, _ b: PixelBuffer, _ f: Float) -> PixelBuffer {
        let out = PixelBuffer(width: a.width, height: a.height, format: .rgba8)
        for y in 0..<a.height {
            for x in 0..<a.width {
                let u = (Float(x) + 0.5) * Float(b.width) / Float(a.width) - 0.5
                let v = (Float(y) + 0.5) * Float(b.height) / Float(a.height) - 0.5
                let x0 = Int(u.rounded(.down)), y0 = Int(v.rounded(.down))
                let fx = u - Float(x0), fy = v - Float(y0)
                func px(_ xx: Int, _ yy: Int) -> SIMD4<Float> {
                    let (r, g, bb, aa) = b.rgba(x: min(max(xx, 0), b.width - 1), y: min(max(yy, 0), b.height - 1))
                    return SIMD4(Float(r), Float(g), Float(bb), Float(aa))
                }
                let bv = (px(x0, y0) * (1 - fx) + px(x0 + 1, y0) * fx) * (1 - fy) + (px(x0, y0 + 1) * (1 - fx) + px(x0 + 1, y0 + 1) * fx) * fy
                let (r, g, bb, aa) = a.rgba(x: x, y: y)
                let av = SIMD4<Float>(Float(r), Float(g), Float(bb), Float(aa))
                let o = av * (1 - f) + bv * f + 0.5
                out.setRGBA(x: x, y: y, (UInt8(o.x), UInt8(o.y), UInt8(o.z), UInt8(o.w)))
            }
        }
        return out
    }
}

enum Inputs {
    static func color(_ w: Int, _ h: Int, _ format: PixelFormat = .rgba8, seed: UInt64 = 1) -> PixelBuffer {
        var rng = SeededRandom(seed: seed)
        let b = PixelBuffer(width: w, height: h, format: format)
        for y in 0..<h { for x in 0..<w { b.setRGBA(x: x, y: y, (.random(in: 0...255, using: &rng), .random(in: 0...255, using: &rng), .random(in: 0...255, using: &rng), .random(in: 0...255, using: &rng))) } }
        b.markModified()
        return b
    }

    /// Random depth in (0.2, 8) m with NaN, ±Inf, 0, negative and denormal sprinkled in.
    static func depth(_ w: Int, _ h: Int, seed: UInt64 = 2, specials: Bool = true) -> PixelBuffer {
        var rng = SeededRandom(seed: seed)
        let b = PixelBuffer(width: w, height: h, format: .depthFloat32)
        let special: [Float] = [0, .nan, .infinity, -.infinity, -1, -0.0, .leastNonzeroMagnitude * 0 + 0]
        for y in 0..<h {
            for x in 0..<w {
                var v = Float.random(in: 0.2..<8, using: &rng)
                if specials && Int.random(in: 0..<10, using: &rng) == 0 { v = special.randomElement(using: &rng)! }
                b.row(y, as: Float.self)[x] = v
            }
        }
        b.markModified()
        return b
    }
}

/// Largest per-byte difference of two buffers of the same size and format.
func maxDifference(_ a: PixelBuffer, _ b: PixelBuffer) -> Int {
    precondition(a.frameFormat == b.frameFormat, "\(a.frameFormat) vs \(b.frameFormat)")
    let x = a.packedBytes(), y = b.packedBytes()
    var m = 0
    for i in x.indices { m = max(m, abs(Int(x[i]) - Int(y[i]))) }
    return m
}
