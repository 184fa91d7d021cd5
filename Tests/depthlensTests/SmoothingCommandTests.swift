import XCTest
import Foundation
import DepthKit

/// `process --smooth`, `--filter depth`, and the new depth readers, run like a user.
final class SmoothingCommandTests: CLITestCase {
    func testFilterDepthWritesTheInputBackAtItsScale() throws {
        let (c, d) = try writeSyntheticPair()
        let out = path("depth-out.png")
        let r = try CLI.run(["process", "--color", c, "--depth", d, "--filter", "depth", "--out", out])
        XCTAssertEqual(r.status, 0, r.stderr)
        let a = try ImageIO.read(d), b = try ImageIO.read(out)
        XCTAssertEqual(b.width, 64); XCTAssertEqual(b.height, 48)
        XCTAssertEqual(a.packedBytes(), b.packedBytes(), "unsmoothed depth round-trips exactly at 1000 units/m")
        // At another scale the counts follow it.
        let r5 = try CLI.run(["process", "--color", c, "--depth", d, "--depth-scale", "5000", "--filter", "depth", "--out", path("d5.png")])
        XCTAssertEqual(r5.status, 0, r5.stderr)
        XCTAssertEqual(try ImageIO.read(path("d5.png")).packedBytes(), a.packedBytes())
    }

    /// A color/ + depth/ folder of a static 1 m | 1.2 m scene with 0.5 % noise and 5 % dropouts.
    private func writeNoisyFolder(frames: Int) throws -> (String, PixelBuffer) {
        let root = path("seq")
        try FileManager.default.createDirectory(atPath: root + "/color", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: root + "/depth", withIntermediateDirectories: true)
        let w = 64, h = 48
        let clean = PixelBuffer(width: w, height: h, format: .depthFloat32)
        for y in 0..<h { for x in 0..<w { clean.row(y, as: Float.self)[x] = x < 32 ? 1.0 : 1.2 } }
        var noise = DepthNoise(relativeSigma: 0.005, dropout: 0.05, seed: 11)
        for i in 0..<frames {
            let name = String(format: "%03d.png", i)
            try ImageIO.write(PixelBuffer(width: w, height: h, format: .rgba8), to: root + "/color/" + name)
            try ImageIO.write(TUMWriter.encodeDepth(DepthData(map: noise.apply(to: clean)), scale: 1000), to: root + "/depth/" + name)
        }
        return (root, clean)
    }

    private func stats(_ file: String, clean: PixelBuffer) throws -> (rms: Float, holes: Int) {
        let d = try DepthIO.readDepth(file, depthScale: 1000).map
        var sum: Float = 0, n = 0, holes = 0
        for y in 0..<d.height {
            for x in 0..<d.width where abs(x - 32) > 3 {
                let v = d.row(y, as: Float.self)[x]
                if v > 0 { sum += (v - clean.row(y, as: Float.self)[x]) * (v - clean.row(y, as: Float.self)[x]); n += 1 } else { holes += 1 }
            }
        }
        return ((sum / Float(n)).squareRoot(), holes)
    }

    func testProcessFolderSmoothsAcrossFramesInOrder() throws {
        let (root, clean) = try writeNoisyFolder(frames: 20)
        for backend in ["cpu", "gpu"] {
            let raw = path("raw-\(backend)"), smooth = path("smooth-\(backend)")
            var r = try CLI.run(["process", "--input", root, "--filter", "depth", "--backend", backend, "--out", raw])
            XCTAssertEqual(r.status, 0, r.stderr)
            r = try CLI.run(["process", "--input", root, "--filter", "depth", "--smooth", "--smooth-alpha", "0.3",
                             "--backend", backend, "--out", smooth])
            XCTAssertEqual(r.status, 0, r.stderr)
            XCTAssertFalse(r.stderr.contains("smoothing runs on the CPU"), r.stderr)
            let a = try stats(raw + "/019.png", clean: clean), b = try stats(smooth + "/019.png", clean: clean)
            XCTAssertLessThanOrEqual(b.rms, a.rms * 0.5, "\(backend): noise at least halved by frame 20")
            XCTAssertLessThanOrEqual(Float(b.holes), Float(a.holes) * 0.1, "\(backend): ≥ 90 % of holes filled")
            // The first frame has no history: only its holes are filled spatially.
            let f0 = try stats(smooth + "/000.png", clean: clean)
            XCTAssertGreaterThan(f0.rms, b.rms)
        }
        XCTAssertEqual(try ImageIO.read(path("smooth-cpu") + "/019.png").packedBytes(),
                       try ImageIO.read(path("smooth-gpu") + "/019.png").packedBytes(), "both backends write the same millimeters")
    }

    func testSmoothingOptionErrors() throws {
        let (c, d) = try writeSyntheticPair()
        let out = path("x.png")
        try assertBadInput(["process", "--color", c, "--depth", d, "--filter", "depth", "--smooth-alpha", "0.5", "--out", out],
                           mentioning: "need --smooth", noFile: out)
        try assertBadInput(["process", "--color", c, "--depth", d, "--filter", "depth", "--smooth", "--smooth-alpha", "2", "--out", out],
                           mentioning: "--smooth-alpha must be in", noFile: out)
        try assertBadInput(["process", "--color", c, "--depth", d, "--filter", "depth", "--smooth", "--hole-frames", "0", "--out", out],
                           mentioning: "--hole-frames must be in", noFile: out)
        try assertBadInput(["process", "--color", c, "--depth", d, "--filter", "depth", "--smooth", "--smooth-threshold", "nan", "--out", out],
                           mentioning: "--smooth-threshold", noFile: out)
    }

    func testEightBitDisparityAndInverseDepthInputs() throws {
        let (c, _) = try writeSyntheticPair(width: 4, height: 3)
        let disp = PixelBuffer(width: 4, height: 3, format: .gray8)
        for y in 0..<3 { for x in 0..<4 { disp.row(y, as: UInt8.self)[x] = x == 0 ? 0 : 200 } }
        try ImageIO.write(disp, to: path("disp0GT.png"))
        let out = path("d.png")
        var r = try CLI.run(["process", "--color", c, "--depth", path("disp0GT.png"), "--disparity", "--disparity-scale", "4",
                             "--focal", "1000", "--baseline", "0.1", "--doffs", "10", "--filter", "depth", "--out", out])
        XCTAssertEqual(r.status, 0, r.stderr)
        var d = try ImageIO.read(out)
        XCTAssertEqual(d.row(1, as: UInt16.self)[0], 0)
        XCTAssertEqual(d.row(1, as: UInt16.self)[2], 1667)  // 100 / 60 m in mm
        try assertBadInput(["process", "--color", c, "--depth", path("disp0GT.png"), "--disparity", "--focal", "1000",
                            "--baseline", "0.1", "--doffs", "10", "--filter", "depth", "--out", path("e.png")],
                           mentioning: "8-bit disparity needs --disparity-scale", noFile: path("e.png"))
        try assertBadInput(["process", "--color", c, "--depth", path("disp0GT.png"), "--disparity-scale", "4",
                            "--filter", "depth", "--out", path("e.png")], mentioning: "--disparity-scale needs --disparity", noFile: path("e.png"))

        let inv = PixelBuffer(width: 4, height: 3, format: .depthFloat32)
        for y in 0..<3 { for x in 0..<4 { inv.row(y, as: Float.self)[x] = 0.5 } }
        try ImageIO.write(inv, to: path("inv.pfm"))
        r = try CLI.run(["process", "--color", c, "--depth", path("inv.pfm"), "--inverse-depth", "--filter", "depth", "--out", out])
        XCTAssertEqual(r.status, 0, r.stderr)
        d = try ImageIO.read(out)
        XCTAssertEqual(d.row(2, as: UInt16.self)[3], 2000)
        try ImageIO.write(PixelBuffer(width: 4, height: 3, format: .depthFloat32), to: path("zero.pfm"))
        try assertBadInput(["process", "--color", c, "--depth", path("zero.pfm"), "--inverse-depth", "--filter", "depth",
                            "--out", path("e.png")], mentioning: "zero.pfm", noFile: path("e.png"))
    }
}

/// `record --smooth` writes smoothed depth: dropouts of a noisy TUM recording come back filled.
final class RecordSmoothingTests: CLITestCase {
    func testRecordSmoothFillsDropouts() throws {
        let src = path("noisy")
        let writer = try TUMWriter(directory: src)
        let clean = PixelBuffer(width: 64, height: 48, format: .depthFloat32)
        for y in 0..<48 { for x in 0..<64 { clean.row(y, as: Float.self)[x] = 1.5 } }
        var noise = DepthNoise(relativeSigma: 0.002, dropout: 0.1, seed: 5)
        var lastInput: PixelBuffer!
        for i in 0..<8 {
            lastInput = noise.apply(to: clean)
            try writer.append(RGBDFrame(color: PixelBuffer(width: 64, height: 48, format: .rgba8), depth: DepthData(map: lastInput),
                                        timestamp: Double(i) / 30))
        }
        try writer.finish()
        let out = path("rec")
        let r = try CLI.run(["record", "--source", "tum:\(src)", "--frames", "8", "--smooth", "--out", out])
        XCTAssertEqual(r.status, 0, r.stderr)
        let seq = try TUMSequence(directory: out)
        XCTAssertEqual(seq.entries.count, 8)
        let last = try seq.loadFrame(at: 7).depth.map
        func holes(_ b: PixelBuffer) -> Int { (0..<48).reduce(0) { n, y in n + (0..<64).filter { b.row(y, as: Float.self)[$0] == 0 }.count } }
        XCTAssertGreaterThan(holes(lastInput), 200)
        XCTAssertLessThanOrEqual(holes(last), holes(lastInput) / 10)
        try assertBadInput(["record", "--frames", "1", "--hole-frames", "3", "--out", path("r2")], mentioning: "need --smooth")
    }
}
