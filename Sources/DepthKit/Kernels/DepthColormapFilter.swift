import CDepthKit
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
///   Three passes, each O(1) a pixel: bins (kept as 16-bit indices in a plane, with one more
///   index for invalid depth) and their histogram (two per band, merged), a color LUT with one
///   packed RGBA word per occupied bin and black for the invalid index, then one lookup a pixel.
///   Ranges of more than 65,535 bins compute the bin again in the lookup instead.
/// - `.fixed(min, max)`: t = 1 − clamp((d − min)/(max − min)), colored per pixel.
public final class DepthColormapFilter: FilterRenderer {
    public let colormap: Colormap
    public let range: DepthRange
    public var description: String { colormap.rawValue }

    private var state: PreparedState?
    /// Equalized only: `2·bands` histograms of `bins + 1` counts (the last for invalid depth),
    /// the merged cumulative counts, the LUT, and the plane of 16-bit bins (nil when `bins` does
    /// not fit in 16 bits). Allocated in `prepare`, reused every frame.
    private var bins = 0
    private var bands = 0
    private var histograms: UnsafeMutablePointer<UInt32>?
    private var cumulative: UnsafeMutablePointer<UInt32>?
    private var lut: UnsafeMutablePointer<UInt32>?
    private var binPlane: UnsafeMutablePointer<UInt16>?

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
            histograms = .allocate(capacity: (bins + 1) * 2 * bands)
            cumulative = .allocate(capacity: bins)
            lut = .allocate(capacity: bins + 1)
            if bins < Int(UInt16.max) { binPlane = .allocate(capacity: input.width * input.height) }
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
        histograms?.deallocate(); cumulative?.deallocate(); lut?.deallocate(); binPlane?.deallocate()
        histograms = nil; cumulative = nil; lut = nil; binPlane = nil
        bins = 0; bands = 0
    }

    public func render(_ buffer: PixelBuffer) throws -> PixelBuffer {
        let s = try state.checked(buffer, kernel: description)
        let out = try s.pool.makeBuffer()
        switch range {
        case let .equalized(lo, _, perMeter):
            renderEqualized(buffer, out, minDepth: lo, binsPerMeter: Float(perMeter))
        case let .fixed(lo, hi):
            renderFixed(buffer, out, lo, hi, Int32(colormap.code))
        }
        out.markModified()
        return out
    }

    private func renderEqualized(_ src: PixelBuffer, _ out: PixelBuffer, minDepth: Float, binsPerMeter: Float) {
        guard let histograms, let cumulative, let lut else { return }
        let nbins = bins, nbands = bands, w = src.width, h = src.height
        let last = Float(nbins - 1)

        // 1. Histograms, two per band (even and odd samples) so bands never share a counter.
        // Both parallel passes go through C-convention bodies of a `Job`: nothing allocated per frame.
        struct Job {
            let src, out: PixelBuffer; let w, h, nbins, nbands: Int
            let minDepth, binsPerMeter, last: Float
            let histograms: UnsafeMutablePointer<UInt32>, plane: UnsafeMutablePointer<UInt16>?
            var lut: UnsafePointer<UInt32>?, black: UInt32 = 0, lookupBands = 1
        }
        let stride = nbins + 1, copies = 2 * nbands, plane = binPlane
        var job = Job(src: src, out: out, w: w, h: h, nbins: nbins, nbands: nbands, minDepth: minDepth,
                      binsPerMeter: binsPerMeter, last: last, histograms: histograms, plane: plane)
        parallelFor(nbands, context: &job) { ctx, band in
            let j = ctx!.assumingMemoryBound(to: Job.self).pointee
            let stride = j.nbins + 1, w = j.w
            let hist0 = j.histograms + 2 * Int(band) * stride, hist1 = hist0 + stride
            hist0.initialize(repeating: 0, count: 2 * stride)
            for y in bandRows(Int(band), of: j.nbands, rows: j.h) {
                let r = j.src.row(y, as: Float.self)
                if let plane = j.plane {
                    dl_k_depth_bins(r, plane + y * w, w, j.minDepth, j.binsPerMeter, j.last, UInt16(j.nbins))
                    dl_k_histogram16(plane + y * w, w, hist0, hist1)
                } else {
                    dl_k_histogram(r, w, hist0, j.minDepth, j.binsPerMeter, j.last)
                }
            }
        }

        // 2. Merge (copy by copy: plain loops that vectorize) and accumulate: cumulative[b] =
        // valid pixels whose bin ≤ b.
        cumulative.update(from: histograms, count: nbins)
        for copy in 1..<copies {
            let hc = histograms + copy * stride
            for b in 0..<nbins { cumulative[b] &+= hc[b] }
        }
        var running: UInt32 = 0
        for b in 0..<nbins {
            let c = cumulative[b]
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

        // 4. Lookup. With the bin plane, invalid samples are the black entry `nbins`; without
        // it, they read a harmless bin, then a select makes them black.
        lut[nbins] = black
        job.lut = UnsafePointer(lut)
        job.black = black
        job.lookupBands = bandCount(h)
        parallelFor(job.lookupBands, context: &job) { ctx, band in
            let j = ctx!.assumingMemoryBound(to: Job.self).pointee
            let w = j.w
            for y in bandRows(Int(band), of: j.lookupBands, rows: j.h) {
                if let plane = j.plane {
                    dl_k_lut16(plane + y * w, j.out.row(y, as: UInt32.self), w, j.lut)
                } else {
                    dl_k_lut_lookup(j.src.row(y, as: Float.self), j.out.row(y, as: UInt32.self), w, j.lut,
                                    j.minDepth, j.binsPerMeter, j.last, j.black)
                }
            }
        }
    }

    private func renderFixed(_ src: PixelBuffer, _ out: PixelBuffer, _ lo: Float, _ hi: Float, _ map: Int32) {
        let w = src.width, span = hi - lo
        let black = UInt32(littleEndian: 0xFF00_0000)
        let packed = src.isPacked && out.isPacked
        parallelRows(src.height) { rows in
            forRowRuns(rows, width: w, packed: packed) { y, n in
                dl_k_colormap_fixed(src.row(y, as: Float.self), out.row(y, as: UInt32.self), n, lo, span, map, black)
            }
        }
    }
}
/// rgb in [0, 1] to an rgba8 word in memory order (R, G, B, 255), each channel by `unorm8`.
@inline(__always)
func packRGBA(_ c: SIMD3<Float>) -> UInt32 {
    UInt32(littleEndian: UInt32(unorm8(c.x)) | UInt32(unorm8(c.y)) << 8 | UInt32(unorm8(c.z)) << 16 | 0xFF00_0000)
}
