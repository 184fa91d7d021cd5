import XCTest
import Foundation
@testable import Capture
import CaptureTesting

final class V4L2DevicesTests: XCTestCase {
    func testListsFormatsSizesAndRatesThroughTheScriptedKernel() throws {
        let system = ScriptedV4L2System()
        let cam = system.addDevice(path: "/dev/video0", formats: [
            .init(.yuyv, name: "YUYV 4:2:2", sizes: [(640, 480), (1280, 720)], frameRates: [30, 15]),
            .init(.mjpeg, name: "Motion-JPEG", sizes: [(1920, 1080)], frameRates: [60, 30]),
        ])
        cam.card = "Test Cam"
        system.addDevice(path: "/dev/video2", formats: [.init(.z16, name: "16-bit Depth", sizes: [(848, 480)], frameRates: [90])])
        let list = V4L2Devices.list(paths: ["/dev/video0", "/dev/video1", "/dev/video2"], system: system)
        XCTAssertEqual(list.map(\.path), ["/dev/video0", "/dev/video1", "/dev/video2"])
        XCTAssertEqual(list[0].card, "Test Cam")
        XCTAssertNil(list[0].error)
        XCTAssertEqual(list[0].formats.map(\.fourcc), ["YUYV", "MJPG"])
        XCTAssertEqual(list[0].formats[0].sizes, [.init(width: 640, height: 480, fps: [30, 15]), .init(width: 1280, height: 720, fps: [30, 15])])
        XCTAssertEqual(list[0].formats[1].sizes, [.init(width: 1920, height: 1080, fps: [60, 30])])
        XCTAssertTrue(list[0].formats[1].compressed)
        XCTAssertTrue(list[0].formats.allSatisfy(\.supported))
        XCTAssertNotNil(list[1].error, "a path with no device says why")
        XCTAssertEqual(list[2].formats.first?.sizes.first?.fps, [90])
        XCTAssertEqual(system.openDescriptorCount, 0, "every device is closed again")
        XCTAssertTrue(system.calls.contains("VIDIOC_ENUM_FRAMEINTERVALS"), "\(system.calls)")
        // Text form: one line per device, then format and size lines.
        XCTAssertTrue(list[0].description.contains("1280x720 @ 30, 15 fps"), list[0].description)
        let json = String(decoding: try JSONEncoder().encode(list[0]), as: UTF8.self)
        XCTAssertTrue(json.contains("\"fourcc\":\"YUYV\""), json)
    }

    func testPathsAreVideoNodesInNumberOrder() throws {
        let dir = try makeTemporaryDirectory(self)
        for n in ["video10", "video2", "video0", "videox", "media0"] {
            _ = FileManager.default.createFile(atPath: dir + "/" + n, contents: nil)
        }
        XCTAssertEqual(V4L2Devices.paths(directory: dir), ["video0", "video2", "video10"].map { dir + "/" + $0 })
    }
}
