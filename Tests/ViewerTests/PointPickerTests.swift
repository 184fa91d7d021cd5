import TestSupport
import GPUKit
@testable import Viewer
import XCTest

/// Picking on a point list: points projected by hand with the pinhole formulas (u = fx·x/z + cx,
/// v = fy·y/z + cy) are picked at their pixel, the nearer of two on one pixel wins, nothing is
/// picked beyond 8 px, and the distance between two picks is the hand-computed one.
final class PointPickerTests: XCTestCase {
    let fx: Float = 500, fy: Float = 500, cx: Float = 319.5, cy: Float = 239.5
    lazy var vp = Matrix4.projection(fx: fx, fy: fy, cx: cx, cy: cy, width: 640, height: 480, near: 0.1, far: 100)
    let p0 = SIMD3<Float>(0.1, -0.05, 2)     // pixel (344.5, 227)
    let p1 = SIMD3<Float>(-0.2, 0.1, 3)      // pixel (286.1667, 256.1667)
    let p2 = SIMD3<Float>(0.2, -0.1, 4)      // behind p0, on its pixel

    func pick(_ x: Double, _ y: Double, _ points: [SIMD3<Float>]? = nil) -> SIMD3<Float>? {
        PointPicker.nearest(points ?? [p2, p1, p0], viewProjection: vp, width: 640, height: 480, x: x, y: y)
    }

    func testPicksThePointUnderTheCursorAndTheNearerOnATie() {
        XCTAssertEqual(pick(344.5, 227), p0, "p0 and p2 land on one pixel: the nearer to the eye")
        XCTAssertEqual(pick(344.5, 227, [p2]), p2)
        XCTAssertEqual(pick(287, 255), p1, "within a pixel or two")
        XCTAssertEqual(pick(344.5 + 7, 227), p0, "7 px away")
        XCTAssertNil(pick(344.5 + 9, 227), "9 px away: nothing")
        XCTAssertNil(pick(100, 100))
        XCTAssertNil(pick(344.5, 227, []))
        XCTAssertNil(pick(319.5, 239.5, [SIMD3(0, 0, -1)]), "behind the eye")
    }

    func testDistanceBetweenTwoPicks() throws {
        let a = try XCTUnwrap(pick(344.5, 227)), b = try XCTUnwrap(pick(286, 256))
        let d = ((a - b) * (a - b)).sum().squareRoot()
        // (0.3, -0.15, -1): √(0.09 + 0.0225 + 1) = √1.1125
        XCTAssertEqual(d, 1.0547512, accuracy: 1e-6)
    }
}
