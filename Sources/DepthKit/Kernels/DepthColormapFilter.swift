import Foundation

/// depthToJET and its siblings on the CPU: depthFloat32 in, rgba8 out, colored by
/// `Colormap.color(t)` and rounded with `unorm8`. Invalid depth (0, NaN, ±Inf, negative) is
/// black (0, 0, 0, 255); a frame with no valid depth is all black.
///
/// - `.equalized(minDepth, maxDepth, binsPerMeter)`: t = 1 − cdf(d). A histogram over the valid
///   depths has nbins = ⌈(maxDepth − minDepth)·binsPerMeter⌉ bins, bin(d) = Int((d − minDepth)·binsPerMeter)
///   clamped to [0, nbins − 1]; cdf(d) = (valid pixels whose bin ≤ bin(d)) / (valid pixels).
///   Valid depths outside [minDepth, maxDepth] are not dropped: the clamp puts them in the first
///   or last bin, so they count toward the cdf and color like the range's ends.
///   Three passes, each O(1) a pixel: histogram (one per band, merged), a color LUT with one
///   packed RGBA word per occupied bin, then a lookup.
/// - `.fixed(min, max)`: t = 1 − clamp((d − min)/(max − min)), colored per pixel.
public final class DepthColormapFilter: FilterRenderer {
    public let colormap: Colormap
    public let range: DepthRange
    public var description: String { colormap.rawValue }

    private var state: PreparedState?
    /// Equalized only: `bands` histograms of `bins` counts, then the merged cumulative counts,
    /// then the LUT. Allocated in `prepare`, reused every frame.
    private var bins = 0
    private var bands = 0
    private var histograms: UnsafeMutablePointer<UInt32>?
    private var cumulative: UnsafeMutablePointer<UInt32>?
    private var lut: UnsafeMutablePointer<UInt32>?

    public init(colormap: Colormap = .jet, range: DepthRange = .defaultEqualized) {
        self.colormap = colormap
        self.range = range
    }

    deinit { freeTables() }

    public var inputFormat: FrameFormat? { state?.input }
    public var outputFormat: FrameFormat? { state?.output }

    public func prepare(input: FrameFormat, outputRetainedBufferCountHint: Int) throws {
        try requireFormat(input, [.depthFloat32], kernel: description)
        freeTables()
        state = nil
        let n = try range.validatedBinCount(kernel: description)
        if case .equalized = range {
            bins = n
            // More bands than cores so one descheduled thread does not hold up the frame.
            bands = max(1, min(4 * ProcessInfo.processInfo.activeProcessorCount, input.height))
            histograms = .allocate(capacity: bins * bands)
            cumulative = .allocate(capacity: bins)
            lut = .allocate(capacity: bins)
        }
        state = try PreparedState(input: input, output: FrameFormat(width: input.width, height: input.height,
                                                                    pixelFormat: .rgba8),
                                  hint: outputRetainedBufferCountHint)
    }

    public func reset() {
        state = nil
        freeTables()
    }

    private func freeTables() {
        histograms?.deallocate(); cumulative?.deallocate(); lut?.deallocate()
        histograms = nil; cumulative = nil; lut = nil
        bins = 0; bands = 0
    }

    public func render(_ buffer: PixelBuffer) throws -> PixelBuffer {
        let s = try state.checked(buffer, kernel: description)
        let out = try s.pool.makeBuffer()
        switch range {
        case let .equalized(lo, _, perMeter):
            renderEqualized(buffer, out, minDepth: lo, binsPerMeter: Float(perMeter))
        case let .fixed(lo, hi):
            switch colormap {
            case .jet: renderFixed(buffer, out, lo, hi, JetMap.self)
            case .turbo: renderFixed(buffer, out, lo, hi, TurboMap.self)
            case .viridis: renderFixed(buffer, out, lo, hi, ViridisMap.self)
            case .grayscale: renderFixed(buffer, out, lo, hi, GrayMap.self)
            }
        }
        out.markModified()
        return out
    }

    private func renderEqualized(_ src: PixelBuffer, _ out: PixelBuffer, minDepth: Float, binsPerMeter: Float) {
        guard let histograms, let cumulative, let lut else { return }
        let nbins = bins, nbands = bands, w = src.width, h = src.height
        let last = Float(nbins - 1)

        // 1. Histogram, one per band so bands never share a counter.
        DispatchQueue.concurrentPerform(iterations: nbands) { band in
            let hist = histograms + band * nbins
            hist.initialize(repeating: 0, count: nbins)
            for y in (h * band / nbands)..<(h * (band + 1) / nbands) {
                let r = src.row(y, as: Float.self)
                var x = 0
                // Bins four at a time in vector code; every lane adds to its bin, invalid lanes
                // add 0 to bin 0, so there is no branch on validity.
                while x + 4 <= w {
                    let d = load4(r + x), v = validDepth(d)
                    let b = floorV(clampV((d.replacing(with: minDepth, where: .!v) - minDepth) * binsPerMeter, 0, last))
                    let one = U4.zero.replacing(with: 1, where: v)
                    hist[Int(b.x)] &+= one.x; hist[Int(b.y)] &+= one.y
                    hist[Int(b.z)] &+= one.z; hist[Int(b.w)] &+= one.w
                    x += 4
                }
                while x < w {
                    let d = r[x]
                    if d > 0 && d < .infinity {
                        hist[Int(floorU32(min(max((d - minDepth) * binsPerMeter, 0), last)))] &+= 1
                    }
                    x += 1
                }
            }
        }

        // 2. Merge and accumulate: cumulative[b] = valid pixels whose bin ≤ b.
        var running: UInt32 = 0
        for b in 0..<nbins {
            var c: UInt32 = 0
            for band in 0..<nbands { c &+= histograms[band * nbins + b] }
            running &+= c
            cumulative[b] = running
            // Only bins some pixel falls in are ever looked up; mark the rest so the LUT skips them.
            lut[b] = c == 0 ? 0 : 1
        }
        let valid = running
        let black = UInt32(littleEndian: 0xFF00_0000)
        if valid == 0 {
            parallelRows(h) { rows in
                for y in rows { out.row(y, as: UInt32.self).update(repeating: black, count: w) }
            }
            return
        }

        // 3. One packed RGBA color per occupied bin: t = 1 − cdf.
        let total = Float(valid), map = colormap
        for b in 0..<nbins where lut[b] != 0 {
            let c = map.color(1 - Float(cumulative[b]) / total)
            lut[b] = packRGBA(c)
        }

        // 4. Lookup. Invalid samples read a harmless bin, then the select makes them black.
        let lutPtr = UnsafePointer(lut)
        parallelRows(h) { rows in
            for y in rows {
                let r = src.row(y, as: Float.self), o = out.row(y, as: UInt32.self)
                var x = 0
                while x + 4 <= w {
                    let d = load4(r + x), v = validDepth(d)
                    let b = floorV(clampV((d.replacing(with: minDepth, where: .!v) - minDepth) * binsPerMeter, 0, last))
                    let c = U4(lutPtr[Int(b.x)], lutPtr[Int(b.y)], lutPtr[Int(b.z)], lutPtr[Int(b.w)])
                    store4(c.replacing(with: black, where: .!v), o + x)
                    x += 4
                }
                while x < w {
                    defer { x += 1 }
                    let d = r[x]
                    let valid = d > 0 && d < .infinity
                    let dd = valid ? d : minDepth
                    let color = lutPtr[Int(floorU32(min(max((dd - minDepth) * binsPerMeter, 0), last)))]
                    o[x] = valid ? color : black
                }
            }
        }
    }

    private func renderFixed<M: ColormapKernel>(_ src: PixelBuffer, _ out: PixelBuffer, _ lo: Float, _ hi: Float,
                                                _: M.Type) {
        let w = src.width, span = hi - lo
        let black = UInt32(littleEndian: 0xFF00_0000)
        parallelRows(src.height) { rows in
            for y in rows {
                let r = src.row(y, as: Float.self), o = out.row(y, as: UInt32.self)
                var x = 0
                if M.explicitVectors {
                    while x + 4 <= w {
                        let d = load4(r + x), v = validDepth(d)
                        let t = 1 - clampV((d.replacing(with: lo, where: .!v) - lo) / span, 0, 1)
                        let (cr, cg, cb) = M.colorV(t)
                        let c = unorm8V(cr) | unorm8V(cg) &<< 8 | unorm8V(cb) &<< 16 | 0xFF00_0000
                        store4(c.replacing(with: black, where: .!v), o + x)
                        x += 4
                    }
                }
                // The rest (every pixel for JET and gray): a plain `for` loop, which LLVM vectorizes.
                for x in x..<w {
                    let d = r[x]
                    let valid = d > 0 && d < .infinity
                    let dd = valid ? d : lo
                    let c = M.color(1 - clamp01((dd - lo) / span))
                    let color = UInt32(littleEndian: unorm8Fast(c.x) | unorm8Fast(c.y) << 8 | unorm8Fast(c.z) << 16 | 0xFF00_0000)
                    o[x] = valid ? color : black
                }
            }
        }
    }
}

/// rgb in [0, 1] to an rgba8 word in memory order (R, G, B, 255), each channel by `unorm8`.
@inline(__always)
func packRGBA(_ c: SIMD3<Float>) -> UInt32 {
    UInt32(littleEndian: UInt32(unorm8(c.x)) | UInt32(unorm8(c.y)) << 8 | UInt32(unorm8(c.z)) << 16 | 0xFF00_0000)
}

/// A colormap fixed at compile time, so generic pixel loops specialize to one formula and the
/// `Colormap` switch leaves the loop. `colorV` is `color` on four t values at once (R, G, B
/// planes), lane by lane the same float operations in the same order, so the same bytes.
protocol ColormapKernel {
    static func color(_ t: Float) -> SIMD3<Float>
    static func colorV(_ t: F4) -> (F4, F4, F4)
    /// Whether the fixed-range loop should use `colorV`. JET and gray are short enough that
    /// LLVM vectorizes the scalar loop itself, with native min/max, which measured faster than
    /// `colorV`'s compare-and-select; Turbo's and Viridis' SIMD-typed formulas it does not.
    static var explicitVectors: Bool { get }
}
enum JetMap: ColormapKernel {
    static var explicitVectors: Bool { false }
    @inline(__always) static func color(_ t: Float) -> SIMD3<Float> { Colormap.jet.color(t) }
    @inline(__always) static func colorV(_ t: F4) -> (F4, F4, F4) {
        let x = clampV(t, 0, 1)
        let x4 = 4 * x
        return (clampV(minV(x4 - 1.5, 4.5 - x4), 0, 1),
                clampV(minV(x4 - 0.5, 3.5 - x4), 0, 1),
                clampV(minV(x4 + 0.5, 2.5 - x4), 0, 1))
    }
}
enum TurboMap: ColormapKernel {
    static var explicitVectors: Bool { true }
    @inline(__always) static func color(_ t: Float) -> SIMD3<Float> { Colormap.turbo.color(t) }
    @inline(__always) static func colorV(_ t: F4) -> (F4, F4, F4) {
        let x = clampV(t, 0, 1)
        let x2 = x * x, x3 = x2 * x
        let y0 = x2 * x2, y1 = x2 * x3
        // SIMD4.sum() and SIMD2.sum() add left to right (from −0, which changes nothing).
        @inline(__always) func poly(_ c: SIMD4<Float>, _ e: SIMD2<Float>) -> F4 {
            ((((c.x + x * c.y) + x2 * c.z) + x3 * c.w)) + (y0 * e.x + y1 * e.y)
        }
        let r = poly(SIMD4(0.13572138, 4.61539260, -42.66032258, 132.13108234), SIMD2(-152.94239396, 59.28637943))
        let g = poly(SIMD4(0.09140261, 2.19418839, 4.84296658, -14.18503333), SIMD2(4.27729857, 2.82956604))
        let b = poly(SIMD4(0.10667330, 12.64194608, -60.58204836, 110.36276771), SIMD2(-89.90310912, 27.34824973))
        return (clampV(r, 0, 1), clampV(g, 0, 1), clampV(b, 0, 1))
    }
}
enum ViridisMap: ColormapKernel {
    static var explicitVectors: Bool { true }
    @inline(__always) static func color(_ t: Float) -> SIMD3<Float> { Colormap.viridis.color(t) }
    @inline(__always) static func colorV(_ t: F4) -> (F4, F4, F4) {
        let x = clampV(t, 0, 1)
        let c0 = SIMD3<Float>(0.2777273272234177, 0.005407344544966578, 0.3340998053353061)
        let c1 = SIMD3<Float>(0.1050930431085774, 1.404613529898575, 1.384590162594685)
        let c2 = SIMD3<Float>(-0.3308618287255563, 0.214847559468213, 0.09509516302823659)
        let c3 = SIMD3<Float>(-4.634230498983486, -5.799100973351585, -19.33244095627987)
        let c4 = SIMD3<Float>(6.228269936347081, 14.17993336680509, 56.69055260068105)
        let c5 = SIMD3<Float>(4.776384997670288, -13.74514537774601, -65.35303263337234)
        let c6 = SIMD3<Float>(-5.435455855934631, 4.645852612178535, 26.3124352495832)
        @inline(__always) func horner(_ k: Int) -> F4 {
            var v = F4(repeating: c6[k])
            v = c5[k] + x * v
            v = c4[k] + x * v
            v = c3[k] + x * v
            v = c2[k] + x * v
            v = c1[k] + x * v
            v = c0[k] + x * v
            return clampV(v, 0, 1)
        }
        return (horner(0), horner(1), horner(2))
    }
}
enum GrayMap: ColormapKernel {
    static var explicitVectors: Bool { false }
    @inline(__always) static func color(_ t: Float) -> SIMD3<Float> { Colormap.grayscale.color(t) }
    @inline(__always) static func colorV(_ t: F4) -> (F4, F4, F4) { let x = clampV(t, 0, 1); return (x, x, x) }
}
