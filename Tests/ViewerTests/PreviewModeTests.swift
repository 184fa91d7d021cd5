import TestSupport
import XCTest
import DepthKit
@testable import Viewer

final class PreviewModeTests: XCTestCase {
    func testModesHaveUniqueNamesAndNumberKeys() {
        let names = PreviewMode.all.map(\.name)
        XCTAssertEqual(Set(names).count, names.count)
        XCTAssertEqual(PreviewMode.all.first?.numberKey, 1)
        XCTAssertEqual(try PreviewMode.named("JET").stage, .colormap)
        XCTAssertThrowsError(try PreviewMode.named("sepia")) { e in
            XCTAssertTrue("\(e)".contains("unknown mode 'sepia'"))
        }
    }

    func testDepthReadoutFormatsMillimetersBelowOneMeter() throws {
        XCTAssertEqual(DepthReadout.format(0.734), "734 mm")
        XCTAssertEqual(DepthReadout.format(1.2344), "1.234 m")
        let map = PixelBuffer(width: 4, height: 2, format: .depthFloat32)
        map.setSample(x: 3, y: 1, 2.0)
        let k = CameraIntrinsics(fx: 2, fy: 2, cx: 1, cy: 0, width: 4, height: 2)
        let r = try XCTUnwrap(DepthReadout(depth: DepthData(map: map, intrinsics: k), x: 3, y: 1))
        XCTAssertEqual(r.depth, 2)
        XCTAssertEqual(r.position, SIMD3<Float>(2, 1, 2))
        let none = try XCTUnwrap(DepthReadout(depth: DepthData(map: map, intrinsics: k), x: 0, y: 0))
        XCTAssertNil(none.depth)
        XCTAssertTrue(none.text.contains("no depth"))
        XCTAssertNil(DepthReadout(depth: DepthData(map: map), x: 4, y: 0))
    }
}
