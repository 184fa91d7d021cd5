import XCTest
import Foundation
import TestSupport

/// `depthlens info` and `convert` on a ROS 2 recording written by PyPI's rosbags
/// (Tests/Fixtures/ros2_reference.py's synthetic realsense2_camera pair, 6 frames each stream).
final class ROS2CommandTests: XCTestCase {
    func testInfoAndConvert() throws {
        let python = try PythonReference.python(importing: ["rosbags", "mcap", "numpy"])
        let folder = TemporaryFolder("ros2-cli")
        let bags = folder.file("bags")
        let made = try TestProcess.run([python, Repo.fixture("ros2_reference.py"), "make-bags", bags, "--synthetic-only"], timeout: 600)
        XCTAssertEqual(made.status, 0, made.output)
        for name in ["synthetic-db3", "synthetic-zstd.mcap"] {
            let source = "ros2:\(bags)/\(name)"
            let info = try CLI.run(["info", "--source", source])
            XCTAssertEqual(info.status, 0, info.stderr)
            for line in ["depth: 64x48 16UC1", "color: 64x48 rgb8", "/camera/camera/color/image_raw: 64x48 Image rgb8 @ 30.00 fps, 6 frames",
                         "/camera/camera/depth/image_rect_raw: 64x48 Image 16UC1 @ 30.00 fps, 6 frames"] {
                XCTAssertTrue(info.stdout.contains(line), "\(line) in:\n\(info.stdout)")
            }
            let json = try CLI.run(["info", "--json", "--source", source])
            XCTAssertEqual(json.status, 0, json.stderr)
            let o = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as! [String: Any]
            XCTAssertEqual(o["kind"] as? String, "ros2")
            XCTAssertEqual(o["duration_s"] as? Double ?? 0, 5 * 0.033333333, accuracy: 1e-6)
            let out = folder.file("out-\(name)-tum")  // a folder: an .mcap name would write MCAP
            let conv = try CLI.run(["convert", "--source", source, "--out", out])
            XCTAssertEqual(conv.status, 0, conv.stderr)
            XCTAssertTrue(conv.stdout.contains("wrote 6 color, 6 depth frames"), conv.stdout)
            let depthLines = try String(contentsOfFile: out + "/depth.txt", encoding: .utf8).split(separator: "\n").filter { !$0.hasPrefix("#") }
            XCTAssertEqual(depthLines.count, 6)
        }
        let bad = try CLI.run(["info", "--source", "ros2:\(folder.file("nothing.mcap"))"])
        XCTAssertEqual(bad.status, 1)
        XCTAssertEqual(bad.stderrLines.count, 1, bad.stderr)
    }
}
