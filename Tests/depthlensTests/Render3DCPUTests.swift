import XCTest
import Foundation
import DepthKit

/// `render3d --points cpu` and `--backend cpu|gpu|auto`: the CPU renderer draws the compute
/// path's picture byte for byte (depth frames and PLY lists), needs no Vulkan device, and auto
/// remembers its choice. Validation on and silent.
final class Render3DCPUTests: CLITestCase {
    let validation = ["DEPTHLENS_VALIDATION": "1"]

    func render(_ args: [String], _ name: String, environment: [String: String]? = nil) throws -> (PixelBuffer, String) {
        let out = path(name)
        let r = try CLI.run(["render3d", "--out", out] + args, environment: validation.merging(environment ?? [:]) { $1 })
        XCTAssertEqual(r.status, 0, r.stderr)
        return (try ImageIO.read(out), r.stdout + r.stderr)
    }

    func testCPUDrawsTheComputePicture() throws {
        for extra in [["--point-size", "1"], ["--point-size", "2", "--pitch", "-15"], ["--point-size", "3", "--color-by", "depth"]] {
            let view = ["--synthetic", "--width", "200", "--height", "150", "--yaw", "25"] + extra
            let (gpu, _) = try render(view + ["--points", "compute"], "gpu.png")
            let (cpu, said) = try render(view + ["--points", "cpu"], "cpu.png")
            XCTAssertTrue(said.contains("on the CPU"), said)
            XCTAssertEqual(cpu.packedBytes(), gpu.packedBytes(), "\(extra)")
        }
        let ply = path("scene.ply")
        XCTAssertEqual(try CLI.run(["export-ply", "--synthetic", "--out", ply]).status, 0)
        for extra in [["--point-size", "2"], ["--color-by", "height", "--yaw", "40"]] {
            let view = ["--ply", ply, "--width", "160", "--height", "120"] + extra
            let (gpu, _) = try render(view + ["--points", "compute"], "pgpu.png")
            let (cpu, _) = try render(view + ["--points", "cpu"], "pcpu.png")
            XCTAssertEqual(cpu.packedBytes(), gpu.packedBytes(), "\(extra)")
        }
    }

    /// No device: --points cpu draws; --backend auto says why it draws on the CPU and does.
    func testCPUNeedsNoDevice() throws {
        let none = ["DEPTHLENS_DEVICE": "no-such-device-here"]
        let (img, said) = try render(["--synthetic", "--width", "64", "--height", "48", "--points", "cpu", "--repeat", "2"], "a.png",
                                     environment: none)
        XCTAssertEqual(img.width, 64)
        XCTAssertTrue(said.contains("render3d cpu 64x48"), said)
        let (auto, note) = try render(["--synthetic", "--width", "64", "--height", "48", "--backend", "auto"], "b.png",
                                      environment: none.merging(["XDG_CACHE_HOME": path("cache")]) { $1 })
        XCTAssertEqual(auto.packedBytes(), img.packedBytes())
        XCTAssertTrue(note.contains("drawing points on the CPU"), note)
        let r = try CLI.run(["render3d", "--synthetic", "--points", "compute", "--out", path("c.png")], environment: none)
        XCTAssertEqual(r.status, 1)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("c.png")))
    }

    /// --backend auto times cpu and compute once and keeps the faster in the cache; the picture is
    /// the same either way.
    func testBackendAutoRemembersItsChoice() throws {
        let cache = path("cache")
        let view = ["--synthetic", "--width", "96", "--height", "72", "--point-size", "2"]
        let (auto, _) = try render(view + ["--backend", "auto"], "auto.png", environment: ["XDG_CACHE_HOME": cache])
        let (cpu, _) = try render(view + ["--backend", "cpu"], "cpu.png")
        XCTAssertEqual(auto.packedBytes(), cpu.packedBytes())
        let json = try String(contentsOfFile: cache + "/depthlens/backend-choice.json", encoding: .utf8)
        XCTAssertTrue(json.contains("|points 640x480|96x72"), json)
    }

    func testBadChoicesAreOneLineErrors() throws {
        let out = path("bad.png")
        try assertBadInput(["render3d", "--synthetic", "--points", "cpu", "--atomics", "32", "--out", out], mentioning: "--atomics", noFile: out)
        try assertBadInput(["render3d", "--synthetic", "--backend", "cpu", "--points", "compute", "--out", out], mentioning: "--backend", noFile: out)
        try assertBadInput(["render3d", "--synthetic", "--backend", "auto", "--points", "cpu", "--out", out], mentioning: "--backend auto", noFile: out)
        try assertBadInput(["render3d", "--synthetic", "--backend", "fast", "--out", out], mentioning: "--backend", noFile: out)
        try assertBadInput(["render3d", "--synthetic", "--points", "gpu", "--out", out], mentioning: "points", noFile: out)
    }

    /// `bench --point-cloud-only`: a cpu column beside raster and compute, rows in --json, and CPU
    /// rows without the GPU.
    func testBenchHasCPUPointRows() throws {
        let r = try CLI.run(["bench", "--point-cloud-only", "--backend", "cpu", "--iterations", "1", "--json"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let rows = try XCTUnwrap(json["points"] as? [[String: Any]])
        XCTAssertEqual(rows.map { $0["points"] as? Int }, [307_200, 2_073_600, 2_000_000])
        for row in rows {
            XCTAssertEqual(row["size"] as? String, "1280x720")
            XCTAssertGreaterThan(row["cpu_ms"] as? Double ?? 0, 0)
            XCTAssertNil(row["compute_ms"]); XCTAssertNil(row["raster_ms"])
        }
        let t = try CLI.run(["bench", "--point-cloud-only", "--iterations", "1"], environment: validation)
        XCTAssertEqual(t.status, 0, t.stderr)
        let lines = t.stdout.split(separator: "\n")
        XCTAssertTrue(lines.contains { $0.contains("raster") && $0.contains("compute") && $0.hasSuffix("cpu") }, t.stdout)
        let first = try XCTUnwrap(lines.first { $0.hasPrefix("depth 640x480") })
        XCTAssertEqual(first.split(separator: "(").count, 4, "raster, compute and cpu timed: \(first)")
    }
}
