/// The sums a least-squares plane fit needs: the count and centroid of the valid ROI points and
/// their centered second moments. Both backends produce it (the reductions): `CPUPlaneMoments`
/// here, `GPUPlaneMoments` in GPUKit.
///
/// Two passes, as the Depth Quality Tool does (`plane_from_points` in depth-metrics.h): the
/// centroid first, then Σ(p − c)(p − c)ᵀ with c rounded to Float. Each product is formed in Float
/// from Float differences; the sums are Double (the tool's sums are double too).
public struct PlaneMoments: Sendable, Equatable {
    public var count: Int
    /// The centroid as the second pass used it.
    public var centroid: SIMD3<Float>
    public var xx: Double, xy: Double, xz: Double, yy: Double, yz: Double, zz: Double

    public init(count: Int, centroid: SIMD3<Float>, xx: Double = 0, xy: Double = 0, xz: Double = 0,
                yy: Double = 0, yz: Double = 0, zz: Double = 0) {
        self.count = count; self.centroid = centroid
        self.xx = xx; self.xy = xy; self.xz = xz; self.yy = yy; self.yz = yz; self.zz = zz
    }
}

/// Computes `PlaneMoments` over the valid pixels of a depth ROI: the reduction the backends share.
public protocol PlaneMomentsBackend: AnyObject {
    /// "CPU", "GPU".
    var backendName: String { get }
    /// - Parameters: depth is depthFloat32 meters; intrinsics are the depth camera's; roi lies inside the map.
    func moments(depth: PixelBuffer, intrinsics: CameraIntrinsics, roi: QualityROI) throws -> PlaneMoments
}

/// Deprojection exactly as librealsense's `rs2_deproject_pixel_to_point` without distortion:
/// `x = (u − ppx) / fx`, then scaled by the depth (the order matters for the last bit).
@inline(__always)
public func qualityDeproject(u: Float, v: Float, depth z: Float, _ k: CameraIntrinsics) -> SIMD3<Float> {
    SIMD3((u - k.cx) / k.fx * z, (v - k.cy) / k.fy * z, z)
}

/// The CPU reduction: two passes over the ROI.
public final class CPUPlaneMoments: PlaneMomentsBackend {
    public let backendName = "CPU"
    public init() {}

    public func moments(depth: PixelBuffer, intrinsics k: CameraIntrinsics, roi: QualityROI) throws -> PlaneMoments {
        guard depth.format == .depthFloat32 else {
            throw DepthKitError.invalidArgument("plane moments take depthFloat32, got \(depth.format)")
        }
        var n = 0
        var sx = 0.0, sy = 0.0, sz = 0.0
        for v in roi.y..<(roi.y + roi.height) {
            let row = depth.row(v, as: Float.self)
            for u in roi.x..<(roi.x + roi.width) where isValidDepth(row[u]) {
                let p = qualityDeproject(u: Float(u), v: Float(v), depth: row[u], k)
                n += 1; sx += Double(p.x); sy += Double(p.y); sz += Double(p.z)
            }
        }
        guard n > 0 else { return PlaneMoments(count: 0, centroid: .zero) }
        let c = SIMD3<Float>(Float(sx / Double(n)), Float(sy / Double(n)), Float(sz / Double(n)))
        var m = PlaneMoments(count: n, centroid: c)
        for v in roi.y..<(roi.y + roi.height) {
            let row = depth.row(v, as: Float.self)
            for u in roi.x..<(roi.x + roi.width) where isValidDepth(row[u]) {
                let t = qualityDeproject(u: Float(u), v: Float(v), depth: row[u], k) - c
                m.xx += Double(t.x * t.x); m.xy += Double(t.x * t.y); m.xz += Double(t.x * t.z)
                m.yy += Double(t.y * t.y); m.yz += Double(t.y * t.z); m.zz += Double(t.z * t.z)
            }
        }
        return m
    }
}

/// A plane n·p + d = 0 with |n| = 1, in meters.
public struct FittedPlane: Sendable, Equatable {
    public var normal: SIMD3<Double>
    public var d: Double

    public init(normal: SIMD3<Double>, d: Double) { self.normal = normal; self.d = d }

    /// Signed distance of `p` from the plane (meters), positive on the side the normal points to.
    @inline(__always)
    public func distance(_ p: SIMD3<Float>) -> Double {
        normal.x * Double(p.x) + normal.y * Double(p.y) + normal.z * Double(p.z) + d
    }

    /// The least-squares plane through the points of `m`, by the Depth Quality Tool's method
    /// (`plane_from_points`, after ilikebigbits.com "plane from points"): of the three 2×2
    /// determinants of the covariance, the largest picks the axis the normal is solved along
    /// (that component is 1, the other two solve a 2×2 system), then normalized. Nil for fewer
    /// than 3 points or when no determinant is positive (the points span no plane).
    public static func fit(_ m: PlaneMoments) -> FittedPlane? {
        guard m.count >= 3 else { return nil }
        let (xx, xy, xz, yy, yz, zz) = (m.xx, m.xy, m.xz, m.yy, m.yz, m.zz)
        let detX = yy * zz - yz * yz
        let detY = xx * zz - xz * xz
        let detZ = xx * yy - xy * xy
        let detMax = max(detX, detY, detZ)
        guard detMax > 0 else { return nil }
        let dir: SIMD3<Double>
        if detMax == detX {
            dir = SIMD3(1, (xz * yz - xy * zz) / detX, (xy * yz - xz * yy) / detX)
        } else if detMax == detY {
            dir = SIMD3((yz * xz - xy * zz) / detY, 1, (xy * xz - yz * xx) / detY)
        } else {
            dir = SIMD3((yz * xy - xz * yy) / detZ, (xz * xy - yz * xx) / detZ, 1)
        }
        let n = dir / (dir * dir).sum().squareRoot()
        let c = SIMD3<Double>(Double(m.centroid.x), Double(m.centroid.y), Double(m.centroid.z))
        return FittedPlane(normal: n, d: -(n * c).sum())
    }
}
