import Capture
import DepthKit
import Foundation
import TestSupport
import XCTest

/// Live RGB-D over ROS 2's DDS, on this machine only: every participant (this process's and the
/// children's) reads `CYCLONEDDS_URI`, which keeps Cyclone DDS on the loopback interface with
/// multicast off and 127.0.0.1 as the only peer; every publisher is bounded in time (--frames, or
/// the reference's SECONDS) and has exited when its test returns. Domains are picked per process
/// so parallel runs do not hear each other.
///
/// Independent end: PyPI's `cyclonedds` 0.10.2 built against Debian's libddsc (scripts/ddspy-venv,
/// .build/ddspy) with the ROS 2 types written as IdlStructs (scripts/dds-ref.py): it serializes
/// and parses the CDR itself, and reads the shared D435 bag with Debian's rosbag.
final class DDSTests: XCTestCase {
    static let loopbackOnly = "<CycloneDDS><Domain><General><Interfaces><NetworkInterface name=\"lo\"/></Interfaces>"
        + "<AllowMulticast>false</AllowMulticast></General><Discovery><Peers><Peer address=\"127.0.0.1\"/></Peers>"
        + "<ParticipantIndex>auto</ParticipantIndex></Discovery></Domain></CycloneDDS>"

    override func setUp() {
        super.setUp()
        setenv("CYCLONEDDS_URI", Self.loopbackOnly, 1)
    }

    /// A domain of this process's own (100…199), a different one per test.
    func domain(_ n: Int) -> Int { 100 + (Int(getpid()) * 7 + n) % 100 }

    var depthlens: String { CLI.executable.path }

    /// The reference venv's python (made by scripts/ddspy-venv when missing; a failure fails the test).
    func ddspy() throws -> String {
        let py = Repo.root.appendingPathComponent(".build/ddspy/bin/python").path
        if FileManager.default.isExecutableFile(atPath: py),
           try TestProcess.run([py, "-c", "import cyclonedds.domain"], timeout: 60).status == 0 { return py }
        let r = try TestProcess.run([Repo.root.appendingPathComponent("scripts/ddspy-venv").path], timeout: 1200)
        XCTAssertEqual(r.status, 0, "scripts/ddspy-venv: \(r.output)")
        return py
    }

    var refScript: String { Repo.root.appendingPathComponent("scripts/dds-ref.py").path }
    let debianPython = ["PYTHONPATH": "/usr/lib/python3/dist-packages"]

    /// The bag's frames as BagSource decodes them.
    func bagFrames(_ bag: String) throws -> (frames: [FrameSet], calibration: RGBDCalibration) {
        let src = BagSource(path: bag)
        try src.start()
        defer { src.stop() }
        var out: [FrameSet] = []
        for i in 0..<(src.playback?.frameCount ?? 0) {
            try src.playback?.seek(toFrame: i)
            if let f = try src.nextFrame(now: 0) { out.append(f) }
        }
        return (out, try XCTUnwrap(src.calibration))
    }

    /// Starts `source` on another thread (it waits for its first frame) and returns a wait for it.
    func startInBackground(_ source: DDSSource) -> () -> Error? {
        let done = DispatchSemaphore(value: 0)
        let startError = LockedValue<Error?>(nil)
        Thread.detachNewThread {
            do { try source.start() } catch { startError.withLock { $0 = error } }
            done.signal()
        }
        return {
            done.wait()
            return startError.current
        }
    }

    func drain(_ s: DDSSource) throws -> [FrameSet] {
        var out: [FrameSet] = []
        while let f = try s.nextFrame(now: 0) { out.append(f) }
        return out
    }

    func rgba(_ b: PixelBuffer) -> [UInt8] {
        var out: [UInt8] = []
        for y in 0..<b.height { out += UnsafeBufferPointer(start: b.row(y, as: UInt8.self), count: b.width * 4) }
        return out
    }

    func floats(_ b: PixelBuffer) -> [Float] {
        var out: [Float] = []
        for y in 0..<b.height { out += UnsafeBufferPointer(start: b.row(y, as: Float.self), count: b.width) }
        return out
    }

    // MARK: depthlens publish → depthlens dds:

    func testPublishedBagArrivesExactlyInADDSSource() throws {
        let bag = Repo.fixture("realsense-d435-640x480.bag")
        let (expected, cal) = try bagFrames(bag)
        XCTAssertEqual(expected.count, 2)
        let d = domain(1)
        let source = DDSSource(topics: DDSTopics(target: .namespace("/dltest"), domain: d), startTimeout: 60)
        let started = startInBackground(source)
        let r = try TestProcess.run([depthlens, "publish", "--source", "bag:\(bag)", "--loop", "--frames", "40", "--namespace", "/dltest",
                                     "--domain", "\(d)", "--interface", "lo"], timeout: 120)
        XCTAssertEqual(r.status, 0, r.output)
        XCTAssertTrue(r.output.contains("DDS has no authentication"), r.output)
        XCTAssertNil(started())
        defer { source.stop() }
        let got = try drain(source)
        XCTAssertGreaterThanOrEqual(got.count, 2, "frames received")
        var matched = 0
        for f in got {
            guard let e = expected.first(where: { abs($0.timestamp - f.timestamp) < 1e-6 }) else {
                XCTFail("received a frame stamped \(f.timestamp), the bag has \(expected.map(\.timestamp))")
                continue
            }
            XCTAssertEqual(rgba(f.color), rgba(e.color), "color bytes of the frame at \(f.timestamp)")
            if let fd = f.depth, let ed = e.depth {
                XCTAssertEqual(floats(fd.map), floats(ed.map), "depth of the frame at \(f.timestamp)")
                matched += 1
            }
        }
        XCTAssertGreaterThan(matched, 0, "no received frame had depth paired")
        let c = try XCTUnwrap(source.calibration)
        XCTAssertEqual(c.color.intrinsics, cal.color.intrinsics)
        XCTAssertEqual(c.depth.intrinsics, cal.depth.intrinsics)
        XCTAssertEqual(c.color.coeffs, cal.color.coeffs)
        for i in 0..<9 { XCTAssertEqual(c.depthToColor.rotation[i], cal.depthToColor.rotation[i], accuracy: 1e-5) }
        let dt = c.depthToColor.translation - cal.depthToColor.translation
        XCTAssertEqual((dt * dt).sum().squareRoot(), 0, accuracy: 1e-6)
        XCTAssertTrue(source.droppedSamples.isEmpty, "\(source.droppedSamples)")
    }

    // MARK: PyPI cyclonedds → depthlens dds:

    func testReferencePublisherArrivesExactlyAndBadSamplesAreDroppedOnce() throws {
        let py = try ddspy()
        let bag = Repo.fixture("realsense-d435-640x480.bag")
        let dir = TemporaryFolder("dds-ref")
        let d = domain(2)
        let color = DDSSource(topics: try DDSTopics.parse("/pyref/color/image_raw,domain=\(d)"), startTimeout: 60)
        let depth = DDSSource(topics: try DDSTopics.parse("/pyref/depth/image_raw,domain=\(d)"), startTimeout: 60)
        let colorStarted = startInBackground(color), depthStarted = startInBackground(depth)
        let r = try TestProcess.run([py, refScript, "pub", bag, "/pyref", "\(d)", "6", dir.path, "bad"], environment: debianPython, timeout: 120)
        XCTAssertEqual(r.status, 0, r.output)
        XCTAssertNil(colorStarted())
        XCTAssertNil(depthStarted())
        defer { color.stop(); depth.stop() }
        struct Sent: Decodable {
            struct Image: Decodable { var stamp_ns: Int64; var width: Int; var height: Int; var encoding: String; var file: String }
            struct Info: Decodable { var k: [Double] }
            var color: [Image]
            var depth: [Image]
            var info: [String: Info]
        }
        let sent = try JSONDecoder().decode(Sent.self, from: Data(contentsOf: URL(fileURLWithPath: dir.file("sent.json"))))
        func seconds(_ ns: Int64) -> Double { ROS2Message.Time(sec: Int32(ns / 1_000_000_000), nanosec: UInt32(ns % 1_000_000_000)).seconds }

        let colors = try drain(color)
        XCTAssertFalse(colors.isEmpty)
        for f in colors {
            let s = try XCTUnwrap(sent.color.first { seconds($0.stamp_ns) == f.timestamp }, "stamp \(f.timestamp)")
            let raw = [UInt8](try Data(contentsOf: URL(fileURLWithPath: dir.file(s.file))))
            var want: [UInt8] = []
            for i in stride(from: 0, to: raw.count, by: 3) { want += [raw[i], raw[i + 1], raw[i + 2], 255] }
            XCTAssertEqual(rgba(f.color), want)
        }
        let depths = try drain(depth)
        XCTAssertFalse(depths.isEmpty)
        for f in depths {
            let s = try XCTUnwrap(sent.depth.first { seconds($0.stamp_ns) == f.timestamp }, "stamp \(f.timestamp)")
            let raw = [UInt8](try Data(contentsOf: URL(fileURLWithPath: dir.file(s.file))))
            let want = stride(from: 0, to: raw.count, by: 2).map { Float(UInt16(raw[$0]) | UInt16(raw[$0 + 1]) << 8) * 0.001 }
            XCTAssertEqual(floats(try XCTUnwrap(f.depth).map), want)
        }
        let k = try XCTUnwrap(sent.info["color"]).k, dk = try XCTUnwrap(sent.info["depth"]).k
        let ci = try XCTUnwrap(color.calibration).color.intrinsics, di = try XCTUnwrap(depth.calibration).depth.intrinsics
        XCTAssertEqual([ci.fx, ci.fy, ci.cx, ci.cy], [k[0], k[4], k[2], k[5]].map { Float($0) })
        XCTAssertEqual([di.fx, di.fy, di.cx, di.cy], [dk[0], dk[4], dk[2], dk[5]].map { Float($0) })

        // Each round sent three broken images and a NaN camera_info: dropped, counted, one notice a topic.
        let dropped = color.droppedSamples
        XCTAssertGreaterThanOrEqual(dropped["/pyref/color/image_raw"] ?? 0, 3, "\(dropped)")
        XCTAssertGreaterThanOrEqual(dropped["/pyref/color/camera_info"] ?? 0, 1, "\(dropped)")
        let notices = color.warnings.filter { $0.contains("sample dropped") }
        XCTAssertEqual(notices.filter { $0.hasPrefix("dds:/pyref/color/image_raw:") }.count, 1, "\(notices)")
        XCTAssertEqual(notices.filter { $0.hasPrefix("dds:/pyref/color/camera_info:") }.count, 1, "\(notices)")
        XCTAssertTrue(depth.droppedSamples.isEmpty, "\(depth.droppedSamples)")
    }

    /// A publisher that goes away is a notice after 2 s of silence; frames flow again, with a
    /// second notice, when it comes back.
    func testSilentPublisherIsANoticeAndTheStreamResumes() throws {
        let py = try ddspy()
        let bag = Repo.fixture("realsense-d435-640x480.bag")
        let dir = TemporaryFolder("dds-silence")
        let d = domain(4)
        let source = DDSSource(topics: try DDSTopics.parse("/quiet/color/image_raw,domain=\(d)"), startTimeout: 60)
        let started = startInBackground(source)
        var r = try TestProcess.run([py, refScript, "pub", bag, "/quiet", "\(d)", "2", dir.path], environment: debianPython, timeout: 120)
        XCTAssertEqual(r.status, 0, r.output)
        XCTAssertNil(started())
        defer { source.stop() }
        Thread.sleep(forTimeInterval: 3)
        var notices: [String] = []
        source.onWarning = { notices.append($0) }
        _ = try drain(source)
        XCTAssertEqual(notices, ["dds:/quiet/color/image_raw silent for 2 s"])
        r = try TestProcess.run([py, refScript, "pub", bag, "/quiet", "\(d)", "2", dir.path], environment: debianPython, timeout: 120)
        XCTAssertEqual(r.status, 0, r.output)
        let again = try drain(source)
        XCTAssertFalse(again.isEmpty, "no frames after the publisher came back")
        XCTAssertEqual(notices, ["dds:/quiet/color/image_raw silent for 2 s", "dds:/quiet/color/image_raw resumed"])
    }

    // MARK: depthlens publish → PyPI cyclonedds

    func testReferenceSubscriberReceivesWhatPublishSends() throws {
        try assertReferenceSubscriberReceivesWhatPublishSends(python: try ddspy(), namespace: "/dlsub", domain: domain(3))
    }

    /// `depthlens publish` sends the bag under `namespace`; the reference subscriber (`python`'s
    /// cyclonedds) receives its images and camera_infos, equal to the bag's.
    func assertReferenceSubscriberReceivesWhatPublishSends(python py: String, namespace: String, domain d: Int) throws {
        let bag = Repo.fixture("realsense-d435-640x480.bag")
        let (expected, cal) = try bagFrames(bag)
        let dir = TemporaryFolder("dds-sub")
        let done = DispatchSemaphore(value: 0)
        let box = LockedValue<ProcessOutcome?>(nil)
        let args = [py, refScript, "sub", namespace, "\(d)", "30", dir.path, "2"], env = debianPython
        Thread.detachNewThread {
            let outcome = try? TestProcess.run(args, environment: env, timeout: 90)
            box.withLock { $0 = outcome }
            done.signal()
        }
        Thread.sleep(forTimeInterval: 1)
        let r = try TestProcess.run([depthlens, "publish", "--source", "bag:\(bag)", "--loop", "--frames", "60", "--namespace", namespace,
                                     "--domain", "\(d)", "--interface", "lo"], timeout: 120)
        XCTAssertEqual(r.status, 0, r.output)
        done.wait()
        let outcome = box.current
        XCTAssertEqual(outcome?.status, 0, outcome?.output ?? "the reference subscriber did not run")
        struct Got: Decodable {
            struct Image: Decodable { var stamp_ns: Int64; var width: Int; var height: Int; var encoding: String; var step: Int; var file: String }
            struct Info: Decodable { var k: [Double]; var width: Int; var height: Int }
            var color: [Image]
            var depth: [Image]
            var info: [String: Info]
        }
        let got = try JSONDecoder().decode(Got.self, from: Data(contentsOf: URL(fileURLWithPath: dir.file("received.json"))))
        XCTAssertEqual(got.color.count, 2)
        XCTAssertEqual(got.depth.count, 2)
        for g in got.color {
            let t = ROS2Message.Time(sec: Int32(g.stamp_ns / 1_000_000_000), nanosec: UInt32(g.stamp_ns % 1_000_000_000)).seconds
            let e = try XCTUnwrap(expected.first { abs($0.timestamp - t) < 1e-6 }, "stamp \(t)")
            XCTAssertEqual(g.encoding, "rgb8")
            let raw = [UInt8](try Data(contentsOf: URL(fileURLWithPath: dir.file(g.file))))
            let want = rgba(e.color).enumerated().filter { $0.offset % 4 != 3 }.map(\.element)
            XCTAssertEqual(raw, want)
        }
        for g in got.depth {
            let t = ROS2Message.Time(sec: Int32(g.stamp_ns / 1_000_000_000), nanosec: UInt32(g.stamp_ns % 1_000_000_000)).seconds
            let e = try XCTUnwrap(expected.first { abs($0.timestamp - t) < 1e-6 }, "stamp \(t)")
            XCTAssertEqual(g.encoding, "16UC1")
            let raw = [UInt8](try Data(contentsOf: URL(fileURLWithPath: dir.file(g.file))))
            let mm = stride(from: 0, to: raw.count, by: 2).map { UInt16(raw[$0]) | UInt16(raw[$0 + 1]) << 8 }
            XCTAssertEqual(mm, floats(try XCTUnwrap(e.depth).map).map { UInt16(($0 * 1000).rounded()) })
        }
        let ck = try XCTUnwrap(got.info["color"]).k, dk = try XCTUnwrap(got.info["depth"]).k
        XCTAssertEqual([ck[0], ck[4], ck[2], ck[5]].map { Float($0) }, [cal.color.intrinsics.fx, cal.color.intrinsics.fy, cal.color.intrinsics.cx, cal.color.intrinsics.cy])
        XCTAssertEqual([dk[0], dk[4], dk[2], dk[5]].map { Float($0) }, [cal.depth.intrinsics.fx, cal.depth.intrinsics.fy, cal.depth.intrinsics.cx, cal.depth.intrinsics.cy])
    }

    /// Runs `args` on another thread; the returned call waits for it (a timeout fails the test).
    func inBackground(_ args: [String], environment: [String: String] = [:], timeout: TimeInterval = 120) -> () -> ProcessOutcome? {
        let done = DispatchSemaphore(value: 0)
        let box = LockedValue<ProcessOutcome?>(nil)
        Thread.detachNewThread {
            let outcome = try? TestProcess.run(args, environment: environment, timeout: timeout)
            box.withLock { $0 = outcome }
            done.signal()
        }
        return {
            done.wait()
            done.signal()   // a second call returns at once
            return box.current
        }
    }

    /// The JSON object in a command's output (stdout and stderr together).
    func jsonObject(_ output: String) throws -> Data {
        let start = try XCTUnwrap(output.firstIndex(of: "{"), output), end = try XCTUnwrap(output.lastIndex(of: "}"), output)
        return Data(output[start...end].utf8)
    }

    // MARK: devices --dds, the viewer's DDS list

    /// `devices --dds` lists what the reference publisher sends (its sizes and encodings, read from
    /// the bag by Debian's rosbag) with a rate, and the --source of each topic and of the camera
    /// namespace; the viewer's catalog lists the same entries.
    func testDevicesListsImageTopicsWithSizeEncodingAndRate() throws {
        let py = try ddspy()
        let bag = Repo.fixture("realsense-d435-640x480.bag")
        let dir = TemporaryFolder("dds-devices")
        let d = domain(5)
        let publisher = inBackground([py, refScript, "pub", bag, "/devref", "\(d)", "15", dir.path], environment: debianPython)
        defer { XCTAssertEqual(publisher()?.status, 0, publisher()?.output ?? "the reference publisher did not run") }
        Thread.sleep(forTimeInterval: 1.5)
        let r = try TestProcess.run([depthlens, "devices", "--dds", "--domain", "\(d)", "--listen", "3", "--json"], timeout: 60)
        XCTAssertEqual(r.status, 0, r.output)
        struct Listing: Decodable {
            struct Topic: Decodable {
                var topic: String, type: String, width: Int?, height: Int?, encoding: String?, rate: Double?, samples: Int, source: String
            }
            struct Camera: Decodable { var namespace: String; var source: String }
            var domain: Int
            var topics: [Topic]
            var cameras: [Camera]
        }
        let listing = try JSONDecoder().decode(Listing.self, from: try jsonObject(r.output))
        struct Sent: Decodable {
            struct Image: Decodable { var width: Int; var height: Int; var encoding: String }
            var color: [Image]
            var depth: [Image]
        }
        let sent = try JSONDecoder().decode(Sent.self, from: Data(contentsOf: URL(fileURLWithPath: dir.file("sent.json"))))
        XCTAssertEqual(listing.domain, d)
        XCTAssertEqual(listing.topics.map(\.topic), ["/devref/color/image_raw", "/devref/depth/image_raw"], r.output)
        for (t, want) in zip(listing.topics, [try XCTUnwrap(sent.color.first), try XCTUnwrap(sent.depth.first)]) {
            XCTAssertEqual(t.type, "sensor_msgs/msg/Image")
            XCTAssertEqual([t.width, t.height], [want.width, want.height], t.topic)
            XCTAssertEqual(t.encoding, want.encoding, t.topic)
            XCTAssertEqual(t.source, "dds:\(t.topic),domain=\(d)")
            // The reference sends the bag's two images a topic every 0.1 s or more: about 20 a second at
            // most (two back to back, so a short stretch can count a little more).
            XCTAssertGreaterThan(t.samples, 1, t.topic)
            let rate = try XCTUnwrap(t.rate, t.topic)
            XCTAssertTrue(rate > 0 && rate <= 30, "\(t.topic): \(rate) Hz")
        }
        XCTAssertEqual(listing.cameras.map(\.source), ["dds:/devref,domain=\(d)"])

        // The viewer's Cameras section: listened for on a thread of its own.
        let catalog = DDSTopicCatalog(domain: d, seconds: 2)
        catalog.listen()
        XCTAssertTrue(catalog.state.listening)
        let deadline = Date().addingTimeInterval(30)
        while catalog.state.generation == 0, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        let state = catalog.state
        XCTAssertNil(state.problem)
        let entries = try XCTUnwrap(state.menu).groups.flatMap(\.entries)
        XCTAssertEqual(entries.map(\.source), ["dds:/devref,domain=\(d)", "dds:/devref/color/image_raw,domain=\(d)",
                                               "dds:/devref/depth/image_raw,domain=\(d)"])
        let c = try XCTUnwrap(sent.color.first)
        XCTAssertTrue(entries[1].label.contains("\(c.width)x\(c.height) \(c.encoding)"), entries[1].label)
    }

    // MARK: Frames lost on the way

    /// The publisher's Cyclone drops 2 % of the packets it sends (`Internal/Test/XmitLossiness`);
    /// an image with a lost fragment never arrives. `subscribe` counts what arrived and what was
    /// lost (gaps in each writer's sequence numbers) and keeps receiving: every image the
    /// publisher sent is one or the other, but for the last few (a loss shows only when a later
    /// image arrives).
    func testLostImagesAreCountedAndFramesKeepComing() throws {
        let d = domain(6)
        let lossy = ["CYCLONEDDS_URI": Self.loopbackOnly + ",<CycloneDDS><Domain><Internal><Test><XmitLossiness>20</XmitLossiness>"
                     + "</Test></Internal></Domain></CycloneDDS>"]
        let frames = 60
        let publisher = inBackground([depthlens, "publish", "--source", "synthetic:640x480,320x240", "--fps", "15", "--frames", "\(frames)",
                                      "--namespace", "/lossy", "--domain", "\(d)", "--interface", "lo", "--wait-for-subscriber", "60"],
                                     environment: lossy, timeout: 120)
        Thread.sleep(forTimeInterval: 1)
        let s = try TestProcess.run([depthlens, "subscribe", "--source", "dds:/lossy,domain=\(d)", "--idle", "3", "--seconds", "90", "--json"],
                                    timeout: 150)
        let p = try XCTUnwrap(publisher())
        XCTAssertEqual(p.status, 0, p.output)
        XCTAssertTrue(p.output.contains("published \(frames) frames"), p.output)
        XCTAssertEqual(s.status, 0, s.output)
        struct Report: Decodable { var frames: Int; var received_samples: Int; var lost_samples: Int; var stages_ms: [String: [String: Double]] }
        let report = try JSONDecoder().decode(Report.self, from: try jsonObject(s.output))
        XCTAssertEqual(Set(report.stages_ms.keys), ["write_to_received", "received_to_taken", "taken_to_converted", "converted_to_queued",
                                                    "queued_to_handed"], "the latency by step: \(s.output)")
        XCTAssertTrue(report.stages_ms.values.allSatisfy { Set($0.keys) == ["median", "p90"] }, s.output)
        let sent = 2 * frames   // a color and a depth image a frame
        XCTAssertGreaterThan(report.lost_samples, 0, s.output)
        XCTAssertGreaterThan(report.frames, frames / 3, "frames kept coming: \(s.output)")
        XCTAssertLessThanOrEqual(report.received_samples + report.lost_samples, sent, s.output)
        XCTAssertGreaterThanOrEqual(report.received_samples + report.lost_samples, sent - 10, s.output)
    }

    func testDeliveryLineSaysReceivedLostAndOverrun() {
        XCTAssertEqual(DeliveryCounts(received: 598, lost: 2, overrun: 1).line("dds"), "dds: 598 images received, 2 lost (0.33 %), 1 overrun")
        XCTAssertEqual(DeliveryCounts().line("dds"), "dds: 0 images received, 0 lost, 0 overrun")
    }

    // MARK: A peer on a newer Cyclone DDS

    /// PyPI's cyclonedds 11.x (its wheel's own libddsc 11, with XTypes type information and type
    /// lookup; scripts/dds11-venv makes .build/cyclone11).
    func cyclone11() throws -> String {
        let py = Repo.root.appendingPathComponent(".build/cyclone11/bin/python").path
        let r = try TestProcess.run([Repo.root.appendingPathComponent("scripts/dds11-venv").path], timeout: 1200)
        XCTAssertEqual(r.status, 0, "scripts/dds11-venv: \(r.output)")
        return py
    }

    /// A Cyclone 11 peer cannot crash depthlens (issue 25: a 0.10.2 publisher with type information
    /// segfaulted when an 11.x peer appeared, in 0.10.2's handling of the peer's type objects).
    /// depthlens registers no type information (its raw-CDR sertype), so it never looks a type up:
    /// an 11.x publisher's frames arrive in `depthlens subscribe` (which exits normally, the stamps
    /// it sent), and an 11.x subscriber gets what `depthlens publish` sends (which exits normally).
    func testCyclone11PeersNeitherCrashDepthlensNorFailToMatch() throws {
        let py = try cyclone11()
        let bag = Repo.fixture("realsense-d435-640x480.bag")
        let dir = TemporaryFolder("dds-11")
        let d = domain(8)
        let publisher = inBackground([py, refScript, "pub", bag, "/new11", "\(d)", "8", dir.path], environment: debianPython)
        Thread.sleep(forTimeInterval: 1)
        let r = try TestProcess.run([depthlens, "subscribe", "--source", "dds:/new11,domain=\(d)", "--frames", "10", "--seconds", "30",
                                     "--stamps", "--json"], timeout: 60)
        XCTAssertEqual(r.status, 0, "depthlens subscribe beside a Cyclone 11 publisher: \(r.output)")
        let p = try XCTUnwrap(publisher())
        XCTAssertEqual(p.status, 0, p.output)
        struct Report: Decodable { var frames: Int; var stamps: [Double] }
        let report = try JSONDecoder().decode(Report.self, from: try jsonObject(r.output))
        XCTAssertEqual(report.frames, 10, r.output)
        struct Sent: Decodable {
            struct Image: Decodable { var stamp_ns: Int64 }
            var color: [Image]
        }
        let sent = try JSONDecoder().decode(Sent.self, from: Data(contentsOf: URL(fileURLWithPath: dir.file("sent.json"))))
        let sentStamps = sent.color.map { ROS2Message.Time(nanoseconds: $0.stamp_ns).seconds }
        XCTAssertFalse(sentStamps.isEmpty)
        for t in report.stamps { XCTAssertTrue(sentStamps.contains(t), "stamp \(t) is none of those sent, \(sentStamps)") }

        try assertReferenceSubscriberReceivesWhatPublishSends(python: py, namespace: "/dl11", domain: domain(9))
    }

    // MARK: Across two network namespaces

    /// Runs `ip ARGS`; a failure throws with what ip said.
    @discardableResult
    func ip(_ args: [String]) throws -> String {
        let r = try TestProcess.run(["ip"] + args, timeout: 30)
        guard r.status == 0 else {
            throw NSError(domain: "ip", code: Int(r.status), userInfo: [NSLocalizedDescriptionKey: "ip \(args.joined(separator: " ")): \(r.output)"])
        }
        return r.output
    }

    /// A second host without a second machine: two network namespaces joined by a veth pair
    /// (10.200.N.1/30 and .2/30, nothing else in them), Cyclone DDS on the veth interface only with
    /// the other end as its one peer. `depthlens publish` in one sends the bag; `depthlens record
    /// --source dds:…` in the other records 5 frames, which hold the bag's pixels and depth exactly.
    /// Namespaces (the veth goes with them) and every process in them are removed when the test
    /// ends, failed or not. Needs root (CI runs as root); without it the test fails and says so.
    func testPublishAndRecordAcrossTwoNetworkNamespaces() throws {
        let bag = Repo.fixture("realsense-d435-640x480.bag")
        let (expected, _) = try bagFrames(bag)
        let id = Int(getpid()) % 10000
        let (nsA, nsB, vethA, vethB) = ("dlA\(id)", "dlB\(id)", "dlva\(id)", "dlvb\(id)")
        let net = 10 + Int(getpid()) % 240
        let (addrA, addrB) = ("10.200.\(net).1", "10.200.\(net).2")
        func removeNamespaces() {
            for ns in [nsA, nsB] {
                // Whatever still runs in it (a publisher this test started) ends first.
                if let pids = try? TestProcess.run(["ip", "netns", "pids", ns], timeout: 30).output {
                    for pid in pids.split(whereSeparator: \.isNewline).compactMap({ Int32($0) }) { kill(pid, SIGKILL) }
                }
                _ = try? TestProcess.run(["ip", "netns", "del", ns], timeout: 30)
            }
        }
        removeNamespaces()   // left by an earlier run with this process id
        defer { removeNamespaces() }
        do {
            try ip(["netns", "add", nsA])
        } catch {
            XCTFail("cannot make a network namespace (this test needs root, as CI has it, and iproute2): \(error)")
            return
        }
        try ip(["netns", "add", nsB])
        try ip(["link", "add", vethA, "type", "veth", "peer", "name", vethB])
        try ip(["link", "set", vethA, "netns", nsA])
        try ip(["link", "set", vethB, "netns", nsB])
        try ip(["-n", nsA, "addr", "add", "\(addrA)/30", "dev", vethA])
        try ip(["-n", nsB, "addr", "add", "\(addrB)/30", "dev", vethB])
        for (ns, dev) in [(nsA, vethA), (nsB, vethB)] {
            try ip(["-n", ns, "link", "set", dev, "up"])
            try ip(["-n", ns, "link", "set", "lo", "up"])
        }
        func cyclone(_ dev: String, peer: String) -> [String: String] {
            ["CYCLONEDDS_URI": "<CycloneDDS><Domain><General><Interfaces><NetworkInterface name=\"\(dev)\"/></Interfaces>"
                + "<AllowMulticast>false</AllowMulticast></General><Discovery><Peers><Peer address=\"\(peer)\"/></Peers>"
                + "<ParticipantIndex>auto</ParticipantIndex></Discovery></Domain></CycloneDDS>"]
        }
        let d = domain(7)
        let publisher = inBackground(["ip", "netns", "exec", nsA, depthlens, "publish", "--source", "bag:\(bag)", "--loop", "--fps", "10",
                                      "--frames", "100", "--namespace", "/netns", "--domain", "\(d)", "--interface", vethA,
                                      "--wait-for-subscriber", "60"], environment: cyclone(vethA, peer: addrB), timeout: 120)
        Thread.sleep(forTimeInterval: 1)
        let out = TemporaryFolder("dds-netns")
        let recorded = out.file("rec")
        let r = try TestProcess.run(["ip", "netns", "exec", nsB, depthlens, "record", "--source", "dds:/netns,domain=\(d)", "--frames", "5",
                                     "--out", recorded], environment: cyclone(vethB, peer: addrA), timeout: 120)
        XCTAssertEqual(r.status, 0, r.output)
        // Done: the publisher goes (it would send its 100 frames otherwise).
        removeNamespaces()
        _ = publisher()
        // The recording read back as a TUM folder. A frame may have come without its depth (the
        // depth reader matched the publisher after the color one; a color frame waits one interval
        // at most): its color is compared, and the depth of every frame that has one.
        let seq = try TUMSequence(directory: recorded, depthScale: 1000)   // the camera's millimeters, kept (calibration.json)
        XCTAssertEqual(seq.count, 5, r.output)
        var withDepth = 0
        for (i, entry) in seq.entries.enumerated() {
            let e = try XCTUnwrap(expected.min { abs($0.timestamp - entry.timestamp) < abs($1.timestamp - entry.timestamp) })
            XCTAssertEqual(e.timestamp, entry.timestamp, accuracy: 1e-4, "frame \(i)'s stamp")
            XCTAssertEqual(rgba(try ImageIO.readColor(entry.colorPath)), rgba(e.color), "color of frame \(i)")
            if let f = try? seq.loadFrame(at: i), let ed = e.depth {
                XCTAssertEqual(floats(f.depth.map).map { Int(($0 * 1000).rounded()) }, floats(ed.map).map { Int(($0 * 1000).rounded()) },
                               "depth (mm) of frame \(i)")
                withDepth += 1
            }
        }
        XCTAssertGreaterThan(withDepth, 0, "no recorded frame had depth")
    }

    // MARK: Samples as untrusted bytes

    func testBrokenSamplesThrowAndNeverTrap() throws {
        let good = ROS2Message.encodeImage(header: .init(stamp: .init(sec: 5, nanosec: 7), frameID: "f"), width: 4, height: 3,
                                           encoding: "rgb8", step: 12) { $0.initializeMemory(as: UInt8.self, repeating: 9) }
        let m = try ROS2Message.image(good, file: "dds:/t", topic: "/t")
        XCTAssertEqual([m.width, m.height, m.step, m.data.count], [4, 3, 12, 36])
        XCTAssertEqual(m.header.stamp, ROS2Message.Time(sec: 5, nanosec: 7))
        // Every truncation throws; random corruptions throw or decode, never trap.
        for n in 0..<good.count {
            XCTAssertThrowsError(try ROS2Message.image(Array(good.prefix(n)), file: "dds:/t", topic: "/t"))
        }
        var rng = SeededRandom(seed: 25)
        for _ in 0..<3000 {
            var b = good
            for _ in 0..<Int.random(in: 1...4, using: &rng) { b[Int.random(in: 0..<b.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng) }
            assertViewAgrees(b)
            if let img = try? ROS2Message.image(b, file: "dds:/t", topic: "/t"), (try? DDSImages.check(img, topic: "/t")) != nil {
                XCTAssertLessThanOrEqual(img.data.endIndex, b.count)
                _ = ROSImageDecoding.rgba(img)
            }
            _ = try? ROS2Message.cameraInfo(b, file: "dds:/t", topic: "/t")
            _ = try? ROS2Message.tfMessage(b, file: "dds:/t", topic: "/t")
        }
        // A size no frame may have.
        let huge = ROS2Message.encodeImage(header: .init(stamp: .init(sec: 0, nanosec: 0), frameID: ""), width: 100000, height: 1,
                                           encoding: "mono8", step: 100000) { _ in }
        let hm = try ROS2Message.image(huge, file: "dds:/t", topic: "/t")
        XCTAssertThrowsError(try DDSImages.check(hm, topic: "/t")) { XCTAssertTrue("\($0)".contains("100000x1"), "\($0)") }
        // camera_info with NaN.
        let info = ROS2Message.CameraInfo(header: .init(stamp: .init(sec: 0, nanosec: 0), frameID: ""), height: 480, width: 640,
                                          distortionModel: "plumb_bob", D: [.nan], K: [500, 0, 320, 0, 500, 240, 0, 0, 1],
                                          R: Array(repeating: 0, count: 9), P: Array(repeating: 0, count: 12))
        let back = try ROS2Message.cameraInfo(ROS2Message.encodeCameraInfo(info), file: "dds:/i", topic: "/i")
        XCTAssertEqual(back.K, info.K)
        XCTAssertThrowsError(try DDSImages.check(back, topic: "/i"))
    }

    /// The source's decoder (fields from the first bytes, pixels where they lie) agrees with the
    /// whole-message one: both throw, or give the same fields and the same pixel bytes.
    func assertViewAgrees(_ b: [UInt8], file: StaticString = #filePath, line: UInt = #line) {
        let full = try? ROS2Message.image(b, file: "dds:/t", topic: "/t")
        b.withUnsafeBytes { raw in
            let view = try? ROS2Message.imageView(raw, file: "dds:/t", topic: "/t")
            XCTAssertEqual(view == nil, full == nil, file: file, line: line)
            guard let v = view, let f = full else { return }
            XCTAssertEqual([v.width, v.height, v.step], [f.width, f.height, f.step], file: file, line: line)
            XCTAssertEqual(v.encoding, f.encoding, file: file, line: line)
            XCTAssertEqual(v.header, f.header, file: file, line: line)
            XCTAssertEqual(Array(v.pixels), Array(f.data), file: file, line: line)
        }
    }

    /// A frame id longer than the first kilobyte the view decodes its fields from: decoded whole.
    func testImageViewOfALongFrameID() throws {
        let long = String(repeating: "f", count: 5000)
        let b = ROS2Message.encodeImage(header: .init(stamp: .init(sec: 1, nanosec: 2), frameID: long), width: 2, height: 2,
                                        encoding: "mono8", step: 2) { p in for i in 0..<p.count { p[i] = UInt8(i + 1) } }
        assertViewAgrees(b)
        try b.withUnsafeBytes { raw in
            let v = try ROS2Message.imageView(raw, file: "dds:/t", topic: "/t")
            XCTAssertEqual(v.header.frameID, long)
            XCTAssertEqual(Array(v.pixels), [1, 2, 3, 4])
        }
        for n in [0, 3, 10, 100, 1023, 1024, 1025, 5040, b.count - 1] where n < b.count {
            XCTAssertThrowsError(try Array(b.prefix(n)).withUnsafeBytes { try ROS2Message.imageView($0, file: "dds:/t", topic: "/t") }, "\(n) bytes")
        }
    }

    func testSourceSpecParsesDDSForms() throws {
        XCTAssertEqual(try SourceSpec(parsing: "dds:/camera/camera"), .dds(DDSTopics(target: .namespace("/camera/camera"))))
        XCTAssertEqual(try SourceSpec(parsing: "dds:/c/color/image_raw,depth=/c/depth/image_rect_raw,domain=3"),
                       .dds(DDSTopics(target: .topics(color: "/c/color/image_raw", depth: "/c/depth/image_rect_raw"), domain: 3)))
        XCTAssertEqual("\(try SourceSpec(parsing: "dds:/a/image,domain=7"))", "dds:/a/image,domain=7")
        for bad in ["dds:", "dds:camera", "dds:/a/image,domain=999", "dds:/ns,depth=/x/image", "dds:/a/image,fps=3", "dds:/a b/image"] {
            XCTAssertThrowsError(try SourceSpec(parsing: bad), bad)
        }
    }
}
