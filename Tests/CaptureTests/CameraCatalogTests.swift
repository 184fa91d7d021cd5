import XCTest
import Foundation
@testable import Capture
import CaptureTesting

final class CameraCatalogTests: XCTestCase {
    func testListsCamerasGroupedByDeviceAndFollowsEvents() throws {
        let dir = try makeTemporaryDirectory(self)
        for n in ["video0", "video1", "video2", "video4"] {
            XCTAssertTrue(FileManager.default.createFile(atPath: dir + "/" + n, contents: nil))
        }
        let system = ScriptedV4L2System()
        let webcam = system.addDevice(path: dir + "/video0", formats: [.init(.yuyv, sizes: [(640, 480)]), .init(.mjpeg, sizes: [(1280, 720)])])
        webcam.card = "HD Webcam C525"
        webcam.busInfo = "usb-0000:00:14.0-1"
        // video1 has no device behind it (a node that cannot be opened): no entry.
        let rsDepth = system.addDevice(path: dir + "/video2", formats: [.init(.z16, sizes: [(848, 480)])])
        let rsColor = system.addDevice(path: dir + "/video4", formats: [.init(.yuyv, sizes: [(1280, 720)])])
        for d in [rsDepth, rsColor] { d.card = "Intel(R) RealSense(TM) Depth Ca"; d.busInfo = "usb-0000:00:14.0-3" }

        let events = ScriptedDeviceEvents()
        let catalog = CameraCatalog(directory: dir, events: events, system: system)
        XCTAssertEqual(catalog.menu, CameraMenu(groups: [
            .init(title: "HD Webcam C525 (usb-0000:00:14.0-1)", entries: [
                .init(label: "\(dir)/video0", source: "v4l2:\(dir)/video0"),
            ]),
            .init(title: "Intel(R) RealSense(TM) Depth Ca (usb-0000:00:14.0-3)", entries: [
                .init(label: "\(dir)/video4 + depth \(dir)/video2", source: "v4l2:\(dir)/video4,depth=\(dir)/video2"),
            ]),
        ]))
        XCTAssertEqual(system.openDescriptorCount, 0)
        let g = catalog.generation

        // The webcam is unplugged: listed again on the watcher's report.
        webcam.unplug()
        try FileManager.default.removeItem(atPath: dir + "/video0")
        events.post(.removed(dir + "/video0"))
        XCTAssertEqual(catalog.menu.groups.map(\.title), ["Intel(R) RealSense(TM) Depth Ca (usb-0000:00:14.0-3)"])
        XCTAssertEqual(catalog.generation, g + 1)

        // Two cameras whose driver gives no bus info are two devices.
        for n in ["video6", "video7"] {
            XCTAssertTrue(FileManager.default.createFile(atPath: dir + "/" + n, contents: nil))
            system.addDevice(path: dir + "/" + n, formats: [.init(.grey, sizes: [(64, 48)])]).busInfo = ""
        }
        events.post(.added(dir + "/video7"))
        XCTAssertEqual(catalog.menu.groups.map(\.title).suffix(2), ["Scripted Camera (\(dir)/video6)", "Scripted Camera (\(dir)/video7)"])
        XCTAssertEqual(catalog.menu.groups.last?.entries, [.init(label: "\(dir)/video7", source: "v4l2:\(dir)/video7")])
        let before = catalog.generation
        events.post(.added(dir + "/video7"))
        XCTAssertEqual(catalog.generation, before, "the same list is not a change")
        catalog.stop()
        XCTAssertEqual(events.subscriberCount, 0)
    }
}
