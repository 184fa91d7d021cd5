import XCTest
import Foundation
import Capture
import DepthKit
import TestSupport

/// `depthlens convert` of recordings: each stream on its own clock (every frame once, under its own
/// stamp; associations.txt pairs each depth frame with the color frame nearest in time), checked
/// against python3-rosbag's reading of the shared D435 bag and ffmpeg's of an mkv whose color and
/// depth run at different rates.
final class ConvertStreamsTests: CLITestCase {
    /// Non-comment lines of an index file, split at spaces.
    private func lines(_ path: String) throws -> [[String]] {
        try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").filter { !$0.hasPrefix("#") }
            .map { $0.split(separator: " ").map(String.init) }
    }

    /// A 16-bit image's samples as little-endian bytes, row after row.
    private func littleEndian(_ png: PixelBuffer) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(png.width * png.height * 2)
        for y in 0..<png.height {
            let row: UnsafeMutablePointer<UInt16> = png.row(y, as: UInt16.self)
            for x in 0..<png.width {
                let v: UInt16 = row[x]
                out.append(UInt8(truncatingIfNeeded: v))
                out.append(UInt8(truncatingIfNeeded: v >> 8))
            }
        }
        return out
    }

    private func stamp(_ t: Double) -> String { String(format: "%.6f", t) }

    /// Each depth frame's stamp with the nearest color stamp (the earlier on a tie), as associations.txt must pair them.
    private func nearestPairs(color: [Double], depth: [Double]) -> [[String]] {
        depth.map { d in
            let c = color.enumerated().min { a, b in
                let da = abs(a.element - d), db = abs(b.element - d)
                return da != db ? da < db : a.offset < b.offset
            }!.element
            return [stamp(c), "rgb/\(stamp(c)).png", stamp(d), "depth/\(stamp(d)).png"]
        }
    }

    /// The shared RealSense D435 bag holds 2 depth frames and 1 color frame: the folder must list
    /// the one color frame under its own stamp (not two copies under the depth stamps), each depth
    /// frame under its own, with the data python3-rosbag reads from the bag.
    func testD435BagWritesEachStreamUnderItsOwnStamps() throws {
        let bag = Repo.fixture("realsense-d435-640x480.bag")
        let refDir = path("ref")
        try FileManager.default.createDirectory(atPath: refDir, withIntermediateDirectories: true)
        let dump = try TestProcess.run(["/usr/bin/python3", Repo.fixture("rosbag_reference.py"), "dump", bag, refDir])
        XCTAssertEqual(dump.status, 0, "python3-rosbag (apt-get install python3-rosbag python3-roslz4): \(dump.output)")
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: refDir + "/reference.json"))) as! [String: Any]
        let images = json["images"] as! [[String: Any]]
        func refs(_ suffix: String) -> [(stamp: Double, index: Int, encoding: String)] {
            images.filter { ($0["topic"] as! String).hasSuffix(suffix) }.map {
                (Double(($0["stamp_sec"] as! NSNumber).intValue) + Double(($0["stamp_nsec"] as! NSNumber).intValue) / 1e9,
                 ($0["index"] as! NSNumber).intValue, $0["encoding"] as! String)
            }
        }
        let color = refs("Color_0/image/data"), depth = refs("Depth_0/image/data")
        XCTAssertEqual(color.count, 1)
        XCTAssertEqual(depth.count, 2)

        let out = path("bag")
        let r = try CLI.run(["convert", "--source", "bag:\(bag)", "--out", out])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("wrote 1 color, 2 depth frames"), r.stdout)
        XCTAssertEqual(try lines(out + "/rgb.txt"), color.map { [stamp($0.stamp), "rgb/\(stamp($0.stamp)).png"] })
        XCTAssertEqual(try lines(out + "/rgb.txt").first?.first, "360.713523", "the color frame's own stamp")
        XCTAssertEqual(try lines(out + "/depth.txt"), depth.map { [stamp($0.stamp), "depth/\(stamp($0.stamp)).png"] })
        XCTAssertEqual(try lines(out + "/associations.txt"), nearestPairs(color: color.map(\.stamp), depth: depth.map(\.stamp)))
        // The pixels: depth 16-bit in the recording's units (Depth Units 0.001: millimeters, as recorded), color rgb8.
        for d in depth {
            let raw = [UInt8](try Data(contentsOf: URL(fileURLWithPath: "\(refDir)/image-\(d.index).raw")))
            let png = try ImageIO.read(out + "/depth/\(stamp(d.stamp)).png")
            XCTAssertEqual(png.width * png.height * 2, raw.count)
            XCTAssertTrue(littleEndian(png) == raw, "depth \(d.stamp) as python3-rosbag reads it (16UC1 little-endian)")
        }
        for c in color {
            XCTAssertEqual(c.encoding, "rgb8")
            let raw = [UInt8](try Data(contentsOf: URL(fileURLWithPath: "\(refDir)/image-\(c.index).raw")))
            let png = try ImageIO.readColor(out + "/rgb/\(stamp(c.stamp)).png")
            let rgba = png.packedBytes()
            XCTAssertEqual(rgba.count / 4 * 3, raw.count)
            var rgb: [UInt8] = []
            rgb.reserveCapacity(raw.count)
            for i in 0..<rgba.count / 4 {
                let p: Int = 4 * i
                rgb.append(rgba[p]); rgb.append(rgba[p + 1]); rgb.append(rgba[p + 2])
            }
            XCTAssertTrue(rgb == raw, "color \(c.stamp) as python3-rosbag reads it")
        }

        // tum: reopens the folder with the same streams and frames.
        let bagSource = try SourceSpec(parsing: "bag:\(bag)").makeSource()
        let tumSource = try SourceSpec(parsing: "tum:\(out)").makeSource()
        try bagSource.start()
        try tumSource.start()
        let a = try XCTUnwrap(bagSource.recordedStreams), b = try XCTUnwrap(tumSource.recordedStreams)
        let sa = try a.streams().filter { $0.kind != .ir }, sb = try b.streams()
        XCTAssertEqual(sa.map(\.kind), sb.map(\.kind))
        for (i, (x, y)) in zip(sa, sb).enumerated() {
            XCTAssertEqual(x.timestamps.map(stamp), y.timestamps.map(stamp), "\(x.kind) stamps")
            XCTAssertEqual(x.width, y.width)
            for k in 0..<x.frameCount {
                switch (try a.decodeFrame(k, ofStream: i), try b.decodeFrame(k, ofStream: i)) {
                case let (.image(p), .image(q)): XCTAssertTrue(p.packedBytes() == q.packedBytes(), "\(x.kind) frame \(k)")
                case let (.depth(p), .depth(q)):
                    // In the recording's units (the bag's meters are raw × 0.001 as float32, the folder's raw / 1000).
                    XCTAssertTrue(TUMWriter.encodeDepth(p, scale: 1000).packedBytes() == TUMWriter.encodeDepth(q, scale: 1000).packedBytes(),
                                  "depth frame \(k)")
                default: XCTFail("\(x.kind) frame \(k): different kinds")
                }
            }
        }
        // Converting the folder again writes the same folder.
        let again = path("again")
        XCTAssertEqual(try CLI.run(["convert", "--source", "tum:\(out)", "--out", again]).status, 0)
        for f in ["rgb.txt", "depth.txt", "associations.txt"] {
            XCTAssertEqual(try lines(again + "/" + f), try lines(out + "/" + f), f)
        }
        for d in depth {
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: again + "/depth/\(stamp(d.stamp)).png")),
                           try Data(contentsOf: URL(fileURLWithPath: out + "/depth/\(stamp(d.stamp)).png")))
        }

        // --frames picks, of every stream, the frames nearest playback frames A…B (depth leads
        // this bag: frame 0 is the first depth frame, and the color frame is nearest to it).
        let first = path("first"), second = path("second")
        XCTAssertEqual(try CLI.run(["convert", "--source", "bag:\(bag)", "--frames", "0:0", "--out", first]).status, 0)
        XCTAssertEqual(try CLI.run(["convert", "--source", "bag:\(bag)", "--frames", "1:1", "--out", second]).status, 0)
        XCTAssertEqual(try lines(first + "/rgb.txt").count, 1)
        XCTAssertEqual(try lines(first + "/depth.txt").map { $0[0] }, [stamp(depth[0].stamp)])
        XCTAssertEqual(try lines(second + "/rgb.txt").count, 0)
        XCTAssertEqual(try lines(second + "/depth.txt").map { $0[0] }, [stamp(depth[1].stamp)])
        XCTAssertEqual(try lines(second + "/associations.txt").count, 0, "no color frame written: nothing to pair")
        // --time keeps each stream's frames stamped within it.
        let timed = path("timed")
        XCTAssertEqual(try CLI.run(["convert", "--source", "bag:\(bag)", "--time", "360.7:360.9", "--out", timed]).status, 0)
        XCTAssertEqual(try lines(timed + "/rgb.txt").map { $0[0] }, ["360.713523"])
        XCTAssertEqual(try lines(timed + "/depth.txt").map { $0[0] }, ["360.815089"])
    }

    /// An mkv whose COLOR runs at 30 fps and DEPTH and IR at 15 (made by ffmpeg): every frame of
    /// each track once, under the times ffprobe reads, depth and IR with the values ffmpeg decodes.
    func testMKVWithColorAndDepthAtDifferentRates() throws {
        let mkv = path("rates.mkv")
        let make = try TestProcess.run([
            "ffmpeg", "-nostdin", "-loglevel", "error", "-y",
            "-f", "lavfi", "-i", "testsrc=size=64x48:rate=30:duration=0.4",
            "-f", "lavfi", "-i", "testsrc2=size=32x24:rate=15:duration=0.4",
            "-f", "lavfi", "-i", "testsrc=size=32x24:rate=15:duration=0.4",
            "-map", "0", "-map", "1", "-map", "2", "-c:v:0", "mjpeg", "-pix_fmt:v:0", "yuvj422p",
            "-c:v:1", "rawvideo", "-pix_fmt:v:1", "gray16be", "-tag:v:1", "b16g",
            "-c:v:2", "rawvideo", "-pix_fmt:v:2", "gray16be", "-tag:v:2", "b16g", "-strict", "unofficial",
            "-metadata:s:v:0", "title=COLOR", "-metadata:s:v:1", "title=DEPTH", "-metadata:s:v:2", "title=IR", mkv])
        XCTAssertEqual(make.status, 0, "ffmpeg: \(make.output)")
        let probe = try TestProcess.run(["ffprobe", "-v", "error", "-show_entries", "packet=stream_index,pts_time", "-of", "csv=p=0", mkv])
        XCTAssertEqual(probe.status, 0, probe.output)
        var times: [Int: [Double]] = [:]
        for line in probe.output.split(separator: "\n") {
            let f = line.split(separator: ",")
            guard f.count == 2, let s = Int(f[0]), let t = Double(f[1]) else { continue }
            times[s, default: []].append(t)
        }
        let colorTimes = (times[0] ?? []).sorted(), depthTimes = (times[1] ?? []).sorted(), irTimes = (times[2] ?? []).sorted()
        XCTAssertEqual(colorTimes.count, 12)
        XCTAssertEqual(depthTimes.count, 6)

        let out = path("mkv")
        let r = try CLI.run(["convert", "--source", "mkv:\(mkv)", "--what", "color,depth,ir", "--out", out])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("wrote 12 color, 6 depth, 6 ir frames"), r.stdout)
        XCTAssertEqual(try lines(out + "/rgb.txt").map { $0[0] }, colorTimes.map(stamp))
        XCTAssertEqual(try lines(out + "/depth.txt").map { $0[0] }, depthTimes.map(stamp))
        XCTAssertEqual(try lines(out + "/ir.txt").map { $0[0] }, irTimes.map(stamp))
        XCTAssertEqual(try lines(out + "/associations.txt"), nearestPairs(color: colorTimes, depth: depthTimes))

        // Depth and IR values as ffmpeg decodes them (16-bit, millimeters as recorded).
        for (track, folder, list) in [(1, "depth", depthTimes), (2, "ir", irTimes)] {
            let raw = path("\(folder).raw")
            let dec = try TestProcess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-i", mkv, "-map", "0:\(track)",
                                           "-f", "rawvideo", "-pix_fmt", "gray16le", raw])
            XCTAssertEqual(dec.status, 0, dec.output)
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: raw)))
            XCTAssertEqual(bytes.count, list.count * 32 * 24 * 2)
            for (k, t) in list.enumerated() {
                let png = try ImageIO.read(out + "/\(folder)/\(stamp(t)).png")
                XCTAssertTrue(littleEndian(png) == Array(bytes[(k * 32 * 24 * 2)..<((k + 1) * 32 * 24 * 2)]), "\(folder) frame \(k)")
            }
        }

        // --every 2 keeps every second frame of each stream; --time each stream's frames within it.
        let every = path("every")
        XCTAssertEqual(try CLI.run(["convert", "--source", "mkv:\(mkv)", "--every", "2", "--out", every]).status, 0)
        XCTAssertEqual(try lines(every + "/rgb.txt").map { $0[0] }, stride(from: 0, to: 12, by: 2).map { stamp(colorTimes[$0]) })
        XCTAssertEqual(try lines(every + "/depth.txt").map { $0[0] }, stride(from: 0, to: 6, by: 2).map { stamp(depthTimes[$0]) })
        // --frames 2:5: playback follows COLOR here; depth frames nearest color frames 2…5.
        let some = path("some")
        XCTAssertEqual(try CLI.run(["convert", "--source", "mkv:\(mkv)", "--frames", "2:5", "--out", some]).status, 0)
        XCTAssertEqual(try lines(some + "/rgb.txt").map { $0[0] }, colorTimes[2...5].map(stamp))
        let lo = (colorTimes[1] + colorTimes[2]) / 2, hi = (colorTimes[5] + colorTimes[6]) / 2
        XCTAssertEqual(try lines(some + "/depth.txt").map { $0[0] }, depthTimes.filter { $0 > lo && $0 <= hi }.map(stamp))
        // tum: reopens it: 12 color and 6 depth frames under the same stamps.
        let tum = try SourceSpec(parsing: "tum:\(out)").makeSource()
        try tum.start()
        let streams = try XCTUnwrap(tum.recordedStreams).streams()
        XCTAssertEqual(streams.map(\.kind), [.color, .depth])
        XCTAssertEqual(streams[0].timestamps.map(stamp), colorTimes.map(stamp))
        XCTAssertEqual(streams[1].timestamps.map(stamp), depthTimes.map(stamp))
    }

    /// A ROS 2 recording in realsense2_camera's layout (PyPI rosbags and mcap write it:
    /// ros2_reference.py), color at 30 fps from t0 and depth 5 ms after each color frame: every
    /// message of each topic once under its own header stamp, with the pixels rosbags deserializes.
    func testROS2RecordingWritesEachTopicUnderItsOwnStamps() throws {
        let python = try PythonReference.python(importing: ["rosbags", "mcap", "numpy"])
        let bags = path("bags")
        let make = try TestProcess.run([python, Repo.fixture("ros2_reference.py"), "make-bags", bags, "--synthetic-only"], timeout: 600)
        XCTAssertEqual(make.status, 0, make.output)
        // rosbags' reading of the rosbag2 folder: each Image's header stamp and data.
        let refDir = path("ros2-ref")
        try FileManager.default.createDirectory(atPath: refDir, withIntermediateDirectories: true)
        let script = """
            import json, sys
            from rosbags.rosbag2 import Reader
            from rosbags.typesys import Stores, get_typestore
            ts = get_typestore(Stores.ROS2_HUMBLE)
            out = {}
            with Reader(sys.argv[1]) as r:
                for c, t, raw in r.messages():
                    if c.msgtype != "sensor_msgs/msg/Image":
                        continue
                    m = ts.deserialize_cdr(raw, c.msgtype)
                    name = "color" if "color" in c.topic else "depth"
                    k = len(out.setdefault(name, []))
                    open(f"{sys.argv[2]}/{name}-{k}.raw", "wb").write(m.data.tobytes())
                    out[name].append([m.header.stamp.sec, m.header.stamp.nanosec, m.encoding, m.step, m.width])
            print(json.dumps(out))
            """
        let ref = try TestProcess.run([python, "-c", script, bags + "/synthetic-db3", refDir])
        XCTAssertEqual(ref.status, 0, ref.output)
        let line = try XCTUnwrap(ref.output.split(separator: "\n").last { $0.hasPrefix("{") }, ref.output)
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: [[Any]]])
        func stamps(_ name: String) -> [Double] {
            (json[name] ?? []).map { Double(($0[0] as! NSNumber).intValue) + Double(($0[1] as! NSNumber).intValue) / 1e9 }
        }
        let color = stamps("color"), depth = stamps("depth")
        XCTAssertEqual(color.count, 6)
        XCTAssertEqual(depth.count, 6)
        XCTAssertEqual(json["color"]?.first?[2] as? String, "rgb8")
        XCTAssertEqual(json["depth"]?.first?[2] as? String, "16UC1")

        var first: String?
        for name in ["synthetic-db3", "synthetic-zstd.mcap"] {
            let out = path("out-\(name)-tum")
            let r = try CLI.run(["convert", "--source", "ros2:\(bags)/\(name)", "--out", out])
            XCTAssertEqual(r.status, 0, r.stderr)
            XCTAssertTrue(r.stdout.contains("wrote 6 color, 6 depth frames"), r.stdout)
            XCTAssertEqual(try lines(out + "/rgb.txt"), color.map { [stamp($0), "rgb/\(stamp($0)).png"] }, name)
            XCTAssertEqual(try lines(out + "/depth.txt"), depth.map { [stamp($0), "depth/\(stamp($0)).png"] }, name)
            XCTAssertEqual(try lines(out + "/associations.txt"), nearestPairs(color: color, depth: depth), name)
            XCTAssertNotEqual(stamp(color[0]), stamp(depth[0]), "the streams have their own clocks")
            for (k, t) in depth.enumerated() {
                // 16UC1 millimeters, written in the recording's units (1000 per meter): as recorded.
                let raw = [UInt8](try Data(contentsOf: URL(fileURLWithPath: "\(refDir)/depth-\(k).raw")))
                XCTAssertTrue(littleEndian(try ImageIO.read(out + "/depth/\(stamp(t)).png")) == raw, "\(name) depth \(k)")
            }
            for (k, t) in color.enumerated() {
                let raw = [UInt8](try Data(contentsOf: URL(fileURLWithPath: "\(refDir)/color-\(k).raw")))
                let rgba = try ImageIO.readColor(out + "/rgb/\(stamp(t)).png").packedBytes()
                var rgb: [UInt8] = []
                rgb.reserveCapacity(raw.count)
                for i in 0..<rgba.count / 4 {
                    let p: Int = 4 * i
                    rgb.append(rgba[p]); rgb.append(rgba[p + 1]); rgb.append(rgba[p + 2])
                }
                XCTAssertTrue(rgb == raw, "\(name) color \(k)")
            }
            // The same folder from either storage.
            let calibration = try String(contentsOfFile: out + "/calibration.json", encoding: .utf8)
            if let first {
                XCTAssertEqual(calibration, first, name)
            } else {
                first = calibration
            }
        }

        // --frames 2:3: color leads (6 frames each, color on the tie); each depth frame belongs to
        // the color frame nearest it, 5 ms earlier.
        let some = path("some")
        XCTAssertEqual(try CLI.run(["convert", "--source", "ros2:\(bags)/synthetic-db3", "--frames", "2:3", "--out", some]).status, 0)
        XCTAssertEqual(try lines(some + "/rgb.txt").map { $0[0] }, color[2...3].map(stamp))
        XCTAssertEqual(try lines(some + "/depth.txt").map { $0[0] }, depth[2...3].map(stamp))
        // tum: reopens it with the same streams and stamps.
        let tum = try SourceSpec(parsing: "tum:\(path("out-synthetic-db3-tum"))").makeSource()
        try tum.start()
        let streams = try XCTUnwrap(tum.recordedStreams).streams()
        XCTAssertEqual(streams.map(\.kind), [.color, .depth])
        XCTAssertEqual(streams[0].timestamps.map(stamp), color.map(stamp))
        XCTAssertEqual(streams[1].timestamps.map(stamp), depth.map(stamp))
    }

    /// A TUM folder with groundtruth.txt, converted stream by stream: groundtruth.txt gets a line per
    /// frame written, at the frame's own stamp, with the pose the folder's trajectory gives there.
    func testPosesFollowEachStreamsStamps() throws {
        let src = path("posed")
        for folder in ["rgb", "depth"] { try FileManager.default.createDirectory(atPath: src + "/" + folder, withIntermediateDirectories: true) }
        let colorStamps = ["1.000000", "1.100000"], depthStamps = ["1.010000", "1.110000"]
        for t in colorStamps {
            let b = PixelBuffer(width: 8, height: 6, format: .rgba8)
            for y in 0..<6 { let r = b.row(y, as: UInt8.self); for x in 0..<32 { r[x] = x % 4 == 3 ? 255 : UInt8(x * 5 + y) } }
            b.markModified()
            try ImageIO.write(b, to: "\(src)/rgb/\(t).png")
        }
        for t in depthStamps {
            let b = PixelBuffer(width: 8, height: 6, format: .gray16(depthScale: 1000))
            for y in 0..<6 { let r = b.row(y, as: UInt16.self); for x in 0..<8 { r[x] = UInt16(1000 + x * 10 + y) } }
            b.markModified()
            try ImageIO.write(b, to: "\(src)/depth/\(t).png")
        }
        try (colorStamps.map { "\($0) rgb/\($0).png\n" }.joined()).write(toFile: src + "/rgb.txt", atomically: true, encoding: .utf8)
        try (depthStamps.map { "\($0) depth/\($0).png\n" }.joined()).write(toFile: src + "/depth.txt", atomically: true, encoding: .utf8)
        // Samples at each frame's stamp (and one between): a pose looked up there is the sample itself.
        let samples: [(String, [Double])] = [
            ("1.000000", [0.1, 0.2, 0.3, 0, 0, 0, 1]), ("1.010000", [0.11, 0.2, 0.3, 0, 0.6, 0, 0.8]),
            ("1.050000", [0.15, 0.2, 0.3, 0, 0, 0.6, 0.8]), ("1.100000", [0.2, 0.25, 0.3, 0.6, 0, 0, 0.8]),
            ("1.110000", [0.21, 0.25, 0.35, 0, 0, 0, 1]),
        ]
        try ("# timestamp tx ty tz qx qy qz qw\n" + samples.map { t, v in t + " " + v.map { String($0) }.joined(separator: " ") + "\n" }.joined())
            .write(toFile: src + "/groundtruth.txt", atomically: true, encoding: .utf8)

        let out = path("posed-out")
        let r = try CLI.run(["convert", "--source", "tum:\(src)", "--out", out])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("wrote 2 color, 2 depth frames"), r.stdout)
        let got = try lines(out + "/groundtruth.txt")
        let want = samples.filter { $0.0 != "1.050000" }
        XCTAssertEqual(got.map { $0[0] }, want.map(\.0), "one line per frame written, in time order, at its own stamp")
        for (g, w) in zip(got, want) {
            XCTAssertEqual(g.count, 8)
            for (a, b) in zip(g.dropFirst().compactMap { Double($0) }, w.1) { XCTAssertEqual(a, b, accuracy: 1e-6, w.0) }
        }
    }
}
