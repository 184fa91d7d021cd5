import XCTest
import Foundation

/// `bench --kernels align`: the depth-to-color row runs on both backends, times the copy of the
/// bytes it writes, and the GPU result equals the CPU one (max diff 0 µm).
final class BenchAlignTests: XCTestCase {
    func testAlignRowOnBothBackendsAgrees() throws {
        let r = try CLI.run(["bench", "--backend", "all", "--sizes", "160x90", "--kernels", "align", "--iterations", "2", "--json"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let json = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
        let results = try XCTUnwrap(json?["results"] as? [[String: Any]])
        XCTAssertEqual(results.count, 1)
        let x = try XCTUnwrap(results.first)
        XCTAssertEqual(x["kernel"] as? String, "align")
        XCTAssertEqual(x["size"] as? String, "160x90")
        XCTAssertNotNil(x["cpu_ms"] as? Double)
        XCTAssertNotNil(x["gpu_ms"] as? Double)
        XCTAssertNotNil(x["copy_ms"] as? Double)
        XCTAssertEqual(x["max_abs_diff"] as? Int, 0)
    }
}
