import Foundation
import TestSupport
import XCTest

/// A recording with an IMU in the window: the panel's IMU section plots it (the plot's rect is
/// logged with `--log-ui`), and one whose IMU cannot be read plays without it, a notice saying why.
/// The bags are Tests/Fixtures/imu_reference.py's (written by PyPI's rosbags).
final class IMUWindowTests: WindowTestCase {
    func testThePanelPlotsTheIMUAndABadOneIsANotice() throws {
        let python = try PythonReference.python(importing: ["rosbags", "numpy"])
        let fixtures = path("imu")
        let made = try TestProcess.run([python, Repo.fixture("imu_reference.py"), "make", fixtures], timeout: 300)
        XCTAssertEqual(made.status, 0, made.output)
        let x = try XServer.start()
        defer { x.stop() }

        let v = try ViewerRun(x: x, args: ["--source", "bag:\(fixtures)/rs.bag", "--loop", "--log-ui", "--size", "1000x760"])
        defer { if v.process.isRunning { v.process.terminate() } }
        try v.waitForLine("ui: ready", timeout: 60)
        // The gyroscope's plot, the section's last item: the panel's width, IMUPlot.height tall.
        let layout = try v.waitForLine("layout: imu ", timeout: 30)
        let r = layout.split(separator: " ").compactMap { Double($0) }
        XCTAssertEqual(r.count, 4, layout)
        XCTAssertEqual(r.last ?? 0, 70, layout)
        XCTAssertGreaterThan(r.count == 4 ? r[2] : 0, 150, layout)
        XCTAssertFalse(v.lines.contains { $0.contains("IMU samples not shown") }, v.lines.joined(separator: "\n"))
        v.quit()

        let bad = try ViewerRun(x: x, args: ["--source", "bag:\(fixtures)/nan.bag", "--loop", "--log-ui", "--size", "1000x760"])
        defer { if bad.process.isRunning { bad.process.terminate() } }
        let notice = try bad.waitForLine("notice: IMU samples not shown: ", timeout: 60)
        XCTAssertTrue(notice.contains("\(fixtures)/nan.bag: /device_0/sensor_2/Gyro_0/imu/data message 7: angular_velocity is not finite"), notice)
        try bad.waitForLine("ui: ready", timeout: 60)
        bad.quit()
    }
}
