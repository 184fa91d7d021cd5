import XCTest
@testable import DepthKit

/// Scenes for the smoothing tests: a wall at `left` m for x < `edge`, at `right` m from `edge` on.
func stepScene(_ w: Int, _ h: Int, edge: Int, left: Float, right: Float) -> PixelBuffer {
    let b = PixelBuffer(width: w, height: h, format: .depthFloat32)
    for y in 0..<h { for x in 0..<w { b.row(y, as: Float.self)[x] = x < edge ? left : right } }
    return b
}

final class DepthSmootherTests: XCTestCase {
    let w = 160, h = 120, edge = 80

    private func rms(_ a: [Float]) -> Float { (a.reduce(0) { $0 + $1 * $1 } / Float(max(a.count, 1))).squareRoot() }

    /// Noise ratio (smoothed / raw RMS error, pixels valid in the input, away from the step) over
    /// frames 15…39 of a static 1 m | 1.2 m scene with 0.3 % noise and 5 % dropouts; also the share
    /// of dropped pixels that come out valid and the worst error of any output pixel.
    private func staticRun(_ s: DepthSmoothingSettings) throws -> (ratio: Float, filled: Float, worst: Float) {
        let clean = stepScene(w, h, edge: edge, left: 1.0, right: 1.2)
        var noise = DepthNoise(relativeSigma: 0.003, dropout: 0.05, seed: 7)
        let sm = DepthSmoother(settings: s)
        var raw: [Float] = [], smooth: [Float] = []
        var dropped = 0, filled = 0
        var worst: Float = 0
        for frame in 0..<40 {
            let input = noise.apply(to: clean)
            // A 3x3 hole that is never valid: only the spatial fill can fill it.
            for y in 60..<63 { for x in 30..<33 { input.row(y, as: Float.self)[x] = 0 } }
            let out = try sm.smooth(input)
            guard frame >= 15 else { continue }
            for y in 0..<h {
                let i = input.row(y, as: Float.self), o = out.row(y, as: Float.self), c = clean.row(y, as: Float.self)
                for x in 0..<w {
                    if o[x] > 0 { worst = max(worst, abs(o[x] - c[x])) }
                    if i[x] > 0 {
                        if abs(x - edge) > 3 { raw.append(i[x] - c[x]); smooth.append(o[x] - c[x]) }
                    } else {
                        dropped += 1
                        if o[x] > 0 { filled += 1 }
                    }
                }
            }
        }
        return (rms(smooth) / rms(raw), Float(filled) / Float(dropped), worst)
    }

    func testStaticNoisySceneNoiseHalvedDropoutsFilledStepKept() throws {
        var s = DepthSmoothingSettings()
        s.enabled = true
        s.alpha = 0.3
        let r = try staticRun(s)
        XCTAssertLessThanOrEqual(r.ratio, 0.5, "noise at least halved")
        XCTAssertGreaterThanOrEqual(r.filled, 0.9, "≥ 90 % of dropped pixels filled")
        // The 20 cm step is not smeared: no output pixel is more than 2 cm off its side's depth
        // (a mix of the two sides would be ≥ 5 cm off somewhere along the edge).
        XCTAssertLessThan(r.worst, 0.02)
    }

    func testDefaultAlphaReducesNoiseToTheExponentialFiltersTheory() throws {
        // Steady-state EMA noise is √(α/(2−α)) of the input: exactly 0.5 at α = 0.4.
        var s = DepthSmoothingSettings()
        s.enabled = true
        let r = try staticRun(s)
        XCTAssertEqual(r.ratio, (0.4 / 1.6).squareRoot(), accuracy: 0.04)
        XCTAssertGreaterThanOrEqual(r.filled, 0.9)
        XCTAssertLessThan(r.worst, 0.02)
    }

    func testWithoutSmoothingStagesNothingIsFilledOrSmoothed() throws {
        var s = DepthSmoothingSettings()
        s.enabled = true
        s.temporal = false; s.holeFill = false; s.spatial = false
        let r = try staticRun(s)
        XCTAssertEqual(r.ratio, 1, accuracy: 1e-6)
        XCTAssertEqual(r.filled, 0)
    }

    func testMovingStepLeavesNoGhostTrail() throws {
        var s = DepthSmoothingSettings()
        s.enabled = true
        let sm = DepthSmoother(settings: s)
        for frame in 0..<20 {
            // A near object (1 m) sliding right 4 px a frame over a 1.5 m wall.
            let truth = stepScene(w, h, edge: 20 + 4 * frame, left: 1.0, right: 1.5)
            let out = try sm.smooth(truth)
            for y in stride(from: 0, to: h, by: 7) {
                for x in 0..<w {
                    let t = truth.row(y, as: Float.self)[x], o = out.row(y, as: Float.self)[x]
                    XCTAssertLessThanOrEqual(abs(o - t), s.threshold * t, "frame \(frame) x \(x): \(o) vs \(t)")
                }
            }
        }
    }

    func testTemporalFormulaAndStepReset() throws {
        var s = DepthSmoothingSettings()
        s.enabled = true; s.spatial = false
        let sm = DepthSmoother(settings: s)
        let a = stepScene(4, 1, edge: 4, left: 1.0, right: 1.0)
        _ = try sm.smooth(a)
        let b = stepScene(4, 1, edge: 2, left: 1.02, right: 1.5)  // 2 % (blends), 50 % (resets)
        let out = try sm.smooth(b)
        XCTAssertEqual(out.row(0, as: Float.self)[0], 1.0 + 0.4 * (1.02 - 1.0))
        XCTAssertEqual(out.row(0, as: Float.self)[3], 1.5)
    }

    func testHoleHeldForNFramesThenInvalid() throws {
        var s = DepthSmoothingSettings()
        s.enabled = true; s.spatial = false; s.holeFrames = 3
        let sm = DepthSmoother(settings: s)
        _ = try sm.smooth(stepScene(1, 1, edge: 1, left: 2, right: 2))
        let hole = stepScene(1, 1, edge: 1, left: 0, right: 0)
        for _ in 0..<3 { XCTAssertEqual(try sm.smooth(hole).row(0, as: Float.self)[0], 2) }
        XCTAssertEqual(try sm.smooth(hole).row(0, as: Float.self)[0], 0)
    }

    func testSpatialFillNeverCrossesAStep() throws {
        var s = DepthSmoothingSettings()
        s.enabled = true; s.temporal = false; s.holeFill = false
        let sm = DepthSmoother(settings: s)
        let d = stepScene(9, 9, edge: 5, left: 1.0, right: 1.2)
        d.row(4, as: Float.self)[1] = 0   // inside the 1 m side: all neighbours agree → filled
        d.row(4, as: Float.self)[4] = 0   // next to the step: neighbours on both sides → stays a hole
        let out = try sm.smooth(d)
        XCTAssertEqual(out.row(4, as: Float.self)[1], 1.0)
        XCTAssertEqual(out.row(4, as: Float.self)[4], 0)
    }

    func testResetForgetsHistory() throws {
        var s = DepthSmoothingSettings()
        s.enabled = true
        let sm = DepthSmoother(settings: s)
        _ = try sm.smooth(stepScene(8, 8, edge: 8, left: 1.0, right: 1.0))
        sm.reset()
        let out = try sm.smooth(stepScene(8, 8, edge: 8, left: 1.02, right: 1.02))
        XCTAssertEqual(out.row(3, as: Float.self)[3], 1.02)
    }

    func testSettingsClampAndValidate() {
        var s = DepthSmoothingSettings()
        s.alpha = 7; s.threshold = .nan; s.holeFrames = -3; s.radius = 99
        let c = s.clamped()
        XCTAssertEqual(c.alpha, DepthSmoothingSettings.alphaRange.upperBound)
        XCTAssertEqual(c.threshold, 0.03)
        XCTAssertEqual(c.holeFrames, DepthSmoothingSettings.holeFramesRange.lowerBound)
        XCTAssertEqual(c.radius, DepthSmoothingSettings.radiusRange.upperBound)
        XCTAssertThrowsError(try s.validate())
        XCTAssertNoThrow(try DepthSmoothingSettings().validate())
    }

    func testRejectsNonDepthInput() {
        XCTAssertThrowsError(try DepthSmoother().smooth(PixelBuffer(width: 2, height: 2, format: .rgba8)))
    }
}
