import XCTest
@testable import GPUKit
import DepthKit

/// GPUDepthSmoother against the CPU reference over noisy sequences, frame by frame: stages 1–2
/// bit for bit, spatial fills within 1e-6 relative (GLSL division), valid/invalid identical.
final class DepthSmootherAgreementTests: GPUTestCase {
    private func scene(_ w: Int, _ h: Int) -> PixelBuffer {
        let b = PixelBuffer(width: w, height: h, format: .depthFloat32)
        for y in 0..<h {
            for x in 0..<w {
                // Wall at 2 m, a 1 m box, a 1.2 m strip: two steps and flat parts.
                var d: Float = 2
                if x > w / 4 && x < w / 2 && y > h / 4 { d = 1 }
                if x > 2 * w / 3 { d = 1.2 + Float(y) * 0.001 }
                b.row(y, as: Float.self)[x] = d
            }
        }
        return b
    }

    private func compare(_ s: DepthSmoothingSettings, width w: Int, height h: Int, frames: Int = 12,
                         resetAt: Int? = nil, file: StaticString = #filePath, line: UInt = #line) throws {
        let cpu = DepthSmoother(settings: s)
        let gpu = try GPUDepthSmoother(settings: s, context: context)
        var noise = DepthNoise(relativeSigma: 0.01, dropout: 0.15, seed: 3)
        let clean = scene(w, h)
        for f in 0..<frames {
            if f == resetAt { cpu.reset(); gpu.reset() }
            let input = noise.apply(to: clean)
            if f == 2 { input.row(0, as: Float.self)[0] = .nan; input.row(h - 1, as: Float.self)[w - 1] = -.infinity }
            let a = try cpu.smooth(input), b = try gpu.smooth(input)
            var worst: Float = 0, maskDiffs = 0
            for y in 0..<h {
                let ra = a.row(y, as: Float.self), rb = b.row(y, as: Float.self)
                for x in 0..<w {
                    if (ra[x] > 0) != (rb[x] > 0) { maskDiffs += 1 }
                    if ra[x] > 0 { worst = max(worst, abs(ra[x] - rb[x]) / ra[x]) }
                }
            }
            XCTAssertEqual(maskDiffs, 0, "frame \(f): valid/invalid differ", file: file, line: line)
            XCTAssertLessThanOrEqual(worst, 1e-6, "frame \(f)", file: file, line: line)
        }
    }

    func testDefaultSettingsAgree() throws {
        var s = DepthSmoothingSettings(); s.enabled = true
        try compare(s, width: 67, height: 45, resetAt: 7)
    }

    func testEachStageAloneAgrees() throws {
        for stage in 0..<3 {
            var s = DepthSmoothingSettings(); s.enabled = true
            s.temporal = stage == 0; s.holeFill = stage == 1; s.spatial = stage == 2
            try compare(s, width: 33, height: 17)
        }
    }

    func testOtherParametersAgree() throws {
        var s = DepthSmoothingSettings(); s.enabled = true
        s.alpha = 0.75; s.threshold = 0.08; s.holeFrames = 2; s.radius = 1
        try compare(s, width: 40, height: 30)
        s.radius = 4; s.alpha = 0.1
        try compare(s, width: 1, height: 1)
        try compare(s, width: 19, height: 23)
    }

    func testTemporalStagesAreBitExact() throws {
        var s = DepthSmoothingSettings(); s.enabled = true; s.spatial = false
        let cpu = DepthSmoother(settings: s), gpu = try GPUDepthSmoother(settings: s, context: context)
        var noise = DepthNoise(relativeSigma: 0.01, dropout: 0.1, seed: 9)
        let clean = scene(50, 40)
        for _ in 0..<10 {
            let input = noise.apply(to: clean)
            XCTAssertEqual(try cpu.smooth(input).packedBytes(), try gpu.smooth(input).packedBytes())
        }
    }
}
