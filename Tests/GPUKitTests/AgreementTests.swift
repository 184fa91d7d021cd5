import XCTest
import DepthKit
@testable import GPUKit

/// Every GPU kernel against DepthKit's CPU kernel (`CPUFilterFactory`) on seeded random inputs
/// and edges (1×1, 17×13, 1921×1081, NaN/Inf/zero/negative depth, zero range, mixFactor 0 and 1):
/// max difference ≤ 1 LSB.
final class AgreementTests: GPUTestCase {
    static let sizes = [(1, 1), (17, 13), (1921, 1081)]

    func compare(_ spec: FilterSpec, _ input: PixelBuffer, _ gpu: GPUFilterFactory, file: StaticString = #filePath, line: UInt = #line) throws {
        let cpu = try CPUFilterFactory().makeFilter(spec), g = try gpu.makeFilter(spec)
        try cpu.prepare(input: input.frameFormat, outputRetainedBufferCountHint: 1)
        try g.prepare(input: input.frameFormat, outputRetainedBufferCountHint: 1)
        let a = try cpu.render(input), b = try g.render(input)
        XCTAssertEqual(a.frameFormat, b.frameFormat, "\(spec)", file: file, line: line)
        XCTAssertLessThanOrEqual(maxDifference(a, b), 1, "\(spec) \(input.frameFormat)", file: file, line: line)
    }

    func testColorKernels() throws {
        let gpu = try GPUFilterFactory(context: context)
        let m = ColorMatrix(r: [0.3, 0.59, 0.11, 0], g: [0.5, -0.2, 0.7, 0], b: [1.2, 0, 0, 0.1], a: [0, 0, 0, 1], bias: [0.05, 0, -0.1, 0])
        for (w, h) in Self.sizes {
            for format in [PixelFormat.rgba8, .bgra8] {
                let input = Inputs.color(w, h, format, seed: UInt64(w &* 7 &+ h))
                for spec in [FilterSpec.rosy, .colorMatrix(m), .colorMatrix(.rosy), .colorMatrix(.identity)] {
                    try compare(spec, input, gpu)
                }
            }
        }
    }

    func testDepthKernels() throws {
        let gpu = try GPUFilterFactory(context: context)
        var specs: [FilterSpec] = [.grayscale(offset: nil, range: nil), .grayscale(offset: 1, range: 2), .grayscale(offset: nil, range: 0)]
        for map in Colormap.allCases {
            specs.append(.colormap(map, .defaultEqualized))
            specs.append(.colormap(map, .fixed(min: 0.5, max: 6)))
        }
        specs.append(.colormap(.jet, .equalized(minDepth: 1, maxDepth: 4, binsPerMeter: 100)))
        for (w, h) in Self.sizes {
            let d = Inputs.depth(w, h, seed: UInt64(w &+ 5 &* h))
            for spec in specs { try compare(spec, d, gpu) }
        }
        let flat = PixelBuffer(width: 5, height: 3, format: .depthFloat32)
        for y in 0..<3 { for x in 0..<5 { flat.row(y, as: Float.self)[x] = 2 } }
        flat.row(1, as: Float.self)[2] = .nan
        for spec in specs { try compare(spec, flat, gpu) }
    }

    func testMixer() throws {
        let gpu = try GPUFilterFactory(context: context)
        for ((wa, ha), (wb, hb)) in [((1, 1), (1, 1)), ((17, 13), (17, 13)), ((17, 13), (4, 9)), ((1921, 1081), (640, 480))] {
            let a = Inputs.color(wa, ha, seed: 11), b = Inputs.color(wb, hb, seed: 12)
            for f in [Float(0), 0.25, 1, .nan, 2] {
                let cpu = try CPUFilterFactory().makeMixer(mixFactor: f), g = try gpu.makeMixer(mixFactor: f)
                try cpu.prepare(input: a.frameFormat, secondInput: b.frameFormat, outputRetainedBufferCountHint: 1)
                try g.prepare(input: a.frameFormat, secondInput: b.frameFormat, outputRetainedBufferCountHint: 1)
                XCTAssertLessThanOrEqual(maxDifference(try cpu.render(a, b), try g.render(a, b)), 1, "mix \(f) \(wa)x\(ha) ← \(wb)x\(hb)")
            }
        }
    }
}
