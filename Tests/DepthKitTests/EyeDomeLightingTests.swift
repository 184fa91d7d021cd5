import XCTest
@testable import DepthKit

/// Eye-dome lighting on the CPU point renderer, worked out by hand from the formula
/// (`EyeDomeLighting`): a flat wall is unchanged, a step in depth darkens the far side's pixels
/// next to the edge by exp(−Σ max(0, L(p) − L(q)) · 300·strength/8) and nothing else.
final class EyeDomeLightingTests: XCTestCase {
    let k = CameraIntrinsics.default(width: 12, height: 8)
    let gray: UInt32 = 0xFF80_8080   // (128, 128, 128, 255)

    /// Matrix4.projection's depth-camera projection, written out (as CPUPointRendererTests does).
    func projection(near: Float = 0.01, far: Float = 100) -> [Float] {
        let w = Float(k.width), h = Float(k.height)
        let a = far / (far - near), b = -far * near / (far - near)
        return [2 * k.fx / w, 0, 0, 0, 0, 2 * k.fy / h, 0, 0,
                (2 * k.cx + 1) / w - 1, (2 * k.cy + 1) / h - 1, a, 1, 0, 0, b, 0]
    }

    /// One point per pixel: depth `near` on columns < 6, `far` on the rest (`far` nil: a flat wall).
    func wall(near: Float, far: Float?) -> CPUPointList {
        CPUPointList(count: k.width * k.height) { i in
            let u = i % self.k.width, v = i / self.k.width
            let z = u < 6 ? near : (far ?? near)
            return (self.k.unproject(u: Float(u), v: Float(v), depth: z), self.gray)
        }
    }

    func render(_ list: CPUPointList, _ edl: EyeDomeLighting) throws -> PixelBuffer {
        let r = CPUPointRenderer()
        r.eyeDomeLighting = edl
        return try r.render(points: list, viewProjection: projection(), width: k.width, height: k.height)
    }

    func testDepthTermsRecoverTheViewDepth() {
        let (a, b) = EyeDomeLighting.depthTerms(projection())
        // ndc.z = far/(far − near) − far·near/((far − near)·w): A = 100/99.99, B = −1/99.99.
        XCTAssertEqual(a, 100 / 99.99, accuracy: 1e-6)
        XCTAssertEqual(b, -1 / 99.99, accuracy: 1e-9)
        let w: Float = 2.5, ndc = a + b / w
        XCTAssertEqual(b / (ndc - a), w, accuracy: 1e-3)
    }

    func testFlatWallIsUnchanged() throws {
        let out = try render(wall(near: 2, far: nil), EyeDomeLighting(enabled: true, strength: 1, radius: 2))
        for y in 0..<k.height { for x in 0..<k.width { XCTAssertEqual(out.rgba(x: x, y: y).0, 128, "(\(x),\(y))") } }
    }

    func testStepDarkensTheFarSideNextToTheEdge() throws {
        // Near wall 1 m (columns 0…5), far wall 2 m (6…11): L differs by log2(2) = 1.
        for (strength, radius) in [(Float(1), 1), (Float(0.5), 2)] {
            let edl = EyeDomeLighting(enabled: true, strength: strength, radius: radius)
            let out = try render(wall(near: 1, far: 2), edl)
            let plain = try render(wall(near: 1, far: 2), EyeDomeLighting())
            let d = edl.diagonal
            for y in 0..<k.height {
                for x in 0..<k.width {
                    XCTAssertEqual(plain.rgba(x: x, y: y).0, 128)
                    // Nearer neighbours of a far pixel: those (in the picture) on columns < 6.
                    var nearer = 0
                    if x >= 6 {
                        let offsets = [(radius, 0), (-radius, 0), (0, radius), (0, -radius), (d, d), (-d, d), (d, -d), (-d, -d)]
                        for (dx, dy) in offsets {
                            let xx = x + dx, yy = y + dy
                            if xx >= 0, yy >= 0, xx < k.width, yy < k.height, xx < 6 { nearer += 1 }
                        }
                    }
                    // Each nearer neighbour adds L(p) − L(q) = log2(2/1) = 1 (up to the float depth's rounding).
                    let shade = exp(-Double(nearer) * 300 * Double(strength) / 8)
                    let expected = UInt8(128 * shade + 0.5)
                    let got = out.rgba(x: x, y: y)
                    XCTAssertLessThanOrEqual(abs(Int(got.0) - Int(expected)), 1, "s \(strength) r \(radius) (\(x),\(y))")
                    XCTAssertEqual(got.3, 255)
                    if x < 6 || x >= 6 + radius { XCTAssertEqual(got.0, 128, "untouched (\(x),\(y))") }
                    if x == 6 { XCTAssertLessThan(got.0, 128, "the far side at the edge darkens (\(x),\(y))") }
                }
            }
        }
    }

    func testBackgroundNeighboursAreSkipped() throws {
        // A single near point in front of a far one's row: the background around both counts nothing.
        let list = CPUPointList(count: 1) { _ in (self.k.unproject(u: 4, v: 4, depth: 1), self.gray) }
        let out = try render(list, EyeDomeLighting(enabled: true))
        XCTAssertEqual(out.rgba(x: 4, y: 4).0, 128)
        XCTAssertEqual(out.rgba(x: 5, y: 4).0, 26, "background stays background")
    }

    func testSettingsClamp() {
        var e = EyeDomeLighting(enabled: true, strength: 9, radius: 0)
        XCTAssertEqual(e.strength, 5); XCTAssertEqual(e.radius, 1)
        e.radius = 20; e.strength = -1
        XCTAssertEqual(e.radius, 8); XCTAssertEqual(e.strength, 0)
        XCTAssertEqual(EyeDomeLighting(radius: 1).diagonal, 1)
        XCTAssertEqual(EyeDomeLighting(radius: 3).diagonal, 2)   // round(2.12)
        XCTAssertEqual(EyeDomeLighting(radius: 4).diagonal, 3)   // round(2.83)
    }
}
