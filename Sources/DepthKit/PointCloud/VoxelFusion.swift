/// Fuses many frames' points into one world-space cloud: a voxel grid of `voxelSize` meters that
/// keeps one point per occupied cell, the mean of the positions and of the colors that fell in it.
/// Memory grows with the cells occupied, not with the frames added (`export-ply --fuse`).
///
/// A point's cell is ⌊p / voxelSize⌋ per axis (world coordinates in meters, computed in Double);
/// cells are written in ascending (x, y, z) cell order, so the output does not depend on the order
/// the points came in except through floating-point summation.
public struct VoxelFusion: Sendable {
    public let voxelSize: Double
    private var cellIndex: [SIMD3<Int32>: Int] = [:]
    private var sums: [SIMD3<Double>] = []
    private var colorSums: [SIMD3<UInt32>] = []
    private var counts: [UInt32] = []
    /// Points added in all.
    public private(set) var pointsAdded = 0
    /// Points dropped because their cell is beyond ±2³¹ voxels (a far outlier or a bad pose).
    public private(set) var pointsOutOfRange = 0

    /// - Parameter voxelSize: cell edge in meters (> 0, finite).
    public init(voxelSize: Double) throws {
        guard voxelSize > 0, voxelSize.isFinite else {
            throw DepthKitError.invalidArgument("--voxel must be a positive number of meters, got \(voxelSize)")
        }
        self.voxelSize = voxelSize
    }

    /// Occupied cells (the points the fused cloud will have).
    public var cellCount: Int { counts.count }

    /// Adds a camera-space cloud seen from `pose` (world from camera, optical frame).
    public mutating func add(_ cloud: PointCloud, pose: CameraPose) {
        let r = pose.rotation.rows, t = pose.translation
        let r0 = SIMD3(r[0][0], r[0][1], r[0][2]), r1 = SIMD3(r[1][0], r[1][1], r[1][2]), r2 = SIMD3(r[2][0], r[2][1], r[2][2])
        let inv = 1 / voxelSize
        let limit = Double(Int32.max)
        for i in 0..<cloud.count {
            let p = SIMD3<Double>(Double(cloud.positions[i].x), Double(cloud.positions[i].y), Double(cloud.positions[i].z))
            let w = SIMD3((r0 * p).sum(), (r1 * p).sum(), (r2 * p).sum()) + t
            let c = (w * inv).rounded(.down)
            guard abs(c.x) < limit, abs(c.y) < limit, abs(c.z) < limit else { pointsOutOfRange += 1; continue }
            let key = SIMD3<Int32>(Int32(c.x), Int32(c.y), Int32(c.z))
            let color = SIMD3<UInt32>(UInt32(cloud.colors[i].x), UInt32(cloud.colors[i].y), UInt32(cloud.colors[i].z))
            if let k = cellIndex[key] {
                sums[k] += w
                colorSums[k] &+= color
                counts[k] += 1
            } else {
                cellIndex[key] = counts.count
                sums.append(w)
                colorSums.append(color)
                counts.append(1)
            }
            pointsAdded += 1
        }
    }

    /// The fused cloud: one point per cell, the mean position (as Float) and the mean color
    /// (rounded to nearest), in ascending cell order — or, with `sorted` false, in the order the
    /// cells were first occupied (no sort: the viewer shows a grid that is still growing).
    public func cloud(sorted: Bool = true) -> PointCloud {
        var positions: [SIMD3<Float>] = [], colors: [SIMD3<UInt8>] = []
        positions.reserveCapacity(counts.count); colors.reserveCapacity(counts.count)
        func append(_ k: Int) {
            let n = Double(counts[k])
            let m = sums[k] / n
            positions.append(SIMD3(Float(m.x), Float(m.y), Float(m.z)))
            let c = colorSums[k], h = counts[k] / 2
            colors.append(SIMD3(UInt8((c.x + h) / counts[k]), UInt8((c.y + h) / counts[k]), UInt8((c.z + h) / counts[k])))
        }
        if sorted {
            let keys = cellIndex.sorted { a, b in
                a.key.x != b.key.x ? a.key.x < b.key.x : (a.key.y != b.key.y ? a.key.y < b.key.y : a.key.z < b.key.z)
            }
            for (_, k) in keys { append(k) }
        } else {
            for k in counts.indices { append(k) }
        }
        return PointCloud(positions: positions, colors: colors)
    }
}
