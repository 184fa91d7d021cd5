import XCTest
@testable import DepthKit

/// Adaptive point size on the CPU renderer, by hand: a point's square is ⌈scale / w⌉ pixels
/// (point lists) clamped to 1…point size; a near point is drawn bigger than a far one; the spacing
/// estimate of a regular grid is its pitch.
final class AdaptivePointSizeTests: XCTestCase {
    let k = CameraIntrinsics.default(width: 24, height: 16)
    let red: UInt32 = 0xFF00_00FF

    func projection(near: Float = 0.01, far: Float = 100) -> [Float] {
        let w = Float(k.width), h = Float(k.height)
        let a = far / (far - near), b = -far * near / (far - near)
        return [2 * k.fx / w, 0, 0, 0, 0, 2 * k.fy / h, 0, 0,
                (2 * k.cx + 1) / w - 1, (2 * k.cy + 1) / h - 1, a, 1, 0, 0, b, 0]
    }

    /// Covered pixels of a picture (not the background).
    func covered(_ b: PixelBuffer) -> Set<String> {
        var s = Set<String>()
        for y in 0..<b.height { for x in 0..<b.width where b.rgba(x: x, y: y).0 != 26 { s.insert("\(x),\(y)") } }
        return s
    }

    func square(_ xs: ClosedRange<Int>, _ ys: ClosedRange<Int>) -> Set<String> {
        var s = Set<String>()
        for y in ys { for x in xs { s.insert("\(x),\(y)") } }
        return s
    }

    func testSizeFollowsViewDepth() throws {
        let r = CPUPointRenderer()
        r.pointSize = 8
        // The point unprojected from (10, 8) falls at f = (10.5, 8.5); the largest size 8 is even, so
        // it lands on the nearest pixel (11, 9). Scale 6: at w = 2 it is ⌈3⌉ = 3 px (window [−1, 1]:
        // 10…12); at w = 4, ⌈1.5⌉ = 2 px (it covers [x − 1, x]: 10…11, the pixel centers within 1 of
        // 10.5, the tie at 9.5 / 11.5 going left); at w = 50, ⌈0.12⌉ → 1 px.
        r.adaptiveSizeScale = 6
        for (z, expected) in [(Float(2), square(10...12, 8...10)), (Float(4), square(10...11, 8...9)), (Float(50), square(11...11, 9...9))] {
            let l = CPUPointList(count: 1) { _ in (self.k.unproject(u: 10, v: 8, depth: z), self.red) }
            let out = try r.render(points: l, viewProjection: projection(), width: k.width, height: k.height)
            XCTAssertEqual(covered(out), expected, "z \(z)")
            XCTAssertEqual(out.rgba(x: 10, y: 8).3, 255, "alpha back to 255")
        }
        // Clamped to the point size: scale 600 at w = 2 would be 300 px (size 3 is odd: ⌊f⌋ landing, (10, 8)).
        r.pointSize = 3; r.adaptiveSizeScale = 600
        let l = CPUPointList(count: 1) { _ in (self.k.unproject(u: 10, v: 8, depth: 2), self.red) }
        XCTAssertEqual(covered(try r.render(points: l, viewProjection: projection(), width: k.width, height: k.height)), square(9...11, 7...9))
        // Off: the point size for every point.
        r.adaptiveSizeScale = 0; r.pointSize = 1
        XCTAssertEqual(covered(try r.render(points: l, viewProjection: projection(), width: k.width, height: k.height)), ["10,8"])
    }

    func testANearPointsSquareHidesAFarOnesOnlyWhereItReaches() throws {
        // Near point (w 2, 3 px) from (10, 8) lands on (11, 9) and covers 10…12 × 8…10; the far point
        // (w 4, ⌈1.5⌉ = 2 px) from (12, 9) lands on (13, 10) and reaches 12…13 × 9…10: the near square
        // hides the far one's (12, 9) and (12, 10); the far one shows at 13 × 9…10, its own pixel included.
        let r = CPUPointRenderer()
        r.pointSize = 8; r.adaptiveSizeScale = 6
        let blue: UInt32 = 0xFFFF_0000
        let l = CPUPointList(count: 2) { i in
            i == 0 ? (self.k.unproject(u: 10, v: 8, depth: 2), self.red) : (self.k.unproject(u: 12, v: 9, depth: 4), blue)
        }
        let out = try r.render(points: l, viewProjection: projection(), width: k.width, height: k.height)
        XCTAssertEqual(covered(out), square(10...12, 8...10).union(square(12...13, 9...10)))
        XCTAssertEqual(out.rgba(x: 12, y: 9).0, 255, "near red over the far point's square")
        XCTAssertEqual(out.rgba(x: 13, y: 9).2, 255, "far blue where red does not reach")
        XCTAssertEqual(out.rgba(x: 13, y: 10).2, 255)
    }

    func testSpacingOfAGridIsItsPitch() {
        var pts: [SIMD3<Float>] = []
        for v in 0..<200 { for u in 0..<200 { pts.append(SIMD3(Float(u) * 0.01, Float(v) * 0.01, 2)) } }
        // 40,000 points, 16,384 sampled: the subset's spacing ≈ 0.01·√(40000/16384), scaled back.
        XCTAssertEqual(AdaptivePointSize.spacing(of: pts), 0.01, accuracy: 0.004)
        let small = (0..<100).map { SIMD3<Float>(Float($0) * 0.05, 0, 1) }
        XCTAssertEqual(AdaptivePointSize.spacing(of: small), 0.05, accuracy: 1e-6)
        XCTAssertEqual(AdaptivePointSize.spacing(of: [SIMD3<Float>(0, 0, 1)]), 0)
        XCTAssertEqual(AdaptivePointSize.scale(outputFocal: 600, depthFocal: 300), 2)
        XCTAssertEqual(AdaptivePointSize.scale(outputFocal: 500, spacing: 0.01), 5)
    }
}
