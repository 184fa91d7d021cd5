import XCTest
import Foundation
@testable import DepthKit

final class PointCloudTests: XCTestCase {
    /// 4x2 depth with one invalid pixel per row; color at twice the resolution.
    private func sample() -> (DepthData, PixelBuffer) {
        let depth = floatMap(4, 2) { x, y in
            if (x, y) == (1, 0) { return 0 }
            if (x, y) == (3, 1) { return .nan }
            return 1 + Float(x) * 0.5 + Float(y)
        }
        let color = PixelBuffer(width: 8, height: 4, format: .rgba8)
        for y in 0..<4 { for x in 0..<8 { color.setRGBA(x: x, y: y, (UInt8(x * 10), UInt8(y * 10), 7, 255)) } }
        return (DepthData(map: depth), color)
    }

    func testUnprojectMatchesHandComputedPoints() {
        let (depth, color) = sample()
        let k = CameraIntrinsics(fx: 2, fy: 4, cx: 1.5, cy: 0.5, width: 4, height: 2)
        let cloud = PointCloud.unproject(depth: depth, color: color, intrinsics: k)
        // Row-major, (1,0) and (3,1) skipped.
        let pixels = [(0, 0), (2, 0), (3, 0), (0, 1), (1, 1), (2, 1)]
        XCTAssertEqual(cloud.count, pixels.count)
        for (i, (u, v)) in pixels.enumerated() {
            let z = 1 + Float(u) * 0.5 + Float(v)
            let expected = SIMD3<Float>((Float(u) - 1.5) * z / 2, (Float(v) - 0.5) * z / 4, z)
            XCTAssertEqual(cloud.positions[i], expected, "pixel \(u),\(v)")
            // Color at (u·8/4, v·4/2).
            XCTAssertEqual(cloud.colors[i], SIMD3(UInt8(u * 2 * 10), UInt8(v * 2 * 10), 7))
        }
    }

    func testDefaultIntrinsicsAndNoColor() {
        let (depth, _) = sample()
        let cloud = PointCloud.unproject(depth: depth, color: nil)
        let k = CameraIntrinsics.default(width: 4, height: 2)
        XCTAssertEqual(cloud.positions[0], k.unproject(u: 0, v: 0, depth: 1))
        XCTAssertTrue(cloud.colors.allSatisfy { $0 == SIMD3(255, 255, 255) })
    }

    func testPLYRoundTripBothEncodings() throws {
        let dir = TempDir()
        let (depth, color) = sample()
        let cloud = PointCloud.unproject(depth: depth, color: color)
        for ascii in [false, true] {
            let p = dir.file(ascii ? "a.ply" : "b.ply")
            try PLYWriter.write(cloud, to: p, ascii: ascii)
            let back = try PLYReader.read(p)
            XCTAssertEqual(back, cloud, ascii ? "ascii" : "binary")
        }
        let bytes = try FileSupport.readAll(dir.file("b.ply"))
        let text = String(decoding: bytes.prefix(300), as: UTF8.self)
        XCTAssertTrue(text.hasPrefix("ply\nformat binary_little_endian 1.0\n"))
        XCTAssertTrue(text.contains("element vertex 6\nproperty float x\nproperty float y\nproperty float z\nproperty uchar red\nproperty uchar green\nproperty uchar blue\nend_header\n"))
        let headerEnd = text.range(of: "end_header\n")!.upperBound
        XCTAssertEqual(bytes.count - text.utf8.distance(from: text.startIndex, to: headerEnd), 6 * 15)
    }

    func testHandWrittenASCIIPLY() throws {
        let dir = TempDir()
        let p = dir.write("h.ply", Array("""
        ply
        format ascii 1.0
        comment hand written
        element vertex 2
        property float x
        property float y
        property float z
        property uchar red
        property uchar green
        property uchar blue
        element face 0
        property list uchar int vertex_indices
        end_header
        1 2 3 255 0 0
        -0.5 0.25 4 0 128 255

        """.utf8))
        let c = try PLYReader.read(p)
        XCTAssertEqual(c.positions, [SIMD3(1, 2, 3), SIMD3(-0.5, 0.25, 4)])
        XCTAssertEqual(c.colors, [SIMD3(255, 0, 0), SIMD3(0, 128, 255)])
    }

    func testBadPLY() throws {
        let dir = TempDir()
        XCTAssertFileError(try PLYReader.read(dir.file("none.ply")), "no such file")
        XCTAssertFileError(try PLYReader.read(dir.write("e.ply", [])), "file is empty")
        XCTAssertFileError(try PLYReader.read(dir.write("x.ply", Array("hello".utf8))), "not a PLY file")
        let header = "ply\nformat binary_little_endian 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\nproperty uchar red\nproperty uchar green\nproperty uchar blue\nend_header\n"
        XCTAssertFileError(try PLYReader.read(dir.write("t.ply", Array(header.utf8) + [UInt8](repeating: 0, count: 20))),
                           "truncated PLY: the data ends inside vertex 1 of 3")
        XCTAssertFileError(try PLYReader.read(dir.write("h.ply", Array("ply\nformat ascii 1.0\n".utf8))), "no end_header")
        let ascii = header.replacingOccurrences(of: "binary_little_endian", with: "ascii") + "1 2 3 4 5 6\n1 2 x 4 5 6\n"
        XCTAssertFileError(try PLYReader.read(dir.write("a.ply", Array(ascii.utf8))), "vertex 1 is not 6 numbers")
    }

    func testFailedPLYWriteLeavesNothing() {
        let dir = TempDir()
        XCTAssertFileError(try PLYWriter.write(PointCloud(), to: dir.file("no/dir/x.ply")), "no such directory")
        XCTAssertEqual(dir.contents, [])
    }

    func testSyntheticSceneCloudHasWallAndBox() {
        let f = SyntheticScene().render(width: 64, height: 48)
        let cloud = PointCloud.unproject(depth: f.depth, color: f.color)
        XCTAssertEqual(cloud.count, f.depth.depthStatistics().validCount)
        XCTAssertTrue(cloud.positions.contains { $0.z == SyntheticScene.wallDepth })
        XCTAssertTrue(zip(cloud.positions, cloud.colors).contains { $0.z == 1 && $1 == SyntheticScene.boxColor })
    }
}
