import XCTest
import Foundation
import DepthKit
import TestSupport

/// One option group (`SourceOptions`) for every command that reads frames: `quality` and
/// `measure` of a pair of PNGs use the camera `--intrinsics` or `--calibration FILE` give (the
/// expected numbers computed here from that camera, and different under the default one), and
/// info, record and publish take the same options.
final class SourceOptionsTests: CLITestCase {
    static let width = 640, height = 480

    /// A ROS camera_info file of a 640×480 camera with focal length `f` (principal point at the center).
    func cameraFile(focal f: Double) throws -> String {
        let text = """
        image_width: 640
        image_height: 480
        camera_name: cam
        camera_matrix:
          rows: 3
          cols: 3
          data: [\(f), 0, 319.5, 0, \(f), 239.5, 0, 0, 1]
        distortion_model: plumb_bob
        distortion_coefficients:
          rows: 1
          cols: 5
          data: [0, 0, 0, 0, 0]

        """
        let file = path("cam-\(Int(f)).yaml")
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        return file
    }

    /// `pair:COLOR,DEPTH` of a 16-bit depth PNG (mm) whose depth at pixel x, y is `z(x, y)` meters.
    func pair(_ name: String, z: (Double, Double) -> Double) throws -> String {
        let depth = PixelBuffer(width: Self.width, height: Self.height, format: .gray16(depthScale: 1000))
        for y in 0..<Self.height { for x in 0..<Self.width { depth.setSample(x: x, y: y, Float((z(Double(x), Double(y)) * 1000).rounded())) } }
        let c = path("\(name)_color.png"), d = path("\(name)_depth.png")
        try ImageIO.write(depth, to: d)
        try ImageIO.write(SyntheticScene().render(width: Self.width, height: Self.height, time: 0).color, to: c)
        return "pair:\(c),\(d)"
    }

    func json(_ args: [String], file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        let r = try CLI.run(args + ["--json"])
        XCTAssertEqual(r.status, 0, r.stderr, file: file, line: line)
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any], r.stdout, file: file, line: line)
    }

    /// A wall 1.5 m away, square to the camera: a 200×100-pixel rectangle covers
    /// (200·Z/fx)·(100·Z/fy) m², so its area says which focal length measure used.
    func testMeasureAreaUsesIntrinsicsAndCalibration() throws {
        let z = 1.5
        let source = try pair("wall") { _, _ in z }
        let polygon = "100,100,300,100,300,200,100,200"
        func area(_ f: Double) -> Double { 200 * z / f * 100 * z / f }
        let byDefault = try json(["measure", "--source", source, "--area", polygon])
        let defaultFocal = 525.0 * Double(Self.width) / 640
        XCTAssertEqual(byDefault["area_m2"] as? Double ?? 0, area(defaultFocal), accuracy: 0.005 * area(defaultFocal))

        let given = try json(["measure", "--source", source, "--area", polygon, "--intrinsics", "300,300,319.5,239.5"])
        XCTAssertEqual(given["area_m2"] as? Double ?? 0, area(300), accuracy: 0.005 * area(300), "--intrinsics fx 300")
        XCTAssertEqual((given["intrinsics"] as? [String: Any])?["fx"] as? Double, 300)

        let file = try json(["measure", "--source", source, "--area", polygon, "--calibration", try cameraFile(focal: 400)])
        XCTAssertEqual(file["area_m2"] as? Double ?? 0, area(400), accuracy: 0.005 * area(400), "--calibration fx 400")
        XCTAssertEqual((file["intrinsics"] as? [String: Any])?["fx"] as? Double, 400)
    }

    /// A wall turned 30° about the vertical axis, seen by a camera of focal length 300: the plane
    /// X·sin 30° + Z·cos 30° = 1 m gives Z = 1 / (u·sin 30° + cos 30°) with u = (x − cx) / 300.
    /// quality's angle is 30° with that camera (given either way) and not with the default one.
    func testQualityAngleUsesIntrinsicsAndCalibration() throws {
        let theta = 30.0 * Double.pi / 180, f = 300.0
        let source = try pair("tilted") { x, _ in 1 / ((x - 319.5) / f * sin(theta) + cos(theta)) }
        func angle(_ extra: [String], file: StaticString = #filePath, line: UInt = #line) throws -> Double {
            let doc = try json(["quality", "--source", source] + extra, file: file, line: line)
            let frames = try XCTUnwrap(doc["frames"] as? [[String: Any]], file: file, line: line)
            return try XCTUnwrap(frames.first?["angle_deg"] as? Double, "\(doc)", file: file, line: line)
        }
        XCTAssertEqual(try angle(["--intrinsics", "300,300,319.5,239.5"]), 30, accuracy: 0.2)
        XCTAssertEqual(try angle(["--calibration", try cameraFile(focal: f)]), 30, accuracy: 0.2)
        // Under the default fx = 525 the same depth is a steeper wall: X = u·Z with u = (x − cx) / 525
        // makes the normal (sin 30° · 525 / 300, 0, cos 30°), tan angle = tan 30° · 525 / 300 (45.3°).
        let steeper = atan(tan(theta) * 525 / f) * 180 / Double.pi
        XCTAssertEqual(try angle([]), steeper, accuracy: 0.2)
    }

    /// `info --calibration` / `--intrinsics` shows the camera given.
    func testInfoShowsTheGivenCamera() throws {
        let source = try pair("info") { _, _ in 1 }
        let r = try CLI.run(["info", "--source", source, "--calibration", try cameraFile(focal: 400)])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("depth intrinsics: 640x480 fx 400.000 fy 400.000 cx 319.500 cy 239.500"), r.stdout)
        let doc = try json(["info", source, "--intrinsics", "310,320,300,200"])
        let k = try XCTUnwrap((doc["intrinsics"] as? [String: Any])?["depth"] as? [String: Any], "\(doc)")
        XCTAssertEqual(k["fx"] as? Double, 310)
        XCTAssertEqual(k["fy"] as? Double, 320)
        XCTAssertEqual(doc["calibration_origin"] as? String, "--intrinsics")
    }

    /// record writes the camera given into its Matroska file and its folder's calibration.json
    /// (info reads them back), and rejects a bad one before anything is written.
    func testRecordWritesTheGivenCamera() throws {
        let mkv = path("given.mkv")
        let r = try CLI.run(["record", "--source", "synthetic:64x48", "--frames", "2", "--mkv", mkv, "--intrinsics", "50,51,31.5,23.5"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let info = try CLI.run(["info", "mkv:" + mkv])
        XCTAssertEqual(info.status, 0, info.stderr)
        XCTAssertTrue(info.stdout.contains("depth intrinsics: 64x48 fx 50.000 fy 51.000 cx 31.500 cy 23.500"), info.stdout)
        // The folder's calibration.json, which tum: reads back.
        let folder = path("given")
        let t = try CLI.run(["record", "--source", "synthetic:64x48", "--frames", "2", "--out", folder, "--calibration", try cameraFile(focal: 400)])
        XCTAssertEqual(t.status, 0, t.stderr)
        let back = try CLI.run(["info", "tum:" + folder])
        XCTAssertEqual(back.status, 0, back.stderr)
        // The 640×480 camera scaled to the 64×48 stream: fx 40, cx (319.5 + ½)·0.1 − ½ = 31.5.
        XCTAssertTrue(back.stdout.contains("depth intrinsics: 64x48 fx 40.000 fy 40.000 cx 31.500 cy 23.500"), back.stdout)
        try assertBadInput(["record", "--source", "synthetic:64x48", "--frames", "1", "--mkv", path("bad.mkv"), "--intrinsics", "0,1,2"],
                           mentioning: "--intrinsics", noFile: path("bad.mkv"))
    }

    /// `export-ply --fuse` unprojects every frame with the camera given: X = (x − cx)·Z / fx, so
    /// twice the focal length halves the cloud's width (a TUM folder with identity poses).
    func testFuseUsesTheGivenCamera() throws {
        let folder = path("posed")
        let r = try CLI.run(["record", "--source", "synthetic:64x48", "--frames", "2", "--out", folder])
        XCTAssertEqual(r.status, 0, r.stderr)
        let stamps = try String(contentsOfFile: folder + "/rgb.txt", encoding: .utf8).split(separator: "\n")
            .filter { !$0.hasPrefix("#") }.compactMap { $0.split(separator: " ").first }
        XCTAssertEqual(stamps.count, 2)
        try stamps.map { "\($0) 0 0 0 0 0 0 1" }.joined(separator: "\n").write(toFile: folder + "/groundtruth.txt", atomically: true, encoding: .utf8)
        func width(_ extra: [String], _ name: String) throws -> Float {
            let ply = path(name)
            let e = try CLI.run(["export-ply", "--source", "tum:" + folder, "--fuse", "--voxel", "0.001", "--out", ply] + extra)
            XCTAssertEqual(e.status, 0, e.stderr)
            let xs = try PLYReader.read(ply).positions.map(\.x)
            return try XCTUnwrap(xs.max()) - XCTUnwrap(xs.min())
        }
        let f = 525 * 64 / 640.0
        let own = try width(["--intrinsics", "\(f),\(f),31.5,23.5"], "own.ply")
        let doubled = try width(["--intrinsics", "\(2 * f),\(2 * f),31.5,23.5"], "doubled.ply")
        XCTAssertEqual(doubled / own, 0.5, accuracy: 0.03, "widths \(own) m and \(doubled) m")
    }

    /// Every command that reads frames lists the group's options; publish checks them before it
    /// opens the network.
    func testEveryFrameReaderTakesTheGroup() throws {
        for command in ["view", "info", "convert", "record", "process", "export-ply", "render3d", "quality", "measure", "publish", "subscribe"] {
            let r = try CLI.run([command, "--help"])
            XCTAssertEqual(r.status, 0, command)
            for option in ["--source <source>", "--depth-scale", "--calibration", "--intrinsics", "--extrinsics-units", "--max-image"] {
                XCTAssertTrue(r.stdout.contains(option), "\(command) --help lists \(option)")
            }
        }
        try assertBadInput(["publish", "--source", "synthetic", "--intrinsics", "a,b,c,d"], mentioning: "--intrinsics")
        try assertBadInput(["quality", "--source", "synthetic", "--max-image", "64x48"], mentioning: "--max-image")
        try assertBadInput(["subscribe", "--source", "synthetic"], mentioning: "dds:")
        try assertBadInput(["subscribe", "--source", "dds:/cam,max-image=64x48", "--max-image", "32x24"], mentioning: "both given")
        try assertBadInput(["subscribe", "--source", "dds:/cam", "--max-image", "0x24"], mentioning: "--max-image")
        try assertBadInput(["view", "--source", "synthetic", "--max-image", "64x48"], mentioning: "--max-image")
        try assertBadInput(["measure", "--source", "nowhere:x"], mentioning: "--source")
        try assertBadInput(["quality"], mentioning: "--source")
    }
}
