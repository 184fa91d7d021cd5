import Foundation

/// One frame's depth-quality metrics, as the RealSense Depth Quality Tool defines them
/// (tools/depth-quality: `analyze_depth_image` in depth-metrics.h and the metric callback in
/// rs-depth-quality.cpp). docs/QUALITY.md has each formula and where depthlens differs.
public struct QualityMetrics: Sendable, Equatable {
    public var roi: QualityROI
    /// Valid (depth > 0, finite) pixels in the ROI.
    public var validPixels: Int
    /// validPixels / roi.area, 0…1 (the tool shows it ×100 as "Fill-Rate %").
    public var fillRate: Double
    /// The least-squares plane through the valid ROI points; nil when they span none (< 3 points).
    public var plane: FittedPlane?
    /// −d·1000: the camera's distance from the plane along its normal, mm.
    public var distanceMM: Double?
    /// acos(|n.z|) in degrees: the angle between the plane's normal and the optical axis.
    public var angleDeg: Double?
    /// RMS of the point-to-plane distances after the 0.5 % trim, mm ("Plane Fit RMS Error").
    public var planeRMSMM: Double?
    /// planeRMSMM / distanceMM × 100.
    public var planeRMSPercent: Double?
    /// RMS of the disparity errors B·f/|p| − B·f/|p′| (pixels); nil without a stereo baseline.
    public var subpixelRMS: Double?
    /// Median Z error against the ground truth, % of it; nil without one.
    public var zAccuracyPercent: Double?
    /// Points the RMS figures used (after the trim).
    public var trimmedPoints: Int

    public var hasPlane: Bool { plane != nil }
}

/// What the metrics need besides the depth: the camera and the optional references.
public struct QualitySettings: Sendable, Equatable {
    public var intrinsics: CameraIntrinsics
    public var roi: QualityROI
    /// The stereo baseline in meters (sub-pixel RMS); nil for sources without one.
    public var baselineMeters: Float?
    /// The true distance to the wall in mm (Z accuracy); nil when not given.
    public var groundTruthMM: Double?

    public init(intrinsics: CameraIntrinsics, roi: QualityROI, baselineMeters: Float? = nil, groundTruthMM: Double? = nil) {
        self.intrinsics = intrinsics; self.roi = roi; self.baselineMeters = baselineMeters; self.groundTruthMM = groundTruthMM
    }
}

/// The Depth Quality Tool's per-frame metrics over a depth frame, pure: depth in, numbers out.
/// The plane-fit sums come from a `PlaneMomentsBackend` (CPU or GPU); the trim, RMS and medians
/// run here on the CPU (they sort).
public enum DepthQuality {
    /// The valid ROI pixels deprojected (`qualityDeproject`), in row-major order.
    public static func points(depth: PixelBuffer, intrinsics k: CameraIntrinsics, roi: QualityROI) -> [SIMD3<Float>] {
        var out: [SIMD3<Float>] = []
        out.reserveCapacity(roi.area)
        for v in roi.y..<(roi.y + roi.height) {
            let row = depth.row(v, as: Float.self)
            for u in roi.x..<(roi.x + roi.width) where isValidDepth(row[u]) {
                out.append(qualityDeproject(u: Float(u), v: Float(v), depth: row[u], k))
            }
        }
        return out
    }

    /// Analyzes one frame. `depth` is depthFloat32 meters of the size `settings.intrinsics` describe.
    public static func analyze(depth: PixelBuffer, settings s: QualitySettings,
                               backend: PlaneMomentsBackend = CPUPlaneMoments()) throws -> QualityMetrics {
        guard depth.format == .depthFloat32 else {
            throw DepthKitError.invalidArgument("depth quality takes depthFloat32, got \(depth.format)")
        }
        let r = s.roi
        guard r.x >= 0, r.y >= 0, r.width > 0, r.height > 0, r.x + r.width <= depth.width, r.y + r.height <= depth.height else {
            throw DepthKitError.invalidArgument("ROI \(r) is not inside the \(depth.width)x\(depth.height) depth map")
        }
        let pts = points(depth: depth, intrinsics: s.intrinsics, roi: r)
        var m = QualityMetrics(roi: r, validPixels: pts.count, fillRate: Double(pts.count) / Double(r.area), trimmedPoints: 0)
        guard pts.count >= 3 else { return m }
        let moments = try backend.moments(depth: depth, intrinsics: s.intrinsics, roi: r)
        guard let plane = FittedPlane.fit(moments) else { return m }
        m.plane = plane
        let distanceMM = -plane.d * 1000
        m.distanceMM = distanceMM
        m.angleDeg = acos(min(1, abs(plane.normal.z))) * 180 / Double.pi

        // Trim 0.5 % at each end in z: sort by z, drop ⌊n/200⌋ from each end. Ties keep the
        // pixels' order (a stable sort), so the trimmed set is well defined.
        let order = pts.indices.sorted { pts[$0].z < pts[$1].z || (pts[$0].z == pts[$1].z && $0 < $1) }
        let outliers = pts.count / 200
        let kept = order[outliers..<(pts.count - outliers)]
        m.trimmedPoints = kept.count

        let bf = s.baselineMeters.map { Double($0) * Double(s.intrinsics.fx) }
        // The plane's depth on the ray through the image center (the tool's pivot), for Z accuracy.
        var offsetMM: Double?
        if let gt = s.groundTruthMM, gt > 0 {
            let k = s.intrinsics
            let ray = SIMD3<Double>((Double(k.width) / 2 - Double(k.cx)) / Double(k.fx),
                                    (Double(k.height) / 2 - Double(k.cy)) / Double(k.fy), 1)
            let denom = (plane.normal * ray).sum()
            if denom != 0 { offsetMM = -plane.d / denom * 1000 - gt }
        }
        var sumSq = 0.0, sumDisp = 0.0
        var gtErrors: [Double] = []
        if offsetMM != nil { gtErrors.reserveCapacity(kept.count) }
        for i in kept {
            let p = pts[i]
            let dist = plane.distance(p)
            sumSq += (dist * 1000) * (dist * 1000)
            if let bf {
                let pd = SIMD3<Double>(Double(p.x), Double(p.y), Double(p.z))
                let q = pd - dist * plane.normal
                let disparity = bf / (pd * pd).sum().squareRoot() - bf / (q * q).sum().squareRoot()
                sumDisp += disparity * disparity
            }
            if let offsetMM { gtErrors.append(offsetMM + dist * 1000) }
        }
        let rms = (sumSq / Double(kept.count)).squareRoot()
        m.planeRMSMM = rms
        m.planeRMSPercent = 100 * rms / distanceMM
        if bf != nil { m.subpixelRMS = (sumDisp / Double(kept.count)).squareRoot() }
        if let gt = s.groundTruthMM, !gtErrors.isEmpty {
            gtErrors.sort()
            m.zAccuracyPercent = 100 * gtErrors[gtErrors.count / 2] / gt
        }
        return m
    }
}

/// Temporal noise over the last `capacity` frames of one ROI (the Depth Quality Tool has no such
/// metric; docs/QUALITY.md gives the definition): for every ROI pixel valid in all frames of the
/// window, the standard deviation of its depth over the frames divided by its mean depth; the
/// metric is the median of those, ×100 (percent). Needs two frames.
public struct TemporalNoiseWindow: Sendable {
    public let capacity: Int
    public private(set) var roi: QualityROI?
    /// The ROI depths of each frame in the window, oldest first.
    private var frames: [[Float]] = []

    public init(capacity: Int = 40) {
        precondition(capacity >= 2, "temporal noise needs at least two frames")
        self.capacity = capacity
    }

    public var count: Int { frames.count }

    /// Adds a frame's ROI (depthFloat32 meters); a different ROI starts the window over.
    public mutating func add(depth: PixelBuffer, roi r: QualityROI) {
        if roi != r { frames.removeAll(); roi = r }
        var values = [Float](repeating: 0, count: r.area)
        for v in 0..<r.height {
            let row = depth.row(r.y + v, as: Float.self)
            for u in 0..<r.width { values[v * r.width + u] = row[r.x + u] }
        }
        if frames.count == capacity { frames.removeFirst() }
        frames.append(values)
    }

    public mutating func reset() { frames.removeAll(); roi = nil }

    /// The median over pixels of std/mean × 100; nil with fewer than two frames or no pixel valid throughout.
    public func noisePercent() -> Double? {
        guard frames.count >= 2, let r = roi else { return nil }
        var ratios: [Double] = []
        let n = Double(frames.count)
        pixels: for i in 0..<r.area {
            var sum = 0.0
            for f in frames {
                guard isValidDepth(f[i]) else { continue pixels }
                sum += Double(f[i])
            }
            let mean = sum / n
            var sq = 0.0
            for f in frames { let e = Double(f[i]) - mean; sq += e * e }
            ratios.append((sq / n).squareRoot() / mean)
        }
        guard !ratios.isEmpty else { return nil }
        ratios.sort()
        return 100 * ratios[ratios.count / 2]
    }
}
