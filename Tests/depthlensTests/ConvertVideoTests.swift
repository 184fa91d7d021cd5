import Capture
import DepthKit
import Foundation
import TestSupport
import XCTest

/// `convert --video`: the video as ffmpeg and ffprobe (Debian's ffmpeg, an independent decoder)
/// read it, against pictures made here with the CPU reference kernels (`DepthColormapFilter`,
/// `ImageMixer`) from the recording's own frames: FFV1 exact, H.264 within a stated error; each
/// packet's pts the frame's stamp (microseconds from the first); bad arguments one line, no file.
final class ConvertVideoTests: CLITestCase {
    /// Irregular intervals (variable frame rate) from a recording-like start stamp.
    static let stamps: [Double] = [0, 0.033337, 0.083437, 0.104137, 0.137137, 0.237137].map { 1305031102.175304 + $0 }

    /// A TUM folder of the synthetic scene (160x120) with `stamps` as its frames' timestamps.
    func makeTUM() throws -> String {
        let d = path("tum")
        let r = try CLI.run(["record", "--source", "synthetic:160x120", "--frames", "\(Self.stamps.count)", "--out", d])
        XCTAssertEqual(r.status, 0, r.stderr)
        var map: [String: String] = [:]
        for name in ["rgb.txt", "depth.txt", "associations.txt"] {
            let text = try String(contentsOfFile: d + "/" + name, encoding: .utf8)
            let out = text.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
                guard !line.hasPrefix("#"), !line.isEmpty else { return String(line) }
                return line.split(separator: " ").enumerated().map { i, p -> String in
                    guard i % 2 == 0 else { return String(p) }
                    if let m = map[String(p)] { return m }
                    let t = String(format: "%.6f", Self.stamps[map.count])
                    map[String(p)] = t
                    return t
                }.joined(separator: " ")
            }
            try out.joined(separator: "\n").write(toFile: d + "/" + name, atomically: true, encoding: .utf8)
        }
        XCTAssertEqual(map.count, Self.stamps.count)
        return d
    }

    /// The recording's color (rgba8) and depth frames, through its own streams.
    func frames(_ dir: String) throws -> [(color: PixelBuffer, depth: DepthData)] {
        let source = try SourceSpec(parsing: "tum:\(dir)").makeSource()
        try source.start()
        defer { source.stop() }
        let rec = try XCTUnwrap(source.recordedStreams)
        let streams = try rec.streams()
        let c = try XCTUnwrap(streams.firstIndex { $0.kind == .color }), d = try XCTUnwrap(streams.firstIndex { $0.kind == .depth })
        XCTAssertEqual(streams[c].timestamps.map { String(format: "%.6f", $0) }, Self.stamps.map { String(format: "%.6f", $0) })
        XCTAssertFalse(source.calibration?.needsAlignment ?? false, "the synthetic scene's cameras agree: no alignment in pairs")
        return try (0..<Self.stamps.count).map { i in
            guard case let .image(color) = try rec.decodeFrame(i, ofStream: c), case let .depth(depth) = try rec.decodeFrame(i, ofStream: d) else {
                throw CaptureError.invalidState("frame \(i): expected a color image and a depth map")
            }
            return (color.format == .rgba8 ? color : ImageIO.toRGBA8(color), depth)
        }
    }

    /// The colorized depth as the view's CPU kernel makes it.
    func colorized(_ d: DepthData, _ map: Colormap = .jet, _ range: DepthRange = .defaultEqualized) throws -> PixelBuffer {
        let f = DepthColormapFilter(colormap: map, range: range)
        let m = d.depthFloat32()
        try f.prepare(input: m.frameFormat, outputRetainedBufferCountHint: 1)
        return try f.render(m)
    }

    func blended(_ color: PixelBuffer, _ depth: PixelBuffer, mix: Float) throws -> PixelBuffer {
        let m = ImageMixer(mixFactor: mix)
        try m.prepare(input: color.frameFormat, secondInput: depth.frameFormat, outputRetainedBufferCountHint: 1)
        return try m.render(color, depth)
    }

    /// rgb24 bytes of an rgba8 picture (`left` and `right` side by side when both given).
    func rgb(_ left: PixelBuffer, _ right: PixelBuffer? = nil) -> [UInt8] {
        var out: [UInt8] = []
        for y in 0..<left.height {
            for b in [left, right].compactMap({ $0 }) {
                let r = b.row(y, as: UInt8.self)
                for x in 0..<b.width { out += [r[4 * x], r[4 * x + 1], r[4 * x + 2]] }
            }
        }
        return out
    }

    /// Every frame ffmpeg decodes, as rgb24.
    func decoded(_ video: String, width: Int, height: Int) throws -> [[UInt8]] {
        let raw = path("decoded.rgb")
        let r = try TestProcess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-i", video, "-map", "0:v:0",
                                     "-fps_mode", "passthrough", "-f", "rawvideo", "-pix_fmt", "rgb24", raw])
        XCTAssertEqual(r.status, 0, r.output)
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: raw)))
        let n = width * height * 3
        XCTAssertEqual(bytes.count % n, 0, "whole \(width)x\(height) frames")
        return stride(from: 0, to: bytes.count - n + 1, by: n).map { Array(bytes[$0..<($0 + n)]) }
    }

    /// ffprobe's stream facts and each packet's pts (in the stream's time base).
    func probe(_ video: String) throws -> (stream: [String: String], pts: [Int64], tags: [String: String]) {
        let s = try TestProcess.run(["ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
                                     "stream=codec_name,pix_fmt,width,height,time_base,nb_read_frames,r_frame_rate", "-of", "default=nw=1", video])
        XCTAssertEqual(s.status, 0, s.output)
        var stream: [String: String] = [:]
        for l in s.output.split(separator: "\n") {
            let kv = l.split(separator: "=", maxSplits: 1).map(String.init)
            if kv.count == 2 { stream[kv[0]] = kv[1] }
        }
        let p = try TestProcess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "packet=pts", "-of", "csv=p=0", video])
        XCTAssertEqual(p.status, 0, p.output)
        let pts = p.output.split(separator: "\n").compactMap { Int64($0.trimmingCharacters(in: .whitespaces)) }.sorted()
        let t = try TestProcess.run(["ffprobe", "-v", "error", "-show_entries", "format_tags", "-of", "default=nw=1", video])
        var tags: [String: String] = [:]
        for l in t.output.split(separator: "\n") {
            let kv = l.split(separator: "=", maxSplits: 1).map(String.init)
            if kv.count == 2 { tags[kv[0].replacingOccurrences(of: "TAG:", with: "")] = kv[1] }
        }
        return (stream, pts, tags)
    }

    /// The stamps as pts in microseconds from the first.
    var expectedPTS: [Int64] {
        let micros = Self.stamps.map { Int64(($0 * 1e6).rounded()) }
        return micros.map { $0 - micros[0] }
    }

    func leftovers() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []).filter { $0.contains(".tmp-") }
    }

    // MARK: Lossless: exact

    /// FFV1 in Matroska: every frame ffmpeg decodes equals the picture made here, byte for byte,
    /// for depth (jet, equalized; turbo over a fixed range), color, side-by-side and blend; pts are
    /// the stamps; the first stamp is the tag.
    func testLosslessVideosAreTheColormappedFramesExactly() throws {
        let tum = try makeTUM()
        let frames = try frames(tum)
        let mapped = try frames.map { try colorized($0.depth) }
        let cases: [(args: [String], width: Int, expected: [[UInt8]])] = [
            (["--what", "depth"], 160, mapped.map { rgb($0) }),
            (["--what", "depth", "--colormap", "turbo", "--range", "0.5:3"], 160,
             try frames.map { rgb(try colorized($0.depth, .turbo, .fixed(min: 0.5, max: 3))) }),
            (["--what", "color"], 160, frames.map { rgb($0.color) }),
            (["--what", "side-by-side"], 320, zip(frames, mapped).map { rgb($0.color, $1) }),
            (["--what", "blend", "--mix", "0.3"], 160, try zip(frames, mapped).map { rgb(try blended($0.color, $1, mix: 0.3)) }),
        ]
        for (k, c) in cases.enumerated() {
            let video = path("v\(k).mkv")
            let r = try CLI.run(["convert", "--source", "tum:\(tum)", "--video", video, "--lossless"] + c.args)
            XCTAssertEqual(r.status, 0, "\(c.args): \(r.stderr)")
            XCTAssertTrue(r.stdout.contains("wrote \(Self.stamps.count) frames"), r.stdout)
            let (stream, pts, tags) = try probe(video)
            XCTAssertEqual(stream["codec_name"], "ffv1", "\(c.args)")
            XCTAssertEqual(stream["width"], "\(c.width)", "\(c.args)")
            XCTAssertEqual(stream["height"], "120", "\(c.args)")
            XCTAssertEqual(stream["nb_read_frames"], "\(Self.stamps.count)", "\(c.args)")
            XCTAssertEqual(stream["time_base"], "1/1000000", "\(c.args)")
            XCTAssertEqual(pts, expectedPTS, "\(c.args): pts are the stamps")
            XCTAssertEqual(tags["DEPTHLENS_START_OFFSET_US"], String(Int64((Self.stamps[0] * 1e6).rounded())), "\(c.args): \(tags)")
            let got = try decoded(video, width: c.width, height: 120)
            XCTAssertEqual(got.count, c.expected.count, "\(c.args)")
            for (i, (g, e)) in zip(got, c.expected).enumerated() {
                XCTAssertTrue(g == e, "\(c.args): frame \(i) differs in \(zip(g, e).filter { $0 != $1 }.count) bytes")
            }
        }
        XCTAssertEqual(leftovers(), [])
    }

    // MARK: H.264: within tolerance

    /// H.264 in MP4 (and Matroska): the frame count, the pts, and every decoded frame within a mean
    /// absolute error of the colormapped frame. JET's saturated edges lose most to 4:2:0 chroma:
    /// measured 2.4–2.8 a frame (crf 23, both containers), bounded at 4.
    func testH264VideosAreCloseAndKeepTheStamps() throws {
        let tum = try makeTUM()
        let frames = try frames(tum)
        let expected = try frames.map { rgb(try colorized($0.depth)) }
        for name in ["v.mp4", "v.mkv"] {
            let video = path(name)
            let r = try CLI.run(["convert", "--source", "tum:\(tum)", "--video", video])
            XCTAssertEqual(r.status, 0, r.stderr)
            let (stream, pts, _) = try probe(video)
            XCTAssertEqual(stream["codec_name"], "h264", name)
            XCTAssertEqual(stream["pix_fmt"], "yuv420p", name)
            XCTAssertEqual(stream["nb_read_frames"], "\(Self.stamps.count)", name)
            XCTAssertEqual(stream["time_base"], "1/1000000", name)
            XCTAssertEqual(pts, expectedPTS, "\(name): pts are the stamps")
            if name.hasSuffix(".mkv") {
                // Matroska: the nominal rate (the median interval, 33.337 ms) as the track's
                // DefaultDuration, which ffmpeg reads as the rate, not the microsecond time base's
                // 1000000 fps (MP4's rate is ffmpeg's guess from the irregular stamps themselves).
                let rate = (stream["r_frame_rate"] ?? "").split(separator: "/").compactMap { Double($0) }
                XCTAssertEqual(rate.count, 2, "\(name): \(stream)")
                if rate.count == 2 { XCTAssertEqual(rate[0] / rate[1], 29.997, accuracy: 0.1, "\(name): r_frame_rate \(stream["r_frame_rate"] ?? "")") }
            }
            let got = try decoded(video, width: 160, height: 120)
            XCTAssertEqual(got.count, expected.count, name)
            for (i, (g, e)) in zip(got, expected).enumerated() {
                let mae = Double(zip(g, e).reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) }) / Double(e.count)
                XCTAssertLessThan(mae, 4, "\(name) frame \(i): mean absolute error \(mae)")
            }
        }
        // --frames 1:3 keeps the stream's frames nearest playback frames 1…3 (here the same frames).
        let some = path("some.mp4")
        XCTAssertEqual(try CLI.run(["convert", "--source", "tum:\(tum)", "--video", some, "--frames", "1:3"]).status, 0)
        let (_, pts, _) = try probe(some)
        let micros = Self.stamps.map { Int64(($0 * 1e6).rounded()) }
        XCTAssertEqual(pts, micros[1...3].map { $0 - micros[1] })
        XCTAssertEqual(leftovers(), [])
    }

    // MARK: Stop signals

    /// SIGTERM and SIGINT stop the endless synthetic scene: the video is finished with the frames
    /// written (stderr says how many; ffmpeg decodes exactly that many), exit status 128 + the signal.
    func testStopSignalsFinishTheVideo() throws {
        for (sig, name) in [(SIGTERM, "SIGTERM"), (SIGINT, "SIGINT")] {
            let video = path("sig-\(name).mp4")
            let p = try CLI.start(["convert", "--source", "synthetic:160x120", "--video", video, "--what", "blend"])
            // Wait until the temporary file holds some frames, then signal.
            let deadline = Date().addingTimeInterval(30)
            func tempSize() -> Int {
                let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
                return names.filter { $0.hasPrefix(".sig-\(name).mp4.tmp-") }.compactMap {
                    (try? FileManager.default.attributesOfItem(atPath: path($0))[.size] as? NSNumber)?.intValue
                }.max() ?? 0
            }
            while Date() < deadline && tempSize() < 20_000 { usleep(20_000) }
            p.send(sig)
            let r = p.wait(timeout: 60)
            let errText = r.stderr
            XCTAssertTrue(r.exited, name)
            XCTAssertEqual(r.status, 128 + sig, "\(name): \(errText)")
            let line = errText.split(separator: "\n").map(String.init).first { $0.contains("stopped by \(name) after ") } ?? ""
            let words = line.split(separator: " ")
            let n = words.firstIndex(of: "after").flatMap { Int(words[$0 + 1]) }
            XCTAssertNotNil(n, "\(name): \(errText)")
            XCTAssertTrue(line.hasSuffix("\(video) holds them"), line)
            let (stream, pts, _) = try probe(video)
            XCTAssertEqual(stream["nb_read_frames"], n.map(String.init), "\(name): the video holds the frames said")
            XCTAssertEqual(pts.count, n, name)
        }
        XCTAssertEqual(leftovers(), [])
    }

    // MARK: Bad input

    func testBadArgumentsAreOneLineAndNoFile() throws {
        let tum = try makeTUM()
        let mp4 = path("x.mp4"), mkv = path("x.mkv")
        try assertBadInput(["convert", "--source", "tum:\(tum)", "--video", path("x.avi")], mentioning: ".mp4 or .mkv", noFile: path("x.avi"))
        try assertBadInput(["convert", "--source", "tum:\(tum)", "--video", mp4, "--out", path("folder")], mentioning: "give one", noFile: mp4)
        try assertBadInput(["convert", "--source", "tum:\(tum)", "--video", mp4, "--lossless"], mentioning: "name it .mkv", noFile: mp4)
        try assertBadInput(["convert", "--source", "tum:\(tum)", "--video", mkv, "--what", "ir"], mentioning: "--what", noFile: mkv)
        try assertBadInput(["convert", "--source", "tum:\(tum)", "--video", mkv, "--range", "4:1"], mentioning: "--range", noFile: mkv)
        try assertBadInput(["convert", "--source", "tum:\(tum)", "--video", mkv, "--colormap", "pink"], mentioning: "--colormap", noFile: mkv)
        try assertBadInput(["convert", "--source", "tum:\(tum)", "--out", path("f"), "--lossless"], mentioning: "--video only", noFile: path("f"))
        try assertBadInput(["convert", "--source", "tum:\(path("missing"))", "--video", mkv], mentioning: "missing", noFile: mkv)
        try assertBadInput(["convert", "--source", "tum:\(tum)", "--video", path("no/such/x.mkv")], mentioning: "no such folder")
        // A recording without depth: nothing to write.
        let colorOnly = path("color-only")
        try FileManager.default.createDirectory(atPath: colorOnly, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: tum + "/rgb", toPath: colorOnly + "/rgb")
        try FileManager.default.copyItem(atPath: tum + "/rgb.txt", toPath: colorOnly + "/rgb.txt")
        try assertBadInput(["convert", "--source", "tum:\(colorOnly)", "--video", mkv], mentioning: "depth", noFile: mkv)
        // An existing file is kept unless --overwrite.
        XCTAssertEqual(try CLI.run(["convert", "--source", "tum:\(tum)", "--video", mp4]).status, 0)
        try assertBadInput(["convert", "--source", "tum:\(tum)", "--video", mp4], mentioning: "--overwrite")
        XCTAssertEqual(try CLI.run(["convert", "--source", "tum:\(tum)", "--video", mp4, "--overwrite", "--what", "color"]).status, 0)
        XCTAssertEqual(leftovers(), [])
    }
}
