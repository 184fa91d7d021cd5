import XCTest
import Foundation
@testable import GPUKit
import DepthKit

/// GPUDepthAligner against DepthAligner (CPU): identical bits, on random depth with holes,
/// invalid values and occluding planes, for D435-like calibrations and random ones.
final class DepthAlignmentAgreementTests: GPUTestCase {
    private struct Rng {
        var s: UInt64
        mutating func next() -> UInt64 {
            s &+= 0x9E37_79B9_7F4A_7C15
            var z = s
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        mutating func float(_ lo: Float, _ hi: Float) -> Float { lo + (hi - lo) * Float(next() >> 40) / Float(1 << 24) }
    }

    /// Depth 0.2–8 m, a near plane and a slanted one, 1/16 holes, a few NaN/∞/negative pixels.
    private func depth(_ g: inout Rng, _ w: Int, _ h: Int) -> PixelBuffer {
        let b = PixelBuffer(width: w, height: h, format: .depthFloat32)
        for y in 0..<h {
            let r = b.row(y, as: Float.self)
            for x in 0..<w {
                switch g.next() % 64 {
                case 0..<4: r[x] = 0
                case 4: r[x] = [Float.nan, .infinity, -1, -.infinity][Int(g.next() % 4)]
                default:
                    if x > w / 4, x < w / 2, y > h / 3 { r[x] = 0.6 + Float(x % 7) * 1e-3 }
                    else if x > 2 * w / 3 { r[x] = 1.5 + Float(y) * 0.004 }
                    else { r[x] = g.float(0.2, 8) }
                }
            }
        }
        return b
    }

    private func compare(_ cal: RGBDCalibration, depth: PixelBuffer, _ label: String,
                         file: StaticString = #filePath, line: UInt = #line) throws {
        let cpu = try DepthAligner().align(depth: depth, calibration: cal)
        let gpu = try GPUDepthAligner(context: context).align(depth: depth, calibration: cal)
        XCTAssertEqual(gpu.width, cpu.width, file: file, line: line)
        XCTAssertEqual(gpu.height, cpu.height, file: file, line: line)
        var differ = 0, written = 0
        for y in 0..<cpu.height {
            let a = cpu.row(y, as: UInt32.self), b = gpu.row(y, as: UInt32.self)
            for x in 0..<cpu.width {
                if a[x] != b[x] { differ += 1 }
                if a[x] != 0 { written += 1 }
            }
        }
        XCTAssertEqual(differ, 0, "\(label): pixels that differ", file: file, line: line)
        XCTAssertGreaterThan(written, cpu.width * cpu.height / 3, "\(label): the case should fill much of the image", file: file, line: line)
    }

    /// The D435-like calibration: 848×480 depth into 1280×720 color, and 640×480 depth into it.
    func testD435LikeAgreesExactly() throws {
        var g = Rng(s: 1)
        try compare(.d435Like(), depth: depth(&g, 848, 480), "848x480 → 1280x720")
        try compare(.d435Like(depthWidth: 640, depthHeight: 480), depth: depth(&g, 640, 480), "640x480 → 1280x720")
        // Depth finer than color: librealsense projects the top-left corner only.
        let fine = RGBDCalibration.d435Like(colorWidth: 424, colorHeight: 240)
        XCTAssertFalse(DepthAligner.usesBothCorners(depth: fine.depth.intrinsics, color: fine.color.intrinsics))
        try compare(fine, depth: depth(&g, 848, 480), "848x480 → 424x240")
        // One of librealsense's two special cases: both corners although depth is finer.
        let special = RGBDCalibration.d435Like(depthWidth: 640, depthHeight: 480, colorWidth: 640, colorHeight: 360)
        XCTAssertTrue(DepthAligner.usesBothCorners(depth: special.depth.intrinsics, color: special.color.intrinsics))
        try compare(special, depth: depth(&g, 640, 480), "640x480 → 640x360")
    }

    /// The calibration of librealsense's D435 test recording (depth fx 390 at 640×480, color fx
    /// 613 at 640×480, 14 mm baseline, 0.8° rotation), with intrinsics as the bag stores them.
    func testRecordedD435CalibrationAgreesExactly() throws {
        var g = Rng(s: 2)
        var cal = RGBDCalibration.d435Like(depthWidth: 640, depthHeight: 480, colorWidth: 640, colorHeight: 480)
        cal.depth.intrinsics = CameraIntrinsics(fx: 390.43145751953125, fy: 390.43145751953125, cx: 331.38787841796875,
                                                cy: 242.18734741210938, width: 640, height: 480)
        cal.color.intrinsics = CameraIntrinsics(fx: 613.2036743164062, fy: 613.4193115234375, cx: 319.9388427734375,
                                                cy: 239.18299865722656, width: 640, height: 480)
        try compare(cal, depth: depth(&g, 640, 480), "recorded D435")
    }

    /// Random intrinsics, rotations (up to ~6°) and baselines (up to 8 cm), odd sizes.
    func testRandomCalibrationsAgreeExactly() throws {
        var g = Rng(s: 3)
        for (ds, cs) in [((61, 47), (90, 50)), ((128, 96), (200, 150)), ((211, 117), (160, 120))] {
            for _ in 0..<3 {
                func cam(_ w: Int, _ h: Int) -> CameraIntrinsics {
                    let f = Float(w) * g.float(0.5, 0.9)
                    return CameraIntrinsics(fx: f, fy: f * g.float(0.97, 1.03), cx: Float(w) / 2 + g.float(-5, 5),
                                            cy: Float(h) / 2 + g.float(-5, 5), width: w, height: h)
                }
                let a = g.float(-0.1, 0.1), b = g.float(-0.1, 0.1)
                // R = Rz(a)·Rx(b), row-major.
                let rot: [Float] = [cos(a), -sin(a) * cos(b), sin(a) * sin(b),
                                    sin(a), cos(a) * cos(b), -cos(a) * sin(b),
                                    0, sin(b), cos(b)]
                let cal = RGBDCalibration(depth: CameraModel(intrinsics: cam(ds.0, ds.1)), color: CameraModel(intrinsics: cam(cs.0, cs.1)),
                                          depthToColor: RigidTransform(rotation: rot, translation: SIMD3(g.float(-0.08, 0.08), g.float(-0.01, 0.01), g.float(-0.01, 0.01))),
                                          origin: "random")
                try compare(cal, depth: depth(&g, ds.0, ds.1), "\(ds) → \(cs)")
            }
        }
    }

    /// A reused aligner gives the same result frame after frame (the fill clears the last one).
    func testReuseClearsThePreviousFrame() throws {
        var g = Rng(s: 4)
        let cal = RGBDCalibration.d435Like(depthWidth: 212, depthHeight: 120, colorWidth: 320, colorHeight: 180)
        let gpu = try GPUDepthAligner(context: context)
        let first = depth(&g, 212, 120)
        _ = try gpu.align(depth: first, calibration: cal)
        let empty = PixelBuffer(width: 212, height: 120, format: .depthFloat32)
        empty.row(60, as: Float.self)[100] = 2
        let out = try gpu.align(depth: empty, calibration: cal)
        let cpu = try DepthAligner().align(depth: empty, calibration: cal)
        var nonzero = 0
        for y in 0..<180 {
            for x in 0..<320 {
                XCTAssertEqual(out.row(y, as: UInt32.self)[x], cpu.row(y, as: UInt32.self)[x])
                if out.row(y, as: Float.self)[x] != 0 { nonzero += 1 }
            }
        }
        XCTAssertGreaterThan(nonzero, 0)
        XCTAssertLessThanOrEqual(nonzero, 9)
    }
}
