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

    /// The intrinsics the scene is rendered with: the design's default (docs/design/overview.md).
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

    /// Renders into existing buffers (same size; `scratch` depthFloat32) without allocating
    /// (after the first frame of a size: the static wall is cached per size, for the last 4 sizes).
    public func render(color: PixelBuffer, depth: PixelBuffer, scratch: PixelBuffer, time: Double) {
        precondition(depth.format == .depthFloat32)
        precondition(depth.width == color.width && depth.height == color.height)
        renderFrame(color: color, depth: depth, scratch: scratch, time: time)
    }

    /// Renders color only: the same bytes as `render(color:depth:scratch:time:)`, without the
    /// depth pass (color does not depend on the invalid band). `scratch` (depthFloat32, same size)
    /// is left holding unspecified values.
    public func render(color: PixelBuffer, scratch: PixelBuffer, time: Double) {
        renderFrame(color: color, depth: nil, scratch: scratch, time: time)
    }

    /// The static wall's color for one size, packed rows of `rgba8`, computed with the very
    /// expressions of the per-pixel renderer. Immutable once made, so shared freely.
    ///
    /// `@unchecked Sendable`: `color` (a raw pointer, not Sendable) is written only by `init`,
    /// before any other thread can see the object, and read-only after; `deinit` frees it.
    final class Background: @unchecked Sendable {
        let width: Int, height: Int
        let color: UnsafeMutablePointer<UInt8>

        init(width w: Int, height h: Int) {
            width = w; height = h
            color = .allocate(capacity: w * h * 4)
            let color = self.color
            let invW = 1 / Float(w), invH = 1 / Float(h)
            parallelRows(h) { rows in
                for v in rows {
                    let crow = color + v * w * 4
                    let ny = (Float(v) + 0.5) * invH
                    let checkerRow = Int(ny * 12)
                    for u in 0..<w {
                        let nx = (Float(u) + 0.5) * invW
                        // Wall: gradient, darkened on alternate checker cells (16 across, 12 down).
                        let dim: Float = (Int(nx * 16) + checkerRow) & 1 == 0 ? 1 : 0.7
                        let r = (70 + 150 * nx) * dim, g = (70 + 120 * ny) * dim, b = (190 - 90 * nx) * dim
                        // Every color lies in [0, 255] by construction: round without clamping.
                        crow[4 * u] = UInt8(truncatingIfNeeded: Int(r + 0.5))
                        crow[4 * u + 1] = UInt8(truncatingIfNeeded: Int(g + 0.5))
                        crow[4 * u + 2] = UInt8(truncatingIfNeeded: Int(b + 0.5))
                        crow[4 * u + 3] = 255
                    }
                }
            }
        }

        deinit { color.deallocate() }
    }

    /// The walls of the last few sizes rendered, shared by all scenes (a stored property would
    /// change this public struct's layout). A few MB at most.
    static let backgrounds = BackgroundCache()

    /// The last few `Background`s used, most recent first, behind a lock.
    final class BackgroundCache: Sendable {
        private let entries = Locked<[Background]>([])   // most recently used first
        static let capacity = 4

        func background(width: Int, height: Int) -> Background {
            entries.withLock { entries in
                if let i = entries.firstIndex(where: { $0.width == width && $0.height == height }) {
                    let b = entries.remove(at: i)
                    entries.insert(b, at: 0)
                    return b
                }
                let b = Background(width: width, height: height)
                entries.insert(b, at: 0)
                if entries.count > Self.capacity { entries.removeLast() }
                return b
            }
        }
    }

    /// Pixels of `0..<n` whose coordinate `i` may fall in `[lo, hi]`, grown by `margin` px on each
    /// side; all of `0..<n` when the bounds are not finite.
    @inline(__always)
    static func pixelSpan(_ lo: Double, _ hi: Double, _ n: Int, margin: Double = 2) -> Range<Int> {
        guard lo.isFinite, hi.isFinite else { return 0..<n }
        let a = max(0, min(Double(n), (lo - margin).rounded(.down)))
        let b = max(0, min(Double(n), (hi + margin).rounded(.up) + 1))
        return Int(a)..<max(Int(a), Int(b))
    }

    /// Where each moving object may cover pixels (rows, columns), conservatively: pixel rectangles
    /// grown by 2 px beyond the exact extents, so Float rounding in the per-pixel tests cannot escape.
    /// Outside them a pixel is wall.
    static func objectBounds(_ pose: Pose, _ k: CameraIntrinsics, width w: Int, height h: Int)
        -> [(rows: Range<Int>, cols: Range<Int>)] {
        let W = Double(w), H = Double(h)
        // Normalized coordinate n of pixel i is (i + 0.5) / n  ->  i = n·N − 0.5.
        func px(_ n: Float, _ N: Double) -> Double { Double(n) * N - 0.5 }
        // Disc: |ny − dcy| ≤ R, |nx − dcx|·aspect ≤ R.
        let R = Double(discRadius), aspect = W / H
        let dcx = Double(pose.discCenter.x), dcy = Double(pose.discCenter.y)
        let disc = (rows: pixelSpan((dcy - R) * H - 0.5, (dcy + R) * H - 0.5, h),
                    cols: pixelSpan((dcx - R / aspect) * W - 0.5, (dcx + R / aspect) * W - 0.5, w))
        // Sphere: the planes through the camera tangent to it bound its silhouette:
        // x = m·z with m = (cx·cz ± r·√(cx² + cz² − r²)) / (cz² − r²); the same for y.
        let c = pose.sphereCenter, r = Double(sphereRadius)
        let sx = Double(c.x), sy = Double(c.y), sz = Double(c.z)
        let sphere: (rows: Range<Int>, cols: Range<Int>)
        if sz > r * 1.01 {
            let d = sz * sz - r * r
            func slopes(_ a: Double) -> (Double, Double) {
                let q = r * max(0, a * a + d).squareRoot()
                return ((a * sz - q) / d, (a * sz + q) / d)
            }
            let (mx0, mx1) = slopes(sx), (my0, my1) = slopes(sy)
            let fx = Double(k.fx), fy = Double(k.fy), kcx = Double(k.cx), kcy = Double(k.cy)
            sphere = (rows: pixelSpan(kcy + fy * my0, kcy + fy * my1, h),
                      cols: pixelSpan(kcx + fx * mx0, kcx + fx * mx1, w))
        } else {
            sphere = (rows: 0..<h, cols: 0..<w)   // around or behind the camera: no shortcut
        }
        let b = pose.boxRect
        let box = (rows: pixelSpan(px(b.minY, H), px(b.maxY, H), h), cols: pixelSpan(px(b.minX, W), px(b.maxX, W), w))
        return [disc, sphere, box]
    }

    /// The renderer: the wall from the cache, then the disc, sphere and box each only inside its
    /// bounds (nearest surface wins, as if drawn per pixel in that order), then the invalid band
    /// only where a depth jump can be (near the objects). Bit-identical to drawing every pixel.
    private func renderFrame(color: PixelBuffer, depth: PixelBuffer?, scratch: PixelBuffer, time: Double) {
        let w = color.width, h = color.height
        precondition(color.format == .rgba8 && scratch.format == .depthFloat32)
        precondition(scratch.width == w && scratch.height == h)
        let k = Self.intrinsics(width: w, height: h)
        let pose = Self.pose(at: time)
        let background = Self.backgrounds.background(width: w, height: h)
        let bounds = Self.objectBounds(pose, k, width: w, height: h)
        let discRows = bounds[0].rows, discCols = bounds[0].cols
        let sphRows = bounds[1].rows, sphCols = bounds[1].cols
        let boxRows = bounds[2].rows, boxCols = bounds[2].cols
        let c = pose.sphereCenter, r2 = Self.sphereRadius * Self.sphereRadius
        let cc = (c * c).sum() - r2
        let l0 = SIMD3<Float>(-0.4, -0.6, -0.7)
        let light = l0 / (l0 * l0).sum().squareRoot()
        let aspect = Float(w) / Float(h)
        let invW = 1 / Float(w), invH = 1 / Float(h)
        let discR2 = Self.discRadius * Self.discRadius
        // Statics are lazily initialized globals: read them once, not per pixel.
        let wallDepth = Self.wallDepth, discDepth = Self.discDepth, boxDepth = Self.boxDepth
        let (discR, discG, discB) = (Self.discColor.x, Self.discColor.y, Self.discColor.z)
        let (boxR, boxG, boxB) = (Self.boxColor.x, Self.boxColor.y, Self.boxColor.z)
        let (sphR, sphG, sphB) = (Float(Self.sphereColor.x), Float(Self.sphereColor.y), Float(Self.sphereColor.z))
        let invRadius = 1 / Self.sphereRadius
        let (lx, ly, lz) = (light.x, light.y, light.z)
        let (sx, sy, sz) = (c.x, c.y, c.z)
        let box = pose.boxRect, dcx = pose.discCenter.x, dcy = pose.discCenter.y
        let cx = k.cx, cy = k.cy, invFx = 1 / k.fx, invFy = 1 / k.fy
        let wall = background.color
        let fullScratch = depth != nil
        // Pass 1: geometry (nearest surface wins) and color.
        parallelRows(h) { rows in
            for v in rows {
                let crow = color.row(v, as: UInt8.self), drow = scratch.row(v, as: Float.self)
                (crow as UnsafeMutablePointer<UInt8>).update(from: wall + v * w * 4, count: w * 4)
                let inDisc = discRows.contains(v), inSph = sphRows.contains(v), inBox = boxRows.contains(v)
                if fullScratch {
                    // The depth pass reads scratch near the objects on rows v−1...v+1, ±2 px beyond
                    // their columns grown by 2: fill that much of this row with the wall.
                    @inline(__always) func fill(_ objRows: Range<Int>, _ cols: Range<Int>) {
                        guard !objRows.isEmpty, !cols.isEmpty, objRows.lowerBound <= v + 2, objRows.upperBound >= v - 1 else { return }
                        let lo = max(0, cols.lowerBound - 4), hi = min(w, cols.upperBound + 4)
                        (drow + lo).update(repeating: wallDepth, count: hi - lo)
                    }
                    fill(discRows, discCols); fill(sphRows, sphCols); fill(boxRows, boxCols)
                } else {
                    // Only the objects' z-tests read scratch.
                    if inDisc { (drow + discCols.lowerBound).update(repeating: wallDepth, count: discCols.count) }
                    if inSph { (drow + sphCols.lowerBound).update(repeating: wallDepth, count: sphCols.count) }
                    if inBox { (drow + boxCols.lowerBound).update(repeating: wallDepth, count: boxCols.count) }
                }
                let ny = (Float(v) + 0.5) * invH
                if inDisc {
                    let ey = ny - dcy, ey2 = ey * ey
                    for u in discCols {
                        let nx = (Float(u) + 0.5) * invW
                        let ex = (nx - dcx) * aspect
                        // First object drawn over the wall, which it is always in front of.
                        if ex * ex + ey2 <= discR2 {
                            drow[u] = discDepth
                            crow[4 * u] = discR; crow[4 * u + 1] = discG; crow[4 * u + 2] = discB
                        }
                    }
                }
                if inSph {
                    // Sphere: |t·ray − C| = R with ray = (rx, ry, 1), so z = t.
                    let ry = (Float(v) - cy) * invFy
                    @inline(__always) func hit(_ u: Int, _ rx: Float, _ t: Float) {
                        drow[u] = t
                        let nxs = (rx * t - sx) * invRadius, nys = (ry * t - sy) * invRadius, nzs = (t - sz) * invRadius
                        let shade = 0.35 + 0.65 * max(0, nxs * lx + nys * ly + nzs * lz)
                        let r = sphR * shade, g = sphG * shade, b = sphB * shade
                        // In [0, 255] by construction: round without clamping.
                        crow[4 * u] = UInt8(truncatingIfNeeded: Int(r + 0.5))
                        crow[4 * u + 1] = UInt8(truncatingIfNeeded: Int(g + 0.5))
                        crow[4 * u + 2] = UInt8(truncatingIfNeeded: Int(b + 0.5))
                    }
                    // Eight pixels at a time, lane by lane the same IEEE operations as the scalar
                    // loop below (Float(u) + k is exact below 2^24), so the same bits.
                    typealias V = SIMD8<Float>
                    var u = sphCols.lowerBound
                    let lanes = V(0, 1, 2, 3, 4, 5, 6, 7), ry2 = ry * ry, rysy = ry * sy
                    while u + 8 <= sphCols.upperBound {
                        let rx = (V(repeating: Float(u)) + lanes - cx) * invFx
                        let qa = rx * rx + ry2 + 1
                        let qb = -2 * (rx * sx + rysy + sz)
                        let disc = qb * qb - 4 * qa * cc
                        let onSphere = disc .>= 0
                        if any(onSphere) {
                            let t = (-qb - disc.replacing(with: 0, where: .!onSphere).squareRoot()) / (2 * qa)
                            for i in 0..<8 where onSphere[i] {
                                if t[i] > 0, t[i] < drow[u + i] { hit(u + i, rx[i], t[i]) }
                            }
                        }
                        u += 8
                    }
                    while u < sphCols.upperBound {
                        let rx = (Float(u) - cx) * invFx
                        let qa = rx * rx + ry * ry + 1
                        let qb = -2 * (rx * sx + ry * sy + sz)
                        let disc = qb * qb - 4 * qa * cc
                        if disc >= 0 {
                            let t = (-qb - disc.squareRoot()) / (2 * qa)
                            if t > 0, t < drow[u] { hit(u, rx, t) }
                        }
                        u += 1
                    }
                }
                if inBox, ny >= box.minY && ny < box.maxY {
                    for u in boxCols {
                        let nx = (Float(u) + 0.5) * invW
                        if nx >= box.minX, nx < box.maxX, boxDepth < drow[u] {
                            drow[u] = boxDepth
                            crow[4 * u] = boxR; crow[4 * u + 1] = boxG; crow[4 * u + 2] = boxB
                        }
                    }
                }
            }
        }
        color.markModified()
        guard let depth else { return }
        // Pass 2: invalid band on the far side of depth edges: a pixel is a hole when the window
        // (±2 px in its row, ±1 px in the rows above and below) holds depth nearer by more than
        // `edgeJump`. Away from the objects (bounds grown by the window) everything is wall, so
        // depth is the wall's: only the columns near objects of rows v−1...v+1 are tested.
        let jump = Self.edgeJump
        /// The window test for columns `cols` of row `v`.
        @inline(__always) func bandRow(_ v: Int, _ cols: Range<Int>, _ r: UnsafeMutablePointer<Float>, _ out: UnsafeMutablePointer<Float>) {
            // Rows above and below (±1 px); a missing one is skipped (reads as the row itself,
            // which the ±2 px window of row v already covers).
            let above = scratch.row(v > 0 ? v - 1 : v, as: Float.self)
            let below = scratch.row(v + 1 < h ? v + 1 : v, as: Float.self)
            // Interior columns: the whole window is inside the row; depths are positive and
            // never NaN, so min is exact in any order.
            let iL = min(max(cols.lowerBound, 2), cols.upperBound)
            let iU = max(iL, min(cols.upperBound, w - 2))
            for x in iL..<iU {
                let a = min(min(above[x - 1], above[x]), above[x + 1])
                let b = min(min(below[x - 1], below[x]), below[x + 1])
                let m = min(min(min(r[x - 2], r[x - 1]), min(r[x + 1], r[x + 2])), r[x])
                let t = min(min(a, b), m)
                out[x] = t < r[x] - jump ? 0 : r[x]
            }
            @inline(__always) func edge(_ x: Int) {
                var m = r[x]
                if x > 0 { m = min(min(m, r[x - 1]), min(above[x - 1], below[x - 1])) }
                if x > 1 { m = min(m, r[x - 2]) }
                if x + 1 < w { m = min(min(m, r[x + 1]), min(above[x + 1], below[x + 1])) }
                if x + 2 < w { m = min(m, r[x + 2]) }
                let t = min(m, min(above[x], below[x]))
                out[x] = t < r[x] - jump ? 0 : r[x]
            }
            for x in cols.lowerBound..<iL { edge(x) }
            for x in iU..<cols.upperBound { edge(x) }
        }
        parallelRows(h) { rows in
            for v in rows {
                let r = scratch.row(v, as: Float.self), out = depth.row(v, as: Float.self)
                // Columns of the objects on rows v−1...v+1, grown by 2 px: up to 3 intervals, merged.
                var spans: (Range<Int>, Range<Int>, Range<Int>) = (0..<0, 0..<0, 0..<0)
                @inline(__always) func near(_ objRows: Range<Int>, _ cols: Range<Int>) -> Range<Int> {
                    guard !objRows.isEmpty, !cols.isEmpty, objRows.lowerBound <= v + 1, objRows.upperBound >= v else { return 0..<0 }
                    return max(0, cols.lowerBound - 2)..<min(w, cols.upperBound + 2)
                }
                spans = (near(discRows, discCols), near(sphRows, sphCols), near(boxRows, boxCols))
                // Sort by lower bound (empty ones last), then merge overlapping or touching ones.
                @inline(__always) func before(_ a: Range<Int>, _ b: Range<Int>) -> Bool {
                    !a.isEmpty && (b.isEmpty || a.lowerBound < b.lowerBound)
                }
                if before(spans.1, spans.0) { swap(&spans.0, &spans.1) }
                if before(spans.2, spans.1) { swap(&spans.1, &spans.2) }
                if before(spans.1, spans.0) { swap(&spans.0, &spans.1) }
                var x = 0   // columns before x are done
                @inline(__always) func run(_ span: Range<Int>) {
                    guard !span.isEmpty else { return }
                    let lo = max(x, span.lowerBound), hi = max(lo, span.upperBound)
                    (out + x).update(repeating: wallDepth, count: lo - x)   // the window holds wall only
                    bandRow(v, lo..<hi, r, out)
                    x = hi
                }
                run(spans.0); run(spans.1); run(spans.2)
                (out + x).update(repeating: wallDepth, count: w - x)
            }
        }
        depth.markModified()
    }
}
