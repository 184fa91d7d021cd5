import XCTest
import Foundation
import DepthKit

final class ProcessCommandTests: CLITestCase {
    func testSyntheticJETIsRedNearAndBlueFar() throws {
        let out = path("jet.png")
        let r = try CLI.run(["process", "--synthetic", "--filter", "jet", "--out", out])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("wrote \(out)"))
        let img = try ImageIO.read(out)
        XCTAssertEqual(img.width, 640); XCTAssertEqual(img.height, 480)
        // The box (1 m, nearest) is red; the wall (3 m, farthest) is blue.
        let box = SyntheticScene.boxRect.pixels(width: 640, height: 480)
        let near = img.rgba(x: (box.x.lowerBound + box.x.upperBound) / 2, y: (box.y.lowerBound + box.y.upperBound) / 2)
        XCTAssertGreaterThan(near.0, 150); XCTAssertLessThan(near.2, 60)
        let far = img.rgba(x: 5, y: 5)
        XCTAssertGreaterThan(far.2, 100); XCTAssertLessThan(far.0, 30)
    }

    func testEveryFilterWritesAnImageOfTheDocumentedSize() throws {
        let (c, d) = try writeSyntheticPair(width: 64, height: 48)
        for f in ["rosy", "grayscale", "jet", "turbo", "viridis", "mix", "highpass", "bandpass", "comic", "greenscreen", "blur", "portrait"] {
            let out = path("\(f).png")
            let r = try CLI.run(["process", "--color", c, "--depth", d, "--filter", f, "--out", out])
            XCTAssertEqual(r.status, 0, "\(f): \(r.stderr)")
            let img = try ImageIO.read(out)
            XCTAssertEqual(img.width, 64, f); XCTAssertEqual(img.height, 48, f)
        }
    }

    func testMixZeroIsTheColorAndOneIsJET() throws {
        let (c, d) = try writeSyntheticPair()
        try CLI.run(["process", "--color", c, "--depth", d, "--filter", "mix", "--mix", "0", "--out", path("m0.png")])
        try CLI.run(["process", "--color", c, "--depth", d, "--filter", "mix", "--mix", "1", "--out", path("m1.png")])
        try CLI.run(["process", "--color", c, "--depth", d, "--filter", "jet", "--out", path("jet.png")])
        XCTAssertEqual(try ImageIO.read(path("m0.png")).packedBytes(), try ImageIO.readColor(c).packedBytes())
        XCTAssertEqual(try ImageIO.read(path("m1.png")).packedBytes(), try ImageIO.read(path("jet.png")).packedBytes())
    }

    func testFolderOfTUMFramesWritesOneOutputPerFrame() throws {
        let tum = path("tum")
        let w = try TUMWriter(directory: tum)
        for i in 0..<3 {
            var f = SyntheticScene().render(width: 32, height: 24, time: Double(i) * 0.1)
            f.timestamp = 100 + Double(i) * 0.1
            try w.append(f)
        }
        try w.finish()
        let out = path("out")
        let r = try CLI.run(["process", "--input", tum, "--filter", "grayscale", "--out", out])
        XCTAssertEqual(r.status, 0, r.stderr)
        let files = try FileManager.default.contentsOfDirectory(atPath: out).sorted()
        XCTAssertEqual(files, ["100.000000.png", "100.100000.png", "100.200000.png"])
    }

    func testGrayscaleHonorsMinAndMax() throws {
        let (c, d) = try writeSyntheticPair()
        let out = path("g.png")
        XCTAssertEqual(try CLI.run(["process", "--color", c, "--depth", d, "--filter", "grayscale",
                                    "--min", "1", "--max", "3", "--out", out]).status, 0)
        let img = try ImageIO.read(out)
        let box = SyntheticScene.boxRect.pixels(width: 64, height: 48)
        XCTAssertEqual(img.rgba(x: (box.x.lowerBound + box.x.upperBound) / 2, y: (box.y.lowerBound + box.y.upperBound) / 2).0, 0)   // 1 m → 0
        XCTAssertEqual(img.rgba(x: 1, y: 1).0, 255)               // 3 m → 1
    }

    func testGPUBackendMatchesCPUAndFallsBackWithoutADevice() throws {
        let (c, d) = try writeSyntheticPair()
        XCTAssertEqual(try CLI.run(["process", "--color", c, "--depth", d, "--filter", "mix", "--backend", "gpu", "--out", path("g.png")]).status, 0)
        XCTAssertEqual(try CLI.run(["process", "--color", c, "--depth", d, "--filter", "mix", "--backend", "cpu", "--out", path("c.png")]).status, 0)
        let g = try ImageIO.read(path("g.png")).packedBytes(), cpu = try ImageIO.read(path("c.png")).packedBytes()
        XCTAssertEqual(zip(g, cpu).map { abs(Int($0) - Int($1)) }.max(), 0)
        // No Vulkan driver: one line saying how to get one, then the CPU result.
        let r = try CLI.run(["process", "--color", c, "--depth", d, "--filter", "mix", "--backend", "gpu", "--out", path("n.png")],
                            environment: ["VK_ICD_FILENAMES": "/nonexistent/icd.json", "VK_DRIVER_FILES": "/nonexistent/icd.json"],
                            unsetting: ["DEPTHLENS_VALIDATION"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.stderrLines.count, 1, r.stderr)
        XCTAssertTrue(r.stderr.contains("mesa-vulkan-drivers"), r.stderr)
        XCTAssertEqual(try ImageIO.read(path("n.png")).packedBytes(), cpu)
    }

    func testAutoBackendRemembersItsChoice() throws {
        let (c, d) = try writeSyntheticPair()
        let cache = dir.appendingPathComponent("cache").path
        let r = try CLI.run(["process", "--color", c, "--depth", d, "--filter", "jet", "--backend", "auto", "--out", path("a.png")],
                            environment: ["XDG_CACHE_HOME": cache])
        XCTAssertEqual(r.status, 0, r.stderr)
        let data = try Data(contentsOf: URL(fileURLWithPath: cache + "/depthlens/backend-choice.json"))
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: [String: Any]])
        let entry = try XCTUnwrap(json.first { $0.key.hasSuffix("|jet|64x48") }?.value)
        XCTAssertTrue(["cpu", "gpu"].contains(entry["backend"] as? String ?? ""))
        XCTAssertNotNil(entry["cpuMs"] as? Double)
    }
}
