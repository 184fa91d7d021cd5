import XCTest
import Foundation
import DepthKit
import TestSupport

/// `depthlens convert` as a pipeline: frames read in order, decoded, encoded and written on
/// `--jobs N` threads. The folder is the same, byte for byte, whatever N (1: everything in order
/// on one thread), its index files list the frames in time order, and a frame that cannot be
/// decoded is one line and exit 1 with every other frame written and nothing of the bad one left.
final class ConvertParallelTests: CLITestCase {
    /// Every file under `folder`: relative path → bytes.
    private func files(_ folder: String) throws -> [String: Data] {
        var out: [String: Data] = [:]
        let e = try XCTUnwrap(FileManager.default.enumerator(atPath: folder))
        while let rel = e.nextObject() as? String {
            var isDir: ObjCBool = false
            guard FileManager.default.fileExists(atPath: folder + "/" + rel, isDirectory: &isDir), !isDir.boolValue else { continue }
            out[rel] = try Data(contentsOf: URL(fileURLWithPath: folder + "/" + rel))
        }
        return out
    }

    /// The stamps an index file lists, in its order.
    private func stamps(_ path: String) throws -> [Double] {
        try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").filter { !$0.hasPrefix("#") }
            .compactMap { $0.split(separator: " ").first.flatMap { Double($0) } }
    }

    /// stderr without the progress summary (`convert: N/M frames, R fps, …`: its rate varies).
    private func messages(_ r: CLIResult) -> [String] { r.stderrLines.filter { !$0.hasPrefix("convert: ") } }

    /// Converts `source` with --jobs 1, --jobs 4 and the default: the same exit status, output line
    /// and folder, byte for byte; rgb.txt and depth.txt in time order. Returns the --jobs 1 run.
    @discardableResult
    private func assertSameOnAnyThreads(_ source: String, _ extra: [String] = [], name: String,
                                        file: StaticString = #filePath, line: UInt = #line) throws -> (result: CLIResult, folder: String) {
        var runs: [(jobs: String, result: CLIResult, files: [String: Data])] = []
        for jobs in ["1", "4", ""] {
            let out = path("\(name)-jobs\(jobs.isEmpty ? "default" : jobs)")
            let r = try CLI.run(["convert", "--source", source, "--out", out] + extra + (jobs.isEmpty ? [] : ["--jobs", jobs]))
            runs.append((jobs, r, try files(out)))
            for index in ["rgb.txt", "depth.txt"] where FileManager.default.fileExists(atPath: out + "/" + index) {
                let t = try stamps(out + "/" + index)
                XCTAssertEqual(t, t.sorted(), "\(name) --jobs \(jobs): \(index) in time order", file: file, line: line)
            }
        }
        let one = runs[0]
        XCTAssertGreaterThan(one.files.count, 3, "\(name): \(one.result.stderr)", file: file, line: line)
        for other in runs.dropFirst() {
            let what = "\(name): --jobs \(other.jobs.isEmpty ? "default" : other.jobs) against --jobs 1"
            XCTAssertEqual(other.result.status, one.result.status, what, file: file, line: line)
            XCTAssertEqual(other.result.stdout.replacingOccurrences(of: "jobs\(other.jobs.isEmpty ? "default" : other.jobs)", with: "jobs1"),
                           one.result.stdout, what, file: file, line: line)
            XCTAssertEqual(messages(other.result).map { $0.replacingOccurrences(of: "jobs\(other.jobs.isEmpty ? "default" : other.jobs)", with: "jobs1") },
                           messages(one.result), what, file: file, line: line)
            XCTAssertEqual(Set(other.files.keys), Set(one.files.keys), what, file: file, line: line)
            for (rel, bytes) in one.files where other.files[rel] != bytes {
                XCTFail("\(what): \(rel) differs", file: file, line: line)
            }
        }
        return (one.result, path("\(name)-jobs1"))
    }

    private func ffmpeg(_ args: [String]) throws {
        let r = try TestProcess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-y"] + args, timeout: 300)
        XCTAssertEqual(r.status, 0, "ffmpeg (apt-get install ffmpeg): \(r.output)")
    }

    /// Every recording kind: an Azure Kinect-style mkv (MJPEG color at 30 fps with sensor noise,
    /// b16g depth at 15), the same aligned to color with PLYs (colors decoded in order), an mkv with
    /// H.264 color and FFV1 depth, ROS 2 recordings with raw and with PNG images (MCAP, .db3), the
    /// shared D435 bag, and the TUM folder one of them became.
    func testEveryRecordingKindConvertsTheSameOnAnyNumberOfThreads() throws {
        let azure = path("azure.mkv"), own = path("own.mkv")
        try ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=96x64:rate=30:duration=0.6,noise=alls=8:allf=t",
                    "-f", "lavfi", "-i", "testsrc=size=48x32:rate=15:duration=0.6",
                    "-map", "0", "-map", "1", "-c:v:0", "mjpeg", "-pix_fmt:v:0", "yuvj422p",
                    "-c:v:1", "rawvideo", "-pix_fmt:v:1", "gray16be", "-tag:v:1", "b16g", "-strict", "unofficial",
                    "-metadata:s:v:0", "title=COLOR", "-metadata:s:v:1", "title=DEPTH", azure])
        try ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=64x48:rate=30:duration=0.4",
                    "-f", "lavfi", "-i", "testsrc=size=32x24:rate=30:duration=0.4,format=gray16le",
                    "-map", "0", "-map", "1", "-c:v:0", "libx264", "-pix_fmt:v:0", "yuv420p", "-g:v:0", "6",
                    "-c:v:1", "ffv1", "-g:v:1", "1", "-pix_fmt:v:1", "gray16le",
                    "-metadata:s:v:0", "title=COLOR", "-metadata:s:v:1", "title=DEPTH", own])
        let mkv = try assertSameOnAnyThreads("mkv:\(azure)", name: "azure")
        XCTAssertEqual(mkv.result.status, 0, mkv.result.stderr)
        XCTAssertTrue(mkv.result.stdout.contains("wrote 18 color, 9 depth frames"), mkv.result.stdout)
        try assertSameOnAnyThreads("mkv:\(azure)", ["--align", "color", "--ply", "--every", "2"], name: "azure-ply")
        try assertSameOnAnyThreads("mkv:\(own)", name: "own")
        try assertSameOnAnyThreads("tum:\(mkv.folder)", name: "tum")
        try assertSameOnAnyThreads("bag:\(Repo.fixture("realsense-d435-640x480.bag"))", name: "bag")

        let python = try PythonReference.python(importing: ["rosbags", "mcap", "numpy", "cv2"])
        for (name, extra) in [("raw.mcap", [String]()), ("raw.db3", []), ("png.db3", ["--png"])] {
            let r = try TestProcess.run([python, Repo.fixture("ros2_reference.py"), "make-bench", path(name), "--size", "80x60",
                                         "--depth-size", "40x30", "--frames", "11", "--noise"] + extra, timeout: 300)
            XCTAssertEqual(r.status, 0, r.output)
            let c = try assertSameOnAnyThreads("ros2:\(path(name))", name: name)
            XCTAssertTrue(c.result.stdout.contains("wrote 11 color, 11 depth frames"), "\(name): \(c.result.stdout) \(c.result.stderr)")
        }
    }

    /// A ROS 2 recording (rosbags' Writer) whose fourth color frame's PNG is corrupt: one line on
    /// stderr naming the recording, the frame and the problem; exit 1; the other 7 color and 8 depth
    /// frames written and listed; no file of the bad frame, no temporary file — on one thread as on four.
    func testABadFrameMidStreamIsOneLineAndExit1() throws {
        let python = try PythonReference.python(importing: ["rosbags", "numpy", "cv2"])
        let bag = path("bad-frame")
        let writer = """
            import sys, cv2, numpy as np
            from rosbags.rosbag2 import Writer
            from rosbags.typesys import Stores, get_typestore
            ts = get_typestore(Stores.ROS2_HUMBLE)
            T = ts.types
            def header(t):
                return T['std_msgs/msg/Header'](stamp=T['builtin_interfaces/msg/Time'](sec=t // 10**9, nanosec=t % 10**9), frame_id='f')
            ys, xs = np.mgrid[0:24, 0:32]
            with Writer(sys.argv[1], version=8) as w:
                cc = w.add_connection('/cam/color/image_raw/compressed', 'sensor_msgs/msg/CompressedImage', typestore=ts)
                dc = w.add_connection('/cam/depth/image_raw', 'sensor_msgs/msg/Image', typestore=ts)
                for i in range(8):
                    t = 1_700_000_000 * 10**9 + i * 33_333_333
                    rgb = np.stack([(xs * 8 + i) % 256, ys * 10, (xs + ys) % 256], axis=-1).astype(np.uint8)
                    png = cv2.imencode('.png', rgb)[1].tobytes()
                    if i == 3:
                        png = png[:8] + b'\\0' * (len(png) - 8)  # the signature, then nothing a PNG holds
                    c = T['sensor_msgs/msg/CompressedImage'](header=header(t), format='png', data=np.frombuffer(png, dtype=np.uint8))
                    w.write(cc, t, bytes(ts.serialize_cdr(c, 'sensor_msgs/msg/CompressedImage')))
                    d = (500 + xs * 3 + ys + i).astype('<u2')
                    m = T['sensor_msgs/msg/Image'](header=header(t + 2_000_000), height=24, width=32, encoding='16UC1', is_bigendian=0,
                                                   step=64, data=d.reshape(-1).view(np.uint8))
                    w.write(dc, t + 2_000_000, bytes(ts.serialize_cdr(m, 'sensor_msgs/msg/Image')))
            """
        let make = try TestProcess.run([python, "-c", writer, bag], timeout: 300)
        XCTAssertEqual(make.status, 0, make.output)
        let c = try assertSameOnAnyThreads("ros2:\(bag)", name: "bad")
        XCTAssertEqual(c.result.status, 1)
        let problem = messages(c.result).filter { $0.contains("frame 3") }
        XCTAssertEqual(problem.count, 1, c.result.stderr)
        XCTAssertTrue(problem.first?.contains(bag) == true && problem.first?.contains("/cam/color/image_raw/compressed") == true,
                      c.result.stderr)
        // Besides the recording's own notice (no Depth Units: millimeters), only the bad frame's line.
        XCTAssertEqual(messages(c.result).filter { !$0.contains("no Depth Units") }, problem, c.result.stderr)
        XCTAssertTrue(c.result.stdout.contains("wrote 7 color, 8 depth frames"), c.result.stdout)
        let listed = try stamps(c.folder + "/rgb.txt")
        XCTAssertEqual(listed.count, 7)
        let bad = String(format: "%.6f", 1_700_000_000 + 3 * 0.033333333)
        XCTAssertFalse(listed.map { String(format: "%.6f", $0) }.contains(bad))
        let names = try FileManager.default.contentsOfDirectory(atPath: c.folder + "/rgb")
        XCTAssertEqual(names.count, 7, "\(names)")
        XCTAssertFalse(names.contains { $0.hasPrefix(bad) || $0.hasPrefix(".") || $0.contains("tmp") }, "\(names)")
        XCTAssertEqual(try stamps(c.folder + "/depth.txt").count, 8)
    }

    /// An Azure Kinect-style mkv whose fourth MJPEG frame lost its SOF marker (libavcodec: no
    /// JPEG data): the same on one thread as on four — one line naming the recording, the frame
    /// and the problem; exit 1; the other 14 color and 8 depth frames written; nothing of the bad one.
    func testABadMJPEGFrameMidStreamIsOneLineAndExit1() throws {
        let good = path("good.mkv"), bad = path("bad.mkv")
        try ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=96x64:rate=30:duration=0.5,noise=alls=8:allf=t",
                    "-f", "lavfi", "-i", "testsrc=size=48x32:rate=15:duration=0.5",
                    "-map", "0", "-map", "1", "-c:v:0", "mjpeg", "-pix_fmt:v:0", "yuvj422p",
                    "-c:v:1", "rawvideo", "-pix_fmt:v:1", "gray16be", "-tag:v:1", "b16g", "-strict", "unofficial",
                    "-metadata:s:v:0", "title=COLOR", "-metadata:s:v:1", "title=DEPTH", good])
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: good)))
        // Each JPEG starts with SOI and JFIF's APP0 (FF D8 FF E0 … "JFIF"); the fourth loses its SOF0 (FF C0).
        let jfif: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10, 0x4A, 0x46, 0x49, 0x46]
        let starts = (0..<(bytes.count - jfif.count)).filter { i in bytes[i] == 0xFF && Array(bytes[i..<(i + jfif.count)]) == jfif }
        XCTAssertEqual(starts.count, 15)
        let sof = try XCTUnwrap((starts[3]..<(bytes.count - 1)).first { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xC0 })
        bytes[sof] = 0
        bytes[sof + 1] = 0
        try Data(bytes).write(to: URL(fileURLWithPath: bad))
        let c = try assertSameOnAnyThreads("mkv:\(bad)", name: "bad-mjpeg")
        XCTAssertEqual(c.result.status, 1)
        let lines = messages(c.result).filter { !$0.contains("no calibration.json attachment") }
        XCTAssertEqual(lines.count, 1, c.result.stderr)
        XCTAssertTrue(lines.first?.contains("COLOR frame 3") == true && lines.first?.contains(bad) == true
                      && lines.first?.contains("corrupt frame") == true, c.result.stderr)
        XCTAssertTrue(c.result.stdout.contains("wrote 14 color, 8 depth frames"), c.result.stdout)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: c.folder + "/rgb").count, 14)
        XCTAssertEqual(try stamps(c.folder + "/rgb.txt").count, 14)
    }

    func testJobsIsChecked() throws {
        try assertBadInput(["convert", "--source", "synthetic", "--out", path("j"), "--jobs", "0"], mentioning: "--jobs")
        try assertBadInput(["convert", "--source", "bag:\(Repo.fixture("realsense-d435-640x480.bag"))", "--out", path("j.mcap"),
                            "--jobs", "2"], mentioning: "--jobs", noFile: path("j.mcap"))
    }
}
