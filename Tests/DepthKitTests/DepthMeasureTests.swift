import XCTest
import Foundation
import TestSupport
@testable import DepthKit

/// A synthetic scene ray-cast by Tests/Fixtures/measure_reference.py (numpy): a tilted floor seen
/// from 1.2 m with a box on it or a bin sunk into it, Gaussian noise in z; known sizes.
struct MeasureScene {
    static let width = 640, height = 480
    static let intrinsics = CameraIntrinsics(fx: 600, fy: 600, cx: 319.5, cy: 239.5, width: width, height: height)
    /// The floor's normal toward the camera (about 14° off the optical axis) and the camera's height.
    static let up = SIMD3<Double>(-0.2, 0.15, -1)
    static let cameraHeight = 1.2

    var kind = "box"
    /// Box: length, width, height; cavity: length, width, depth (m).
    var size = SIMD3<Double>(0.4, 0.3, 0.25)
    var centerPixel = SIMD2<Double>(330, 260)
    var yawDeg = 25.0
    var sigma = 0.0005
    var seed = 7

    var truePlane: FittedPlane {
        let n = Self.up / (Self.up * Self.up).sum().squareRoot()
        return FittedPlane(normal: n, d: Self.cameraHeight)
    }

    /// The bin under the camera: its opening holds the camera's foot on the floor, so all of its
    /// bottom is in sight.
    static var cavity: MeasureScene {
        let n = up / (up * up).sum().squareRoot()
        let foot = -cameraHeight * n
        var s = MeasureScene()
        s.kind = "cavity"
        s.size = SIMD3(0.3, 0.2, 0.12)
        s.centerPixel = SIMD2(Double(intrinsics.fx) * foot.x / foot.z + Double(intrinsics.cx) - 20,
                              Double(intrinsics.fy) * foot.y / foot.z + Double(intrinsics.cy) + 15)
        s.yawDeg = -10
        return s
    }

    struct Patch { var polygon: PixelPolygon; var area: Double }
    struct Rendered { var depth: PixelBuffer; var floorPatch: Patch; var topPatch: Patch?; var raw: String }

    /// Renders with the reference script into `folder`; the depth as a depthFloat32 buffer.
    func render(in folder: TemporaryFolder, file: StaticString = #filePath, line: UInt = #line) throws -> Rendered {
        let py = try PythonReference.python(importing: ["numpy"], file: file, line: line)
        let scene: [String: Any] = [
            "width": Self.width, "height": Self.height, "fx": 600.0, "fy": 600.0, "cx": 319.5, "cy": 239.5,
            "up": [Self.up.x, Self.up.y, Self.up.z], "hc": Self.cameraHeight, "kind": kind, "size": [size.x, size.y, size.z],
            "center_px": [centerPixel.x, centerPixel.y], "yaw_deg": yawDeg, "sigma": sigma, "seed": seed,
            "patch_px": [110.0, 400.0], "patch_half": [0.08, 0.05],
        ]
        let sceneFile = folder.file("\(kind).json"), raw = folder.file("\(kind).f32")
        try JSONSerialization.data(withJSONObject: scene).write(to: URL(fileURLWithPath: sceneFile))
        let r = try TestProcess.run([py, Repo.fixture("measure_reference.py"), "render", sceneFile, raw], timeout: 120, file: file, line: line)
        XCTAssertEqual(r.status, 0, r.output, file: file, line: line)
        let doc = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(r.output.utf8)) as? [String: Any], r.output, file: file, line: line)
        func patch(_ key: String) -> Patch? {
            guard let p = doc[key] as? [String: Any], let poly = p["polygon"] as? [[Double]], let area = p["area"] as? Double else { return nil }
            return Patch(polygon: PixelPolygon(poly.map { SIMD2($0[0], $0[1]) }), area: area)
        }
        let bytes = try Data(contentsOf: URL(fileURLWithPath: raw))
        XCTAssertEqual(bytes.count, Self.width * Self.height * 4, file: file, line: line)
        let b = PixelBuffer(width: Self.width, height: Self.height, format: .depthFloat32)
        bytes.withUnsafeBytes { src in
            for y in 0..<Self.height {
                let row = b.row(y, as: Float.self)
                for x in 0..<Self.width { row[x] = src.loadUnaligned(fromByteOffset: (y * Self.width + x) * 4, as: Float.self) }
            }
        }
        return Rendered(depth: b, floorPatch: try XCTUnwrap(patch("floor_patch"), file: file, line: line), topPatch: patch("top_patch"), raw: raw)
    }
}

final class DepthMeasureTests: XCTestCase {
    let k = MeasureScene.intrinsics

    func assertRelative(_ a: Double, _ b: Double, _ rel: Double, _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(a, b, accuracy: rel * abs(b), "\(what): \(a) vs \(b) (\(String(format: "%+.3f", 100 * (a / b - 1))) %)", file: file, line: line)
    }

    func angleDeg(_ a: SIMD3<Double>, _ b: SIMD3<Double>) -> Double {
        acos(min(1, (a * b).sum() / ((a * a).sum() * (b * b).sum()).squareRoot())) * 180 / .pi
    }

    /// No region: the floor by RANSAC, the box as the largest cluster above it. Everything within 1 %.
    func testBoxOnTiltedFloorKnownAnswers() throws {
        let folder = TemporaryFolder("measure")
        let scene = MeasureScene()
        let r = try scene.render(in: folder)
        let s = MeasureSettings(intrinsics: k)
        let floor = try DepthMeasure.floor(depth: r.depth, settings: s)
        XCTAssertEqual(floor.origin, .ransac)
        XCTAssertLessThan(angleDeg(floor.plane.normal, scene.truePlane.normal), 0.05, "floor normal")
        XCTAssertEqual(floor.plane.d, scene.truePlane.d, accuracy: 0.001, "camera height")
        XCTAssertEqual(floor.rms, scene.sigma * 0.97, accuracy: 0.2 * scene.sigma, "floor RMS ≈ σ·n_z")

        let v = try DepthMeasure.volume(depth: r.depth, settings: s)
        assertRelative(v.volumeM3, scene.size.x * scene.size.y * scene.size.z, 0.01, "box volume")
        XCTAssertLessThan(v.volumeBelowM3, 1e-6, "nothing below a flat floor but noise past 3σ")

        let b = try DepthMeasure.box(depth: r.depth, settings: s)
        assertRelative(b.lengthM, scene.size.x, 0.01, "length")
        assertRelative(b.widthM, scene.size.y, 0.01, "width")
        assertRelative(b.heightM, scene.size.z, 0.01, "height")
        XCTAssertEqual(b.corners.count, 4)
        for c in b.corners { XCTAssertEqual(b.floor.plane.distance(SIMD3<Float>(c)), 0, accuracy: 1e-6, "corners lie on the floor") }

        let top = try XCTUnwrap(r.topPatch)
        assertRelative(try DepthMeasure.area(depth: r.depth, intrinsics: k, polygon: top.polygon).areaM2, top.area, 0.01, "area on the box top")
        let a = try DepthMeasure.area(depth: r.depth, intrinsics: k, polygon: r.floorPatch.polygon)
        assertRelative(a.areaM2, r.floorPatch.area, 0.01, "area on the floor")
        XCTAssertLessThan(angleDeg(a.plane.normal, scene.truePlane.normal), 0.5)
        XCTAssertEqual(a.points, a.pixels)
    }

    /// A floor polygon and an ROI: the same answers, and the numpy port of the integration on the
    /// same depth image agrees to rounding (area, floor, volume, the pixels counted).
    func testBoxWithFloorPolygonAndROIAgainstNumpy() throws {
        let folder = TemporaryFolder("measure")
        let scene = MeasureScene()
        let r = try scene.render(in: folder)
        let top = try XCTUnwrap(r.topPatch)
        let region = PixelPolygon(QualityROI(x: 150, y: 100, width: 320, height: 340))
        let s = MeasureSettings(intrinsics: k, floorTolerance: 0.003)
        let floor = try DepthMeasure.floor(depth: r.depth, settings: s, region: r.floorPatch.polygon)
        XCTAssertEqual(floor.origin, .region)
        XCTAssertEqual(floor.tolerance, 0.003)
        let v = try DepthMeasure.volume(depth: r.depth, settings: s, floor: floor, region: region)
        assertRelative(v.volumeM3, scene.size.x * scene.size.y * scene.size.z, 0.01, "box volume in the ROI")
        let b = try DepthMeasure.box(depth: r.depth, settings: s, floor: floor, region: region)
        assertRelative(b.lengthM, scene.size.x, 0.01, "length")
        assertRelative(b.widthM, scene.size.y, 0.01, "width")
        assertRelative(b.heightM, scene.size.z, 0.01, "height")
        let a = try DepthMeasure.area(depth: r.depth, intrinsics: k, polygon: top.polygon)

        let ref = try Self.numpy(raw: r.raw, folder: folder, area: top.polygon, floor: r.floorPatch.polygon, region: region,
                                 tolerance: 0.003, continuity: s.continuity)
        assertRelative(a.areaM2, try XCTUnwrap(ref["area_m2"] as? Double), 1e-6, "area vs numpy")
        XCTAssertEqual(a.pixels, ref["area_pixels"] as? Int, "the polygon's pixels (even-odd rule)")
        XCTAssertEqual(a.points, ref["area_points"] as? Int)
        let rf = try XCTUnwrap(ref["floor"] as? [String: Any])
        let rn = try XCTUnwrap(rf["normal"] as? [Double])
        XCTAssertLessThan(angleDeg(floor.plane.normal, SIMD3(rn[0], rn[1], rn[2])), 1e-5, "floor normal vs numpy's SVD")
        XCTAssertEqual(floor.plane.d, try XCTUnwrap(rf["d"] as? Double), accuracy: 1e-7)
        XCTAssertEqual(v.abovePixels, ref["above_pixels"] as? Int)
        XCTAssertEqual(v.belowPixels, ref["below_pixels"] as? Int)
        assertRelative(v.volumeM3, try XCTUnwrap(ref["volume_m3"] as? Double), 1e-6, "volume vs numpy")
        XCTAssertEqual(v.volumeBelowM3, try XCTUnwrap(ref["volume_below_m3"] as? Double), accuracy: 1e-9)
    }

    /// A bin sunk into the tilted floor: its volume below the floor within 1 %, with RANSAC and with
    /// the numpy integration on an ROI around it.
    func testCavityVolumeBelowTheFloor() throws {
        let folder = TemporaryFolder("measure")
        let scene = MeasureScene.cavity
        let r = try scene.render(in: folder)
        let truth = scene.size.x * scene.size.y * scene.size.z
        let s = MeasureSettings(intrinsics: k)
        let v = try DepthMeasure.volume(depth: r.depth, settings: s)
        assertRelative(v.volumeBelowM3, truth, 0.01, "bin volume (RANSAC floor, largest cluster below)")
        XCTAssertLessThan(v.volumeM3, 1e-6)

        let region = PixelPolygon(QualityROI(x: Int(scene.centerPixel.x) - 180, y: Int(scene.centerPixel.y) - 140, width: 360, height: 280))
        let fixed = MeasureSettings(intrinsics: k, floorTolerance: 0.003)
        let floor = try DepthMeasure.floor(depth: r.depth, settings: fixed, region: r.floorPatch.polygon)
        let inROI = try DepthMeasure.volume(depth: r.depth, settings: fixed, floor: floor, region: region)
        assertRelative(inROI.volumeBelowM3, truth, 0.01, "bin volume (floor polygon, ROI)")
        let ref = try Self.numpy(raw: r.raw, folder: folder, area: nil, floor: r.floorPatch.polygon, region: region,
                                 tolerance: 0.003, continuity: fixed.continuity)
        assertRelative(inROI.volumeBelowM3, try XCTUnwrap(ref["volume_below_m3"] as? Double), 1e-6, "bin volume vs numpy")
        XCTAssertEqual(inROI.belowPixels, ref["below_pixels"] as? Int)
    }

    /// 6000 points on a tilted plane (σ 1 mm) and 4000 (40 %) anywhere in a 2 m cube in front of the
    /// camera: RANSAC finds the plane, and the same seed finds the same one.
    func testRANSACFindsThePlaneWith40PercentOutliers() throws {
        var rng = SeededRandom(seed: 42)
        let n = SIMD3<Double>(0.3, -0.5, -1) / (SIMD3<Double>(0.3, -0.5, -1) * SIMD3<Double>(0.3, -0.5, -1)).sum().squareRoot()
        let d = 1.5
        let e1 = DepthMeasure.planeAxis(n), e2 = PlaneRANSAC.cross(n, e1)
        var pts: [SIMD3<Float>] = []
        for i in 0..<10_000 {
            if i % 5 < 3 {
                let a = Double.random(in: -1...1, using: &rng), b = Double.random(in: -1...1, using: &rng)
                let u1 = Double.random(in: Double.ulpOfOne..<1, using: &rng), u2 = Double.random(in: 0..<1, using: &rng)
                let noise = 0.001 * (-2 * log(u1)).squareRoot() * cos(2 * .pi * u2)
                let p = -d * n + a * e1 + b * e2 + noise * n
                pts.append(SIMD3<Float>(Float(p.x), Float(p.y), Float(p.z)))
            } else {
                pts.append(SIMD3(Float.random(in: -1...1, using: &rng), Float.random(in: -1...1, using: &rng), Float.random(in: 0.5...2.5, using: &rng)))
            }
        }
        let settings = RANSACSettings(iterations: 200, threshold: 0.005, seed: 3)
        let found = try XCTUnwrap(PlaneRANSAC.fit(pts, settings: settings))
        XCTAssertLessThan(angleDeg(found.plane.normal, n), 0.1)
        XCTAssertEqual(found.plane.d, d, accuracy: 0.001)
        XCTAssertGreaterThan(found.inliers, 6000 - 10)
        XCTAssertLessThan(found.inliers, 6000 + 100, "a few outliers fall within 5 mm of the plane")
        XCTAssertEqual(found.inlierRMS, 0.001, accuracy: 0.0002)
        XCTAssertEqual(PlaneRANSAC.fit(pts, settings: settings), found, "the same seed, the same plane")
    }

    /// The area of picked 3D corners (a point list's polygon): a 0.3 × 0.2 m rectangle turned in a
    /// plane tilted 30° about x and 20° about y, 1.5 m away, its corners 1 mm off the plane
    /// alternately: 0.06 m², the plane within the jitter, and fewer than 3 corners refused.
    func testAreaOfCornersOnTheirOwnPlane() throws {
        let (a, b) = (30 * Double.pi / 180, 20 * Double.pi / 180)
        let u = SIMD3<Double>(cos(b), 0, -sin(b))
        let v = SIMD3<Double>(sin(a) * sin(b), cos(a), sin(a) * cos(b))
        let n = PlaneRANSAC.cross(u, v)
        let center = SIMD3<Double>(0.1, -0.05, 1.5)
        let corners: [SIMD3<Float>] = [(-0.15, -0.1), (0.15, -0.1), (0.15, 0.1), (-0.15, 0.1)].enumerated().map { i, c in
            SIMD3<Float>(center + c.0 * u + c.1 * v + (i % 2 == 0 ? 0.001 : -0.001) * n)
        }
        let m = try DepthMeasure.area(corners: corners)
        XCTAssertEqual(m.areaM2, 0.06, accuracy: 1e-6)
        XCTAssertEqual(abs((m.plane.normal * n).sum()), 1, accuracy: 1e-9)
        XCTAssertEqual(m.rms, 0.001, accuracy: 1e-6)
        XCTAssertThrowsError(try DepthMeasure.area(corners: Array(corners.prefix(2))))
    }

    func testMinimumAreaRectangleOfATurnedRectangle() {
        let t = 0.3, a = SIMD2(cos(t), sin(t)), b = SIMD2(-sin(t), cos(t))
        var pts: [SIMD2<Double>] = []
        for i in 0...20 { for j in 0...10 { pts.append(SIMD2(5, -2) + Double(i) / 20 * 0.8 * a + Double(j) / 10 * 0.3 * b) } }
        let r = MinAreaRectangle(points: pts)
        XCTAssertEqual(max(r.sides.0, r.sides.1), 0.8, accuracy: 1e-9)
        XCTAssertEqual(min(r.sides.0, r.sides.1), 0.3, accuracy: 1e-9)
        let grid = (0...6).flatMap { i in (0...4).map { j in SIMD2(Double(i), Double(j)) } }
        XCTAssertEqual(MinAreaRectangle.convexHull(grid), [SIMD2(0, 0), SIMD2(6, 0), SIMD2(6, 4), SIMD2(0, 4)], "no collinear points")
    }

    func testPolygonParsingMaskAndBadInput() throws {
        let p = try PixelPolygon(parsing: "10,10, 50,12,40.5,60,5,45")
        XCTAssertEqual(p.vertices.count, 4)
        let mask = p.mask(width: 64, height: 64)
        for v in 0..<64 { for u in 0..<64 { XCTAssertEqual(mask[v * 64 + u], p.contains(SIMD2(Double(u), Double(v))), "\(u),\(v)") } }
        XCTAssertEqual(PixelPolygon(QualityROI(x: 3, y: 4, width: 5, height: 6)).mask(width: 20, height: 20).filter { $0 }.count, 30)
        for bad in ["1,2,3,4", "1,2,3", "a,b,c,d,e,f", "", "1,2,3,4,5,nan"] {
            XCTAssertThrowsError(try PixelPolygon(parsing: bad), bad) { XCTAssertTrue("\($0)".contains("--area"), "\($0)") }
        }
        let depth = PixelBuffer(width: 64, height: 48, format: .depthFloat32)
        let kk = CameraIntrinsics.default(width: 64, height: 48)
        func message(_ body: () throws -> Void) -> String {
            do { try body(); return "no error" } catch { return "\(error)" }
        }
        XCTAssertTrue(message { _ = try DepthMeasure.area(depth: depth, intrinsics: kk, polygon: try PixelPolygon(parsing: "0,0,70,0,0,40")) }
            .contains("outside the 64x48"))
        XCTAssertTrue(message { _ = try DepthMeasure.area(depth: depth, intrinsics: kk, polygon: try PixelPolygon(parsing: "0,0,30,0,0,40")) }
            .contains("no valid depth"))
        XCTAssertTrue(message { _ = try DepthMeasure.volume(depth: depth, settings: MeasureSettings(intrinsics: kk)) }.contains("valid depth"))
        XCTAssertTrue(message { _ = try DepthMeasure.box(depth: depth, settings: MeasureSettings(intrinsics: k)) }.contains("intrinsics are for 640x480"))
        // A flat floor and nothing on it: no box.
        for v in 0..<48 { for u in 0..<64 { depth.row(v, as: Float.self)[u] = 1 } }
        XCTAssertTrue(message { _ = try DepthMeasure.box(depth: depth, settings: MeasureSettings(intrinsics: kk)) }.contains("no object above the floor"))
    }

    /// Runs the reference's `measure` on the raw depth; returns its JSON.
    static func numpy(raw: String, folder: TemporaryFolder, area: PixelPolygon?, floor: PixelPolygon, region: PixelPolygon,
                      tolerance: Double, continuity: Float, file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        let py = try PythonReference.python(importing: ["numpy"], file: file, line: line)
        let k = MeasureScene.intrinsics
        func list(_ p: PixelPolygon) -> [[Double]] { p.vertices.map { [$0.x, $0.y] } }
        var q: [String: Any] = ["width": k.width, "height": k.height, "fx": Double(k.fx), "fy": Double(k.fy), "cx": Double(k.cx),
                                "cy": Double(k.cy), "floor": list(floor), "region": list(region), "tolerance": tolerance,
                                "continuity": Double(continuity)]
        if let area { q["area"] = list(area) }
        let params = folder.file("params.json")
        try JSONSerialization.data(withJSONObject: q).write(to: URL(fileURLWithPath: params))
        let r = try TestProcess.run([py, Repo.fixture("measure_reference.py"), "measure", raw, params], timeout: 120, file: file, line: line)
        XCTAssertEqual(r.status, 0, r.output, file: file, line: line)
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(r.output.utf8)) as? [String: Any], r.output, file: file, line: line)
    }
}
