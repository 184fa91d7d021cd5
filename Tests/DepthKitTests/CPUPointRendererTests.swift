import CPlatform
import XCTest
import TestSupport
@testable import DepthKit

/// The CPU point renderer alone, on hand-placed points: which pixel a point lands on, the s×s
/// squares, the nearest point, the color-by modes and the background, worked out by hand from the
/// rules (docs/design/kernels.md, point cloud). Its agreement with the GPU's compute path is
/// GPUKitTests/CPUPointRendererAgreementTests.
final class CPUPointRendererTests: XCTestCase {
    typealias RGBA = (UInt8, UInt8, UInt8, UInt8)
    static let background: RGBA = (26, 26, 26, 255)   // 0.1 · 255 + 0.5 → 26
    static let red: UInt32 = 0xFF00_00FF, green: UInt32 = 0xFF00_FF00, blue: UInt32 = 0xFFFF_0000

    /// The depth camera's Vulkan projection (Matrix4.projection's, written out here): the camera-frame
    /// point unprojected from pixel (u, v) lands at f = (u + ½, v + ½), column-major.
    func projection(_ k: CameraIntrinsics, near: Float = 0.01, far: Float = 100) -> [Float] {
        let w = Float(k.width), h = Float(k.height)
        let a = far / (far - near), b = -far * near / (far - near)
        return [2 * k.fx / w, 0, 0, 0,
                0, 2 * k.fy / h, 0, 0,
                (2 * k.cx + 1) / w - 1, (2 * k.cy + 1) / h - 1, a, 1,
                0, 0, b, 0]
    }

    func list(_ k: CameraIntrinsics, _ points: [(u: Float, v: Float, z: Float, rgba: UInt32)]) -> CPUPointList {
        CPUPointList(count: points.count) { i in
            let p = points[i]
            return (k.unproject(u: p.u, v: p.v, depth: p.z), p.rgba)
        }
    }

    func rgba(_ c: UInt32) -> RGBA { (UInt8(c & 255), UInt8(c >> 8 & 255), UInt8(c >> 16 & 255), UInt8(c >> 24)) }

    /// The pixels that are not the background, with their colors.
    func drawn(_ b: PixelBuffer) -> [String: UInt32] {
        var out: [String: UInt32] = [:]
        for y in 0..<b.height {
            for x in 0..<b.width where b.rgba(x: x, y: y) != Self.background {
                let c = b.rgba(x: x, y: y)
                out["\(x),\(y)"] = UInt32(c.0) | UInt32(c.1) << 8 | UInt32(c.2) << 16 | UInt32(c.3) << 24
            }
        }
        return out
    }

    func square(_ xs: ClosedRange<Int>, _ ys: ClosedRange<Int>, _ c: UInt32) -> [String: UInt32] {
        var out: [String: UInt32] = [:]
        for y in ys { for x in xs { out["\(x),\(y)"] = c } }
        return out
    }

    func render(_ r: CPUPointRenderer, _ l: CPUPointList, _ k: CameraIntrinsics) throws -> PixelBuffer {
        try r.render(points: l, viewProjection: projection(k), width: k.width, height: k.height)
    }

    func testAPointLandsOnItsPixel() throws {
        let k = CameraIntrinsics.default(width: 16, height: 12)
        let r = CPUPointRenderer()
        for (u, v) in [(5, 7), (0, 0), (15, 11)] {
            XCTAssertEqual(drawn(try render(r, list(k, [(Float(u), Float(v), 2, Self.red)]), k)), ["\(u),\(v)": Self.red])
        }
    }

    /// Odd sizes: the centered square [−⌊s/2⌋, ⌊s/2⌋]² around the pixel, clipped at the image's edge.
    func testOddSizesDrawCenteredSquares() throws {
        let k = CameraIntrinsics.default(width: 16, height: 12)
        let r = CPUPointRenderer()
        r.pointSize = 3
        XCTAssertEqual(drawn(try render(r, list(k, [(5, 7, 2, Self.red)]), k)), square(4...6, 6...8, Self.red))
        r.pointSize = 5
        XCTAssertEqual(drawn(try render(r, list(k, [(5, 7, 2, Self.red)]), k)), square(3...7, 5...9, Self.red))
        XCTAssertEqual(drawn(try render(r, list(k, [(0, 11, 2, Self.red)]), k)), square(0...2, 9...11, Self.red))
        r.pointSize = 2.6   // rounds to 3
        XCTAssertEqual(drawn(try render(r, list(k, [(5, 7, 2, Self.red)]), k)), square(4...6, 6...8, Self.red))
    }

    /// Even sizes land on the nearest pixel ⌊f + ½⌋ and cover the pixel centers within s/2 of the
    /// point (as a raster point sprite does): a point a quarter pixel right of and below pixel
    /// (5, 7)'s center, f = (5.75, 7.75), covers centers 5.5 and 6.5 (pixels 5…6) across and 7…8 down
    /// at size 2; centers 4.5…7.5 (pixels 4…7) and 6…9 at size 4.
    func testEvenSizesCoverThePixelCentersWithinHalfTheSize() throws {
        let k = CameraIntrinsics.default(width: 16, height: 12)
        let r = CPUPointRenderer()
        r.pointSize = 2
        XCTAssertEqual(drawn(try render(r, list(k, [(5.25, 7.25, 2, Self.red)]), k)), square(5...6, 7...8, Self.red))
        // A quarter pixel left of and above the center: pixels 4…5 and 6…7.
        XCTAssertEqual(drawn(try render(r, list(k, [(4.75, 6.75, 2, Self.red)]), k)), square(4...5, 6...7, Self.red))
        r.pointSize = 4
        XCTAssertEqual(drawn(try render(r, list(k, [(5.25, 7.25, 2, Self.red)]), k)), square(4...7, 6...9, Self.red))
        // Past the last column's center: ⌊15.75 + ½⌋ = 16 is clamped to 15, covering 14…15.
        r.pointSize = 2
        XCTAssertEqual(drawn(try render(r, list(k, [(15.25, 3.25, 2, Self.red)]), k)), square(14...15, 3...4, Self.red))
    }

    /// The nearest point of a pixel wins whatever the order; equal depths: the smaller rgba word.
    func testNearestPointWinsAndTiesTakeTheSmallerColor() throws {
        let k = CameraIntrinsics.default(width: 16, height: 12)
        let r = CPUPointRenderer()
        XCTAssertEqual(drawn(try render(r, list(k, [(5, 7, 2, Self.red), (5, 7, 1, Self.green)]), k)), ["5,7": Self.green])
        XCTAssertEqual(drawn(try render(r, list(k, [(5, 7, 1, Self.green), (5, 7, 2, Self.red)]), k)), ["5,7": Self.green])
        XCTAssertEqual(drawn(try render(r, list(k, [(5, 7, 1, Self.blue), (5, 7, 1, Self.red)]), k)), ["5,7": Self.red])
        XCTAssertEqual(drawn(try render(r, list(k, [(5, 7, 1, Self.red), (5, 7, 1, Self.blue)]), k)), ["5,7": Self.red])
    }

    /// Squares are depth-tested: a nearer point's square hides a farther point's own pixel; where
    /// two squares of the same depth overlap, the pixel's own point, then the first in row order wins.
    func testSquaresHaveTheDepthTest() throws {
        let k = CameraIntrinsics.default(width: 16, height: 12)
        let r = CPUPointRenderer()
        r.pointSize = 3
        let picture = drawn(try render(r, list(k, [(5, 5, 2, Self.red), (6, 5, 1, Self.green)]), k))
        var expected = square(4...6, 4...6, Self.red)
        expected.merge(square(5...7, 4...6, Self.green)) { _, g in g }
        XCTAssertEqual(picture, expected)
        XCTAssertEqual(picture["5,5"], Self.green, "the far point's own pixel is under the near square")
        // Same depth: pixel (5, 5) is the red point's own; (6, 5) the green one's; (4, 5) sees only red.
        let tie = drawn(try render(r, list(k, [(5, 5, 1, Self.red), (6, 5, 1, Self.green)]), k))
        XCTAssertEqual(tie["5,5"], Self.red)
        XCTAssertEqual(tie["6,5"], Self.green)
        XCTAssertEqual(tie["4,5"], Self.red)
        XCTAssertEqual(tie["7,5"], Self.green)
    }

    /// Points behind the camera, nearer than the near plane, past the far plane or outside the
    /// view draw nothing; the background is `clearColor`.
    func testBackgroundAndPointsOutOfView() throws {
        let k = CameraIntrinsics.default(width: 16, height: 12)
        let r = CPUPointRenderer()
        r.clearColor = [1, 0.5, 0, 1]
        let out = try r.render(points: CPUPointList(count: 5) { i in
            [(SIMD3<Float>(0, 0, -1), Self.red), (SIMD3<Float>(0, 0, 0.005), Self.red), (SIMD3<Float>(0, 0, 200), Self.red),
             (SIMD3<Float>(100, 0, 1), Self.red), (SIMD3<Float>(0, -100, 1), Self.red)][i]
        }, viewProjection: projection(k), width: 16, height: 12)
        for y in 0..<12 { for x in 0..<16 { XCTAssertTrue(out.rgba(x: x, y: y) == (255, 128, 0, 255)) } }
        let empty = try r.render(points: CPUPointList(count: 0) { _ in (.zero, 0) }, viewProjection: projection(k), width: 16, height: 12)
        XCTAssertTrue(empty.rgba(x: 3, y: 3) == (255, 128, 0, 255))
    }

    /// A depth frame: one point per valid pixel, on its own pixel from the depth camera, colored from
    /// the color texel (⌊u·Wc/Wd⌋, ⌊v·Hc/Hd⌋, bgra8 too), or by depth / height through jet:
    /// t = 1 − (z − lo)/span, t = (−y − lo)/span.
    func testDepthFrameColorsAndColorByModes() throws {
        let k = CameraIntrinsics(fx: 4, fy: 4, cx: 1.5, cy: 0.5, width: 4, height: 2)
        let depth = PixelBuffer(width: 4, height: 2, format: .depthFloat32)
        let values: [Float] = [1, 0, .nan, 3, 2, -1, .infinity, 1]
        for i in 0..<8 { depth.row(i / 4, as: Float.self)[i % 4] = values[i] }
        let color = PixelBuffer(width: 8, height: 2, format: .rgba8)
        for x in 0..<8 { color.setRGBA(x: x, y: 0, (UInt8(10 * x), 1, 2, 9)); color.setRGBA(x: x, y: 1, (UInt8(10 * x), 3, 4, 9)) }
        let r = CPUPointRenderer()
        let out = try r.render(depth: depth, color: color, intrinsics: k, viewProjection: projection(k), width: 4, height: 2)
        XCTAssertEqual(drawn(out), ["0,0": 0xFF02_0100, "3,0": 0xFF02_013C, "0,1": 0xFF04_0300, "3,1": 0xFF04_033C])
        // bgra8 memory: the texel's bytes are b, g, r.
        let bgra = PixelBuffer(width: 8, height: 2, format: .bgra8)
        for x in 0..<8 { for y in 0..<2 { bgra.setRGBA(x: x, y: y, (UInt8(10 * x), 1, 2, 9)) } }   // bytes 2, 1, 10x, 9
        XCTAssertEqual(drawn(try r.render(depth: depth, color: bgra, intrinsics: k, viewProjection: projection(k), width: 4, height: 2))["3,0"],
                       0xFF02_013C)
        // Depth 1…3 on jet: z = 1 → t = 1 → (0.5, 0, 0); z = 3 → t = 0 → (0, 0, 0.5); unorm8(0.5) = 128.
        r.colorBy = .depth
        r.colorRange = 1...3
        let byDepth = drawn(try r.render(depth: depth, color: color, intrinsics: k, viewProjection: projection(k), width: 4, height: 2))
        XCTAssertEqual(byDepth["0,0"], 0xFF00_0080)
        XCTAssertEqual(byDepth["3,0"], 0xFF80_0000)
        // z = 2 → t = ½ → jet (min(0.5, 2.5), min(1.5, 1.5), min(2.5, 0.5)) clamped → (0.5, 1, 0.5).
        XCTAssertEqual(byDepth["0,1"], 0xFF80_FF80)
        // Height: y = (v − cy)·z/fy; row 1 at z = 1 has y = 0.125, −y = −0.125; range −0.125…0.375 → t = 0.
        r.colorBy = .height
        r.colorRange = -0.125...0.375
        XCTAssertEqual(drawn(try r.render(depth: depth, color: color, intrinsics: k, viewProjection: projection(k), width: 4, height: 2))["3,1"],
                       0xFF80_0000)
    }

    /// The banded run on the worker pool equals the serial one, for a big random cloud seen
    /// from off axis, at every point size up to 4, with stride.
    func testParallelEqualsSerial() throws {
        let k = CameraIntrinsics.default(width: 320, height: 240)
        var g = SeededRandom(seed: 3)
        func unit() -> Float { Float(g.next() >> 40) / Float(1 << 24) }
        let points = CPUPointList(count: 100_000) { _ in
            (SIMD3(unit() * 4 - 2, unit() * 3 - 1.5, 1 + unit() * 4), UInt32(truncatingIfNeeded: g.next()))
        }
        let parallel = CPUPointRenderer(), serial = CPUPointRenderer()
        serial.runsSerially = true
        for size: Float in [1, 2, 3, 4] {
            for stride in [1, 3] {
                for r in [parallel, serial] { r.pointSize = size; r.pointStride = stride; r.colorBy = size == 3 ? .height : .color }
                let a = try parallel.render(points: points, viewProjection: projection(k), width: 320, height: 240)
                let b = try serial.render(points: points, viewProjection: projection(k), width: 320, height: 240)
                XCTAssertEqual(a.packedBytes(), b.packedBytes(), "size \(size), stride \(stride)")
                XCTAssertEqual(parallel.drawnPoints(points), (100_000 + stride - 1) / stride)
            }
        }
    }

    /// Steady state: frames into a reused buffer (or the pool's) allocate nothing.
    func testNoAllocationsPerFrame() throws {
        let scene = SyntheticScene().render(width: 320, height: 240)
        let depth = scene.depth.depthFloat32(), k = scene.depth.intrinsics
        let m = projection(k)
        let points = CPUPointList(cloud: PointCloud.unproject(depth: scene.depth, color: scene.color))
        let r = CPUPointRenderer()
        r.pointSize = 2
        let out = PixelBuffer(width: 640, height: 480, format: .rgba8)
        func frame() throws {
            try r.render(depth: depth, color: scene.color, intrinsics: k, viewProjection: m, into: out)
            try r.render(points: points, viewProjection: m, into: out)
            _ = try r.render(points: points, viewProjection: m, width: 640, height: 480)
        }
        for _ in 0..<3 { try frame() }
        dl_alloc_counting(1)
        let before = dl_alloc_count()
        for _ in 0..<10 { try frame() }
        let allocations = dl_alloc_count() - before
        dl_alloc_counting(0)
        XCTAssertEqual(allocations, 0, "allocations in 10 frames")
    }

    func testBadInputThrows() {
        let k = CameraIntrinsics.default(width: 4, height: 4)
        let r = CPUPointRenderer()
        let depth = PixelBuffer(width: 4, height: 4, format: .depthFloat32), color = PixelBuffer(width: 4, height: 4, format: .rgba8)
        XCTAssertThrowsError(try r.render(depth: color, color: color, intrinsics: k, viewProjection: projection(k), width: 4, height: 4))
        XCTAssertThrowsError(try r.render(depth: depth, color: depth, intrinsics: k, viewProjection: projection(k), width: 4, height: 4))
        XCTAssertThrowsError(try r.render(depth: depth, color: color, intrinsics: k, viewProjection: [1, 2, 3], width: 4, height: 4))
        var m = projection(k); m[5] = .nan
        XCTAssertThrowsError(try r.render(depth: depth, color: color, intrinsics: k, viewProjection: m, width: 4, height: 4))
        XCTAssertThrowsError(try r.render(depth: depth, color: color, intrinsics: k, viewProjection: projection(k), width: 0, height: 4))
        XCTAssertThrowsError(try r.render(depth: depth, color: color, intrinsics: k, viewProjection: projection(k), into: depth))
        let bad = CameraIntrinsics(fx: 0, fy: 1, cx: 0, cy: 0, width: 4, height: 4)
        XCTAssertThrowsError(try r.render(depth: depth, color: color, intrinsics: bad, viewProjection: projection(k), width: 4, height: 4))
        r.pointSize = .nan
        XCTAssertEqual(r.pointSize, 1)
        r.pointSize = 100
        XCTAssertEqual(r.pointSize, 64)
    }
}
