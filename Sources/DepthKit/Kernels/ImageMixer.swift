import CDepthKit

/// fragmentMixer on the CPU: out = mix(a, b, mixFactor) per channel at a's size, rounded to
/// nearest; the reference for the GPU's two-texture graphics pipeline.
///
/// Both inputs are rgba8. When b's size differs from a's, b is sampled bilinearly with clamp to
/// edge at a's pixel centers: for output pixel (x, y), u = (x + 0.5)·Wb/Wa − 0.5 and
/// v = (y + 0.5)·Hb/Ha − 0.5, and the four texels around (u, v) are weighted in float before
/// the mix. mixFactor outside [0, 1] is clamped; NaN counts as 0.
public final class ImageMixer: MixerRenderer {
    public let description = "mix"
    public let mixFactor: Float
    private var state: PreparedState?
    private var second: FrameFormat?
    private var columns: BilinearAxis?
    private var rowsAxis: BilinearAxis?

    public init(mixFactor: Float) {
        self.mixFactor = mixFactor.isNaN ? 0 : min(max(mixFactor, 0), 1)
    }

    public var inputFormat: FrameFormat? { state?.input }
    public var secondInputFormat: FrameFormat? { second }
    public var outputFormat: FrameFormat? { state?.output }

    public func prepare(input: FrameFormat, secondInput: FrameFormat, outputRetainedBufferCountHint: Int) throws {
        try requireFormat(input, [.rgba8], kernel: description)
        try requireFormat(secondInput, [.rgba8], kernel: description)
        state = try PreparedState(input: input, output: input, hint: outputRetainedBufferCountHint)
        second = secondInput
        if secondInput.width != input.width || secondInput.height != input.height {
            columns = BilinearAxis(source: secondInput.width, target: input.width)
            rowsAxis = BilinearAxis(source: secondInput.height, target: input.height)
            prepareScratch(width: input.width, height: input.height)
        } else {
            columns = nil; rowsAxis = nil
        }
    }

    public func reset() {
        state = nil; second = nil; columns = nil; rowsAxis = nil
    }

    public func render(_ a: PixelBuffer, _ b: PixelBuffer) throws -> PixelBuffer {
        let s = try state.checked(a, kernel: description)
        guard let second, b.frameFormat == second else {
            throw RenderError.formatMismatch(kernel: description, expected: second?.description ?? "?", got: b.frameFormat)
        }
        let out = try s.pool.makeBuffer()
        let f = mixFactor, g = 1 - mixFactor
        let w = a.width
        if let columns, let rowsAxis {
            mixScaled(a, b, out, f, g, columns, rowsAxis)
        } else {
            // Per band through a C-convention body: nothing allocated per frame.
            struct Job { let a, b, out: PixelBuffer; let n: Int; let f, g: Float; let bands: Int }
            var job = Job(a: a, b: b, out: out, n: w * 4, f: f, g: g, bands: bandCount(a.height))
            parallelFor(job.bands, context: &job) { ctx, band in
                let j = ctx!.assumingMemoryBound(to: Job.self)
                for y in bandRows(Int(band), of: j.pointee.bands, rows: j.pointee.a.height) {
                    dl_k_mix(j.pointee.a.row(y, as: UInt8.self), j.pointee.b.row(y, as: UInt8.self),
                             j.pointee.out.row(y, as: UInt8.self), j.pointee.n, j.pointee.f, j.pointee.g)
                }
            }
        }
        out.markModified()
        return out
    }

    /// Per band, two rows of b interpolated across (`dl_k_mix_scaled`'s scratch), made in `prepare`.
    private var scratch: UnsafeMutablePointer<Float>?
    private var scratchBands = 0

    deinit { scratch?.deallocate() }

    private func prepareScratch(width: Int, height: Int) {
        scratch?.deallocate()
        scratchBands = bandCount(height)
        scratch = .allocate(capacity: scratchBands * 8 * width)
    }

    private func mixScaled(_ a: PixelBuffer, _ b: PixelBuffer, _ out: PixelBuffer, _ f: Float, _ g: Float,
                           _ cols: BilinearAxis, _ rowsAxis: BilinearAxis) {
        let w = a.width
        if scratch == nil || scratchBands < bandCount(a.height) { prepareScratch(width: w, height: a.height) }
        let scratch = scratch!
        withBilinearPointers(cols, rowsAxis) { p in
            // Per band through a C-convention body: nothing allocated per frame.
            struct Job {
                let a, b, out: PixelBuffer; let w, bands: Int; let f, g: Float
                let p: BilinearPointers
                let scratch: UnsafeMutablePointer<Float>
            }
            var job = Job(a: a, b: b, out: out, w: w, bands: bandCount(a.height), f: f, g: g, p: p, scratch: scratch)
            parallelFor(job.bands, context: &job) { ctx, band in
                let j = ctx!.assumingMemoryBound(to: Job.self)
                let rows = bandRows(Int(band), of: j.pointee.bands, rows: j.pointee.a.height), w = j.pointee.w
                guard !rows.isEmpty else { return }
                let p = j.pointee.p
                dl_k_mix_scaled(j.pointee.a.row(0, as: UInt8.self), j.pointee.a.bytesPerRow, j.pointee.b.row(0, as: UInt8.self),
                                j.pointee.b.bytesPerRow, j.pointee.out.row(0, as: UInt8.self), j.pointee.out.bytesPerRow, w,
                                Int32(rows.lowerBound), Int32(rows.upperBound), p.x0, p.x1, p.fx,
                                p.r0, p.r1, p.fy, j.pointee.scratch + Int(band) * 8 * w, j.pointee.f, j.pointee.g)
            }
        }
    }
}
