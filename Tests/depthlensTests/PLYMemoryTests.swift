import XCTest
import Foundation

/// A point cloud that would not fit in the memory still available is refused before it is loaded,
/// by every command that loads one (`DEPTHLENS_MEMORY_AVAILABLE` stands in for a small machine).
final class PLYMemoryTests: CLITestCase {
    func testEveryPLYReaderRefusesACloudThatWouldNotFit() throws {
        let ply = path("scene.ply"), out = path("r.png")
        let e = try CLI.run(["export-ply", "--synthetic", "--out", ply])
        XCTAssertEqual(e.status, 0, e.stderr)
        let small = ["DEPTHLENS_MEMORY_AVAILABLE": "1000000"]
        for args in [["render3d", "--source", "ply:" + ply, "--out", out], ["info", ply], ["info", "--source", "ply:" + ply]] {
            try assertBadInput(args, mentioning: "of memory and only 1 MiB is available; not loaded", noFile: out, environment: small)
        }
        let r = try CLI.run(["render3d", "--source", "ply:" + ply, "--width", "64", "--height", "48", "--out", out],
                            environment: ["DEPTHLENS_MEMORY_AVAILABLE": "1000000000"])
        XCTAssertEqual(r.status, 0, r.stderr)
    }
}
