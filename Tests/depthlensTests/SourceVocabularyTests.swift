import XCTest
import TestSupport
import Foundation
import Capture
import DepthKit

/// Every command takes the same `--source` strings, and the README, `--help` and the usage text
/// come from the one table in `SourceSpec`.
final class SourceVocabularyTests: CLITestCase {
    /// README's command table names exactly the subcommands `depthlens --help` lists.
    func testReadmeListsEveryCommand() throws {
        let help = try CLI.run(["--help"])
        XCTAssertEqual(help.status, 0)
        let listed = help.stdout.components(separatedBy: "SUBCOMMANDS:").last?.split(separator: "\n")
            .filter { $0.hasPrefix("  ") && !$0.hasPrefix("   ") && !$0.contains("See '") }
            .compactMap { $0.split(separator: " ").first.map(String.init) } ?? []
        let table = DocSection.text("commands", in: "README.md") ?? ""
        let rows = table.split(separator: "\n").dropFirst(2).compactMap { line -> String? in
            guard let a = line.firstIndex(of: "`"), let b = line[line.index(after: a)...].firstIndex(of: "`") else { return nil }
            return String(line[line.index(after: a)..<b])
        }
        XCTAssertFalse(listed.isEmpty, help.stdout)
        XCTAssertEqual(rows.sorted(), listed.sorted(), "README's command table and `depthlens --help`")
    }

    func testReadmeAndHelpListEveryKindFromTheTable() throws {
        for page in ["README.md", "docs/SOURCES.md", "docs/design/sources.md"] {
            XCTAssertEqual(DocSection.text("sources", in: page), SourceSpec.markdownTable,
                           "\(page)'s source table differs from SourceSpec.markdownTable:\n\(SourceSpec.markdownTable)")
        }
        for command in ["view", "record", "process", "export-ply", "render3d", "info"] {
            let help = try CLI.run([command, "--help"])
            XCTAssertEqual(help.status, 0, command)
            let flat = help.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            for kind in SourceSpec.kinds {
                XCTAssertTrue(flat.contains(kind.syntax), "\(command) --help lacks \(kind.syntax)")
            }
        }
    }

    /// `record --source synthetic:320x240` (which `view` always took) and the same string on every
    /// headless command; a malformed one is the same one line from each.
    func testSameStringsOnEveryCommand() throws {
        let tum = dir.appendingPathComponent("rec").path
        let r = try CLI.run(["record", "--source", "synthetic:320x240", "--frames", "3", "--out", tum])
        XCTAssertEqual(r.status, 0, r.stderr)
        let seq = try TUMSequence(directory: tum)
        XCTAssertEqual(seq.count, 3)
        XCTAssertEqual(try seq.loadFrame(at: 0).color.width, 320)

        let png = dir.appendingPathComponent("jet.png").path
        let p = try CLI.run(["process", "--source", "tum:\(tum)", "--frame", "1", "--filter", "jet", "--out", png])
        XCTAssertEqual(p.status, 0, p.stderr)
        XCTAssertEqual(try ImageIO.read(png).width, 320)

        let folder = dir.appendingPathComponent("all").path
        let all = try CLI.run(["process", "--source", "tum:\(tum)", "--filter", "grayscale", "--out", folder])
        XCTAssertEqual(all.status, 0, all.stderr)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder).sorted(),
                       seq.entries.map { String(format: "%.6f.png", $0.timestamp) }.sorted())

        let ply = dir.appendingPathComponent("c.ply").path
        let e = try CLI.run(["export-ply", "--source", "synthetic:320x240,160x120", "--out", ply])
        XCTAssertEqual(e.status, 0, e.stderr)
        XCTAssertTrue(e.stdout.contains("wrote"), e.stdout)

        let info = try CLI.run(["info", "--json", "tum:\(tum)"])
        XCTAssertEqual(info.status, 0, info.stderr)
        let o = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(info.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(o["kind"] as? String, "tum")
        XCTAssertEqual(o["depth_scale"] as? Double, 1000, "the synthetic scene's units, which record keeps (calibration.json)")
        let streams = try XCTUnwrap(o["streams"] as? [[String: Any]])
        XCTAssertEqual(streams.first?["width"] as? Int, 320)
        XCTAssertEqual(streams.first?["frames"] as? Int, 3)
        let k = try XCTUnwrap((o["intrinsics"] as? [String: Any])?["depth"] as? [String: Any])
        XCTAssertEqual(k["fx"] as? Double, 262.5)

        for command in [["record", "--frames", "1", "--out", dir.appendingPathComponent("x").path],
                        ["process", "--filter", "jet", "--out", dir.appendingPathComponent("x.png").path],
                        ["export-ply", "--out", dir.appendingPathComponent("x.ply").path],
                        ["render3d", "--out", dir.appendingPathComponent("r.png").path]] {
            let bad = try CLI.run(command + ["--source", "synthetic:12"])
            XCTAssertEqual(bad.status, 1, command[0])
            XCTAssertEqual(bad.stderrLines.count, 1, "\(command[0]): \(bad.stderr)")
            XCTAssertTrue(bad.stderr.contains("--source 'synthetic:12': expected synthetic:COLORWxH[,DEPTHWxH]"), bad.stderr)
        }
    }

    /// Every recording is processed frame by frame by `process --source` without `--frame`: a bag
    /// and an mkv as a data-set folder is (before, only `tum:` was; a bag or an mkv gave frame 0),
    /// each frame the same picture `--frame i` makes of it.
    func testProcessReadsEveryFrameOfEveryRecording() throws {
        let bag = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/realsense-d435-640x480.bag").path
        let mkv = path("rec.mkv")
        let r = try CLI.run(["record", "--source", "synthetic:64x48", "--frames", "3", "--mkv", mkv])
        XCTAssertEqual(r.status, 0, r.stderr)
        for (source, frames) in [("bag:\(bag)", 2), ("mkv:\(mkv)", 3)] {
            let folder = path("all-\(frames)")
            let all = try CLI.run(["process", "--source", source, "--filter", "grayscale", "--out", folder])
            XCTAssertEqual(all.status, 0, "\(source): \(all.stderr)")
            XCTAssertTrue(all.stdout.contains("wrote \(frames) frames to \(folder)"), all.stdout)
            let names = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
            XCTAssertEqual(names.count, frames, "\(source): \(names)")
            for (i, name) in names.enumerated() {
                let one = path("one-\(frames)-\(i).png")
                let p = try CLI.run(["process", "--source", source, "--frame", "\(i)", "--filter", "grayscale", "--out", one])
                XCTAssertEqual(p.status, 0, p.stderr)
                let a = try ImageIO.read((folder as NSString).appendingPathComponent(name)), b = try ImageIO.read(one)
                XCTAssertEqual(a.packedBytes(), b.packedBytes(), "\(source) frame \(i): the batch's \(name) differs from --frame \(i)")
            }
        }
    }

    /// A data-set folder's `calibration.json` is the source's calibration: `info` reports it and
    /// the depth frames carry its depth intrinsics (the point cloud uses them).
    func testCalibrationJSONBesideAFolder() throws {
        let tum = dir.appendingPathComponent("rec").path
        XCTAssertEqual(try CLI.run(["record", "--source", "synthetic:320x240", "--frames", "2", "--out", tum]).status, 0)
        let cal = RGBDCalibration(depth: CameraModel(intrinsics: CameraIntrinsics(fx: 300, fy: 301, cx: 150, cy: 110, width: 320, height: 240)),
                                  color: CameraModel(intrinsics: CameraIntrinsics(fx: 310, fy: 311, cx: 161, cy: 121, width: 320, height: 240),
                                                     model: .brownConrady, coeffs: [0.1, -0.2, 0, 0, 0.01]),
                                  depthToColor: RigidTransform(rotation: [1, 0, 0, 0, 1, 0, 0, 0, 1], translation: SIMD3(0.015, 0, 0)),
                                  depthScale: 5000, origin: "test")
        try Data(try cal.encodedJSON()).write(to: URL(fileURLWithPath: tum + "/calibration.json"))
        let info = try CLI.run(["info", "--json", "tum:\(tum)"])
        XCTAssertEqual(info.status, 0, info.stderr)
        let back = try RGBDCalibration.decode(Array(info.stdout.utf8), name: "info")
        XCTAssertEqual(back.depth, cal.depth)
        XCTAssertEqual(back.color, cal.color)
        XCTAssertEqual(back.depthToColor, cal.depthToColor)
        XCTAssertTrue(back.needsAlignment)
        let source = TUMSource(directory: tum)
        let f = try FrameReader.frame(0, of: source)
        XCTAssertEqual(f.depth?.intrinsics, cal.depth.intrinsics)

        try Data("{\"depth_scale\": 5000}".utf8).write(to: URL(fileURLWithPath: tum + "/calibration.json"))
        let bad = try CLI.run(["info", "tum:\(tum)"])
        XCTAssertEqual(bad.status, 1)
        XCTAssertEqual(bad.stderrLines, ["depthlens: \(tum)/calibration.json: 'intrinsics' missing or not an object"])
    }
}
