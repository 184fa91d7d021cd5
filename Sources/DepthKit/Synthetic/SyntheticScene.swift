import Foundation

/// A rectangle in normalized image coordinates: x in [0, 1) left to right, y in [0, 1) top to bottom.
public struct NormalizedRect: Hashable, Sendable {
    public var minX: Float, minY: Float, maxX: Float, maxY: Float
    public init(minX: Float, minY: Float, maxX: Float, maxY: Float) {
        self.minX = minX; self.minY = minY; self.maxX = maxX; self.maxY = maxY
    }
    public func contains(x: Float, y: Float) -> Bool { x >= minX && x < maxX && y >= minY && y < maxY }
    /// The pixel rectangle whose pixel centers lie inside, for an image of `width`x`height`.
    public func pixels(width: Int, height: Int) -> (x: Range<Int>, y: Range<Int>) {
        func r(_ lo: Float, _ hi: Float, _ n: Int) -> Range<Int> {
            let a = Int((lo * Float(n) - 0.5).rounded(.up)), b = Int((hi * Float(n) - 0.5).rounded(.up))
            return max(0, a)..<min(n, max(a, b))
        }
        return (r(minX, maxX, width), r(minY, maxY, height))
    }
}

/// A synthetic RGB-D scene with known geometry, for the viewer without a camera and for tests.
///
/// Seen by a camera with `CameraIntrinsics.default` at the origin (x right, y down, z forward):
/// - a back wall at `wallDepth` (3 m), checker-and-gradient textured;
/// - a box face at `boxDepth` (1 m) covering `boxRect` at time 0, flat red; it slides sideways with time;
/// - a sphere (`sphereCenter`, `sphereRadius`) around 1.8 m, green and shaded; it orbits with time;
/// - a disc at `discDepth` (2 m), flat blue, centered at `discCenter`; it bobs up and down with time.
///
/// Like a structured-light camera, depth is invalid (0) in a band of 1 px vertically and 2 px
/// horizontally on the far side of every depth jump larger than `edgeJump` (0.3 m). Color has no holes.
public struct SyntheticScene: Sendable {
    public static let wallDepth: Float = 3.0
    public static let boxDepth: Float = 1.0
    public static let discDepth: Float = 2.0
    /// The box face at time 0.
    public static let boxRect = NormalizedRect(minX: 0.12, minY: 0.55, maxX: 0.40, maxY: 0.88)
    /// Disc center in normalized image coordinates at time 0; its radius is in units of the image height.
    public static let discCenter = SIMD2<Float>(0.76, 0.74)
    public static let discRadius: Float = 0.12
    /// Sphere center in camera space at time 0 (meters), and its radius.
    public static let sphereCenter = SIMD3<Float>(0.45, -0.25, 1.8)
    public static let sphereRadius: Float = 0.3
    /// Depth jumps larger than this get an invalid band on their far side.
    public static let edgeJump: Float = 0.3

    public static let boxColor: SIMD3<UInt8> = [220, 50, 40]
    public static let discColor: SIMD3<UInt8> = [40, 90, 230]
    public static let sphereColor: SIMD3<UInt8> = [50, 200, 70]

    public init() {}

    /// The intrinsics the scene is rendered with: DESIGN.md's default.
    public static func intrinsics(width: Int, height: Int) -> CameraIntrinsics { .default(width: width, height: height) }

    /// Where the moving objects are at `time` (seconds).
    public struct Pose: Sendable {
        public var boxRect: NormalizedRect
        public var discCenter: SIMD2<Float>
        public var sphereCenter: SIMD3<Float>
    }

    public static func pose(at time: Double) -> Pose {
        let t = Float(time)
        let dx = 0.06 * sin(0.5 * t)
        var box = boxRect
        box.minX += dx; box.maxX += dx
        let a = Float(0.8) * t, r = sphereCenter.x
        let sphere = SIMD3<Float>(r * cos(a), sphereCenter.y, sphereCenter.z + r * sin(a))
        let disc = SIMD2<Float>(discCenter.x, discCenter.y + 0.04 * sin(1.3 * t))
        return Pose(boxRect: box, discCenter: disc, sphereCenter: sphere)
    }

    /// Renders a frame: `rgba8` color and `depthFloat32` depth (meters) of `width`x`height`.
    public func render(width: Int, height: Int, time: Double = 0) -> RGBDFrame {
        let color = PixelBuffer(width: width, height: height, format: .rgba8)
        let depth = PixelBuffer(width: width, height: height, format: .depthFloat32)
        let scratch = PixelBuffer(width: width, height: height, format: .depthFloat32)
        render(color: color, depth: depth, scratch: scratch, time: time)
        let k = Self.intrinsics(width: width, height: height)
        return RGBDFrame(color: color, depth: DepthData(map: depth, accuracy: .absolute, intrinsics: k), timestamp: time)
    }

    /// Renders into existing buffers (same size; `scratch` depthFloat32) without allocating.
    public func render(color: PixelBuffer, depth: PixelBuffer, scratch: PixelBuffer, time: Double) {
        let w = color.width, h = color.height
        precondition(color.format == .rgba8 && depth.format == .depthFloat32 && scratch.format == .depthFloat32)
        precondition(depth.width == w && depth.height == h && scratch.width == w && scratch.height == h)
        let k = Self.intrinsics(width: w, height: h)
        let pose = Self.pose(at: time)
        let c = pose.sphereCenter, r2 = Self.sphereRadius * Self.sphereRadius
        let cc = (c * c).sum() - r2
        let l0 = SIMD3<Float>(-0.4, -0.6, -0.7)
        let light = l0 / (l0 * l0).sum().squareRoot()
        let aspect = Float(w) / Float(h)
        let invW = 1 / Float(w), invH = 1 / Float(h)
        let discR2 = Self.discRadius * Self.discRadius
        // Statics are lazily initialized globals: read them once, not per pixel. The inner loop is
        // scalar Float math on purpose (it drives the live viewer at 60 Hz).
        let wallDepth = Self.wallDepth, discDepth = Self.discDepth, boxDepth = Self.boxDepth
        let (discR, discG, discB) = (Float(Self.discColor.x), Float(Self.discColor.y), Float(Self.discColor.z))
        let (boxR, boxG, boxB) = (Float(Self.boxColor.x), Float(Self.boxColor.y), Float(Self.boxColor.z))
        let (sphR, sphG, sphB) = (Float(Self.sphereColor.x), Float(Self.sphereColor.y), Float(Self.sphereColor.z))
        let invRadius = 1 / Self.sphereRadius
        let (lx, ly, lz) = (light.x, light.y, light.z)
        let (sx, sy, sz) = (c.x, c.y, c.z)
        let box = pose.boxRect, dcx = pose.discCenter.x, dcy = pose.discCenter.y
        let cx = k.cx, cy = k.cy, invFx = 1 / k.fx, invFy = 1 / k.fy
        // Pass 1: geometry (nearest surface wins) and color.
        parallelRows(h) { rows in
            for v in rows {
                let crow = color.row(v, as: UInt8.self), drow = scratch.row(v, as: Float.self)
                let ny = (Float(v) + 0.5) * invH
                let ry = (Float(v) - cy) * invFy
                let checkerRow = Int(ny * 12)
                let ey = ny - dcy, ey2 = ey * ey
                let boxRow = ny >= box.minY && ny < box.maxY
                for u in 0..<w {
                    let nx = (Float(u) + 0.5) * invW
                    var z = wallDepth
                    // Wall: gradient, darkened on alternate checker cells (16 across, 12 down).
                    let dim: Float = (Int(nx * 16) + checkerRow) & 1 == 0 ? 1 : 0.7
                    var r = (70 + 150 * nx) * dim, g = (70 + 120 * ny) * dim, b = (190 - 90 * nx) * dim
                    let ex = (nx - dcx) * aspect
                    if ex * ex + ey2 <= discR2 { z = discDepth; r = discR; g = discG; b = discB }
                    // Sphere: |t·ray − C| = R with ray = (rx, ry, 1), so z = t.
                    let rx = (Float(u) - cx) * invFx
                    let qa = rx * rx + ry * ry + 1
                    let qb = -2 * (rx * sx + ry * sy + sz)
                    let disc = qb * qb - 4 * qa * cc
                    if disc >= 0 {
                        let t = (-qb - disc.squareRoot()) / (2 * qa)
                        if t > 0, t < z {
                            z = t
                            let nxs = (rx * t - sx) * invRadius, nys = (ry * t - sy) * invRadius, nzs = (t - sz) * invRadius
                            let shade = 0.35 + 0.65 * max(0, nxs * lx + nys * ly + nzs * lz)
                            r = sphR * shade; g = sphG * shade; b = sphB * shade
                        }
                    }
                    if boxRow, nx >= box.minX, nx < box.maxX, boxDepth < z { z = boxDepth; r = boxR; g = boxG; b = boxB }
                    drow[u] = z
                    // Every color above lies in [0, 255] by construction: round without clamping.
                    crow[4 * u] = UInt8(truncatingIfNeeded: Int(r + 0.5))
                    crow[4 * u + 1] = UInt8(truncatingIfNeeded: Int(g + 0.5))
                    crow[4 * u + 2] = UInt8(truncatingIfNeeded: Int(b + 0.5))
                    crow[4 * u + 3] = 255
                }
            }
        }
        // Pass 2: invalid band on the far side of depth edges: a pixel is a hole when the window
        // (±2 px in its row, ±1 px in the rows above and below) holds depth nearer by more than `edgeJump`.
        let jump = Self.edgeJump
        parallelRows(h) { rows in
            var near = [Float](repeating: 0, count: w)   // min over the window, per column
            var tmp = [Float](repeating: 0, count: w)
            for v in rows {
                // Rows above and below: ±1 px.
                for i in 0..<w { near[i] = .infinity }
                for y in [v - 1, v + 1] where y >= 0 && y < h {
                    let r = scratch.row(y, as: Float.self)
                    for x in 0..<w {
                        var m = r[x]
                        if x > 0 { m = min(m, r[x - 1]) }
                        if x + 1 < w { m = min(m, r[x + 1]) }
                        near[x] = min(near[x], m)
                    }
                }
                let r = scratch.row(v, as: Float.self)
                for x in 0..<w {
                    var m = r[x]
                    if x > 0 { m = min(m, r[x - 1]) }
                    if x > 1 { m = min(m, r[x - 2]) }
                    if x + 1 < w { m = min(m, r[x + 1]) }
                    if x + 2 < w { m = min(m, r[x + 2]) }
                    tmp[x] = min(near[x], m)
                }
                let out = depth.row(v, as: Float.self)
                for x in 0..<w { out[x] = tmp[x] < r[x] - jump ? 0 : r[x] }
            }
        }
        color.markModified()
        depth.markModified()
    }
}
