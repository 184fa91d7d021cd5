import XCTest
import DepthKit
@testable import GPUKit

/// The compute point rasterizer against the raster pipeline and on its own, both atomics paths
/// (64-bit where the device has them, and the forced 32-bit fallback). Validation on.
final class PointCloudComputeTests: PointCloudTestCase {
    /// The compute paths this device runs: 64-bit (if present) and 32-bit.
    var computePaths: [Bool] { context.bufferInt64Atomics ? [false, true] : [true] }

    func withPath<R>(_ method: PointCloudMethod, force32: Bool = false, _ body: () throws -> R) rethrows -> R {
        renderer.method = method
        renderer.forces32BitAtomics = force32
        defer { renderer.method = .compute; renderer.forces32BitAtomics = false }
        return try body()
    }

    /// Pixels covered by either image that both cover with colors within 1 LSB, over those covered by either.
    func agreement(_ a: PixelBuffer, _ b: PixelBuffer) -> (agree: Int, union: Int) {
        var agree = 0, union = 0
        for y in 0..<a.height {
            for x in 0..<a.width {
                let ca = isClear(a, x, y), cb = isClear(b, x, y)
                if ca && cb { continue }
                union += 1
                let pa = a.rgba(x: x, y: y), pb = b.rgba(x: x, y: y)
                if !ca && !cb && abs(Int(pa.0) - Int(pb.0)) <= 1 && abs(Int(pa.1) - Int(pb.1)) <= 1 && abs(Int(pa.2) - Int(pb.2)) <= 1 {
                    agree += 1
                }
            }
        }
        return (agree, union)
    }

    func testDevicePicksTheAtomicsItHas() {
        XCTAssertEqual(renderer.method, .compute, "compute is the default")
        XCTAssertEqual(renderer.atomicBits, context.bufferInt64Atomics ? 64 : 32)
        renderer.forces32BitAtomics = true
        XCTAssertEqual(renderer.atomicBits, 32)
    }

    /// Same camera, 1-px points: ≥ 99% of the covered pixels agree within 1 LSB, from the depth
    /// camera and from an orbit, for each atomics path.
    func testComputeMatchesRasterAtPointSize1() throws {
        let frame = SyntheticScene().render(width: 80, height: 60)
        let depth = frame.depth.depthFloat32(), k = frame.depth.intrinsics
        let pivot = try XCTUnwrap(PointCloud.orbitPivot(depth: frame.depth))
        renderer.pointSize = 1
        let cameras = [PointCloudCamera.depthCamera(intrinsics: k, width: 80, height: 60),
                       orbit(k, center: pivot, yaw: 0.4, pitch: -0.2, width: 80, height: 60),
                       orbit(k, center: pivot, yaw: -0.3, pitch: 0.3, width: 160, height: 120)]
        for (i, camera) in cameras.enumerated() {
            let size = i == 2 ? (160, 120) : (80, 60)
            let rasterImage = try withPath(.raster) {
                try renderer.render(depth: depth, color: frame.color, intrinsics: k, camera: camera, width: size.0, height: size.1)
            }
            for force32 in computePaths {
                let compute = try withPath(.compute, force32: force32) {
                    try renderer.render(depth: depth, color: frame.color, intrinsics: k, camera: camera, width: size.0, height: size.1)
                }
                let (agree, union) = agreement(compute, rasterImage)
                XCTAssertGreaterThan(union, size.0 * size.1 / 8, "camera \(i): the view is not empty")
                XCTAssertGreaterThanOrEqual(Double(agree), 0.99 * Double(union), "camera \(i), 32-bit \(force32): \(agree)/\(union)")
            }
        }
    }

    /// Point size 2 at twice the depth size (the window's home view of a 640×480 frame at 1280×720
    /// in small): every pixel covered as raster's 2×2 sprites cover it, no gap columns or rows
    /// where a point's position sits a rounding error below a whole pixel.
    func testEvenPointSizeUpscaledHasNoGaps() throws {
        let frame = SyntheticScene().render(width: 80, height: 60)
        let depth = frame.depth.depthFloat32(), k = frame.depth.intrinsics
        renderer.pointSize = 2
        defer { renderer.pointSize = 1 }
        let camera = PointCloudCamera.depthCamera(intrinsics: k, width: 160, height: 120)
        let rasterImage = try withPath(.raster) {
            try renderer.render(depth: depth, color: frame.color, intrinsics: k, camera: camera, width: 160, height: 120)
        }
        let rasterCovered = covered(rasterImage)
        XCTAssertGreaterThan(rasterCovered, 160 * 120 * 9 / 10, "raster covers the view but the depth holes")
        for force32 in computePaths {
            let compute = try withPath(.compute, force32: force32) {
                try renderer.render(depth: depth, color: frame.color, intrinsics: k, camera: camera, width: 160, height: 120)
            }
            // Landing by ⌊x⌋ left gap columns here: 89% of raster's coverage; by the nearest pixel 98%.
            XCTAssertGreaterThanOrEqual(Double(covered(compute)), 0.98 * Double(rasterCovered), "32-bit \(force32): no gap columns")
        }
    }

    /// Two points on one pixel: the nearer wins in either order, on both atomics paths; and the
    /// 64-bit and 32-bit paths give the same picture.
    func testNearestPointWinsOnBothAtomicsPaths() throws {
        let near: (UInt8, UInt8, UInt8, UInt8) = (250, 10, 10, 255), far: (UInt8, UInt8, UInt8, UInt8) = (10, 250, 10, 255)
        let k = CameraIntrinsics.default(width: 2, height: 1)
        let collapse = PointCloudCamera(viewProjection: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0.1, 0, 0, 0, 0, 1])
        for order in [[Float(1), 2], [2, 1]] {
            let color = PixelBuffer(width: 2, height: 1, format: .rgba8)
            for x in 0..<2 { color.setRGBA(x: x, y: 0, order[x] == 1 ? near : far) }
            let depth = depthMap(2, 1) { x, _ in order[x] }
            var images: [[UInt8]] = []
            for force32 in computePaths {
                let out = try withPath(.compute, force32: force32) {
                    try renderer.render(depth: depth, color: color, intrinsics: k, camera: collapse, width: 3, height: 3)
                }
                XCTAssertTrue(out.rgba(x: 1, y: 1) == near, "order \(order), 32-bit \(force32): \(out.rgba(x: 1, y: 1))")
                XCTAssertEqual(covered(out), 1)
                images.append(out.packedBytes())
            }
            XCTAssertEqual(Set(images).count, 1, "both atomics paths draw the same")
        }
    }

    /// No valid depth, and an empty point buffer: the background everywhere.
    func testEmptyCloudsDrawTheBackground() throws {
        let k = CameraIntrinsics.default(width: 8, height: 6)
        let camera = PointCloudCamera.depthCamera(intrinsics: k, width: 8, height: 6)
        for force32 in computePaths {
            try withPath(.compute, force32: force32) {
                let out = try renderer.render(depth: depthMap(8, 6) { _, _ in 0 }, color: solidColor(8, 6, (9, 9, 9, 255)),
                                              intrinsics: k, camera: camera, width: 8, height: 6)
                XCTAssertEqual(covered(out), 0)
                let empty = try GPUPointCloud(renderer: renderer, cloud: PointCloud())
                XCTAssertEqual(empty.count, 0)
                XCTAssertEqual(covered(try renderer.render(cloud: empty, camera: camera, width: 8, height: 6)), 0)
            }
        }
    }

    /// One point at size s covers an s×s square (odd s) around its pixel; the raster path agrees.
    func testPointSizeGrowsASinglePointToASquare() throws {
        guard context.largePoints else { return XCTAssertEqual(renderer.pointSizeRange, 1...1) }
        let k = CameraIntrinsics.default(width: 9, height: 9)
        let depth = depthMap(9, 9) { x, y in x == 4 && y == 4 ? 1 : 0 }
        let color = solidColor(9, 9, (200, 40, 40, 255))
        let camera = PointCloudCamera.depthCamera(intrinsics: k, width: 9, height: 9)
        for size in [Float(1), 3, 5] {
            renderer.pointSize = size
            var counts: [Int] = []
            for (method, force32) in [(PointCloudMethod.raster, false)] + computePaths.map({ (PointCloudMethod.compute, $0) }) {
                let out = try withPath(method, force32: force32) {
                    try renderer.render(depth: depth, color: color, intrinsics: k, camera: camera, width: 9, height: 9)
                }
                counts.append(covered(out))
                XCTAssertTrue(out.rgba(x: 4, y: 4) == (200, 40, 40, 255))
            }
            XCTAssertEqual(counts, Array(repeating: Int(size * size), count: counts.count), "size \(size): \(counts)")
        }
    }

    /// Even sizes on the compute path (size 2 has its own unrolled window in the resolve pass, 4 the
    /// general loop): one point covers an s×s square, the nearer of two overlapping squares wins
    /// where they overlap, and both atomics paths draw the same picture.
    func testEvenPointSizesCoverSquaresAndKeepTheNearerPoint() throws {
        let k = CameraIntrinsics.default(width: 12, height: 12)
        let near: (UInt8, UInt8, UInt8, UInt8) = (250, 10, 10, 255), far: (UInt8, UInt8, UInt8, UInt8) = (10, 250, 10, 255)
        let camera = PointCloudCamera.depthCamera(intrinsics: k, width: 12, height: 12)
        defer { renderer.pointSize = 1 }
        for size in [Float(2), 4] {
            renderer.pointSize = size
            let s = Int(size)
            // One point, then two a pixel apart diagonally (the far one first in memory).
            let one = depthMap(12, 12) { x, y in x == 5 && y == 5 ? 1 : 0 }
            let two = depthMap(12, 12) { x, y in x == 5 && y == 5 ? 2 : x == 6 && y == 6 ? 1 : 0 }
            let color = PixelBuffer(width: 12, height: 12, format: .rgba8)
            color.setRGBA(x: 5, y: 5, far); color.setRGBA(x: 6, y: 6, near)
            var pictures: [[UInt8]] = []
            for force32 in computePaths {
                try withPath(.compute, force32: force32) {
                    let single = try renderer.render(depth: one, color: color, intrinsics: k, camera: camera, width: 12, height: 12)
                    XCTAssertEqual(covered(single), s * s, "size \(s), 32-bit \(force32)")
                    let pair = try renderer.render(depth: two, color: color, intrinsics: k, camera: camera, width: 12, height: 12)
                    // The squares overlap in (s − 1)²  pixels, all of them the near point's.
                    XCTAssertEqual(covered(pair), 2 * s * s - (s - 1) * (s - 1), "size \(s), 32-bit \(force32)")
                    var nearCount = 0
                    for y in 0..<12 { for x in 0..<12 where pair.rgba(x: x, y: y) == near { nearCount += 1 } }
                    XCTAssertEqual(nearCount, s * s, "size \(s), 32-bit \(force32): the near square is whole")
                    pictures.append(pair.packedBytes())
                }
            }
            XCTAssertEqual(Set(pictures).count, 1, "size \(s): both atomics paths draw the same")
        }
    }

    /// A PLY written as `export-ply` writes it (binary and ASCII), read back and drawn from the
    /// depth camera, gives the depth frame's picture.
    func testExportedPLYRendersLikeItsDepthFrame() throws {
        let frame = SyntheticScene().render(width: 64, height: 48)
        let depth = frame.depth.depthFloat32(), k = frame.depth.intrinsics
        let camera = PointCloudCamera.depthCamera(intrinsics: k, width: 64, height: 48)
        let expectedImage = try renderer.render(depth: depth, color: frame.color, intrinsics: k, camera: camera, width: 64, height: 48)
        let cloud = PointCloud.unproject(depth: frame.depth, color: frame.color)
        for ascii in [false, true] {
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("raster-\(ProcessInfo.processInfo.processIdentifier)-\(ascii).ply").path
            defer { try? FileManager.default.removeItem(atPath: path) }
            try PLYWriter.write(cloud, to: path, ascii: ascii)
            let contents = try PLYReader.load(path)
            let gpu = try GPUPointCloud(renderer: renderer, cloud: contents.cloud)
            XCTAssertEqual(gpu.count, cloud.count)
            let out = try renderer.render(cloud: gpu, camera: camera, width: 64, height: 48)
            let (agree, union) = agreement(out, expectedImage)
            XCTAssertGreaterThan(union, 64 * 48 / 2)
            XCTAssertGreaterThanOrEqual(Double(agree), 0.99 * Double(union), "ascii \(ascii): \(agree)/\(union)")
        }
    }

    /// Uploads bigger than one staging chunk land whole; stride draws a subset.
    func testChunkedUploadAndStride() throws {
        let n = GPUPointCloud.chunkPoints + 1000
        let w = 64
        // Points on a 64-wide grid of pixels at 1 m, each pixel drawn many times at the same depth.
        let k = CameraIntrinsics.default(width: w, height: w)
        let gpu = try GPUPointCloud(renderer: renderer, count: n) { i in
            let u = i % w, v = (i / w) % w
            return (k.unproject(u: Float(u), v: Float(v), depth: 1), 0xFF00_00FF)
        }
        XCTAssertEqual(gpu.bounds.min.z, 1); XCTAssertEqual(gpu.bounds.max.z, 1)
        let camera = PointCloudCamera.depthCamera(intrinsics: k, width: w, height: w)
        XCTAssertEqual(covered(try renderer.render(cloud: gpu, camera: camera, width: w, height: w)), w * w)
        renderer.pointStride = 2
        XCTAssertEqual(renderer.drawnPoints(gpu), (n + 1) / 2)
        // Even indices only: the even columns of every row (64 is even).
        XCTAssertEqual(covered(try renderer.render(cloud: gpu, camera: camera, width: w, height: w)), w * w / 2)
    }
}
