import XCTest
@testable import DepthKit

final class ColorKernelTests: XCTestCase {
    func testRosyKeepsRedAndBlueZeroesGreenForcesAlpha() throws {
        let img = makeColor(2, 1, .rgba8, [(10, 20, 30, 40), (255, 128, 0, 7)])
        let out = try renderOnce(RosyFilter(), img)
        XCTAssertEqual(out.format, .rgba8)
        XCTAssertEqual(out.packedBytes(), [10, 0, 30, 255, 255, 0, 0, 255])
    }

    func testRosyBGRAKeepsByteOrder() throws {
        // bgra8 memory: B, G, R, A.
        let img = makeColor(1, 1, .bgra8, [(10, 20, 30, 40)])
        XCTAssertEqual(img.packedBytes(), [30, 20, 10, 40])
        let out = try renderOnce(RosyFilter(), img)
        XCTAssertEqual(out.format, .bgra8)
        XCTAssertEqual(out.packedBytes(), [30, 0, 10, 255])
    }

    func testRosyOddSizesAndOneByOne() throws {
        for (w, h) in [(1, 1), (3, 5), (7, 1), (1, 9)] {
            let img = randomColor(w, h)
            let out = try renderOnce(RosyFilter(), img)
            let src = img.packedBytes()
            var expected = src
            for i in stride(from: 0, to: src.count, by: 4) { expected[i + 1] = 0; expected[i + 3] = 255 }
            XCTAssertEqual(out.packedBytes(), expected, "\(w)x\(h)")
        }
    }

    func testRosyReadsStridedInput() throws {
        let img = PixelBuffer(width: 2, height: 2, format: .rgba8, bytesPerRow: 64)
        img.setRGBA(x: 1, y: 1, (1, 2, 3, 4))
        let out = try renderOnce(RosyFilter(), img)
        XCTAssertTrue(out.isPacked)
        XCTAssertEqual(out.packedBytes(), [0, 0, 0, 255, 0, 0, 0, 255, 0, 0, 0, 255, 1, 0, 3, 255])
    }

    func testColorMatrixByHand() throws {
        // R' = (R + G)/2, G' = 0.25, B' = 2B (clamps), A' = A.
        let m = ColorMatrix(r: [0.5, 0.5, 0, 0], g: [0, 0, 0, 0], b: [0, 0, 2, 0], a: [0, 0, 0, 1],
                            bias: [0, 0.25, 0, 0])
        let img = makeColor(2, 1, .rgba8, [(100, 50, 200, 255), (0, 0, 10, 9)])
        let out = try renderOnce(ColorMatrixFilter(matrix: m), img)
        // (100+50)/2 = 75; 0.25·255 + 0.5 = 64.25 → 64; 400/255 > 1 → 255; 20/255 → 20.
        XCTAssertEqual(out.packedBytes(), [75, 64, 255, 255, 0, 64, 20, 9])
    }

    func testColorMatrixRespectsBGRAChannelPositions() throws {
        let m = ColorMatrix(r: [0.5, 0.5, 0, 0], g: [0, 0, 0, 0], b: [0, 0, 2, 0], a: [0, 0, 0, 1],
                            bias: [0, 0.25, 0, 0])
        let img = makeColor(1, 1, .bgra8, [(100, 50, 200, 255)])
        let out = try renderOnce(ColorMatrixFilter(matrix: m), img)
        XCTAssertEqual(out.format, .bgra8)
        XCTAssertEqual(out.packedBytes(), [255, 64, 75, 255])  // memory order B, G, R, A
        // A matrix that moves R into B: in bgra8 memory R is byte 2 and B byte 0.
        let swapRB = ColorMatrix(r: [0, 0, 1, 0], g: [0, 1, 0, 0], b: [1, 0, 0, 0], a: [0, 0, 0, 1])
        let out2 = try renderOnce(ColorMatrixFilter(matrix: swapRB), makeColor(1, 1, .bgra8, [(10, 20, 30, 40)]))
        XCTAssertEqual(rgbaBytes(out2), [30, 20, 10, 40])
    }

    func testColorMatrixClampsNegativeAndBias() throws {
        let m = ColorMatrix(r: [-1, 0, 0, 0], g: [0, 1, 0, 0], b: [0, 0, 1, 0], a: [0, 0, 0, 0], bias: [0, 0.5, -0.5, 1])
        let out = try renderOnce(ColorMatrixFilter(matrix: m), makeColor(1, 1, .rgba8, [(200, 200, 100, 3)]))
        // R: −200/255 → 0; G: 200/255 + 0.5 > 1 → 255; B: 100/255 − 0.5 < 0 → 0; A: bias 1 → 255.
        XCTAssertEqual(out.packedBytes(), [0, 255, 0, 255])
    }

    func testColorMatrixIdentityIsExact() throws {
        let img = randomColor(9, 7)
        XCTAssertEqual(try renderOnce(ColorMatrixFilter(matrix: .identity), img).packedBytes(), img.packedBytes())
    }

    func testRosyMatrixEqualsRosyFilter() throws {
        for format in [PixelFormat.rgba8, .bgra8] {
            let img = randomColor(13, 11, format, seed: 42)
            let a = try renderOnce(RosyFilter(), img).packedBytes()
            let b = try renderOnce(ColorMatrixFilter(matrix: .rosy), img).packedBytes()
            XCTAssertEqual(a, b, "\(format)")
        }
    }

    func testRenderBeforePrepareThrows() {
        let img = makeColor(1, 1, .rgba8, [(1, 2, 3, 4)])
        for f: FilterRenderer in [RosyFilter(), ColorMatrixFilter(matrix: .identity)] {
            XCTAssertThrowsError(try f.render(img)) { XCTAssertEqual($0 as? RenderError, .notPrepared(f.description)) }
        }
    }

    func testResetUnprepares() throws {
        let f = RosyFilter()
        let img = makeColor(1, 1, .rgba8, [(1, 2, 3, 4)])
        _ = try renderOnce(f, img)
        XCTAssertEqual(f.outputFormat, img.frameFormat)
        f.reset()
        XCTAssertNil(f.inputFormat)
        XCTAssertThrowsError(try f.render(img))
    }

    func testWrongSizeOrFormatThrows() throws {
        let f = RosyFilter()
        try f.prepare(input: FrameFormat(width: 2, height: 2, pixelFormat: .rgba8), outputRetainedBufferCountHint: 1)
        XCTAssertThrowsError(try f.render(randomColor(3, 2))) {
            guard case RenderError.formatMismatch = $0 else { return XCTFail("\($0)") }
        }
        XCTAssertThrowsError(try f.render(randomColor(2, 2, .bgra8)))
        XCTAssertThrowsError(try f.prepare(input: FrameFormat(width: 2, height: 2, pixelFormat: .depthFloat32),
                                           outputRetainedBufferCountHint: 1))
        XCTAssertThrowsError(try f.prepare(input: FrameFormat(width: 2, height: 2, pixelFormat: .rgba8),
                                           outputRetainedBufferCountHint: 0))
    }

    func testPoolExhaustsWhenConsumerHoldsTooMany() throws {
        let f = RosyFilter()
        let img = randomColor(4, 4)
        try f.prepare(input: img.frameFormat, outputRetainedBufferCountHint: 1)  // threshold 2
        var held = [try f.render(img), try f.render(img)]
        XCTAssertNotIdentical(held[0], held[1])
        XCTAssertThrowsError(try f.render(img)) {
            guard case BufferPoolError.exhausted(_, 2, 2) = $0 else { return XCTFail("\($0)") }
        }
        let released = ObjectIdentifier(held.removeLast())
        XCTAssertEqual(ObjectIdentifier(try f.render(img)), released, "a released output is reused")
    }

    func testOutputsAreReusedWithoutGrowth() throws {
        let f = ColorMatrixFilter(matrix: .rosy)
        let img = randomColor(4, 4)
        try f.prepare(input: img.frameFormat, outputRetainedBufferCountHint: 2)
        for _ in 0..<10 { _ = try f.render(img) }
        let held = try (0..<4).map { _ in try f.render(img) }  // up to 2·hint
        XCTAssertEqual(Set(held.map(ObjectIdentifier.init)).count, 4)
        XCTAssertThrowsError(try f.render(img))
    }
}

final class ConversionTests: XCTestCase {
    func testTrapFreeConversionsMatchStdlib() {
        // Every 8-bit result and the ties around it, plus a sweep of [0, 1].
        var vs: [Float] = (0...1000).map { Float($0) / 1000 } + [-1, 2, 0.5 / 255, 1.5 / 255, 127.5 / 255, 254.5 / 255]
        for k in 0..<256 { vs += [Float(k) / 255, (Float(k) + 0.5) / 255, (Float(k) - 0.5) / 255] }
        for v in vs { XCTAssertEqual(unorm8Fast(v), UInt32(unorm8(v)), "\(v)") }
        for x: Float in [0, 0.49999997, 0.5, 1, 1.5, 2.5, 254.99998, 255, 255.5, 3_999_999.5, 4_194_303] {
            XCTAssertEqual(floorU32(x), UInt32(x.rounded(.down)), "\(x)")
            XCTAssertEqual(floorU32(SIMD4(repeating: x)), SIMD4(repeating: UInt32(x.rounded(.down))), "\(x)")
        }
    }
}
