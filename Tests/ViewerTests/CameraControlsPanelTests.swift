import TestSupport
import Capture
import CaptureTesting
import Foundation
import XCTest
@testable import Viewer

/// The "Camera controls" section's strings, built from a scripted webcam's and depth node's tables.
final class CameraControlsPanelTests: XCTestCase {
    func testLabelsSectionsAndMenusAreBuiltOncePerLayout() throws {
        let system = ScriptedV4L2System()
        let webcam = system.addDevice(path: "/dev/video0", formats: [.init(.yuyv, sizes: [(64, 48)])])
        webcam.card = "HD Pro Webcam C920"
        webcam.controls = ScriptedV4L2System.uvcWebcamControls()
        let depth = system.addDevice(path: "/dev/video2", formats: [.init(.z16, sizes: [(64, 48)])])
        depth.card = "Depth"
        depth.controls = ScriptedV4L2System.realSenseDepthControls()
        let source = V4L2Source(colorPath: "/dev/video0", depthPath: "/dev/video2", system: system)
        source.controls.options = V4L2ControlOptions(store: nil)
        try source.start()
        defer { source.stop() }

        var panel = CameraControlsPanel()
        var snap = source.controls.snapshot()
        panel.update(snap.devices, layout: snap.layout)
        XCTAssertEqual(panel.devices.map(\.title), ["HD Pro Webcam C920 (/dev/video0)", "Depth (/dev/video2)"])
        XCTAssertEqual(panel.devices[0].resetLabel, "reset to defaults##/dev/video0")
        let rows = panel.devices[0].rows
        XCTAssertEqual(rows.count, 11)
        XCTAssertEqual(rows[0].label, "Brightness##/dev/video0 brightness")
        // A header before the first control of each class only.
        XCTAssertEqual(rows.compactMap(\.section), ["User Controls", "Camera Controls"])
        XCTAssertEqual(rows[0].section, "User Controls")
        XCTAssertEqual(rows[7].section, "Camera Controls")
        XCTAssertEqual(rows[7].label, "Exposure, Auto##/dev/video0 exposure_auto")
        XCTAssertEqual(rows[7].comboItems, "Manual Mode\0Aperture Priority Mode\0\0")
        XCTAssertEqual(rows[7].menuIndices, [1, 3], "combo position → menu index, skipping uvcvideo's holes")
        let drows = panel.devices[1].rows
        XCTAssertEqual(drows.compactMap(\.section), ["User Controls", "Camera Controls", "Image Processing Controls"])
        XCTAssertEqual(drows[4].comboItems, "300000000\0" + "750000000\0\0")

        // A value change keeps the strings; a flag change rebuilds them.
        let before = panel.devices[0].rows[0].label
        source.controls.post(.set(device: 0, name: "brightness", value: 10))
        _ = try source.nextFrame(now: 1)
        snap = source.controls.snapshot()
        XCTAssertEqual(snap.layout, panel.layout)
        source.controls.post(.set(device: 0, name: "exposure_auto", value: 1))
        _ = try source.nextFrame(now: 2)
        snap = source.controls.snapshot()
        XCTAssertNotEqual(snap.layout, panel.layout)
        panel.update(snap.devices, layout: snap.layout)
        XCTAssertEqual(panel.layout, snap.layout)
        XCTAssertEqual(panel.devices[0].rows[0].label, before)
        XCTAssertFalse(snap.devices[0].controls[8].isInactive, "exposure_absolute is editable in manual mode")
    }
}
