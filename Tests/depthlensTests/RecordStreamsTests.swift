import XCTest
import Foundation
import Capture
import DepthKit
import TestSupport

/// `depthlens record --out` writes through `convert`'s writer (`DatasetExporter`), so the two cannot
/// differ: a recording whose streams have their own clocks gives the folder `convert --frames 0:N-1`
/// gives, byte for byte (each stream under its own stamps, calibration.json, the same names); a live
/// DDS camera whose depth is stamped after its color gets each image under its own stamp and the
/// calibration it announced.
final class RecordStreamsTests: CLITestCase {
    /// Every file under `folder` (relative path → bytes).
    private func files(_ folder: String) throws -> [String: Data] {
        var out: [String: Data] = [:]
        let e = try XCTUnwrap(FileManager.default.enumerator(atPath: folder))
        while let rel = e.nextObject() as? String {
            var isDir: ObjCBool = false
            if FileManager.default.fileExists(atPath: folder + "/" + rel, isDirectory: &isDir), !isDir.boolValue {
                out[rel] = try Data(contentsOf: URL(fileURLWithPath: folder + "/" + rel))
            }
        }
        return out
    }

    /// Non-comment lines of an index file, split at spaces.
    private func lines(_ path: String) throws -> [[String]] {
        try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").filter { !$0.hasPrefix("#") }
            .map { $0.split(separator: " ").map(String.init) }
    }

    /// `record --frames N` and `convert --frames 0:N-1` of `source`: the same files, byte for byte.
    private func assertRecordEqualsConvert(_ source: String, frames: Int, file: StaticString = #filePath, line: UInt = #line) throws {
        let rec = path("rec-\(frames)"), conv = path("conv-\(frames)")
        let r = try CLI.run(["record", "--source", source, "--frames", "\(frames)", "--out", rec])
        XCTAssertEqual(r.status, 0, r.stderr, file: file, line: line)
        let c = try CLI.run(["convert", "--source", source, "--frames", "0:\(frames - 1)", "--out", conv])
        XCTAssertEqual(c.status, 0, c.stderr, file: file, line: line)
        let a = try files(rec), b = try files(conv)
        XCTAssertEqual(a.keys.sorted(), b.keys.sorted(), file: file, line: line)
        for (name, bytes) in a where b[name] != bytes { XCTFail("\(name) differs", file: file, line: line) }
        XCTAssertNotNil(a["calibration.json"], file: file, line: line)
    }

    /// The shared D435 bag: 1 color frame (360.713523) and 2 depth frames (360.815089, 360.981765),
    /// each on its own clock. Before, `record` wrote the color twice under the depth stamps and no
    /// calibration.json.
    func testRecordOfTheD435BagIsWhatConvertWrites() throws {
        let bag = Repo.fixture("realsense-d435-640x480.bag")
        try assertRecordEqualsConvert("bag:\(bag)", frames: 2)
        XCTAssertEqual(try lines(path("rec-2/rgb.txt")).map { $0[0] }, ["360.713523"])
        XCTAssertEqual(try lines(path("rec-2/depth.txt")).map { $0[0] }, ["360.815089", "360.981765"])
        XCTAssertEqual(try lines(path("rec-2/associations.txt")).map { [$0[0], $0[2]] },
                       [["360.713523", "360.815089"], ["360.713523", "360.981765"]])
        let r = try CLI.run(["record", "--source", "bag:\(bag)", "--frames", "2", "--out", path("said")])
        XCTAssertTrue(r.stdout.contains("wrote 1 color, 2 depth frames to"), r.stdout)

        // --mcap likewise: what `convert --out FILE.mcap --frames 0:1` writes, byte for byte.
        let m = try CLI.run(["record", "--source", "bag:\(bag)", "--frames", "2", "--mcap", path("rec.mcap")])
        XCTAssertEqual(m.status, 0, m.stderr)
        XCTAssertTrue(m.stdout.contains("1 color and 2 depth frames"), m.stdout)
        let c = try CLI.run(["convert", "--source", "bag:\(bag)", "--frames", "0:1", "--out", path("conv.mcap")])
        XCTAssertEqual(c.status, 0, c.stderr)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path("rec.mcap"))), try Data(contentsOf: URL(fileURLWithPath: path("conv.mcap"))))
    }

    /// `record --smooth` reads playback's frames (the smoothing runs across them): a TUM folder whose
    /// one color frame is paired with two depth frames still gets each image once under its own
    /// stamp, the names, index files and calibration.json `convert` writes (the depth smoothed).
    func testRecordSmoothWritesEachImageOnceUnderItsOwnStamp() throws {
        let bag = Repo.fixture("realsense-d435-640x480.bag")
        let tum = path("tum")
        XCTAssertEqual(try CLI.run(["convert", "--source", "bag:\(bag)", "--out", tum]).status, 0)
        let rec = path("smooth"), conv = path("conv")
        let r = try CLI.run(["record", "--source", "tum:\(tum)", "--frames", "2", "--smooth", "--out", rec])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(try CLI.run(["convert", "--source", "tum:\(tum)", "--out", conv]).status, 0)
        let a = try files(rec), b = try files(conv)
        XCTAssertEqual(a.keys.sorted(), b.keys.sorted())
        for name in ["rgb.txt", "depth.txt", "associations.txt", "calibration.json"] + a.keys.filter({ $0.hasPrefix("rgb/") }) {
            XCTAssertEqual(a[name], b[name], name)
        }
        XCTAssertEqual(try lines(rec + "/depth.txt").map { $0[0] }, ["360.815089", "360.981765"])
    }

    /// An mkv whose color runs at 30 fps and depth at 15: the first N playback frames are the
    /// frames `convert --frames 0:N-1` writes, each stream's under its own stamps.
    func testRecordOfAnMKVAtTwoRatesIsWhatConvertWrites() throws {
        let mkv = path("rates.mkv")
        let make = try TestProcess.run([
            "ffmpeg", "-nostdin", "-loglevel", "error", "-y",
            "-f", "lavfi", "-i", "testsrc=size=64x48:rate=30:duration=0.4",
            "-f", "lavfi", "-i", "testsrc2=size=32x24:rate=15:duration=0.4",
            "-map", "0", "-map", "1", "-c:v:0", "mjpeg", "-pix_fmt:v:0", "yuvj422p",
            "-c:v:1", "rawvideo", "-pix_fmt:v:1", "gray16be", "-tag:v:1", "b16g", "-strict", "unofficial",
            "-metadata:s:v:0", "title=COLOR", "-metadata:s:v:1", "title=DEPTH", mkv])
        XCTAssertEqual(make.status, 0, "ffmpeg: \(make.output)")
        try assertRecordEqualsConvert("mkv:\(mkv)", frames: 5)
        let color = try lines(path("rec-5/rgb.txt")).map { $0[0] }, depth = try lines(path("rec-5/depth.txt")).map { $0[0] }
        XCTAssertGreaterThan(color.count, depth.count, "each color frame once, each depth frame once: \(color) \(depth)")
    }

    /// A DDS camera (an in-process publisher on the loopback interface) whose depth is stamped 4 ms
    /// after its color: `record` lists each image under its own stamp and writes the calibration
    /// the camera announced. Before, the depth was listed under the color's stamp, and no calibration.json.
    func testRecordOfADDSCameraKeepsTheDepthsOwnStamp() throws {
        setenv("CYCLONEDDS_URI", DDSTests.loopbackOnly, 1)
        let d = 100 + (Int(getpid()) * 7 + 41) % 100
        let synthetic = SyntheticSource(width: 64, height: 48)
        try synthetic.start()
        let first = try XCTUnwrap(try synthetic.nextFrame(now: 0))
        let calibration = RGBDCalibration.assumed(depthWidth: 64, depthHeight: 48, colorWidth: 64, colorHeight: 48, depthScale: 1000)
        // Bounded: at most 20 s of frames at 30 fps, and stopped as soon as the recording is done.
        let stop = LockedValue(false), done = DispatchSemaphore(value: 0)
        let failure = LockedValue<Error?>(nil)
        Thread.detachNewThread {
            defer { done.signal() }
            do {
                let publisher = try DDSPublisher(participant: try DDSParticipant(domain: d, interface: "lo"), namespace: "/offset")
                for i in 0..<600 where !stop.current {
                    var f = first
                    f.timestamp = 100 + Double(i) / 30
                    f.depthTimestamp = f.timestamp + 0.004
                    try publisher.publish(f, calibration: calibration, depthUnitsPerMeter: 1000)
                    Thread.sleep(forTimeInterval: 1.0 / 30)
                }
            } catch {
                failure.withLock { $0 = error }
            }
        }
        let out = path("dds")
        let r = try CLI.run(["record", "--source", "dds:/offset,domain=\(d)", "--frames", "8", "--out", out, "--timeout", "30"], timeout: 120)
        stop.withLock { $0 = true }
        done.wait()
        XCTAssertNil(failure.current)
        XCTAssertEqual(r.status, 0, r.stderr)

        let pairs = try lines(out + "/associations.txt")
        XCTAssertEqual(pairs.count, 8, "\(pairs)")
        // A color frame may have come before its depth was heard (the first): it is written with
        // all-invalid depth under its own stamp. The others pair the color with the depth 4 ms later.
        var matched = 0
        for p in pairs {
            let tc = try XCTUnwrap(Double(p[0])), td = try XCTUnwrap(Double(p[2]))
            XCTAssertEqual(p[1], "rgb/\(p[0]).png")
            XCTAssertEqual(p[3], "depth/\(p[2]).png")
            if abs(td - tc - 0.004) < 1e-6 { matched += 1 } else { XCTAssertEqual(td, tc, "depth of \(p[0])") }
        }
        XCTAssertGreaterThanOrEqual(matched, 6, "\(pairs)")
        XCTAssertEqual(try lines(out + "/depth.txt").map { $0[0] }, pairs.map { $0[2] })
        XCTAssertEqual(try lines(out + "/rgb.txt").map { $0[0] }, pairs.map { $0[0] })
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: out + "/calibration.json")))
        let written = try RGBDCalibration.decode(bytes, name: "calibration.json")
        XCTAssertEqual(written.color.intrinsics, calibration.color.intrinsics)
        XCTAssertEqual(written.depth.intrinsics, calibration.depth.intrinsics)
        XCTAssertEqual(written.depthScale, 1000, "the camera's millimeters, kept")
        // tum: reads it back at those units: the synthetic wall (3 m) in a matched frame.
        let tum = try SourceSpec(parsing: "tum:\(out)").makeSource()
        try tum.start()
        defer { tum.stop() }
        try tum.playback?.seek(toFrame: pairs.count - 1)
        let back = try XCTUnwrap(try tum.nextFrame(now: 0))
        XCTAssertEqual(try XCTUnwrap(back.depth).map.sample(x: 2, y: 2), SyntheticScene.wallDepth, accuracy: 0.001)
    }
}
