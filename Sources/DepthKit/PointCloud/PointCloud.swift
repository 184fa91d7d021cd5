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

    /// Unprojects every valid depth pixel (docs/design/kernels.md, point cloud): z = d, x = (u − cx)·z/fx,
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
        let du = (0..<wd).map { Float($0) - k.cx }   // exactly the (u − cx) of the formula
        // Channel offsets and pixel stride of the color image; nil = white.
        var layout: (r: Int, g: Int, b: Int, stride: Int)?
        var xc: [Int] = []
        if let c = color {
            switch c.format {
            case .rgba8: layout = (0, 1, 2, 4)
            case .bgra8: layout = (2, 1, 0, 4)
            case .rgb8: layout = (0, 1, 2, 3)
            case .gray8: layout = (0, 0, 0, 1)
            case .gray16, .depthFloat16, .depthFloat32, .disparityFloat16, .disparityFloat32: preconditionFailure("PointCloud.unproject: color must be 8-bit, got \(c.format)")
            }
            xc = (0..<wd).map { min(c.width - 1, $0 * c.width / wd) }
        }
        let white = SIMD3<UInt8>(255, 255, 255)
        for v in 0..<hd {
            let row = d.row(v, as: Float.self)
            let dv = Float(v) - k.cy
            var crow: UnsafeMutablePointer<UInt8>?
            if let c = color { crow = c.row(min(c.height - 1, v * c.height / hd), as: UInt8.self) }
            for u in 0..<wd {
                let z = row[u]
                guard isValidDepth(z) else { continue }
                positions.append(SIMD3(du[u] * z / k.fx, dv * z / k.fy, z))
                if let p = crow, let l = layout {
                    let o = xc[u] * l.stride
                    colors.append(SIMD3(p[o + l.r], p[o + l.g], p[o + l.b]))
                } else {
                    colors.append(white)
                }
            }
        }
        return PointCloud(positions: positions, colors: colors)
    }

    /// Unprojects every valid depth pixel with the depth camera's intrinsics and colors it from the
    /// color camera: each point is moved into the color camera (p_c = R·p + t) and projected with
    /// its intrinsics, and takes the color pixel it lands on (nearest: ⌊x + ½⌋, ⌊y + ½⌋); a point
    /// that lands outside the color image, or behind it, is black. Positions stay in the depth
    /// camera's frame, as `unproject(depth:color:)`'s do. For a registered pair (no extrinsics,
    /// intrinsics scaled) prefer `unproject(depth:color:)`, which this equals up to rounding.
    public static func unproject(depth: DepthData, color: PixelBuffer, calibration: RGBDCalibration) -> PointCloud {
        let d = depth.depthFloat32()
        var k = calibration.depth.intrinsics
        if k.width != d.width || k.height != d.height { k = k.scaled(toWidth: d.width, height: d.height) }
        var kc = calibration.color.intrinsics
        if kc.width != color.width || kc.height != color.height { kc = kc.scaled(toWidth: color.width, height: color.height) }
        let layout: (r: Int, g: Int, b: Int, stride: Int)
        switch color.format {
        case .rgba8: layout = (0, 1, 2, 4)
        case .bgra8: layout = (2, 1, 0, 4)
        case .rgb8: layout = (0, 1, 2, 3)
        case .gray8: layout = (0, 0, 0, 1)
        case .gray16, .depthFloat16, .depthFloat32, .disparityFloat16, .disparityFloat32: preconditionFailure("PointCloud.unproject: color must be 8-bit, got \(color.format)")
        }
        let e = calibration.depthToColor
        var positions: [SIMD3<Float>] = [], colors: [SIMD3<UInt8>] = []
        positions.reserveCapacity(d.width * d.height); colors.reserveCapacity(d.width * d.height)
        for v in 0..<d.height {
            let row = d.row(v, as: Float.self)
            for u in 0..<d.width {
                let z = row[u]
                guard isValidDepth(z) else { continue }
                let p = k.unproject(u: Float(u), v: Float(v), depth: z)
                positions.append(p)
                let pc = e.apply(p)
                var c = SIMD3<UInt8>(0, 0, 0)
                if pc.z > 0 {
                    let q = kc.project(pc)
                    let fx = (q.x + 0.5).rounded(.down), fy = (q.y + 0.5).rounded(.down)
                    if fx >= 0 && fy >= 0 && fx < Float(color.width) && fy < Float(color.height) {   // false for NaN too
                        let px = color.row(Int(fy), as: UInt8.self) + Int(fx) * layout.stride
                        c = SIMD3(px[layout.r], px[layout.g], px[layout.b])
                    }
                }
                colors.append(c)
            }
        }
        return PointCloud(positions: positions, colors: colors)
    }
}
