import XCTest
import DepthKit
@testable import GPUKit

final class TextureCacheTests: GPUTestCase {
    /// Frames after the first create no images, memory, descriptor sets, framebuffers or imports.
    func checkSteadyState(allowHostImport: Bool) throws {
        let factory = try GPUFilterFactory(context: context, allowHostImport: allowHostImport)
        let cache = factory.textureCache
        if allowHostImport { XCTAssertEqual(cache.usesHostImport, context.hostImportAlignment != nil) } else { XCTAssertFalse(cache.usesHostImport) }
        let jet = try factory.makeFilter(.colormap(.jet, .defaultEqualized))
        let rosy = try factory.makeFilter(.rosy)
        let mixer = try factory.makeMixer(mixFactor: 0.5)
        let depth = Inputs.depth(33, 17), color = Inputs.color(33, 17)
        try jet.prepare(input: depth.frameFormat, outputRetainedBufferCountHint: 3)
        try rosy.prepare(input: color.frameFormat, outputRetainedBufferCountHint: 3)
        try mixer.prepare(input: color.frameFormat, secondInput: color.frameFormat, outputRetainedBufferCountHint: 3)
        func frame() throws {
            let j = try jet.render(depth)
            _ = try rosy.render(color)
            _ = try mixer.render(color, j)
        }
        // Warm-up: pools hand their free buffers out in turn, so the first 3 frames (the pools'
        // size) reach every buffer and give each its texture; after that nothing is made.
        for _ in 0..<3 { try frame() }
        let warm = cache.counters
        XCTAssertGreaterThan(warm.imagesCreated, 0)
        for _ in 0..<4 { try frame() }
        XCTAssertEqual(cache.counters.creations, warm.creations, "steady state created objects: \(warm) → \(cache.counters)")
        XCTAssertEqual(cache.counters.uploads - warm.uploads, 4 * 4)
        if cache.usesHostImport {
            XCTAssertGreaterThan(warm.hostImports, 0)
            XCTAssertEqual(cache.counters.stagingUploads, 0)
        } else {
            XCTAssertEqual(warm.hostImports, 0)
            XCTAssertEqual(cache.counters.stagingUploads - warm.stagingUploads, 4 * 4)
        }
    }

    func testSteadyStateAllocatesNothingWithHostImport() throws { try checkSteadyState(allowHostImport: true) }
    func testSteadyStateAllocatesNothingWithStaging() throws { try checkSteadyState(allowHostImport: false) }

    func testStagingAndImportGiveTheSamePixels() throws {
        let a = try GPUFilterFactory(context: context, allowHostImport: true)
        let b = try GPUFilterFactory(context: context, allowHostImport: false)
        let input = Inputs.color(1921, 1081, .bgra8)
        let fa = try a.makeFilter(.rosy), fb = try b.makeFilter(.rosy)
        try fa.prepare(input: input.frameFormat, outputRetainedBufferCountHint: 1)
        try fb.prepare(input: input.frameFormat, outputRetainedBufferCountHint: 1)
        XCTAssertEqual(try fa.render(input).packedBytes(), try fb.render(input).packedBytes())
    }

    func testFlushDropsDeallocatedAndUnusedBuffers() throws {
        let factory = try GPUFilterFactory(context: context)
        let cache = factory.textureCache
        let f = try factory.makeFilter(.rosy)
        try f.prepare(input: FrameFormat(width: 8, height: 8, pixelFormat: .rgba8), outputRetainedBufferCountHint: 1)
        let kept = Inputs.color(8, 8)
        do {
            let temp = Inputs.color(8, 8, seed: 9)
            _ = try f.render(temp)
        }
        _ = try f.render(kept)
        XCTAssertEqual(cache.count, 2, "temp's texture was dropped when kept's was made; kept + output remain")
        cache.flush()
        XCTAssertEqual(cache.count, 2)
        cache.flush()  // nothing used since the previous flush
        XCTAssertEqual(cache.count, 0)
        _ = try f.render(kept)
        XCTAssertEqual(cache.count, 2)
    }
}
