import XCTest
@testable import DepthKit

private let invalidDepths: [Float] = [0, .nan, .infinity, -.infinity, -1]
private let black: [UInt8] = [0, 0, 0, 255]

final class DepthKernelTests: XCTestCase {
    // MARK: grayscale

    func testGrayscaleExplicitOffsetRange() throws {
        // v = (d − 1)/4: 0, 0.25, 0.5, 1 → 0, 64 (63.75), 128 (127.5 rounds up), 255.
        let out = try renderOnce(DepthToGrayscaleFilter(offset: 1, range: 4), makeDepth(2, 2, [1, 2, 3, 5]))
        XCTAssertEqual(out.format, .rgba8)
        XCTAssertEqual(out.packedBytes(), [0, 0, 0, 255, 64, 64, 64, 255, 128, 128, 128, 255, 255, 255, 255, 255])
    }

    func testGrayscaleDefaultsToFrameMinAndSpan() throws {
        let out = try renderOnce(DepthToGrayscaleFilter(), makeDepth(2, 2, [5, 3, 2, 1]))
        XCTAssertEqual(out.packedBytes(), [255, 255, 255, 255, 128, 128, 128, 255, 64, 64, 64, 255, 0, 0, 0, 255])
    }

    func testGrayscaleClampsOutsideRange() throws {
        let out = try renderOnce(DepthToGrayscaleFilter(offset: 3, range: 1), makeDepth(3, 1, [2, 3.5, 4.5]))
        // 2 → below 0 → 0; 3.5 → 0.5 → 128; 4.5 → above 1 → 255.
        XCTAssertEqual(out.packedBytes(), [0, 0, 0, 255, 128, 128, 128, 255, 255, 255, 255, 255])
    }

    func testGrayscaleZeroOrNegativeRangeIsBlack() throws {
        let d = makeDepth(2, 1, [1, 7])
        XCTAssertEqual(try renderOnce(DepthToGrayscaleFilter(offset: 0, range: 0), d).packedBytes(), black + black)
        XCTAssertEqual(try renderOnce(DepthToGrayscaleFilter(offset: 0, range: -2), d).packedBytes(), black + black)
        // One valid depth: default range max − min = 0.
        XCTAssertEqual(try renderOnce(DepthToGrayscaleFilter(), makeDepth(1, 1, [2.5])).packedBytes(), black)
        XCTAssertEqual(try renderOnce(DepthToGrayscaleFilter(), makeDepth(3, 1, [4, 0, 4])).packedBytes(), black + black + black)
    }

    func testGrayscaleInvalidDepthIsBlackAndIgnoredByStatistics() throws {
        let d = makeDepth(7, 1, invalidDepths + [2, 4])
        let out = try renderOnce(DepthToGrayscaleFilter(), d)
        XCTAssertEqual(out.packedBytes(), Array(repeating: black, count: 5).flatMap { $0 } + black + [255, 255, 255, 255])
        // With an explicit range invalid samples are still black, not clamped to 0 or 1.
        let out2 = try renderOnce(DepthToGrayscaleFilter(offset: -10, range: 1), makeDepth(5, 1, invalidDepths))
        XCTAssertEqual(out2.packedBytes(), Array(repeating: black, count: 5).flatMap { $0 })
    }

    func testGrayscaleAllInvalidIsBlack() throws {
        XCTAssertEqual(try renderOnce(DepthToGrayscaleFilter(), makeDepth(1, 1, [.nan])).packedBytes(), black)
    }

    // MARK: colormaps

    func testJetFixedRangeAtQuarterSteps() throws {
        // t = 1 − (d − 1)/4: d = 5, 4, 3, 2, 1 → t = 0, 0.25, 0.5, 0.75, 1.
        // jet(0) = (0, 0, .5); jet(.25) = (0, .5, 1); jet(.5) = (.5, 1, .5); jet(.75) = (1, .5, 0); jet(1) = (.5, 0, 0).
        let f = DepthColormapFilter(colormap: .jet, range: .fixed(min: 1, max: 5))
        let out = try renderOnce(f, makeDepth(5, 1, [5, 4, 3, 2, 1]))
        XCTAssertEqual(out.packedBytes(), [0, 0, 128, 255,
                                           0, 128, 255, 255,
                                           128, 255, 128, 255,
                                           255, 128, 0, 255,
                                           128, 0, 0, 255])
    }

    func testFixedRangeClampsAndOtherColormaps() throws {
        let gray = DepthColormapFilter(colormap: .grayscale, range: .fixed(min: 1, max: 5))
        // 0.5 < min → t = 1 → 255; 3 → t = .5 → 128; 9 > max → t = 0 → 0.
        XCTAssertEqual(try renderOnce(gray, makeDepth(3, 1, [0.5, 3, 9])).packedBytes(),
                       [255, 255, 255, 255, 128, 128, 128, 255, 0, 0, 0, 255])
        for map in Colormap.allCases {
            let f = DepthColormapFilter(colormap: map, range: .fixed(min: 1, max: 5))
            let out = try renderOnce(f, makeDepth(2, 1, [2, 3]))
            let c = map.color(0.5)
            XCTAssertEqual(Array(out.packedBytes()[4..<8]), [unorm8(c.x), unorm8(c.y), unorm8(c.z), 255], "\(map)")
        }
    }

    func testEqualizedJetOnTwoByTwo() throws {
        // Bins 1000, 2000, 2000, 3000. cdf: 1 m → 1/4 (t .75), 2 m → 3/4 (t .25), 3 m → 1 (t 0).
        let out = try renderOnce(DepthColormapFilter(colormap: .jet, range: .defaultEqualized), makeDepth(2, 2, [1, 2, 2, 3]))
        XCTAssertEqual(out.packedBytes(), [255, 128, 0, 255,
                                           0, 128, 255, 255,
                                           0, 128, 255, 255,
                                           0, 0, 128, 255])
    }

    func testEqualizedIgnoresInvalidInCdf() throws {
        // Valid: 1 and 2 → cdf 1/2 (t .5) and 1 (t 0).
        let out = try renderOnce(DepthColormapFilter(), makeDepth(2, 2, [1, .nan, 2, 0]))
        XCTAssertEqual(out.packedBytes(), [128, 255, 128, 255] + black + [0, 0, 128, 255] + black)
    }

    func testEqualizedClampsOutOfRangeDepthsIntoEndBins() throws {
        // [1 m, 2 m] at 10 bins/m: 0.5 → bin 0 (clamped), 1.05 → bin 0, 1.55 → bin 5, 5 → bin 9 (clamped).
        // cdf: bin 0 → 2/4 (t .5), bin 5 → 3/4 (t .25), bin 9 → 1 (t 0).
        let f = DepthColormapFilter(colormap: .jet, range: .equalized(minDepth: 1, maxDepth: 2, binsPerMeter: 10))
        let out = try renderOnce(f, makeDepth(4, 1, [0.5, 1.05, 1.55, 5]))
        XCTAssertEqual(out.packedBytes(), [128, 255, 128, 255,
                                           128, 255, 128, 255,
                                           0, 128, 255, 255,
                                           0, 0, 128, 255])
    }

    func testColormapInvalidDepthsAreBlack() throws {
        for range in [DepthRange.defaultEqualized, .fixed(min: 0.5, max: 4)] {
            let out = try renderOnce(DepthColormapFilter(colormap: .turbo, range: range), makeDepth(6, 1, invalidDepths + [1]))
            XCTAssertEqual(Array(out.packedBytes()[0..<20]), Array(repeating: black, count: 5).flatMap { $0 }, "\(range)")
            XCTAssertNotEqual(Array(out.packedBytes()[20..<24]), black)
        }
    }

    func testColormapNoValidPixelsIsAllBlack() throws {
        for range in [DepthRange.defaultEqualized, .fixed(min: 0.5, max: 4)] {
            XCTAssertEqual(try renderOnce(DepthColormapFilter(range: range), makeDepth(1, 1, [0])).packedBytes(), black)
            XCTAssertEqual(try renderOnce(DepthColormapFilter(range: range), makeDepth(3, 1, [.nan, -2, .infinity])).packedBytes(),
                           black + black + black)
        }
    }

    func testEqualizedRepeatsFrameToFrame() throws {
        // The histogram is rebuilt per frame: the second frame must not see the first one's counts.
        let f = DepthColormapFilter()
        try f.prepare(input: FrameFormat(width: 2, height: 2, pixelFormat: .depthFloat32), outputRetainedBufferCountHint: 2)
        let a = try f.render(makeDepth(2, 2, [1, 2, 2, 3])).packedBytes()
        _ = try f.render(makeDepth(2, 2, [9, 9, 9, 9]))
        XCTAssertEqual(try f.render(makeDepth(2, 2, [1, 2, 2, 3])).packedBytes(), a)
    }

    func testColormapOddSizeMatchesPerPixelFormula() throws {
        let w = 37, h = 23
        var d = [Float]()
        for i in 0..<(w * h) { d.append(i % 11 == 0 ? .nan : 0.3 + Float((i * 7919) % 1000) / 97) }
        let out = try renderOnce(DepthColormapFilter(colormap: .viridis, range: .fixed(min: 0.5, max: 8)), makeDepth(w, h, d))
        for (i, v) in d.enumerated() {
            let c = Colormap.viridis.color(1 - clamp01((v - 0.5) / 7.5))
            let e: [UInt8] = v.isNaN ? black : [unorm8(c.x), unorm8(c.y), unorm8(c.z), 255]
            XCTAssertEqual(Array(out.packedBytes()[(4 * i)..<(4 * i + 4)]), e, "pixel \(i)")
        }
    }

    func testDepthFiltersRejectColorAndRenderBeforePrepare() {
        let color = FrameFormat(width: 2, height: 2, pixelFormat: .rgba8)
        for f: FilterRenderer in [DepthToGrayscaleFilter(), DepthColormapFilter()] {
            XCTAssertThrowsError(try f.render(makeDepth(1, 1, [1]))) { XCTAssertEqual($0 as? RenderError, .notPrepared(f.description)) }
            XCTAssertThrowsError(try f.prepare(input: color, outputRetainedBufferCountHint: 1))
        }
        XCTAssertThrowsError(try DepthColormapFilter(range: .fixed(min: 2, max: 2))
            .prepare(input: FrameFormat(width: 1, height: 1, pixelFormat: .depthFloat32), outputRetainedBufferCountHint: 1))
    }

    // MARK: mixer

    func testMixerAtZeroHalfOneAndClamped() throws {
        let a = makeColor(1, 1, .rgba8, [(0, 100, 200, 255)]), b = makeColor(1, 1, .rgba8, [(255, 50, 0, 255)])
        func mix(_ t: Float) throws -> [UInt8] {
            let m = ImageMixer(mixFactor: t)
            try m.prepare(input: a.frameFormat, secondInput: b.frameFormat, outputRetainedBufferCountHint: 1)
            return try m.render(a, b).packedBytes()
        }
        XCTAssertEqual(try mix(0), [0, 100, 200, 255])
        XCTAssertEqual(try mix(1), [255, 50, 0, 255])
        XCTAssertEqual(try mix(0.5), [128, 75, 100, 255])  // 127.5 rounds to 128
        XCTAssertEqual(try mix(0.25), [64, 88, 150, 255])  // 63.75 → 64, 87.5 → 88
        XCTAssertEqual(try mix(-3), [0, 100, 200, 255])
        XCTAssertEqual(try mix(7), [255, 50, 0, 255])
        XCTAssertEqual(try mix(.nan), [0, 100, 200, 255])
    }

    func testMixerScalesTwoByTwoToThreeByThreeBilinearly() throws {
        // b's R: [[0, 100], [200, 240]]. Output centers map to u = −1/6, 0.5, 7/6 (clamped at the edges),
        // so corners are b's corners, edge midpoints average two texels and the center averages four.
        let b = makeColor(2, 2, .rgba8, [(0, 0, 40, 255), (100, 0, 40, 255), (200, 0, 40, 255), (240, 0, 40, 255)])
        let a = makeColor(3, 3, .rgba8, Array(repeating: (9, 9, 9, 9), count: 9))
        let m = ImageMixer(mixFactor: 1)
        try m.prepare(input: a.frameFormat, secondInput: b.frameFormat, outputRetainedBufferCountHint: 1)
        let out = try m.render(a, b)
        XCTAssertEqual(out.width, 3); XCTAssertEqual(out.height, 3)
        XCTAssertEqual((0..<9).map { out.rgba(x: $0 % 3, y: $0 / 3).0 }, [0, 50, 100, 100, 135, 170, 200, 220, 240])
        XCTAssertEqual((0..<9).map { out.rgba(x: $0 % 3, y: $0 / 3).2 }, Array(repeating: 40, count: 9))
        // Half-way: center (9 + 135)/2 = 72.
        let half = ImageMixer(mixFactor: 0.5)
        try half.prepare(input: a.frameFormat, secondInput: b.frameFormat, outputRetainedBufferCountHint: 1)
        XCTAssertEqual(try half.render(a, b).rgba(x: 1, y: 1).0, 72)
    }

    func testMixerOddSizesAndChecks() throws {
        let a = randomColor(5, 3), b = randomColor(5, 3, seed: 7)
        let m = ImageMixer(mixFactor: 0)
        XCTAssertThrowsError(try m.render(a, b)) { XCTAssertEqual($0 as? RenderError, .notPrepared("mix")) }
        try m.prepare(input: a.frameFormat, secondInput: b.frameFormat, outputRetainedBufferCountHint: 1)
        XCTAssertEqual(try m.render(a, b).packedBytes(), a.packedBytes())
        XCTAssertThrowsError(try m.render(a, randomColor(4, 3)))
        XCTAssertThrowsError(try m.prepare(input: a.frameFormat, secondInput: FrameFormat(width: 1, height: 1, pixelFormat: .bgra8),
                                           outputRetainedBufferCountHint: 1))
        // 1×1 b stretched over a: every pixel is b's.
        let one = makeColor(1, 1, .rgba8, [(1, 2, 3, 4)])
        let s = ImageMixer(mixFactor: 1)
        try s.prepare(input: a.frameFormat, secondInput: one.frameFormat, outputRetainedBufferCountHint: 1)
        XCTAssertEqual(try s.render(a, one).packedBytes(), Array(repeating: [UInt8](arrayLiteral: 1, 2, 3, 4), count: 15).flatMap { $0 })
    }

    // MARK: factory

    func testCPUFactoryBuildsEachSpec() throws {
        let f = CPUFilterFactory()
        XCTAssertEqual(f.backendName, "cpu")
        XCTAssertTrue(try f.makeFilter(.rosy) is RosyFilter)
        XCTAssertTrue(try f.makeFilter(.colorMatrix(.rosy)) is ColorMatrixFilter)
        XCTAssertTrue(try f.makeFilter(.grayscale(offset: nil, range: nil)) is DepthToGrayscaleFilter)
        let jet = try f.makeFilter(.colormap(.turbo, .fixed(min: 1, max: 2)))
        XCTAssertEqual((jet as? DepthColormapFilter)?.colormap, .turbo)
        XCTAssertEqual(jet.description, "turbo")
        XCTAssertEqual((try f.makeMixer(mixFactor: 0.3) as? ImageMixer)?.mixFactor, 0.3)
        let out = try renderOnce(f.makeFilter(.grayscale(offset: 1, range: 4)), makeDepth(1, 1, [3]))
        XCTAssertEqual(out.packedBytes(), [128, 128, 128, 255])
    }
}
