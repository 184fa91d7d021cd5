import XCTest
import Foundation
import Capture
import DepthKit

/// Depth aligned to color on the commands: `convert --align color` writes the aligner's depth at
/// the color size with a calibration that says so; `process` aligns before filters that combine
/// depth with color, and `--align none` keeps the raw depth.
final class AlignCommandTests: CLITestCase {
    private var bag: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/realsense-d435-640x480.bag").path
    }

    func testConvertAlignColorWritesTheAlignersDepth() throws {
        let out = path("aligned")
        let r = try CLI.run(["convert", "--source", "bag:\(bag)", "--align", "color", "--out", out])
        XCTAssertEqual(r.status, 0, r.stderr)
        let seq = try TUMSequence(directory: out)
        XCTAssertEqual(seq.count, 2)
        let cal = try RGBDCalibration.read(out + "/calibration.json")
        XCTAssertEqual(cal.depth.intrinsics, cal.color.intrinsics, "aligned depth is seen by the color camera")
        XCTAssertTrue(cal.depthToColor.isIdentity())
        XCTAssertFalse(cal.needsAlignment)

        // The same frame through the source and the aligner, in the recording's units.
        let source = BagSource(path: bag)
        let f = try FrameReader.frame(0, of: source)
        let recorded = try XCTUnwrap(source.calibration)
        XCTAssertTrue(recorded.needsAlignment)
        let (aligned, _) = try DepthAlignmentStage(mode: .color).apply(f, calibration: recorded)
        let expected = TUMWriter.encodeDepth(try XCTUnwrap(aligned.depth), scale: recorded.depthScale)
        let written = try ImageIO.read(seq.entries[0].depthPath)
        XCTAssertEqual(written.width, f.color.width)
        XCTAssertEqual(written.packedBytes(), expected.packedBytes())
        let valid = (0..<written.height).reduce(0) { n, y in n + (0..<written.width).filter { written.row(y, as: UInt16.self)[$0] != 0 }.count }
        XCTAssertGreaterThan(valid, written.width * written.height / 2)

        // --align none (the default) keeps the depth camera's own pixels and calibration.
        let raw = path("raw")
        XCTAssertEqual(try CLI.run(["convert", "--source", "bag:\(bag)", "--out", raw]).status, 0)
        let rawCal = try RGBDCalibration.read(raw + "/calibration.json")
        XCTAssertEqual(rawCal.depth, recorded.depth)
        XCTAssertEqual(rawCal.depthToColor, recorded.depthToColor)
    }

    func testProcessAlignsBeforeCombiningFilters() throws {
        let auto = path("auto.png"), none = path("none.png")
        // --frame 0: without it a recording is processed frame by frame into a folder.
        XCTAssertEqual(try CLI.run(["process", "--source", "bag:\(bag)", "--frame", "0", "--filter", "highpass", "--out", auto]).status, 0)
        XCTAssertEqual(try CLI.run(["process", "--source", "bag:\(bag)", "--frame", "0", "--filter", "highpass", "--align", "none", "--out", none]).status, 0)
        let a = try ImageIO.read(auto), n = try ImageIO.read(none)
        XCTAssertEqual(a.width, n.width)
        XCTAssertNotEqual(a.packedBytes(), n.packedBytes(), "a 14 mm baseline and other fields of view move the mask")
        let bad = try CLI.run(["process", "--source", "bag:\(bag)", "--filter", "mix", "--align", "sideways", "--out", path("x.png")])
        XCTAssertEqual(bad.status, 1)
        XCTAssertEqual(bad.stderrLines, ["depthlens: --align must be one of auto, color, none, got 'sideways'"])
    }
}
