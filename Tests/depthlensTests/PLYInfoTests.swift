import XCTest
import Foundation
import DepthKit

/// `depthlens info FILE.ply`: point count, color, non-finite vertices, then the format, every
/// element with its properties, what gave color, alpha and normals, and the bounding box; bad PLY
/// files give one line naming the file and the problem, and exit 1 (issue 8 item 5, issue 19 item 4).
final class PLYInfoTests: CLITestCase {
    private let header = "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\n"

    private func write(_ name: String, _ bytes: [UInt8]) -> String {
        let p = path(name)
        XCTAssertTrue(FileManager.default.createFile(atPath: p, contents: Data(bytes)))
        return p
    }

    private func write(_ name: String, _ text: String) -> String { write(name, Array(text.utf8)) }

    func testInfoReportsPointsColorNonFiniteElementsAndBoundingBox() throws {
        let colored = write("c.ply", header + "property uchar red\nproperty uchar green\nproperty uchar blue\nend_header\n"
                            + "1 2 3 4 5 6\nnan 0 1 0 0 0\n0 -0.5 1 0 0 0\n")
        let plain = write("p.ply", header + "property float nx\nend_header\n1 2 3 0\n4 5 6 0\n7 8 inf 0\n")
        let r = try CLI.run(["info", colored, plain])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.stdout.split(separator: "\n").map(String.init), [
            "\(colored): PLY point cloud, 2 points, with color, 1 non-finite vertices skipped",
            "  format ascii",
            "  element vertex 3: float x, float y, float z, uchar red, uchar green, uchar blue",
            "  color: red green blue; alpha: none; normals: none",
            "  bounding box: min (0.0, -0.5, 1.0), max (1.0, 2.0, 3.0), size (1.0, 2.5, 2.0)",
            "\(plain): PLY point cloud, 2 points, no color, 1 non-finite vertices skipped",
            "  format ascii",
            "  element vertex 3: float x, float y, float z, float nx",
            "  color: none; alpha: none; normals: none",
            "  bounding box: min (1.0, 2.0, 3.0), max (4.0, 5.0, 6.0), size (3.0, 3.0, 3.0)",
        ])
    }

    func testInfoOnBinaryExportPLY() throws {
        let cloud = PointCloud(positions: [SIMD3(1, 2, 3), SIMD3(4, 5, 6)], colors: [SIMD3(1, 2, 3), SIMD3(4, 5, 6)])
        let p = path("b.ply")
        try PLYWriter.write(cloud, to: p)
        let r = try CLI.run(["info", p])
        XCTAssertEqual(r.stdout, """
            \(p): PLY point cloud, 2 points, with color, 0 non-finite vertices skipped
              format binary_little_endian
              element vertex 2: float x, float y, float z, uchar red, uchar green, uchar blue
              color: red green blue; alpha: none; normals: none
              bounding box: min (1.0, 2.0, 3.0), max (4.0, 5.0, 6.0), size (3.0, 3.0, 3.0)

            """, r.stderr)
    }

    /// A 3D Gaussian Splatting file (SH DC color, opacity logit, zero normals) with header lines
    /// ending in a bare CR, a face element before the vertices and an empty one after.
    func testInfoOnGaussianSplattingFileWithBareCRLines() throws {
        let props = ["x", "y", "z", "nx", "ny", "nz", "f_dc_0", "f_dc_1", "f_dc_2", "opacity", "scale_0"]
        let text = "ply \rformat binary_big_endian 1.0\rcomment 3dgs\relement face 1\rproperty list uchar int vertex_indices\r"
            + "element vertex 2\r" + props.map { "property float \($0)\r" }.joined()
            + "element edge 0\rproperty int vertex1\rend_header\r"
        var bytes = Array(text.utf8) + [1, 0, 0, 0, 0]
        for v: [Float] in [[-1.5, 2, 0.25, 0, 0, 0, 0, 1, -1, 0, -4], [3, -2, 8, 0, 0, 0, 5, 5, 5, 2, -4]] {
            for f in v { withUnsafeBytes(of: f.bitPattern.bigEndian) { bytes += $0 } }
        }
        let p = write("splat.ply", bytes)
        let r = try CLI.run(["info", p])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.stdout.split(separator: "\n").map(String.init), [
            "\(p): PLY point cloud, 2 points, with color, 0 non-finite vertices skipped",
            "  format binary_big_endian, header lines end in CR",
            "  element face 1: list uchar int vertex_indices",
            "  element vertex 2: " + props.map { "float \($0)" }.joined(separator: ", "),
            "  element edge 0: int vertex1",
            "  color: f_dc_0 f_dc_1 f_dc_2 (3DGS SH DC: 0.5 + 0.28209479·f_dc); alpha: opacity (3DGS logit: sigmoid); normals: nx ny nz",
            "  bounding box: min (-1.5, -2.0, 0.25), max (3.0, 2.0, 8.0), size (4.5, 4.0, 7.75)",
        ])
    }

    func testInfoOnEmptyCloud() throws {
        let p = write("e.ply", "ply\r\nformat ascii 1.0\r\nelement vertex 0\r\nproperty double x\r\nproperty double y\r\n"
                      + "property double z\r\nproperty float r\r\nproperty float g\r\nproperty float b\r\nproperty float a\r\nend_header\r\n")
        let r = try CLI.run(["info", p])
        XCTAssertEqual(r.stdout.split(separator: "\n").map(String.init), [
            "\(p): PLY point cloud, 0 points, with color, 0 non-finite vertices skipped",
            "  format ascii",
            "  element vertex 0: double x, double y, double z, float r, float g, float b, float a",
            "  color: r g b; alpha: a; normals: none",
            "  bounding box: none (no points)",
        ], r.stderr)
    }

    func testBadPLYGivesOneLineNamingFileAndProblem() throws {
        let binary = "ply\nformat binary_little_endian 1.0\nelement vertex 2\nproperty float x\nproperty float y\nproperty float z\nend_header\n"
        let cases: [(String, String, String)] = [
            ("truncated.ply", binary + String(repeating: "\0", count: 20), "truncated PLY: the data ends inside vertex 1 of 2"),
            ("truncated-cr.ply", binary.replacingOccurrences(of: "\n", with: "\r") + String(repeating: "\n", count: 20),
             "truncated PLY: the data ends inside vertex 1 of 2"),
            ("count.ply", header + "end_header\n1 2 3\n", "PLY header declares 3 vertices but the data holds only 1"),
            ("type.ply", header + "property float16 intensity\nend_header\n", "unknown PLY property type 'float16'"),
            ("list.ply", header + "property list uchar int vertex_indices\nend_header\n", "PLY vertex element has a list property 'vertex_indices'"),
            ("novertex.ply", "ply\nformat ascii 1.0\nelement face 0\nproperty list uchar int vertex_indices\nend_header\n", "PLY header has no vertex element"),
            ("noend.ply", header.replacingOccurrences(of: "\n", with: "\r"), "corrupt PLY header: no end_header line"),
            ("notply.ply", "plyfoo\n" + header, "not a PLY file"),
        ]
        for (name, text, problem) in cases {
            let p = write(name, text)
            try assertBadInput(["info", p], mentioning: "\(p): \(problem)")
            XCTAssertEqual(try CLI.run(["info", p]).status, 1, name)
        }
    }
}
