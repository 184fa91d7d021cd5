import XCTest
import Foundation
import TestSupport
@testable import DepthKit

/// A tilted plane seen by a pinhole camera, with Gaussian noise in z, dropouts and a few NaNs:
/// the Depth Quality Tool's target with known answers.
struct TiltedPlaneScene {
    var width = 320, height = 240
    var intrinsics = CameraIntrinsics(fx: 300, fy: 300, cx: 159.5, cy: 119.5, width: 320, height: 240)
    /// Unit normal (pointing away from the camera) and the plane's point on the optical axis.
    var normal = SIMD3<Double>(0.3, -0.2, 1) / (SIMD3<Double>(0.3, -0.2, 1) * SIMD3<Double>(0.3, -0.2, 1)).sum().squareRoot()
    var axisDepth = 1.5
    var sigmaZ = 0.003
    var dropout = 0.1

    /// The camera's distance from the plane, mm.
    var distanceMM: Double { axisDepth * normal.z * 1000 }
    var angleDeg: Double { acos(normal.z) * 180 / .pi }

    func frame(seed: UInt64) -> PixelBuffer {
        var rng = SeededRandom(seed: seed)
        let b = PixelBuffer(width: width, height: height, format: .depthFloat32)
        let k = intrinsics
        for v in 0..<height {
            let row = b.row(v, as: Float.self)
            for u in 0..<width {
                let ray = SIMD3<Double>((Double(u) - Double(k.cx)) / Double(k.fx), (Double(v) - Double(k.cy)) / Double(k.fy), 1)
                let z = axisDepth * normal.z / (normal * ray).sum()
                // Box–Muller.
                let u1 = Double.random(in: Double.ulpOfOne..<1, using: &rng), u2 = Double.random(in: 0..<1, using: &rng)
                let g = (-2 * log(u1)).squareRoot() * cos(2 * .pi * u2)
                let drop = Double.random(in: 0..<1, using: &rng) < dropout
                row[u] = drop ? 0 : Float(z + sigmaZ * g)
            }
        }
        b.row(3, as: Float.self)[5] = .nan
        b.row(height / 2, as: Float.self)[width / 2] = .nan
        return b
    }
}

final class DepthQualityTests: XCTestCase {
    /// Runs Tests/Fixtures/depth_quality_reference.py on the frames; returns its per-frame dictionaries.
    static func reference(_ frames: [PixelBuffer], _ k: CameraIntrinsics, roi: QualityROI, baseline: Double, gtMM: Double,
                          window: Int, file: StaticString = #filePath, line: UInt = #line) throws -> [[String: Any]] {
        let py = try PythonReference.python(importing: ["numpy"], file: file, line: line)
        let tmp = TemporaryFolder("depth-quality")
        var paths: [String] = []
        for (i, f) in frames.enumerated() {
            var bytes = Data()
            for y in 0..<f.height { bytes.append(Data(bytes: f.row(y), count: f.width * 4)) }
            let p = tmp.file("frame\(i).f32")
            try bytes.write(to: URL(fileURLWithPath: p))
            paths.append(p)
        }
        let args = [py, Repo.fixture("depth_quality_reference.py"), "raw", "\(frames[0].width)", "\(frames[0].height)",
                    "\(k.fx)", "\(k.fy)", "\(k.cx)", "\(k.cy)", "\(roi.x)", "\(roi.y)", "\(roi.width)", "\(roi.height)",
                    "\(baseline)", "\(gtMM)", "\(window)"] + paths
        let r = try TestProcess.run(args, timeout: 120, file: file, line: line)
        XCTAssertEqual(r.status, 0, r.output, file: file, line: line)
        let doc = try JSONSerialization.jsonObject(with: Data(r.output.utf8)) as? [String: Any]
        return try XCTUnwrap(doc?["frames"] as? [[String: Any]], file: file, line: line)
    }

    /// Compares depthlens' metrics with the numpy reference's, metric by metric.
    static func assertAgree(_ m: QualityMetrics, noise: Double?, _ ref: [String: Any], relative rel: Double = 1e-6,
                            file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(m.validPixels, ref["valid_pixels"] as? Int, "valid pixels", file: file, line: line)
        // Fill rate exact: the same valid pixels over the same ROI (the JSON text round trip may move the last bit).
        XCTAssertEqual(m.fillRate, ref["fill_rate"] as? Double ?? -1, accuracy: 1e-15, "fill rate", file: file, line: line)
        func close(_ a: Double?, _ key: String, abs tol: Double? = nil) {
            let b = ref[key] as? Double
            XCTAssertEqual(a == nil, b == nil, "\(key): \(String(describing: a)) vs \(String(describing: b))", file: file, line: line)
            guard let a, let b else { return }
            XCTAssertEqual(a, b, accuracy: tol ?? rel * max(abs(b), 1e-9), key, file: file, line: line)
        }
        close(m.distanceMM, "distance_mm", abs: 1e-3)
        close(m.angleDeg, "angle_deg", abs: 1e-5)
        close(m.planeRMSMM, "plane_rms_mm")
        close(m.planeRMSPercent, "plane_rms_percent")
        close(m.subpixelRMS, "subpixel_rms_px")
        close(m.zAccuracyPercent, "z_accuracy_percent", abs: 1e-5)
        close(noise, "temporal_noise_percent")
    }

    func testSyntheticTiltedPlaneAgainstNumpyReference() throws {
        let scene = TiltedPlaneScene()
        let frames = (0..<3).map { scene.frame(seed: 100 + UInt64($0)) }
        for roi in [QualityROI.centered(fraction: 0.4, width: scene.width, height: scene.height),
                    QualityROI(x: 10, y: 7, width: 300, height: 211)] {
            let ref = try Self.reference(frames, scene.intrinsics, roi: roi, baseline: 0.05, gtMM: 1400, window: 40)
            XCTAssertEqual(ref.count, frames.count)
            var window = TemporalNoiseWindow(capacity: 40)
            for (i, f) in frames.enumerated() {
                let s = QualitySettings(intrinsics: scene.intrinsics, roi: roi, baselineMeters: 0.05, groundTruthMM: 1400)
                let m = try DepthQuality.analyze(depth: f, settings: s)
                window.add(depth: f, roi: roi)
                Self.assertAgree(m, noise: window.noisePercent(), ref[i])
            }
        }
    }

    func testSyntheticTiltedPlaneKnownAnswers() throws {
        let scene = TiltedPlaneScene()
        let roi = QualityROI.centered(fraction: 0.8, width: scene.width, height: scene.height)
        let m = try DepthQuality.analyze(depth: scene.frame(seed: 7), settings: QualitySettings(intrinsics: scene.intrinsics, roi: roi))
        // Fill: every ROI pixel but the dropouts and the NaN at the image center.
        XCTAssertEqual(m.fillRate, 0.9, accuracy: 0.01)
        XCTAssertEqual(m.distanceMM ?? 0, scene.distanceMM, accuracy: 0.5)
        XCTAssertEqual(m.angleDeg ?? 0, scene.angleDeg, accuracy: 0.1)
        // Noise σ in z is σ·n_z along the normal; the trim (by z, which the tilt dominates) hardly touches it.
        XCTAssertEqual(m.planeRMSMM ?? 0, scene.sigmaZ * 1000 * scene.normal.z, accuracy: 0.03 * scene.sigmaZ * 1000 * scene.normal.z)
        XCTAssertEqual(m.trimmedPoints, m.validPixels - 2 * (m.validPixels / 200))
        XCTAssertNil(m.subpixelRMS, "no baseline, no sub-pixel RMS")
        XCTAssertNil(m.zAccuracyPercent, "no ground truth, no Z accuracy")
        // Z accuracy against the plane's true depth on the center ray is ≈ 0.
        let k = scene.intrinsics
        let center = SIMD3<Double>((Double(k.width) / 2 - Double(k.cx)) / Double(k.fx), (Double(k.height) / 2 - Double(k.cy)) / Double(k.fy), 1)
        let gt = scene.axisDepth * scene.normal.z / (scene.normal * center).sum() * 1000
        let withGT = try DepthQuality.analyze(depth: scene.frame(seed: 7), settings: QualitySettings(intrinsics: k, roi: roi, groundTruthMM: gt))
        XCTAssertEqual(withGT.zAccuracyPercent ?? 1, 0, accuracy: 0.05)
    }

    func testTemporalNoiseOfStillNoisyFrames() throws {
        var scene = TiltedPlaneScene()
        scene.dropout = 0
        let roi = QualityROI.centered(fraction: 0.4, width: scene.width, height: scene.height)
        var w = TemporalNoiseWindow(capacity: 5)
        XCTAssertNil(w.noisePercent())
        for i in 0..<8 { w.add(depth: scene.frame(seed: 200 + UInt64(i)), roi: roi) }
        XCTAssertEqual(w.count, 5)
        // Per pixel the population std of 5 samples of σ: its median is ≈ σ·0.87; relative to ≈1.5 m.
        let percent = try XCTUnwrap(w.noisePercent())
        XCTAssertGreaterThan(percent, 100 * 0.003 * 0.6 / 1.7)
        XCTAssertLessThan(percent, 100 * 0.003 * 1.1 / 1.3)
    }

    func testTooFewPointsGiveFillRateOnly() throws {
        let b = PixelBuffer(width: 20, height: 10, format: .depthFloat32)
        b.row(5, as: Float.self)[10] = 1
        let k = CameraIntrinsics.default(width: 20, height: 10)
        let m = try DepthQuality.analyze(depth: b, settings: QualitySettings(intrinsics: k, roi: QualityROI(x: 0, y: 0, width: 20, height: 10)))
        XCTAssertEqual(m.validPixels, 1)
        XCTAssertEqual(m.fillRate, 1.0 / 200)
        XCTAssertNil(m.plane)
        XCTAssertNil(m.planeRMSMM)
        XCTAssertThrowsError(try DepthQuality.analyze(depth: b, settings: QualitySettings(intrinsics: k, roi: QualityROI(x: 5, y: 0, width: 20, height: 10))))
    }

    func testROIForms() throws {
        XCTAssertEqual(QualityROI.centered(fraction: 0.4, width: 640, height: 480), QualityROI(x: 192, y: 144, width: 256, height: 192))
        XCTAssertEqual(QualityROI.centered(fraction: 0.8, width: 848, height: 480), QualityROI(x: 84, y: 47, width: 679, height: 385),
                       "float arithmetic as the tool: 480·(0.5 − 0.4) is 47.999996")
        XCTAssertEqual(try QualityROISpec(parsing: "0.6"), .centered(0.6))
        XCTAssertEqual(try QualityROISpec(parsing: "20%"), .centered(0.2))
        XCTAssertEqual(try QualityROISpec(parsing: "10,20,30,40"), .rect(QualityROI(x: 10, y: 20, width: 30, height: 40)))
        for bad in ["", "0", "1.5", "-0.2", "abc", "10,20,30", "10,20,0,5", "-1,0,5,5", "1,2,3,4,5", "nan", "150%"] {
            XCTAssertThrowsError(try QualityROISpec(parsing: bad), "'\(bad)'")
        }
        XCTAssertThrowsError(try QualityROISpec.rect(QualityROI(x: 600, y: 0, width: 50, height: 10)).resolve(width: 640, height: 480))
        XCTAssertEqual(try QualityROISpec.default.resolve(width: 640, height: 480), QualityROI(x: 192, y: 144, width: 256, height: 192))
    }
}
