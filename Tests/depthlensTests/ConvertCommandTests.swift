import XCTest
import Foundation
import Capture
import DepthKit

/// `depthlens convert`: a whole recording to a TUM-layout folder that reopens with the same frames,
/// nothing lost on a stop signal or a failure.
final class ConvertCommandTests: CLITestCase {
    /// A 12-frame TUM recording of the synthetic scene at RealSense-like sizes.
    private func recording() throws -> String {
        let tum = path("rec")
        let r = try CLI.run(["record", "--source", "synthetic:320x240,160x120", "--frames", "12", "--out", tum])
        XCTAssertEqual(r.status, 0, r.stderr)
        return tum
    }

    func testRoundTripKeepsEveryByteAndTimestamp() throws {
        let tum = try recording()
        let out = path("conv")
        let r = try CLI.run(["convert", "--source", "tum:\(tum)", "--out", out])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("wrote 12 color, 12 depth frames"), r.stdout)
        let a = try TUMSequence(directory: tum), b = try TUMSequence(directory: out)
        XCTAssertEqual(a.count, b.count)
        XCTAssertEqual(b.depthScale, 5000, "the recording's own units, from calibration.json")
        for i in 0..<a.count {
            XCTAssertEqual(a.entries[i].timestamp, b.entries[i].timestamp, accuracy: 1e-6)
            let fa = try a.loadFrame(at: i), fb = try b.loadFrame(at: i)
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: a.entries[i].depthPath)),
                           try Data(contentsOf: URL(fileURLWithPath: b.entries[i].depthPath)), "depth PNG \(i)")
            XCTAssertEqual(fa.color.packedBytes(), fb.color.packedBytes(), "color \(i)")
        }
        let cal = try RGBDCalibration.read(out + "/calibration.json")
        XCTAssertEqual(cal.depth.intrinsics.width, 160)
        XCTAssertEqual(cal.color.intrinsics.width, 320)
        XCTAssertEqual(cal.depthScale, 1000, "the recording's own units (record keeps the synthetic scene's 1000, as convert does)")
        // Reopened through tum:, the folder gives the same frames.
        let source = try SourceSpec(parsing: "tum:\(out)").makeSource()
        let f = try FrameReader.frame(3, of: source)
        XCTAssertEqual(f.color.packedBytes(), try a.loadFrame(at: 3).color.packedBytes())
    }

    func testSelectionPLYAndWhat() throws {
        let tum = try recording()
        let out = path("sel")
        let r = try CLI.run(["convert", "--source", "tum:\(tum)", "--frames", "2:9", "--every", "3", "--ply", "--what", "depth", "--out", out])
        XCTAssertEqual(r.status, 0, r.stderr)
        let a = try TUMSequence(directory: tum)
        let depthLines = try String(contentsOfFile: out + "/depth.txt", encoding: .utf8).split(separator: "\n").filter { !$0.hasPrefix("#") }
        XCTAssertEqual(depthLines.map { String($0.split(separator: " ")[0]) },
                       [2, 5, 8].map { String(format: "%.6f", a.entries[$0].timestamp) })
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: out + "/rgb"), [], "--what depth writes no color")
        let plys = try FileManager.default.contentsOfDirectory(atPath: out + "/ply").sorted()
        XCTAssertEqual(plys.count, 3)
        let cloud = try PLYReader.load(out + "/ply/" + plys[0])
        let f = try a.loadFrame(at: 2)
        XCTAssertEqual(cloud.cloud.count, f.depth.depthStatistics().validCount)

        let t0 = a.entries[4].timestamp, t1 = a.entries[6].timestamp
        let byTime = path("time")
        XCTAssertEqual(try CLI.run(["convert", "--source", "tum:\(tum)", "--time", "\(t0):\(t1)", "--out", byTime]).status, 0)
        XCTAssertEqual(try TUMSequence(directory: byTime).count, 3)
    }

    func testRefusesANonEmptyFolderUnlessOverwrite() throws {
        let tum = try recording()
        let out = path("busy")
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: out + "/keep.txt", contents: Data("x".utf8))
        let r = try CLI.run(["convert", "--source", "tum:\(tum)", "--out", out])
        XCTAssertEqual(r.status, 1)
        XCTAssertEqual(r.stderrLines, ["depthlens: \(out): exists and is not empty (--overwrite to write into it)"])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: out), ["keep.txt"], "no partial output")
        XCTAssertEqual(try CLI.run(["convert", "--source", "tum:\(tum)", "--out", out, "--overwrite"]).status, 0)
        for bad in [["--frames", "5:2"], ["--every", "0"], ["--what", "sound"], ["--time", "x:1"]] {
            let b = try CLI.run(["convert", "--source", "tum:\(tum)", "--out", path("b")] + bad)
            XCTAssertEqual(b.status, 1, "\(bad)")
            XCTAssertEqual(b.stderrLines.count, 1, b.stderr)
        }
    }

    /// SIGTERM and SIGHUP stop the endless synthetic source cleanly, as Ctrl+C (SIGINT) does: the
    /// folder lists exactly the complete frames, exit status 128 + the signal.
    func testStopSignalsLeaveACompleteFolder() throws {
        for (sig, name) in [(SIGTERM, "SIGTERM"), (SIGHUP, "SIGHUP"), (SIGINT, "SIGINT")] {
            let out = path("sig-\(name)")
            let p = try CLI.start(["convert", "--source", "synthetic:160x120", "--out", out])
            // Wait until frames are on disk, then signal.
            let deadline = Date().addingTimeInterval(30)
            while Date() < deadline && ((try? FileManager.default.contentsOfDirectory(atPath: out + "/depth"))?.count ?? 0) < 3 {
                usleep(20_000)
            }
            p.send(sig)
            let r = p.wait(timeout: 60)
            let errText = r.stderr
            XCTAssertTrue(r.exited, name)
            XCTAssertEqual(r.status, 128 + sig, "\(name): \(errText)")
            XCTAssertTrue(errText.contains("stopped by \(name)"), errText)
            let seq = try TUMSequence(directory: out)
            XCTAssertGreaterThanOrEqual(seq.count, 3, name)
            for e in seq.entries { XCTAssertNoThrow(try ImageIO.read(e.depthPath), "\(name): every listed PNG is complete") }
            let onDisk = try FileManager.default.contentsOfDirectory(atPath: out + "/depth").filter { $0.hasSuffix(".png") }
            XCTAssertEqual(onDisk.count, seq.count, "\(name): every PNG written is listed")
        }
    }

    /// A disk that fills up (a 1 MiB tmpfs): one line, exit 1, and the frames written before are
    /// complete and listed. Mounting needs root, which scripts/test and CI have.
    func testAFullDiskKeepsWhatWasWritten() throws {
        let mount = path("small")
        try FileManager.default.createDirectory(atPath: mount, withIntermediateDirectories: true)
        let m = try CLI.shell("mount -t tmpfs -o size=1m tmpfs '\(mount)'")
        guard m.status == 0 else {
            return XCTFail("cannot mount a 1 MiB tmpfs to fill (run the tests as root, as scripts/test does): \(m.stderr)")
        }
        defer { _ = try? CLI.shell("umount '\(mount)'") }
        let out = mount + "/conv"
        let r = try CLI.run(["convert", "--source", "synthetic:320x240", "--out", out])
        XCTAssertEqual(r.status, 1, r.stderr)
        XCTAssertEqual(r.stderrLines.filter { $0.hasPrefix("depthlens: ") }.count, 1, r.stderr)
        XCTAssertTrue(r.stderr.contains("No space left") || r.stderr.contains("ENOSPC") || r.stderr.contains("space"), r.stderr)
        let seq = try TUMSequence(directory: out)
        XCTAssertGreaterThan(seq.count, 0)
        for e in seq.entries {
            XCTAssertNoThrow(try ImageIO.read(e.depthPath))
            XCTAssertNoThrow(try ImageIO.read(e.colorPath))
        }
    }
}
