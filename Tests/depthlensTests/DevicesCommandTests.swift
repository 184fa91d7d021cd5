import XCTest
import Foundation
import DepthKit

final class DevicesCommandTests: CLITestCase {
    /// One fake thermal zone at `milli` m°C with a passive trip at 90 °C and a critical one at 100 °C.
    func thermalDir(milli: Int) throws -> String {
        let zone = path("thermal/thermal_zone0")
        try FileManager.default.createDirectory(atPath: zone, withIntermediateDirectories: true)
        for (file, text) in [("type", "x86_pkg_temp"), ("temp", "\(milli)"), ("trip_point_0_type", "passive"),
                             ("trip_point_0_temp", "90000"), ("trip_point_1_type", "critical"), ("trip_point_1_temp", "100000")] {
            try (text + "\n").write(toFile: zone + "/" + file, atomically: true, encoding: .utf8)
        }
        return path("thermal")
    }

    func testJSONIsOneObjectWithVulkanCamerasAndThermal() throws {
        let r = try CLI.run(["devices", "--json"], environment: ["DEPTHLENS_THERMAL_DIR": try thermalDir(milli: 93_500)])
        XCTAssertEqual(r.status, 0, r.stderr)
        let obj = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any], r.stdout)
        XCTAssertEqual(Set(obj.keys), ["vulkan", "cameras", "thermal"])
        let vulkan = try XCTUnwrap(obj["vulkan"] as? [[String: Any]])
        XCTAssertFalse(vulkan.isEmpty)
        XCTAssertEqual(vulkan.filter { $0["chosen"] as? Bool == true }.count, 1, "one device is chosen")
        XCTAssertNotNil(obj["cameras"] as? [Any])
        let thermal = try XCTUnwrap(obj["thermal"] as? [String: Any])
        XCTAssertEqual(thermal["state"] as? String, "serious")
        let zones = try XCTUnwrap(thermal["zones"] as? [[String: Any]])
        XCTAssertEqual(zones.first?["type"] as? String, "x86_pkg_temp")
        XCTAssertEqual(zones.first?["celsius"] as? Double, 93.5)
    }

    func testTextListsEachPartAndSaysWhenThereAreNoZones() throws {
        let r = try CLI.run(["devices"], environment: ["DEPTHLENS_THERMAL_DIR": path("none")])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("Vulkan devices:"), r.stdout)
        XCTAssertTrue(r.stdout.contains("Cameras:"), r.stdout)
        XCTAssertTrue(r.stdout.contains("Thermal: unknown"), r.stdout)
        XCTAssertTrue(r.stdout.contains("cannot be read"), r.stdout)
    }
}
