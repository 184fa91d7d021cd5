/// Depth smoothing settings: three stages, each with its own switch, run in this order.
///
/// 1. **Temporal** — per pixel, with the running value `v` and the new valid depth `d`:
///    `v ← v + alpha·(d − v)` when `|d − v| ≤ threshold·v`, else `v ← d` (a step resets, so a
///    moving edge is not smeared). Off: `v ← d`.
/// 2. **Hole filling** — a pixel invalid in this frame keeps `v` for up to `holeFrames` frames in a
///    row; after that (or with the stage off) it is invalid and `v` is forgotten.
/// 3. **Spatial** — a pixel still invalid after 1–2 takes the mean of the valid pixels in its
///    (2·radius+1)² window (row-major sum) when there are at least `spatialMinNeighbours` of them
///    and they agree with each other: `max − min ≤ threshold·min`. A window that spans a depth
///    step fills nothing. Spatial fills are output only; they never feed the temporal state.
///
/// `threshold` is relative to depth (0.03 = 3 %) and serves stages 1 and 3.
public struct DepthSmoothingSettings: Sendable, Equatable, CustomStringConvertible {
    public var enabled = false
    public var temporal = true
    public var alpha: Float = 0.4
    public var threshold: Float = 0.03
    public var holeFill = true
    public var holeFrames = 4
    public var spatial = true
    public var radius = 2

    /// Limits of the parameters (the panel clamps to them; the CLI rejects values outside), from
    /// the one table of limits, `Limits`.
    public static let alphaRange: ClosedRange<Float> = Limits.smoothAlpha.range
    public static let thresholdRange: ClosedRange<Float> = Limits.smoothThreshold.range
    public static let holeFramesRange: ClosedRange<Int> = Int(Limits.holeFrames.lowerBound)...Int(Limits.holeFrames.upperBound)
    public static let radiusRange: ClosedRange<Int> = Int(Limits.fillRadius.lowerBound)...Int(Limits.fillRadius.upperBound)
    /// Valid neighbours a spatial fill needs at least.
    public static let spatialMinNeighbours = 3

    public init() {}

    /// Every parameter moved into its range (NaN goes to the default).
    public func clamped() -> DepthSmoothingSettings {
        var s = self
        let d = DepthSmoothingSettings()
        s.alpha = alpha.isNaN ? d.alpha : min(max(alpha, Self.alphaRange.lowerBound), Self.alphaRange.upperBound)
        s.threshold = threshold.isNaN ? d.threshold
            : min(max(threshold, Self.thresholdRange.lowerBound), Self.thresholdRange.upperBound)
        s.holeFrames = min(max(holeFrames, Self.holeFramesRange.lowerBound), Self.holeFramesRange.upperBound)
        s.radius = min(max(radius, Self.radiusRange.lowerBound), Self.radiusRange.upperBound)
        return s
    }

    /// Throws `.invalidArgument` (naming the CLI option) for a parameter outside its range.
    public func validate() throws {
        func check<T: Comparable>(_ v: T, _ r: ClosedRange<T>, _ name: String) throws {
            guard r.contains(v) else {
                throw DepthKitError.invalidArgument("\(name) must be in \(r.lowerBound)…\(r.upperBound), got \(v)")
            }
        }
        try check(alpha, Self.alphaRange, Limits.smoothAlpha.option)
        try check(threshold, Self.thresholdRange, Limits.smoothThreshold.option)
        try check(holeFrames, Self.holeFramesRange, Limits.holeFrames.option)
        try check(radius, Self.radiusRange, Limits.fillRadius.option)
    }

    /// True when going from `old` to these settings invalidates the history (a stage that keeps
    /// state switched on or off); parameters alone apply from the next frame.
    public func restartsHistory(from old: DepthSmoothingSettings) -> Bool {
        temporal != old.temporal || holeFill != old.holeFill
    }

    /// "temporal 0.40, holes 4, spatial r2 (step 3.0%)" or "off".
    public var description: String {
        guard enabled else { return "off" }
        var parts: [String] = []
        if temporal { parts.append("temporal \(formatted(alpha))") }
        if holeFill { parts.append("holes \(holeFrames)") }
        if spatial { parts.append("spatial r\(radius)") }
        if parts.isEmpty { return "on (no stage)" }
        return parts.joined(separator: ", ") + " (step \(formatted(threshold * 100))%)"
    }

    private func formatted(_ v: Float) -> String {
        let r = (v * 100).rounded() / 100
        return r == r.rounded() ? String(Int(r)) : String(r)
    }
}

/// A depth smoother with history (CPU `DepthSmoother`, GPU `GPUDepthSmoother`): depthFloat32 in,
/// depthFloat32 out at the same size. A new size, `reset()` or new settings that change the
/// temporal stages start from no history.
public protocol DepthSmoothing: AnyObject {
    var settings: DepthSmoothingSettings { get set }
    /// Smooths one frame. The result comes from a small pool (3 buffers): hold it no longer than
    /// the next two calls.
    func smooth(_ depth: PixelBuffer) throws -> PixelBuffer
    /// Forgets the history (seek, new source).
    func reset()
    /// "CPU" or "GPU".
    var backendName: String { get }
}

extension DepthSmoothing {
    /// Smooths a `DepthData`, keeping accuracy and intrinsics.
    public func smooth(_ depth: DepthData) throws -> DepthData {
        DepthData(map: try smooth(depth.depthFloat32()), accuracy: depth.accuracy, intrinsics: depth.intrinsics)
    }
}

/// The CPU reference of depth smoothing (the formulas of `DepthSmoothingSettings`).
public final class DepthSmoother: DepthSmoothing {
    public var settings: DepthSmoothingSettings {
        didSet {
            settings = settings.clamped()
            if settings.restartsHistory(from: oldValue) { reset() }
        }
    }
    public let backendName = "CPU"
    /// Running value per pixel (0 = none) and frames it has been held over holes.
    private var value: [Float] = []
    private var age: [UInt32] = []
    private var stage: [Float] = []
    private var pool: BufferPool?
    private var width = 0, height = 0

    public init(settings: DepthSmoothingSettings = DepthSmoothingSettings()) {
        self.settings = settings.clamped()
    }

    public func reset() {
        for i in value.indices { value[i] = 0; age[i] = 0 }
    }

    public func smooth(_ depth: PixelBuffer) throws -> PixelBuffer {
        try requireFormat(depth.frameFormat, [.depthFloat32], kernel: "smooth")
        let w = depth.width, h = depth.height
        if w != width || h != height || pool == nil {
            width = w; height = h
            value = [Float](repeating: 0, count: w * h)
            age = [UInt32](repeating: 0, count: w * h)
            stage = [Float](repeating: 0, count: w * h)
            pool = BufferPool(format: FrameFormat(width: w, height: h, pixelFormat: .depthFloat32), outputRetainedBufferCountHint: 3)
        }
        let out = try pool!.makeBuffer()
        let s = settings
        value.withUnsafeMutableBufferPointer { vp in
            age.withUnsafeMutableBufferPointer { ap in
                stage.withUnsafeMutableBufferPointer { sp in
                    // Both passes through C-convention bodies of a `Job`: nothing allocated per frame.
                    struct Job {
                        let depth, out: PixelBuffer; let w, h, bands: Int; let s: DepthSmoothingSettings
                        let v: UnsafeMutablePointer<Float>, a: UnsafeMutablePointer<UInt32>, st: UnsafeMutablePointer<Float>
                    }
                    var job = Job(depth: depth, out: out, w: w, h: h, bands: bandCount(h), s: s,
                                  v: vp.baseAddress!, a: ap.baseAddress!, st: sp.baseAddress!)
                    parallelFor(job.bands, context: &job) { ctx, band in
                        let j = ctx!.assumingMemoryBound(to: Job.self).pointee
                        for y in bandRows(Int(band), of: j.bands, rows: j.h) {
                            let r = j.depth.row(y, as: Float.self)
                            for x in 0..<j.w {
                                let i = y * j.w + x
                                j.st[i] = DepthSmoother.temporalStep(d: r[x], value: &j.v[i], age: &j.a[i], j.s)
                            }
                        }
                    }
                    parallelFor(job.bands, context: &job) { ctx, band in
                        let j = ctx!.assumingMemoryBound(to: Job.self).pointee
                        for y in bandRows(Int(band), of: j.bands, rows: j.h) {
                            let o = j.out.row(y, as: Float.self)
                            for x in 0..<j.w { o[x] = DepthSmoother.spatialStep(j.st, x: x, y: y, width: j.w, height: j.h, j.s) }
                        }
                    }
                }
            }
        }
        out.markModified()
        return out
    }

    /// Stages 1 and 2 for one pixel: updates the state, returns the pixel's depth (0 = invalid).
    /// The GPU port (depthSmoothTemporal.comp) does the same operations in the same order.
    @inline(__always)
    static func temporalStep(d: Float, value v: inout Float, age a: inout UInt32, _ s: DepthSmoothingSettings) -> Float {
        if isValidDepth(d) {
            if s.temporal && v > 0 && abs(d - v) <= s.threshold * v {
                v = v + s.alpha * (d - v)
            } else {
                v = d
            }
            a = 0
            return v
        }
        if s.holeFill && v > 0 && a < UInt32(s.holeFrames) {
            a += 1
            return v
        }
        v = 0
        a = 0
        return 0
    }

    /// Stage 3 for one pixel of the stage-1/2 output `st`.
    @inline(__always)
    static func spatialStep(_ st: UnsafeMutablePointer<Float>, x: Int, y: Int, width w: Int, height h: Int,
                            _ s: DepthSmoothingSettings) -> Float {
        let c = st[y * w + x]
        if c > 0 || !s.spatial { return c }
        var n = 0
        var sum: Float = 0, lo = Float.infinity, hi: Float = 0
        let r = s.radius
        for yy in max(0, y - r)...min(h - 1, y + r) {
            for xx in max(0, x - r)...min(w - 1, x + r) {
                let q = st[yy * w + xx]
                if q > 0 {
                    n += 1
                    sum += q
                    lo = min(lo, q)
                    hi = max(hi, q)
                }
            }
        }
        guard n >= DepthSmoothingSettings.spatialMinNeighbours, hi - lo <= s.threshold * lo else { return 0 }
        return sum / Float(n)
    }
}
