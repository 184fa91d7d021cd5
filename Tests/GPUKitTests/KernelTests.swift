import XCTest
import CDepthKit
import DepthKit
@testable import GPUKit

/// GPU kernels against hand-computed pixels and docs/design/kernels.md's formulas: ≤ 1 LSB everywhere.
final class KernelTests: GPUTestCase {
    var factory: GPUFilterFactory!

    override func setUpWithError() throws {
        try super.setUpWithError()
        factory = try GPUFilterFactory(context: context)
    }

    override func tearDownWithError() throws {
        factory = nil
        try super.tearDownWithError()
    }

    static let sizes = [(1, 1), (17, 13), (1921, 1081)]

    func run(_ spec: FilterSpec, _ input: PixelBuffer) throws -> PixelBuffer {
        let f = try factory.makeFilter(spec)
        try f.prepare(input: input.frameFormat, outputRetainedBufferCountHint: 2)
        return try f.render(input)
    }

    func testRosyHandComputed() throws {
        let b = PixelBuffer(width: 2, height: 1, format: .rgba8)
        b.setRGBA(x: 0, y: 0, (10, 20, 30, 40)); b.setRGBA(x: 1, y: 0, (255, 255, 0, 0))
        let out = try run(.rosy, b)
        XCTAssertTrue(out.rgba(x: 0, y: 0) == (10, 0, 30, 255))
        XCTAssertTrue(out.rgba(x: 1, y: 0) == (255, 0, 0, 255))
        XCTAssertEqual(out.format, .rgba8)
    }

    func testRosyAndColorMatrixAgreeOnAllSizesAndBothByteOrders() throws {
        let m = ColorMatrix(r: [0.3, 0.59, 0.11, 0], g: [0.5, -0.2, 0.7, 0], b: [1.2, 0, 0, 0.1], a: [0, 0, 0, 1], bias: [0.05, 0, -0.1, 0])
        for (w, h) in Self.sizes {
            for format in [PixelFormat.rgba8, .bgra8] {
                let input = Inputs.color(w, h, format, seed: UInt64(w * 31 + h))
                XCTAssertLessThanOrEqual(maxDifference(try run(.rosy, input), Reference.rosy(input)), 1, "rosy \(w)x\(h) \(format)")
                XCTAssertLessThanOrEqual(maxDifference(try run(.colorMatrix(m), input), Reference.colorMatrix(input, m)), 1,
                                         "colorMatrix \(w)x\(h) \(format)")
            }
        }
    }

    func testGrayscaleHandComputedAndInvalidDepthIsBlack() throws {
        let d = PixelBuffer(width: 8, height: 1, format: .depthFloat32)
        for (i, v) in [Float(1), 3, 2, 0, .nan, .infinity, -.infinity, -2].enumerated() { d.row(0, as: Float.self)[i] = v }
        let out = try run(.grayscale(offset: nil, range: nil), d)
        XCTAssertTrue(out.rgba(x: 0, y: 0) == (0, 0, 0, 255))
        XCTAssertTrue(out.rgba(x: 1, y: 0) == (255, 255, 255, 255))
        XCTAssertTrue(out.rgba(x: 2, y: 0) == (128, 128, 128, 255))
        for x in 3..<8 { XCTAssertTrue(out.rgba(x: x, y: 0) == (0, 0, 0, 255), "pixel \(x)") }
    }

    func testGrayscaleAgrees() throws {
        for (w, h) in Self.sizes {
            let d = Inputs.depth(w, h, seed: UInt64(w + h))
            for (o, r) in [(nil, nil), (Float(1), Float(2)), (Float(0.5), nil), (nil, Float(0)), (Float(1), Float(-1))] as [(Float?, Float?)] {
                XCTAssertLessThanOrEqual(maxDifference(try run(.grayscale(offset: o, range: r), d), Reference.grayscale(d, offset: o, range: r)), 1,
                                         "grayscale \(w)x\(h) \(String(describing: o)) \(String(describing: r))")
            }
        }
        // zero range: one valid depth everywhere
        let flat = PixelBuffer(width: 5, height: 3, format: .depthFloat32)
        for y in 0..<3 { for x in 0..<5 { flat.row(y, as: Float.self)[x] = 2 } }
        XCTAssertEqual(maxDifference(try run(.grayscale(offset: nil, range: nil), flat), Reference.grayscale(flat, offset: nil, range: nil)), 0)
    }

    func testJetHandComputed() throws {
        // Fixed range 1…3: d = 1 → t = 1 → red; d = 3 → t = 0 → blue (0, 0, 0.5 → 128).
        let d = PixelBuffer(width: 3, height: 1, format: .depthFloat32)
        d.row(0, as: Float.self)[0] = 1; d.row(0, as: Float.self)[1] = 3; d.row(0, as: Float.self)[2] = .nan
        let out = try run(.colormap(.jet, .fixed(min: 1, max: 3)), d)
        XCTAssertTrue(out.rgba(x: 0, y: 0) == (128, 0, 0, 255), "\(out.rgba(x: 0, y: 0))")
        XCTAssertTrue(out.rgba(x: 1, y: 0) == (0, 0, 128, 255), "\(out.rgba(x: 1, y: 0))")
        XCTAssertTrue(out.rgba(x: 2, y: 0) == (0, 0, 0, 255))
    }

    func testColormapsAgreeEqualizedAndFixed() throws {
        for (w, h) in Self.sizes {
            let d = Inputs.depth(w, h, seed: UInt64(3 * w + h))
            for map in Colormap.allCases {
                for range in [DepthRange.defaultEqualized, .fixed(min: 0.5, max: 6), .equalized(minDepth: 1, maxDepth: 4, binsPerMeter: 100)] {
                    XCTAssertLessThanOrEqual(maxDifference(try run(.colormap(map, range), d), Reference.colormap(d, map, range)), 1,
                                             "\(map) \(range) \(w)x\(h)")
                }
            }
        }
    }

    func testAllInvalidDepthIsBlack() throws {
        let d = PixelBuffer(width: 4, height: 4, format: .depthFloat32)
        for spec in [FilterSpec.grayscale(offset: nil, range: nil), .colormap(.jet, .defaultEqualized)] {
            let out = try run(spec, d)
            for y in 0..<4 { for x in 0..<4 { XCTAssertTrue(out.rgba(x: x, y: y) == (0, 0, 0, 255)) } }
        }
    }

    func testMixerAgreesSameAndScaledSizesAndEndpoints() throws {
        for ((wa, ha), (wb, hb)) in [((1, 1), (1, 1)), ((17, 13), (17, 13)), ((17, 13), (5, 7)), ((64, 48), (640, 480)), ((1921, 1081), (1921, 1081))] {
            let a = Inputs.color(wa, ha, seed: 7), b = Inputs.color(wb, hb, seed: 8)
            for f in [Float(0), 0.3, 1] {
                let m = try factory.makeMixer(mixFactor: f)
                try m.prepare(input: a.frameFormat, secondInput: b.frameFormat, outputRetainedBufferCountHint: 2)
                let out = try m.render(a, b)
                XCTAssertEqual(out.frameFormat, a.frameFormat)
                XCTAssertLessThanOrEqual(maxDifference(out, Reference.mix(a, b, f)), 1, "mix \(f) \(wa)x\(ha) ← \(wb)x\(hb)")
                if f == 0 && wa == wb { XCTAssertEqual(out.packedBytes(), a.packedBytes()) }
                if f == 1 && wa == wb { XCTAssertEqual(out.packedBytes(), b.packedBytes()) }
            }
        }
    }

    func testRenderBeforePrepareAndWrongFormatThrow() throws {
        let f = try factory.makeFilter(.rosy)
        XCTAssertThrowsError(try f.render(Inputs.color(2, 2)))
        XCTAssertThrowsError(try f.prepare(input: FrameFormat(width: 2, height: 2, pixelFormat: .depthFloat32), outputRetainedBufferCountHint: 1))
        XCTAssertEqual(factory.backendName, context.name)
    }

    func testTimingIsReported() throws {
        let f = try factory.makeGPUFilter(.colormap(.jet, .defaultEqualized))
        let d = Inputs.depth(64, 48)
        try f.prepare(input: d.frameFormat, outputRetainedBufferCountHint: 1)
        _ = try f.render(d)
        let t = try XCTUnwrap(f.lastTiming)
        XCTAssertGreaterThan(t.endToEndMs, 0)
        if context.timestampPeriod != nil { XCTAssertNotNil(t.dispatchMs) } else { XCTAssertNil(t.dispatchMs) }
    }
}

/// Issue 34: one colormap. Every DL_COLORMAP_* code, and one that names no colormap, rendered by the
/// C kernel (`dl_k_colormap_fixed`, the CPU filter's loop), by the GPU (depthToJET.comp) and by
/// Swift's `Colormap.color`: all three use dl_colormap.h's formulas, so they agree to the LSB, and
/// an unknown code is loud magenta on both sides, never a quiet gray.
final class ColormapCodeTests: GPUTestCase {
    func testEveryCodeAndAnUnknownOneOnCPUAndGPU() throws {
        let factory = try GPUFilterFactory(context: context)
        let w = 256, h = 2
        let depth = PixelBuffer(width: w, height: h, format: .depthFloat32)
        for y in 0..<h { for x in 0..<w { depth.row(y, as: Float.self)[x] = y == 1 && x % 17 == 0 ? 0 : 1 + 2 * Float(x) / Float(w - 1) } }
        let unknown: UInt32 = 99
        let codes = Colormap.allCases.map(\.code) + [unknown]
        for code in codes {
            // CPU: the C loop over each row, t = 1 − (d − 1)/2; invalid depth black.
            let cpu = PixelBuffer(width: w, height: h, format: .rgba8)
            for y in 0..<h {
                dl_k_colormap_fixed(depth.row(y, as: Float.self), cpu.row(y, as: UInt32.self), w, 1, 2, Int32(code), 0xFF00_0000)
            }
            // GPU: the same range and code.
            let filter = try XCTUnwrap(try factory.makeGPUFilter(.colormap(Colormap.allCases.first { $0.code == code } ?? .jet,
                                                                               .fixed(min: 1, max: 3))) as? GPUDepthColormapFilter)
            filter.codeForTesting = code
            try filter.prepare(input: depth.frameFormat, outputRetainedBufferCountHint: 2)
            let gpu = try filter.render(depth)
            var worst = 0
            for y in 0..<h {
                for x in 0..<w {
                    let a = cpu.rgba(x: x, y: y), b = gpu.rgba(x: x, y: y)
                    worst = max(worst, abs(Int(a.0) - Int(b.0)), abs(Int(a.1) - Int(b.1)), abs(Int(a.2) - Int(b.2)))
                }
            }
            XCTAssertLessThanOrEqual(worst, 1, "code \(code): CPU and GPU differ by \(worst)")
            if let map = Colormap.allCases.first(where: { $0.code == code }) {
                // Swift's Colormap.color is the same formula: its rounding equals the C kernel's.
                for x in stride(from: 0, to: w, by: 5) {
                    let c = map.color(1 - (depth.row(0, as: Float.self)[x] - 1) / 2)
                    let p = cpu.rgba(x: x, y: 0)
                    XCTAssertEqual([unorm8(c.x), unorm8(c.y), unorm8(c.z)], [p.0, p.1, p.2], "\(map) at x \(x)")
                }
                XCTAssertFalse(cpu.rgba(x: w / 2, y: 0) == (255, 0, 255, 255), "\(map) is not the unknown-code color")
            } else {
                for x in [0, w / 2, w - 1] {
                    XCTAssertTrue(cpu.rgba(x: x, y: 0) == (255, 0, 255, 255), "CPU: unknown code \(code) is magenta, got \(cpu.rgba(x: x, y: 0))")
                    XCTAssertTrue(gpu.rgba(x: x, y: 0) == (255, 0, 255, 255), "GPU: unknown code \(code) is magenta, got \(gpu.rgba(x: x, y: 0))")
                }
            }
            // Invalid depth stays black whatever the code.
            XCTAssertTrue(cpu.rgba(x: 17, y: 1) == (0, 0, 0, 255) && gpu.rgba(x: 17, y: 1) == (0, 0, 0, 255), "code \(code): invalid depth")
        }
    }
}
