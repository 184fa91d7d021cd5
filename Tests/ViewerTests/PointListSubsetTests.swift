import TestSupport
import DepthKit
import GPUKit
@testable import Viewer
import XCTest

/// A point list of at least `PointListState.subsetMinimum` points keeps every 16th point in buffers
/// of its own (GPU and host), and drawing that subset at stride s is drawing the whole cloud at
/// stride 16·s: the same picture (the CPU renderer, byte for byte). A smaller list keeps none.
final class PointListSubsetTests: XCTestCase {
    private func scene() throws -> Scene3D {
        let context = try GPUContext()
        let cache = try TextureCache(context: context)
        return Scene3D(renderer: try PointCloudRenderer(context: context, cache: cache, library: ShaderLibrary.shared()))
    }

    /// `n` points on a 1024-wide grid 1 m ahead, colored by index (every point its own color).
    private func grid(_ n: Int, shift: Float = 0) -> PLYContents {
        var positions: [SIMD3<Float>] = [], colors: [SIMD3<UInt8>] = []
        positions.reserveCapacity(n)
        colors.reserveCapacity(n)
        for i in 0..<n {
            let x = Float(i % 1024) * 0.002 - 1 + shift, y = Float(i / 1024) * 0.002 - 1, z: Float = 1 + Float(i % 7) * 0.01
            positions.append(SIMD3(x, y, z))
            colors.append(SIMD3(UInt8(i & 255), UInt8((i >> 8) & 255), UInt8((i >> 16) & 255)))
        }
        return PLYContents(cloud: PointCloud(positions: positions, colors: colors), hasColor: true, nonFiniteSkipped: 0)
    }

    func testABigListKeepsEverySixteenthPoint() throws {
        let s = try scene()
        let n = PointListState.subsetMinimum + 5
        try s.setPointList(grid(n))
        let list = try XCTUnwrap(s.pointList)
        XCTAssertEqual(list.subset?.count, (n + 15) / 16)
        XCTAssertEqual(list.hostSubset?.count, (n + 15) / 16)
        XCTAssertEqual(list.subset?.count, list.drawnPoints(stride: 16))

        // Looking at the grid from the front, 1 m back: the subset at 1 draws what the whole does at 16,
        // and the subset at 2 what a list of every 32nd point (made here) draws.
        let camera = OrbitCamera(center: SIMD3(0, 0, 1), distance: 2)
        let k = CameraIntrinsics.default(width: 160, height: 120)
        let vp = (Matrix4.projection(fx: k.fx, fy: k.fy, cx: k.cx, cy: k.cy, width: 160, height: 120, near: 0.1, far: 10)
                  * camera.viewMatrix).floats
        let r = CPUPointRenderer()
        func picture(_ points: CPUPointList, stride: Int) throws -> [UInt32] {
            r.pointStride = stride
            let img = try r.render(points: points, viewProjection: vp, width: 160, height: 120)
            return (0..<120).flatMap { y in Array(UnsafeBufferPointer(start: img.row(y, as: UInt32.self), count: 160)) }
        }
        let cloud = grid(n).cloud
        let every32 = CPUPointList(count: (n + 31) / 32) { i in
            let c = cloud.colors[32 * i]
            return (cloud.positions[32 * i], UInt32(c.x) | UInt32(c.y) << 8 | UInt32(c.z) << 16 | 0xFF00_0000)
        }
        let pairs = [(try picture(try XCTUnwrap(list.host), stride: 16), try picture(try XCTUnwrap(list.hostSubset), stride: 1)),
                     (try picture(every32, stride: 1), try picture(try XCTUnwrap(list.hostSubset), stride: 2))]
        for (i, (expected, subset)) in pairs.enumerated() {
            let differing = zip(expected, subset).filter { $0 != $1 }.count
            XCTAssertEqual(differing, 0, "pair \(i): pixels that differ")
            XCTAssertGreaterThan(Set(expected).count, 50, "the grid shows")
        }

        // A PLY sequence's next file of the same size refills the subset's GPU buffer in place, and
        // the host subset follows the new points.
        let buffer = ObjectIdentifier(try XCTUnwrap(list.subset))
        try s.showSequenceFrame(grid(n, shift: 0.3))
        let next = try XCTUnwrap(s.pointList)
        XCTAssertEqual(ObjectIdentifier(try XCTUnwrap(next.subset)), buffer, "refilled in place")
        let moved = try picture(try XCTUnwrap(next.host), stride: 16)
        XCTAssertEqual(zip(moved, try picture(try XCTUnwrap(next.hostSubset), stride: 1)).filter { $0 != $1 }.count, 0)
        XCTAssertNotEqual(zip(moved, pairs[0].0).filter { $0 != $1 }.count, 0, "the next file's points are drawn")
    }

    func testASmallListKeepsNone() throws {
        let s = try scene()
        try s.setPointList(grid(1000))
        XCTAssertNil(s.pointList?.subset)
        XCTAssertNil(s.pointList?.hostSubset)
        XCTAssertEqual(s.pointList?.maxStride, 16)
    }
}
