import XCTest
import Foundation
import DepthKit

/// `depthlens info FILE.ply`: point count, color, non-finite vertices; bad PLY files give one line
/// naming the file and the problem, and exit 1 (issue 8 item 5).
final class PLYInfoTests: CLITestCase {
    private let header = "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\n"

    private func write(_ name: String, _ text: String) -> String {
        let p = path(name)
        _ = FileManager.default.createFile(atPath: p, contents: Data(text.utf8))
        return p
    }

    func testInfoReportsPointsColorAndNonFinite() throws {
        let colored = write("c.ply", header + "property uchar red\nproperty uchar green\nproperty uchar blue\nend_header\n"
                            + "1 2 3 4 5 6\nnan 0 1 0 0 0\n0 0 1 0 0 0\n")
        let plain = write("p.ply", header + "property float nx\nend_header\n1 2 3 0\n4 5 6 0\n7 8 inf 0\n")
        let r = try CLI.run(["info", colored, plain])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.stdout.split(separator: "\n").map(String.init), [
            "\(colored): PLY point cloud, 2 points, with color, 1 non-finite vertices skipped",
            "\(plain): PLY point cloud, 2 points, no color, 1 non-finite vertices skipped",
        ])
    }

    func testInfoOnBinaryExportPLY() throws {
        let cloud = PointCloud(positions: [SIMD3(1, 2, 3), SIMD3(4, 5, 6)], colors: [SIMD3(1, 2, 3), SIMD3(4, 5, 6)])
        let p = path("b.ply")
        try PLYWriter.write(cloud, to: p)
        let r = try CLI.run(["info", p])
        XCTAssertEqual(r.stdout, "\(p): PLY point cloud, 2 points, with color, 0 non-finite vertices skipped\n", r.stderr)
    }

    func testBadPLYGivesOneLineNamingFileAndProblem() throws {
        let binary = "ply\nformat binary_little_endian 1.0\nelement vertex 2\nproperty float x\nproperty float y\nproperty float z\nend_header\n"
        let cases: [(String, String, String)] = [
            ("truncated.ply", binary + String(repeating: "\0", count: 20), "truncated PLY: the data ends inside vertex 1 of 2"),
            ("count.ply", header + "end_header\n1 2 3\n", "PLY header declares 3 vertices but the data holds only 1"),
            ("type.ply", header + "property float16 intensity\nend_header\n", "unknown PLY property type 'float16'"),
            ("list.ply", header + "property list uchar int vertex_indices\nend_header\n", "PLY vertex element has a list property 'vertex_indices'"),
            ("novertex.ply", "ply\nformat ascii 1.0\nelement face 0\nproperty list uchar int vertex_indices\nend_header\n", "PLY header has no vertex element"),
        ]
        for (name, text, problem) in cases {
            let p = write(name, text)
            try assertBadInput(["info", p], mentioning: "\(p): \(problem)")
            XCTAssertEqual(try CLI.run(["info", p]).status, 1, name)
        }
    }
}
