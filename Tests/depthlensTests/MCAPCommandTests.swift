import XCTest
import Foundation
import TestSupport

/// `convert --out FILE.mcap` and `record --mcap` as a user runs them: one line on bad input, exit 1,
/// no file left behind; the output is what `ros2:` opens.
final class MCAPCommandTests: XCTestCase {
    func leftovers(_ folder: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.contains(".tmp-") || $0.hasSuffix(".mcap") }
    }

    func testConvertAndRecordMCAP() throws {
        let python = try PythonReference.python(importing: ["rosbags", "mcap", "numpy"])
        let folder = TemporaryFolder("mcap-cli")
        let bags = folder.file("bags")
        let made = try TestProcess.run([python, Repo.fixture("ros2_reference.py"), "make-bags", bags, "--synthetic-only"], timeout: 600)
        XCTAssertEqual(made.status, 0, made.output)
        let outFolder = folder.file("out")
        try FileManager.default.createDirectory(atPath: outFolder, withIntermediateDirectories: true)

        // Corrupt input (its second chunk's zstd data): one line, exit 1, nothing left.
        let bad = try CLI.run(["convert", "--source", "ros2:\(bags)/corrupt-zstd.mcap", "--out", outFolder + "/bad.mcap"])
        XCTAssertEqual(bad.status, 1, bad.stderr)
        XCTAssertEqual(bad.stderrLines.count, 1, bad.stderr)
        XCTAssertEqual(leftovers(outFolder), [])

        let good = outFolder + "/good.mcap"
        let conv = try CLI.run(["convert", "--source", "ros2:\(bags)/synthetic-db3", "--out", good])
        XCTAssertEqual(conv.status, 0, conv.stderr)
        XCTAssertTrue(conv.stdout.contains("wrote 6 color and 6 depth (16UC1 mm) frames, 25 messages"), conv.stdout)
        let again = try CLI.run(["convert", "--source", "ros2:\(bags)/synthetic-db3", "--out", good])
        XCTAssertEqual(again.status, 1)
        XCTAssertTrue(again.stderr.contains("--overwrite"), again.stderr)
        let info = try CLI.run(["info", "--source", "ros2:\(good)"])
        XCTAssertEqual(info.status, 0, info.stderr)
        XCTAssertTrue(info.stdout.contains("/camera/camera/depth/image_rect_raw: 64x48 Image 16UC1 @ 30.00 fps, 6 frames"), info.stdout)

        let rec = try CLI.run(["record", "--source", "synthetic", "--frames", "4", "--mcap", outFolder + "/rec.mcap"])
        XCTAssertEqual(rec.status, 0, rec.stderr)
        let back = try CLI.run(["info", "--source", "ros2:\(outFolder)/rec.mcap"])
        XCTAssertEqual(back.status, 0, back.stderr)
        XCTAssertTrue(back.stdout.contains("4 frames"), back.stdout)
        XCTAssertEqual(Set(leftovers(outFolder)), ["good.mcap", "rec.mcap"])
    }
}
