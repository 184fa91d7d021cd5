import CImGui
import Capture

/// The panel's IMU section: the accelerometer (m/s²) and gyroscope (rad/s) of a recording that has
/// them (`FrameSource.imu`, read once when the source opens: `SourceSession.Timeline.imu`), x y z
/// in red, green, blue over `halfWindow` seconds either side of the shown frame's timestamp, with a
/// marker at the frame and the values there. The lines are resampled into buffers made once, so a
/// frame allocates nothing (the steady-state tests count).
struct IMUPlot {
    /// Seconds shown either side of the frame's time.
    static let halfWindow = 2.0
    /// Points per line.
    static let points = 160
    /// Plot height in pixels.
    static let height: Float = 70

    /// x values, then y, then z: `points` each, refilled in place every frame.
    private var buffer = [Float](repeating: .nan, count: 3 * IMUPlot.points)

    /// Draws both sensors around time `t` (seconds, the clock of the frames' timestamps).
    mutating func draw(_ imu: IMUSamples, at t: Double) {
        var any = false
        if let a = imu.accelerometer { any = draw(a, label: "accelerometer", at: t) || any }
        if let g = imu.gyroscope { any = draw(g, label: "gyroscope", at: t) || any }
        if !any { UI.text("no IMU samples within 2 s of this frame", color: [1, 0.7, 0.3]) }
    }

    /// One sensor's plot; false when none of its samples lies in the window.
    private mutating func draw(_ s: IMUStream, label: String, at t: Double) -> Bool {
        guard let range = Self.resample(s, around: t, into: &buffer) else { return false }
        let current = s.value(at: t)
        let unit = s.kind == .accelerometer ? "m/s^2" : "rad/s"
        let pad = max(0.05, (range.max - range.min) * 0.05)
        let (lo, hi) = (range.min - pad, range.max + pad)
        label.withCString { l in
            unit.withCString { u in
                buffer.withUnsafeBufferPointer { b in
                    withUnsafeTemporaryAllocation(of: Double.self, capacity: 3) { d in
                        if let c = current { d[0] = c.x; d[1] = c.y; d[2] = c.z }
                        dl_imgui_plot_series(l, u, current == nil ? nil : d.baseAddress, b.baseAddress, 3, Int32(Self.points), lo, hi,
                                             Self.height, 0.5)
                    }
                }
            }
        }
        return true
    }

    /// Resamples `s` at `points` times evenly over t ± `halfWindow` (linear interpolation between
    /// samples; NaN outside the stream's samples) into `out` (x values, then y, then z); the range
    /// of the values written, or nil when no sample lies in the window.
    static func resample(_ s: IMUStream, around t: Double, into out: inout [Float]) -> (min: Float, max: Float)? {
        let n = points, t0 = t - halfWindow, step = 2 * halfWindow / Double(n - 1)
        guard let first = s.timestamps.first, let last = s.timestamps.last, last >= t0, first <= t + halfWindow else { return nil }
        var lo = Float.infinity, hi = -Float.infinity
        // Walk the samples once: `j` is the first sample at or after the point's time.
        var a = 0, b = s.count
        while a < b { let m = (a + b) / 2; if s.timestamps[m] < t0 { a = m + 1 } else { b = m } }
        var j = a
        for k in 0..<n {
            let tk = t0 + Double(k) * step
            while j < s.count && s.timestamps[j] < tk { j += 1 }
            var v: SIMD3<Double>?
            if j < s.count && s.timestamps[j] == tk {
                v = s.values[j]
            } else if j > 0 && j < s.count {
                let ta = s.timestamps[j - 1], tb = s.timestamps[j]
                v = s.values[j - 1] + (s.values[j] - s.values[j - 1]) * ((tk - ta) / (tb - ta))
            }
            for axis in 0..<3 {
                let f = v.map { Float($0[axis]) } ?? .nan
                out[axis * n + k] = f
                if f.isFinite { lo = Swift.min(lo, f); hi = Swift.max(hi, f) }
            }
        }
        return lo <= hi ? (lo, hi) : nil
    }
}
