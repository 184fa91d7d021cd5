import Capture
import DepthKit
import Foundation
import XCTest

/// `depthlens record --mkv`: one Matroska file with COLOR (H.264 or FFV1) and DEPTH (16-bit FFV1)
/// tracks, checked with ffprobe (an independent reader), with `mkv:FILE` and by round trips
/// through `convert` against the same frames converted directly.
final class RecordMKVTests: CLITestCase {
    // MARK: Helpers

    /// ffprobe's view of a file: streams (frames counted by decoding) and format.
    func probe(_ file: String, file f: StaticString = #filePath, line: UInt = #line) throws -> (streams: [[String: Any]], format: [String: Any]) {
        let r = try CLI.shell("ffprobe -v error -count_frames -show_streams -show_format -of json '\(file)'")
        XCTAssertEqual(r.status, 0, "ffprobe reads \(file): \(r.stderr)", file: f, line: line)
        let root = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any] ?? [:]
        return (root["streams"] as? [[String: Any]] ?? [], root["format"] as? [String: Any] ?? [:])
    }

    func stream(_ streams: [[String: Any]], title: String) -> [String: Any]? {
        streams.first { ($0["tags"] as? [String: Any])?["title"] as? String == title }
    }

    /// A TUM folder of `frames` synthetic frames (160x120, 1000 units per meter: the scene's, which record keeps) with recording-like
    /// timestamps (microsecond digits) and a calibration.json with distortion and extrinsics.
    func makeTUM(frames: Int) throws -> (dir: String, calibration: RGBDCalibration) {
        let d = path("tum")
        let r = try CLI.run(["record", "--source", "synthetic:160x120", "--frames", "\(frames)", "--out", d])
        XCTAssertEqual(r.status, 0, r.stderr)
        // New timestamps: 1305031102.175304 + i · 0.033337 s (files keep their names; the txt files list them).
        var map: [String: String] = [:]
        for name in ["rgb.txt", "depth.txt", "associations.txt"] {
            let text = try String(contentsOfFile: d + "/" + name, encoding: .utf8)
            var out: [String] = []
            for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
                guard !line.hasPrefix("#"), !line.isEmpty else { out.append(String(line)); continue }
                let parts = line.split(separator: " ").map(String.init)
                out.append(parts.enumerated().map { i, p in
                    guard i % 2 == 0 else { return p }
                    if let m = map[p] { return m }
                    let n = map.count
                    let t = String(format: "%.6f", 1305031102.175304 + Double(n) * 0.033337)
                    map[p] = t
                    return t
                }.joined(separator: " "))
            }
            try out.joined(separator: "\n").write(toFile: d + "/" + name, atomically: true, encoding: .utf8)
        }
        let calibration = RGBDCalibration(
            depth: CameraModel(intrinsics: CameraIntrinsics(fx: 130.5, fy: 131.25, cx: 79.5, cy: 60.25, width: 160, height: 120),
                               model: .brownConrady, coeffs: [0.1, -0.05, 0.001, 0.002, 0.01]),
            color: CameraModel(intrinsics: CameraIntrinsics(fx: 150.75, fy: 151.5, cx: 81, cy: 59, width: 160, height: 120)),
            depthToColor: RigidTransform(rotation: [1, 0, 0, 0, 1, 0, 0, 0, 1], translation: SIMD3(0.015, 0.0005, -0.001)),
            depthScale: 1000, origin: "test")
        try Data(calibration.encodedJSON()).write(to: URL(fileURLWithPath: d + "/calibration.json"))
        return (d, calibration)
    }

    func convert(_ source: String, _ out: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let r = try CLI.run(["convert", "--source", source, "--out", out])
        XCTAssertEqual(r.status, 0, "convert \(source): \(r.stderr)", file: file, line: line)
    }

    func lines(_ file: String) throws -> [String] {
        try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n").map(String.init).filter { !$0.hasPrefix("#") }
    }

    /// PSNR in dB over the RGB channels of two rgba8 images.
    func psnr(_ a: PixelBuffer, _ b: PixelBuffer) -> Double {
        let x = ImageIO.toRGBA8(a).packedBytes(), y = ImageIO.toRGBA8(b).packedBytes()
        var se = 0.0, n = 0
        for i in 0..<min(x.count, y.count) where i % 4 != 3 {
            let d = Double(x[i]) - Double(y[i]); se += d * d; n += 1
        }
        return se == 0 ? .infinity : 10 * log10(255 * 255 / (se / Double(n)))
    }

    /// Compares two converted folders: the same timestamps, the same depth pixels, color exact or
    /// within `minPSNR`. The synthetic scene's sharp colored edges at 160x120 lose much to 4:2:0
    /// chroma alone (ffmpeg's rgb24 → yuv420p → rgb24 of one frame: 32.8 dB), H.264 crf 23 then
    /// gives ~29.9 dB; a wrong matrix or range would give < 20 dB.
    /// - Parameter colorAsPaired: `b` came through `record`, which records playback's pairs: its
    ///   color frames stand at the depth frames' stamps, each the color frame of `a` nearest in time
    ///   (`a`, written by `convert`, has each color frame once under its own stamp).
    func assertSameFolders(_ a: String, _ b: String, colorExact: Bool, minPSNR: Double = 27, colorAsPaired: Bool = false,
                           file: StaticString = #filePath, line: UInt = #line) throws {
        if colorAsPaired {
            XCTAssertEqual(try lines(b + "/rgb.txt").map { $0.split(separator: " ")[0] },
                           try lines(a + "/depth.txt").map { $0.split(separator: " ")[0] },
                           "rgb.txt: one color frame per depth frame, at its stamp", file: file, line: line)
        } else {
            XCTAssertEqual(try lines(a + "/rgb.txt"), try lines(b + "/rgb.txt"), "rgb.txt: the same timestamps", file: file, line: line)
        }
        XCTAssertEqual(try lines(a + "/depth.txt"), try lines(b + "/depth.txt"), "depth.txt: the same timestamps", file: file, line: line)
        let entries = try lines(a + "/depth.txt").map { $0.split(separator: " ")[1] }
        XCTAssertFalse(entries.isEmpty, file: file, line: line)
        for e in entries {
            let da = try ImageIO.read(a + "/" + e), db = try ImageIO.read(b + "/" + e)
            XCTAssertEqual(da.format, db.format, file: file, line: line)
            XCTAssertEqual(da.packedBytes(), db.packedBytes(), "depth \(e) bit-exact", file: file, line: line)
        }
        var worst = Double.infinity
        let colorA = try lines(a + "/rgb.txt").map { ($0.split(separator: " ")[0], String($0.split(separator: " ")[1])) }
        let pairs: [(String, String)] = colorAsPaired
            ? try lines(b + "/rgb.txt").map { l in
                let t = Double(l.split(separator: " ")[0]) ?? 0
                let nearest = colorA.min { abs((Double($0.0) ?? 0) - t) < abs((Double($1.0) ?? 0) - t) }
                return (nearest?.1 ?? "", String(l.split(separator: " ")[1]))
            }
            : colorA.map { ($0.1, $0.1) }
        for (ea, eb) in pairs {
            let e = eb
            let ca = try ImageIO.read(a + "/" + ea), cb = try ImageIO.read(b + "/" + eb)
            if colorExact {
                XCTAssertEqual(ImageIO.toRGBA8(ca).packedBytes(), ImageIO.toRGBA8(cb).packedBytes(), "color \(e) bit-exact", file: file, line: line)
            } else {
                let p = psnr(ca, cb)
                worst = min(worst, p)
                XCTAssertGreaterThan(p, minPSNR, "color \(e) PSNR", file: file, line: line)
                XCTAssertLessThan(p, 99, "H.264 is lossy: color \(e) differs somewhat", file: file, line: line)
            }
        }
    }

    // MARK: Tests

    func testTheFileAsFFprobeSeesIt() throws {
        for lossless in [false, true] {
            let mkv = path(lossless ? "lossless.mkv" : "h264.mkv")
            let r = try CLI.run(["record", "--source", "synthetic:160x120", "--frames", "12", "--mkv", mkv] + (lossless ? ["--lossless"] : []))
            XCTAssertEqual(r.status, 0, r.stderr)
            XCTAssertTrue(r.stdout.contains("wrote mkv: 12 frames"), r.stdout)
            XCTAssertFalse(FileManager.default.fileExists(atPath: mkv + ".partial"))
            let (streams, format) = try probe(mkv)
            let color = try XCTUnwrap(stream(streams, title: "COLOR")), depth = try XCTUnwrap(stream(streams, title: "DEPTH"))
            XCTAssertEqual(color["codec_name"] as? String, lossless ? "ffv1" : "h264")
            XCTAssertEqual(color["pix_fmt"] as? String, lossless ? "bgr0" : "yuv420p")
            XCTAssertEqual(depth["codec_name"] as? String, "ffv1")
            XCTAssertEqual(depth["pix_fmt"] as? String, "gray16le")
            XCTAssertEqual((color["disposition"] as? [String: Any])?["default"] as? Int, 1, "players show COLOR")
            for s in [color, depth] {
                XCTAssertEqual(s["width"] as? Int, 160)
                XCTAssertEqual(s["height"] as? Int, 120)
                XCTAssertEqual(s["nb_read_frames"] as? String, "12", "every frame decodes")
                XCTAssertEqual(s["time_base"] as? String, "1/1000000", "microsecond timestamps")
            }
            let attachment = try XCTUnwrap(streams.first { $0["codec_type"] as? String == "attachment" })
            let tags = attachment["tags"] as? [String: Any] ?? [:]
            XCTAssertEqual(tags["filename"] as? String, "calibration.json")
            XCTAssertEqual(tags["mimetype"] as? String, "application/json")
            let formatTags = format["tags"] as? [String: Any] ?? [:]
            XCTAssertEqual(formatTags["DEPTHLENS_DEPTH_SCALE"] as? String, "1000", "synthetic depth is in millimeters")
            XCTAssertEqual(formatTags["DEPTHLENS_SOURCE"] as? String, "synthetic:160x120")
            // 12 frames at 30 fps: the last starts at 11/30 s.
            let durationTag = (color["tags"] as? [String: Any])?["DURATION"] as? String ?? ""
            XCTAssertTrue(durationTag.hasPrefix("00:00:00.3"), "track DURATION in seconds, not scaled: \(durationTag)")
            let pts = try CLI.shell("ffprobe -v error -select_streams 1 -show_entries packet=pts_time -of csv=p=0 '\(mkv)'")
            let times = pts.stdout.split(separator: "\n").compactMap { Double($0) }
            XCTAssertEqual(times.count, 12)
            XCTAssertEqual(times.last ?? 0, 11.0 / 30, accuracy: 1e-6)
        }
    }

    func testTUMThroughMKVEqualsTUMConvertedDirectly() throws {
        let (tum, calibration) = try makeTUM(frames: 8)
        try convert("tum:" + tum, path("direct"))
        for lossless in [false, true] {
            let mkv = path(lossless ? "l.mkv" : "h.mkv")
            let r = try CLI.run(["record", "--source", "tum:" + tum, "--frames", "1000", "--mkv", mkv] + (lossless ? ["--lossless"] : []))
            XCTAssertEqual(r.status, 0, r.stderr)
            let (streams, format) = try probe(mkv)
            XCTAssertEqual(stream(streams, title: "DEPTH")?["nb_read_frames"] as? String, "8")
            XCTAssertEqual((format["tags"] as? [String: Any])?["DEPTHLENS_DEPTH_SCALE"] as? String, "1000", "the TUM folder's own units")
            let out = path(lossless ? "via-l" : "via-h")
            try convert("mkv:" + mkv, out)
            // `record` writes what playback delivers (the one color frame beside each depth frame).
            try assertSameFolders(path("direct"), out, colorExact: lossless, colorAsPaired: true)
            let back = try RGBDCalibration.read(out + "/calibration.json")
            XCTAssertEqual(back.depth, calibration.depth, "depth camera preserved")
            XCTAssertEqual(back.color, calibration.color, "color camera preserved")
            XCTAssertEqual(back.depthToColor, calibration.depthToColor, "extrinsics preserved")
            XCTAssertEqual(back.depthScale, 1000)

            // mkv:FILE directly: timestamps to the microsecond and depth bit-exact against the TUM source.
            let src = MKVSource(path: mkv), ref = TUMSource(directory: tum)
            let a = try FrameReader(source: src), b = try FrameReader(source: ref)
            var n = 0
            while let fa = try a.next() {
                let fb = try XCTUnwrap(try b.next())
                XCTAssertEqual(Int64((fa.timestamp * 1e6).rounded()), Int64((fb.timestamp * 1e6).rounded()), "frame \(n) time")
                let da = TUMWriter.encodeDepth(try XCTUnwrap(fa.depth), scale: 1000), db = TUMWriter.encodeDepth(try XCTUnwrap(fb.depth), scale: 1000)
                XCTAssertEqual(da.packedBytes(), db.packedBytes(), "frame \(n) depth")
                n += 1
            }
            XCTAssertEqual(n, 8)
        }
    }

    func testBagThroughMKVEqualsBagConvertedDirectly() throws {
        let bag = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/realsense-d435-640x480.bag").path
        try convert("bag:" + bag, path("direct"))
        for lossless in [false, true] {
            let mkv = path(lossless ? "l.mkv" : "h.mkv")
            let r = try CLI.run(["record", "--source", "bag:" + bag, "--frames", "100", "--mkv", mkv] + (lossless ? ["--lossless"] : []))
            XCTAssertEqual(r.status, 0, r.stderr)
            let (_, format) = try probe(mkv)
            let tags = format["tags"] as? [String: Any] ?? [:]
            XCTAssertEqual(tags["DEPTHLENS_DEPTH_SCALE"] as? String, "1000", "the bag's Depth Units 0.001 m")
            XCTAssertEqual(tags["DEVICE_NAME"] as? String, "Intel RealSense D435")
            let out = path(lossless ? "via-l" : "via-h")
            try convert("mkv:" + mkv, out)
            // `record` writes what playback delivers (the one color frame beside each depth frame).
            try assertSameFolders(path("direct"), out, colorExact: lossless, colorAsPaired: true)
            XCTAssertEqual(try RGBDCalibration.read(out + "/calibration.json").depthToColor,
                           try RGBDCalibration.read(path("direct") + "/calibration.json").depthToColor, "extrinsics preserved")
            XCTAssertEqual(try RGBDCalibration.read(out + "/calibration.json").depth,
                           try RGBDCalibration.read(path("direct") + "/calibration.json").depth, "depth intrinsics preserved")
        }
    }

    func testStopSignalsFinishTheMKV() throws {
        for (sig, name) in [(SIGTERM, "SIGTERM"), (SIGHUP, "SIGHUP"), (SIGINT, "SIGINT")] {
            let mkv = path("sig-\(name).mkv")
            let p = try CLI.start(["record", "--source", "synthetic", "--frames", "100000", "--mkv", mkv])
            // Wait until frames are in the file, then signal.
            let deadline = Date().addingTimeInterval(60)
            func size() -> Int { ((try? FileManager.default.attributesOfItem(atPath: mkv + ".partial"))?[.size] as? NSNumber)?.intValue ?? 0 }
            while Date() < deadline && size() < 200_000 { usleep(20_000) }
            p.send(sig)
            let r = p.wait(timeout: 60)
            let errText = r.stderr
            XCTAssertTrue(r.exited, name)
            XCTAssertEqual(r.status, 128 + sig, "\(name): \(errText)")
            XCTAssertTrue(errText.contains("stopped by \(name)"), errText)
            XCTAssertFalse(FileManager.default.fileExists(atPath: mkv + ".partial"), name)
            let (streams, format) = try probe(mkv)
            let frames = Int(stream(streams, title: "DEPTH")?["nb_read_frames"] as? String ?? "") ?? 0
            XCTAssertGreaterThan(frames, 0, name)
            XCTAssertEqual(stream(streams, title: "COLOR")?["nb_read_frames"] as? String, "\(frames)", "\(name): every frame has color and depth")
            XCTAssertNotNil(Double(format["duration"] as? String ?? ""), "\(name): the container is finished (duration written)")
        }
    }

    /// A file that cannot grow (ulimit -f 400: 400 KiB): one line naming the file and the problem,
    /// exit 1, and what was written stays readable by ffprobe (as FILE.partial: the trailer could not
    /// be written).
    func testAFullDiskKeepsAReadablePartialFile() throws {
        let mkv = path("full.mkv")
        let r = try CLI.run(["record", "--source", "synthetic", "--frames", "5000", "--mkv", mkv], wrappedIn: "ulimit -f 400;")
        XCTAssertEqual(r.status, 1, r.stderr)
        XCTAssertEqual(r.stderrLines.filter { $0.hasPrefix("depthlens: ") }.count, 1, r.stderr)
        XCTAssertTrue(r.stderr.contains("File too large") && r.stderr.contains("full.mkv.partial"), r.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: mkv))
        let (streams, _) = try probe(mkv + ".partial")
        XCTAssertGreaterThan(Int(stream(streams, title: "DEPTH")?["nb_read_frames"] as? String ?? "") ?? 0, 0)
        XCTAssertGreaterThan(Int(stream(streams, title: "COLOR")?["nb_read_frames"] as? String ?? "") ?? 0, 0)
    }

    func testBadMKVRequests() throws {
        let existing = path("x.mkv")
        XCTAssertTrue(FileManager.default.createFile(atPath: existing, contents: Data([1, 2, 3])))
        try assertBadInput(["record", "--frames", "3", "--mkv", existing], mentioning: "exists")
        try assertBadInput(["record", "--frames", "3", "--mkv", path("x.mp4")], mentioning: ".mkv", noFile: path("x.mp4"))
        try assertBadInput(["record", "--frames", "3", "--mkv", path("no/such/x.mkv")], mentioning: "does not exist")
        try assertBadInput(["record", "--frames", "3", "--out", path("o"), "--lossless"], mentioning: "--mkv")
        try assertBadInput(["record", "--frames", "3", "--mkv", path("c.mkv"), "--crf", "60"], mentioning: "--crf", noFile: path("c.mkv"))
        try assertBadInput(["record", "--frames", "3"], mentioning: "--mkv")
    }
}
