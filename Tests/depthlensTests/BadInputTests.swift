import XCTest
import Foundation
import DepthKit

/// docs/design/overview.md (conventions): bad input → one clear line naming the file and the problem, exit status ≠ 0,
/// no crash, no partial output file. One test per kind of bad input.
final class BadInputTests: CLITestCase {
    func process(color: String, depth: String, _ extra: [String] = [], out: String) -> [String] {
        ["process", "--color", color, "--depth", depth, "--filter", "jet", "--out", out] + extra
    }

    func testMissingFile() throws {
        let (c, _) = try writeSyntheticPair()
        let out = path("o.png")
        try assertBadInput(process(color: c, depth: path("nope.png"), out: out), mentioning: "nope.png", noFile: out)
    }

    func testEmptyFile() throws {
        let (c, _) = try writeSyntheticPair()
        _ = FileManager.default.createFile(atPath: path("empty.png"), contents: Data())
        let out = path("o.png")
        try assertBadInput(process(color: c, depth: path("empty.png"), out: out), mentioning: "empty.png", noFile: out)
    }

    func testTruncatedPNG() throws {
        let (c, d) = try writeSyntheticPair()
        let bytes = try Data(contentsOf: URL(fileURLWithPath: d))
        try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: path("half.png")))
        let out = path("o.png")
        try assertBadInput(process(color: c, depth: path("half.png"), out: out), mentioning: "half.png", noFile: out)
    }

    func testCorruptPNGColor() throws {
        let (_, d) = try writeSyntheticPair()
        var bytes: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        bytes += [UInt8](repeating: 7, count: 100)
        try Data(bytes).write(to: URL(fileURLWithPath: path("bad.png")))
        let out = path("o.png")
        try assertBadInput(process(color: path("bad.png"), depth: d, out: out), mentioning: "bad.png", noFile: out)
    }

    func testTruncatedPGM() throws {
        let (c, _) = try writeSyntheticPair()
        var pgm = Data("P5\n64 48\n65535\n".utf8)
        pgm.append(Data(repeating: 1, count: 100))
        try pgm.write(to: URL(fileURLWithPath: path("d.pgm")))
        let out = path("o.png")
        try assertBadInput(process(color: c, depth: path("d.pgm"), out: out), mentioning: "d.pgm", noFile: out)
    }

    func testPFMWhoseHeaderLiesAboutItsSize() throws {
        let (c, _) = try writeSyntheticPair()
        var pfm = Data("Pf\n640 480\n-1.0\n".utf8)
        pfm.append(Data(repeating: 0, count: 64 * 48 * 4))
        try pfm.write(to: URL(fileURLWithPath: path("d.pfm")))
        let out = path("o.png")
        try assertBadInput(process(color: c, depth: path("d.pfm"), out: out), mentioning: "d.pfm", noFile: out)
    }

    func testCorruptPFMHeader() throws {
        let (c, _) = try writeSyntheticPair()
        try Data("Pf\nabc def\n-1.0\n".utf8).write(to: URL(fileURLWithPath: path("d.pfm")))
        let out = path("o.png")
        try assertBadInput(process(color: c, depth: path("d.pfm"), out: out), mentioning: "d.pfm", noFile: out)
    }

    func testColorAndDepthOfDifferentAspect() throws {
        let (c, _) = try writeSyntheticPair(width: 64, height: 48)
        let d = PixelBuffer(width: 10, height: 10, format: .gray16(depthScale: 1000))
        for y in 0..<10 { for x in 0..<10 { d.setSample(x: x, y: y, 1000) } }
        try ImageIO.write(d, to: path("square.png"))
        let out = path("o.png")
        try assertBadInput(process(color: c, depth: path("square.png"), out: out), mentioning: "aspect", noFile: out)
    }

    func testAllInvalidDepth() throws {
        let (c, _) = try writeSyntheticPair()
        try ImageIO.write(PixelBuffer(width: 64, height: 48, format: .gray16(depthScale: 1000)), to: path("zero.png"))
        let out = path("o.png")
        try assertBadInput(process(color: c, depth: path("zero.png"), out: out), mentioning: "zero.png", noFile: out)
    }

    func testNaNInfAndNegativeDepthAreInvalidNotNumbers() throws {
        let (c, _) = try writeSyntheticPair(width: 4, height: 3)
        let d = PixelBuffer(width: 4, height: 3, format: .depthFloat32)
        let values: [Float] = [.nan, .infinity, -.infinity, -1, 0, 1, 2, 1, 2, 1, 2, 1]
        for (i, v) in values.enumerated() { d.setSample(x: i % 4, y: i / 4, v) }
        try ImageIO.write(d, to: path("d.pfm"))
        let out = path("g.png")
        let r = try CLI.run(["process", "--color", c, "--depth", path("d.pfm"), "--filter", "grayscale", "--out", out])
        XCTAssertEqual(r.status, 0, r.stderr)
        let img = try ImageIO.read(out)
        for i in 0..<5 { XCTAssertEqual(img.rgba(x: i % 4, y: i / 4).0, 0, "invalid sample \(values[i]) is black") }
        XCTAssertEqual(img.rgba(x: 2, y: 1).0, 255) // 2 m is the max → white
        let info = try CLI.run(["info", path("d.pfm")])
        XCTAssertTrue(info.stdout.contains("valid depth 7/12"), info.stdout)
        XCTAssertTrue(info.stdout.contains("min 1.000 m, max 2.000 m"), info.stdout)
    }

    func testZeroAndNegativeDepthScale() throws {
        let (c, d) = try writeSyntheticPair()
        let out = path("o.png")
        try assertBadInput(process(color: c, depth: d, ["--depth-scale", "0"], out: out), mentioning: "--depth-scale", noFile: out)
        try assertBadInput(process(color: c, depth: d, ["--depth-scale=-5"], out: out), mentioning: "--depth-scale", noFile: out)
    }

    func testUnknownFilterName() throws {
        let out = path("o.png")
        try assertBadInput(["process", "--synthetic", "--filter", "sepia", "--out", out], mentioning: "sepia", noFile: out)
    }

    func testBadNumbers() throws {
        let out = path("o.png")
        try assertBadInput(["process", "--synthetic", "--filter", "mix", "--mix", "abc", "--out", out], mentioning: "--mix", noFile: out)
        try assertBadInput(["process", "--synthetic", "--filter", "mix", "--mix", "2", "--out", out], mentioning: "--mix", noFile: out)
        try assertBadInput(["process", "--synthetic", "--filter", "jet", "--min", "3", "--max", "1", "--out", out], mentioning: "--max", noFile: out)
        try assertBadInput(["process", "--synthetic", "--filter", "jet", "--min", "nan", "--out", out], mentioning: "--min", noFile: out)
        try assertBadInput(["process", "--synthetic", "--filter", "jet", "--max", "20", "--out", out], mentioning: "--max", noFile: out)
        try assertBadInput(["process", "--synthetic", "--filter", "highpass", "--focus", "1.5", "--out", out], mentioning: "--focus", noFile: out)
    }

    func testUnwritableOutputLeavesNothing() throws {
        let out = path("no/such/dir/o.png")
        try assertBadInput(["process", "--synthetic", "--filter", "jet", "--out", out], mentioning: "o.png", noFile: out)
    }
}
