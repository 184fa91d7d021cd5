import XCTest
import Foundation
import DepthKit

/// `process` with the depth masks and effects: `--backend gpu` really runs them on the GPU and
/// writes what the CPU writes (1 LSB); `--filter portrait` is the viewer's portrait mode.
final class EffectProcessTests: CLITestCase {
    func maxDiff(_ a: String, _ b: String) throws -> Int {
        let x = try ImageIO.read(a), y = try ImageIO.read(b)
        XCTAssertEqual(x.frameFormat, y.frameFormat, "\(a) vs \(b)")
        return zip(x.packedBytes(), y.packedBytes()).map { abs(Int($0) - Int($1)) }.max() ?? 0
    }

    func testMasksAndEffectsRunOnTheGPU() throws {
        // Depth at half the color size: the GPU scales the mask.
        let d = try writeSyntheticPair(width: 48, height: 36).depth
        let c = path("color96.png")
        try ImageIO.write(SyntheticScene().render(width: 96, height: 72, time: 0).color, to: c)
        let bg = path("background.png")
        try ImageIO.write(SyntheticScene().render(width: 40, height: 30, time: 3).color, to: bg)
        let runs: [[String]] = [["highpass"], ["bandpass"], ["bandpass", "--sharp"], ["comic"], ["greenscreen"],
                                ["greenscreen", "--background", bg], ["blur", "--focus", "0.3"], ["portrait"]]
        for (i, args) in runs.enumerated() {
            var outs: [String] = []
            for backend in ["cpu", "gpu"] {
                let out = path("\(i)-\(backend).png")
                let r = try CLI.run(["process", "--color", c, "--depth", d, "--backend", backend, "--out", out, "--filter"] + args)
                XCTAssertEqual(r.status, 0, "\(args): \(r.stderr)")
                XCTAssertEqual(r.stderr, "", "\(args) \(backend): nothing to say")
                XCTAssertEqual(r.stdout.contains(", cpu)"), backend == "cpu", "\(args) \(backend): \(r.stdout)")
                outs.append(out)
            }
            XCTAssertLessThanOrEqual(try maxDiff(outs[0], outs[1]), 1, "\(args)")
            XCTAssertEqual(try ImageIO.read(outs[1]).width, 96, "\(args): at the color size")
        }
    }

    func testPortraitIsBlurUnderASharpHighPass() throws {
        let (c, d) = try writeSyntheticPair(width: 80, height: 60)
        for (name, args) in [("p", ["portrait"]), ("ps", ["portrait", "--sharp"]), ("bs", ["blur", "--sharp"]), ("b", ["blur"])] {
            let r = try CLI.run(["process", "--color", c, "--depth", d, "--focus", "0.6", "--out", path("\(name).png"), "--filter"] + args)
            XCTAssertEqual(r.status, 0, r.stderr)
        }
        XCTAssertEqual(try maxDiff(path("p.png"), path("bs.png")), 0, "portrait = blur with the sharp mask")
        XCTAssertEqual(try maxDiff(path("p.png"), path("ps.png")), 0, "portrait is always sharp")
        XCTAssertGreaterThan(try maxDiff(path("p.png"), path("b.png")), 10, "the soft blur differs")
    }
}
