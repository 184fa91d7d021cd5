import CDepthKit

/// Scales an rgba8 or bgra8 image to another size the way a GPU's linear, clamp-to-edge sampler
/// does at the target's pixel centers: for output pixel (x, y), u = (x + 0.5)·W/w − 0.5 and
/// v = (y + 0.5)·H/h − 0.5, the four texels around (u, v) weighted in float (across, then down),
/// rounded to nearest. The output may be in the other channel order (rgba8 ↔ bgra8): the first
/// and third channels are exchanged on the way. Same size: a copy (with that exchange).
///
/// The viewer draws its CPU-made pictures into the window with it (a copy into the swapchain
/// image instead of a sampled fragment pass, which costs lavapipe milliseconds). Sampling
/// positions and per-band scratch are made when the sizes change; a frame allocates nothing.
public final class ImageScaler {
    private var axesCache = BilinearAxesCache()
    private var scratch: UnsafeMutablePointer<Float>?
    private var scratchCapacity = 0

    public init() {}

    deinit { scratch?.deallocate() }

    /// Writes `src` scaled to `dst`'s size into `dst`. Both rgba8 or bgra8.
    public func scale(_ src: PixelBuffer, into dst: PixelBuffer) throws {
        func isColor(_ b: PixelBuffer) -> Bool { b.format == .rgba8 || b.format == .bgra8 }
        if let bad = !isColor(src) ? src : !isColor(dst) ? dst : nil {
            throw RenderError.formatMismatch(kernel: "scale", expected: "rgba8 or bgra8", got: bad.frameFormat)
        }
        let swap: Int32 = src.format == dst.format ? 0 : 1
        let w = dst.width, h = dst.height
        if src.width == w && src.height == h {
            struct Copy { let src, dst: PixelBuffer; let bands: Int; let swap: Int32 }
            var job = Copy(src: src, dst: dst, bands: bandCount(h), swap: swap)
            parallelFor(job.bands, context: &job) { ctx, band in
                let j = ctx!.assumingMemoryBound(to: Copy.self).pointee
                let packed = j.src.isPacked && j.dst.isPacked
                forRowRuns(bandRows(Int(band), of: j.bands, rows: j.dst.height), width: j.dst.width, packed: packed) { y, n in
                    dl_k_copy_pixels(j.src.row(y, as: UInt32.self), j.dst.row(y, as: UInt32.self), n, j.swap)
                }
            }
            dst.markModified()
            return
        }
        let (cols, rowsAxis) = axesCache.axes(from: src.width, src.height, to: w, h)
        let bands = bandCount(h), need = bands * 8 * w
        if scratchCapacity < need {
            scratch?.deallocate()
            scratch = .allocate(capacity: need)
            scratchCapacity = need
        }
        guard let scratch else { return }
        withBilinearPointers(cols, rowsAxis) { p in
            // Per band through a C-convention body: nothing allocated per frame.
            struct Job {
                let src, dst: PixelBuffer; let w, bands: Int; let swap: Int32
                let p: BilinearPointers
                let scratch: UnsafeMutablePointer<Float>
            }
            var job = Job(src: src, dst: dst, w: w, bands: bands, swap: swap, p: p, scratch: scratch)
            parallelFor(bands, context: &job) { ctx, band in
                let j = ctx!.assumingMemoryBound(to: Job.self)
                let rows = bandRows(Int(band), of: j.pointee.bands, rows: j.pointee.dst.height), w = j.pointee.w
                guard !rows.isEmpty else { return }
                let p = j.pointee.p
                dl_k_scale(j.pointee.src.row(0, as: UInt8.self), j.pointee.src.bytesPerRow,
                           j.pointee.dst.row(0, as: UInt8.self), j.pointee.dst.bytesPerRow, w,
                           Int32(rows.lowerBound), Int32(rows.upperBound), p.x0, p.x1, p.fx,
                           p.r0, p.r1, p.fy, j.pointee.scratch + Int(band) * 8 * w, j.pointee.swap)
            }
        }
        dst.markModified()
    }
}
