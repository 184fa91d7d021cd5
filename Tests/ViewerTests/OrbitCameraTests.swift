import TestSupport
import GPUKit
import XCTest
@testable import Viewer

final class OrbitCameraTests: XCTestCase {
    let center = SIMD3<Float>(0.1, -0.2, 2.0)

    func near(_ a: SIMD3<Float>, _ b: SIMD3<Float>, _ eps: Float = 1e-4) -> Bool {
        ((a - b) * (a - b)).sum().squareRoot() < eps
    }

    func testInitialPoseIsTheDepthCamera() {
        let cam = OrbitCamera(center: [0, 0, 2])
        XCTAssertTrue(near(cam.eye, .zero))
        // A point on the optical axis stays on it in view space.
        let p = cam.viewMatrix * SIMD4<Float>(0, 0, 2, 1)
        XCTAssertTrue(near(SIMD3(p.x, p.y, p.z), [0, 0, 2]))
    }

    func testOrbitKeepsTheDistanceToTheCenter() {
        var cam = OrbitCamera(center: center, distance: 1.5)
        for i in 0..<50 {
            cam.orbit(yaw: 0.13 * Float(i % 7), pitch: i % 2 == 0 ? 0.21 : -0.17)
            XCTAssertEqual(simd_length(cam.eye - cam.center), 1.5, accuracy: 1e-4)
        }
        XCTAssertFalse(near(cam.eye, OrbitCamera(center: center, distance: 1.5).eye), "orbit moved the eye")
    }

    func testOrbitPitchIsClampedSoTheViewNeverFlips() {
        var cam = OrbitCamera(center: center)
        cam.orbit(yaw: 0, pitch: 10)
        XCTAssertLessThan(cam.pose.pitch, .pi / 2)
    }

    func testZoomNeverCrossesTheCenter() {
        var cam = OrbitCamera(center: center, distance: 1)
        for _ in 0..<1000 { cam.zoom(by: 0.5) }
        XCTAssertGreaterThan(cam.distance, 0)
        XCTAssertGreaterThanOrEqual(cam.distance, cam.minimumDistance)
        // The eye is still in front of the center, on the same side as before.
        XCTAssertLessThan(cam.eye.z, cam.center.z)
        cam.zoom(by: 0)     // ignored
        cam.zoom(by: -3)    // ignored
        cam.zoom(by: .nan)  // ignored
        XCTAssertGreaterThan(cam.distance, 0)
    }

    func testZoomTowardAPointKeepsItOnScreen() {
        var cam = OrbitCamera(center: [0, 0, 2])
        var plain = cam
        let p = SIMD3<Float>(0.5, 0.25, 2)
        func screen(_ c: OrbitCamera) -> SIMD2<Float> {
            let v = c.viewMatrix * SIMD4(p, 1)
            return SIMD2(v.x / v.z, v.y / v.z)
        }
        let before = screen(cam)
        cam.zoom(by: 0.5, toward: p)
        let after = screen(cam)
        plain.zoom(by: 0.5)
        XCTAssertEqual(screen(plain).x, 2 * before.x, accuracy: 1e-4)
        // Without `toward` the point would move out by 1/0.5; with it, its screen position is unchanged.
        XCTAssertEqual(after.x, before.x, accuracy: 1e-4)
        XCTAssertEqual(after.y, before.y, accuracy: 1e-4)
    }

    func testResetIsExact() {
        var cam = OrbitCamera(center: center, distance: 2.5, yaw: 0.1, pitch: 0.2, roll: 0.3)
        let first = cam
        cam.orbit(yaw: 1.234, pitch: -0.5)
        cam.zoom(by: 0.37, toward: [1, 1, 3])
        cam.roll(by: 2)
        cam.pan(dx: 0.3, dy: -0.7)
        XCTAssertNotEqual(cam, first)
        cam.reset()
        XCTAssertEqual(cam, first)
        XCTAssertEqual(cam.viewMatrix, first.viewMatrix)
    }

    func testRollTurnsAboutTheViewAxis() {
        var cam = OrbitCamera(center: [0, 0, 2])
        cam.roll(by: .pi / 2)
        XCTAssertTrue(near(cam.eye, .zero), "roll does not move the eye")
        let v = cam.viewMatrix * SIMD4<Float>(1, 0, 2, 1)
        XCTAssertTrue(near(SIMD3(v.x, v.y, v.z), [0, -1, 2]), "x axis turns to −y in view: \(v)")
    }

    func testPanMovesCenterInViewPlane() {
        var cam = OrbitCamera(center: [0, 0, 2])
        cam.pan(pixels: 100, 0, focalPixels: 500)
        XCTAssertEqual(cam.center.x, -0.4, accuracy: 1e-5) // drag right → scene follows the mouse
        XCTAssertEqual(cam.center.z, 2, accuracy: 1e-6)
        XCTAssertEqual(cam.distance, 2, accuracy: 1e-6)
    }

    func testProjectionMapsPixelCentersLikeTheIntrinsics() {
        let m = Matrix4.projection(fx: 500, fy: 500, cx: 319.5, cy: 239.5, width: 640, height: 480, near: 0.1, far: 10)
        // A point that projects to pixel (100, 50) with the intrinsics…
        let z: Float = 2
        let p = SIMD4<Float>((100 - 319.5) * z / 500, (50 - 239.5) * z / 500, z, 1)
        let c = m * p
        let u = (c.x / c.w + 1) / 2 * 640 - 0.5, v = (c.y / c.w + 1) / 2 * 480 - 0.5
        XCTAssertEqual(u, 100, accuracy: 1e-3)
        XCTAssertEqual(v, 50, accuracy: 1e-3)
        let zn = c.z / c.w
        XCTAssertTrue(zn > 0 && zn < 1)
    }
}
