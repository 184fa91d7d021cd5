import XCTest
import CVulkan
import DepthKit
@testable import GPUKit

/// The point-cloud renderer (each test on every path: compute 64/32-bit and raster) on small images (lavapipe is a CPU): footprint, invalid depth,
/// occlusion, orbit, point size and steady state. Validation on; any message fails the test.
class PointCloudTestCase: GPUTestCase {
    var cache: TextureCache!
    var renderer: PointCloudRenderer!

    override func setUpWithError() throws {
        try super.setUpWithError()
        cache = try TextureCache(context: context)
        renderer = try PointCloudRenderer(context: context, cache: cache, library: ShaderLibrary.shared())
    }

    override func tearDownWithError() throws {
        renderer = nil
        cache = nil
        try super.tearDownWithError()
    }

    // MARK: Helpers

    static let clear: (UInt8, UInt8, UInt8, UInt8) = (26, 26, 26, 255)   // 0.1 → 25.5 → 26

    func isClear(_ b: PixelBuffer, _ x: Int, _ y: Int) -> Bool { b.rgba(x: x, y: y) == Self.clear }

    func covered(_ b: PixelBuffer) -> Int {
        var n = 0
        for y in 0..<b.height { for x in 0..<b.width where !isClear(b, x, y) { n += 1 } }
        return n
    }

    func solidColor(_ w: Int, _ h: Int, _ c: (UInt8, UInt8, UInt8, UInt8)) -> PixelBuffer {
        let b = PixelBuffer(width: w, height: h, format: .rgba8)
        for y in 0..<h { for x in 0..<w { b.setRGBA(x: x, y: y, c) } }
        return b
    }

    func depthMap(_ w: Int, _ h: Int, _ f: (Int, Int) -> Float) -> PixelBuffer {
        let d = PixelBuffer(width: w, height: h, format: .depthFloat32)
        for y in 0..<h { for x in 0..<w { d.row(y, as: Float.self)[x] = f(x, y) } }
        return d
    }

    /// An orbit about `center` by yaw/pitch (radians), the viewer's OrbitCamera math (R = Ry·Rx,
    /// eye = center − R·ẑ·distance, view = [Rᵀ | −Rᵀ·eye]), times the depth camera's projection.
    func orbit(_ k: CameraIntrinsics, center: SIMD3<Float>, yaw: Float, pitch: Float, width: Int, height: Int) -> PointCloudCamera {
        let (cy, sy, cp, sp) = (cos(yaw), sin(yaw), cos(pitch), sin(pitch))
        // Columns of R = Ry(yaw)·Rx(pitch): right, down, forward.
        let right = SIMD3<Float>(cy, 0, -sy)
        let down = SIMD3<Float>(sy * sp, cp, cy * sp)
        let forward = SIMD3<Float>(sy * cp, -sp, cy * cp)
        let distance = (center * center).sum().squareRoot()
        let eye = center - forward * distance
        func dot(_ a: SIMD3<Float>, _ b: SIMD3<Float>) -> Float { (a * b).sum() }
        let view: [Float] = [right.x, down.x, forward.x, 0,
                             right.y, down.y, forward.y, 0,
                             right.z, down.z, forward.z, 0,
                             -dot(right, eye), -dot(down, eye), -dot(forward, eye), 1]
        return PointCloudCamera(view: view, projection: PointCloudCamera.projection(intrinsics: k, width: width, height: height))
    }

}

final class PointCloudRendererTests: PointCloudTestCase {
    /// Every test here runs on each drawing path: compute (64-bit where present), compute 32-bit, raster.
    func onEachPath(_ body: () throws -> Void) rethrows {
        var paths: [(PointCloudMethod, Bool)] = [(.compute, false), (.compute, true), (.raster, false)]
        if !context.bufferInt64Atomics { paths.remove(at: 0) }
        for (method, force32) in paths {
            renderer.method = method
            renderer.forces32BitAtomics = force32
            try body()
        }
    }

    // MARK: Geometry

    /// A fronto-parallel rectangle X ∈ [x0, x1], Y ∈ [y0, y1] at Z = 2 m seen by the depth camera:
    /// the covered pixels are the rectangle's projection, within a 1-pixel border, at the depth's
    /// size with 1-px points and at twice the size with 2-px points.
    func testPlaneFootprintMatchesItsProjectedRectangle() throws {
        try onEachPath {
            let (wd, hd) = (64, 48)
            let k = CameraIntrinsics.default(width: wd, height: hd)
            let (x0, x1, y0, y1, z): (Float, Float, Float, Float, Float) = (-0.5, 0.3, -0.2, 0.35, 2)
            let depth = depthMap(wd, hd) { u, v in
                let p = k.unproject(u: Float(u), v: Float(v), depth: z)
                return p.x >= x0 && p.x <= x1 && p.y >= y0 && p.y <= y1 ? z : 0
            }
            let color = solidColor(wd, hd, (200, 100, 50, 255))
            var cases: [(scale: Int, pointSize: Float)] = [(1, 1)]
            if renderer.pointSizeRange.contains(2) { cases.append((2, 2)) }
            for (scale, size) in cases {
                let (w, h) = (wd * scale, hd * scale)
                renderer.pointSize = size
                let out = try renderer.render(depth: depth, color: color, intrinsics: k,
                                              camera: .depthCamera(intrinsics: k, width: w, height: h), width: w, height: h)
                XCTAssertEqual(out.width, w); XCTAssertEqual(out.height, h)
                // Analytic: the corners projected with the output's intrinsics, as pixel-edge coordinates.
                let ko = k.scaled(toWidth: w, height: h)
                let left = ko.fx * x0 / z + ko.cx + 0.5, right = ko.fx * x1 / z + ko.cx + 0.5
                let top = ko.fy * y0 / z + ko.cy + 0.5, bottom = ko.fy * y1 / z + ko.cy + 0.5
                var inside = 0, insideCovered = 0, outsideCovered = 0
                for y in 0..<h {
                    for x in 0..<w {
                        let (px, py) = (Float(x) + 0.5, Float(y) + 0.5)
                        let isCovered = !isClear(out, x, y)
                        if px > left + 1, px < right - 1, py > top + 1, py < bottom - 1 {
                            inside += 1
                            if isCovered {
                                insideCovered += 1
                                XCTAssertTrue(out.rgba(x: x, y: y) == (200, 100, 50, 255), "color at \(x),\(y): \(out.rgba(x: x, y: y))")
                            }
                        } else if px < left - 1 || px > right + 1 || py < top - 1 || py > bottom + 1 {
                            if isCovered { outsideCovered += 1 }
                        }
                    }
                }
                XCTAssertGreaterThan(inside, 100, "the rectangle is large enough to mean something")
                XCTAssertEqual(insideCovered, inside, "holes inside the plane's rectangle at \(w)x\(h), point size \(size)")
                XCTAssertEqual(outsideCovered, 0, "points outside the plane's rectangle at \(w)x\(h), point size \(size)")
            }
        }
    }

    /// Colors are the color image's texels at (⌊u·Wc/Wd⌋, ⌊v·Hc/Hd⌋), nearest, with color and depth of different sizes.
    func testColorsAreNearestTexelsOfALargerColorImage() throws {
        try onEachPath {
            let (wd, hd, wc, hc) = (24, 16, 56, 40)
            let k = CameraIntrinsics.default(width: wd, height: hd)
            let depth = depthMap(wd, hd) { _, _ in 1.5 }
            let color = PixelBuffer(width: wc, height: hc, format: .rgba8)
            for y in 0..<hc { for x in 0..<wc { color.setRGBA(x: x, y: y, (UInt8(x * 4), UInt8(y * 6), UInt8((x * 7 + y * 3) % 256), 255)) } }
            let out = try renderer.render(depth: depth, color: color, intrinsics: k,
                                          camera: .depthCamera(intrinsics: k, width: wd, height: hd), width: wd, height: hd)
            let cpu = PointCloud.unproject(depth: DepthData(map: depth, intrinsics: k), color: color)
            XCTAssertEqual(cpu.count, wd * hd)
            for v in 0..<hd {
                for u in 0..<wd {
                    let c = cpu.colors[v * wd + u]
                    XCTAssertTrue(out.rgba(x: u, y: v) == (c.x, c.y, c.z, 255), "pixel \(u),\(v): \(out.rgba(x: u, y: v)) vs \(c)")
                }
            }
        }
    }

    /// 0, ±0, NaN (quiet and signaling), ±Inf and negative depth draw nothing: those pixels stay the clear color.
    func testInvalidDepthDrawsNoPoint() throws {
        try onEachPath {
            let (w, h) = (32, 24)
            let k = CameraIntrinsics.default(width: w, height: h)
            let invalid: [Float] = [0, -0.0, .nan, Float(bitPattern: 0x7FA0_0000), -.nan, .infinity, -.infinity, -1, -1e-30]
            let holes = invalid.indices.map { (4 + 3 * $0, 5 + ($0 % 3) * 6) }
            let depth = depthMap(w, h) { _, _ in 1.5 }
            for (i, (x, y)) in holes.enumerated() { depth.row(y, as: Float.self)[x] = invalid[i] }
            let out = try renderer.render(depth: depth, color: solidColor(w, h, (0, 200, 0, 255)), intrinsics: k,
                                          camera: .depthCamera(intrinsics: k, width: w, height: h), width: w, height: h)
            for (i, (x, y)) in holes.enumerated() {
                XCTAssertTrue(isClear(out, x, y), "depth \(invalid[i]) (0x\(String(invalid[i].bitPattern, radix: 16))) drew \(out.rgba(x: x, y: y))")
            }
            XCTAssertEqual(covered(out), w * h - holes.count)
            // Nothing but invalid depth, seen through an orthographic camera that would put an
            // unprojected invalid point (z = 0 → the origin, z < 0 → mirrored) on screen: still empty.
            let allInvalid = depthMap(w, h) { x, y in invalid[(x + y * w) % invalid.count] }
            let ortho = PointCloudCamera(viewProjection: [0.5, 0, 0, 0, 0, 0.5, 0, 0, 0, 0, 0, 0, 0, 0, 0.5, 1])
            for camera in [ortho, .depthCamera(intrinsics: k, width: w, height: h)] {
                let empty = try renderer.render(depth: allInvalid, color: solidColor(w, h, (0, 200, 0, 255)), intrinsics: k,
                                                camera: camera, width: w, height: h)
                XCTAssertEqual(covered(empty), 0, "invalid depth drew points")
            }
            let validOrtho = try renderer.render(depth: depth, color: solidColor(w, h, (0, 200, 0, 255)), intrinsics: k,
                                                 camera: ortho, width: w, height: h)
            XCTAssertGreaterThan(covered(validOrtho), 0, "the orthographic camera shows valid points")
        }
    }

    /// Every point projected onto one pixel: the nearest wins whether it is drawn first or last.
    func testNearPointsCoverFarOnes() throws {
        try onEachPath {
            let colors: [(UInt8, UInt8, UInt8, UInt8)] = [(255, 0, 0, 255), (0, 255, 0, 255), (0, 0, 255, 255), (255, 255, 255, 255)]
            let color = PixelBuffer(width: 4, height: 1, format: .rgba8)
            for (i, c) in colors.enumerated() { color.setRGBA(x: i, y: 0, c) }
            let k = CameraIntrinsics.default(width: 4, height: 1)
            // clip = (0, 0, z/10, 1): every point lands on the center of a 5x5 output at depth z/10.
            let collapse = PointCloudCamera(viewProjection: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0.1, 0, 0, 0, 0, 1])
            for depths in [[Float(1), 3, 2, 2.5], [3, 2, 2.5, 1], [3, 1, 2.5, 2]] {
                let depth = depthMap(4, 1) { x, _ in depths[x] }
                let out = try renderer.render(depth: depth, color: color, intrinsics: k, camera: collapse, width: 5, height: 5)
                let nearest = depths.firstIndex(of: depths.min()!)!
                XCTAssertTrue(out.rgba(x: 2, y: 2) == colors[nearest], "depths \(depths): \(out.rgba(x: 2, y: 2))")
                XCTAssertEqual(covered(out), 1)
            }
        }
    }

    // MARK: Camera

    func testYaw30DiffersFromYaw0AndOrbitThenResetRendersTheSamePixels() throws {
        try onEachPath {
            let frame = SyntheticScene().render(width: 64, height: 48)
            let depth = frame.depth.depthFloat32(), k = frame.depth.intrinsics
            let pivot = try XCTUnwrap(PointCloud.orbitPivot(depth: frame.depth))
            XCTAssertEqual(pivot.x, 0); XCTAssertEqual(pivot.y, 0)
            XCTAssertEqual(pivot.z, SyntheticScene.wallDepth, "the wall is most of the scene")
            func render(yaw: Float, pitch: Float) throws -> [UInt8] {
                try renderer.render(depth: depth, color: frame.color, intrinsics: k,
                                    camera: orbit(k, center: pivot, yaw: yaw, pitch: pitch, width: 64, height: 48),
                                    width: 64, height: 48).packedBytes()
            }
            renderer.pointSize = 2
            let first = try render(yaw: 0, pitch: 0)
            // At yaw 0 the orbit camera is the depth camera: the same image as the identity view.
            let identity = try renderer.render(depth: depth, color: frame.color, intrinsics: k,
                                               camera: .depthCamera(intrinsics: k, width: 64, height: 48), width: 64, height: 48)
            XCTAssertEqual(identity.packedBytes(), first)
            let turned = try render(yaw: 30 * .pi / 180, pitch: 0)
            let differing = stride(from: 0, to: first.count, by: 4).filter { first[$0..<$0 + 3] != turned[$0..<$0 + 3] }.count
            XCTAssertGreaterThan(differing, 64 * 48 / 10, "yaw 30° should move much of the image")
            let turnedCovered = stride(from: 0, to: turned.count, by: 4).filter { turned[$0] != 26 || turned[$0 + 1] != 26 || turned[$0 + 2] != 26 }.count
            XCTAssertGreaterThan(turnedCovered, 64 * 48 / 3, "the yaw-30° view is not empty")
            _ = try render(yaw: 0.7, pitch: -0.4)
            XCTAssertEqual(try render(yaw: 0, pitch: 0), first, "after orbiting, the reset pose renders pixel for pixel the same")
        }
    }

    func testPointSizeChangesCoverageOrIsClampedToOne() throws {
        try onEachPath {
            let frame = SyntheticScene().render(width: 48, height: 36)
            let depth = frame.depth.depthFloat32(), k = frame.depth.intrinsics
            let pivot = try XCTUnwrap(PointCloud.orbitPivot(depth: frame.depth))
            // Twice the depth's size and turned, so 1-px points leave gaps.
            let camera = orbit(k, center: pivot, yaw: 0.3, pitch: 0.1, width: 96, height: 72)
            renderer.pointSize = .nan
            XCTAssertEqual(renderer.pointSize, 1)
            renderer.pointSize = 1e9
            XCTAssertEqual(renderer.pointSize, renderer.pointSizeRange.upperBound)
            guard context.largePoints else {
                XCTAssertEqual(renderer.pointSizeRange, 1...1, "without largePoints only 1-px points")
                return
            }
            XCTAssertGreaterThanOrEqual(renderer.pointSizeRange.upperBound, 3)
            renderer.pointSize = 1
            let small = covered(try renderer.render(depth: depth, color: frame.color, intrinsics: k, camera: camera, width: 96, height: 72))
            renderer.pointSize = 3
            let large = covered(try renderer.render(depth: depth, color: frame.color, intrinsics: k, camera: camera, width: 96, height: 72))
            XCTAssertGreaterThan(Double(large), Double(small) * 1.5, "3-px points cover more than 1-px points (\(small) → \(large))")
        }
    }

    // MARK: Resources

    func testSecondAndThirdRenderCreateNoVulkanObjects() throws {
        try onEachPath {
            let frame = SyntheticScene().render(width: 40, height: 30)
            let depth = frame.depth.depthFloat32(), k = frame.depth.intrinsics
            let camera = PointCloudCamera.depthCamera(intrinsics: k, width: 80, height: 60)
            let first = try renderer.render(depth: depth, color: frame.color, intrinsics: k, camera: camera, width: 80, height: 60).packedBytes()
            // The output pool (2 buffers) hands them out in turn: the second render reaches the
            // second buffer and makes its resources; after that nothing is made.
            XCTAssertEqual(try renderer.render(depth: depth, color: frame.color, intrinsics: k, camera: camera, width: 80, height: 60).packedBytes(), first)
            let cacheWarm = cache.counters, warm = renderer.counters
            XCTAssertEqual(warm.depthImagesCreated, renderer.method == .raster ? 2 : 0)
            XCTAssertEqual(warm.framebuffersCreated, renderer.method == .raster ? 2 : 0)
            for _ in 0..<4 {
                let again = try renderer.render(depth: depth, color: frame.color, intrinsics: k, camera: camera, width: 80, height: 60)
                XCTAssertEqual(again.packedBytes(), first)
            }
            XCTAssertEqual(cache.counters.creations, cacheWarm.creations, "texture cache: \(cacheWarm) → \(cache.counters)")
            XCTAssertEqual(renderer.counters, warm, "renderer: \(warm) → \(renderer.counters)")
            XCTAssertEqual(cache.counters.readbacks - cacheWarm.readbacks, 4)
        }
    }

    /// The viewer's path: recorded into the caller's command buffer, the output left for shaders
    /// to sample (a readback after a SHADER_READ_ONLY → TRANSFER_SRC transition gives the same pixels).
    func testRecordIntoCallersCommandBufferMatchesRender() throws {
        try onEachPath {
            let frame = SyntheticScene().render(width: 32, height: 24)
            let depth = frame.depth.depthFloat32(), k = frame.depth.intrinsics
            let camera = PointCloudCamera.depthCamera(intrinsics: k, width: 32, height: 24)
            let expected = try renderer.render(depth: depth, color: frame.color, intrinsics: k, camera: camera, width: 32, height: 24).packedBytes()
            let recorder = GPUFrameRecorder(cache: cache)
            let stream = try CommandStream(context: context)
            let out = PixelBuffer(width: 32, height: 24, format: .rgba8)
            try recorder.frame {
                let cb = try stream.begin()
                let td = try recorder.upload(cb, depth), tc = try recorder.upload(cb, frame.color)
                let to = try recorder.target(for: out)
                try renderer.record(cb: cb, recorder: recorder, depth: td, color: tc, intrinsics: k, output: to, camera: camera)
                Barrier.image(cb, to.image, VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                              from: Barrier.allShaders, 0, to: Barrier.transfer, VK_ACCESS_TRANSFER_READ_BIT.rawValue)
                try cache.recordReadback(cb, to, into: out)
                Barrier.transferToHost(cb)
                _ = try stream.submitAndWait()
            }
            XCTAssertEqual(out.packedBytes(), expected)
        }
    }

    func testBadInputsAreErrorsNotCrashes() throws {
        try onEachPath {
            let k = CameraIntrinsics.default(width: 4, height: 4)
            let color = solidColor(4, 4, (1, 2, 3, 255))
            let depth = depthMap(4, 4) { _, _ in 1 }
            let camera = PointCloudCamera.depthCamera(intrinsics: k, width: 4, height: 4)
            XCTAssertThrowsError(try renderer.render(depth: color, color: color, intrinsics: k, camera: camera, width: 4, height: 4))
            XCTAssertThrowsError(try renderer.render(depth: depth, color: color, intrinsics: k, camera: camera, width: 0, height: 4))
            var bad = k; bad.fx = 0
            XCTAssertThrowsError(try renderer.render(depth: depth, color: color, intrinsics: bad, camera: camera, width: 4, height: 4))
        }
    }
}
