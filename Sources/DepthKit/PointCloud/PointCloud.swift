/// Colored points in the camera frame (x right, y down, z forward, meters).
public struct PointCloud: Equatable, Sendable {
    public var positions: [SIMD3<Float>]
    public var colors: [SIMD3<UInt8>]

    public init(positions: [SIMD3<Float>] = [], colors: [SIMD3<UInt8>] = []) {
        precondition(positions.count == colors.count, "one color a point")
        self.positions = positions
        self.colors = colors
    }

    public var count: Int { positions.count }

    /// Unprojects every valid depth pixel (DESIGN.md, Point cloud): z = d, x = (u − cx)·z/fx,
    /// y = (v − cy)·z/fy, in row-major order, invalid pixels skipped. The color is the color
    /// image's pixel at (⌊u·Wc/Wd⌋, ⌊v·Hc/Hd⌋); white without a color image.
    /// - Parameter intrinsics: defaults to the depth's own; scaled to the depth size if they refer to another.
    public static func unproject(depth: DepthData, color: PixelBuffer?, intrinsics: CameraIntrinsics? = nil) -> PointCloud {
        let d = depth.depthFloat32()
        let wd = d.width, hd = d.height
        var k = intrinsics ?? depth.intrinsics
        if k.width != wd || k.height != hd { k = k.scaled(toWidth: wd, height: hd) }
        var positions: [SIMD3<Float>] = [], colors: [SIMD3<UInt8>] = []
        positions.reserveCapacity(wd * hd); colors.reserveCapacity(wd * hd)
        let white = SIMD3<UInt8>(255, 255, 255)
        for v in 0..<hd {
            let row = d.row(v, as: Float.self)
            for u in 0..<wd {
                let z = row[u]
                guard isValidDepth(z) else { continue }
                positions.append(k.unproject(u: Float(u), v: Float(v), depth: z))
                guard let c = color else { colors.append(white); continue }
                let xc = min(c.width - 1, u * c.width / wd), yc = min(c.height - 1, v * c.height / hd)
                let p = c.rgba(x: xc, y: yc)
                colors.append(SIMD3(p.0, p.1, p.2))
            }
        }
        return PointCloud(positions: positions, colors: colors)
    }
}
