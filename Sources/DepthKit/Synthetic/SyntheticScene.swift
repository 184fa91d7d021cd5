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
        let cc = dot3(c, c) - r2
        let light = normalize3(SIMD3<Float>(-0.4, -0.6, -0.7))
        let aspect = Float(w) / Float(h)
        let invW = 1 / Float(w), invH = 1 / Float(h)
        let discR2 = Self.discRadius * Self.discRadius
        // Pass 1: geometry (nearest surface wins) and color.
        parallelRows(h) { rows in
            for v in rows {
                let crow = color.row(v, as: UInt8.self), drow = scratch.row(v, as: Float.self)
                let ny = (Float(v) + 0.5) * invH
                let ry = (Float(v) - k.cy) / k.fy
                for u in 0..<w {
                    let nx = (Float(u) + 0.5) * invW
                    var z = Self.wallDepth
                    // Wall: gradient, darkened on alternate checker cells (16 across, 12 down).
                    let checker = (Int(nx * 16) + Int(ny * 12)) & 1 == 0
                    let dim: Float = checker ? 1 : 0.7
                    var rgb = SIMD3<Float>(70 + 150 * nx, 70 + 120 * ny, 190 - 90 * nx) * dim
                    let ex = (nx - pose.discCenter.x) * aspect, ey = ny - pose.discCenter.y
                    if ex * ex + ey * ey <= discR2, Self.discDepth < z {
                        z = Self.discDepth; rgb = SIMD3<Float>(Self.discColor)
                    }
                    let ray = SIMD3<Float>((Float(u) - k.cx) / k.fx, ry, 1)
                    let a = dot3(ray, ray), b = -2 * dot3(ray, c)
                    let disc = b * b - 4 * a * cc
                    if disc >= 0 {
                        let t = (-b - disc.squareRoot()) / (2 * a)
                        if t > 0, t < z {
                            z = t
                            let n = (ray * t - c) / Self.sphereRadius
                            rgb = SIMD3<Float>(Self.sphereColor) * (0.35 + 0.65 * max(0, dot3(n, light)))
                        }
                    }
                    if pose.boxRect.contains(x: nx, y: ny), Self.boxDepth < z {
                        z = Self.boxDepth; rgb = SIMD3<Float>(Self.boxColor)
                    }
                    drow[u] = z
                    let q = (rgb + 0.5).clamped(lowerBound: .zero, upperBound: SIMD3(repeating: 255))
                    crow[4 * u] = UInt8(q.x); crow[4 * u + 1] = UInt8(q.y); crow[4 * u + 2] = UInt8(q.z); crow[4 * u + 3] = 255
                }
            }
        }
        // Pass 2: invalid band on the far side of depth edges.
        let jump = Self.edgeJump
        parallelRows(h) { rows in
            for v in rows {
                let out = depth.row(v, as: Float.self)
                for u in 0..<w {
                    let d = scratch.row(v, as: Float.self)[u]
                    var hole = false
                    for dy in -1...1 where !hole {
                        let y = v + dy
                        guard y >= 0 && y < h else { continue }
                        let nrow = scratch.row(y, as: Float.self)
                        for dx in -2...2 where (dy == 0 || abs(dx) <= 1) {
                            let x = u + dx
                            if x >= 0 && x < w && nrow[x] < d - jump { hole = true; break }
                        }
                    }
                    out[u] = hole ? 0 : d
                }
            }
        }
        color.markModified()
        depth.markModified()
    }
}

@inline(__always) private func dot3(_ a: SIMD3<Float>, _ b: SIMD3<Float>) -> Float { (a * b).sum() }
@inline(__always) private func normalize3(_ a: SIMD3<Float>) -> SIMD3<Float> { a / dot3(a, a).squareRoot() }
