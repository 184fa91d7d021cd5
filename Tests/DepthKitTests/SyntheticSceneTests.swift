import XCTest
@testable import DepthKit

final class SyntheticSceneTests: XCTestCase {
    let w = 320, h = 240

    func testStillFrameHasKnownDepthsAndColors() {
        let f = SyntheticScene().render(width: w, height: h, time: 0)
        XCTAssertEqual(f.color.format, .rgba8)
        XCTAssertEqual(f.depth.map.format, .depthFloat32)
        XCTAssertEqual(f.depth.intrinsics, SyntheticScene.intrinsics(width: w, height: h))
        XCTAssertEqual(f.depth.intrinsics, .default(width: w, height: h))
        let d = f.depth.map
        // Wall in the top-left corner.
        XCTAssertEqual(d.sample(x: 4, y: 4), SyntheticScene.wallDepth)
        // Box interior (3 px in from its edges) is exactly at 1 m and red.
        let box = SyntheticScene.boxRect.pixels(width: w, height: h)
        for y in (box.y.lowerBound + 3)..<(box.y.upperBound - 3) {
            for x in (box.x.lowerBound + 3)..<(box.x.upperBound - 3) {
                XCTAssertEqual(d.sample(x: x, y: y), SyntheticScene.boxDepth)
            }
        }
        let mid = (box.x.lowerBound + box.x.upperBound) / 2, midY = (box.y.lowerBound + box.y.upperBound) / 2
        let c = f.color.rgba(x: mid, y: midY)
        XCTAssertTrue(c == (220, 50, 40, 255), "\(c)")
        // Disc center at 2 m, blue.
        let dx = Int(SyntheticScene.discCenter.x * Float(w)), dy = Int(SyntheticScene.discCenter.y * Float(h))
        XCTAssertEqual(d.sample(x: dx, y: dy), SyntheticScene.discDepth)
        XCTAssertTrue(f.color.rgba(x: dx, y: dy) == (40, 90, 230, 255))
        // Sphere: the ray through its center hits at z = C.z·(1 − R/|C|).
        let k = f.depth.intrinsics, C = SyntheticScene.sphereCenter
        let p = k.project(C)
        let len = (C * C).sum().squareRoot()
        XCTAssertEqual(d.sample(x: Int(p.x.rounded()), y: Int(p.y.rounded())),
                       C.z * (1 - SyntheticScene.sphereRadius / len), accuracy: 0.01)
        let s = f.color.rgba(x: Int(p.x.rounded()), y: Int(p.y.rounded()))
        XCTAssertTrue(s.1 > s.0 && s.1 > s.2, "sphere is green: \(s)")
    }

    func testInvalidBandOnTheFarSideOfDepthEdges() {
        let d = SyntheticScene().render(width: w, height: h).depth.map
        let box = SyntheticScene.boxRect.pixels(width: w, height: h)
        let y = (box.y.lowerBound + box.y.upperBound) / 2
        let x0 = box.x.lowerBound
        XCTAssertEqual(d.sample(x: x0, y: y), 1, "near side stays valid")
        XCTAssertEqual(d.sample(x: x0 - 1, y: y), 0, "far side of the jump is a hole")
        XCTAssertEqual(d.sample(x: x0 - 2, y: y), 0, "2 px band horizontally")
        XCTAssertEqual(d.sample(x: x0 - 3, y: y), SyntheticScene.wallDepth)
        XCTAssertEqual(d.sample(x: (x0 + box.x.upperBound) / 2, y: box.y.lowerBound - 1), 0, "1 px band vertically")
        XCTAssertEqual(d.sample(x: (x0 + box.x.upperBound) / 2, y: box.y.lowerBound - 2), SyntheticScene.wallDepth)
        var holes = 0
        for y in 0..<h { for x in 0..<w where d.sample(x: x, y: y) == 0 { holes += 1 } }
        XCTAssertGreaterThan(holes, 0)
        XCTAssertLessThan(holes, w * h / 20, "holes are thin bands only")
        let stats = DepthData(map: d).depthStatistics()
        XCTAssertEqual(stats.max, SyntheticScene.wallDepth)
        XCTAssertEqual(stats.min, SyntheticScene.boxDepth)
    }

    func testObjectsMoveWithTime() {
        let scene = SyntheticScene()
        let a = scene.render(width: 64, height: 48, time: 0), b = scene.render(width: 64, height: 48, time: 1.5)
        XCTAssertNotEqual(a.depth.map.packedBytes(), b.depth.map.packedBytes())
        XCTAssertEqual(b.timestamp, 1.5)
        let again = scene.render(width: 64, height: 48, time: 0)
        XCTAssertEqual(a.color.packedBytes(), again.color.packedBytes(), "rendering is deterministic")
        XCTAssertNotEqual(SyntheticScene.pose(at: 2).sphereCenter, SyntheticScene.sphereCenter)
    }

    func testOddAndTinySizes() {
        for (w, h) in [(1, 1), (3, 7), (33, 17)] {
            let f = SyntheticScene().render(width: w, height: h, time: 0.3)
            XCTAssertEqual(f.color.width, w); XCTAssertEqual(f.depth.map.height, h)
        }
    }
}
