import CPlatform
import XCTest
@testable import DepthKit

/// The depth-mask and effect kernels' frame-after-frame paths (reused planes, pooled outputs,
/// context-struct bands) against the allocating one-shot API, byte for byte, and their
/// allocations in steady state.
final class DepthMaskReuseTests: XCTestCase {
    /// A seeded depth map (xorshift): meters in [0.3, 5.3), with about one pixel in 9 invalid
    /// (0, NaN, −1, +∞ in turn). `bytesPerRow` pads the rows when given.
    private func randomDepth(_ w: Int, _ h: Int, seed: UInt64, bytesPerRow: Int? = nil) -> PixelBuffer {
        var s = seed
        let b = PixelBuffer(width: w, height: h, format: .depthFloat32, bytesPerRow: bytesPerRow)
        let invalid: [Float] = [0, .nan, -1, .infinity]
        var k = 0
        for y in 0..<h {
            let r = b.row(y, as: Float.self)
            for x in 0..<w {
                s ^= s << 13; s ^= s >> 7; s ^= s << 17
                if s % 9 == 0 { r[x] = invalid[k % 4]; k += 1 } else { r[x] = 0.3 + Float(s >> 40) / Float(1 << 24) * 5 }
            }
        }
        return b
    }

    private func bits(_ v: [Float]) -> [UInt32] { v.map(\.bitPattern) }

    /// Depth sizes and output sizes: same size, up (the viewer's 640x480 → 1280x720 ratio, small),
    /// down, odd, and a depth map with padded rows.
    private var cases: [(depth: (Int, Int), out: (Int, Int), padded: Bool)] {
        [((16, 12), (16, 12), false), ((16, 12), (32, 18), false), ((37, 23), (11, 7), false),
         ((33, 70), (50, 41), true), ((64, 48), (64, 48), true)]
    }

    func testFloatMaskFromReusedPlanesIsTheAllocatingMask() throws {
        for (c, kind) in zip(cases, [DepthMaskKind.highpass, .bandpass, .highpass, .bandpass, .highpass]) {
            let (dw, dh) = c.depth, (ow, oh) = c.out
            let f = DepthMaskFilter(kind: kind, focus: 0.4, slope: 7, width: 0.2, outputWidth: ow, outputHeight: oh)
            let pad = c.padded ? (dw + 3) * 4 : nil
            // Unprepared: the allocating path.
            let d0 = randomDepth(dw, dh, seed: 1, bytesPerRow: pad)
            let expected0 = DepthMaskFilter.mask(depth: d0, kind: kind, focus: 0.4, slope: 7, width: 0.2)
                .scaled(toWidth: ow, height: oh)
            XCTAssertEqual(bits(try f.floatMask(d0).values), bits(expected0.values))
            try f.prepare(input: d0.frameFormat, outputRetainedBufferCountHint: 1)
            var held: DepthMask?
            for frame in 0..<4 {
                let d = randomDepth(dw, dh, seed: UInt64(frame * 7 + 3), bytesPerRow: pad)
                let expected = DepthMaskFilter.mask(depth: d, kind: kind, focus: 0.4, slope: 7, width: 0.2)
                    .scaled(toWidth: ow, height: oh)
                let before = held.map { bits($0.values) }
                let m = try f.floatMask(d)
                XCTAssertEqual(m.width, ow); XCTAssertEqual(m.height, oh)
                XCTAssertEqual(bits(m.values), bits(expected.values), "\(c) frame \(frame)")
                // A mask a caller still holds keeps its values when the next frame is computed.
                if let held, let before { XCTAssertEqual(bits(held.values), before, "\(c) frame \(frame)") }
                held = frame % 2 == 0 ? m : nil
            }
        }
    }

    func testRenderRGBA8IsTheGrayMaskAsRGBA() throws {
        for c in cases {
            let (dw, dh) = c.depth, (ow, oh) = c.out
            let f = DepthMaskFilter(kind: .highpass, focus: 0.5, slope: DepthMaskFilter.softSlope, outputWidth: ow, outputHeight: oh)
            let d0 = randomDepth(dw, dh, seed: 5, bytesPerRow: c.padded ? (dw + 1) * 4 : nil)
            try f.prepare(input: d0.frameFormat, outputRetainedBufferCountHint: 2)
            for frame in 0..<3 {
                let d = randomDepth(dw, dh, seed: UInt64(frame + 11), bytesPerRow: c.padded ? (dw + 1) * 4 : nil)
                let gray = try f.render(d).packedBytes()
                let rgba = try f.renderRGBA8(d)
                XCTAssertEqual(rgba.format, .rgba8)
                XCTAssertEqual(rgba.width, ow); XCTAssertEqual(rgba.height, oh)
                // Independently: each gray byte v as (v, v, v, 255).
                XCTAssertEqual(rgba.packedBytes(), gray.flatMap { [$0, $0, $0, 255] }, "\(c) frame \(frame)")
                let viaImageIO = ImageIO.toRGBA8(try f.render(d))
                XCTAssertEqual(rgba.packedBytes(), viaImageIO.packedBytes())
            }
        }
    }

    /// `DepthEffectFilter` (mask into its reused plane at the depth size, scaled while filling
    /// the image-size plane) gives the bytes of `DepthEffect.apply` with the allocating mask, and
    /// of `apply` with `floatMask` (scaled to the image size first, as the viewer does).
    func testEffectFilterIsMaskThenApply() throws {
        for c in cases {
            let (dw, dh) = c.depth, (iw, ih) = c.out
            for format in [PixelFormat.rgba8, .bgra8] {
                for kind in DepthEffectKind.allCases {
                    for spec in [DepthMaskSpec(kind: .highpass, focus: 0.45), .portrait(focus: 0.3),
                                 DepthMaskSpec(kind: .bandpass, focus: 0.5, slope: 9, width: 0.3)] {
                        let bg = kind == .greenscreen ? randomColor(5, 9, format, seed: 77) : nil
                        let e = DepthEffectFilter(kind: kind, mask: spec, background: bg)
                        let pad = c.padded ? (dw + 2) * 4 : nil
                        try e.prepare(input: FrameFormat(width: iw, height: ih, pixelFormat: format),
                                      secondInput: FrameFormat(width: dw, height: dh, pixelFormat: .depthFloat32),
                                      outputRetainedBufferCountHint: 1)
                        let maskFilter = DepthMaskFilter(kind: spec.kind, focus: spec.focus, slope: spec.slope,
                                                         width: spec.width, outputWidth: iw, outputHeight: ih)
                        try maskFilter.prepare(input: FrameFormat(width: dw, height: dh, pixelFormat: .depthFloat32),
                                               outputRetainedBufferCountHint: 1)
                        for frame in 0..<3 {
                            let img = randomColor(iw, ih, format, seed: UInt64(frame + 1) * 1_000_003)
                            let d = randomDepth(dw, dh, seed: UInt64(frame + 21), bytesPerRow: pad)
                            let m = DepthMaskFilter.mask(depth: d, kind: spec.kind, focus: spec.focus,
                                                         slope: spec.slope, width: spec.width)
                            let expected = try DepthEffect.apply(kind: kind, image: img, mask: m, background: bg).packedBytes()
                            XCTAssertEqual(try e.render(img, d).packedBytes(), expected, "\(c) \(format) \(kind) \(spec) \(frame)")
                            let viewerWay = try DepthEffect.apply(kind: kind, image: img, mask: try maskFilter.floatMask(d),
                                                                  background: bg)
                            XCTAssertEqual(viewerWay.packedBytes(), expected, "\(c) \(format) \(kind) \(spec) \(frame)")
                        }
                    }
                }
            }
        }
    }

    /// Own allocations (CPlatform's counting malloc, this thread) of `body` run `n` times after one
    /// warm-up call. `DEPTHLENS_ALLOC_TRACE` set: the first two print their backtraces.
    private func allocations(_ n: Int = 5, _ body: () throws -> Void) rethrows -> UInt64 {
        try body()
        let trace = ProcessInfo.processInfo.environment["DEPTHLENS_ALLOC_TRACE"] != nil
        dl_alloc_counting(1)
        if trace { dl_alloc_trace(2, 0) }
        let start = dl_alloc_count()
        for _ in 0..<n { try body() }
        let count = dl_alloc_count() &- start
        dl_alloc_counting(0)
        return count
    }

    func testSteadyStateFramesAllocateNothing() throws {
        // The viewer's sizes scaled down by 8 (color 160x90, depth 80x60), and the same size.
        for (dw, dh) in [(80, 60), (160, 90)] {
            let iw = 160, ih = 90
            let depth = randomDepth(dw, dh, seed: 3)
            let color = randomColor(iw, ih, .rgba8, seed: 4)
            let f = DepthMaskFilter(kind: .highpass, focus: 0.5, outputWidth: iw, outputHeight: ih)
            try f.prepare(input: depth.frameFormat, outputRetainedBufferCountHint: 1)
            XCTAssertEqual(try allocations { _ = try f.render(depth) }, 0, "mask render \(dw)x\(dh)")
            XCTAssertEqual(try allocations { _ = try f.renderRGBA8(depth) }, 0, "mask renderRGBA8 \(dw)x\(dh)")
            XCTAssertEqual(try allocations { _ = try f.floatMask(depth) }, 0, "floatMask \(dw)x\(dh)")
            for kind in DepthEffectKind.allCases {
                let r = DepthEffectRenderer(kind: kind)
                try r.prepare(image: color.frameFormat, maskWidth: iw, maskHeight: ih, outputRetainedBufferCountHint: 1)
                // The viewer's way: floatMask at the image size, then the renderer.
                XCTAssertEqual(try allocations { _ = try r.render(image: color, mask: try f.floatMask(depth)) }, 0,
                               "\(kind) with floatMask \(dw)x\(dh)")
                for spec in [DepthMaskSpec(kind: .highpass, focus: 0.5), .portrait(focus: 0.5)] {
                    let e = DepthEffectFilter(kind: kind, mask: spec)
                    try e.prepare(input: color.frameFormat, secondInput: depth.frameFormat, outputRetainedBufferCountHint: 1)
                    XCTAssertEqual(try allocations { _ = try e.render(color, depth) }, 0, "\(kind) filter \(dw)x\(dh)")
                }
            }
        }
        // Green screen with a background image at another size.
        let bg = randomColor(40, 30, .rgba8, seed: 8)
        let e = DepthEffectFilter(kind: .greenscreen, mask: DepthMaskSpec(focus: 0.5), background: bg)
        try e.prepare(input: FrameFormat(width: 160, height: 90, pixelFormat: .rgba8),
                      secondInput: FrameFormat(width: 80, height: 60, pixelFormat: .depthFloat32), outputRetainedBufferCountHint: 1)
        let color = randomColor(160, 90), depth = randomDepth(80, 60, seed: 9)
        XCTAssertEqual(try allocations { _ = try e.render(color, depth) }, 0, "greenscreen with a background")
    }

    /// `parallelBands(_:context:_:)` visits every row once, in the bands `bandRows` names, and
    /// allocates nothing.
    func testContextBandsCoverEveryRowOnce() {
        struct Hits { let rows: UnsafeMutablePointer<Int32>; let bandOf: UnsafeMutablePointer<Int32>; let bands: Int; let total: Int }
        for (rows, minimum) in [(1, 16), (15, 16), (16, 16), (17, 1), (1000, 16), (4099, 64), (0, 16)] {
            let hits = UnsafeMutablePointer<Int32>.allocate(capacity: max(rows, 1))
            let bandOf = UnsafeMutablePointer<Int32>.allocate(capacity: max(rows, 1))
            defer { hits.deallocate(); bandOf.deallocate() }
            hits.initialize(repeating: 0, count: max(rows, 1)); bandOf.initialize(repeating: -1, count: max(rows, 1))
            var job = Hits(rows: hits, bandOf: bandOf, bands: bandCount(rows, minimumRowsPerBand: minimum), total: rows)
            let made = allocations(1) {
                parallelBands(rows, minimumRowsPerBand: minimum, context: &job) { ctx, band, lower, upper in
                    let j = ctx!.assumingMemoryBound(to: Hits.self).pointee
                    precondition(bandRows(band, of: j.bands, rows: j.total) == lower..<upper)
                    for y in lower..<upper { j.rows[y] += 1; j.bandOf[y] = Int32(band) }
                }
            }
            XCTAssertEqual(made, 0)
            // Two calls (the warm-up and the counted one): every row twice.
            XCTAssertEqual((0..<rows).filter { hits[$0] != 2 }, [], "\(rows) rows")
            for y in 0..<rows { XCTAssertTrue(bandRows(Int(bandOf[y]), of: job.bands, rows: rows).contains(y)) }
        }
    }
}
