import Foundation

/// What the measurements need besides the depth. docs/QUALITY.md ("Measuring") has every formula.
public struct MeasureSettings: Sendable, Equatable {
    /// The depth camera's intrinsics, for the depth map's size.
    public var intrinsics: CameraIntrinsics
    /// Heights within ± this of the floor count as floor, in meters; nil: 3 × the floor's RMS
    /// (its RANSAC inliers' or its region's points'), at least 1 mm.
    public var floorTolerance: Double?
    /// Two neighbouring pixels lie on one surface when their depths differ by at most this
    /// fraction of the nearer one, or their step repeats the step before it to within that (a
    /// grazing surface); clusters and pixel footprints use it.
    public var continuity: Float
    /// The box height is this percentile of the object's heights above the floor: a maximum that
    /// a few outlying pixels do not move.
    public var heightPercentile: Double
    /// How the floor is found when no floor region is given.
    public var ransac: RANSACSettings

    public init(intrinsics: CameraIntrinsics, floorTolerance: Double? = nil, continuity: Float = 0.03,
                heightPercentile: Double = 99, ransac: RANSACSettings = RANSACSettings()) {
        self.intrinsics = intrinsics; self.floorTolerance = floorTolerance; self.continuity = continuity
        self.heightPercentile = heightPercentile; self.ransac = ransac
    }
}

/// The plane the volume and box stand on.
public struct MeasureFloor: Sendable, Equatable {
    public enum Origin: String, Sendable, Equatable {
        /// The least-squares plane through the valid pixels of a region the caller picked on the floor.
        case region
        /// The dominant plane of the whole frame (`PlaneRANSAC`).
        case ransac
    }
    /// Facing the camera: `plane.distance(p)` is p's height above the floor.
    public var plane: FittedPlane
    public var origin: Origin
    /// Points the plane was fitted to (the region's valid pixels, or the RANSAC inliers).
    public var points: Int
    /// Their RMS distance from the plane, meters.
    public var rms: Double
    /// Heights within ± this count as floor, meters.
    public var tolerance: Double
}

/// A polygon's area on the plane through its points.
public struct AreaMeasurement: Sendable, Equatable {
    /// The area of the polygon's corners projected along their rays onto `plane`, m².
    public var areaM2: Double
    /// The least-squares plane through the valid pixels inside the polygon, facing the camera.
    public var plane: FittedPlane
    /// Pixels inside the polygon, and those with valid depth (the points fitted).
    public var pixels: Int
    public var points: Int
    /// The points' RMS distance from the plane, meters (how flat the surface is).
    public var rms: Double
    /// The polygon's corners on the plane (camera coordinates, meters), in the polygon's order.
    public var corners: [SIMD3<Double>]
}

/// The volume between the depth surface and the floor.
public struct VolumeMeasurement: Sendable, Equatable {
    /// Σ h · A over the pixels higher than the tolerance (a pile, a box, a bin's fill), m³.
    public var volumeM3: Double
    /// Σ |h| · A over the pixels lower than −tolerance (a cavity, an empty bin below its rim), m³.
    public var volumeBelowM3: Double
    public var floor: MeasureFloor
    /// Pixels that added to each.
    public var abovePixels: Int
    public var belowPixels: Int
    /// The region's pixels with valid depth (without a region: the two clusters' pixels).
    public var points: Int
}

/// The oriented bounding box of the object above the floor.
public struct BoxMeasurement: Sendable, Equatable {
    /// The sides of the minimum-area rectangle around the object's footprint on the floor
    /// (length ≥ width), and the height percentile above the floor, meters.
    public var lengthM: Double
    public var widthM: Double
    public var heightM: Double
    public var floor: MeasureFloor
    /// Pixels in the object (the largest connected cluster above the floor in the region).
    public var pixels: Int
    /// The rectangle's corners on the floor plane (camera coordinates, meters), in order around it.
    public var corners: [SIMD3<Double>]
}

/// Area, volume and box dimensions over one depth frame: pure functions, depthFloat32 meters and
/// the depth intrinsics in, numbers out. The viewer's pick tool and `depthlens measure` call these.
public enum DepthMeasure {
    /// The area of `polygon` (pixels) on the least-squares plane through the valid pixels inside it.
    public static func area(depth: PixelBuffer, intrinsics k: CameraIntrinsics, polygon: PixelPolygon) throws -> AreaMeasurement {
        let g = try DepthGrid(depth, k)
        try polygon.validate(width: g.width, height: g.height)
        let mask = polygon.mask(width: g.width, height: g.height)
        let pixels = mask.reduce(0) { $0 + ($1 ? 1 : 0) }
        let pts = g.points(mask)
        guard pts.count >= 3 else {
            throw DepthKitError.invalidArgument(pts.isEmpty ? "no valid depth inside the polygon \(polygon)"
                                                : "only \(pts.count) pixels with valid depth inside the polygon \(polygon); a plane needs 3")
        }
        guard let plane = FittedPlane.leastSquares(pts) else {
            throw DepthKitError.invalidArgument("the points inside the polygon \(polygon) lie on a line; they span no plane")
        }
        var corners: [SIMD3<Double>] = []
        for v in polygon.vertices {
            guard let c = plane.intersect(ray: g.ray(v.x, v.y)) else {
                throw DepthKitError.invalidArgument("the ray through the polygon's corner (\(PixelPolygon.format(v.x)),\(PixelPolygon.format(v.y))) does not meet the fitted plane in front of the camera")
            }
            corners.append(c)
        }
        var s = SIMD3<Double>.zero
        for i in corners.indices { s += PlaneRANSAC.cross(corners[i], corners[(i + 1) % corners.count]) }
        let area = abs((s * plane.normal).sum()) / 2
        return AreaMeasurement(areaM2: area, plane: plane, pixels: pixels, points: pts.count, rms: plane.rms(pts), corners: corners)
    }

    /// The area of the polygon through `corners` (3D points in order, e.g. picked on a point list
    /// that has no depth pixels) on their own least-squares plane: each corner projected onto it
    /// along the plane's normal, |n · ½ Σ cᵢ × cᵢ₊₁|. `pixels` is 0, `points` the corners, `rms`
    /// their distance from the plane.
    public static func area(corners points: [SIMD3<Float>]) throws -> AreaMeasurement {
        guard points.count >= 3 else {
            throw DepthKitError.invalidArgument("an area needs 3 or more corners, got \(points.count)")
        }
        guard let plane = FittedPlane.leastSquares(points) else {
            throw DepthKitError.invalidArgument("the \(points.count) corners lie on a line; they span no plane")
        }
        let corners = points.map { p -> SIMD3<Double> in
            let q = SIMD3<Double>(p)
            return q - plane.distance(p) * plane.normal
        }
        var s = SIMD3<Double>.zero
        for i in corners.indices { s += PlaneRANSAC.cross(corners[i], corners[(i + 1) % corners.count]) }
        return AreaMeasurement(areaM2: abs((s * plane.normal).sum()) / 2, plane: plane, pixels: 0, points: points.count,
                               rms: plane.rms(points), corners: corners)
    }

    /// The floor: the least-squares plane through the valid pixels of `region` when one is given,
    /// else the dominant plane of the whole frame by RANSAC.
    public static func floor(depth: PixelBuffer, settings s: MeasureSettings, region: PixelPolygon? = nil) throws -> MeasureFloor {
        let g = try DepthGrid(depth, s.intrinsics)
        return try floor(g, s, region)
    }

    /// The volume above (and below) `floor` over the pixels of `region`; without a region over the
    /// largest connected cluster above the floor (and the largest below it). Each pixel adds its
    /// height h times its footprint A: the pixel's patch of surface projected onto the floor (for
    /// a camera square to the floor, A = (z/fx)·(z/fy)). `floor` nil: `floor(depth:settings:)`.
    public static func volume(depth: PixelBuffer, settings s: MeasureSettings, floor given: MeasureFloor? = nil,
                              region: PixelPolygon? = nil) throws -> VolumeMeasurement {
        let g = try DepthGrid(depth, s.intrinsics)
        if let region { try region.validate(width: g.width, height: g.height, option: "region") }
        let fl = try given ?? floor(g, s, nil)
        let heights = g.heights(fl.plane)
        var above = [Bool](repeating: false, count: g.count), below = above
        var points = 0
        if let region {
            let mask = region.mask(width: g.width, height: g.height)
            for i in 0..<g.count where mask[i] && g.valid(i) {
                points += 1
                above[i] = heights[i] > fl.tolerance
                below[i] = heights[i] < -fl.tolerance
            }
            guard points > 0 else { throw DepthKitError.invalidArgument("no valid depth inside the region \(region)") }
        } else {
            above = g.largestCluster(heights.map { $0 > fl.tolerance }, continuity: s.continuity)
            below = g.largestCluster(heights.map { $0 < -fl.tolerance }, continuity: s.continuity)
            points = above.reduce(0) { $0 + ($1 ? 1 : 0) } + below.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        var m = VolumeMeasurement(volumeM3: 0, volumeBelowM3: 0, floor: fl, abovePixels: 0, belowPixels: 0, points: points)
        for i in 0..<g.count where above[i] || below[i] {
            let a = g.footprint(i, fl.plane, continuity: s.continuity)
            if above[i] { m.volumeM3 += heights[i] * a; m.abovePixels += 1 } else { m.volumeBelowM3 -= heights[i] * a; m.belowPixels += 1 }
        }
        return m
    }

    /// Length × width × height of the object above `floor`: the largest connected cluster of
    /// pixels above it (in `region`, else anywhere), the minimum-area rectangle around their
    /// footprints on the floor, and the `heightPercentile` of their heights.
    public static func box(depth: PixelBuffer, settings s: MeasureSettings, floor given: MeasureFloor? = nil,
                           region: PixelPolygon? = nil) throws -> BoxMeasurement {
        let g = try DepthGrid(depth, s.intrinsics)
        if let region { try region.validate(width: g.width, height: g.height, option: "region") }
        let fl = try given ?? floor(g, s, nil)
        let heights = g.heights(fl.plane)
        let mask = region?.mask(width: g.width, height: g.height)
        var candidates = [Bool](repeating: false, count: g.count)
        for i in 0..<g.count where heights[i] > fl.tolerance && (mask?[i] ?? true) { candidates[i] = true }
        let object = g.largestCluster(candidates, continuity: s.continuity)
        var objectHeights: [Double] = []
        var outline: [SIMD2<Double>] = []
        let n = fl.plane.normal
        let e1 = Self.planeAxis(n), e2 = PlaneRANSAC.cross(n, e1)
        for i in 0..<g.count where object[i] {
            objectHeights.append(heights[i])
            // Only pixels on the object's outline can reach the rectangle's sides.
            let u = i % g.width, v = i / g.width
            let inner = u > 0 && u < g.width - 1 && v > 0 && v < g.height - 1
                && object[i - 1] && object[i + 1] && object[i - g.width] && object[i + g.width]
            if inner { continue }
            let c = SIMD3<Double>(g.point(i))
            outline.append(SIMD2((c * e1).sum(), (c * e2).sum()))
        }
        guard objectHeights.count >= 3 else {
            throw DepthKitError.invalidArgument("no object above the floor\(region.map { " inside the region \($0)" } ?? "") (heights over \(String(format: "%.1f", fl.tolerance * 1000)) mm: \(objectHeights.count) pixels)")
        }
        objectHeights.sort()
        let p = min(100, max(0, s.heightPercentile)) / 100
        let height = objectHeights[Int((p * Double(objectHeights.count - 1)).rounded())]
        let rect = MinAreaRectangle(points: outline)
        let origin = -fl.plane.d * n
        let corners = rect.corners.map { origin + $0.x * e1 + $0.y * e2 }
        return BoxMeasurement(lengthM: max(rect.sides.0, rect.sides.1), widthM: min(rect.sides.0, rect.sides.1), heightM: height,
                              floor: fl, pixels: objectHeights.count, corners: corners)
    }

    /// A unit vector in the plane with normal `n`.
    static func planeAxis(_ n: SIMD3<Double>) -> SIMD3<Double> {
        let helper = abs(n.x) < 0.9 ? SIMD3<Double>(1, 0, 0) : SIMD3<Double>(0, 1, 0)
        let a = PlaneRANSAC.cross(helper, n)
        return a / (a * a).sum().squareRoot()
    }

    static func floor(_ g: DepthGrid, _ s: MeasureSettings, _ region: PixelPolygon?) throws -> MeasureFloor {
        let plane: FittedPlane, count: Int, rms: Double, origin: MeasureFloor.Origin
        if let region {
            try region.validate(width: g.width, height: g.height, option: "floor region")
            let pts = g.points(region.mask(width: g.width, height: g.height))
            guard pts.count >= 3, let p = FittedPlane.leastSquares(pts) else {
                throw DepthKitError.invalidArgument("the floor region \(region) holds \(pts.count) pixels with valid depth; a plane needs 3 not on a line")
            }
            (plane, count, rms, origin) = (p, pts.count, p.rms(pts), .region)
        } else {
            let pts = g.points(nil)
            guard pts.count >= 3 else { throw DepthKitError.invalidArgument("the frame has \(pts.count) pixels with valid depth; a floor needs 3") }
            guard let r = PlaneRANSAC.fit(pts, settings: s.ransac) else {
                throw DepthKitError.invalidArgument("RANSAC found no plane among the frame's \(pts.count) points")
            }
            (plane, count, rms, origin) = (r.plane, r.inliers, r.inlierRMS, .ransac)
        }
        return MeasureFloor(plane: plane, origin: origin, points: count, rms: rms, tolerance: s.floorTolerance ?? max(0.001, 3 * rms))
    }
}

/// A depth map as the measurements read it: row-major Float meters with its intrinsics.
struct DepthGrid {
    let width: Int, height: Int
    let z: [Float]
    let k: CameraIntrinsics
    var count: Int { z.count }

    init(_ depth: PixelBuffer, _ k: CameraIntrinsics) throws {
        guard depth.format == .depthFloat32 else {
            throw DepthKitError.invalidArgument("measurements take depthFloat32, got \(depth.format)")
        }
        guard k.width == depth.width, k.height == depth.height else {
            throw DepthKitError.invalidArgument("intrinsics are for \(k.width)x\(k.height) but the depth map is \(depth.width)x\(depth.height)")
        }
        guard k.fx > 0, k.fy > 0, k.fx.isFinite, k.fy.isFinite, k.cx.isFinite, k.cy.isFinite else {
            throw DepthKitError.invalidArgument("intrinsics \(k) have no positive finite focal length")
        }
        width = depth.width; height = depth.height; self.k = k
        var z = [Float](repeating: 0, count: depth.width * depth.height)
        for v in 0..<depth.height {
            let row = depth.row(v, as: Float.self)
            for u in 0..<depth.width { z[v * depth.width + u] = isValidDepth(row[u]) ? row[u] : 0 }
        }
        self.z = z
    }

    @inline(__always) func valid(_ i: Int) -> Bool { z[i] > 0 }

    @inline(__always) func point(_ i: Int) -> SIMD3<Float> {
        qualityDeproject(u: Float(i % width), v: Float(i / width), depth: z[i], k)
    }

    /// The ray through image point (x, y) with z = 1.
    func ray(_ x: Double, _ y: Double) -> SIMD3<Double> {
        SIMD3((x - Double(k.cx)) / Double(k.fx), (y - Double(k.cy)) / Double(k.fy), 1)
    }

    /// The valid pixels (inside `mask`, when given) deprojected, row-major.
    func points(_ mask: [Bool]?) -> [SIMD3<Float>] {
        var out: [SIMD3<Float>] = []
        for i in 0..<count where valid(i) && (mask?[i] ?? true) { out.append(point(i)) }
        return out
    }

    /// Each pixel's height above the plane (0 for invalid pixels, which nothing counts).
    func heights(_ plane: FittedPlane) -> [Double] {
        (0..<count).map { valid($0) ? plane.distance(point($0)) : 0 }
    }

    /// Whether neighbouring pixels i and j (8-neighbours) lie on one surface: both valid, and their
    /// depths differ by at most `c` of the nearer, or the step from i to j repeats the step before
    /// it on either side to within that (a surface seen at a grazing angle: a steep but steady
    /// slope in depth, not a jump).
    func joined(_ i: Int, _ j: Int, _ c: Float) -> Bool {
        let a = z[i], b = z[j]
        guard a > 0, b > 0 else { return false }
        let tol = c * min(a, b)
        if abs(a - b) <= tol { return true }
        let du = j % width - i % width, dv = j / width - i / width
        func at(_ u: Int, _ v: Int) -> Float? {
            guard u >= 0, u < width, v >= 0, v < height else { return nil }
            let d = z[v * width + u]
            return d > 0 ? d : nil
        }
        if let before = at(i % width - du, i / width - dv), abs(b - 2 * a + before) <= tol { return true }
        if let after = at(j % width + du, j / width + dv), abs(a - 2 * b + after) <= tol { return true }
        return false
    }

    /// The largest 4-connected set of `candidates` pixels in which neighbours are `joined`.
    func largestCluster(_ candidates: [Bool], continuity c: Float) -> [Bool] {
        var label = [Int32](repeating: -1, count: count)
        var best: (label: Int32, size: Int) = (-1, 0)
        var queue: [Int] = []
        var next: Int32 = 0
        for seed in 0..<count where candidates[seed] && label[seed] < 0 {
            label[seed] = next
            queue.removeAll(keepingCapacity: true)
            queue.append(seed)
            var head = 0
            while head < queue.count {
                let i = queue[head]; head += 1
                let u = i % width
                for (j, ok) in [(i - 1, u > 0), (i + 1, u < width - 1), (i - width, i >= width), (i + width, i + width < count)]
                where ok && candidates[j] && label[j] < 0 && joined(i, j, c) {
                    label[j] = next
                    queue.append(j)
                }
            }
            if queue.count > best.size { best = (next, queue.count) }
            next += 1
        }
        return label.map { $0 == best.label && best.label >= 0 }
    }

    /// The four corners of pixel i's patch of surface, in order (−½,−½), (+½,−½), (+½,+½), (−½,+½):
    /// the mean of the four pixels around a corner when all are valid and `joined` to pixel i,
    /// else the corner's ray met by the plane through pixel i parallel to `floor` (the surface
    /// taken as level there: the edge of a box top over a jump).
    func corners(_ i: Int, _ floor: FittedPlane, continuity c: Float) -> [SIMD3<Double>] {
        let u = i % width, v = i / width
        let p = SIMD3<Double>(point(i))
        let level = FittedPlane(normal: floor.normal, d: -(floor.normal * p).sum())
        return [(-1, -1), (1, -1), (1, 1), (-1, 1)].map { (du: Int, dv: Int) -> SIMD3<Double> in
            let u2 = u + du, v2 = v + dv
            if u2 >= 0, u2 < width, v2 >= 0, v2 < height {
                let js = [v * width + u2, v2 * width + u, v2 * width + u2]
                if js.allSatisfy({ joined(i, $0, c) }) {
                    return (p + js.reduce(SIMD3<Double>.zero) { $0 + SIMD3<Double>(point($1)) }) / 4
                }
            }
            let r = ray(Double(u) + Double(du) / 2, Double(v) + Double(dv) / 2)
            return level.intersect(ray: r) ?? Double(z[i]) * r
        }
    }

    /// Pixel i's footprint on the floor: its patch of surface (`corners`) projected onto the
    /// floor plane, signed so that surfaces facing the camera count positive, m².
    func footprint(_ i: Int, _ floor: FittedPlane, continuity c: Float) -> Double {
        let q = corners(i, floor, continuity: c)
        let s = PlaneRANSAC.cross(q[2] - q[0], q[3] - q[1]) / 2
        return -(floor.normal * s).sum()
    }
}

/// The minimum-area rectangle around 2D points (rotating calipers over the convex hull's edges:
/// one side of the optimal rectangle lies along a hull edge).
struct MinAreaRectangle {
    var sides: (Double, Double) = (0, 0)
    var corners: [SIMD2<Double>] = []

    init(points: [SIMD2<Double>]) {
        let hull = Self.convexHull(points)
        guard hull.count >= 2 else {
            if let p = hull.first { corners = [p, p, p, p] }
            return
        }
        var bestArea = Double.infinity
        for i in hull.indices {
            let e = hull[(i + 1) % hull.count] - hull[i]
            let len = (e * e).sum().squareRoot()
            guard len > 0 else { continue }
            let a = e / len, b = SIMD2(-a.y, a.x)
            var lo = SIMD2(Double.infinity, .infinity), hi = -lo
            for p in hull {
                let q = SIMD2((p * a).sum(), (p * b).sum())
                lo = pointwiseMin(lo, q); hi = pointwiseMax(hi, q)
            }
            let area = (hi.x - lo.x) * (hi.y - lo.y)
            if area < bestArea {
                bestArea = area
                sides = (hi.x - lo.x, hi.y - lo.y)
                corners = [lo.x * a + lo.y * b, hi.x * a + lo.y * b, hi.x * a + hi.y * b, lo.x * a + hi.y * b]
            }
        }
    }

    /// Andrew's monotone chain, counter-clockwise, without collinear points.
    static func convexHull(_ points: [SIMD2<Double>]) -> [SIMD2<Double>] {
        let p = points.sorted { $0.x < $1.x || ($0.x == $1.x && $0.y < $1.y) }
        guard p.count >= 3 else { return p }
        func turn(_ o: SIMD2<Double>, _ a: SIMD2<Double>, _ b: SIMD2<Double>) -> Double {
            (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x)
        }
        var hull: [SIMD2<Double>] = []
        for q in p {
            while hull.count >= 2 && turn(hull[hull.count - 2], hull[hull.count - 1], q) <= 0 { hull.removeLast() }
            hull.append(q)
        }
        let lower = hull.count + 1
        for q in p.reversed().dropFirst() {
            while hull.count >= lower && turn(hull[hull.count - 2], hull[hull.count - 1], q) <= 0 { hull.removeLast() }
            hull.append(q)
        }
        hull.removeLast()
        return hull
    }
}
