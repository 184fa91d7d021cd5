import CDepthKit
import Foundation

/// The core count, read once: `ProcessInfo.activeProcessorCount` allocates on every read on Linux,
/// and kernels ask per frame.
public let activeCores = ProcessInfo.processInfo.activeProcessorCount

/// How many bands `parallelRows`/`parallelBands` split `rows` into: two a core, each of at least
/// `minimumRowsPerBand` rows (1 when that leaves a single band).
@inline(__always)
public func bandCount(_ rows: Int, minimumRowsPerBand: Int = 16) -> Int {
    let cores = activeCores
    return max(1, min(cores * 2, rows / max(1, minimumRowsPerBand)))
}

/// Runs `body(band, rows)` over `0..<rows` split into `bandCount(rows)` contiguous bands, in
/// parallel; `band` is in `0..<bandCount(rows, minimumRowsPerBand:)`, so per-band results can go
/// in a fixed-size scratch array (no locks, no allocation).
@inline(__always)
public func parallelBands(_ rows: Int, minimumRowsPerBand: Int = 16, _ body: (Int, Range<Int>) -> Void) {
    let bands = bandCount(rows, minimumRowsPerBand: minimumRowsPerBand)
    if bands <= 1 { body(0, 0..<rows); return }
    parallelFor(bands) { i in
        let r = bandRows(i, of: bands, rows: rows)
        if !r.isEmpty { body(i, r) }
    }
}

/// Runs `body(0..<count)` on CDepthKit's worker pool (cores − 1 threads and the caller), returning
/// when all are done. Unlike `DispatchQueue.concurrentPerform`, it allocates nothing per call:
/// the render loop runs kernels every frame and counts its allocations (`view --stats`).
public func parallelFor(_ count: Int, _ body: (Int) -> Void) {
    if count <= 1 { if count == 1 { body(0) }; return }
    withoutActuallyEscaping(body) { body in
        var job = ParallelJob(body: body)
        withUnsafeMutablePointer(to: &job) { p in
            dl_parallel_run(Int32(count), { ctx, i in
                ctx!.assumingMemoryBound(to: ParallelJob.self).pointee.body(Int(i))
            }, p)
        }
    }
}

private struct ParallelJob { let body: (Int) -> Void }

/// `parallelFor` for the kernels that run every frame: `body` is a C-convention function (a closure
/// literal that captures nothing) called with a pointer to `context`, a struct holding the call's
/// values, and the band index in `0..<count`. Nothing is allocated per call, where a Swift closure
/// handed to the pool is boxed on the heap (`withoutActuallyEscaping`, 32 bytes a call).
@inline(__always)
public func parallelFor<Context>(_ count: Int, context: inout Context,
                                 _ body: @convention(c) (UnsafeMutableRawPointer?, Int32) -> Void) {
    guard count > 0 else { return }
    withUnsafeMutablePointer(to: &context) { dl_parallel_run(Int32(count), body, $0) }
}

/// Rows `0..<rows` split into `bands` contiguous bands (as `parallelBands` splits them): band `i`.
@inline(__always)
public func bandRows(_ i: Int, of bands: Int, rows: Int) -> Range<Int> {
    (rows * i / bands)..<(rows * (i + 1) / bands)
}

/// Runs `body` over `0..<rows` split into contiguous bands, two a core.
/// Kernels use it so each row loop runs without per-pixel dispatch or allocation.
@inline(__always)
public func parallelRows(_ rows: Int, minimumRowsPerBand: Int = 16, _ body: (Range<Int>) -> Void) {
    parallelBands(rows, minimumRowsPerBand: minimumRowsPerBand) { _, r in body(r) }
}

/// A row band's C-convention body: the context pointer, the band's index and its rows
/// `lower..<upper`.
public typealias RowBandBody = @convention(c) (_ context: UnsafeMutableRawPointer?, _ band: Int, _ lower: Int, _ upper: Int) -> Void

/// What `parallelBands(_:context:_:)` hands the pool: the caller's context and body, and the split.
private struct RowBandJob {
    let context: UnsafeMutableRawPointer
    let rows: Int
    let bands: Int
    let body: RowBandBody
}

/// `parallelBands` for the kernels that run every frame, with nothing allocated per call: `body` is
/// a C-convention function (a closure literal that captures nothing) called with a pointer to
/// `context` (a struct holding the call's values), the band index in
/// `0..<bandCount(rows, minimumRowsPerBand:)` and the band's rows, the same bands
/// `parallelBands(_:_:)` makes. Empty bands are skipped.
@inline(__always)
public func parallelBands<Context>(_ rows: Int, minimumRowsPerBand: Int = 16, context: inout Context,
                                   _ body: RowBandBody) {
    let bands = bandCount(rows, minimumRowsPerBand: minimumRowsPerBand)
    withUnsafeMutablePointer(to: &context) { ctx in
        if bands <= 1 { if rows > 0 { body(ctx, 0, 0, rows) }; return }
        var job = RowBandJob(context: ctx, rows: rows, bands: bands, body: body)
        withUnsafeMutablePointer(to: &job) { p in
            dl_parallel_run(Int32(bands), { raw, i in
                let j = raw!.assumingMemoryBound(to: RowBandJob.self).pointee
                let r = bandRows(Int(i), of: j.bands, rows: j.rows)
                if !r.isEmpty { j.body(j.context, Int(i), r.lowerBound, r.upperBound) }
            }, p)
        }
    }
}
