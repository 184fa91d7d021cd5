import XCTest
import Foundation

/// `--calibration` with OpenCV and ROS files on the command line: unprojects like `--intrinsics`
/// with the same numbers, and bad files are one line, exit 1, no output.
final class CalibrationCLITests: CLITestCase {
    let ros = """
    image_width: 640
    image_height: 480
    camera_name: cam
    camera_matrix:
      rows: 3
      cols: 3
      data: [517.5, 0, 318.25, 0, 516.75, 255.5, 0, 0, 1]
    distortion_model: plumb_bob
    distortion_coefficients:
      rows: 1
      cols: 5
      data: [0, 0, 0, 0, 0]

    """

    func testROSFileGivesTheSamePointsAsTheSameIntrinsics() throws {
        try ros.write(toFile: path("cam.yaml"), atomically: true, encoding: .utf8)
        let a = try CLI.run(["export-ply", "--synthetic", "--calibration", path("cam.yaml"), "--ascii", "--out", path("a.ply")])
        XCTAssertEqual(a.status, 0, a.stderr)
        let b = try CLI.run(["export-ply", "--synthetic", "--intrinsics", "517.5,516.75,318.25,255.5", "--ascii", "--out", path("b.ply")])
        XCTAssertEqual(b.status, 0, b.stderr)
        // The same points (x y z); colors differ: the file makes color the same camera, while
        // --intrinsics replaces only the depth camera of the scene's recorded pair.
        func xyz(_ name: String) throws -> [String] {
            try String(contentsOfFile: path(name), encoding: .utf8).split(separator: "\n")
                .map { $0.split(separator: " ").prefix(3).joined(separator: " ") }
        }
        let pa = try xyz("a.ply"), pb = try xyz("b.ply")
        XCTAssertGreaterThan(pa.count, 1000)
        XCTAssertEqual(pa, pb)
    }

    func testBadCalibrationFilesExitOneWithOneLine() throws {
        let files: [(String, String, String)] = [
            ("nomatrix.yaml", "image_width: 640\nimage_height: 480\ncamera_name: cam\n", "no camera_matrix"),
            ("rows.yaml", ros.replacingOccurrences(of: "rows: 3\n  cols: 3\n  data: [517.5", with: "rows: 2\n  cols: 3\n  data: [517.5"),
             "'camera_matrix' is 2×3 = 6 numbers but its data has 9"),
            ("notyaml.yaml", "\u{1}\u{2}binary garbage: [\n", "is never closed"),
            ("aspect.yaml", ros.replacingOccurrences(of: "image_width: 640", with: "image_width: 848"),
             "intrinsics for 848x480 do not fit the 640x480 depth stream"),
        ]
        for (name, text, problem) in files {
            try text.write(toFile: path(name), atomically: true, encoding: .utf8)
            let out = path(name + ".png")
            let r = try CLI.run(["process", "--synthetic", "--filter", "jet", "--calibration", path(name), "--out", out])
            XCTAssertEqual(r.status, 1, "\(name): \(r.stderr)")
            XCTAssertEqual(r.stderrLines.count, 1, r.stderr)
            XCTAssertTrue(r.stderr.contains(path(name) + ": "), r.stderr)
            XCTAssertTrue(r.stderr.contains(problem), "\(name): \(r.stderr)")
            XCTAssertFalse(FileManager.default.fileExists(atPath: out), name)
        }
        let r = try CLI.run(["process", "--synthetic", "--filter", "jet", "--calibration", "extrinsics=" + path("rows.yaml"),
                             "--extrinsics-units", "inch", "--out", path("o.png")])
        XCTAssertEqual(r.status, 1)
        XCTAssertEqual(r.stderrLines.count, 1, r.stderr)
    }
}
