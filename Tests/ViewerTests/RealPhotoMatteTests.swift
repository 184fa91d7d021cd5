import Capture
import DepthKit
import Foundation
import GPUKit
import TestSupport
import XCTest
@testable import Viewer

/// The real iPhone X portrait JPEG (iOS 12, Tests/Fixtures/iphone-x-portrait-matte.jpg): its
/// portrait effects matte, labelled type `depth` subtype `portraiteffectsmatte`, is the mask of
/// the viewer's mask mode (the matte scaled bilinearly to the 3024×4032 color image), as a HEIC's
/// matte is; the matte's own pixels are checked against an independent reader in
/// CaptureTests/RealPhotoTests.
final class RealPhotoMatteTests: XCTestCase {
    func testIOS12MatteIsTheMaskOfTheMaskMode() throws {
        let source = PhotoSource(path: Repo.fixture("iphone-x-portrait-matte.jpg"))
        try source.start()
        let frame = try XCTUnwrap(try source.nextFrame(now: 0))
        let matte = try XCTUnwrap(frame.matte, "the portrait effects matte rides with the frame")
        let mw = matte.width, mh = matte.height
        XCTAssertEqual([mw, mh], [1512, 2016])
        let color = ImageIO.toRGBA8(frame.color)
        let w = color.width, h = color.height
        XCTAssertEqual([w, h], [3024, 4032])

        let processor = FrameProcessor(factory: try GPUFilterFactory(context: try GPUContext()))
        let depth = try XCTUnwrap(frame.depth).depthFloat32()
        let mask = try processor.cpuEffect(stage: .mask, color: color, depth: depth, focus: 0.5, matte: matte)
        XCTAssertEqual([mask.width, mask.height], [w, h])
        let fromDepth = try processor.cpuEffect(stage: .mask, color: color, depth: depth, focus: 0.5)

        // Bilinear between the matte's pixels at the color pixels' centers, on a grid of samples.
        func matteAt(_ x: Int, _ y: Int) -> Float {
            func axis(_ i: Int, _ n: Int, _ m: Int) -> (Int, Int, Float) {
                let s = max(0, (Float(i) + 0.5) * Float(m) / Float(n) - 0.5)
                let i0 = min(Int(s), m - 1)
                return (i0, min(i0 + 1, m - 1), s - Float(i0))
            }
            let (x0, x1, fx) = axis(x, w, mw), (y0, y1, fy) = axis(y, h, mh)
            func p(_ u: Int, _ v: Int) -> Float { Float(matte.row(v, as: UInt8.self)[u]) }
            return (p(x0, y0) * (1 - fx) + p(x1, y0) * fx) * (1 - fy) + (p(x0, y1) * (1 - fx) + p(x1, y1) * fx) * fy
        }
        var worst: Float = 0, differsFromDepth = 0, subject = 0, samples = 0
        for y in stride(from: 0, to: h, by: 7) {
            let row = mask.row(y, as: UInt8.self), d = fromDepth.row(y, as: UInt8.self)
            for x in stride(from: 0, to: w, by: 5) {
                worst = max(worst, abs(Float(row[4 * x]) - matteAt(x, y)))
                if row[4 * x] != d[4 * x] { differsFromDepth += 1 }
                if row[4 * x] > 128 { subject += 1 }
                samples += 1
            }
        }
        XCTAssertLessThanOrEqual(worst, 1, "mask mode vs the matte scaled to the color image")
        XCTAssertGreaterThan(differsFromDepth, samples / 100, "the matte, not the depth threshold")
        // The person covers a fair part of the portrait.
        XCTAssertGreaterThan(subject, samples / 10)
        XCTAssertLessThan(subject, samples * 9 / 10)
    }
}

/// The real Lens Blur photo's relative depth (14.9 … 287.6 in its own scale) is scaled into the
/// equalized colormap's 16 units for display, once per buffer; metric and in-range relative depth
/// are shown as they are.
final class RelativeDepthDisplayTests: XCTestCase {
    func testLensBlurDepthIsScaledIntoTheColormapsRange() throws {
        let source = PhotoSource(path: Repo.fixture("google-lensblur-table.jpg"))
        try source.start()
        let depth = try XCTUnwrap(try XCTUnwrap(try source.nextFrame(now: 0)).depth)
        let processor = FrameProcessor(factory: try GPUFilterFactory(context: try GPUContext()))
        let shown = processor.displayDepth(depth)
        let s = DepthData(map: shown).depthStatistics()
        XCTAssertEqual(s.max, 16, accuracy: 1e-4)
        XCTAssertEqual(s.min, 16 * 14.915345 / 287.570949, accuracy: 1e-4)
        XCTAssertTrue(processor.displayDepth(depth) === shown, "made once per buffer")
        // The file's values are untouched (readouts, 3D view).
        XCTAssertEqual(depth.depthStatistics().max, 287.570949, accuracy: 3e-4)
        // Metric depth, and relative depth within range (an iPhone's), are shown as they are.
        let metric = DepthData(map: depth.map, accuracy: .absolute)
        XCTAssertTrue(processor.displayDepth(metric) === depth.map)
        let small = PixelBuffer(width: 2, height: 1, format: .depthFloat32)
        small.setSample(x: 0, y: 0, 0.7)
        XCTAssertTrue(processor.displayDepth(DepthData(map: small, accuracy: .relative)) === small)
        XCTAssertTrue(processor.displayDepth(DepthData(map: small, accuracy: .relative)) === small, "cached")
    }
}
