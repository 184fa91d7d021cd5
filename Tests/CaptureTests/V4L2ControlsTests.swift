import XCTest
import Glibc
import Foundation
@testable import Capture
import CaptureTesting
import CPlatform
import TestSupport

/// Camera controls against ScriptedV4L2System's control tables (a uvcvideo webcam and a
/// RealSense depth node), which answer as the drivers do.
final class V4L2ControlsTests: XCTestCase {
    var system: ScriptedV4L2System!
    var webcam: ScriptedV4L2System.Device!
    var depthNode: ScriptedV4L2System.Device!
    var configDir: String!

    override func setUpWithError() throws {
        system = ScriptedV4L2System()
        webcam = system.addDevice(path: "/dev/video0", formats: [.init(.yuyv, sizes: [(640, 480)])])
        webcam.driver = "uvcvideo"
        webcam.card = "HD Pro Webcam C920"
        webcam.busInfo = "usb-0000:00:14.0-1"
        webcam.controls = ScriptedV4L2System.uvcWebcamControls()
        depthNode = system.addDevice(path: "/dev/video2", formats: [.init(.z16, sizes: [(640, 480)])])
        depthNode.driver = "uvcvideo"
        depthNode.card = "Intel(R) RealSense(TM) Depth Camera 435"
        depthNode.busInfo = "usb-0000:00:14.0-2"
        depthNode.controls = ScriptedV4L2System.realSenseDepthControls()
        configDir = try makeTemporaryDirectory(self) + "/depthlens/cameras"
    }

    func openControls(_ path: String = "/dev/video0") throws -> V4L2ControlDevice {
        let cam = V4L2Camera(path: path, system: system)
        try cam.open()
        addTeardownBlock { cam.close() }
        return try V4L2ControlDevice(camera: cam)
    }

    func makeSource(_ options: V4L2ControlOptions, notices: NoticeBox) -> V4L2Source {
        let s = V4L2Source(colorPath: "/dev/video0", depthPath: "/dev/video2", system: system)
        s.controls.options = options
        s.onWarning = { w in notices.withLock { $0.append(w) } }
        return s
    }

    /// The notices a source gave (its `onWarning`).
    typealias NoticeBox = LockedValue<[String]>

    var store: V4L2ControlStore { V4L2ControlStore(directory: configDir) }

    // MARK: Enumeration

    func testEnumeratesTheWebcamTableWithTypesRangesMenusAndSections() throws {
        let d = try openControls()
        XCTAssertEqual(d.key, "usb-0000:00:14.0-1 HD Pro Webcam C920 YUYV")
        XCTAssertEqual(d.controls.map(\.name), [
            "brightness", "contrast", "saturation", "white_balance_temperature_auto", "gain", "power_line_frequency",
            "white_balance_temperature", "exposure_auto", "exposure_absolute", "focus_absolute", "focus_auto",
        ])
        let brightness = try XCTUnwrap(d["brightness"])
        XCTAssertEqual(brightness.kind, .integer)
        XCTAssertEqual([brightness.minimum, brightness.maximum, brightness.defaultValue, brightness.value], [0, 255, 128, 128])
        XCTAssertEqual(brightness.step, 1)
        XCTAssertEqual(d["white_balance_temperature_auto"]?.kind, .boolean)
        XCTAssertEqual(d["white_balance_temperature_auto"]?.value, 1)
        let plf = try XCTUnwrap(d["power_line_frequency"])
        XCTAssertEqual(plf.kind, .menu)
        XCTAssertEqual(plf.menu.map(\.index), [0, 1, 2])
        XCTAssertEqual(plf.menu.map(\.label), ["Disabled", "50 Hz", "60 Hz"])
        // uvcvideo's exposure menu: range 0…3, only 1 and 3 exist (QUERYMENU refuses 0 and 2).
        let ae = try XCTUnwrap(d["exposure_auto"])
        XCTAssertEqual(ae.label, "Exposure, Auto")
        XCTAssertEqual([ae.minimum, ae.maximum, ae.defaultValue, ae.value], [0, 3, 3, 3])
        XCTAssertEqual(ae.menu, [.init(index: 1, name: "Manual Mode", value: nil), .init(index: 3, name: "Aperture Priority Mode", value: nil)])
        XCTAssertEqual(d["focus_absolute"]?.step, 5)
        // Manual values are inactive while their auto switch is on; the switches are not.
        XCTAssertEqual(d.controls.filter(\.isInactive).map(\.name), ["white_balance_temperature", "exposure_absolute", "focus_absolute"])
        XCTAssertEqual(d.controls.filter { $0.classID == UInt32(V4L2_CTRL_CLASS_USER) }.count, 7)
        XCTAssertEqual(d.sectionTitle(UInt32(V4L2_CTRL_CLASS_USER)), "User Controls")
        XCTAssertEqual(d.sectionTitle(UInt32(V4L2_CTRL_CLASS_CAMERA)), "Camera Controls")
        XCTAssertTrue(system.calls.contains("VIDIOC_QUERYMENU"))
    }

    func testEnumeratesTheRealSenseDepthNode() throws {
        let d = try openControls("/dev/video2")
        XCTAssertEqual(d.controls.map(\.name), ["gain", "laser_power", "emitter_enabled", "asic_temperature", "link_frequency"])
        let laser = try XCTUnwrap(d["laser_power"])
        XCTAssertEqual([laser.minimum, laser.maximum, laser.defaultValue, laser.value], [0, 360, 150, 150])
        XCTAssertEqual(laser.step, 30)
        XCTAssertEqual(d["emitter_enabled"]?.menu.map(\.label), ["Off", "On", "Auto"])
        let temp = try XCTUnwrap(d["asic_temperature"])
        XCTAssertTrue(temp.isReadOnly && temp.isVolatile && !temp.isWritable)
        XCTAssertEqual(temp.flagNames, ["read-only", "volatile"])
        let link = try XCTUnwrap(d["link_frequency"])
        XCTAssertEqual(link.kind, .integerMenu)
        XCTAssertEqual(link.menu.map(\.value), [300_000_000, 750_000_000])
        XCTAssertEqual(link.menu.map(\.label), ["300000000", "750000000"])
        XCTAssertEqual(d.sectionTitle(link.classID), "Image Processing Controls")
    }

    func testNamesAreSpelledAsV4L2CtlSpellsThem() {
        let cases = [
            ("White Balance Temperature, Auto", "white_balance_temperature_auto"),
            ("Exposure (Absolute)", "exposure_absolute"),
            ("Exposure, Auto Priority", "exposure_auto_priority"),
            ("Focus (absolute)", "focus_absolute"),
            ("Power Line Frequency", "power_line_frequency"),
            ("  Pan, Reset  ", "pan_reset"),
            ("Auto-Exposure -- Bias", "auto_exposure_bias"),
            ("H264 I-Frame Period", "h264_i_frame_period"),
            ("", ""),
        ]
        for (label, name) in cases { XCTAssertEqual(V4L2Control.v4l2ctlName(label), name, label) }
    }

    // MARK: Writing

    func testSetClampsAndStepsToTheDriversRangeAndReadsBack() throws {
        let d = try openControls()
        var o = d.set("brightness", 200)
        XCTAssertTrue(o.succeeded)
        XCTAssertNil(o.notice)
        XCTAssertEqual(o.kept, 200)
        XCTAssertEqual(webcam.controlValue("brightness"), 200)
        o = d.set("brightness", 300)
        XCTAssertEqual(o.sent, 255)
        XCTAssertEqual(o.kept, 255)
        XCTAssertEqual(o.notice, "/dev/video0: brightness=300 is outside the driver's range or step; set 255")
        XCTAssertTrue(d.set("focus_auto", 0).succeeded)
        // Step 5 from 0: 12 → 10, 13 → 15.
        XCTAssertEqual(d.set("focus_absolute", 12).kept, 10)
        XCTAssertEqual(d.set("focus_absolute", 13).kept, 15)
        let rs = try openControls("/dev/video2")
        // Step 30 from 0: 100 → 90, 106 → 120, 400 → 360.
        XCTAssertEqual(rs.set("laser_power", 100).kept, 90)
        XCTAssertEqual(rs.set("laser_power", 106).kept, 120)
        XCTAssertEqual(rs.set("laser_power", 400).kept, 360)
        XCTAssertEqual(depthNode.controlValue("laser_power"), 360)
    }

    func testAdjustingHandlesWholeInt64RangesAndOddSteps() {
        var c = V4L2Control(id: 1, name: "pixel_rate", label: "Pixel Rate", kind: .integer64, type: 5, minimum: .min, maximum: .max,
                            step: 1 << 40, defaultValue: 0, flags: 0, menu: [], value: nil)
        XCTAssertEqual(c.adjusted(.max), Int64.max - (1 << 40) + 1, "the last step below the maximum: -2^63 + (2^24 - 1)·2^40")
        XCTAssertEqual(c.adjusted(.min), .min)
        XCTAssertEqual(c.adjusted(0), 0)
        // Step 7 from -10 up to 30: -10, -3, 4, 11, 18, 25; 29 would round up to 32, past the maximum: 25.
        c = V4L2Control(id: 2, name: "x", label: "X", kind: .integer, type: 1, minimum: -10, maximum: 30, step: 7,
                        defaultValue: 0, flags: 0, menu: [], value: nil)
        XCTAssertEqual([-20, -7, -6, 0, 1, 29, 99].map { c.adjusted($0) }, [-10, -10, -3, -3, 4, 25, 25], "0 is 3 from -3 and 4 from 4")
    }

    func testRefusedValuesGiveOneNoticeWithTheKeptValue() throws {
        let d = try openControls()
        // uvcvideo refuses a manual exposure while auto exposure is on.
        var o = d.set("exposure_absolute", 500)
        XCTAssertEqual(o.errno, EACCES)
        XCTAssertEqual(o.kept, 250)
        XCTAssertEqual(o.notice, "/dev/video0: exposure_absolute=500 refused: not writable now (read-only, or inactive while its auto mode is on) (EACCES); keeps 250")
        XCTAssertEqual(webcam.controlValue("exposure_absolute"), 250)
        // Not a menu item: not sent at all.
        let sBefore = system.calls.filter { $0 == "VIDIOC_S_EXT_CTRLS" }.count
        o = d.set("exposure_auto", 2)
        XCTAssertEqual(o.problem, "not a menu item (items: 1: Manual Mode, 3: Aperture Priority Mode)")
        XCTAssertEqual(o.keptText, "3 (Aperture Priority Mode)")
        XCTAssertEqual(system.calls.filter { $0 == "VIDIOC_S_EXT_CTRLS" }.count, sBefore)
        // A driver that says EINVAL or EBUSY.
        webcam.controls[webcam.controlIndex("contrast")!].refuseWith = EINVAL
        o = d.set("contrast", 10)
        XCTAssertEqual(o.notice, "/dev/video0: contrast=10 refused: invalid value (EINVAL); keeps 128")
        webcam.controls[webcam.controlIndex("saturation")!].refuseWith = ERANGE
        XCTAssertEqual(d.set("saturation", 10).errno, ERANGE)
        // Read-only: not sent.
        let rs = try openControls("/dev/video2")
        o = rs.set("asic_temperature", 20)
        XCTAssertEqual(o.problem, "read-only")
        XCTAssertEqual(o.kept, 35)
    }

    func testDriverAnswersAsTheKernelDoesToRawRequests() throws {
        // What the client never sends, the scripted drivers still refuse as the kernel would.
        let cam = V4L2Camera(path: "/dev/video0", system: system)
        try cam.open()
        defer { cam.close() }
        func rawSet(_ id: UInt32, _ v: Int32) -> Int32 {
            var one = v4l2_ext_control()
            one.id = id
            one.value = v
            return withUnsafeMutablePointer(to: &one) { p in
                var list = v4l2_ext_controls()
                list.count = 1
                list.controls = p
                return system.ioctl(cam.fd, DL_VIDIOC_S_EXT_CTRLS, &list) == 0 ? 0 : system.errno
            }
        }
        XCTAssertEqual(rawSet(ScriptedV4L2System.exposureAutoID, 2), EINVAL, "a skipped menu index")
        XCTAssertEqual(rawSet(ScriptedV4L2System.exposureAutoID, 7), ERANGE, "uvcvideo: menu index out of range")
        XCTAssertEqual(rawSet(0x0098_09ff, 1), EINVAL, "unknown id")
        XCTAssertEqual(rawSet(ScriptedV4L2System.exposureAbsoluteID, 100), EACCES, "inactive on uvcvideo")
        XCTAssertEqual(rawSet(ScriptedV4L2System.brightnessID, -5), 0)
        XCTAssertEqual(webcam.controlValue("brightness"), 0, "clamped by the driver")
    }

    func testInactiveFlagFollowsItsMaster() throws {
        let d = try openControls()
        XCTAssertTrue(d["exposure_absolute"]!.isInactive)
        XCTAssertTrue(d.set("exposure_auto", 1).succeeded)
        XCTAssertFalse(d["exposure_absolute"]!.isInactive, "re-queried after the write")
        XCTAssertTrue(d.set("exposure_absolute", 500).succeeded)
        XCTAssertEqual(webcam.controlValue("exposure_absolute"), 500)
        XCTAssertTrue(d.set("exposure_auto", 3).succeeded)
        XCTAssertTrue(d["exposure_absolute"]!.isInactive)
        XCTAssertTrue(d.set("white_balance_temperature_auto", 0).succeeded)
        XCTAssertFalse(d["white_balance_temperature"]!.isInactive)
        // The depth node: laser power is inactive with the emitter off (framework: the write is kept).
        let rs = try openControls("/dev/video2")
        XCTAssertTrue(rs.set("emitter_enabled", 0).succeeded)
        XCTAssertTrue(rs["laser_power"]!.isInactive)
        XCTAssertEqual(rs.set("laser_power", 60).kept, 60)
    }

    func testVolatileControlsAreReadAgain() throws {
        let d = try openControls("/dev/video2")
        XCTAssertFalse(d.refreshVolatile())
        depthNode.setControlValue("asic_temperature", 41)
        XCTAssertTrue(d.refreshVolatile())
        XCTAssertEqual(d["asic_temperature"]?.value, 41)
    }

    func testParsesCtrlValuesByIndexNameAndBoolean() throws {
        let d = try openControls()
        let ae = d["exposure_auto"]!
        XCTAssertEqual(try ae.parseValue("1"), 1)
        XCTAssertEqual(try ae.parseValue("Manual Mode"), 1)
        XCTAssertEqual(try ae.parseValue("aperture_priority_mode"), 3)
        XCTAssertThrowsError(try ae.parseValue("2")) { XCTAssertTrue("\($0)".contains("1: Manual Mode, 3: Aperture Priority Mode"), "\($0)") }
        XCTAssertThrowsError(try ae.parseValue("fast"))
        XCTAssertEqual(try d["focus_auto"]!.parseValue("off"), 0)
        XCTAssertThrowsError(try d["focus_auto"]!.parseValue("maybe"))
        XCTAssertEqual(try d["brightness"]!.parseValue("-3"), -3)
        XCTAssertThrowsError(try d["brightness"]!.parseValue("bright"))
        XCTAssertEqual(try V4L2ControlAssignment(parsing: "exposure_auto = 1"), V4L2ControlAssignment(name: "exposure_auto", value: "1"))
        XCTAssertThrowsError(try V4L2ControlAssignment(parsing: "exposure_auto"))
        XCTAssertThrowsError(try V4L2ControlAssignment(parsing: "=1"))
    }

    // MARK: Source: --ctrl, save, restore, reset

    func testCtrlValuesAreWrittenInDependencyOrderAndSaved() throws {
        let notices = NoticeBox([])
        // Given manual value first: written after its auto switch anyway.
        let s = makeSource(V4L2ControlOptions(assignments: [.init(name: "exposure_absolute", value: "500"),
                                                            .init(name: "exposure_auto", value: "manual_mode"),
                                                            .init(name: "laser_power", value: "240")], store: store), notices: notices)
        try s.start()
        XCTAssertEqual(webcam.controlValue("exposure_auto"), 1)
        XCTAssertEqual(webcam.controlValue("exposure_absolute"), 500)
        XCTAssertEqual(depthNode.controlValue("laser_power"), 240)
        XCTAssertEqual(notices.current, [])
        s.stop()
        let file = store.path(for: "usb-0000:00:14.0-1 HD Pro Webcam C920 YUYV")
        XCTAssertEqual(file, configDir + "/usb-0000_00_14.0-1_HD_Pro_Webcam_C920_YUYV.json")
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: file))) as? [String: Any])
        XCTAssertEqual(json["bus_info"] as? String, "usb-0000:00:14.0-1")
        XCTAssertEqual(json["card"] as? String, "HD Pro Webcam C920")
        XCTAssertEqual(json["controls"] as? [String: Int], ["exposure_auto": 1, "exposure_absolute": 500])
        // The card name is cut to v4l2_capability's 31 characters, as a real D435 reports it.
        XCTAssertEqual(try store.load(key: "usb-0000:00:14.0-2 Intel(R) RealSense(TM) Depth Ca Z16"), ["laser_power": 240])
    }

    func testSavedValuesAreRestoredOnTheNextOpenUnlessNoRestore() throws {
        let notices = NoticeBox([])
        let first = makeSource(V4L2ControlOptions(store: store), notices: notices)
        try first.start()
        // The panel's way: commands run on the source's thread before its next frame.
        first.controls.post(.set(device: 0, name: "exposure_auto", value: 1))
        first.controls.post(.set(device: 0, name: "exposure_absolute", value: 800))
        first.controls.post(.set(device: 0, name: "power_line_frequency", value: 1))
        _ = try first.nextFrame(now: 1)
        XCTAssertEqual(webcam.controlValue("exposure_absolute"), 800)
        first.stop()
        // The camera powers up with its defaults again.
        webcam.controls = ScriptedV4L2System.uvcWebcamControls()

        let noRestore = makeSource(V4L2ControlOptions(restore: false, store: store), notices: notices)
        try noRestore.start()
        XCTAssertEqual(webcam.controlValue("exposure_absolute"), 250)
        XCTAssertEqual(webcam.controlValue("power_line_frequency"), 2)
        noRestore.stop()
        XCTAssertEqual(try store.load(key: "usb-0000:00:14.0-1 HD Pro Webcam C920 YUYV").count, 3, "--no-restore keeps the saved file")

        let second = makeSource(V4L2ControlOptions(store: store), notices: notices)
        try second.start()
        XCTAssertEqual(webcam.controlValue("exposure_auto"), 1)
        XCTAssertEqual(webcam.controlValue("exposure_absolute"), 800)
        XCTAssertEqual(webcam.controlValue("power_line_frequency"), 1)
        XCTAssertEqual(notices.current, [], "restored in dependency order: nothing refused")
        second.stop()
    }

    func testARepluggedCameraGetsThisRunsValuesBackEvenWithoutAStore() throws {
        let notices = NoticeBox([])
        let s = makeSource(V4L2ControlOptions(assignments: [.init(name: "exposure_absolute", value: "700"), .init(name: "exposure_auto", value: "1")],
                                              restore: false, store: nil), notices: notices)
        s.reconnectInterval = 0
        try s.start()
        s.controls.post(.set(device: 0, name: "brightness", value: 60))
        _ = try s.nextFrame(now: 1)
        XCTAssertEqual(webcam.controlValue("brightness"), 60)
        webcam.unplug()
        XCTAssertThrowsError(try s.nextFrame(now: 2))
        XCTAssertTrue(s.controls.snapshot().devices.isEmpty, "no controls while the camera is away")
        // It comes back powered up with its defaults.
        webcam.replug()
        webcam.controls = ScriptedV4L2System.uvcWebcamControls()
        var n = 0
        while !s.isConnected && n < 5 { _ = try? s.nextFrame(now: 3 + Double(n)); n += 1 }
        XCTAssertTrue(s.isConnected)
        XCTAssertEqual(webcam.controlValue("brightness"), 60)
        XCTAssertEqual(webcam.controlValue("exposure_auto"), 1)
        XCTAssertEqual(webcam.controlValue("exposure_absolute"), 700)
        XCTAssertEqual(notices.current, [])
        s.stop()
    }

    func testResetToDefaultsRestoresDefaultsAndForgetsTheSavedValues() throws {
        let notices = NoticeBox([])
        let s = makeSource(V4L2ControlOptions(assignments: [.init(name: "exposure_auto", value: "1"), .init(name: "exposure_absolute", value: "900"),
                                                            .init(name: "brightness", value: "10")], store: store), notices: notices)
        try s.start()
        XCTAssertEqual(webcam.controlValue("exposure_absolute"), 900)
        s.controls.post(.reset(device: 0))
        _ = try s.nextFrame(now: 1)
        // Manual values first (while still active), then the switches.
        XCTAssertEqual(webcam.controlValue("exposure_absolute"), 250)
        XCTAssertEqual(webcam.controlValue("exposure_auto"), 3)
        XCTAssertEqual(webcam.controlValue("brightness"), 128)
        XCTAssertEqual(notices.current, [])
        s.stop()
        XCTAssertFalse(FileManager.default.fileExists(atPath: store.path(for: "usb-0000:00:14.0-1 HD Pro Webcam C920 YUYV")))
    }

    func testPanelSnapshotFollowsCommandsAndTheLayoutChangesWithFlags() throws {
        let notices = NoticeBox([])
        let s = makeSource(V4L2ControlOptions(store: store), notices: notices)
        try s.start()
        defer { s.stop() }
        let (tables, layout, values) = s.controls.snapshot()
        XCTAssertEqual(tables.map(\.path), ["/dev/video0", "/dev/video2"])
        XCTAssertEqual(tables[1].sections[UInt32(V4L2_CTRL_CLASS_CAMERA)], "Camera Controls")
        // A drag over several frames before the source's thread runs: only the last value is written.
        let writes = system.calls.filter { $0 == "VIDIOC_S_EXT_CTRLS" }.count
        s.controls.post(.set(device: 1, name: "laser_power", value: 60))
        s.controls.post(.set(device: 1, name: "laser_power", value: 200))
        _ = try s.nextFrame(now: 1)
        XCTAssertEqual(system.calls.filter { $0 == "VIDIOC_S_EXT_CTRLS" }.count, writes + 1)
        var snap = s.controls.snapshot()
        XCTAssertEqual(snap.devices[1].controls.first { $0.name == "laser_power" }?.value, 210)
        XCTAssertEqual(snap.layout, layout, "a value changed, no flag")
        XCTAssertGreaterThan(snap.values, values)
        s.controls.post(.set(device: 1, name: "emitter_enabled", value: 0))
        _ = try s.nextFrame(now: 2)
        snap = s.controls.snapshot()
        XCTAssertTrue(snap.devices[1].controls.first { $0.name == "laser_power" }!.isInactive)
        XCTAssertGreaterThan(snap.layout, layout, "laser power became inactive")
        // A refusal while streaming (a grabbed control) is one notice, and the kept value shows.
        webcam.controls[webcam.controlIndex("power_line_frequency")!].grabbedWhileStreaming = true
        s.controls.post(.set(device: 0, name: "power_line_frequency", value: 0))
        _ = try s.nextFrame(now: 3)
        XCTAssertEqual(notices.current.count, 1)
        XCTAssertTrue(notices.current[0].contains("power_line_frequency=0 refused") && notices.current[0].contains("EBUSY")
                      && notices.current[0].hasSuffix("keeps 2 (60 Hz)"), notices.current[0])
        XCTAssertEqual(s.controls.snapshot().devices[0].controls.first { $0.name == "power_line_frequency" }?.value, 2)
    }

    func testUnknownControlOrBadValueFailsTheOpenNamingTheDevice() throws {
        let notices = NoticeBox([])
        let s = makeSource(V4L2ControlOptions(assignments: [.init(name: "exposure", value: "1")], store: store), notices: notices)
        XCTAssertThrowsError(try s.start()) { e in
            let text = "\(e)"
            XCTAssertTrue(text.contains("--ctrl exposure=1: /dev/video0, /dev/video2 has no control 'exposure'"), text)
            XCTAssertTrue(text.contains("exposure_absolute"), text)
        }
        XCTAssertEqual(system.openDescriptorCount, 0)
        let bad = makeSource(V4L2ControlOptions(assignments: [.init(name: "emitter_enabled", value: "laser")], store: store), notices: notices)
        XCTAssertThrowsError(try bad.start()) { XCTAssertTrue("\($0)".contains("0: Off, 1: On, 2: Auto"), "\($0)") }
    }

    func testNodesOfOneDeviceKeepTheirOwnSettings() throws {
        // A RealSense's color and depth nodes share bus info and card name.
        webcam.busInfo = depthNode.busInfo
        webcam.card = "Intel(R) RealSense(TM) Depth Ca"
        webcam.controls = [ScriptedV4L2System.realSenseDepthControls()[0]]   // gain on both nodes
        let notices = NoticeBox([])
        let s = makeSource(V4L2ControlOptions(assignments: [.init(name: "gain", value: "100")], store: store), notices: notices)
        try s.start()
        s.controls.post(.set(device: 1, name: "gain", value: 40))
        _ = try s.nextFrame(now: 1)
        s.stop()
        XCTAssertEqual(try store.load(key: "usb-0000:00:14.0-2 Intel(R) RealSense(TM) Depth Ca YUYV"), ["gain": 100])
        XCTAssertEqual(try store.load(key: "usb-0000:00:14.0-2 Intel(R) RealSense(TM) Depth Ca Z16"), ["gain": 40])
    }

    func testABrokenSettingsFileIsOneNoticeAndTheCameraStillOpens() throws {
        try FileManager.default.createDirectory(atPath: configDir, withIntermediateDirectories: true)
        let file = store.path(for: "usb-0000:00:14.0-1 HD Pro Webcam C920 YUYV")
        try "{ not json".write(toFile: file, atomically: true, encoding: .utf8)
        let notices = NoticeBox([])
        let s = makeSource(V4L2ControlOptions(store: store), notices: notices)
        try s.start()
        s.stop()
        XCTAssertEqual(notices.current.count, 1)
        XCTAssertTrue(notices.current[0].hasPrefix(file + ": not a depthlens camera settings file"), notices.current[0])
    }

    func testStoreFolderComesFromTheEnvironment() {
        XCTAssertEqual(V4L2ControlStore.user(environment: ["XDG_CONFIG_HOME": "/x/cfg", "HOME": "/home/u"])?.directory, "/x/cfg/depthlens/cameras")
        XCTAssertEqual(V4L2ControlStore.user(environment: ["HOME": "/home/u"])?.directory, "/home/u/.config/depthlens/cameras")
        XCTAssertEqual(V4L2ControlStore.user(environment: ["XDG_CONFIG_HOME": "relative", "HOME": "/home/u"])?.directory,
                       "/home/u/.config/depthlens/cameras", "XDG: a relative path is ignored")
        XCTAssertNil(V4L2ControlStore.user(environment: [:]))
    }

    // MARK: devices --json

    func testDevicesListingCarriesEachCamerasControls() throws {
        let list = V4L2Devices.list(paths: ["/dev/video0", "/dev/video2"], system: system)
        let enc = JSONEncoder()
        enc.outputFormatting = [.sortedKeys]
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: enc.encode(list)) as? [[String: Any]])
        XCTAssertEqual(json[0]["card"] as? String, "HD Pro Webcam C920", "existing fields stay")
        XCTAssertNotNil(json[0]["formats"] as? [Any])
        let controls = try XCTUnwrap(json[0]["controls"] as? [[String: Any]])
        XCTAssertEqual(controls.count, 11)
        let ae = try XCTUnwrap(controls.first { $0["name"] as? String == "exposure_auto" })
        XCTAssertEqual(ae["type"] as? String, "menu")
        XCTAssertEqual(ae["section"] as? String, "Camera Controls")
        XCTAssertEqual(ae["minimum"] as? Int, 0)
        XCTAssertEqual(ae["maximum"] as? Int, 3)
        XCTAssertEqual(ae["default"] as? Int, 3)
        XCTAssertEqual(ae["value"] as? Int, 3)
        XCTAssertEqual(ae["id"] as? Int, 0x009a_0901)
        XCTAssertEqual((ae["menu"] as? [[String: Any]])?.map { $0["name"] as? String }, ["Manual Mode", "Aperture Priority Mode"])
        let exp = try XCTUnwrap(controls.first { $0["name"] as? String == "exposure_absolute" })
        XCTAssertEqual(exp["flags"] as? [String], ["inactive"])
        XCTAssertNil(exp["menu"])
        let rs = try XCTUnwrap(json[1]["controls"] as? [[String: Any]])
        let laser = try XCTUnwrap(rs.first { $0["name"] as? String == "laser_power" })
        XCTAssertEqual(laser["step"] as? Int, 30)
        XCTAssertEqual(laser["type"] as? String, "integer")
        let link = try XCTUnwrap(rs.first { $0["name"] as? String == "link_frequency" })
        XCTAssertEqual(link["type"] as? String, "intmenu")
        XCTAssertEqual((link["menu"] as? [[String: Any]])?.map { $0["value"] as? Int }, [300_000_000, 750_000_000])
        XCTAssertEqual(link["flags"] as? [String], ["read-only"])
        // The text listing, v4l2-ctl style.
        XCTAssertTrue(list[0].description.contains("exposure_auto 0x9a0901 (menu) : min=0 max=3 default=3 value=3\n        1: Manual Mode"), list[0].description)
    }
}
