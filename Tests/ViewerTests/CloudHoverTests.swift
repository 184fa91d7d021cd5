import CDepthKit
import DepthKit
import GPUKit
@testable import Viewer
import XCTest
import TestSupport

/// The hover readout of a loaded cloud: `PointIDMap` finds the points projected by hand with the
/// pinhole formulas (u = fx·x/z + cx, v = fy·y/z + cy) at their pixels, the nearer of two on one
/// pixel, nothing beyond 8 px, and agrees with `PointPicker` (the click's brute-force pick) on a
/// cloud of points on distinct pixels; `CloudHover` projects the cloud once per still view (on its
/// worker) and answers cursor moves from that map; the readout's text is the hand-written one.
final class CloudHoverTests: XCTestCase {
    let fx: Float = 500, fy: Float = 500, cx: Float = 319.5, cy: Float = 239.5
    lazy var vp = Matrix4.projection(fx: fx, fy: fy, cx: cx, cy: cy, width: 640, height: 480, near: 0.1, far: 100)
    let p0 = SIMD3<Float>(0.1, -0.05, 2)     // pixel (344.5, 227)
    let p1 = SIMD3<Float>(-0.2, 0.1, 3)      // pixel (286.1667, 256.1667)
    let p2 = SIMD3<Float>(0.2, -0.1, 4)      // behind p0, on its pixel

    func map(_ points: [SIMD3<Float>]) -> PointIDMap {
        var m = PointIDMap()
        m.build(points, viewProjection: vp, width: 640, height: 480)
        return m
    }

    func testMapFindsThePointUnderTheCursorAndTheNearerOnOnePixel() {
        let points = [p2, p1, p0]
        let m = map(points)
        func hit(_ x: Double, _ y: Double) -> Int? { m.nearest(points, viewProjection: vp, x: x, y: y)?.index }
        XCTAssertEqual(hit(344.5, 227), 2, "p0 and p2 land on one pixel: the nearer to the eye")
        XCTAssertEqual(m.nearest(points, viewProjection: vp, x: 344.5, y: 227)?.depth ?? 0, 2, accuracy: 1e-5, "p0's z")
        XCTAssertEqual(hit(287, 255), 1, "within a pixel or two")
        XCTAssertEqual(m.nearest(points, viewProjection: vp, x: 287, y: 255)?.depth ?? 0, 3, accuracy: 1e-5, "p1's z")
        XCTAssertEqual(hit(344.5 + 7, 227), 2, "7 px away")
        XCTAssertEqual(hit(344.5, 227 - 7.9), 2, "7.9 px away")
        XCTAssertNil(hit(344.5 + 9, 227), "9 px away: nothing")
        XCTAssertNil(hit(100, 100))
        XCTAssertNil(hit(-50, -50), "outside the window")
        XCTAssertEqual(map([p2]).nearest([p2], viewProjection: vp, x: 344.5, y: 227)?.index, 0, "p2 alone is found")
        XCTAssertNil(map([]).nearest([], viewProjection: vp, x: 344.5, y: 227))
        let behind: [SIMD3<Float>] = [SIMD3(0, 0, -1)]
        XCTAssertNil(map(behind).nearest(behind, viewProjection: vp, x: 319.5, y: 239.5), "behind the eye")
        // A point 0.6 px left of a pixel edge still counts from the neighbouring pixel's cursor.
        let edge: [SIMD3<Float>] = [SIMD3((400.45 - cx) / fx * 2, (100 - cy) / fy * 2, 2)]   // pixel (400.45, 100): stored at 400
        XCTAssertEqual(map(edge).nearest(edge, viewProjection: vp, x: 408.4, y: 100)?.index, 0, "7.95 px from the point")
        XCTAssertNil(map(edge).nearest(edge, viewProjection: vp, x: 408.5, y: 100), "8.05 px from the point")
    }

    /// Points on distinct pixels (every third pixel, subpixel offsets, depths 0.5–6 m): the map's
    /// pick is the brute-force `PointPicker`'s at every cursor tried.
    func testMapAgreesWithTheBruteForcePick() {
        var rng = SeededRandom(seed: 19)
        var points: [SIMD3<Float>] = []
        for v in stride(from: 2, to: 478, by: 3) {
            for u in stride(from: 2, to: 638, by: 3) where Int.random(in: 0..<4, using: &rng) == 0 {
                let z = Float.random(in: 0.5...6, using: &rng)
                let su = Float(u) + Float.random(in: -0.45...0.45, using: &rng), sv = Float(v) + Float.random(in: -0.45...0.45, using: &rng)
                points.append(SIMD3((su - cx) / fx * z, (sv - cy) / fy * z, z))
            }
        }
        let m = map(points)
        var found = 0
        for _ in 0..<400 {
            let x = Double.random(in: -10...650, using: &rng), y = Double.random(in: -10...490, using: &rng)
            let brute = PointPicker.nearest(points, viewProjection: vp, width: 640, height: 480, x: x, y: y)
            let fast = m.nearest(points, viewProjection: vp, x: x, y: y)
            XCTAssertEqual(fast.map { points[$0.index] }, brute, "cursor (\(x), \(y))")
            if fast != nil { found += 1 }
        }
        XCTAssertGreaterThan(found, 200, "most cursors land near a point")
    }

    func testReadoutText() {
        let red = CloudReadout(index: 0, depth: 2, position: SIMD3(-0.3, 0.05, 2), color: SIMD3(255, 0, 0))
        XCTAssertEqual(red.text, "point 0  2.000 m  x -0.300 y 0.050 z 2.000 m  rgb 255 0 0")
        let near = CloudReadout(index: 1_234_567, depth: 0.7344, position: SIMD3(0.25, -0.1, 0.7), color: nil)
        XCTAssertEqual(near.text, "point 1234567  734 mm  x 0.250 y -0.100 z 0.700 m")
        XCTAssertEqual(red.withText(prefix: "hover ") { String(cString: $0) }, "hover " + red.text)
    }

    /// The frame-by-frame protocol: nothing on the frame a view first appears (it may be moving);
    /// the next still frame asks the worker for a map; once it is made, cursor moves are answered
    /// without projecting the cloud again; a moved view, a cursor away from the picture or over
    /// the panel, and new points show nothing until a new map is made.
    func testHoverProjectsOncePerStillView() throws {
        let hover = CloudHover()
        let points = [p2, p1, p0]
        let colors: [SIMD3<UInt8>] = [SIMD3(1, 2, 3), SIMD3(4, 5, 6), SIMD3(7, 8, 9)]
        var view = CloudHover.View(matrix: vp, width: 640, height: 480, generation: hover.generation)
        func frame(_ x: Double, _ y: Double, active: Bool = true) -> CloudReadout? {
            hover.update(view: view, positions: points, colors: colors, x: x, y: y, active: active)
            return hover.readout
        }
        XCTAssertNil(frame(344.5, 227), "first frame of a view")
        XCTAssertNil(frame(344.5, 227), "still: the map is asked for")
        XCTAssertTrue(hover.waitForMap(view, timeout: 20))
        XCTAssertEqual(frame(344.5, 227), CloudReadout(index: 2, depth: 2, position: p0, color: SIMD3(7, 8, 9)))
        XCTAssertTrue(hover.update(view: view, positions: points, colors: colors, x: 286, y: 256, active: true), "changed")
        XCTAssertEqual(hover.readout?.index, 1)
        XCTAssertFalse(hover.update(view: view, positions: points, colors: colors, x: 286, y: 256, active: true), "cursor still")
        XCTAssertNil(frame(100, 100), "nothing near")
        XCTAssertNil(frame(344.5, 227, active: false), "over the panel or dragging")
        XCTAssertNil(frame(700, 227), "right of the picture")
        XCTAssertEqual(frame(344.5, 227)?.index, 2)
        XCTAssertEqual(hover.builds, 1, "one projection of the cloud for all of these")

        // The view turns: hidden while it moves, a new map once it stands still.
        view.matrix = vp * Matrix4(rotation: Matrix3.rotationY(0.01), translation: .zero)
        XCTAssertNil(frame(344.5, 227))
        XCTAssertNil(frame(344.5, 227))
        XCTAssertTrue(hover.waitForMap(view, timeout: 20))
        XCTAssertEqual(frame(344.5, 227)?.index, 2, "0.01 rad moves p0 by about 5 px")
        XCTAssertEqual(hover.builds, 2)

        // A cloud without colors, as the next file of a sequence: no color in the readout.
        hover.pointsChanged()
        view.generation = hover.generation
        let colorless: [SIMD3<UInt8>] = []
        _ = hover.update(view: view, positions: points, colors: colorless, x: 344.5, y: 227, active: true)
        XCTAssertEqual(hover.readout?.color, SIMD3(7, 8, 9), "the last readout stays while the new map is made")
        XCTAssertTrue(hover.waitForMap(view, timeout: 20))
        _ = hover.update(view: view, positions: points, colors: colorless, x: 344.5, y: 227, active: true)
        XCTAssertEqual(hover.readout?.index, 2)
        XCTAssertNil(hover.readout?.color)
        XCTAssertEqual(hover.builds, 3)
    }
}

extension CloudHoverTests {
    /// The frame loop's part with the cursor and the view still (a readout shown): no allocation,
    /// the update and the overlay's stack-formatted text included.
    func testStillCursorAllocatesNothing() throws {
        let hover = CloudHover()
        let points = [p2, p1, p0]
        let colors: [SIMD3<UInt8>] = [SIMD3(1, 2, 3), SIMD3(4, 5, 6), SIMD3(7, 8, 9)]
        let view = CloudHover.View(matrix: vp, width: 640, height: 480, generation: hover.generation)
        hover.update(view: view, positions: points, colors: colors, x: 344.5, y: 227, active: true)
        hover.update(view: view, positions: points, colors: colors, x: 344.5, y: 227, active: true)
        XCTAssertTrue(hover.waitForMap(view, timeout: 20))
        var length = 0
        func frame() {
            hover.update(view: view, positions: points, colors: colors, x: 344.5, y: 227, active: true)
            hover.readout?.withText(prefix: "") { length += strlen($0) }
        }
        for _ in 0..<3 { frame() }
        XCTAssertEqual(hover.readout?.index, 2)
        let allocations = AllocationCounter.ownAllocations(running: 100) { _ in frame() }
        XCTAssertEqual(allocations, 0, "allocations in 100 still frames")
        XCTAssertEqual(length, 103 * "point 2  2.000 m  x 0.100 y -0.050 z 2.000 m  rgb 7 8 9".utf8.count)
    }
}

