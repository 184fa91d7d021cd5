import TestSupport
import Capture
import DepthKit
import Foundation
import XCTest
@testable import Viewer

/// The panel's Export section driven as a person would (I and O mark the timeline, Ctrl+E starts
/// the export with the panel's settings): the folder it writes reopens with `tum:` and holds the
/// marked frames; a stop signal or a quit during a long export leaves a folder whose index files
/// list exactly the PNGs written; a PLY point list has nothing to export.
final class ViewerExportWindowTests: WindowTestCase {
    /// I at frame 3, O at frame 7, Ctrl+E: frames 3…7 of a 12-frame TUM recording, byte for byte,
    /// with their timestamps; a second Ctrl+E into the now full folder is refused.
    func testExportWritesTheMarkedRange() throws {
        let seq = try writeSequence(frames: 12)
        let out = path("out")
        let x = try XServer.start()
        defer { x.stop() }
        let v = try ViewerRun(x: x, args: ["--source", "tum:\(seq)", "--paused", "--frame", "3", "--log-ui", "--export-dir", out,
                                           "--snapshot-dir", path("snaps"), "--size", "1280x720"])
        defer { if v.process.isRunning { v.process.terminate() } }
        try v.waitForLine("ui: ready", timeout: 120)

        try press(v, "i", then: "ui: export marks 3 -1")
        for frame in 4...7 { try press(v, "Right", then: "state: ", containing: " frame=\(frame) ") }
        try press(v, "o", then: "ui: export marks 3 7")
        var n = v.lines.count
        try v.key("ctrl+e")
        XCTAssertEqual(try v.waitForLine("ui: export start ", after: n, timeout: 30), "ui: export start 5 \(out)")
        XCTAssertEqual(try v.waitForLine("ui: export done ", after: n, timeout: 120), "ui: export done 5 \(out)")
        XCTAssertEqual(try v.waitForLine("notice: exported ", after: n, timeout: 10), "notice: exported 5 frames to \(out)")

        // The panel after the export, scrolled down to the section (kept for people with DEPTHLENS_KEEP_SHOTS).
        try shootPanel(v, as: "export-panel")

        // Again into the same folder: refused, nothing started.
        n = v.lines.count
        try v.key("ctrl+e")
        let refusal = try v.waitForLine("notice: export: ", after: n, timeout: 30)
        XCTAssertEqual(refusal, "notice: export: \(out) exists and is not empty (tick \"overwrite\" to write into it)")
        try v.waitForFrames(3)
        XCTAssertFalse(v.lines[n...].contains { $0.hasPrefix("ui: export start") }, "a full folder is not written into")
        v.quit()

        XCTAssertEqual(try Self.checkFolder(out), 5)
        let a = try TUMSequence(directory: seq), b = try TUMSequence(directory: out)
        XCTAssertEqual(b.count, 5)
        for i in 0..<5 {
            XCTAssertEqual(a.entries[3 + i].timestamp, b.entries[i].timestamp, accuracy: 1e-6, "timestamp of frame \(3 + i)")
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: a.entries[3 + i].depthPath)),
                           try Data(contentsOf: URL(fileURLWithPath: b.entries[i].depthPath)), "depth PNG of frame \(3 + i)")
            XCTAssertEqual(try a.loadFrame(at: 3 + i).color.packedBytes(), try b.loadFrame(at: i).color.packedBytes(), "color of frame \(3 + i)")
        }
        // Reopened through tum:, the folder gives the five frames.
        let reader = try FrameReader(source: try SourceSpec(parsing: "tum:\(out)").makeSource())
        var reopened = 0
        while try reader.next() != nil { reopened += 1 }
        XCTAssertEqual(reopened, 5)
        XCTAssertTrue(FileManager.default.fileExists(atPath: out + "/calibration.json"))
    }

    /// A long export (3001 frames of the synthetic scene) while the view plays on; SIGTERM, or Q,
    /// then stops it: the exit status is 143 (0 for Q), stderr says how many frames were written,
    /// and rgb.txt, depth.txt and associations.txt list exactly the PNGs on disk.
    func testStopSignalAndQuitFinishARunningExport() throws {
        for how in ["SIGTERM", "q"] {
            let out = path("out-\(how)")
            let x = try XServer.start()
            defer { x.stop() }
            let v = try ViewerRun(x: x, args: ["--source", "synthetic:320x240", "--paused", "--frame", "3000", "--log-ui",
                                               "--export-dir", out, "--snapshot-dir", path("snaps"), "--size", "1280x720"])
            defer { if v.process.isRunning { v.process.terminate() } }
            try v.waitForLine("ui: ready", timeout: 120)
            try press(v, "o", then: "ui: export marks -1 3000")
            let n = v.lines.count
            try v.key("ctrl+e")
            XCTAssertEqual(try v.waitForLine("ui: export start ", after: n, timeout: 30), "ui: export start 3001 \(out)")
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline && ((try? FileManager.default.contentsOfDirectory(atPath: out + "/depth"))?.count ?? 0) < 3 {
                usleep(50_000)
            }
            // The view plays on while the export runs.
            let played = v.lines.count
            try v.key("space")
            let moving = try v.waitForLine("state: ", after: played, timeout: 30)
            XCTAssertTrue(moving.contains(" paused=0 ") && moving.contains(" exporting=1 "), moving)
            try v.waitForFrames(10)
            if how == "q" { try shootPanel(v, as: "export-progress") }
            let frames = v.lines.compactMap { $0.hasPrefix("state: ") ? KeyDriver.parse($0)["frame"].flatMap(Int.init) : nil }
            XCTAssertGreaterThan(frames.last ?? 0, 3000, "the view played during the export")
            if how == "SIGTERM" { kill(v.process.processIdentifier, SIGTERM) } else { try v.key("q") }
            let exitDeadline = Date().addingTimeInterval(60)
            while v.process.isRunning && Date() < exitDeadline { usleep(50_000) }
            XCTAssertFalse(v.process.isRunning, how)
            XCTAssertEqual(v.process.terminationReason, .exit, how)
            XCTAssertEqual(v.process.terminationStatus, how == "SIGTERM" ? 143 : 0, "\(how): \(v.stderr)")
            let by = how == "SIGTERM" ? "by SIGTERM" : "at quit"
            guard let line = v.stderr.split(separator: "\n").first(where: { $0.contains("export stopped \(by) after ") }) else {
                XCTFail("\(how): no 'export stopped \(by)' line: \(v.stderr)")
                continue
            }
            let words = line.split(separator: " ")
            let written = try XCTUnwrap(words.firstIndex(of: "after").flatMap { Int(words[$0 + 1]) }, String(line))
            XCTAssertTrue(line.contains("of 3001 frames; \(out) lists every frame written"), String(line))
            XCTAssertGreaterThanOrEqual(written, 3, String(line))
            XCTAssertLessThan(written, 3001, String(line))
            XCTAssertEqual(try Self.checkFolder(out), written, "\(how): the folder lists exactly the frames written")
            XCTAssertFalse(v.stderr.contains("vulkan validation"), v.stderr)
        }
    }

    /// `--export-dir FILE.mkv` and `FILE.mcap` pick the kind: Ctrl+E writes a lossless video of the
    /// depth colored as the view colors it (`--colormap turbo`), every frame as ffmpeg decodes it
    /// equal to the CPU colormap's, pts the frames' stamps; and a ROS 2 MCAP that `ros2:` reopens.
    func testVideoAndMCAPExportsFollowTheName() throws {
        let seq = try writeSequence(frames: 6)
        for out in [path("out.mkv"), path("out.mcap")] {
            let kind = out.hasSuffix(".mkv") ? "video" : "mcap"
            let x = try XServer.start()
            defer { x.stop() }
            let v = try ViewerRun(x: x, args: ["--source", "tum:\(seq)", "--paused", "--log-ui", "--export-dir", out, "--colormap", "turbo",
                                               "--snapshot-dir", path("snaps"), "--size", "1280x720"])
            defer { if v.process.isRunning { v.process.terminate() } }
            try v.waitForLine("ui: ready", timeout: 120)
            let n = v.lines.count
            try v.key("ctrl+e")
            XCTAssertEqual(try v.waitForLine("ui: export start ", after: n, timeout: 30), "ui: export start 6 \(out) \(kind)")
            XCTAssertEqual(try v.waitForLine("ui: export done ", after: n, timeout: 120), "ui: export done 6 \(out)")
            XCTAssertEqual(try v.waitForLine("notice: exported ", after: n, timeout: 10), "notice: exported 6 frames to \(out)")
            if kind == "video" { try shootPanel(v, as: "export-video-panel") }
            v.quit()
        }

        // The video: FFV1, 6 frames at the stamps, each the turbo-colored depth exactly.
        let video = path("out.mkv")
        let pts = try runTool("/usr/bin/ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "packet=pts", "-of", "csv=p=0", video])
        XCTAssertEqual(pts.0, 0, pts.2)
        XCTAssertEqual(pts.1.split(separator: "\n").compactMap { Int($0) }.sorted(), (0..<6).map { Int((Double($0) / 30 * 1e6).rounded()) })
        let raw = path("out.rgb")
        let dec = try runTool("/usr/bin/ffmpeg", ["-nostdin", "-loglevel", "error", "-y", "-i", video, "-fps_mode", "passthrough",
                                                  "-f", "rawvideo", "-pix_fmt", "rgb24", raw])
        XCTAssertEqual(dec.0, 0, dec.2)
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: raw)))
        XCTAssertEqual(bytes.count, 6 * 320 * 240 * 3)
        let source = try SourceSpec(parsing: "tum:\(seq)").makeSource()
        try source.start()
        defer { source.stop() }
        let rec = try XCTUnwrap(source.recordedStreams)
        let depthStream = try XCTUnwrap(try rec.streams().firstIndex { $0.kind == .depth })
        let filter = DepthColormapFilter(colormap: .turbo, range: .defaultEqualized)
        for i in 0..<6 {
            guard case let .depth(d) = try rec.decodeFrame(i, ofStream: depthStream) else { return XCTFail("frame \(i) has no depth") }
            let m = d.depthFloat32()
            try filter.prepare(input: m.frameFormat, outputRetainedBufferCountHint: 1)
            let mapped = try filter.render(m).packedBytes()
            let expected = (0..<(320 * 240)).flatMap { mapped[(4 * $0)..<(4 * $0 + 3)] }
            XCTAssertTrue(Array(bytes[(i * 320 * 240 * 3)..<((i + 1) * 320 * 240 * 3)]) == expected, "frame \(i) is the turbo-colored depth")
        }

        // The MCAP: ros2: reopens it with the six frames.
        let info = try runTool(Repo.depthlens, ["info", "--source", "ros2:\(path("out.mcap"))"])
        XCTAssertEqual(info.0, 0, info.2)
        XCTAssertTrue(info.1.contains("6 frames"), info.1)
    }

    /// A PLY point list has no frames: the section says why and Ctrl+E writes nothing.
    func testAPointListHasNothingToExport() throws {
        let ply = path("cloud.ply"), out = path("out")
        XCTAssertEqual(try runTool(Repo.depthlens, ["export-ply", "--synthetic", "--out", ply]).0, 0)
        let x = try XServer.start()
        defer { x.stop() }
        let v = try ViewerRun(x: x, args: ["--source", "ply:\(ply)", "--log-ui", "--export-dir", out, "--size", "1280x720"])
        defer { if v.process.isRunning { v.process.terminate() } }
        try v.waitForLine("ui: ready", timeout: 120)
        let n = v.lines.count
        try v.key("ctrl+e")
        XCTAssertEqual(try v.waitForLine("notice: export", after: n, timeout: 30),
                       "notice: export: a PLY point list has no color or depth frames to export")
        try shootPanel(v, as: "export-ply-disabled")
        v.quit()
        XCTAssertFalse(FileManager.default.fileExists(atPath: out), "nothing is written")
    }

    /// A folder that cannot be made: one notice line naming it, nothing started on the way.
    func testAnUnwritableFolderIsOneLine() throws {
        let seq = try writeSequence(frames: 3)
        let out = "/proc/depthlens-export-test/out"
        let x = try XServer.start()
        defer { x.stop() }
        let v = try ViewerRun(x: x, args: ["--source", "tum:\(seq)", "--paused", "--log-ui", "--export-dir", out, "--size", "1280x720"])
        defer { if v.process.isRunning { v.process.terminate() } }
        try v.waitForLine("ui: ready", timeout: 120)
        let n = v.lines.count
        try v.key("ctrl+e")
        XCTAssertEqual(try v.waitForLine("ui: export failed ", after: n, timeout: 60), "ui: export failed 0 \(out)")
        let notice = try v.waitForLine("notice: export failed: ", after: n, timeout: 10)
        XCTAssertTrue(notice.hasPrefix("notice: export failed: \(out): cannot create folder"), notice)
        XCTAssertFalse(notice.contains("\n"))
        v.quit()
    }

    /// A disk that fills up (a 1 MiB tmpfs) mid-export: one notice line, and the frames written
    /// before are complete and listed. Mounting needs root, which scripts/test and CI have.
    func testAFullDiskKeepsWhatWasWritten() throws {
        let mount = path("small")
        try FileManager.default.createDirectory(atPath: mount, withIntermediateDirectories: true)
        let m = try runTool("/bin/mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", mount])
        guard m.0 == 0 else { return XCTFail("cannot mount a 1 MiB tmpfs to fill (run the tests as root, as scripts/test does): \(m.2)") }
        defer { _ = try? runTool("/bin/umount", [mount]) }
        let out = mount + "/out"
        let x = try XServer.start()
        defer { x.stop() }
        let v = try ViewerRun(x: x, args: ["--source", "synthetic:320x240", "--paused", "--frame", "3000", "--log-ui",
                                           "--export-dir", out, "--size", "1280x720"])
        defer { if v.process.isRunning { v.process.terminate() } }
        try v.waitForLine("ui: ready", timeout: 120)
        try press(v, "o", then: "ui: export marks -1 3000")
        let n = v.lines.count
        try v.key("ctrl+e")
        let failed = try v.waitForLine("ui: export failed ", after: n, timeout: 120)
        let written = try XCTUnwrap(Int(failed.split(separator: " ")[3]), failed)
        XCTAssertGreaterThan(written, 0, failed)
        let notice = try v.waitForLine("notice: export failed: ", after: n, timeout: 10)
        XCTAssertTrue(notice.contains("space"), notice)
        XCTAssertTrue(notice.hasSuffix("; the \(written) frames written are complete and listed in \(out)"), notice)
        v.quit()
        XCTAssertEqual(try Self.checkFolder(out), written)
    }

    // MARK: Helpers

    /// Scrolls the docked panel to its end (the Export section) and keeps a screenshot as `name`.
    private func shootPanel(_ v: ViewerRun, as name: String) throws {
        try v.x.xdotool(["mousemove", "1100", "400"])
        try v.waitForFrames(2)
        try v.x.xdotool(["click", "--repeat", "20", "--delay", "20", "5"])
        try v.waitForFrames(5)
        _ = try v.x.screenshot(saveAs: path("\(name).png"))
        keep(path("\(name).png"), as: name)
    }

    /// Presses `key` and waits for a line starting with `prefix` (and holding `containing`).
    private func press(_ v: ViewerRun, _ key: String, then prefix: String, containing: String = "") throws {
        let n = v.lines.count
        try v.key(key)
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            if v.lines.dropFirst(n).contains(where: { $0.hasPrefix(prefix) && (containing.isEmpty || $0.contains(containing)) }) { return }
            usleep(30_000)
        }
        throw NSError(domain: "viewer", code: 2, userInfo: [NSLocalizedDescriptionKey:
            "\(key): no '\(prefix)…\(containing)' line; last lines: \(v.lines.filter { !$0.hasPrefix("frame ") && !$0.hasPrefix("layout:") }.suffix(6)); stderr: \(v.stderr.suffix(400))"])
    }

    /// A TUM folder of the synthetic scene at 320×240, frame i at i/30 s.
    private func writeSequence(frames: Int) throws -> String {
        let dir = path("seq")
        let w = try TUMWriter(directory: dir)
        let scene = SyntheticScene()
        for i in 0..<frames {
            let f = scene.render(width: 320, height: 240, time: Double(i) / 30)
            try w.append(RGBDFrame(color: f.color, depth: f.depth, timestamp: Double(i) / 30))
        }
        try w.finish()
        return dir
    }

    /// The (timestamp, path) lines of a TUM index file, comments skipped.
    private static func entries(_ file: String) throws -> [[String]] {
        try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n")
            .filter { !$0.hasPrefix("#") }.map { $0.split(separator: " ").map(String.init) }
    }

    /// Checks an export folder against its own index files — rgb.txt and depth.txt list exactly the
    /// PNGs in rgb/ and depth/, each of which reads back; associations.txt pairs them line by line;
    /// nothing else is there but calibration.json — and returns the number of frames.
    static func checkFolder(_ dir: String, file: StaticString = #filePath, line: UInt = #line) throws -> Int {
        let rgb = try entries(dir + "/rgb.txt"), depth = try entries(dir + "/depth.txt"), assoc = try entries(dir + "/associations.txt")
        XCTAssertTrue(rgb.allSatisfy { $0.count == 2 } && depth.allSatisfy { $0.count == 2 } && assoc.allSatisfy { $0.count == 4 },
                      "index lines have their fields", file: file, line: line)
        XCTAssertEqual(rgb.count, depth.count, file: file, line: line)
        XCTAssertEqual(assoc.map { Array($0[0...1]) }, rgb, "associations.txt pairs rgb.txt…", file: file, line: line)
        XCTAssertEqual(assoc.map { Array($0[2...3]) }, depth, "…with depth.txt", file: file, line: line)
        let fm = FileManager.default
        for (list, folder) in [(rgb, "rgb"), (depth, "depth")] {
            let onDisk = Set(try fm.contentsOfDirectory(atPath: dir + "/" + folder).map { folder + "/" + $0 })
            XCTAssertEqual(Set(list.map { $0[1] }), onDisk, "\(folder).txt lists exactly the files in \(folder)/", file: file, line: line)
            for e in list { XCTAssertNoThrow(try ImageIO.read(dir + "/" + e[1]), "\(e[1]) is complete", file: file, line: line) }
        }
        XCTAssertEqual(Set(try fm.contentsOfDirectory(atPath: dir)),
                       ["rgb", "depth", "rgb.txt", "depth.txt", "associations.txt", "calibration.json"], file: file, line: line)
        return rgb.count
    }
}

/// The timeline's marks and the range an export writes.
final class TimelineSelectionTests: XCTestCase {
    typealias S = TimelineSelection

    func testNoMarksIsTheWholeRecording() {
        let s = S()
        XCTAssertEqual(s.frames(frameCount: 25, whole: false), .success(0...24))
        XCTAssertEqual(s.frames(frameCount: 25, whole: true), .success(0...24))
        XCTAssertEqual(s.frames(frameCount: 1, whole: false), .success(0...0))
        XCTAssertEqual(s.frames(frameCount: 0, whole: false), .failure(.noFrames))
    }

    func testMarksSelectAndClampToTheRecording() {
        var s = S()
        s.markStart(3)
        XCTAssertEqual(s.frames(frameCount: 25, whole: false), .success(3...24), "no end mark: to the last frame")
        s.markEnd(7)
        XCTAssertEqual(s.frames(frameCount: 25, whole: false), .success(3...7))
        XCTAssertEqual(s.frames(frameCount: 25, whole: true), .success(0...24), "whole ignores the marks")
        XCTAssertEqual(s.frames(frameCount: 6, whole: false), .success(3...5), "an end past the recording is its last frame")
        XCTAssertEqual(s.frames(frameCount: 3, whole: false), .failure(.startPastEnd(last: 2)))
        s.markEnd(3)
        XCTAssertEqual(s.frames(frameCount: 25, whole: false), .success(3...3), "one frame")
        s.clear()
        XCTAssertTrue(s.isEmpty)
        s.markEnd(9)
        XCTAssertEqual(s.frames(frameCount: 25, whole: false), .success(0...9), "no start mark: from frame 0")
    }

    func testAMarkPastTheOtherClearsIt() {
        var s = S()
        s.markStart(3); s.markEnd(7)
        s.markStart(10)
        XCTAssertEqual(s.start, 10)
        XCTAssertNil(s.end, "a start after the end clears the end")
        s.markEnd(12); s.markEnd(2)
        XCTAssertEqual(s.end, 2)
        XCTAssertNil(s.start, "an end before the start clears the start")
    }

    func testAnEndlessSourceNeedsAnEndMark() {
        var s = S()
        XCTAssertEqual(s.frames(frameCount: nil, whole: false), .failure(.endless))
        s.markStart(5)
        XCTAssertEqual(s.frames(frameCount: nil, whole: false), .failure(.endless))
        s.markEnd(3000)
        XCTAssertEqual(s.frames(frameCount: nil, whole: false), .success(5...3000))
        XCTAssertEqual(s.frames(frameCount: nil, whole: true), .failure(.endless), "the whole endless scene is refused")
    }
}
