import Capture
import DepthKit
import Foundation
import GPUKit
import TestSupport
import XCTest
@testable import Viewer

/// Issue 26, the viewer's parts for phone photos and scans: relative depth said in the readouts,
/// a photo's portrait matte as the mask of the depth-mask and portrait modes (against the matte
/// Pillow decodes from the file), and the 3D view's world coordinates, camera path and
/// accumulated cloud (against the scan's poses and `export-ply --fuse`'s `CloudFuser`).
final class PhoneViewTests: XCTestCase {
    private var folder: TemporaryFolder!

    override func setUp() { folder = TemporaryFolder("phone-view-tests") }
    override func tearDown() { folder = nil }

    private func raw(_ path: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))) }

    // MARK: Relative depth

    /// A portrait photo's relative depth: the readout says its numbers are not meters; metric
    /// depth's readout does not.
    func testRelativeDepthReadoutSaysSo() throws {
        let map = PixelBuffer(width: 4, height: 2, format: .depthFloat32)
        map.setSample(x: 1, y: 1, 0.5)
        let k = CameraIntrinsics(fx: 2, fy: 2, cx: 1, cy: 0, width: 4, height: 2)
        let relative = try XCTUnwrap(DepthReadout(depth: DepthData(map: map, accuracy: .relative, intrinsics: k), x: 1, y: 1))
        XCTAssertEqual(relative.text, "(1, 1)  500 mm  x 0.000 y 0.250 z 0.500 m  (relative depth, not meters)")
        let metric = try XCTUnwrap(DepthReadout(depth: DepthData(map: map, accuracy: .absolute, intrinsics: k), x: 1, y: 1))
        XCTAssertEqual(metric.text, "(1, 1)  500 mm  x 0.000 y 0.250 z 0.500 m")
        let none = try XCTUnwrap(DepthReadout(depth: DepthData(map: map, accuracy: .relative, intrinsics: k), x: 0, y: 0))
        XCTAssertEqual(none.text, "(0, 0)  no depth")
    }

}
