import XCTest
import Foundation
import DepthKit
import TestSupport

/// `depthlens measure` on a synthetic snapshot: a box on a tilted floor, ray-cast by
/// Tests/Fixtures/measure_reference.py, stored as 16-bit depth at 0.1 mm; known sizes within 1 %,
/// and bad input as one line with exit 1.
final class MeasureCommandTests: CLITestCase {
    static let k = CameraIntrinsics(fx: 600, fy: 600, cx: 319.5, cy: 239.5, width: 640, height: 480)
    static let size = [0.4, 0.3, 0.25]

    /// Renders the scene, writes NAME_color.png, NAME_depth.png (10000 units/m, a 40×30 hole of no
    /// depth at 20,20) and NAME.json; returns the snapshot JSON's path and the reference's polygons.
    func writeScene() throws -> (json: String, top: [[Double]], topArea: Double, floor: [[Double]]) {
        let py = try PythonReference.python(importing: ["numpy"])
        let scene: [String: Any] = [
            "width": 640, "height": 480, "fx": 600.0, "fy": 600.0, "cx": 319.5, "cy": 239.5, "up": [-0.2, 0.15, -1.0], "hc": 1.2,
            "kind": "box", "size": Self.size, "center_px": [330.0, 260.0], "yaw_deg": 25.0, "sigma": 0.0005, "seed": 11,
            "patch_px": [110.0, 400.0], "patch_half": [0.08, 0.05],
        ]
        let sceneFile = path("scene.json"), raw = path("scene.f32")
        try JSONSerialization.data(withJSONObject: scene).write(to: URL(fileURLWithPath: sceneFile))
        let r = try TestProcess.run([py, Repo.fixture("measure_reference.py"), "render", sceneFile, raw], timeout: 120)
        XCTAssertEqual(r.status, 0, r.output)
        let doc = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(r.output.utf8)) as? [String: Any], r.output)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: raw))
        let scale: Float = 10000
        let units = PixelBuffer(width: 640, height: 480, format: .gray16(depthScale: scale))
        bytes.withUnsafeBytes { src in
            for y in 0..<480 {
                for x in 0..<640 {
                    let hole = (20..<60).contains(x) && (20..<50).contains(y)
                    let z = src.loadUnaligned(fromByteOffset: (y * 640 + x) * 4, as: Float.self)
                    units.setSample(x: x, y: y, hole ? 0 : (z * scale).rounded())
                }
            }
        }
        try ImageIO.write(units, to: path("box_depth.png"))
        try ImageIO.write(SyntheticScene().render(width: 640, height: 480, time: 0).color, to: path("box_color.png"))
        let meta = SnapshotMetadata(intrinsics: Self.k, depthScale: scale, mode: "depth", timestamp: 0, frame: 0, source: "measure test",
                                    files: ["box_color.png", "box_depth.png"])
        let json = path("box.json")
        try FileSupport.atomicWrite(try meta.encoded(), to: json)
        let top = try XCTUnwrap(doc["top_patch"] as? [String: Any]), floor = try XCTUnwrap(doc["floor_patch"] as? [String: Any])
        return (json, try XCTUnwrap(top["polygon"] as? [[Double]]), try XCTUnwrap(top["area"] as? Double),
                try XCTUnwrap(floor["polygon"] as? [[Double]]))
    }

    static func text(_ polygon: [[Double]]) -> String { polygon.map { "\($0[0]),\($0[1])" }.joined(separator: ",") }

    func run(_ args: [String]) throws -> [String: Any] {
        let r = try CLI.run(["measure"] + args + ["--json"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.stderr, "", "no warning for metric depth")
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any], r.stdout)
    }

    func assertWithin(_ doc: [String: Any], _ key: String, _ truth: Double, _ rel: Double = 0.01, file: StaticString = #filePath, line: UInt = #line) {
        guard let v = doc[key] as? Double else { return XCTFail("no \(key) in \(doc)", file: file, line: line) }
        XCTAssertEqual(v, truth, accuracy: rel * truth, "\(key) \(v) vs \(truth)", file: file, line: line)
    }

    func testBoxVolumeAndAreaWithoutRegion() throws {
        let s = try writeScene()
        let doc = try run(["--source", "snapshot:" + s.json, "--area", Self.text(s.top)])
        assertWithin(doc, "area_m2", s.topArea)
        XCTAssertNil(doc["volume_m3"], "--area alone measures the area only")
        let all = try run(["--source", "snapshot:" + s.json])
        assertWithin(all, "volume_m3", Self.size.reduce(1, *))
        assertWithin(all, "length_m", Self.size[0])
        assertWithin(all, "width_m", Self.size[1])
        assertWithin(all, "height_m", Self.size[2])
        let floor = try XCTUnwrap(all["floor"] as? [String: Any])
        XCTAssertEqual(floor["origin"] as? String, "ransac")
        XCTAssertEqual(floor["d"] as? Double ?? 0, 1.2, accuracy: 0.001, "the camera's height above the floor")
        XCTAssertEqual(all["relative_depth"] as? Bool, false)
    }

    func testFloorPolygonAndROI() throws {
        let s = try writeScene()
        let args = ["--source", "snapshot:" + s.json, "--floor", Self.text(s.floor), "--roi", "150,100,320,340"]
        let doc = try run(args + ["--volume", "--box"])
        assertWithin(doc, "volume_m3", Self.size.reduce(1, *))
        assertWithin(doc, "length_m", Self.size[0])
        assertWithin(doc, "height_m", Self.size[2])
        XCTAssertEqual((doc["floor"] as? [String: Any])?["origin"] as? String, "region")
        let box = try run(args + ["--box"])
        XCTAssertNil(box["volume_m3"])
        XCTAssertEqual(box["length_m"] as? Double, doc["length_m"] as? Double)
        let text = try CLI.run(["measure"] + args)
        XCTAssertEqual(text.status, 0, text.stderr)
        XCTAssertTrue(text.stdout.contains("floor: the --floor polygon"), text.stdout)
        XCTAssertTrue(text.stdout.contains("m³ above the floor"), text.stdout)
        XCTAssertTrue(text.stdout.contains("(length × width × height"), text.stdout)
    }

    func testBadInputIsOneLine() throws {
        let s = try writeScene()
        let src = ["measure", "--source", "snapshot:" + s.json]
        try assertBadInput(src + ["--area", "10,10,100,10"], mentioning: "--area needs at least 3 points")
        try assertBadInput(src + ["--area", "10,10,100"], mentioning: "--area")
        try assertBadInput(src + ["--area", "10,10,700,10,10,100"], mentioning: "outside the 640x480 depth image")
        try assertBadInput(src + ["--area", "25,25,50,25,50,45,25,45"], mentioning: "no valid depth")
        try assertBadInput(src + ["--floor", "25,25,50,25,50,45"], mentioning: "floor region")
        try assertBadInput(src + ["--roi", "600,400,100,100"], mentioning: "--roi")
        try assertBadInput(src + ["--frame", "3"], mentioning: "--frame 3")
        try assertBadInput(["measure", "--source", "snapshot:" + path("missing.json")], mentioning: "missing.json")
    }
}
