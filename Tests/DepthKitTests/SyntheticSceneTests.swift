import XCTest
@testable import DepthKit

final class SyntheticSceneTests: XCTestCase {
    let w = 320, h = 240

    func testStillFrameHasKnownDepthsAndColors() {
        let f = SyntheticScene().render(width: w, height: h, time: 0)
        XCTAssertEqual(f.color.format, .rgba8)
        XCTAssertEqual(f.depth.map.format, .depthFloat32)
        XCTAssertEqual(f.depth.intrinsics, SyntheticScene.intrinsics(width: w, height: h))
        XCTAssertEqual(f.depth.intrinsics, .default(width: w, height: h))
        let d = f.depth.map
        // Wall in the top-left corner.
        XCTAssertEqual(d.sample(x: 4, y: 4), SyntheticScene.wallDepth)
        // Box interior (3 px in from its edges) is exactly at 1 m and red.
        let box = SyntheticScene.boxRect.pixels(width: w, height: h)
        for y in (box.y.lowerBound + 3)..<(box.y.upperBound - 3) {
            for x in (box.x.lowerBound + 3)..<(box.x.upperBound - 3) {
                XCTAssertEqual(d.sample(x: x, y: y), SyntheticScene.boxDepth)
            }
        }
        let mid = (box.x.lowerBound + box.x.upperBound) / 2, midY = (box.y.lowerBound + box.y.upperBound) / 2
        let c = f.color.rgba(x: mid, y: midY)
        XCTAssertTrue(c == (220, 50, 40, 255), "\(c)")
        // Disc center at 2 m, blue.
        let dx = Int(SyntheticScene.discCenter.x * Float(w)), dy = Int(SyntheticScene.discCenter.y * Float(h))
        XCTAssertEqual(d.sample(x: dx, y: dy), SyntheticScene.discDepth)
        XCTAssertTrue(f.color.rgba(x: dx, y: dy) == (40, 90, 230, 255))
        // Sphere: the ray through its center hits at z = C.z·(1 − R/|C|).
        let k = f.depth.intrinsics, C = SyntheticScene.sphereCenter
        let p = k.project(C)
        let len = (C * C).sum().squareRoot()
        XCTAssertEqual(d.sample(x: Int(p.x.rounded()), y: Int(p.y.rounded())),
                       C.z * (1 - SyntheticScene.sphereRadius / len), accuracy: 0.01)
        let s = f.color.rgba(x: Int(p.x.rounded()), y: Int(p.y.rounded()))
        XCTAssertTrue(s.1 > s.0 && s.1 > s.2, "sphere is green: \(s)")
    }

    func testInvalidBandOnTheFarSideOfDepthEdges() {
        let d = SyntheticScene().render(width: w, height: h).depth.map
        let box = SyntheticScene.boxRect.pixels(width: w, height: h)
        let y = (box.y.lowerBound + box.y.upperBound) / 2
        let x0 = box.x.lowerBound
        XCTAssertEqual(d.sample(x: x0, y: y), 1, "near side stays valid")
        XCTAssertEqual(d.sample(x: x0 - 1, y: y), 0, "far side of the jump is a hole")
        XCTAssertEqual(d.sample(x: x0 - 2, y: y), 0, "2 px band horizontally")
        XCTAssertEqual(d.sample(x: x0 - 3, y: y), SyntheticScene.wallDepth)
        XCTAssertEqual(d.sample(x: (x0 + box.x.upperBound) / 2, y: box.y.lowerBound - 1), 0, "1 px band vertically")
        XCTAssertEqual(d.sample(x: (x0 + box.x.upperBound) / 2, y: box.y.lowerBound - 2), SyntheticScene.wallDepth)
        var holes = 0
        for y in 0..<h { for x in 0..<w where d.sample(x: x, y: y) == 0 { holes += 1 } }
        XCTAssertGreaterThan(holes, 0)
        XCTAssertLessThan(holes, w * h / 20, "holes are thin bands only")
        let stats = DepthData(map: d).depthStatistics()
        XCTAssertEqual(stats.max, SyntheticScene.wallDepth)
        XCTAssertEqual(stats.min, SyntheticScene.boxDepth)
    }

    func testObjectsMoveWithTime() {
        let scene = SyntheticScene()
        let a = scene.render(width: 64, height: 48, time: 0), b = scene.render(width: 64, height: 48, time: 1.5)
        XCTAssertNotEqual(a.depth.map.packedBytes(), b.depth.map.packedBytes())
        XCTAssertEqual(b.timestamp, 1.5)
        let again = scene.render(width: 64, height: 48, time: 0)
        XCTAssertEqual(a.color.packedBytes(), again.color.packedBytes(), "rendering is deterministic")
        XCTAssertNotEqual(SyntheticScene.pose(at: 2).sphereCenter, SyntheticScene.sphereCenter)
    }

    func testOddAndTinySizes() {
        for (w, h) in [(1, 1), (3, 7), (33, 17)] {
            let f = SyntheticScene().render(width: w, height: h, time: 0.3)
            XCTAssertEqual(f.color.width, w); XCTAssertEqual(f.depth.map.height, h)
        }
    }

    // MARK: Equality with the pre-optimization renderer

    /// Buffers filled with a byte pattern, so a renderer that leaves any pixel unwritten is caught.
    private func dirtyBuffers(_ w: Int, _ h: Int, pad: Int = 0, seed: UInt8 = 0xA7) -> (PixelBuffer, PixelBuffer, PixelBuffer) {
        let c = PixelBuffer(width: w, height: h, format: .rgba8, bytesPerRow: w * 4 + pad * 4)
        let d = PixelBuffer(width: w, height: h, format: .depthFloat32, bytesPerRow: w * 4 + pad * 4)
        let s = PixelBuffer(width: w, height: h, format: .depthFloat32, bytesPerRow: w * 4 + pad * 4)
        for b in [c, d, s] {
            let p = b.baseAddress.assumingMemoryBound(to: UInt8.self)
            for i in 0..<b.byteCount { p[i] = seed &+ UInt8(truncatingIfNeeded: i &* 31) }
        }
        return (c, d, s)
    }

    /// Color bytes and depth bit patterns, row by row (padding excluded).
    private func assertIdentical(_ a: PixelBuffer, _ b: PixelBuffer, _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(a.width, b.width); XCTAssertEqual(a.height, b.height)
        let n = a.width * a.format.bytesPerPixel
        var firstBad: (Int, Int)?
        for y in 0..<a.height where firstBad == nil {
            let pa = a.row(y, as: UInt8.self), pb = b.row(y, as: UInt8.self)
            for i in 0..<n where pa[i] != pb[i] { firstBad = (i / a.format.bytesPerPixel, y); break }
        }
        XCTAssertNil(firstBad.map { "\(what): first difference at pixel \($0)" }, file: file, line: line)
    }

    func testRenderMatchesReferenceBitForBit() {
        let scene = SyntheticScene()
        for (w, h) in [(1, 1), (2, 3), (17, 13), (64, 48), (640, 480), (1280, 720)] {
            // One set of reused (pooled-like) buffers across times, dirty to start with.
            let (c, d, s) = dirtyBuffers(w, h)
            for t in [0, 0.37, 1.5, 4.2, 10, 0.37] {
                let rc = PixelBuffer(width: w, height: h, format: .rgba8)
                let rd = PixelBuffer(width: w, height: h, format: .depthFloat32)
                let rs = PixelBuffer(width: w, height: h, format: .depthFloat32)
                referenceRender(color: rc, depth: rd, scratch: rs, time: t)
                scene.render(color: c, depth: d, scratch: s, time: t)
                assertIdentical(c, rc, "color \(w)x\(h) t=\(t)")
                assertIdentical(d, rd, "depth \(w)x\(h) t=\(t)")
                // Color only (no depth pass): the same color bytes.
                let (oc, _, os) = dirtyBuffers(w, h, seed: 0x3D)
                scene.render(color: oc, scratch: os, time: t)
                assertIdentical(oc, rc, "color-only \(w)x\(h) t=\(t)")
                // The allocating API too.
                let f = scene.render(width: w, height: h, time: t)
                assertIdentical(f.color, rc, "render(width:) color \(w)x\(h) t=\(t)")
                assertIdentical(f.depth.map, rd, "render(width:) depth \(w)x\(h) t=\(t)")
            }
        }
    }

    func testRenderMatchesReferenceWithPaddedRowsAndManyTimes() {
        let scene = SyntheticScene()
        for (w, h) in [(33, 17), (160, 120), (321, 239)] {
            let (c, d, s) = dirtyBuffers(w, h, pad: 3, seed: 0x5C)
            let rc = PixelBuffer(width: w, height: h, format: .rgba8)
            let rd = PixelBuffer(width: w, height: h, format: .depthFloat32)
            let rs = PixelBuffer(width: w, height: h, format: .depthFloat32)
            for i in 0..<40 {
                let t = Double(i) * 0.41 - 2
                referenceRender(color: rc, depth: rd, scratch: rs, time: t)
                scene.render(color: c, depth: d, scratch: s, time: t)
                assertIdentical(c, rc, "color \(w)x\(h) t=\(t)")
                assertIdentical(d, rd, "depth \(w)x\(h) t=\(t)")
                scene.render(color: c, scratch: s, time: t + 0.2)   // color only, then full again
            }
        }
    }

    func testRenderingAtManySizesInTurnStaysExact() {
        // Alternating sizes, more than the wall cache holds.
        let scene = SyntheticScene()
        for (i, (w, h)) in [(64, 48), (17, 13), (64, 48), (40, 30), (33, 17), (5, 9), (128, 96), (64, 48), (17, 13)].enumerated() {
            let t = Double(i) * 0.7
            let rc = PixelBuffer(width: w, height: h, format: .rgba8)
            let rd = PixelBuffer(width: w, height: h, format: .depthFloat32)
            let rs = PixelBuffer(width: w, height: h, format: .depthFloat32)
            referenceRender(color: rc, depth: rd, scratch: rs, time: t)
            let f = scene.render(width: w, height: h, time: t)
            assertIdentical(f.color, rc, "color \(w)x\(h)")
            assertIdentical(f.depth.map, rd, "depth \(w)x\(h)")
        }
    }
}

/// Test-only copy of `SyntheticScene.render(color:depth:scratch:time:)` as it was before it was
/// optimized (commit ec87e2e): the reference the optimized renderer must match bit for bit.
private func referenceRender(color: PixelBuffer, depth: PixelBuffer, scratch: PixelBuffer, time: Double) {
    typealias S = SyntheticScene
    let w = color.width, h = color.height
    precondition(color.format == .rgba8 && depth.format == .depthFloat32 && scratch.format == .depthFloat32)
    precondition(depth.width == w && depth.height == h && scratch.width == w && scratch.height == h)
    let k = S.intrinsics(width: w, height: h)
    let pose = S.pose(at: time)
    let c = pose.sphereCenter, r2 = S.sphereRadius * S.sphereRadius
    let cc = (c * c).sum() - r2
    let l0 = SIMD3<Float>(-0.4, -0.6, -0.7)
    let light = l0 / (l0 * l0).sum().squareRoot()
    let aspect = Float(w) / Float(h)
    let invW = 1 / Float(w), invH = 1 / Float(h)
    let discR2 = S.discRadius * S.discRadius
    let wallDepth = S.wallDepth, discDepth = S.discDepth, boxDepth = S.boxDepth
    let (discR, discG, discB) = (Float(S.discColor.x), Float(S.discColor.y), Float(S.discColor.z))
    let (boxR, boxG, boxB) = (Float(S.boxColor.x), Float(S.boxColor.y), Float(S.boxColor.z))
    let (sphR, sphG, sphB) = (Float(S.sphereColor.x), Float(S.sphereColor.y), Float(S.sphereColor.z))
    let invRadius = 1 / S.sphereRadius
    let (lx, ly, lz) = (light.x, light.y, light.z)
    let (sx, sy, sz) = (c.x, c.y, c.z)
    let box = pose.boxRect, dcx = pose.discCenter.x, dcy = pose.discCenter.y
    let cx = k.cx, cy = k.cy, invFx = 1 / k.fx, invFy = 1 / k.fy
    parallelRows(h) { rows in
        for v in rows {
            let crow = color.row(v, as: UInt8.self), drow = scratch.row(v, as: Float.self)
            let ny = (Float(v) + 0.5) * invH
            let ry = (Float(v) - cy) * invFy
            let checkerRow = Int(ny * 12)
            let ey = ny - dcy, ey2 = ey * ey
            let boxRow = ny >= box.minY && ny < box.maxY
            for u in 0..<w {
                let nx = (Float(u) + 0.5) * invW
                var z = wallDepth
                let dim: Float = (Int(nx * 16) + checkerRow) & 1 == 0 ? 1 : 0.7
                var r = (70 + 150 * nx) * dim, g = (70 + 120 * ny) * dim, b = (190 - 90 * nx) * dim
                let ex = (nx - dcx) * aspect
                if ex * ex + ey2 <= discR2 { z = discDepth; r = discR; g = discG; b = discB }
                let rx = (Float(u) - cx) * invFx
                let qa = rx * rx + ry * ry + 1
                let qb = -2 * (rx * sx + ry * sy + sz)
                let disc = qb * qb - 4 * qa * cc
                if disc >= 0 {
                    let t = (-qb - disc.squareRoot()) / (2 * qa)
                    if t > 0, t < z {
                        z = t
                        let nxs = (rx * t - sx) * invRadius, nys = (ry * t - sy) * invRadius, nzs = (t - sz) * invRadius
                        let shade = 0.35 + 0.65 * max(0, nxs * lx + nys * ly + nzs * lz)
                        r = sphR * shade; g = sphG * shade; b = sphB * shade
                    }
                }
                if boxRow, nx >= box.minX, nx < box.maxX, boxDepth < z { z = boxDepth; r = boxR; g = boxG; b = boxB }
                drow[u] = z
                crow[4 * u] = UInt8(truncatingIfNeeded: Int(r + 0.5))
                crow[4 * u + 1] = UInt8(truncatingIfNeeded: Int(g + 0.5))
                crow[4 * u + 2] = UInt8(truncatingIfNeeded: Int(b + 0.5))
                crow[4 * u + 3] = 255
            }
        }
    }
    let jump = S.edgeJump
    parallelRows(h) { rows in
        var near = [Float](repeating: 0, count: w)
        var tmp = [Float](repeating: 0, count: w)
        for v in rows {
            for i in 0..<w { near[i] = .infinity }
            for y in [v - 1, v + 1] where y >= 0 && y < h {
                let r = scratch.row(y, as: Float.self)
                for x in 0..<w {
                    var m = r[x]
                    if x > 0 { m = min(m, r[x - 1]) }
                    if x + 1 < w { m = min(m, r[x + 1]) }
                    near[x] = min(near[x], m)
                }
            }
            let r = scratch.row(v, as: Float.self)
            for x in 0..<w {
                var m = r[x]
                if x > 0 { m = min(m, r[x - 1]) }
                if x > 1 { m = min(m, r[x - 2]) }
                if x + 1 < w { m = min(m, r[x + 1]) }
                if x + 2 < w { m = min(m, r[x + 2]) }
                tmp[x] = min(near[x], m)
            }
            let out = depth.row(v, as: Float.self)
            for x in 0..<w { out[x] = tmp[x] < r[x] - jump ? 0 : r[x] }
        }
    }
    color.markModified()
    depth.markModified()
}
