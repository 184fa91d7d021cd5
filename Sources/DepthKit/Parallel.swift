import CShim
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

/// Runs `body(0..<count)` on CShim's worker pool (cores − 1 threads and the caller), returning
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
