import TestSupport
import Capture
import DepthKit
import Foundation
import Glibc
import XCTest

/// Ctrl+R and the thermal watch in a real window (Xvfb).
final class ViewerRecordingTests: WindowTestCase {
    func testCtrlRRecordsEveryProcessedFrame() throws {
        let x = try XServer.start()
        defer { x.stop() }
        let snaps = path("snaps")
        let v = try ViewerRun(x: x, args: ["--source", "synthetic:320x240", "--mode", "jet", "--log-ui", "--snapshot-dir", snaps,
                                           "--size", "640x480"])
        defer { if v.process.isRunning { v.process.terminate() } }
        try v.waitForLine("ui: ready")
        var n = v.lines.count
        try v.key("ctrl+r")
        let start = try v.waitForLine("ui: record start ", after: n, timeout: 10)
        let file = String(start.dropFirst("ui: record start ".count))
        XCTAssertTrue(file.hasPrefix(snaps) && file.hasSuffix(".mp4"), file)
        v.hold(1.5)   // record for 1.5 s of frames
        n = v.lines.count
        try v.key("ctrl+r")
        let done = try v.waitForLine("ui: video: ", after: n, timeout: 20)
        // "ui: video: PATH frames N dropped D"
        let words = done.split(separator: " ")
        let frames = try XCTUnwrap(Int(words[words.count - 3]), done)
        let dropped = try XCTUnwrap(Int(words[words.count - 1]), done)
        XCTAssertGreaterThan(frames, 0, "frames recorded: \(done)")
        let probe = try VideoProbe.read(file)
        XCTAssertEqual(probe.frames, frames, "the video holds exactly the frames recorded (\(dropped) dropped, counted)")
        XCTAssertEqual([probe.width, probe.height], [320, 240])
        XCTAssertEqual(probe.rate, "30/1", "the synthetic source's rate")
        v.quit()
    }

    /// SIGTERM and SIGHUP (kill, timeout, systemd, a logout) finish a recording as a quit does:
    /// the .mp4 is complete (no .partial left), ffprobe reads every frame, exit status 128 + N.
    func testStopSignalsFinishTheRecording() throws {
        for (sig, name) in [(SIGTERM, "SIGTERM"), (SIGHUP, "SIGHUP")] {
            let x = try XServer.start()
            defer { x.stop() }
            let snaps = path("snaps-\(name)")
            let v = try ViewerRun(x: x, args: ["--source", "synthetic:320x240", "--mode", "jet", "--log-ui", "--snapshot-dir", snaps,
                                               "--size", "640x480", "--no-panel"])
            defer { if v.process.isRunning { v.process.terminate() } }
            try v.waitForLine("ui: ready")
            let n = v.lines.count
            try v.key("ctrl+r")
            let start = try v.waitForLine("ui: record start ", after: n, timeout: 10)
            let file = String(start.dropFirst("ui: record start ".count))
            // Frames reach the file before the signal: wait until ffmpeg has written some.
            let deadline = Date().addingTimeInterval(20)
            while Date() < deadline && ((try? FileManager.default.attributesOfItem(atPath: file + ".partial"))?[.size] as? Int ?? 0) < 4096 {
                usleep(50_000)
            }
            kill(v.process.processIdentifier, sig)
            let done = try v.waitForLine("ui: video: ", after: n, timeout: 20)
            let exitDeadline = Date().addingTimeInterval(20)
            while v.process.isRunning && Date() < exitDeadline { usleep(50_000) }
            XCTAssertFalse(v.process.isRunning, name)
            XCTAssertEqual(v.process.terminationReason, .exit, name)
            XCTAssertEqual(v.process.terminationStatus, 128 + sig, "\(name): \(v.stderr)")
            XCTAssertTrue(v.stderr.contains("stopped by \(name)"), v.stderr)
            XCTAssertFalse(FileManager.default.fileExists(atPath: file + ".partial"), name)
            let words = done.split(separator: " ")
            let frames = try XCTUnwrap(Int(words[words.count - 3]), done)
            XCTAssertGreaterThan(frames, 0, done)
            XCTAssertEqual(try VideoProbe.read(file).frames, frames, "\(name): the video holds every frame recorded")
        }
    }

    /// Ctrl+R with --record-rgbd writes the source's frames as Matroska: depth that comes back
    /// bit-exact through mkv:, with the calibration inside.
    func testCtrlRRecordsRGBDAsMKV() throws {
        let x = try XServer.start()
        defer { x.stop() }
        let snaps = path("snaps-rgbd")
        let v = try ViewerRun(x: x, args: ["--source", "synthetic:320x240", "--mode", "jet", "--log-ui", "--snapshot-dir", snaps,
                                           "--size", "640x480", "--no-panel", "--record-rgbd", "--fps", "10"])
        defer { if v.process.isRunning { v.process.terminate() } }
        try v.waitForLine("ui: ready")
        var n = v.lines.count
        try v.key("ctrl+r")
        let start = try v.waitForLine("ui: record start ", after: n, timeout: 10)
        let file = String(start.dropFirst("ui: record start ".count))
        XCTAssertTrue(file.hasSuffix(".mkv"), file)
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline && ((try? FileManager.default.attributesOfItem(atPath: file + ".partial"))?[.size] as? Int ?? 0) < 20_000 {
            usleep(50_000)
        }
        n = v.lines.count
        try v.key("ctrl+r")
        let done = try v.waitForLine("ui: rgbd: ", after: n, timeout: 20)
        let words = done.split(separator: " ")
        let frames = try XCTUnwrap(Int(words[words.count - 3]), done)
        XCTAssertGreaterThan(frames, 1, done)
        let source = MKVSource(path: file)
        try source.start()
        XCTAssertEqual(source.recording.frameCount, frames)
        XCTAssertNotNil(source.calibration, "the calibration travels inside")
        let f = try FrameReader.frame(0, of: source)
        XCTAssertEqual(f.color.width, 320)
        XCTAssertEqual(f.depth?.map.width, 320)
        v.quit()
    }

    func testThermalSeriousWarnsAndRecovers() throws {
        let zone = path("thermal/thermal_zone0")
        try FileManager.default.createDirectory(atPath: zone, withIntermediateDirectories: true)
        func write(_ file: String, _ text: String) throws { try (text + "\n").write(toFile: zone + "/" + file, atomically: true, encoding: .utf8) }
        try write("type", "x86_pkg_temp")
        try write("trip_point_0_type", "passive"); try write("trip_point_0_temp", "90000")
        try write("trip_point_1_type", "critical"); try write("trip_point_1_temp", "100000")
        try write("temp", "95000")
        let x = try XServer.start()
        defer { x.stop() }
        let v = try ViewerRun(x: x, args: ["--source", "synthetic:320x240", "--mode", "jet", "--log-ui", "--size", "640x480"],
                              extraEnv: ["DEPTHLENS_THERMAL_DIR": path("thermal")])
        defer { if v.process.isRunning { v.process.terminate() } }
        try v.waitForLine("ui: thermal serious", timeout: 20)
        try v.waitForLine("notice: thermal serious (x86_pkg_temp 95 °C): depth lowered to 15 fps")
        let n = v.lines.count
        try write("temp", "50000")
        try v.waitForLine("ui: thermal nominal", after: n, timeout: 10)
        try v.waitForLine("notice: thermal nominal", after: n)
        v.quit()
    }
}
