import XCTest
import TestSupport
import DepthKit
@testable import GPUKit

/// DepthKit's CPU point renderer against the compute path's readback (both atomics paths): the
/// same projection, nearest point, s×s squares and resolve, so the same picture, pixel for pixel,
/// on the synthetic depth frame and on a PLY point list, at point sizes 1 to 4, for every
/// color-by mode. Validation on.
final class CPUPointRendererAgreementTests: PointCloudTestCase {
    var computePaths: [Bool] { context.bufferInt64Atomics ? [false, true] : [true] }

    /// Pixels that differ (any channel), and the first few, for the message.
    func differences(_ a: PixelBuffer, _ b: PixelBuffer) -> (count: Int, covered: Int, first: String) {
        var n = 0, covered = 0
        var first: [String] = []
        for y in 0..<a.height {
            for x in 0..<a.width {
                let pa = a.rgba(x: x, y: y), pb = b.rgba(x: x, y: y)
                if !isClear(a, x, y) || !isClear(b, x, y) { covered += 1 }
                if pa != pb {
                    n += 1
                    if first.count < 4 { first.append("(\(x),\(y)) cpu \(pa) gpu \(pb)") }
                }
            }
        }
        return (n, covered, first.joined(separator: "; "))
    }

    func assertSame(_ cpu: PixelBuffer, _ gpu: PixelBuffer, _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        let d = differences(cpu, gpu)
        XCTAssertGreaterThan(d.covered, cpu.width * cpu.height / 20, "\(what): the view is not empty", file: file, line: line)
        XCTAssertEqual(d.count, 0, "\(what): \(d.count) of \(d.covered) covered pixels differ: \(d.first)", file: file, line: line)
    }

    /// The synthetic scene's depth frame from the depth camera and two orbits (one at twice the
    /// size), sizes 1–4, color by color / depth / height (jet, turbo), both atomics paths.
    func testDepthFrameMatchesComputePath() throws {
        let frame = SyntheticScene().render(width: 160, height: 120)
        let depth = frame.depth.depthFloat32(), k = frame.depth.intrinsics
        let pivot = try XCTUnwrap(PointCloud.orbitPivot(depth: frame.depth))
        let views: [(PointCloudCamera, Int, Int)] = [
            (PointCloudCamera.depthCamera(intrinsics: k, width: 160, height: 120), 160, 120),
            (orbit(k, center: pivot, yaw: 0.4, pitch: -0.2, width: 160, height: 120), 160, 120),
            (orbit(k, center: pivot, yaw: -0.3, pitch: 0.3, width: 320, height: 240), 320, 240),
        ]
        let cpu = CPUPointRenderer()
        let stats = frame.depth.depthStatistics()
        for (vi, (camera, w, h)) in views.enumerated() {
            for size: Float in [1, 2, 3, 4] {
                for (by, map) in [(PointCloudColorBy.color, Colormap.jet), (.depth, .jet), (.height, .jet), (.depth, .turbo)] {
                    let range: ClosedRange<Float> = by == .height ? -0.6...0.6 : stats.min...stats.max
                    renderer.pointSize = size; cpu.pointSize = size
                    renderer.colorBy = by; cpu.colorBy = by
                    renderer.colormap = map; cpu.colormap = map
                    renderer.colorRange = range; cpu.colorRange = range
                    let mine = try cpu.render(depth: depth, color: frame.color, intrinsics: k,
                                              viewProjection: camera.viewProjection, width: w, height: h)
                    for force32 in computePaths {
                        renderer.forces32BitAtomics = force32
                        let theirs = try renderer.render(depth: depth, color: frame.color, intrinsics: k, camera: camera, width: w, height: h)
                        assertSame(mine, theirs, "view \(vi), size \(size), \(by) \(map), 32-bit \(force32)")
                    }
                }
            }
        }
    }

    /// A PLY (written as `export-ply` writes it, read back) from an orbit: sizes 1–4, every
    /// color-by mode, all points and every 3rd.
    func testPLYPointListMatchesComputePath() throws {
        let frame = SyntheticScene().render(width: 128, height: 96)
        let k = frame.depth.intrinsics
        let pivot = try XCTUnwrap(PointCloud.orbitPivot(depth: frame.depth))
        let cloud = PointCloud.unproject(depth: frame.depth, color: frame.color)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("cpu-points-\(ProcessInfo.processInfo.processIdentifier).ply").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try PLYWriter.write(cloud, to: path, ascii: false)
        let contents = try PLYReader.load(path)
        let gpu = try GPUPointCloud(renderer: renderer, cloud: contents.cloud)
        let list = CPUPointList(cloud: contents.cloud)
        XCTAssertEqual(list.count, gpu.count)
        XCTAssertEqual(list.bounds.min, gpu.bounds.min); XCTAssertEqual(list.bounds.max, gpu.bounds.max)
        let (w, h) = (256, 192)
        let camera = orbit(k, center: pivot, yaw: 0.5, pitch: 0.25, width: w, height: h)
        let cpu = CPUPointRenderer()
        for stride in [1, 3] {
            renderer.pointStride = stride; cpu.pointStride = stride
            for size: Float in [1, 2, 3, 4] {
                for by in PointCloudColorBy.allCases {
                    let range: ClosedRange<Float> = by == .height ? -list.bounds.max.y ... -list.bounds.min.y
                        : list.bounds.min.z...list.bounds.max.z
                    renderer.pointSize = size; cpu.pointSize = size
                    renderer.colorBy = by; cpu.colorBy = by
                    renderer.colorRange = range; cpu.colorRange = range
                    let mine = try cpu.render(points: list, viewProjection: camera.viewProjection, width: w, height: h)
                    for force32 in computePaths {
                        renderer.forces32BitAtomics = force32
                        let theirs = try renderer.render(cloud: gpu, camera: camera, width: w, height: h)
                        assertSame(mine, theirs, "stride \(stride), size \(size), \(by), 32-bit \(force32)")
                    }
                }
            }
        }
    }

    /// Many points on few pixels at equal depths (ties between colors): the nearest-then-smallest
    /// color rule gives what atomicMin gives, whatever order the points come in.
    func testTiesResolveLikeAtomicMin() throws {
        let w = 32
        let k = CameraIntrinsics.default(width: w, height: w)
        var g = SeededRandom(seed: 5)
        let n = 20_000
        let pts: [(SIMD3<Float>, UInt32)] = (0..<n).map { _ in
            let u = Int(g.next() % UInt64(w)), v = Int(g.next() % UInt64(w))
            let z: Float = g.next() % 2 == 0 ? 1 : 1.5
            return (k.unproject(u: Float(u), v: Float(v), depth: z), UInt32(truncatingIfNeeded: g.next()) | 0xFF00_0000)
        }
        let gpu = try GPUPointCloud(renderer: renderer, count: n) { pts[$0] }
        let list = CPUPointList(count: n) { pts[$0] }
        let camera = PointCloudCamera.depthCamera(intrinsics: k, width: w, height: w)
        let cpu = CPUPointRenderer()
        for size: Float in [1, 2, 3] {
            renderer.pointSize = size; cpu.pointSize = size
            let mine = try cpu.render(points: list, viewProjection: camera.viewProjection, width: w, height: w)
            for force32 in computePaths {
                renderer.forces32BitAtomics = force32
                assertSame(mine, try renderer.render(cloud: gpu, camera: camera, width: w, height: w), "size \(size), 32-bit \(force32)")
            }
        }
    }

    /// Pixels whose channels differ by more than `tolerance`, covered pixels, and pixels that differ at all.
    func within(_ a: PixelBuffer, _ b: PixelBuffer, _ tolerance: Int) -> (over: Int, covered: Int, changed: Int, first: String) {
        var over = 0, covered = 0, changed = 0
        var first: [String] = []
        for y in 0..<a.height {
            for x in 0..<a.width {
                let pa = a.rgba(x: x, y: y), pb = b.rgba(x: x, y: y)
                if !isClear(a, x, y) || !isClear(b, x, y) { covered += 1 }
                if pa != pb { changed += 1 }
                let d = max(abs(Int(pa.0) - Int(pb.0)), abs(Int(pa.1) - Int(pb.1)), abs(Int(pa.2) - Int(pb.2)), abs(Int(pa.3) - Int(pb.3)))
                if d > tolerance {
                    over += 1
                    if first.count < 4 { first.append("(\(x),\(y)) cpu \(pa) gpu \(pb)") }
                }
            }
        }
        return (over, covered, changed, first.joined(separator: "; "))
    }

    /// Eye-dome lighting: the CPU picture within 1 LSB of the compute path's (log2 and exp may
    /// round differently) on the synthetic frame and a PLY list, at two strength/radius settings,
    /// sizes 1 and 2, and the shading really changes the picture.
    func testEyeDomeLightingAgreesWithinOneLSB() throws {
        let frame = SyntheticScene().render(width: 160, height: 120)
        let depth = frame.depth.depthFloat32(), k = frame.depth.intrinsics
        let pivot = try XCTUnwrap(PointCloud.orbitPivot(depth: frame.depth))
        let list = CPUPointList(cloud: PointCloud.unproject(depth: frame.depth, color: frame.color))
        let gpuList = try GPUPointCloud(renderer: renderer, cloud: PointCloud.unproject(depth: frame.depth, color: frame.color))
        let (w, h) = (200, 150)
        let camera = orbit(k, center: pivot, yaw: 0.45, pitch: -0.25, width: w, height: h)
        let cpu = CPUPointRenderer()
        defer { renderer.eyeDomeLighting = EyeDomeLighting() }
        for (strength, radius) in [(Float(1), 1), (Float(0.3), 3)] {
            let edl = EyeDomeLighting(enabled: true, strength: strength, radius: radius)
            for size: Float in [1, 2] {
                renderer.pointSize = size; cpu.pointSize = size
                renderer.colorBy = .color; cpu.colorBy = .color
                for force32 in computePaths {
                    renderer.forces32BitAtomics = force32
                    for source in ["depth", "ply"] {
                        let what = "\(source) strength \(strength) radius \(radius) size \(size) 32-bit \(force32)"
                        func both() throws -> (PixelBuffer, PixelBuffer) {
                            source == "depth"
                                ? (try cpu.render(depth: depth, color: frame.color, intrinsics: k, viewProjection: camera.viewProjection, width: w, height: h),
                                   try renderer.render(depth: depth, color: frame.color, intrinsics: k, camera: camera, width: w, height: h))
                                : (try cpu.render(points: list, viewProjection: camera.viewProjection, width: w, height: h),
                                   try renderer.render(cloud: gpuList, camera: camera, width: w, height: h))
                        }
                        cpu.eyeDomeLighting = EyeDomeLighting(); renderer.eyeDomeLighting = EyeDomeLighting()
                        let (plainCPU, _) = try both()
                        let plain = plainCPU.clone()
                        cpu.eyeDomeLighting = edl; renderer.eyeDomeLighting = edl
                        let (mine, theirs) = try both()
                        let d = within(mine, theirs, 1)
                        XCTAssertGreaterThan(d.covered, w * h / 20, "\(what): the view is not empty")
                        XCTAssertEqual(d.over, 0, "\(what): \(d.over) pixels differ by more than 1: \(d.first)")
                        let shaded = within(mine, plain, 0)
                        XCTAssertGreaterThan(shaded.changed, w * h / 100, "\(what): EDL darkens edges")
                    }
                }
            }
        }
    }

    /// Adaptive point size: the same picture, pixel for pixel, on the synthetic frame (scale from
    /// the focal lengths, seen from an orbit) and a PLY list (scale from its spacing), largest sizes
    /// 4 and 7, both atomics paths, with and without eye-dome lighting (then within 1 LSB).
    func testAdaptivePointSizeMatchesComputePath() throws {
        let frame = SyntheticScene().render(width: 160, height: 120)
        let depth = frame.depth.depthFloat32(), k = frame.depth.intrinsics
        let pivot = try XCTUnwrap(PointCloud.orbitPivot(depth: frame.depth))
        let cloud = PointCloud.unproject(depth: frame.depth, color: frame.color)
        let list = CPUPointList(cloud: cloud)
        let gpuList = try GPUPointCloud(renderer: renderer, cloud: cloud)
        let (w, h) = (320, 240)
        let camera = orbit(k, center: pivot, yaw: 0.35, pitch: -0.2, width: w, height: h)
        let focal = k.scaled(toWidth: w, height: h).fx
        let depthScale = AdaptivePointSize.scale(outputFocal: focal, depthFocal: k.fx)
        let listScale = AdaptivePointSize.scale(outputFocal: focal, spacing: AdaptivePointSize.spacing(of: cloud.positions))
        XCTAssertGreaterThan(listScale, 0)
        let cpu = CPUPointRenderer()
        defer { renderer.adaptiveSizeScale = 0; renderer.eyeDomeLighting = EyeDomeLighting() }
        for largest: Float in [4, 7] {
            renderer.pointSize = largest; cpu.pointSize = largest
            for lighting in [false, true] {
                let edl = EyeDomeLighting(enabled: lighting, strength: 0.5, radius: 2)
                cpu.eyeDomeLighting = edl; renderer.eyeDomeLighting = edl
                for force32 in computePaths {
                    renderer.forces32BitAtomics = force32
                    let what = "largest \(largest), edl \(lighting), 32-bit \(force32)"
                    cpu.adaptiveSizeScale = depthScale; renderer.adaptiveSizeScale = depthScale
                    let mine = try cpu.render(depth: depth, color: frame.color, intrinsics: k, viewProjection: camera.viewProjection, width: w, height: h)
                    let theirs = try renderer.render(depth: depth, color: frame.color, intrinsics: k, camera: camera, width: w, height: h)
                    cpu.adaptiveSizeScale = listScale; renderer.adaptiveSizeScale = listScale
                    let mineList = try cpu.render(points: list, viewProjection: camera.viewProjection, width: w, height: h)
                    let theirsList = try renderer.render(cloud: gpuList, camera: camera, width: w, height: h)
                    if lighting {
                        for (a, b, src) in [(mine, theirs, "depth"), (mineList, theirsList, "ply")] {
                            let d = within(a, b, 1)
                            XCTAssertGreaterThan(d.covered, w * h / 20, "\(src) \(what)")
                            XCTAssertEqual(d.over, 0, "\(src) \(what): \(d.first)")
                        }
                    } else {
                        assertSame(mine, theirs, "depth \(what)")
                        assertSame(mineList, theirsList, "ply \(what)")
                    }
                }
                // The sizes matter: the fixed-size picture differs.
                cpu.adaptiveSizeScale = 0
                let fixed = try cpu.render(points: list, viewProjection: camera.viewProjection, width: w, height: h)
                cpu.adaptiveSizeScale = listScale
                let adaptive = try cpu.render(points: list, viewProjection: camera.viewProjection, width: w, height: h)
                XCTAssertGreaterThan(within(fixed, adaptive, 0).changed, w * h / 50, "largest \(largest): adaptive differs from fixed")
            }
        }
    }
}
