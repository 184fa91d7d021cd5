import TestSupport
import Capture
import XCTest
@testable import Viewer

/// The panel's IMU plot: how a stream is resampled around the frame's time (the drawing is ImGui's).
final class IMUPlotTests: XCTestCase {
    func testResampleInterpolatesInsideAndLeavesGapsOutside() throws {
        // x = 10·t, y = −t, z = 2 on samples every 0.5 s from t = 0 to 3.
        let times = (0...6).map { Double($0) * 0.5 }
        let s = IMUStream(kind: .gyroscope, name: "g", timestamps: times, values: times.map { SIMD3(10 * $0, -$0, 2) })
        var out = [Float](repeating: 0, count: 3 * IMUPlot.points)
        let range = try XCTUnwrap(IMUPlot.resample(s, around: 2, into: &out))
        let n = IMUPlot.points, step = 2 * IMUPlot.halfWindow / Double(n - 1)
        for k in 0..<n {
            let t = 2 - IMUPlot.halfWindow + Double(k) * step
            if t < 0 || t > 3 {
                XCTAssert(out[k].isNaN && out[n + k].isNaN && out[2 * n + k].isNaN, "no sample at \(t)")
            } else {
                XCTAssertEqual(out[k], Float(10 * t), accuracy: 1e-4, "x at \(t)")
                XCTAssertEqual(out[n + k], Float(-t), accuracy: 1e-5, "y at \(t)")
                XCTAssertEqual(out[2 * n + k], 2)
            }
        }
        XCTAssertEqual(range.min, -3, accuracy: 0.02)
        XCTAssertEqual(range.max, 30, accuracy: 0.1)
        // The frame's time far from every sample: nothing to draw.
        XCTAssertNil(IMUPlot.resample(s, around: 100, into: &out))
    }
}
