import XCTest
import TestSupport
@testable import GPUKit
import DepthKit

/// GPUPlaneMoments (depthPlaneMoments.comp) against DepthKit's CPUPlaneMoments: counts equal,
/// centroid and second moments within float rounding, and the depth-quality metrics computed from
/// either agree (the plane, RMS and the rest within 1e-5 relative).
final class PlaneMomentsAgreementTests: GPUTestCase {
    /// A tilted plane with a step and noise, dropouts, NaN and negative samples.
    private func depth(_ w: Int, _ h: Int, seed: UInt64) -> PixelBuffer {
        var rng = SeededRandom(seed: seed)
        let b = PixelBuffer(width: w, height: h, format: .depthFloat32)
        for y in 0..<h {
            let row = b.row(y, as: Float.self)
            for x in 0..<w {
                var d = 1.2 + 0.0015 * Float(x) - 0.0008 * Float(y) + Float.random(in: -0.004...0.004, using: &rng)
                if x > w / 2 && y > h / 2 { d += 0.1 }
                switch UInt8.random(in: 0..<40, using: &rng) {
                case 0: d = 0
                case 1: d = .nan
                case 2: d = -1
                default: break
                }
                row[x] = d
            }
        }
        return b
    }

    func testMomentsAgreeWithCPU() throws {
        let gpu = try GPUPlaneMoments(context: context)
        let cpu = CPUPlaneMoments()
        let k = CameraIntrinsics(fx: 380, fy: 381, cx: 160.3, cy: 118.7, width: 320, height: 240)
        let rois = [QualityROI.centered(fraction: 0.4, width: 320, height: 240), QualityROI(x: 0, y: 0, width: 320, height: 240),
                    QualityROI(x: 3, y: 5, width: 67, height: 33), QualityROI(x: 319, y: 239, width: 1, height: 1)]
        for (i, roi) in rois.enumerated() {
            let d = depth(320, 240, seed: UInt64(i))
            let a = try cpu.moments(depth: d, intrinsics: k, roi: roi)
            let b = try gpu.moments(depth: d, intrinsics: k, roi: roi)
            XCTAssertEqual(a.count, b.count, "ROI \(roi)")
            for j in 0..<3 { XCTAssertEqual(a.centroid[j], b.centroid[j], accuracy: 2e-6 * max(1, abs(a.centroid[j])), "ROI \(roi) centroid \(j)") }
            let scale = max(a.xx + a.yy + a.zz, 1e-12)
            for (x, y) in [(a.xx, b.xx), (a.xy, b.xy), (a.xz, b.xz), (a.yy, b.yy), (a.yz, b.yz), (a.zz, b.zz)] {
                XCTAssertEqual(x, y, accuracy: 1e-5 * scale, "ROI \(roi)")
            }
            guard roi.area > 100 else { continue }
            let s = QualitySettings(intrinsics: k, roi: roi, baselineMeters: 0.05, groundTruthMM: 1300)
            let ma = try DepthQuality.analyze(depth: d, settings: s, backend: cpu)
            let mb = try DepthQuality.analyze(depth: d, settings: s, backend: gpu)
            XCTAssertEqual(ma.validPixels, mb.validPixels)
            XCTAssertEqual(ma.distanceMM ?? 0, mb.distanceMM ?? 1, accuracy: 1e-3, "ROI \(roi)")
            XCTAssertEqual(ma.angleDeg ?? 0, mb.angleDeg ?? 1, accuracy: 1e-4, "ROI \(roi)")
            XCTAssertEqual(ma.planeRMSMM ?? 0, mb.planeRMSMM ?? 1, accuracy: 1e-5 * (ma.planeRMSMM ?? 0), "ROI \(roi)")
            XCTAssertEqual(ma.subpixelRMS ?? 0, mb.subpixelRMS ?? 1, accuracy: 1e-5 * (ma.subpixelRMS ?? 0), "ROI \(roi)")
            XCTAssertEqual(ma.zAccuracyPercent ?? 0, mb.zAccuracyPercent ?? 1, accuracy: 1e-4, "ROI \(roi)")
        }
    }

    func testEmptyROIHasNoPoints() throws {
        let gpu = try GPUPlaneMoments(context: context)
        let b = PixelBuffer(width: 70, height: 40, format: .depthFloat32)
        let m = try gpu.moments(depth: b, intrinsics: .default(width: 70, height: 40), roi: QualityROI(x: 0, y: 0, width: 70, height: 40))
        XCTAssertEqual(m.count, 0)
    }
}
