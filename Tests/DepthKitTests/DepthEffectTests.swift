import XCTest
@testable import DepthKit

final class DepthMaskTests: XCTestCase {
    // dmin = 1, dmax = 2 ⇒ p = (1/d − 1/2)/(1 − 1/2) = 2/d − 1: d = 1 → 1, 1.25 → 0.6, 1.6 → 0.25, 2 → 0.

    func testHighPassByHand() throws {
        // f = 0.1875, s = 4: m = 0.5 + 4(p − f). p = 0.25 → 0.75 → 191 (191.25); p ≥ 0.6 → 1; p = 0 → 0.
        let f = DepthMaskFilter(kind: .highpass, focus: 0.1875, slope: 4, outputWidth: 6, outputHeight: 1)
        let out = try renderOnce(f, makeDepth(6, 1, [1, 1.25, 1.6, 2, .nan, 0]))
        XCTAssertEqual(out.format, .gray8)
        XCTAssertEqual(out.packedBytes(), [255, 255, 191, 0, 0, 0])
    }

    func testBandPassByHand() throws {
        // f = 0.25, s = 5, w = 0.1: m = 0.5 + 5(0.05 − |p − 0.25|).
        // p = 0.25 → 0.75 → 191; p = 0.35 (d = 2/1.35) → 0.25 → 64 (63.75); p = 0, 0.6, 1 → < 0 → 0.
        let f = DepthMaskFilter(kind: .bandpass, focus: 0.25, slope: 5, width: 0.1, outputWidth: 7, outputHeight: 1)
        let out = try renderOnce(f, makeDepth(7, 1, [1, 1.25, 1.6, 2 / 1.35, 2, -1, .infinity]))
        XCTAssertEqual(out.packedBytes(), [0, 0, 191, 64, 0, 0, 0])
    }

    func testAllValidDepthsEqualGivePEqualOne() throws {
        let hp = DepthMaskFilter(kind: .highpass, focus: 0.5, slope: 4, outputWidth: 2, outputHeight: 1)
        XCTAssertEqual(try renderOnce(hp, makeDepth(2, 1, [3, 3])).packedBytes(), [255, 255])
        // Band-pass at f = 1, s = 5: 0.5 + 5·0.05 = 0.75 → 191; the invalid pixel stays 0.
        let bp = DepthMaskFilter(kind: .bandpass, focus: 1, slope: 5, outputWidth: 3, outputHeight: 1)
        XCTAssertEqual(try renderOnce(bp, makeDepth(3, 1, [3, .nan, 3])).packedBytes(), [191, 0, 191])
        // No valid depth at all: m = 0 everywhere.
        let one = DepthMaskFilter(kind: .highpass, focus: 0, slope: 100, outputWidth: 1, outputHeight: 1)
        XCTAssertEqual(try renderOnce(one, makeDepth(1, 1, [0])).packedBytes(), [0])
    }

    func testMaskIsScaledBilinearlyToTheOutputSize() throws {
        // Depth [2, 1]: p = 0, 1; sharp high-pass at 0.5 → m = 0, 1 at the depth size.
        // To 4×1: u = −0.25, 0.25, 0.75, 1.25 → 0, 0.25, 0.75, 1 → 0, 64, 191, 255.
        let f = DepthMaskFilter(kind: .highpass, focus: 0.5, slope: DepthMaskFilter.sharpSlope, outputWidth: 4, outputHeight: 2)
        let depth = makeDepth(2, 1, [2, 1])
        let out = try renderOnce(f, depth)
        XCTAssertEqual(out.width, 4); XCTAssertEqual(out.height, 2)
        XCTAssertEqual(out.packedBytes(), [0, 64, 191, 255, 0, 64, 191, 255])
        let m = try f.floatMask(depth)
        XCTAssertEqual(m.width, 4); XCTAssertEqual(m.height, 2)
        for (v, e) in zip(m.values, [0, 0.25, 0.75, 1, 0, 0.25, 0.75, 1] as [Float]) { XCTAssertEqual(v, e, accuracy: 1e-6) }
        XCTAssertEqual(DepthMaskFilter.mask(depth: depth, kind: .highpass, focus: 0.5, slope: 100).values, [0, 1])
    }

    func testMaskChecks() throws {
        let f = DepthMaskFilter(kind: .highpass, focus: 0.5, outputWidth: 2, outputHeight: 2)
        XCTAssertThrowsError(try f.render(makeDepth(1, 1, [1]))) { XCTAssertEqual($0 as? RenderError, .notPrepared("highpass")) }
        XCTAssertThrowsError(try f.prepare(input: FrameFormat(width: 1, height: 1, pixelFormat: .rgba8), outputRetainedBufferCountHint: 1))
        let bad = DepthMaskFilter(kind: .bandpass, focus: 0.5, outputWidth: 0, outputHeight: 2)
        XCTAssertThrowsError(try bad.prepare(input: FrameFormat(width: 1, height: 1, pixelFormat: .depthFloat32),
                                             outputRetainedBufferCountHint: 1))
    }
}

final class DepthEffectTests: XCTestCase {
    private func mask(_ w: Int, _ h: Int, _ v: Float) -> DepthMask {
        DepthMask(width: w, height: h, values: Array(repeating: v, count: w * h))
    }

    func testEveryEffectWithMaskOneIsTheImage() throws {
        for format in [PixelFormat.rgba8, .bgra8] {
            let img = randomColor(5, 4, format, seed: 3)
            for kind in DepthEffectKind.allCases {
                let out = try DepthEffect.apply(kind: kind, image: img, mask: mask(5, 4, 1))
                XCTAssertEqual(out.format, format)
                XCTAssertEqual(out.packedBytes(), img.packedBytes(), "\(kind) \(format)")
            }
        }
    }

    func testBlurWithMaskZeroAveragesTheWholeSmallImage() throws {
        // Radius 10 covers all of a 3×3 image: each pixel is the mean of 9.
        // R: 0, 10, …, 80 → 40. G: eight 0s and a 5 → 0.56 → 1. B: 200. A: 255.
        var px: [(UInt8, UInt8, UInt8, UInt8)] = (0..<9).map { (UInt8($0 * 10), 0, 200, 255) }
        px[8].1 = 5
        let out = try DepthEffect.apply(kind: .blur, image: makeColor(3, 3, .rgba8, px), mask: mask(3, 3, 0))
        XCTAssertEqual(out.packedBytes(), Array(repeating: [UInt8](arrayLiteral: 40, 1, 200, 255), count: 9).flatMap { $0 })
    }

    func testBlurRadiusOneAtMaskPointNine() throws {
        // r = round(10·0.1) = 1. Corner (0,0): box [0,1]² → (0 + 10 + 30 + 40)/4 = 20; out = 0.1·20 + 0.9·0 = 2.
        // Center: the full 3×3 box, mean 40 = the pixel itself → 40. Edge (1,0): (0+10+20+30+40+50)/6 = 25 → 0.1·25 + 0.9·10 = 11.5 → 12.
        let px: [(UInt8, UInt8, UInt8, UInt8)] = (0..<9).map { (UInt8($0 * 10), 0, 0, 255) }
        let out = try DepthEffect.apply(kind: .blur, image: makeColor(3, 3, .rgba8, px), mask: mask(3, 3, 0.9))
        XCTAssertEqual(out.rgba(x: 0, y: 0).0, 2)
        XCTAssertEqual(out.rgba(x: 1, y: 1).0, 40)
        XCTAssertEqual(out.rgba(x: 1, y: 0).0, 12)
    }

    func testGreenScreenSolidAndBackground() throws {
        let img = makeColor(2, 1, .rgba8, [(100, 101, 100, 255), (7, 8, 9, 10)])
        let solid = try DepthEffect.apply(kind: .greenscreen, image: img, mask: DepthMask(width: 2, height: 1, values: [0.5, 0]))
        // 0.5·(0, 255, 0, 255) + 0.5·(100, 101, 100, 255) = (50, 178, 50, 255); m = 0 → pure green.
        XCTAssertEqual(solid.packedBytes(), [50, 178, 50, 255, 0, 255, 0, 255])
        let bgra = try DepthEffect.apply(kind: .greenscreen, image: makeColor(1, 1, .bgra8, [(1, 2, 3, 4)]), mask: mask(1, 1, 0))
        XCTAssertEqual(bgra.packedBytes(), [0, 255, 0, 255])
        // A 1×1 background stretched over a 2×2 image; mask 0, 1, 0, 1.
        let bg = makeColor(1, 1, .rgba8, [(10, 20, 30, 40)])
        let img2 = makeColor(2, 2, .rgba8, [(1, 1, 1, 1), (2, 2, 2, 2), (3, 3, 3, 3), (4, 4, 4, 4)])
        let out = try DepthEffect.apply(kind: .greenscreen, image: img2, mask: DepthMask(width: 2, height: 2, values: [0, 1, 0, 1]),
                                        background: bg)
        XCTAssertEqual(out.packedBytes(), [10, 20, 30, 40, 2, 2, 2, 2, 10, 20, 30, 40, 4, 4, 4, 4])
        XCTAssertThrowsError(try DepthEffect.apply(kind: .greenscreen, image: img2, mask: mask(2, 2, 0),
                                                   background: makeColor(1, 1, .bgra8, [(0, 0, 0, 0)])))
    }

    func testComicPosterizesToFourLevels() throws {
        // 42 → 0, 43 → 85, 128 → 170, 213 → 255 (round(c·3/255)·85); alpha kept. 1×1 has no edges.
        let out = try DepthEffect.apply(kind: .comic, image: makeColor(1, 1, .rgba8, [(42, 43, 128, 77)]), mask: mask(1, 1, 0))
        XCTAssertEqual(out.packedBytes(), [0, 85, 170, 77])
        let out2 = try DepthEffect.apply(kind: .comic, image: makeColor(1, 1, .bgra8, [(213, 127, 0, 9)]), mask: mask(1, 1, 0))
        XCTAssertEqual(rgbaBytes(out2), [255, 85, 0, 9])
    }

    func testComicDarkensStrongEdgesOnly() throws {
        // Luma 0, 255, 255 on one row: |gx| = 4·255 at x = 0 and 1 (edge → black), 0 at x = 2 (posterized white).
        let img = makeColor(3, 1, .rgba8, [(0, 0, 0, 255), (255, 255, 255, 255), (255, 255, 255, 255)])
        let out = try DepthEffect.apply(kind: .comic, image: img, mask: mask(3, 1, 0))
        XCTAssertEqual(out.packedBytes(), [0, 0, 0, 255, 0, 0, 0, 255, 255, 255, 255, 255])
        // A step of 10 in luma: |gx| = 40 < 128 → no edge; 100 and 110 both posterize to 85.
        let soft = makeColor(2, 1, .rgba8, [(100, 100, 100, 255), (110, 110, 110, 255)])
        XCTAssertEqual(try DepthEffect.apply(kind: .comic, image: soft, mask: mask(2, 1, 0)).packedBytes(),
                       [85, 85, 85, 255, 85, 85, 85, 255])
    }

    func testMaskFromFilterDrivesEffectAtColorSize() throws {
        // A 2×1 depth mask [0, 1] scaled to a 4×1 image: green screen shows green, blends, then the image.
        let depth = makeDepth(2, 1, [2, 1])
        let f = DepthMaskFilter(kind: .highpass, focus: 0.5, slope: 100, outputWidth: 4, outputHeight: 1)
        let img = makeColor(4, 1, .rgba8, Array(repeating: (200, 0, 0, 255), count: 4))
        let out = try DepthEffect.apply(kind: .greenscreen, image: img, mask: try f.floatMask(depth))
        // m = 0, .25, .75, 1: (0,255,0)·(1−m) + (200,0,0)·m.
        XCTAssertEqual(out.packedBytes(), [0, 255, 0, 255, 50, 191, 0, 255, 150, 64, 0, 255, 200, 0, 0, 255])
        XCTAssertEqual(DepthMask(gray8: try renderOnce(f, depth)).values, [0, 64, 191, 255].map { Float($0) / 255 })
    }

    func testRendererMatchesApplyFrameAfterFrame() throws {
        // Odd sizes, bgra8, a mask and a background at other sizes, masks with values outside [0, 1].
        let img = randomColor(7, 5, .bgra8)
        let bg = randomColor(3, 4, .bgra8, seed: 99)
        let m = DepthMask(width: 3, height: 2, values: [0, 0.3, 1, 0.7, .nan, 1.5])
        let m2 = DepthMask(width: 7, height: 5, values: (0..<35).map { Float($0 % 11) / 9 - 0.1 })
        for kind in DepthEffectKind.allCases {
            let r = DepthEffectRenderer(kind: kind)
            try r.prepare(image: img.frameFormat, maskWidth: 3, maskHeight: 2,
                          background: kind == .greenscreen ? bg.frameFormat : nil, outputRetainedBufferCountHint: 2)
            let background = kind == .greenscreen ? bg : nil
            for mask in [m, m2, m] {
                let out = try r.render(image: img, mask: mask, background: background)
                XCTAssertEqual(out.packedBytes(),
                               try DepthEffect.apply(kind: kind, image: img, mask: mask, background: background).packedBytes(),
                               "\(kind)")
            }
        }
        XCTAssertThrowsError(try DepthEffectRenderer(kind: .blur).render(image: img, mask: m)) {
            XCTAssertEqual($0 as? RenderError, .notPrepared("blur"))
        }
        let r = DepthEffectRenderer(kind: .comic)
        try r.prepare(image: img.frameFormat, outputRetainedBufferCountHint: 1)
        XCTAssertThrowsError(try r.render(image: randomColor(7, 5, .rgba8), mask: m))
    }
}
