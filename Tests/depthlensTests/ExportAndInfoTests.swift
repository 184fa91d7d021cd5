import XCTest
import Foundation
import DepthKit

final class ExportAndInfoTests: CLITestCase {
    func testExportPLYReadsBackWithTheValidPointCount() throws {
        let (c, d) = try writeSyntheticPair(width: 32, height: 24)
        for ascii in [false, true] {
            let out = path(ascii ? "a.ply" : "b.ply")
            let r = try CLI.run(["export-ply", "--color", c, "--depth", d, "--out", out] + (ascii ? ["--ascii"] : []))
            XCTAssertEqual(r.status, 0, r.stderr)
            let cloud = try PLYReader.read(out)
            let depth = try DepthIO.readDepth(d, depthScale: 1000)
            XCTAssertEqual(cloud.positions.count, depth.depthStatistics().validCount)
            XCTAssertEqual(cloud, PointCloud.unproject(depth: depth, color: try ImageIO.readColor(c)))
        }
    }

    func testExportPLYWithIntrinsics() throws {
        let (c, d) = try writeSyntheticPair(width: 32, height: 24)
        let out = path("k.ply")
        XCTAssertEqual(try CLI.run(["export-ply", "--color", c, "--depth", d, "--intrinsics", "100,100,0,0", "--out", out]).status, 0)
        let cloud = try PLYReader.read(out)
        let depth = try DepthIO.readDepth(d, depthScale: 1000)
        // Pixel (0, 0) is valid on the wall: with cx = cy = 0 it unprojects to x = y = 0.
        XCTAssertTrue(isValidDepth(depth.map.sample(x: 0, y: 0)))
        XCTAssertEqual(cloud.positions[0].x, 0); XCTAssertEqual(cloud.positions[0].y, 0)
        try assertBadInput(["export-ply", "--color", c, "--depth", d, "--intrinsics", "1,2,3", "--out", path("x.ply")],
                           mentioning: "--intrinsics", noFile: path("x.ply"))
    }

    func testInfoPrintsSizeFormatValidCountAndRange() throws {
        let (c, d) = try writeSyntheticPair(width: 32, height: 24)
        let r = try CLI.run(["info", c, d])
        XCTAssertEqual(r.status, 0, r.stderr)
        let lines = r.stdout.split(separator: "\n")
        XCTAssertEqual(lines.count, 2)
        XCTAssertTrue(lines[0].contains("32x24 rgba8"), String(lines[0]))
        XCTAssertTrue(lines[1].contains("32x24 gray16"), String(lines[1]))
        XCTAssertTrue(lines[1].contains("min 1.000 m, max 3.000 m"), String(lines[1]))
        let bad = try CLI.run(["info", path("missing.png")])
        XCTAssertNotEqual(bad.status, 0)
        XCTAssertTrue(bad.stderr.contains("missing.png"))
    }

    func testBenchCPUPrintsJSONWithCopyBaseline() throws {
        let r = try CLI.run(["bench", "--backend", "cpu", "--sizes", "32x24", "--kernels", "rosy,jet", "--iterations", "2", "--json"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let json = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
        let results = try XCTUnwrap(json?["results"] as? [[String: Any]])
        XCTAssertEqual(results.map { $0["kernel"] as? String }, ["rosy", "jet"])
        for x in results {
            XCTAssertEqual(x["size"] as? String, "32x24")
            XCTAssertNotNil(x["cpu_ms"] as? Double)
            XCTAssertNotNil(x["copy_ms"] as? Double)
        }
    }
}
