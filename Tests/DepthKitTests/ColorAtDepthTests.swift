import XCTest
@testable import DepthKit

final class ColorAtDepthTests: XCTestCase {
    /// Each depth pixel's color is the one its point projects to: the same rule as the colored
    /// point cloud of a calibrated pair, on a D435-like calibration (different intrinsics, a
    /// 15 mm baseline, a small rotation), and hand-checked for one pixel.
    func testMatchesTheCalibratedPointCloudAndAHandComputedPixel() {
        let dw = 64, dh = 48, cw = 96, ch = 72
        let depth = PixelBuffer(width: dw, height: dh, format: .depthFloat32)
        for v in 0..<dh { for u in 0..<dw { depth.row(v, as: Float.self)[u] = (u + v) % 7 == 0 ? 0 : 0.8 + Float((u * 7 + v * 3) % 50) / 100 } }
        let color = PixelBuffer(width: cw, height: ch, format: .rgba8)
        for y in 0..<ch { for x in 0..<cw { color.setRGBA(x: x, y: y, (UInt8(x), UInt8(y), UInt8((x * y) % 256), 255)) } }
        let c = 0.01745 as Float   // 1° about y
        let calibration = RGBDCalibration(
            depth: CameraModel(intrinsics: CameraIntrinsics(fx: 39, fy: 39, cx: 33.1, cy: 24.2, width: dw, height: dh)),
            color: CameraModel(intrinsics: CameraIntrinsics(fx: 91.9, fy: 92.0, cx: 47.9, cy: 35.8, width: cw, height: ch)),
            depthToColor: RigidTransform(rotation: [cos(c), 0, sin(c), 0, 1, 0, -sin(c), 0, cos(c)], translation: SIMD3(0.015, 0.0006, 0.0006)),
            origin: "test")
        let d = DepthData(map: depth, intrinsics: calibration.depth.intrinsics)
        let out = ColorAtDepth().render(depth: d, color: color, calibration: calibration)
        let cloud = PointCloud.unproject(depth: d, color: color, calibration: calibration)
        var i = 0, outside = 0
        for v in 0..<dh {
            for u in 0..<dw {
                let px = out.rgba(x: u, y: v)
                guard isValidDepth(depth.row(v, as: Float.self)[u]) else { XCTAssertEqual(px.3, 0); continue }
                let expected = cloud.colors[i]
                XCTAssertEqual(SIMD3(px.0, px.1, px.2), expected, "(\(u), \(v))")
                if px.3 == 0 { outside += 1 }
                i += 1
            }
        }
        XCTAssertEqual(i, cloud.count)
        XCTAssertGreaterThan(outside, 0, "the depth camera sees more than the color camera here")
        // Pixel (40, 20) by hand: z = 0.8 + ((280 + 60) % 50)/100 = 1.2.
        let z: Float = 1.2
        let p = SIMD3((40 - 33.1) / 39 * z, (20 - 24.2) / 39 * z, z)
        let q = calibration.depthToColor.apply(p)
        let x = Int((q.x * 91.9 / q.z + 47.9 + 0.5).rounded(.down)), y = Int((q.y * 92.0 / q.z + 35.8 + 0.5).rounded(.down))
        XCTAssertEqual(out.rgba(x: 40, y: 20).0, UInt8(x))
        XCTAssertEqual(out.rgba(x: 40, y: 20).1, UInt8(y))
    }
}
