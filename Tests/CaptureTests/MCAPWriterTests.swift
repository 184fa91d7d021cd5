import XCTest
import Foundation
import DepthKit
import TestSupport
@testable import Capture

/// MCAP out (`MCAPExporter`, `MCAPWriter`) against independent readers: PyPI's `mcap` (CRCs
/// validated), `mcap-ros2-support` (every message decoded through its ros2msg schema) and `rosbags`
/// (its own CDR deserializer), through Tests/Fixtures/mcap_check.py; and `ros2:` reading it back.
/// Inputs: ros2_reference.py's synthetic realsense2_camera pair (color and depth 6 frames each on
/// their own clocks, 5 ms apart; written by `mcap`'s Writer) and the shared D435 bag.
final class MCAPWriterTests: XCTestCase {
    struct Checked {
        var json: [String: Any]
        var messages: [String: [[String: Any]]] { json["messages"] as? [String: [[String: Any]]] ?? [:] }
        func list(_ topic: String) -> [[String: Any]] { messages[topic] ?? [] }
        func values(_ topic: String, _ key: String) -> [String] { list(topic).map { "\($0[key] ?? "nil")" } }
    }

    func check(_ path: String) throws -> Checked {
        let python = try PythonReference.python(importing: ["mcap", "mcap_ros2", "rosbags", "PIL"])
        let r = try TestProcess.run([python, Repo.fixture("mcap_check.py"), path], timeout: 300)
        XCTAssertEqual(r.status, 0, r.output)
        let start = r.output.firstIndex(of: "{") ?? r.output.startIndex
        let json = try JSONSerialization.jsonObject(with: Data(r.output[start...].utf8)) as? [String: Any]
        return Checked(json: try XCTUnwrap(json, r.output))
    }

    func syntheticBags() throws -> (folder: TemporaryFolder, path: (String) -> String) {
        let python = try PythonReference.python(importing: ["rosbags", "mcap", "numpy"])
        let folder = TemporaryFolder("mcap-writer")
        let out = folder.file("bags")
        let r = try TestProcess.run([python, Repo.fixture("ros2_reference.py"), "make-bags", out, "--synthetic-only"], timeout: 600)
        XCTAssertEqual(r.status, 0, r.output)
        return (folder, { out + "/" + $0 })
    }

    /// `back` (ros2: reading what was written) starts and gives `reference`'s frames: count, depth
    /// units, intrinsics, extrinsics (to `extrinsicsAccuracy`: a quaternion on the way), stamps (to
    /// 1 µs), pixel bytes.
    func assertSameFrames(_ reference: FrameSource, _ back: ROS2Source, extrinsicsAccuracy: Float,
                          file: StaticString = #filePath, line: UInt = #line) throws {
        try reference.start()
        try back.start()
        XCTAssertEqual(back.playback?.frameCount, reference.playback?.frameCount, file: file, line: line)
        XCTAssertEqual(back.depthUnitsPerMeter, reference.depthUnitsPerMeter, file: file, line: line)
        XCTAssertEqual(back.calibration?.depth.intrinsics, reference.calibration?.depth.intrinsics, file: file, line: line)
        XCTAssertEqual(back.calibration?.color.intrinsics, reference.calibration?.color.intrinsics, file: file, line: line)
        let ta = try XCTUnwrap(reference.calibration?.depthToColor), tb = try XCTUnwrap(back.calibration?.depthToColor)
        for (x, y) in zip(ta.rotation + [ta.translation.x, ta.translation.y, ta.translation.z],
                          tb.rotation + [tb.translation.x, tb.translation.y, tb.translation.z]) {
            XCTAssertEqual(x, y, accuracy: extrinsicsAccuracy, file: file, line: line)
        }
        for (f, g) in zip(try playbackFrames(reference), try playbackFrames(back)) {
            XCTAssertEqual(f.timestamp, g.timestamp, accuracy: 1e-6, file: file, line: line)
            XCTAssertEqual(f.color.packedBytes(), g.color.packedBytes(), "color \(f.index)", file: file, line: line)
            XCTAssertEqual(f.depth.map { $0.map.packedBytes() }, g.depth.map { $0.map.packedBytes() }, "depth \(f.index)", file: file, line: line)
        }
    }

    func leftovers(_ folder: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.contains(".tmp-") || $0.hasSuffix(".mcap") }
    }

    let color = "/camera/camera/color/image_raw", depth = "/camera/camera/depth/image_rect_raw"
    let colorInfo = "/camera/camera/color/camera_info", depthInfo = "/camera/camera/depth/camera_info"

    /// ros2: (each stream on its own clock) → MCAP: every frame once under its own stamp, the same
    /// pixel bytes (rgb8 and 16UC1 as they went in), K, schemas, zstd chunks, summary; ros2: reads
    /// it back to the same frames.
    func testSyntheticRoundTripAgainstMcapAndRosbags() throws {
        let bags = try syntheticBags()
        let input = bags.path("synthetic-zstd.mcap")
        let out = bags.folder.file("out.mcap")
        let exporter = MCAPExporter(source: ROS2Source(path: input), path: out)
        exporter.options.chunkSize = 20_000  // several chunks
        let summary = try exporter.run(shouldStop: { nil })
        XCTAssertTrue(summary.perStream)
        XCTAssertTrue(summary.depthMillimeters)
        XCTAssertEqual([summary.colorFrames, summary.depthFrames], [6, 6])
        XCTAssertEqual(summary.messages, 6 * 4 + 1)

        let want = try check(input), got = try check(out)
        XCTAssertEqual(got.json["profile"] as? String, "ros2")
        XCTAssertEqual(got.json["channel_encodings"] as? [String], ["cdr"])
        XCTAssertEqual(Set((got.json["chunks"] as? [String]) ?? []), ["zstd"])
        XCTAssertGreaterThan((got.json["statistics"] as? [String: Any])?["chunks"] as? Int ?? 0, 1)
        XCTAssertEqual(got.json["iterated"] as? Int, 25)
        let schemas = (got.json["schemas"] as? [[String]]) ?? []
        XCTAssertEqual(Set(schemas.map { $0[0] }), ["sensor_msgs/msg/Image", "sensor_msgs/msg/CameraInfo", "tf2_msgs/msg/TFMessage"])
        XCTAssertEqual(Set(schemas.map { $0[1] }), ["ros2msg"])
        XCTAssertEqual(got.json["rosbags"] as? [String: Int], ["/tf_static": 1, color: 6, colorInfo: 6, depth: 6, depthInfo: 6])
        for topic in [color, depth] {
            // Stamps (header = log time), frame ids and pixel bytes equal what went in.
            // RecordedStream stamps are double seconds: at epoch times a double holds 0.24 µs, so a
            // stamp comes back within 0.12 µs of its nanoseconds.
            XCTAssertEqual(got.list(topic).count, 6, topic)
            for (g, w) in zip(got.list(topic), want.list(topic)) {
                let a = try XCTUnwrap(g["stamp"] as? Int64), b = try XCTUnwrap(w["stamp"] as? Int64)
                XCTAssertLessThanOrEqual(abs(a - b), 150, topic)
            }
            XCTAssertEqual(got.values(topic, "log"), got.values(topic, "stamp"), topic)
            XCTAssertEqual(got.values(topic, "frame"), want.values(topic, "frame"), topic)
            XCTAssertEqual(got.values(topic, "encoding"), want.values(topic, "encoding"), topic)
            XCTAssertEqual(got.values(topic, "sha1"), want.values(topic, "sha1"), topic)
        }
        XCTAssertNotEqual(got.values(color, "stamp"), got.values(depth, "stamp"))
        for topic in [colorInfo, depthInfo] {
            XCTAssertEqual(got.list(topic).count, 6, topic)
            for (g, w) in zip(got.list(topic), want.list(topic)) {
                XCTAssertLessThanOrEqual(abs((g["stamp"] as? Int64 ?? 0) - (w["stamp"] as? Int64 ?? 1000)), 150, topic)
                let gk = g["k"] as? [Double] ?? [], wk = w["k"] as? [Double] ?? [1]
                XCTAssertEqual(gk.count, 9)
                for (a, b) in zip(gk, wk) { XCTAssertEqual(a, b, accuracy: 1e-5, topic) }
                XCTAssertEqual((g["d"] as? [Double])?.count, 5)
                XCTAssertEqual(g["model"] as? String, "plumb_bob")
            }
        }
        let tf = try XCTUnwrap(got.list("/tf_static").first?["transforms"] as? [[Any]])
        XCTAssertEqual(tf.count, 1)
        XCTAssertEqual(tf[0][0] as? String, "camera_color_optical_frame")
        XCTAssertEqual(tf[0][1] as? String, "camera_depth_optical_frame")

        // depthlens' own reader: the summary (CRC checked) indexes every message without a scan.
        let reader = try MCAPReader(bytes: try ROS2Bytes(mapping: out), name: out, fileIndex: 0)
        XCTAssertTrue(reader.usedSummary, "\(reader.notices)")
        XCTAssertEqual(reader.messages.count, 25)

        // ros2: reads it back to the same frames.
        let a = ROS2Source(path: input), b = ROS2Source(path: out)
        try assertSameFrames(a, b, extrinsicsAccuracy: 1e-6)
        XCTAssertEqual(b.calibration?.color.coeffs, a.calibration?.color.coeffs)
        for (x, y) in zip(try XCTUnwrap(a.recordedStreams).streams(), try XCTUnwrap(b.recordedStreams).streams()) {
            XCTAssertEqual(x.kind, y.kind)
            XCTAssertEqual(x.frameCount, y.frameCount)
            for (s, t) in zip(x.timestamps, y.timestamps) { XCTAssertEqual(s, t, accuracy: 1e-6) }
        }
    }

    /// The shared D435 ROS 1 bag → MCAP → ros2: gives the frames bag: gives.
    func testD435BagToMCAPMatchesTheBag() throws {
        let folder = TemporaryFolder("mcap-d435")
        let out = folder.file("d435.mcap")
        let summary = try MCAPExporter(source: BagSource(path: fixtureBag), path: out).run(shouldStop: { nil })
        XCTAssertEqual(summary.depthFrames, 2)
        XCTAssertEqual(summary.colorFrames, 1)
        XCTAssertTrue(summary.depthMillimeters)
        let got = try check(out)
        XCTAssertEqual(got.list(depth).count, 2)
        XCTAssertEqual(got.list(color).count, 1)
        XCTAssertEqual(got.values(depth, "encoding"), ["16UC1", "16UC1"])
        XCTAssertEqual(got.values(color, "encoding"), ["rgb8"])

        try assertSameFrames(BagSource(path: fixtureBag), ROS2Source(path: out), extrinsicsAccuracy: 1e-5)
    }

    /// --color-jpeg: CompressedImage JPEG that Pillow decodes and ros2: reads back close to the original.
    func testColorJPEG() throws {
        let bags = try syntheticBags()
        let out = bags.folder.file("jpeg.mcap")
        let exporter = MCAPExporter(source: ROS2Source(path: bags.path("synthetic-db3")), path: out)
        exporter.colorJPEG = true
        _ = try exporter.run(shouldStop: { nil })
        let got = try check(out)
        let jpeg = got.list(color + "/compressed")
        XCTAssertEqual(jpeg.count, 6)
        XCTAssertEqual(Set(jpeg.map { "\($0["encoding"] ?? "")" }), ["rgb8; jpeg compressed bgr8"])
        XCTAssertEqual(Set(jpeg.map { "\($0["width"] ?? "")x\($0["height"] ?? "")/\($0["mode"] ?? "")" }), ["64x48/RGB"])
        let a = ROS2Source(path: bags.path("synthetic-db3")), b = ROS2Source(path: out)
        try a.start()
        try b.start()
        for (f, g) in zip(try playbackFrames(a), try playbackFrames(b)) {
            let x = f.color.packedBytes(), y = g.color.packedBytes()
            XCTAssertEqual(x.count, y.count)
            let mean = zip(x, y).reduce(0.0) { $0 + abs(Double($1.0) - Double($1.1)) } / Double(max(1, x.count))
            XCTAssertLessThan(mean, 6, "frame \(f.index)")
        }
    }

    /// Depth in units other than millimeters (a TUM folder: 5000 per meter): 32FC1 meters, the
    /// same floats back through ros2:.
    func testDepthInOtherUnitsIs32FC1Meters() throws {
        let folder = TemporaryFolder("mcap-units")
        let tum = folder.file("tum")
        try FileManager.default.createDirectory(atPath: tum, withIntermediateDirectories: true)
        let synthetic = SyntheticSource(width: 32, height: 24)
        let writer = try TUMWriter(directory: tum, depthScale: 5000)
        let reader = try FrameReader(source: synthetic)
        for _ in 0..<2 {
            let f = try XCTUnwrap(try reader.next())
            _ = try writer.append(color: f.color, depth: f.depth, timestamp: f.timestamp)
        }
        try writer.finish()
        let out = folder.file("m.mcap")
        let source = TUMSource(directory: tum)
        let summary = try MCAPExporter(source: source, path: out).run(shouldStop: { nil })
        XCTAssertFalse(summary.depthMillimeters)
        let got = try check(out)
        XCTAssertEqual(got.values(depth, "encoding"), ["32FC1", "32FC1"])
        let reference = TUMSource(directory: tum), back = ROS2Source(path: out)
        try reference.start()
        try back.start()
        XCTAssertEqual(reference.playback?.frameCount, 2)
        for (f, g) in zip(try playbackFrames(reference), try playbackFrames(back)) {
            XCTAssertEqual(f.depth.map { $0.map.packedBytes() }, g.depth.map { $0.map.packedBytes() }, "depth \(f.index)")
            XCTAssertEqual(f.color.packedBytes(), g.color.packedBytes(), "color \(f.index)")
        }
    }

    /// A source without separate streams (the synthetic scene, as a live camera gives frames): each
    /// frame's color and depth under its stamp, `frameLimit` frames.
    func testFramesOfAPairingSource() throws {
        let folder = TemporaryFolder("mcap-synthetic")
        let out = folder.file("s.mcap")
        let exporter = MCAPExporter(source: SyntheticSource(width: 32, height: 24), path: out)
        exporter.frameLimit = 3
        let summary = try exporter.run(shouldStop: { nil })
        XCTAssertFalse(summary.perStream)
        XCTAssertEqual([summary.colorFrames, summary.depthFrames], [3, 3])
        let got = try check(out)
        XCTAssertEqual(got.list(color).count, 3)
        XCTAssertEqual(got.values(color, "stamp"), got.values(depth, "stamp"))
        XCTAssertEqual(got.values(depth, "width"), ["32", "32", "32"])
    }

    /// A source that fails, and a stop signal, leave neither the file nor a temporary.
    func testBadInputAndInterruptionLeaveNoFile() throws {
        let bags = try syntheticBags()
        let out = bags.folder.file("bad.mcap")
        // The second chunk's zstd data is corrupt: found after frames were written.
        XCTAssertThrowsError(try MCAPExporter(source: ROS2Source(path: bags.path("corrupt-zstd.mcap")), path: out).run(shouldStop: { nil })) {
            XCTAssertTrue("\($0)".contains("corrupt-zstd.mcap") || "\($0)".contains(out), "\($0)")
            XCTAssertFalse("\($0)".contains("\n"), "\($0)")
        }
        XCTAssertEqual(leftovers(bags.folder.path), [])
        // Stopped after three frames: nothing written.
        var polls = 0
        let stopped = try MCAPExporter(source: ROS2Source(path: bags.path("synthetic-db3")), path: out).run(shouldStop: {
            polls += 1
            return polls > 3 ? SIGINT : nil
        })
        XCTAssertEqual(stopped.stoppedBy, SIGINT)
        XCTAssertFalse(stopped.written)
        XCTAssertEqual(leftovers(bags.folder.path), [])
        // A folder that does not exist.
        XCTAssertThrowsError(try MCAPExporter(source: ROS2Source(path: bags.path("synthetic-db3")),
                                              path: bags.folder.file("nowhere/x.mcap")).run(shouldStop: { nil }))
        XCTAssertThrowsError(try MCAPExporter.prepare(path: bags.folder.file("x.bag"), overwrite: false))
    }

    /// Stamps: seconds to the nearest nanosecond.
    func testStamps() {
        XCTAssertEqual(ROS2Message.Time(seconds: 360.815089123), ROS2Message.Time(sec: 360, nanosec: 815_089_123))
        // At epoch times a double holds 0.24 µs: the nearest nanosecond of the double.
        XCTAssertLessThanOrEqual(abs(ROS2Message.Time(seconds: 1_700_000_000.005).nanoseconds - 1_700_000_000_005_000_000), 120)
        XCTAssertEqual(ROS2Message.Time(nanoseconds: -1), ROS2Message.Time(sec: -1, nanosec: 999_999_999))
        XCTAssertEqual(ROS2Message.Time(nanoseconds: 1_700_000_000_033_333_333).nanoseconds, 1_700_000_000_033_333_333)
    }
}
