import CDepthKit

/// What every CPU kernel keeps between `prepare` and `reset`: the prepared input, the output
/// format and the pool outputs come from. One place for the checks `render` makes.
struct PreparedState {
    let input: FrameFormat
    let output: FrameFormat
    let pool: BufferPool

    init(input: FrameFormat, output: FrameFormat, hint: Int) throws {
        guard hint >= 1 else {
            throw RenderError.invalidParameter("outputRetainedBufferCountHint must be ≥ 1, got \(hint)")
        }
        self.input = input
        self.output = output
        self.pool = BufferPool(format: output, outputRetainedBufferCountHint: hint)
    }
}

extension Optional where Wrapped == PreparedState {
    /// The prepared state, or `RenderError` when `render` comes before `prepare` or `buffer` is
    /// not the frame format `prepare` was given.
    func checked(_ buffer: PixelBuffer, kernel: String) throws -> PreparedState {
        guard let s = self else { throw RenderError.notPrepared(kernel) }
        guard buffer.frameFormat == s.input else {
            throw RenderError.formatMismatch(kernel: kernel, expected: s.input.description, got: buffer.frameFormat)
        }
        return s
    }
}

/// Throws unless `format` has a positive size and one of `allowed` pixel formats.
func requireFormat(_ format: FrameFormat, _ allowed: [PixelFormat], kernel: String) throws {
    guard format.width > 0, format.height > 0, allowed.contains(format.pixelFormat) else {
        throw RenderError.formatMismatch(kernel: kernel, expected: allowed.map(\.description).joined(separator: " or "),
                                         got: format)
    }
}

/// Runs `body(y, n)` over `rows` of width `width`: once, with n = rows × width samples from row
/// `rows.lowerBound`, when every buffer involved is packed (so a C loop runs over the whole band
/// in one call: no per-row call, prologue or vector tail), else once a row with n = width.
@inline(__always)
func forRowRuns(_ rows: Range<Int>, width: Int, packed: Bool, _ body: (_ y: Int, _ n: Int) -> Void) {
    if packed {
        if !rows.isEmpty { body(rows.lowerBound, rows.count * width) }
    } else {
        for y in rows { body(y, width) }
    }
}

/// Statistics over the valid depths (finite, > 0) of a depthFloat32 buffer, rows in parallel.
/// Nothing is allocated per call: per-band results go on the stack, the bands run as a
/// C-convention body of a `DepthRangeJob`.
func validDepthRange(_ depth: PixelBuffer) -> (count: Int, min: Float, max: Float) {
    let h = depth.height, nb = bandCount(h)
    return withUnsafeTemporaryAllocation(of: (Int, Float, Float).self, capacity: nb) { bands in
    let slots = bands.baseAddress!
    slots.initialize(repeating: (0, .infinity, -.infinity), count: nb)
    var job = DepthRangeJob(depth: depth, slots: slots)
    parallelBands(h, context: &job) { ctx, band, y0, y1 in
        let j = ctx!.assumingMemoryBound(to: DepthRangeJob.self).pointee
        var n: Int64 = 0, lo = Float.infinity, hi = -Float.infinity
        forRowRuns(y0..<y1, width: j.depth.width, packed: j.depth.isPacked) { y, count in
            dl_k_depth_range(j.depth.row(y, as: Float.self), count, &n, &lo, &hi)
        }
        j.slots[band] = (Int(n), lo, hi)
    }
    var n = 0, lo = Float.infinity, hi = -Float.infinity
    for i in 0..<nb { let (c, l, u) = slots[i]; n += c; lo = min(lo, l); hi = max(hi, u) }
    return n > 0 ? (n, lo, hi) : (0, 0, 0)
    }
}

private struct DepthRangeJob {
    let depth: PixelBuffer
    let slots: UnsafeMutablePointer<(Int, Float, Float)>
}

/// Bilinear sampling positions along one axis for scaling `source` samples to `target` samples,
/// sampling at target pixel centers with clamp to edge: u = (x + 0.5)·source/target − 0.5,
/// i0 = floor(u), weight of i1 = u − i0, both indices clamped to [0, source − 1].
struct BilinearAxis {
    var i0: [Int32]
    var i1: [Int32]
    var f: [Float]

    init(source: Int, target: Int) {
        i0 = []; i1 = []; f = []
        i0.reserveCapacity(target); i1.reserveCapacity(target); f.reserveCapacity(target)
        for x in 0..<target {
            let u = (Float(x) + 0.5) * Float(source) / Float(target) - 0.5
            let fl = u.rounded(.down)
            let a = Int(fl)
            i0.append(Int32(min(max(a, 0), source - 1)))
            i1.append(Int32(min(max(a + 1, 0), source - 1)))
            f.append(u - fl)
        }
    }
}

/// Column and row sampling positions for scaling one size to another, kept for the last pair of
/// sizes asked for and made again only when one changes (nothing allocated while they hold).
struct BilinearAxesCache {
    private var key: (sw: Int, sh: Int, tw: Int, th: Int)?
    private var columns: BilinearAxis?
    private var rows: BilinearAxis?

    /// The axes from `sw`×`sh` to `tw`×`th`.
    mutating func axes(from sw: Int, _ sh: Int, to tw: Int, _ th: Int) -> (columns: BilinearAxis, rows: BilinearAxis) {
        if let key, let columns, let rows, key == (sw, sh, tw, th) { return (columns, rows) }
        let c = BilinearAxis(source: sw, target: tw), r = BilinearAxis(source: sh, target: th)
        key = (sw, sh, tw, th); columns = c; rows = r
        return (c, r)
    }
}

/// Raw pointers into a column and a row `BilinearAxis`, for the C loops; valid only inside
/// `withBilinearPointers`.
struct BilinearPointers {
    let x0, x1: UnsafePointer<Int32>?
    let fx: UnsafePointer<Float>?
    let r0, r1: UnsafePointer<Int32>?
    let fy: UnsafePointer<Float>?
}

/// Runs `body` with pointers into `columns` and `rows` (no copy, nothing allocated).
func withBilinearPointers<R>(_ columns: BilinearAxis, _ rows: BilinearAxis, _ body: (BilinearPointers) -> R) -> R {
    columns.i0.withUnsafeBufferPointer { x0 in
    columns.i1.withUnsafeBufferPointer { x1 in
    columns.f.withUnsafeBufferPointer { fx in
    rows.i0.withUnsafeBufferPointer { r0 in
    rows.i1.withUnsafeBufferPointer { r1 in
    rows.f.withUnsafeBufferPointer { fy in
        body(BilinearPointers(x0: x0.baseAddress, x1: x1.baseAddress, fx: fx.baseAddress,
                              r0: r0.baseAddress, r1: r1.baseAddress, fy: fy.baseAddress))
    }}}}}}
}

// MARK: Trap-free conversions
//
// `UInt8(x)` and `Int(x)` on a Float check range and trap, which keeps LLVM from vectorizing a
// pixel loop (and Swift's SIMD float→int initializers go element by element). These compute the
// same value for the inputs the kernels give them, with plain float and integer ops.

/// floor(x) for x in [0, 2²²): adding 2²³ rounds x to the nearest integer (ties to even) and
/// leaves it in the mantissa; one compare corrects round-up to floor. No `floorf` call (the
/// baseline x86-64 target has no SSE4.1 `roundps`, so `rounded(.down)` would be a libcall).
/// Garbage (never a trap) outside that range or for NaN; callers clamp first or select it away.
@inline(__always)
func floorU32(_ x: Float) -> UInt32 {
    let n = Int32(bitPattern: (x + 8_388_608).bitPattern &- 0x4B00_0000)
    return UInt32(bitPattern: Float(n) > x ? n &- 1 : n)
}

/// `floorU32` on four lanes (lane by lane: the generic SIMD compare and select do not inline).
@inline(__always)
func floorU32(_ v: SIMD4<Float>) -> SIMD4<UInt32> {
    SIMD4(floorU32(v.x), floorU32(v.y), floorU32(v.z), floorU32(v.w))
}

/// Exactly `unorm8(v)` (clamp to [0, 1], ·255, round half up) as a UInt32 in 0…255; NaN gives garbage.
@inline(__always)
func unorm8Fast(_ v: Float) -> UInt32 { floorU32(min(max(v, 0), 1) * 255 + 0.5) }

/// Four 8-bit channels to floats. (Kept lane by lane: LLVM turns it into vector unpacks and
/// conversions, which measured faster than building the vector from scalars.)
@inline(__always)
func floats(_ p: SIMD4<UInt8>) -> SIMD4<Float> { SIMD4(Float(p.x), Float(p.y), Float(p.z), Float(p.w)) }

/// Four values already in [0, 255] plus 0.5 to bytes by truncation (round half up of v − 0.5).
@inline(__always)
func bytes(_ v: SIMD4<Float>) -> SIMD4<UInt8> { SIMD4<UInt8>(truncatingIfNeeded: floorU32(v)) }

// MARK: Four pixels at a time
//
// Concrete SIMD4 arithmetic, compares and `replacing(with:where:)` compile to SSE2 vector
// instructions; `pointwiseMin`/`pointwiseMax` and Swift's generic `min`/`max` on SIMD do not
// inline, and scalar selects in a pixel loop often become branches. Each helper below computes,
// lane by lane, exactly what its scalar counterpart computes, so vector loops give the same bytes.

typealias F4 = SIMD4<Float>

@inline(__always)
func load4(_ p: UnsafePointer<Float>) -> F4 { UnsafeRawPointer(p).loadUnaligned(as: F4.self) }

@inline(__always)
func store4(_ v: F4, _ p: UnsafeMutablePointer<Float>) { UnsafeMutableRawPointer(p).storeBytes(of: v, as: F4.self) }

/// Swift's `min(x, y)` lane by lane: `y < x ? y : x`.
@inline(__always)
func minV(_ x: F4, _ y: F4) -> F4 { x.replacing(with: y, where: y .< x) }
