import TestSupport
import Foundation
import XCTest

/// `view --calibration` with an OpenCV file: the window says which file kind it uses, and a file
/// for another aspect ratio is a notice naming it (the source's own calibration is used).
final class ViewerCalibrationWindowTests: WindowTestCase {
    func testNoticeNamesTheFileKindAndAspectMismatch() throws {
        let yaml = """
        %YAML:1.0
        ---
        image_width: 1280
        image_height: 960
        camera_matrix: !!opencv-matrix
           rows: 3
           cols: 3
           dt: d
           data: [ 1.05e+03, 0., 6.395e+02, 0., 1.05e+03, 4.795e+02, 0., 0., 1. ]

        """
        try yaml.write(toFile: path("cam.yml"), atomically: true, encoding: .utf8)
        try yaml.replacingOccurrences(of: "image_height: 960", with: "image_height: 720")
            .write(toFile: path("wide.yml"), atomically: true, encoding: .utf8)
        let x = try XServer.start()
        defer { x.stop() }
        for (file, expected) in [("cam.yml", "notice: calibration: OpenCV YAML cam.yml"),
                                 ("wide.yml", "notice: \(path("wide.yml")): intrinsics for 1280x720 do not fit the 640x480 depth stream")] {
            let v = try ViewerRun(x: x, args: ["--source", "synthetic", "--calibration", path(file), "--no-panel", "--log-ui",
                                               "--size", "320x240"])
            defer { if v.process.isRunning { v.process.terminate() } }
            try v.waitForLine("ui: ready", timeout: 60)
            let line = try v.waitForLine(expected, timeout: 20)
            XCTAssertTrue(line.hasPrefix(expected), line)
        }
    }
}
