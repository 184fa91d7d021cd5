import XCTest
import TestSupport
import Foundation
import CPlatform
@testable import DepthKit

/// librealsense's `align` to color as librealsense 2.59 runs it on x86-64 (`image_transform`,
/// src/proc/sse/sse-align.cpp), written out plainly in Swift, pixel by pixel, for pinhole
/// cameras: the deprojection (pixel − c)/f · z, the transform summed r0·x + (r1·y + (r2·z + t))
/// (the extrinsics' rotation is row-major here, column-major in rs2_extrinsics), the projection
/// x/z·f + c, the corners' `(int)(p + 0.5f)`, each pixel's rectangle clipped to the image, and
/// rs2_fov's choice of both corners or the top-left one only. Swift never fuses a·b + c.
func referenceAlign(depth: [Float], depthWidth dw: Int, depthHeight dh: Int, d: CameraIntrinsics,
                    color c: CameraIntrinsics, extrinsics e: RigidTransform) -> [Float] {
    var out = [Float](repeating: 0, count: c.width * c.height)
    let r = e.rotation, t = e.translation
    func fov(_ k: CameraIntrinsics) -> (x: Float, y: Float) {
        ((atan2f(k.cx + 0.5, k.fx) + atan2f(Float(k.width) - (k.cx + 0.5), k.fx)) * 57.2957795,
         (atan2f(k.cy + 0.5, k.fy) + atan2f(Float(k.height) - (k.cy + 0.5), k.fy)) * 57.2957795)
    }
    let special = (dw == 640 && dh == 240 && c.width == 320 && c.height == 180)
        || (dw == 640 && dh == 480 && c.width == 640 && c.height == 360)
    let both = Float(dw) / fov(d).x < Float(c.width) / fov(c).x || Float(dh) / fov(d).y < Float(c.height) / fov(c).y || special
    /// C's float → int: truncation toward zero (values far outside the image are clipped anyway).
    func cInt(_ v: Float) -> Int { Int(max(-1e9, min(1e9, v))) }
    func corner(_ px: Float, _ py: Float, _ z: Float) -> (Float, Float) {
        let x = (px - d.cx) / d.fx, y = (py - d.cy) / d.fy
        let p0 = z * x, p1 = z * y, p2 = z
        let q0 = r[0] * p0 + (r[1] * p1 + (r[2] * p2 + t.x))
        let q1 = r[3] * p0 + (r[4] * p1 + (r[5] * p2 + t.y))
        let q2 = r[6] * p0 + (r[7] * p1 + (r[8] * p2 + t.z))
        return (q0 / q2 * c.fx + c.cx + 0.5, q1 / q2 * c.fy + c.cy + 0.5)
    }
    for y in 0..<dh {
        for x in 0..<dw {
            let z = depth[y * dw + x]
            guard z > 0, z.isFinite else { continue }
            let a = corner(Float(x) - 0.5, Float(y) - 0.5, z)
            let b = both ? corner(Float(x) + 0.5, Float(y) + 0.5, z) : a
            if a.0.isNaN || a.1.isNaN || b.0.isNaN || b.1.isNaN { continue }
            let x0 = max(cInt(a.0), 0), y0 = max(cInt(a.1), 0)
            let x1 = min(cInt(b.0), c.width - 1), y1 = min(cInt(b.1), c.height - 1)
            if y0 > y1 || x0 > x1 { continue }
            for oy in y0...y1 {
                for ox in x0...x1 {
                    let o = out[oy * c.width + ox]
                    out[oy * c.width + ox] = o == 0 ? z : min(o, z)
                }
            }
        }
    }
    return out
}

/// A buffer's floats, row by row (any stride).
func floats(_ b: PixelBuffer) -> [Float] {
    var v = [Float](); v.reserveCapacity(b.width * b.height)
    for y in 0..<b.height { v.append(contentsOf: UnsafeBufferPointer(start: b.row(y, as: Float.self), count: b.width)) }
    return v
}

/// Bit patterns, so that comparisons are exact (and NaN would show).
func bits(_ v: [Float]) -> [UInt32] { v.map(\.bitPattern) }

/// A random calibration: intrinsics of both cameras, a small rotation (Rodrigues), a baseline.
func randomCalibration(_ g: inout SeededRandom, depth: (Int, Int), color: (Int, Int)) -> RGBDCalibration {
    func cam(_ w: Int, _ h: Int) -> CameraIntrinsics {
        let f = Float(w) * g.float(0.45, 0.95)
        return CameraIntrinsics(fx: f, fy: f * g.float(0.98, 1.02), cx: Float(w - 1) / 2 + g.float(-8, 8),
                                cy: Float(h - 1) / 2 + g.float(-8, 8), width: w, height: h)
    }
    let axis = SIMD3<Float>(g.float(-1, 1), g.float(-1, 1), g.float(-1, 1))
    let n = axis / max(1e-6, (axis * axis).sum().squareRoot())
    let angle = g.float(-0.05, 0.05)
    let s = sin(angle), c = cos(angle), k = 1 - c
    let rot: [Float] = [c + n.x * n.x * k, n.x * n.y * k - n.z * s, n.x * n.z * k + n.y * s,
                        n.y * n.x * k + n.z * s, c + n.y * n.y * k, n.y * n.z * k - n.x * s,
                        n.z * n.x * k - n.y * s, n.z * n.y * k + n.x * s, c + n.z * n.z * k]
    let t = SIMD3<Float>(g.float(-0.06, 0.06), g.float(-0.01, 0.01), g.float(-0.01, 0.01))
    return RGBDCalibration(depth: CameraModel(intrinsics: cam(depth.0, depth.1)),
                           color: CameraModel(intrinsics: cam(color.0, color.1)),
                           depthToColor: RigidTransform(rotation: rot, translation: t), origin: "random")
}

/// Random depth in meters (0.2–6 m) with holes and some surfaces at one depth, plus edges.
func randomDepth(_ g: inout SeededRandom, _ w: Int, _ h: Int, stride: Int? = nil) -> PixelBuffer {
    let b = PixelBuffer(width: w, height: h, format: .depthFloat32, bytesPerRow: stride.map { $0 * 4 })
    for y in 0..<h {
        let r = b.row(y, as: Float.self)
        for x in 0..<w {
            let u = g.next() % 16
            if u == 0 { r[x] = 0 }                                   // hole
            else if x > w / 3, x < w / 2 { r[x] = 0.75 }             // a near plane (occluder)
            else { r[x] = g.float(0.2, 6) }
        }
    }
    return b
}

final class DepthAlignmentTests: XCTestCase {
    private var savedPath = CPUVectorPath.active
    override func setUp() { savedPath = CPUVectorPath.active }
    override func tearDown() { CPUVectorPath.active = savedPath }

    /// Cameras whose arithmetic is exact (powers of two, half-pixel principal points): a depth
    /// pixel's corners land exactly on color pixel x − 0.5 … x + 0.5, which
    /// `(int)(p + 0.5)` turns into columns x … x + 1 (rows likewise).
    private func exactCamera(_ w: Int, _ h: Int) -> CameraIntrinsics {
        CameraIntrinsics(fx: 4, fy: 4, cx: 1.5, cy: 1, width: w, height: h)
    }

    private func align(_ depth: PixelBuffer, _ cal: RGBDCalibration) throws -> [Float] {
        floats(try DepthAligner().align(depth: depth, calibration: cal))
    }

    /// Equal intrinsics and identity extrinsics: the same pixels per degree, so librealsense
    /// projects the top-left corner only (x − 0.5 + 0.5 → x): a copy of the valid pixels.
    func testIdentityIsACopyOfValidPixels() throws {
        let k = exactCamera(4, 3)
        let cal = RGBDCalibration(depth: CameraModel(intrinsics: k), color: CameraModel(intrinsics: k), origin: "test")
        XCTAssertFalse(DepthAligner.usesBothCorners(depth: k, color: k))
        let v: [Float] = [2, 1, 0, 4,
                          4, 0.5, 8, 2,
                          1, .nan, 1, -3]
        let expected: [Float] = [2, 1, 0, 4,
                                 4, 0.5, 8, 2,
                                 1, 0, 1, 0]
        XCTAssertEqual(try align(makeDepth(4, 3, v), cal), expected)
        // The D435-like depth camera aligned to itself: (z·x)/z may be an ulp off x, so a few
        // pixels move by one; as the reference says, and nearly all stay.
        var g = SeededRandom(seed: 3)
        let d = RGBDCalibration.d435Like().depth
        let depth = randomDepth(&g, 848, 480)
        let out = try align(depth, RGBDCalibration(depth: d, color: d, origin: "test"))
        XCTAssertEqual(bits(out), bits(referenceAlign(depth: floats(depth), depthWidth: 848, depthHeight: 480,
                                                      d: d.intrinsics, color: d.intrinsics, extrinsics: .identity)))
        let valid = floats(depth).map { $0 > 0 && $0.isFinite ? $0 : 0 }
        let same = zip(bits(out), bits(valid)).filter { $0 == $1 }.count
        XCTAssertGreaterThan(same, valid.count * 90 / 100)
    }

    /// Depth with twice the color camera's pixels per degree: one corner, so each color pixel
    /// gets the nearest valid depth of its 2×2 depth pixels (x = 2u…2u+1: (x − 4)/8·4 + 1.5 + 0.5
    /// = x/2, truncated).
    func testFinerDepthWritesOnePixelEach() throws {
        let d = CameraIntrinsics(fx: 8, fy: 8, cx: 3.5, cy: 2.5, width: 8, height: 6)
        let c = exactCamera(4, 3)
        XCTAssertFalse(DepthAligner.usesBothCorners(depth: d, color: c))
        XCTAssertTrue(DepthAligner.usesBothCorners(depth: c, color: d))
        let cal = RGBDCalibration(depth: CameraModel(intrinsics: d), color: CameraModel(intrinsics: c), origin: "test")
        var v = [Float](repeating: 0, count: 48)
        for y in 0..<6 { for x in 0..<8 { v[y * 8 + x] = Float(1 + (x * 7 + y * 3) % 5) * 0.5 } }
        v[0] = 0; v[1] = 0; v[8] = 0; v[9] = 0        // color (0, 0): no valid depth → 0
        v[2 * 8 + 6] = 0.25                            // color (3, 1): 0.25 wins
        var expected = [Float](repeating: 0, count: 12)
        for u in 0..<4 {
            for w in 0..<3 {
                let block = [v[(2 * w) * 8 + 2 * u], v[(2 * w) * 8 + 2 * u + 1], v[(2 * w + 1) * 8 + 2 * u], v[(2 * w + 1) * 8 + 2 * u + 1]]
                expected[w * 4 + u] = block.filter { $0 > 0 }.min() ?? 0
            }
        }
        XCTAssertEqual(expected[0], 0)
        XCTAssertEqual(expected[1 * 4 + 3], 0.25)
        XCTAssertEqual(try align(makeDepth(8, 6, v), cal), expected)
    }

    /// A phone scan's depth (Stray Scanner: 256×192 beside a 1920×1440 video, 7.5 color pixels a
    /// depth pixel, the same camera scaled) aligned up to the color size (`--align color`): each
    /// depth pixel fills its whole footprint, so depth with no hole leaves no color pixel empty —
    /// no stripes of zeros between the depth columns or rows — and every color pixel holds the
    /// depth of the depth pixel over it (or, on a shared border column or row, a neighbor's).
    func testLowResolutionDepthFillsTheColorImage() throws {
        let c = CameraIntrinsics(fx: 1590.5, fy: 1590.5, cx: 959.3, cy: 721.8, width: 1920, height: 1440)
        let d = c.scaled(toWidth: 256, height: 192)
        XCTAssertTrue(DepthAligner.usesBothCorners(depth: d, color: c))
        let cal = RGBDCalibration(depth: CameraModel(intrinsics: d), color: CameraModel(intrinsics: c), origin: "test")
        var v = [Float](repeating: 0, count: 256 * 192)
        for y in 0..<192 { for x in 0..<256 { v[y * 256 + x] = 1 + Float((x * 13 + y * 7) % 50) / 100 } }
        let out = try align(makeDepth(256, 192, v), cal)
        XCTAssertEqual(out.count, 1920 * 1440)
        XCTAssertEqual(out.filter { $0 == 0 }.count, 0, "color pixels no depth pixel reached")
        var far = 0
        for y in stride(from: 0, to: 1440, by: 7) {
            for x in stride(from: 0, to: 1920, by: 5) {
                // The depth pixels whose footprint (u·7.5 … (u + 1)·7.5) may reach this color pixel.
                let us = max(0, (x - 1) * 2 / 15)...min(255, (x + 1) * 2 / 15)
                let rows = max(0, (y - 1) * 2 / 15)...min(191, (y + 1) * 2 / 15)
                var near: [Float] = []
                for r in rows { for u in us { near.append(v[r * 256 + u]) } }
                if !near.contains(out[y * 1920 + x]) { far += 1 }
            }
        }
        XCTAssertEqual(far, 0, "color pixels holding another place's depth")
    }

    /// A pure x translation t moves a point at depth z by fx·t/z pixels: 4·0.5/1 = 2 at 1 m,
    /// 1 at 2 m, 4 at 0.5 m.
    func testTranslationShiftsByFxTOverZ() throws {
        let d = exactCamera(4, 3), c = exactCamera(12, 4)
        let cal = RGBDCalibration(depth: CameraModel(intrinsics: d), color: CameraModel(intrinsics: c),
                                  depthToColor: RigidTransform(rotation: RigidTransform.identity.rotation, translation: SIMD3(0.5, 0, 0)),
                                  origin: "test")
        var v = [Float](repeating: 0, count: 12)
        v[1 * 4 + 1] = 1     // (1, 1) at 1 m → columns 3…4, rows 1…2
        v[0 * 4 + 2] = 2     // (2, 0) at 2 m → columns 3…4, rows 0…1
        let out = try align(makeDepth(4, 3, v), cal)
        var expected = [Float](repeating: 0, count: 48)
        expected[0 * 12 + 3] = 2; expected[0 * 12 + 4] = 2
        expected[1 * 12 + 3] = 1; expected[1 * 12 + 4] = 1       // both reach row 1: the nearer wins
        expected[2 * 12 + 3] = 1; expected[2 * 12 + 4] = 1
        XCTAssertEqual(out, expected)
    }

    /// Occlusion: two depth pixels that land on the same color pixels — the nearer one wins
    /// whichever comes first in the scan.
    func testNearerWinsEitherOrder() throws {
        let d = exactCamera(4, 3), c = exactCamera(12, 4)
        let cal = RGBDCalibration(depth: CameraModel(intrinsics: d), color: CameraModel(intrinsics: c),
                                  depthToColor: RigidTransform(rotation: RigidTransform.identity.rotation, translation: SIMD3(0.5, 0, 0)),
                                  origin: "test")
        var v = [Float](repeating: 0, count: 12)
        v[0 * 4 + 0] = 0.5   // (0, 0) at 0.5 m: shift 4 → columns 4…5, rows 0…1 (scanned first, nearer)
        v[0 * 4 + 3] = 2     // (3, 0) at 2 m: shift 1 → columns 4…5, rows 0…1 (scanned later, farther)
        v[1 * 4 + 1] = 2     // (1, 1) at 2 m: shift 1 → columns 2…3, rows 1…2 (scanned first, farther)
        v[2 * 4 + 0] = 1     // (0, 2) at 1 m: shift 2 → columns 2…3, rows 2…3 (scanned later, nearer)
        let out = try align(makeDepth(4, 3, v), cal)
        var expected = [Float](repeating: 0, count: 48)
        for y in 0...1 { expected[y * 12 + 4] = 0.5; expected[y * 12 + 5] = 0.5 }
        expected[1 * 12 + 2] = 2; expected[1 * 12 + 3] = 2
        for y in 2...3 { expected[y * 12 + 2] = 1; expected[y * 12 + 3] = 1 }
        XCTAssertEqual(out, expected)
    }

    /// A rectangle that reaches past the color image is clipped to it (librealsense 2.59; its
    /// older `align_images` skipped it whole).
    func testRectanglesAreClippedToTheImage() throws {
        let d = exactCamera(8, 3), c = exactCamera(8, 4)
        let shift = { (t: Float) in
            RGBDCalibration(depth: CameraModel(intrinsics: d), color: CameraModel(intrinsics: c),
                            depthToColor: RigidTransform(rotation: RigidTransform.identity.rotation, translation: SIMD3(t, 0, 0)),
                            origin: "test")
        }
        XCTAssertTrue(DepthAligner.usesBothCorners(depth: d, color: c))   // color has more rows per degree
        var v = [Float](repeating: 0, count: 24)
        v[8 + 4] = 1     // (4, 1) at 1 m, shift 2: columns 6…7, rows 1…2
        v[0 + 5] = 1     // (5, 0): columns 7…8, rows 0…1 → column 7 only
        v[0 + 7] = 1     // (7, 0): columns 9…10 → nothing
        var expected = [Float](repeating: 0, count: 32)
        expected[7] = 1
        for y in 1...2 { expected[y * 8 + 6] = 1; expected[y * 8 + 7] = 1 }
        XCTAssertEqual(try align(makeDepth(8, 3, v), shift(0.5)), expected)
        // To the left: shift −2.
        var w = [Float](repeating: 0, count: 24)
        w[0 + 1] = 1     // (1, 0): columns −1…0, rows 0…1 → column 0
        w[8 + 2] = 1     // (2, 1): columns 0…1, rows 1…2
        w[16 + 0] = 1    // (0, 2): columns −2…−1 → nothing
        var expectedLeft = [Float](repeating: 0, count: 32)
        expectedLeft[0] = 1
        for y in 1...2 { expectedLeft[y * 8 + 0] = 1; expectedLeft[y * 8 + 1] = 1 }
        XCTAssertEqual(try align(makeDepth(8, 3, w), shift(-0.5)), expectedLeft)
        // Down past the last row: depth row 2 covers color rows 2…3, row 3 exists; shift rows by
        // a y translation of 0.5 m at 1 m (2 rows): rows 4…5 → nothing, rows 3…4 → row 3.
        let down = RGBDCalibration(depth: CameraModel(intrinsics: d), color: CameraModel(intrinsics: c),
                                   depthToColor: RigidTransform(rotation: RigidTransform.identity.rotation, translation: SIMD3(0, 0.5, 0)),
                                   origin: "test")
        var u = [Float](repeating: 0, count: 24)
        u[1 * 8 + 3] = 1     // rows 3…4 → row 3, columns 3…4
        u[2 * 8 + 5] = 1     // rows 4…5 → nothing
        var expectedDown = [Float](repeating: 0, count: 32)
        expectedDown[3 * 8 + 3] = 1; expectedDown[3 * 8 + 4] = 1
        XCTAssertEqual(try align(makeDepth(8, 3, u), down), expectedDown)
    }

    /// Invalid depth (0, negative, NaN, ∞) writes nothing; color pixels nothing reaches stay 0
    /// even in a reused output buffer that held other values.
    func testInvalidDepthWritesNothingAndHolesStayZero() throws {
        let k = exactCamera(4, 3)
        let cal = RGBDCalibration(depth: CameraModel(intrinsics: k), color: CameraModel(intrinsics: k), origin: "test")
        let depth = makeDepth(4, 3, [0, -1, .nan, .infinity, 0, 0, 0, 0, 0, 0, 0, 0])
        let out = PixelBuffer(width: 4, height: 3, format: .depthFloat32)
        for y in 0..<3 { for x in 0..<4 { out.row(y, as: Float.self)[x] = 7 } }
        try DepthAligner().align(depth: depth, calibration: cal, into: out)
        XCTAssertEqual(bits(floats(out)), bits([Float](repeating: 0, count: 12)))
    }

    /// Random calibrations, sizes and strides: the banded kernel equals its serial run and the
    /// plain Swift reference bit for bit, on every SIMD path.
    func testMatchesReferenceOnRandomCalibrations() throws {
        var g = SeededRandom(seed: 17)
        let aligner = DepthAligner()
        let sizes: [((Int, Int), (Int, Int))] = [((64, 48), (96, 54)), ((97, 61), (64, 48)), ((160, 120), (320, 180)),
                                                 ((33, 200), (50, 150)), ((40, 30), (320, 240)), ((848, 480), (1280, 720))]
        for (i, (ds, cs)) in sizes.enumerated() {
            for trial in 0..<(i == sizes.count - 1 ? 1 : 4) {
                let cal = trial == 0 && i == sizes.count - 1
                    ? RGBDCalibration.d435Like() : randomCalibration(&g, depth: ds, color: cs)
                let depth = randomDepth(&g, ds.0, ds.1, stride: trial % 2 == 1 ? ds.0 + 5 : nil)
                let ref = bits(referenceAlign(depth: floats(depth), depthWidth: ds.0, depthHeight: ds.1,
                                              d: cal.depth.intrinsics, color: cal.color.intrinsics, extrinsics: cal.depthToColor))
                XCTAssertGreaterThan(ref.filter { $0 != 0 }.count, cs.0 * cs.1 / 4, "the case should write a good part of the image")
                let serial = PixelBuffer(width: cs.0, height: cs.1, format: .depthFloat32, bytesPerRow: (cs.0 + 3) * 4)
                DepthAligner.alignSerially(depth: depth, calibration: cal, into: serial)
                XCTAssertEqual(bits(floats(serial)), ref, "serial, sizes \(ds) → \(cs), trial \(trial)")
                for path in CPUVectorPath.available {
                    CPUVectorPath.active = path
                    let out = try aligner.align(depth: depth, calibration: cal)
                    let got = bits(floats(out))
                    let differing = zip(got, ref).filter { $0 != $1 }.count
                    XCTAssertEqual(differing, 0, "\(path), sizes \(ds) → \(cs), trial \(trial)")
                }
            }
        }
    }

    /// Intrinsics given for another size are scaled to the buffers' sizes.
    func testIntrinsicsAreScaledToTheBuffers() throws {
        var g = SeededRandom(seed: 5)
        let cal = RGBDCalibration.d435Like(depthWidth: 424, depthHeight: 240, colorWidth: 640, colorHeight: 360)
        let depth = randomDepth(&g, 212, 120)
        let out = PixelBuffer(width: 320, height: 180, format: .depthFloat32)
        try DepthAligner().align(depth: depth, calibration: cal, into: out)
        let ref = referenceAlign(depth: floats(depth), depthWidth: 212, depthHeight: 120,
                                 d: cal.depth.intrinsics.scaled(toWidth: 212, height: 120),
                                 color: cal.color.intrinsics.scaled(toWidth: 320, height: 180), extrinsics: cal.depthToColor)
        XCTAssertEqual(bits(floats(out)), bits(ref))
    }

    /// Steady state: aligning into a reused buffer allocates nothing.
    func testNoAllocationsPerFrame() throws {
        var g = SeededRandom(seed: 9)
        let cal = RGBDCalibration.d435Like()
        let depth = randomDepth(&g, 848, 480)
        let out = PixelBuffer(width: 1280, height: 720, format: .depthFloat32)
        let aligner = DepthAligner()
        for _ in 0..<3 { try aligner.align(depth: depth, calibration: cal, into: out) }
        dl_alloc_counting(1)
        let before = dl_alloc_count()
        for _ in 0..<20 { try aligner.align(depth: depth, calibration: cal, into: out) }
        let allocations = dl_alloc_count() - before
        dl_alloc_counting(0)
        XCTAssertEqual(allocations, 0, "allocations in 20 aligned frames")
    }
}
