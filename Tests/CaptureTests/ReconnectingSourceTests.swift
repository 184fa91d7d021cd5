import XCTest
import Glibc
@testable import Capture
import CaptureTesting
import DepthKit

/// Unplugging and plugging back a streaming camera, through the scripted V4L2 kernel and scripted
/// device events (what the inotify watcher reports).
final class ReconnectingSourceTests: XCTestCase {
    /// A webcam offering RGB3 and YUYV at two sizes and two rates. A freshly plugged device stands at
    /// its first format, size and rate (RGB3 8x4 at 30 fps); the request below (YUYV 8x4 at 15 fps)
    /// differs in format and rate, so a resume that skipped configuring would show.
    let formats: [ScriptedV4L2System.Format] = [
        .init(.rgb24, sizes: [(8, 4), (4, 2)], frameRates: [30, 15]),
        .init(.yuyv, sizes: [(4, 2), (8, 4)], frameRates: [30, 15]),
    ]
    let request = V4L2Request.color(width: 8, height: 4, fps: 15)
    let expected = "YUYV 8x4 @ 15 fps"

    @discardableResult
    private func webcam(_ system: ScriptedV4L2System, _ path: String, bus: String = "usb-0000:00:14.0-1",
                        card: String = "HD Webcam C525") -> ScriptedV4L2System.Device {
        let d = system.addDevice(path: path, formats: formats)
        d.busInfo = bus
        d.card = card
        return d
    }

    /// Calls `nextFrame` at `now` until a frame comes (at most `tries` calls).
    private func frame(_ s: FrameSource, now: Double, tries: Int = 3) throws -> FrameSet? {
        for _ in 0..<tries { if let f = try s.nextFrame(now: now) { return f } }
        return nil
    }

    func testUnplugWaitsWithoutThrowingAndResumesWithTheSameConfiguration() throws {
        let system = ScriptedV4L2System()
        let cam = webcam(system, "/dev/video0")
        cam.unplugAtFrame = 3
        let events = ScriptedDeviceEvents()
        let s = ReconnectingSource(V4L2Source(colorPath: "/dev/video0", system: system, colorRequest: request), events: events)
        try s.start()
        XCTAssertEqual(events.subscriberCount, 1)
        XCTAssertEqual(s.source.color.configuration?.description, expected)
        XCTAssertEqual(s.state, .streaming)
        for i in 0..<3 { XCTAssertEqual(try XCTUnwrap(try s.nextFrame(now: Double(i))).index, i) }

        // Frame 3: ENODEV. No throw, no frame: waiting, everything released.
        let before = s.stateChanges
        XCTAssertNil(try s.nextFrame(now: 3))
        XCTAssertEqual(s.state, .waiting(camera: "/dev/video0 (HD Webcam C525)"))
        XCTAssertEqual(s.stateChanges, before + 1)
        XCTAssertEqual(system.openDescriptorCount, 0)
        XCTAssertEqual(system.mappedBufferCount, 0)
        for t in [3.5, 10, 20] { XCTAssertNil(try s.nextFrame(now: t)) }   // still away: quiet
        XCTAssertEqual(s.stateChanges, before + 1, "one change, not one per call")
        XCTAssertFalse(system.calls.suffix(5).contains("open /dev/video0"), "no polling while nothing was reported")

        // The camera is back at its path; the watcher reports it.
        cam.replug()
        let mark = system.calls.count
        events.post(.added("/dev/video0"))
        let f = try XCTUnwrap(try frame(s, now: 21))
        XCTAssertEqual(f.index, 3, "indices continue over the gap")
        XCTAssertEqual(f.color.width, 8)
        XCTAssertEqual(f.color.height, 4)
        XCTAssertEqual(s.state, .streaming)
        XCTAssertEqual(s.stateChanges, before + 2)
        XCTAssertEqual(s.source.color.configuration?.description, expected)
        XCTAssertEqual(s.resumedDescription, "/dev/video0 (HD Webcam C525): 8x4 YUYV at 15 fps")
        let again = system.calls[mark...]
        for call in ["VIDIOC_S_FMT", "VIDIOC_S_PARM", "VIDIOC_STREAMON"] {
            XCTAssertTrue(again.contains(call), "reopened through the normal open path: \(call) missing in \(again)")
        }
        XCTAssertEqual(cam.fourcc, .yuyv)
        XCTAssertEqual(cam.timePerFrame.denominator, 15)
        XCTAssertNotNil(try s.nextFrame(now: 22))

        s.stop()
        XCTAssertEqual(events.subscriberCount, 0)
        XCTAssertEqual(system.openDescriptorCount, 0)
        XCTAssertEqual(system.mappedBufferCount, 0)
    }

    func testResumesAtANewPathAndNotOnAnotherCamera() throws {
        let system = ScriptedV4L2System()
        let cam = webcam(system, "/dev/video2")
        cam.unplugAtFrame = 1
        let events = ScriptedDeviceEvents()
        let s = ReconnectingSource(V4L2Source(colorPath: "/dev/video2", system: system, colorRequest: request), events: events)
        try s.start()
        XCTAssertNotNil(try s.nextFrame(now: 0))
        XCTAssertNil(try s.nextFrame(now: 1))
        XCTAssertEqual(s.state, .waiting(camera: "/dev/video2 (HD Webcam C525)"))

        // The same model on another USB port, and another camera on the same port: neither is it.
        webcam(system, "/dev/video3", bus: "usb-0000:00:14.0-2")
        webcam(system, "/dev/video4", card: "USB 2.0 Camera")
        events.post(.added("/dev/video3"))
        events.post(.added("/dev/video4"))
        for t in [2.0, 3, 4] { XCTAssertNil(try s.nextFrame(now: t)) }
        XCTAssertEqual(s.state, .waiting(camera: "/dev/video2 (HD Webcam C525)"))
        XCTAssertEqual(s.source.color.path, "/dev/video2")
        XCTAssertEqual(system.device("/dev/video3")?.isStreaming, false)
        XCTAssertEqual(system.device("/dev/video4")?.isStreaming, false)

        // The camera itself comes back as /dev/video5 (same bus info, card and formats).
        let back = webcam(system, "/dev/video5")
        events.post(.added("/dev/video5"))
        let f = try XCTUnwrap(try frame(s, now: 5))
        XCTAssertEqual(f.index, 1)
        XCTAssertEqual(s.source.color.path, "/dev/video5")
        XCTAssertEqual(s.name, "v4l2:/dev/video5")
        XCTAssertEqual(s.source.color.configuration?.description, expected)
        XCTAssertEqual(back.fourcc, .yuyv, "a fresh device (RGB3 at 30 fps) configured as requested")
        XCTAssertEqual(back.timePerFrame.denominator, 15)
        XCTAssertTrue(back.isStreaming)
        s.stop()
        XCTAssertEqual(system.openDescriptorCount, 0)
    }

    func testWithoutBusInfoOnlyTheSamePathIsTheSameCamera() throws {
        let system = ScriptedV4L2System()
        let cam = webcam(system, "/dev/video0", bus: "")
        cam.unplugAtFrame = 1
        let events = ScriptedDeviceEvents()
        let s = ReconnectingSource(V4L2Source(colorPath: "/dev/video0", system: system, colorRequest: request), events: events)
        try s.start()
        XCTAssertNotNil(try s.nextFrame(now: 0))
        XCTAssertNil(try s.nextFrame(now: 1))
        webcam(system, "/dev/video1", bus: "")   // same card and formats, no bus info, another path
        events.post(.added("/dev/video1"))
        XCTAssertNil(try frame(s, now: 2))
        XCTAssertEqual(s.state, .waiting(camera: "/dev/video0 (HD Webcam C525)"))
        cam.replug()
        events.post(.added("/dev/video0"))
        XCTAssertNotNil(try frame(s, now: 3))
        XCTAssertEqual(s.source.color.path, "/dev/video0")
        s.stop()
    }

    func testColorAndDepthNodesResumeWhenBothAreBack() throws {
        let system = ScriptedV4L2System()
        // The kernel's card field holds 31 characters: this is how a D435 names itself.
        let bus = "usb-0000:00:14.0-3", card = "Intel(R) RealSense(TM) Depth Ca"
        func realsense(color: String, depth: String) -> (ScriptedV4L2System.Device, ScriptedV4L2System.Device) {
            let c = system.addDevice(path: color, formats: [.init(.yuyv, sizes: [(4, 2)], frameRates: [30])])
            let d = system.addDevice(path: depth, formats: [.init(.z16, sizes: [(4, 2)], frameRates: [30])])
            for n in [c, d] { n.busInfo = bus; n.card = card }
            d.frameProvider = { n in .init(payload: [UInt8](repeating: 0, count: 14) + [0xE8, 0x03], timestamp: Double(n) / 30) }
            return (c, d)
        }
        let (color, depth) = realsense(color: "/dev/video4", depth: "/dev/video2")
        let events = ScriptedDeviceEvents()
        let s = ReconnectingSource(V4L2Source(colorPath: "/dev/video4", depthPath: "/dev/video2", system: system,
                                              colorRequest: .color(width: 4, height: 2), depthRequest: .depth(width: 4, height: 2)),
                                   events: events)
        try s.start()
        depth.readyFrames = 1
        XCTAssertNotNil(try s.nextFrame(now: 0)?.depth)
        depth.unplug()
        XCTAssertNil(try s.nextFrame(now: 0.1))   // the depth node is gone: the whole camera waits
        XCTAssertEqual(s.state, .waiting(camera: "/dev/video4 (\(card))"))
        color.unplug()
        XCTAssertEqual(system.openDescriptorCount, 0)

        // Back as /dev/video7 (color) and /dev/video6 (depth); one node reported is not enough.
        let (_, depth2) = realsense(color: "/dev/video7", depth: "/dev/video6")
        events.post(.added("/dev/video7"))
        XCTAssertNil(try frame(s, now: 1))
        events.post(.added("/dev/video6"))
        depth2.readyFrames = 1
        let f = try XCTUnwrap(try frame(s, now: 2))
        XCTAssertEqual(s.name, "v4l2:/dev/video7,depth=/dev/video6")
        XCTAssertEqual(try XCTUnwrap(f.depth).map.sample(x: 3, y: 1), 1.0, accuracy: 1e-6)   // 1000 units at 1000 per meter
        XCTAssertTrue(depth2.isStreaming)
        s.stop()
        XCTAssertEqual(system.openDescriptorCount, 0)
    }

    func testARemovedEventStopsTheCameraAndANodeNotOpenableYetIsRetried() throws {
        let system = ScriptedV4L2System()
        let cam = webcam(system, "/dev/video0")
        let events = ScriptedDeviceEvents()
        let s = ReconnectingSource(V4L2Source(colorPath: "/dev/video0", system: system, colorRequest: request), events: events)
        try s.start()
        XCTAssertNotNil(try s.nextFrame(now: 0))
        cam.unplug()
        events.post(.removed("/dev/video0"))
        XCTAssertNil(try s.nextFrame(now: 0.1))
        XCTAssertEqual(s.state, .waiting(camera: "/dev/video0 (HD Webcam C525)"))
        XCTAssertEqual(system.openDescriptorCount, 0)

        // Reported before it can be opened (udev still setting it up): checked again a retryInterval later.
        events.post(.added("/dev/video0"))
        XCTAssertNil(try s.nextFrame(now: 0.2))
        cam.replug()
        XCTAssertNil(try s.nextFrame(now: 0.7))
        XCTAssertNotNil(try frame(s, now: 1.3))
        XCTAssertEqual(s.state, .streaming)
        s.stop()
    }

    func testWithoutEventsChecksOnATimer() throws {
        let system = ScriptedV4L2System()
        let cam = webcam(system, "/dev/video0")
        cam.unplugAtFrame = 1
        let s = ReconnectingSource(V4L2Source(colorPath: "/dev/video0", system: system, colorRequest: request), events: nil)
        s.candidatePaths = { ["/dev/video0", "/dev/video1"] }
        try s.start()
        XCTAssertNotNil(try s.nextFrame(now: 10))
        XCTAssertNil(try s.nextFrame(now: 10.1))
        XCTAssertEqual(s.state, .waiting(camera: "/dev/video0 (HD Webcam C525)"))
        cam.replug()
        XCTAssertNil(try s.nextFrame(now: 10.6), "not before retryInterval (1 s)")
        let f = try XCTUnwrap(try frame(s, now: 11.2))
        XCTAssertEqual(f.index, 1)
        XCTAssertEqual(s.source.color.configuration?.description, expected)
        s.stop()
    }

    func testIdentityOfScriptedNodes() throws {
        let system = ScriptedV4L2System()
        webcam(system, "/dev/video0")
        let id = try XCTUnwrap(V4L2DeviceIdentity.read(path: "/dev/video0", system: system))
        XCTAssertEqual(id, V4L2DeviceIdentity(path: "/dev/video0", card: "HD Webcam C525", busInfo: "usb-0000:00:14.0-1",
                                              formats: ["YUYV", "RGB3"]))
        XCTAssertEqual(id.formats, ["RGB3", "YUYV"])
        XCTAssertNil(V4L2DeviceIdentity.read(path: "/dev/video9", system: system))
        XCTAssertEqual(system.openDescriptorCount, 0)
    }

    /// The whole path: a `DeviceWatcher` (driven by scripted inotify changes) reports the node going
    /// and coming back, and the source resumes on its report.
    func testResumesOnTheWatchersReport() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir + "/video3"
        let system = ScriptedV4L2System()
        let cam = webcam(system, path)
        let notifier = ScriptedDeviceNotifier()
        let watcher = DeviceWatcher(directory: dir, notifier: notifier, isReady: { _ in true })
        defer { watcher.stop() }
        let s = ReconnectingSource(V4L2Source(colorPath: path, system: system, colorRequest: request), events: watcher)
        try s.start()
        XCTAssertNotNil(try s.nextFrame(now: 0))

        func poll(until done: () -> Bool) throws {
            let deadline = Date().addingTimeInterval(10)
            var now = 1.0
            while !done() && Date() < deadline {
                _ = try s.nextFrame(now: now)
                now += 0.001
                usleep(1000)
            }
        }
        cam.unplug()
        notifier.post(.deleted("video3"))
        try poll { s.state != .streaming }
        XCTAssertEqual(s.state, .waiting(camera: "\(path) (HD Webcam C525)"))
        cam.replug()
        notifier.post(.created("video3"))
        try poll { s.state == .streaming }
        XCTAssertEqual(s.state, .streaming)
        XCTAssertEqual(s.source.color.configuration?.description, expected)
        s.stop()
    }

    /// Controls set in this run come back with the camera, also when it returns at another node:
    /// the reopened source keeps the same `V4L2SourceControls`.
    func testControlsSetInThisRunComeBackAtANewNode() throws {
        let system = ScriptedV4L2System()
        let cam = webcam(system, "/dev/video0")
        cam.controls = ScriptedV4L2System.uvcWebcamControls()
        let events = ScriptedDeviceEvents()
        let camera = V4L2Source(colorPath: "/dev/video0", system: system, colorRequest: request)
        camera.controls.options = V4L2ControlOptions(assignments: [.init(name: "exposure_auto", value: "1")], restore: false, store: nil)
        let s = ReconnectingSource(camera, events: events)
        try s.start()
        s.source.controls.post(.set(device: 0, name: "brightness", value: 60))
        XCTAssertNotNil(try s.nextFrame(now: 0))
        XCTAssertEqual(cam.controlValue("brightness"), 60)
        XCTAssertEqual(cam.controlValue("exposure_auto"), 1)
        cam.unplug()
        XCTAssertNil(try s.nextFrame(now: 1))

        // Back at /dev/video3, powered up with its defaults.
        let back = webcam(system, "/dev/video3")
        back.controls = ScriptedV4L2System.uvcWebcamControls()
        XCTAssertNotEqual(back.controlValue("brightness"), 60)
        events.post(.added("/dev/video3"))
        XCTAssertNotNil(try frame(s, now: 2))
        XCTAssertEqual(s.source.color.path, "/dev/video3")
        XCTAssertTrue(s.source.controls === camera.controls)
        XCTAssertEqual(back.controlValue("brightness"), 60)
        XCTAssertEqual(back.controlValue("exposure_auto"), 1)
        s.stop()
    }
}
