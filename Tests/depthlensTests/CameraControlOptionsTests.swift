import XCTest
import Foundation

/// `--ctrl` / `--no-restore` on the command line (the controls themselves: CaptureTests/V4L2ControlsTests).
final class CameraControlOptionsTests: CLITestCase {
    func testCtrlNeedsNameEqualsValueAndACamera() throws {
        try assertBadInput(["record", "--source", "synthetic", "--frames", "1", "--out", path("r"), "--ctrl", "brightness=10"],
                           mentioning: "--ctrl applies to a V4L2 camera")
        try assertBadInput(["record", "--source", "v4l2:/dev/video0", "--frames", "1", "--out", path("r"), "--ctrl", "brightness"],
                           mentioning: "expected NAME=VALUE")
        try assertBadInput(["view", "--source", "synthetic", "--ctrl", "exposure_auto=1"], mentioning: "--ctrl applies to a V4L2 camera")
    }

    func testHelpNamesTheOptions() throws {
        for command in ["view", "record"] {
            let r = try CLI.run([command, "--help"])
            XCTAssertTrue(r.stdout.contains("--ctrl <name=value>"), r.stdout)
            XCTAssertTrue(r.stdout.contains("--no-restore"), r.stdout)
        }
    }
}
