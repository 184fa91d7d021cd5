import TestSupport
import CDepthKit
import DepthKit
import GPUKit
@testable import Viewer
import XCTest

/// The 3D overlay's lines: their text, and no allocation while only the camera and the points drawn
/// change (a moving view of a point list redraws them every frame).
final class Scene3DOverlayTests: XCTestCase {
    private func scene() throws -> Scene3D {
        let context = try GPUContext()
        let cache = try TextureCache(context: context)
        let s = Scene3D(renderer: try PointCloudRenderer(context: context, cache: cache, library: ShaderLibrary.shared()))
        let positions = (0..<1500).map { SIMD3<Float>(Float($0 % 50) * 0.01, Float($0 / 50) * 0.01, 1) }
        try s.setPointList(PLYContents(cloud: PointCloud(positions: positions, colors: Array(repeating: SIMD3<UInt8>(200, 200, 200), count: positions.count)), hasColor: false, nonFiniteSkipped: 0))
        return s
    }

    func testLinesSayTheCameraThePathAndThePointsDrawn() throws {
        let s = try scene()
        s.input.camera = OrbitCamera(center: SIMD3(0, 0, 1), distance: 1.5, yaw: .pi / 6, pitch: -.pi / 12)
        s.pointList?.drawn = 750
        let lines = s.overlayLines
        XCTAssertEqual(lines.count, 3, "\(lines)")
        XCTAssertEqual(lines.first, "distance 1.50 m, yaw 30 deg, pitch -15 deg, roll 0 deg, points \(Int(s.renderer.pointSize)) px")
        XCTAssertEqual(lines.last, "drawing 750 of 1,500 points (moving)")
        s.input.camera = nil
        XCTAssertEqual(s.overlayLines, [])
    }

    func testAMovingViewAllocatesNothing() throws {
        let s = try scene()
        var camera = OrbitCamera(center: SIMD3(0, 0, 1), distance: 2)
        s.input.camera = camera
        var length = 0
        func frame(_ i: Int) {
            camera.orbit(yaw: 0.03, pitch: 0.01)
            s.input.camera = camera
            s.pointList?.drawn = 1000 + i
            s.withOverlayLines { length += strlen($0) }
        }
        for i in 0..<3 { frame(i) }
        let allocations = AllocationCounter.ownAllocations(running: 100, frame)
        XCTAssertEqual(allocations, 0, "allocations in 100 moving frames")
        XCTAssertGreaterThan(length, 103 * 100)
    }
}
