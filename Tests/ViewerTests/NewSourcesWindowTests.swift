import DepthKit
import Foundation
import TestSupport
import XCTest

/// The newer sources in a real window (Xvfb): a ROS 2 recording (`ros2:`, written by PyPI's
/// rosbags and mcap through Tests/Fixtures/ros2_reference.py), a phone depth photo (`photo:`, the
/// shared iPhone HEIC), a phone LiDAR scan (`scan:`, written by Tests/Fixtures/make_scans.py) and a
/// live `dds:` stream from `depthlens publish` on the loopback interface.
/// Each opens with `--log-ui`, names itself in the window title, shows no error notice and draws
/// a picture that is not black; the recordings pause and step frame by frame.
final class NewSourcesWindowTests: WindowTestCase {
    /// The `key=value` fields of the last `state:` line after line `after`.
    private func state(_ v: ViewerRun, after n: Int) throws -> [String: String] {
        let line = try v.waitForLine("state: ", after: n, timeout: 20)
        var out: [String: String] = [:]
        for part in line.dropFirst("state: ".count).split(separator: " ") {
            let kv = part.split(separator: "=", maxSplits: 1)
            if kv.count == 2 { out[String(kv[0])] = String(kv[1]) }
        }
        return out
    }

    /// Presses `key` and returns the frame index of the state line the key prints.
    private func frameAfter(_ v: ViewerRun, key: String) throws -> String? {
        let n = v.lines.count
        try v.key(key)
        return try state(v, after: n)["frame"]
    }

    /// The window title (`depthlens - SOURCE - MODE`), waited for until it names `source`.
    private func title(_ v: ViewerRun, naming source: String) throws -> String {
        let id = try v.windowID()
        let deadline = Date().addingTimeInterval(20)
        var name = ""
        repeat {
            name = try v.x.xdotool(["getwindowname", id]).trimmingCharacters(in: .whitespacesAndNewlines)
            if name.contains(source) { break }
            try v.waitForFrames(2)
        } while Date() < deadline
        return name
    }

    /// No error notice: nothing failed to open or to read.
    private func assertNoErrorNotice(_ v: ViewerRun, file: StaticString = #filePath, line: UInt = #line) {
        let bad = v.lines.filter { l in
            l.hasPrefix("notice: ") && ["notice: source:", "notice: cannot", "failed", "error"].contains { l.contains($0) }
        }
        XCTAssertEqual(bad, [], "error notices; stderr: \(v.stderr)", file: file, line: line)
    }

    /// How many points of a coarse grid over the picture (`width`×`height` window, away from the
    /// overlay text rows) are not black, and how many distinct colors they have.
    private func lit(_ s: PixelBuffer, width: Int, height: Int) -> (lit: Int, total: Int, distinct: Int) {
        var litCount = 0, total = 0
        var colors = Set<Int>()
        for y in stride(from: 40, to: height - 40, by: 12) {
            for x in stride(from: 12, to: width - 12, by: 12) {
                let p = s.rgb(x, y)
                total += 1
                if p.x + p.y + p.z > 30 { litCount += 1 }
                colors.insert(p.x | p.y << 8 | p.z << 16)
            }
        }
        return (litCount, total, colors.count)
    }

    /// Runs of black pixels along rows of the middle of the picture, per row on average. A depth
    /// view with every third depth column dropped (make_scans.py's confidence map was x mod 3)
    /// shows regular vertical black stripes: some 50 runs a row at 640 pixels; real holes a few.
    private func blackRunsPerRow(_ s: PixelBuffer, width: Int, height: Int) -> Double {
        var runs = 0, rows = 0
        for y in stride(from: height / 5, to: height * 4 / 5, by: 8) {
            rows += 1
            var inBlack = false
            for x in 8..<(width - 8) {
                let p = s.rgb(x, y)
                let black = p.x + p.y + p.z <= 30
                if black && !inBlack { runs += 1 }
                inBlack = black
            }
        }
        return Double(runs) / Double(max(rows, 1))
    }

    /// Screenshots until most of the window is lit, keeps it, and asserts a real picture.
    @discardableResult
    private func assertPicture(_ x: XServer, _ name: String, width: Int = 640, height: Int = 480,
                               file: StaticString = #filePath, line: UInt = #line) throws -> PixelBuffer {
        let shot = try x.screenshot(saveAs: path("\(name).png")) { s in
            let l = lit(s, width: width, height: height)
            return l.lit * 2 > l.total
        }
        keep(path("\(name).png"), as: "newsources-\(name)")
        let l = lit(shot, width: width, height: height)
        XCTAssertGreaterThan(l.lit * 2, l.total, "\(name): most of the window is not black (\(l.lit) of \(l.total) lit)",
                             file: file, line: line)
        XCTAssertGreaterThan(l.distinct, 20, "\(name): a picture, not a flat color", file: file, line: line)
        return shot
    }

    /// Opens `source` paused at frame 0, steps forward with `.` and Right and back with `,` and Left.
    /// `noStripes`: the depth view has no regular black stripes (a phone scan's low-resolution depth).
    private func stepThrough(_ source: String, frames: Int, shot: String, noStripes: Bool = false) throws {
        let x = try XServer.start()
        defer { x.stop() }
        let v = try ViewerRun(x: x, args: ["--source", source, "--paused", "--mode", "jet", "--mix", "1", "--no-panel",
                                           "--log-ui", "--size", "640x480"])
        defer { if v.process.isRunning { v.process.terminate() } }
        try v.waitForLine("ui: ready", timeout: 60)
        let first = try state(v, after: 0)
        XCTAssertEqual(first["paused"], "1", "--paused")
        XCTAssertEqual(first["frame"], "0", "opens at the first frame")
        XCTAssertTrue(try title(v, naming: source).contains(source), "the window title names \(source)")

        XCTAssertEqual(try frameAfter(v, key: "period"), "1", "`.` steps on one frame")
        XCTAssertEqual(try frameAfter(v, key: "Right"), "2", "Right steps on one frame")
        XCTAssertEqual(try frameAfter(v, key: "comma"), "1", "`,` steps back")
        XCTAssertEqual(try frameAfter(v, key: "Left"), "0", "Left steps back")
        // To the last frame and no further while paused without loop.
        for i in 1..<frames { XCTAssertEqual(try frameAfter(v, key: "period"), "\(i)") }

        // Space plays: the state says so, and playing moves the frame (it wraps or stops at the end).
        var n = v.lines.count
        try v.key("space")
        XCTAssertEqual(try state(v, after: n)["paused"], "0", "Space plays")
        n = v.lines.count
        try v.key("space")
        XCTAssertEqual(try state(v, after: n)["paused"], "1", "Space pauses again")

        let picture = try assertPicture(x, shot)
        if noStripes {
            let runs = blackRunsPerRow(picture, width: 640, height: 480)
            XCTAssertLessThan(runs, 8, "\(shot): black runs per row of the depth view (stripes?)")
        }
        assertNoErrorNotice(v)
        v.quit()
    }

    /// Issue 24: a `ros2:` recording (rosbag2 SQLite folder and a bare MCAP) opens and steps.
    func testROS2RecordingOpensAndSteps() throws {
        let python = try PythonReference.python(importing: ["rosbags", "mcap", "numpy"])
        let out = path("bags")
        let r = try TestProcess.run([python, Repo.fixture("ros2_reference.py"), "make-bags", out, "--synthetic-only"], timeout: 600)
        XCTAssertEqual(r.status, 0, r.output)
        guard r.status == 0 else { return }
        // The synthetic recordings hold 6 frames (ros2_reference.py's FRAMES).
        try stepThrough("ros2:\(out)/synthetic-db3", frames: 6, shot: "ros2-db3")
        try stepThrough("ros2:\(out)/synthetic-zstd.mcap", frames: 6, shot: "ros2-mcap")
    }

    /// Issue 26: a phone LiDAR scan folder of each layout (Stray Scanner, Polycam, ARKitScenes,
    /// 3D Scanner App) opens and steps, its depth view without stripes.
    func testScanOpensAndSteps() throws {
        let py = try PythonReference.python(importing: ["numpy", "PIL", "rosbags"])
        let dir = path("scans")
        let r = try TestProcess.run([py, Repo.fixture("make_scans.py"), Repo.fixture("realsense-d435-640x480.bag"), dir], timeout: 300)
        XCTAssertEqual(r.status, 0, r.output)
        guard r.status == 0 else { return }
        // make_scans.py writes three frames per layout.
        for layout in ["stray", "polycam", "arkitscenes", "scanner3d"] {
            try stepThrough("scan:\(dir)/\(layout)", frames: 3, shot: "scan-\(layout)", noStripes: true)
        }
    }

    /// Issue 26: the 3D view of a scan in world coordinates (W), then accumulating the frames
    /// stepped through into the fused cloud (W again), drawn; W a third time returns to the camera
    /// frame. No error notice on the way.
    func testScanWorldViewAccumulates() throws {
        let py = try PythonReference.python(importing: ["numpy", "PIL", "rosbags"])
        let dir = path("scans")
        let r = try TestProcess.run([py, Repo.fixture("make_scans.py"), Repo.fixture("realsense-d435-640x480.bag"), dir], timeout: 300)
        XCTAssertEqual(r.status, 0, r.output)
        guard r.status == 0 else { return }
        let x = try XServer.start()
        defer { x.stop() }
        let v = try ViewerRun(x: x, args: ["--source", "scan:\(dir)/polycam", "--paused", "--view", "3d", "--no-panel",
                                           "--log-ui", "--size", "640x480"])
        defer { if v.process.isRunning { v.process.terminate() } }
        try v.waitForLine("ui: ready", timeout: 60)
        var n = v.lines.count
        try v.key("w")
        _ = try v.waitForLine("ui: 3d world world", after: n, timeout: 20)
        n = v.lines.count
        try v.key("w")
        _ = try v.waitForLine("ui: 3d world accumulate", after: n, timeout: 20)
        _ = try v.waitForLine("ui: 3d accumulated 1 frames", after: n, timeout: 20)
        for i in 1...2 {
            n = v.lines.count
            XCTAssertEqual(try frameAfter(v, key: "period"), "\(i)")
            _ = try v.waitForLine("ui: 3d accumulated \(i + 1) frames", after: n, timeout: 20)
        }
        try v.waitForFrames(3)
        let shot = try x.screenshot(saveAs: path("scan-world.png")) { s in
            let l = lit(s, width: 640, height: 480)
            return l.lit * 10 > l.total
        }
        keep(path("scan-world.png"), as: "newsources-scan-world")
        let l = lit(shot, width: 640, height: 480)
        XCTAssertGreaterThan(l.lit * 10, l.total, "the accumulated cloud is drawn (\(l.lit) of \(l.total) lit)")
        XCTAssertGreaterThan(l.distinct, 20, "colored points, not a flat color")
        n = v.lines.count
        try v.key("w")
        _ = try v.waitForLine("ui: 3d world camera", after: n, timeout: 20)
        try v.waitForFrames(3)
        assertNoErrorNotice(v)
        v.quit()
    }

    /// Issue 26: the shared iPhone portrait HEIC opens as a still with depth.
    func testPhotoOpens() throws {
        let heic = Repo.fixture("iphone-portrait-pug.heic")
        let source = "photo:\(heic)"
        let x = try XServer.start()
        defer { x.stop() }
        let v = try ViewerRun(x: x, args: ["--source", source, "--mode", "jet", "--mix", "1", "--no-panel",
                                           "--log-ui", "--size", "640x480"])
        defer { if v.process.isRunning { v.process.terminate() } }
        try v.waitForLine("ui: ready", timeout: 60)
        let s = try state(v, after: 0)
        XCTAssertEqual(s["mode"], "jet")
        XCTAssertTrue(try title(v, naming: source).contains(source), "the window title names \(source)")
        // A still: Space and `.` say it cannot pause or step, and nothing fails.
        let n = v.lines.count
        try v.key("period")
        let notice = try v.waitForLine("notice: ", after: n, timeout: 20)
        XCTAssertTrue(notice.contains("cannot step"), notice)
        try v.waitForFrames(3)
        try assertPicture(x, "photo")
        assertNoErrorNotice(v)
        v.quit()
    }
    /// Issue 26: an iPhone portrait JPEG with a portrait effects matte (photo_reference.py) in the
    /// mask and portrait modes: the matte is the mask (PhoneViewTests compares its pixels); here
    /// the window shows it on either backend without an error.
    func testPhotoMatteModes() throws {
        let python = try PythonReference.python(importing: ["numpy", "PIL"])
        let jpeg = path("iphone.jpg")
        let r = try TestProcess.run([python, Repo.fixture("photo_reference.py"), "iphone-jpeg", jpeg, path("iphone")], timeout: 300)
        XCTAssertEqual(r.status, 0, r.output)
        guard r.status == 0 else { return }
        let x = try XServer.start()
        defer { x.stop() }
        let v = try ViewerRun(x: x, args: ["--source", "photo:\(jpeg)", "--mode", "mask", "--backend", "gpu", "--no-panel",
                                           "--log-ui", "--size", "640x480"])
        defer { if v.process.isRunning { v.process.terminate() } }
        try v.waitForLine("ui: ready", timeout: 60)
        try v.waitForFrames(3)
        try assertPicture(x, "photo-matte-mask")
        let n = v.lines.count
        try v.key("9")
        XCTAssertEqual(try state(v, after: n)["mode"], "portrait")
        try v.waitForFrames(3)
        try assertPicture(x, "photo-matte-portrait")
        assertNoErrorNotice(v)
        v.quit()
    }

    /// Issue 25: a `dds:` stream that `depthlens publish` sends on this machine only (Cyclone DDS
    /// kept on the loopback interface, as Tests/depthlensTests/DDSTests.swift does) shows live in
    /// the window; the publisher stops by itself after its frames.
    func testDDSStreamShows() throws {
        let loopbackOnly = "<CycloneDDS><Domain><General><Interfaces><NetworkInterface name=\"lo\"/></Interfaces>"
            + "<AllowMulticast>false</AllowMulticast></General><Discovery><Peers><Peer address=\"127.0.0.1\"/></Peers>"
            + "<ParticipantIndex>auto</ParticipantIndex></Discovery></Domain></CycloneDDS>"
        let env = ["CYCLONEDDS_URI": loopbackOnly]
        let domain = 100 + (Int(getpid()) * 7 + 50) % 100
        let source = "dds:/wintest,domain=\(domain)"
        // The publisher ends by itself after its frames (stopped when this test ends early).
        let publisher = try ChildProcess(Repo.depthlens, ["publish", "--source", "synthetic:160x120", "--frames", "240",
                                                          "--namespace", "/wintest", "--domain", "\(domain)", "--interface", "lo"],
                                         environment: env, mergingOutput: true)
        let x = try XServer.start()
        defer { x.stop() }
        let v = try ViewerRun(x: x, args: ["--source", source, "--mode", "jet", "--mix", "1", "--no-panel",
                                           "--log-ui", "--stats", "--size", "640x480"], extraEnv: env)
        defer { if v.process.isRunning { v.process.terminate() } }
        try v.waitForLine("ui: ready", timeout: 60)
        let s = try state(v, after: 0)
        XCTAssertNil(s["frame"], "a live stream has no frame index")
        XCTAssertTrue(try title(v, naming: source).contains(source), "the window title names \(source)")
        // The window opens at once (the source does not wait for its publisher); --stats says what
        // arrived once a second: wait until images did.
        var received = 0, statsLine = ""
        let deadline = Date().addingTimeInterval(60)
        while received == 0, Date() < deadline {
            statsLine = try v.waitForLine("stats: ", after: v.lines.count, timeout: 20)
            let part = try XCTUnwrap(statsLine.components(separatedBy: " | ").first { $0.hasPrefix("dds: ") }, statsLine)
            received = Int(part.dropFirst("dds: ".count).prefix { $0.isNumber }) ?? 0
            XCTAssertTrue(part.contains(" images received, ") && part.contains(" lost") && part.hasSuffix(" overrun"), part)
        }
        XCTAssertGreaterThan(received, 0, statsLine)
        try v.waitForFrames(10)
        try assertPicture(x, "dds")
        assertNoErrorNotice(v)
        v.quit()

        let outcome = publisher.wait(timeout: 120)
        XCTAssertEqual(outcome.status, 0, outcome.stdout)
        XCTAssertTrue(outcome.stdout.contains("published 240 frames"), outcome.stdout)
    }
}
