import DepthKit
import Foundation
import TestSupport
import XCTest

/// A synthetic RGB-D frame written as files for `--source pair:` (deterministic, still).
struct PairFiles {
    let color: String
    let depth: String
    let frame: RGBDFrame
    var source: String { "pair:\(color),\(depth)" }

    init(directory: URL, width: Int = 640, height: Int = 480, colorWidth: Int? = nil, colorHeight: Int? = nil) throws {
        let f = SyntheticScene().render(width: width, height: height, time: 0)
        frame = f
        color = directory.appendingPathComponent("color.png").path
        depth = directory.appendingPathComponent("depth.png").path
        try ImageIO.write(f.color, to: color)
        try ImageIO.write(millimeters(f.depth.depthFloat32()), to: depth)
    }

    /// Depth in meters → 16-bit millimeters.
    func millimeters(_ d: PixelBuffer) -> PixelBuffer {
        let out = PixelBuffer(width: d.width, height: d.height, format: .gray16(depthScale: 1000))
        for y in 0..<d.height {
            for x in 0..<d.width {
                let z = d.row(y, as: Float.self)[x]
                out.row(y, as: UInt16.self)[x] = isValidDepth(z) ? UInt16(min(65535, (z * 1000).rounded())) : 0
            }
        }
        return out
    }
}

/// Pixel helpers for screenshots.
extension PixelBuffer {
    func rgb(_ x: Int, _ y: Int) -> SIMD3<Int> {
        let p = rgba(x: x, y: y)
        return SIMD3(Int(p.0), Int(p.1), Int(p.2))
    }

    /// Mean color of a (2r+1)² square, to step over single-pixel edges and text.
    func mean(_ x: Int, _ y: Int, radius r: Int = 3) -> SIMD3<Int> {
        var s = SIMD3<Int>(0, 0, 0), n = 0
        for yy in max(0, y - r)...min(height - 1, y + r) {
            for xx in max(0, x - r)...min(width - 1, x + r) { s &+= rgb(xx, yy); n += 1 }
        }
        return s / SIMD3(repeating: max(n, 1))
    }
}

/// A fresh temporary folder per test.
class WindowTestCase: XCTestCase {
    var dir: URL!

    override func setUpWithError() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("depthlens-view-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: Repo.depthlens), "build depthlens first: \(Repo.depthlens)")
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: dir)
    }

    func path(_ name: String) -> String { dir.appendingPathComponent(name).path }

    /// Every other pixel of rows `top..<bottom` of a window `width` wide (the 3D tests compare the
    /// picture away from the overlay text).
    static func band(_ s: PixelBuffer, top: Int, bottom: Int, width: Int) -> [SIMD3<Int>] {
        var px: [SIMD3<Int>] = []
        for yy in stride(from: top, to: bottom, by: 2) { for xx in stride(from: 0, to: width, by: 2) { px.append(s.rgb(xx, yy)) } }
        return px
    }

    /// Screenshots (kept as `prefix-name`) until the band's pixels satisfy `ready`, and returns them.
    func bandShot(_ x: XServer, _ name: String, prefix: String, top: Int, bottom: Int, width: Int,
                  until ready: ([SIMD3<Int>]) -> Bool = { _ in true }) throws -> [SIMD3<Int>] {
        let s = try x.screenshot(saveAs: path("\(name).png")) { ready(Self.band($0, top: top, bottom: bottom, width: width)) }
        keep(path("\(name).png"), as: "\(prefix)-\(name)")
        return Self.band(s, top: top, bottom: bottom, width: width)
    }

    /// Keeps a screenshot for people to look at when `DEPTHLENS_KEEP_SHOTS` names a folder.
    func keep(_ shot: String, as name: String) {
        guard let d = ProcessInfo.processInfo.environment["DEPTHLENS_KEEP_SHOTS"], !d.isEmpty else { return }
        try? FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true)
        let dest = "\(d)/\(name).png"
        try? FileManager.default.removeItem(atPath: dest)
        try? FileManager.default.copyItem(atPath: shot, toPath: dest)
    }
}

/// Thrown after the XCTFail that explains it (a missing tool is a failure, never a skip).
enum WindowTestError: Error { case missingTool }
