import Foundation

/// Runs `body` over `0..<rows` split into contiguous bands, one band a core.
/// Kernels use it so each row loop runs without per-pixel dispatch or allocation.
@inline(__always)
public func parallelRows(_ rows: Int, minimumRowsPerBand: Int = 16, _ body: (Range<Int>) -> Void) {
    let cores = ProcessInfo.processInfo.activeProcessorCount
    let bands = max(1, min(cores * 2, rows / max(1, minimumRowsPerBand)))
    if bands <= 1 { body(0..<rows); return }
    DispatchQueue.concurrentPerform(iterations: bands) { i in
        let start = rows * i / bands, end = rows * (i + 1) / bands
        if start < end { body(start..<end) }
    }
}
