import CDepthKit

/// Where the 3D view orbits: computed on the CPU once per source change, not per frame.
extension PointCloud {
    /// The median of the valid depths (meters), nil when no sample is valid. For an even count,
    /// the lower middle value (a sample that exists, so a flat scene gives its exact depth).
    public static func medianDepth(_ depth: DepthData) -> Float? {
        let d = depth.depthFloat32()
        var valid: [Float] = []
        valid.reserveCapacity(d.width * d.height)
        for y in 0..<d.height {
            let row = d.row(y, as: Float.self)
            for x in 0..<d.width where isValidDepth(row[x]) { valid.append(row[x]) }
        }
        guard !valid.isEmpty else { return nil }
        let k = (valid.count - 1) / 2
        return valid.withUnsafeMutableBufferPointer { dl_select_float($0.baseAddress!, $0.count, k) }
    }

    /// The orbit pivot: the point on the depth camera's optical axis at the median valid depth,
    /// (0, 0, median). On the axis so that an orbit camera with yaw = pitch = roll = 0 and the
    /// pivot's distance (|pivot|) sits exactly at the depth camera looking along +z: the initial 3D
    /// view is the depth camera's own. nil when no depth is valid.
    public static func orbitPivot(depth: DepthData) -> SIMD3<Float>? {
        medianDepth(depth).map { SIMD3(0, 0, $0) }
    }
}
