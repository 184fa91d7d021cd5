import DepthKit
import Foundation
import TestSupport
import XCTest

/// The panel's Quality section and the 3D pick tool's area, volume and box, driven as a person
/// would (xdotool) and read back from `--log-readout` lines: the section's rows are `depthlens
/// quality`'s on the same frame and ROI, its CSV is `quality --csv`'s; the pick tool's area is the
/// numpy reference's (Tests/Fixtures/measure_reference.py) for the polygon picked, and the volume
/// and box are the ray-cast box's within 1 % (and `depthlens measure`'s to the digits printed).
final class QualityMeasureWindowTests: WindowTestCase {
    static let k = CameraIntrinsics(fx: 600, fy: 600, cx: 319.5, cy: 239.5, width: 640, height: 480)

    /// Writes a snapshot (NAME.json, NAME_color.png, NAME_depth.png at 10000 units/m) of `z` (meters, 0: none).
    func writeSnapshot(_ name: String, _ z: [Float]) throws -> String {
        let scale: Float = 10000
        let units = PixelBuffer(width: 640, height: 480, format: .gray16(depthScale: scale))
        for y in 0..<480 { for x in 0..<640 { units.setSample(x: x, y: y, (z[y * 640 + x] * scale).rounded()) } }
        try ImageIO.write(units, to: path("\(name)_depth.png"))
        try ImageIO.write(SyntheticScene().render(width: 640, height: 480, time: 0).color, to: path("\(name)_color.png"))
        let meta = SnapshotMetadata(intrinsics: Self.k, depthScale: scale, mode: "depth", timestamp: 0.25, frame: 0, source: "window test",
                                    files: ["\(name)_color.png", "\(name)_depth.png"])
        let json = path("\(name).json")
        try FileSupport.atomicWrite(try meta.encoded(), to: json)
        return json
    }

    func cli(_ args: [String]) throws -> String {
        let (status, out, err) = try runTool(Repo.depthlens, args)
        XCTAssertEqual(status, 0, err)
        return out
    }

    // MARK: Quality

    func testQualitySectionIsTheQualityCommandOnTheSameFrameAndROI() throws {
        // A tilted wall about 1 m away with 1 mm of noise and a hole of no depth.
        var rng = SeededRandom(seed: 27)
        var z = [Float](repeating: 0, count: 640 * 480)
        for y in 0..<480 {
            for x in 0..<640 where !((250..<290).contains(x) && (200..<230).contains(y)) {
                z[y * 640 + x] = 1 + 0.0004 * Float(x - 320) - 0.0002 * Float(y - 240) + rng.float(-0.0017, 0.0017)
            }
        }
        let json = try writeSnapshot("wall", z)
        let x = try XServer.start()
        defer { x.stop() }
        let snaps = path("snaps")
        let v = try ViewerRun(x: x, args: ["--source", "snapshot:\(json)", "--log-ui", "--log-readout", "--size", "1000x600",
                                           "--snapshot-dir", snaps])
        defer { if v.process.isRunning { v.process.terminate() } }
        try v.waitForLine("ui: ready", timeout: 60)

        // Y opens the section: the default ROI, the centered 40 %.
        var n = v.lines.count
        try v.key("y")
        let centered = try v.waitForLine("quality: roi ", after: n, timeout: 30)
        let expected40 = try cli(["quality", "--source", "snapshot:\(json)", "--roi", "0.4"]).split(separator: "\n")[0]
        XCTAssertEqual(centered, "quality: roi 192,144,256,192  \(expected40)")

        // A drag on the image sets the ROI rectangle: the panel takes 360 of 1000 px, the 640×480
        // picture is letterboxed into 640×600 at y = 60, so window (100, 160) is about depth pixel
        // (100, 100) and (300, 310) about (300, 250) (a pixel either way: where X puts the window).
        n = v.lines.count
        try v.drag(from: 100, 160, to: 300, 310)
        let dragged = try v.waitForLine("quality: roi ", after: n, timeout: 30)
        let roi = String(dragged.dropFirst("quality: roi ".count).prefix { $0 != " " })
        let r = roi.split(separator: ",").compactMap { Int($0) }
        XCTAssertEqual(r.count, 4, dragged)
        for (got, want) in zip(r, [100, 100, 201, 151]) { XCTAssertEqual(got, want, accuracy: 2, dragged) }
        let expected = try cli(["quality", "--source", "snapshot:\(json)", "--roi", roi]).split(separator: "\n")[0]
        XCTAssertEqual(dragged, "quality: roi \(roi)  \(expected)")
        x.xdotoolMoveAway()
        try v.waitForFrames(3)
        let shot = try x.screenshot(saveAs: path("quality.png"))
        keep(path("quality.png"), as: "quality-roi")
        // The ROI's left edge (window x 100, rows 160…310) is drawn in the section's green.
        var green = 0
        for yy in stride(from: 170, to: 300, by: 5) where (98...102).contains(where: { xx in
            let c = shot.rgb(xx, yy)
            return c.y > 200 && c.x < 120 && c.z < 170
        }) { green += 1 }
        XCTAssertGreaterThan(green, 20, "the ROI rectangle is drawn on the image")

        // A ground truth typed into the section's field (Enter applies it): Z accuracy, as `--gt-mm`.
        try v.waitForFrames(5)
        _ = try v.waitForLine("layout: quality-gt ", timeout: 10)
        let gtRect = try XCTUnwrap(v.lines.last { $0.hasPrefix("layout: quality-gt ") }).split(separator: " ").compactMap { Double($0) }
        XCTAssertEqual(gtRect.count, 4)
        n = v.lines.count
        try v.click(Int(gtRect[0] + gtRect[2] / 2), Int(gtRect[1] + gtRect[3] / 2))
        try v.waitForFrames(3)
        for k in ["ctrl+a", "9", "5", "0", "Return"] {
            try x.xdotool(["key", k])
            try v.waitForFrames(2)
        }
        let withGT = try v.waitForLine("quality: roi ", after: n, timeout: 30)
        let expectedGT = try cli(["quality", "--source", "snapshot:\(json)", "--roi", roi, "--gt-mm", "950"]).split(separator: "\n")[0]
        XCTAssertEqual(withGT, "quality: roi \(roi)  \(expectedGT)")
        XCTAssertFalse(expectedGT.contains("z-accuracy - %"), String(expectedGT))

        // J writes the rows as `quality --csv` does.
        n = v.lines.count
        try v.key("j")
        let wrote = try v.waitForLine("notice: quality: wrote 1 row to ", after: n, timeout: 30)
        let file = String(wrote.dropFirst("notice: quality: wrote 1 row to ".count))
        let reference = path("reference.csv")
        _ = try cli(["quality", "--source", "snapshot:\(json)", "--roi", roi, "--gt-mm", "950", "--csv", reference])
        XCTAssertEqual(try String(contentsOfFile: file, encoding: .utf8), try String(contentsOfFile: reference, encoding: .utf8))
        v.quit()
    }

    /// A RealSense recording (its stereo baseline gives the sub-pixel RMS), paused on frame 1:
    /// the section's row is `quality --frames 1:1`'s, every column.
    func testQualitySectionOnARealSenseBagWithItsBaseline() throws {
        let bag = Repo.fixture("realsense-d435-640x480.bag")
        let x = try XServer.start()
        defer { x.stop() }
        let v = try ViewerRun(x: x, args: ["--source", "bag:\(bag)", "--paused", "--frame", "1", "--log-ui", "--log-readout",
                                           "--size", "1000x600"])
        defer { if v.process.isRunning { v.process.terminate() } }
        try v.waitForLine("ui: ready", timeout: 60)
        let n = v.lines.count
        try v.key("y")
        let row = try v.waitForLine("quality: roi ", after: n, timeout: 60)
        let expected = try cli(["quality", "--source", "bag:\(bag)", "--frames", "1:1"]).split(separator: "\n")[0]
        XCTAssertEqual(row, "quality: roi 192,144,256,192  \(expected)")
        XCTAssertFalse(expected.contains("subpixel - px"), "the bag has a baseline: \(expected)")
        v.quit()
    }

    // MARK: Pick tools

    /// The box scene of MeasureCommandTests: a 0.4 × 0.3 × 0.25 m box on a tilted floor 1.2 m below
    /// the camera, ray-cast by the numpy reference; returns the snapshot, the depth as the viewer
    /// reads it (f32 for the reference) and the reference's top and floor patches.
    func boxScene() throws -> (json: String, f32: String, top: [[Double]], topArea: Double, floor: [[Double]], py: String) {
        let py = try PythonReference.python(importing: ["numpy"])
        let scene: [String: Any] = [
            "width": 640, "height": 480, "fx": 600.0, "fy": 600.0, "cx": 319.5, "cy": 239.5, "up": [-0.2, 0.15, -1.0], "hc": 1.2,
            "kind": "box", "size": [0.4, 0.3, 0.25], "center_px": [330.0, 260.0], "yaw_deg": 25.0, "sigma": 0.0005, "seed": 11,
            "patch_px": [110.0, 400.0], "patch_half": [0.08, 0.05],
        ]
        let sceneFile = path("scene.json"), raw = path("scene.f32")
        try JSONSerialization.data(withJSONObject: scene).write(to: URL(fileURLWithPath: sceneFile))
        let r = try TestProcess.run([py, Repo.fixture("measure_reference.py"), "render", sceneFile, raw], timeout: 120)
        XCTAssertEqual(r.status, 0, r.output)
        let doc = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(r.output.utf8)) as? [String: Any], r.output)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: raw))
        // As stored (0.1 mm units), which is what the viewer measures and the reference is given.
        var z = [Float](repeating: 0, count: 640 * 480)
        bytes.withUnsafeBytes { src in
            for i in 0..<(640 * 480) { z[i] = (src.loadUnaligned(fromByteOffset: i * 4, as: Float.self) * 10000).rounded() / 10000 }
        }
        let json = try writeSnapshot("box", z)
        let f32 = path("stored.f32")
        try z.withUnsafeBufferPointer { try Data(buffer: $0).write(to: URL(fileURLWithPath: f32)) }
        let top = try XCTUnwrap(doc["top_patch"] as? [String: Any]), floor = try XCTUnwrap(doc["floor_patch"] as? [String: Any])
        return (json, f32, try XCTUnwrap(top["polygon"] as? [[Double]]), try XCTUnwrap(top["area"] as? Double),
                try XCTUnwrap(floor["polygon"] as? [[Double]]), py)
    }

    /// The first number after `label` in `line`.
    func number(after label: String, in line: String) throws -> Double {
        let r = try XCTUnwrap(line.range(of: label), "'\(label)' in \(line)")
        let rest = line[r.upperBound...].drop { $0 == " " }
        return try XCTUnwrap(Double(rest.prefix { "0123456789.-".contains($0) }), line)
    }

    /// The pixel polygon after `label` ("…, polygon 1,2,3,4,5,6").
    func polygon(after label: String, in line: String) throws -> [[Double]] {
        let r = try XCTUnwrap(line.range(of: label), "'\(label)' in \(line)")
        let nums = line[r.upperBound...].prefix { "0123456789.,-".contains($0) }.split(separator: ",").compactMap { Double($0) }
        return stride(from: 0, to: nums.count - 1, by: 2).map { [nums[$0], nums[$0 + 1]] }
    }

    func testPickToolsMeasureAreaVolumeAndBoxOfTheBoxScene() throws {
        let s = try boxScene()
        let x = try XServer.start()
        defer { x.stop() }
        // 640×480 without the panel: the home view puts depth pixel (u, v) at window point (u, v).
        let v = try ViewerRun(x: x, args: ["--source", "snapshot:\(s.json)", "--view", "3d", "--no-panel", "--log-ui", "--log-readout",
                                           "--size", "640x480"])
        defer { if v.process.isRunning { v.process.terminate() } }
        try v.waitForLine("ui: ready", timeout: 60)
        try v.waitForFrames(3)

        func tool(_ name: String) throws {
            for _ in 0..<4 {
                let n = v.lines.count
                try v.key("a")
                if try v.waitForLine("pick tool ", after: n, timeout: 10) == "pick tool \(name)" { return }
            }
            XCTFail("no pick tool \(name)")
        }
        func pick(_ p: [Double]) throws {
            let n = v.lines.count
            try v.click(Int(p[0].rounded()), Int(p[1].rounded()))
            _ = try v.waitForLine("pick:", after: n, timeout: 10)
        }
        func measure(_ prefix: String) throws -> String {
            let n = v.lines.count
            try v.key("Return")
            return try v.waitForLine("measure: \(prefix)", after: n, timeout: 60)
        }

        // Area: the top patch's corners, clicked; the numpy reference on the polygon picked, and the truth.
        try tool("area")
        for p in s.top { try pick(p) }
        let areaLine = try measure("area ")
        let area = try number(after: "measure: area", in: areaLine)
        let picked = try polygon(after: ", polygon ", in: areaLine)
        XCTAssertEqual(picked.count, 4, areaLine)
        for (a, b) in zip(picked, s.top) {
            XCTAssertEqual(a[0], b[0].rounded(), accuracy: 1); XCTAssertEqual(a[1], b[1].rounded(), accuracy: 1)
        }
        let params = path("params.json")
        let q: [String: Any] = ["width": 640, "height": 480, "fx": 600.0, "fy": 600.0, "cx": 319.5, "cy": 239.5, "area": picked]
        try JSONSerialization.data(withJSONObject: q).write(to: URL(fileURLWithPath: params))
        let ref = try TestProcess.run([s.py, Repo.fixture("measure_reference.py"), "measure", s.f32, params], timeout: 120)
        XCTAssertEqual(ref.status, 0, ref.output)
        let refDoc = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(ref.output.utf8)) as? [String: Any], ref.output)
        let refArea = try XCTUnwrap(refDoc["area_m2"] as? Double)
        XCTAssertEqual(area, refArea, accuracy: 2e-6, "the picked polygon's area is the reference's")
        XCTAssertEqual(area, s.topArea, accuracy: 0.01 * s.topArea, "the top patch's true area")

        // Volume above RANSAC's floor (no picks), then above the plane through a picked floor polygon.
        try tool("volume")
        let ransacVolume = try number(after: "measure: volume", in: try measure("volume "))
        XCTAssertEqual(ransacVolume, 0.4 * 0.3 * 0.25, accuracy: 0.01 * 0.03)
        let all = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(try cli(["measure", "--source", "snapshot:\(s.json)", "--json"]).utf8))
                                as? [String: Any])
        XCTAssertEqual(ransacVolume, try XCTUnwrap(all["volume_m3"] as? Double), accuracy: 1e-6, "depthlens measure --volume")
        for p in s.floor { try pick(p) }
        let n = v.lines.count
        try v.key("Return")
        let floorLine = try v.waitForLine("measure: floor: ", after: n, timeout: 60)
        let floorPolygon = try polygon(after: "picked polygon ", in: floorLine)
        XCTAssertEqual(floorPolygon.count, 4, floorLine)
        let volumeLine = try v.waitForLine("measure: volume ", after: n, timeout: 60)
        let floorDoc = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(try cli([
            "measure", "--source", "snapshot:\(s.json)", "--volume", "--json",
            "--floor", floorPolygon.map { "\(Int($0[0])),\(Int($0[1]))" }.joined(separator: ","),
        ]).utf8)) as? [String: Any])
        XCTAssertEqual(try number(after: "measure: volume", in: volumeLine), try XCTUnwrap(floorDoc["volume_m3"] as? Double), accuracy: 1e-6)
        XCTAssertEqual(try number(after: "measure: volume", in: volumeLine), 0.03, accuracy: 0.01 * 0.03)

        // Box on RANSAC's floor.
        try tool("box")
        let boxLine = try measure("box ")
        let dims = Array(boxLine.dropFirst("measure: box ".count).split(separator: " ").compactMap { Double($0) }.prefix(3))
        XCTAssertEqual(dims.count, 3, boxLine)
        for (d, truth) in zip(dims, [0.4, 0.3, 0.25]) { XCTAssertEqual(d, truth, accuracy: 0.01 * truth, boxLine) }
        XCTAssertEqual(dims[0], try XCTUnwrap(all["length_m"] as? Double), accuracy: 1e-4)
        XCTAssertEqual(dims[2], try XCTUnwrap(all["height_m"] as? Double), accuracy: 1e-4)
        x.xdotoolMoveAway()
        let shot = try x.screenshot(saveAs: path("box.png"))
        _ = shot
        keep(path("box.png"), as: "measure-box")
        v.quit()
    }
    /// On a PLY point list (no depth pixels) the area tool measures the picked points' polygon on
    /// their own plane: four corners of a 0.5 × 0.3 m rectangle tilted 30° about x, 2 m away.
    func testPickedAreaOnAPointList() throws {
        let x = try XServer.start()
        defer { x.stop() }
        let t = Float.pi / 6
        let corners = [(-0.25, -0.15), (0.25, -0.15), (0.25, 0.15), (-0.25, 0.15)].map { (a: Float, b: Float) in
            SIMD3<Float>(a, b * cos(t), 2 + b * sin(t))
        }
        let colors: [SIMD3<UInt8>] = [SIMD3(255, 0, 0), SIMD3(0, 0, 255), SIMD3(0, 255, 0), SIMD3(255, 255, 0)]
        let ply = path("corners.ply")
        try PLYWriter.write(PointCloud(positions: corners, colors: colors), to: ply)
        let v = try ViewerRun(x: x, args: ["--source", "ply:\(ply)", "--no-panel", "--log-ui", "--log-readout", "--size", "640x480"])
        defer { if v.process.isRunning { v.process.terminate() } }
        try v.waitForLine("ui: ready", timeout: 60)
        try v.waitForFrames(5)
        var spots: [(Int, Int)] = []
        _ = try x.screenshot(saveAs: path("corners.png")) { s in
            spots = colors.compactMap { c in
                for yy in 0..<480 { for xx in 0..<640 where s.rgb(xx, yy) == SIMD3<Int>(truncatingIfNeeded: c) { return (xx, yy) } }
                return nil
            }
            return spots.count == 4
        }
        XCTAssertEqual(spots.count, 4, "the four corners are drawn")
        var n = v.lines.count
        try v.key("a")
        XCTAssertEqual(try v.waitForLine("pick tool ", after: n, timeout: 10), "pick tool area")
        for spot in spots {
            n = v.lines.count
            try v.click(spot.0, spot.1)
            _ = try v.waitForLine("pick:", after: n, timeout: 10)
        }
        n = v.lines.count
        try v.key("Return")
        let line = try v.waitForLine("measure: area ", after: n, timeout: 30)
        XCTAssertTrue(line.hasPrefix("measure: area 0.150000 m² on the plane through the 4 picked points"), line)
        v.quit()
    }
}
