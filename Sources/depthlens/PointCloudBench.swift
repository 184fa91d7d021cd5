import DepthKit
import Foundation
import GPUKit

/// One point-cloud row of `bench`: ms per frame drawn into `size` by each path (nil: not timed).
struct PointBenchRow: Codable, Equatable {
    var source: String
    var points: Int
    var size: String
    var raster_ms: Double?
    var compute_ms: Double?
    var cpu_ms: Double?
}

/// `depthlens bench`'s point-cloud rows: ms per frame drawn into 1280x720, raster vs compute vs cpu,
/// for a 640x480 depth frame (307,200 points), a 1920x1080 one (2,073,600) and a 2,000,000-point
/// list generated here (raster draws depth frames only). GPU paths without readback (upload,
/// record, submit, wait: what `render3d --repeat` reports); the CPU path is DepthKit's
/// `CPUPointRenderer` into a reused buffer (the same picture as compute). Point size 1.
enum PointCloudBench {
    static let size = (1280, 720)

    /// Times the paths asked for; `gpu` nil: the CPU column only.
    static func rows(iterations: Int, gpu: GPUContext?, cpu: Bool) throws -> (rows: [PointBenchRow], atomicBits: Int?) {
        let (w, h) = size
        let renderer = try gpu.map { try PointCloudRenderer(context: $0, cache: TextureCache(context: $0), library: ShaderLibrary.shared()) }
        let cpuRenderer = CPUPointRenderer()
        let out = PixelBuffer(width: w, height: h, format: .rgba8)
        func time(_ body: () throws -> Void) throws -> Double {
            try body()   // warm-up: pipelines, textures, buffers, scratch
            let start = DispatchTime.now()
            for _ in 0..<iterations { try body() }
            return Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e6 / Double(iterations)
        }
        var rows: [PointBenchRow] = []
        for (dw, dh) in [(640, 480), (1920, 1080)] {
            let frame = SyntheticScene().render(width: dw, height: dh, time: 0)
            let depth = frame.depth.depthFloat32(), k = frame.depth.intrinsics
            let camera = PointCloudCamera.depthCamera(intrinsics: k, width: w, height: h)
            var row = PointBenchRow(source: "depth \(dw)x\(dh)", points: dw * dh, size: "\(w)x\(h)")
            if let renderer {
                renderer.pointSize = 1
                renderer.method = .raster
                row.raster_ms = try time { try renderer.draw(depth: depth, color: frame.color, intrinsics: k, camera: camera, width: w, height: h) }
                renderer.method = .compute
                row.compute_ms = try time { try renderer.draw(depth: depth, color: frame.color, intrinsics: k, camera: camera, width: w, height: h) }
            }
            if cpu {
                row.cpu_ms = try time {
                    try cpuRenderer.render(depth: depth, color: frame.color, intrinsics: k, viewProjection: camera.viewProjection, into: out)
                }
            }
            rows.append(row)
        }
        // 2,000,000 points: a noisy sphere shell (a fixed sequence), colored by direction.
        let n = 2_000_000
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        let points: [(SIMD3<Float>, UInt32)] = (0..<n).map { i in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let t = Float(i) / Float(n)
            let phi = Float(i) * 2.399963, z = 1 - 2 * t, r = (1 - z * z).squareRoot()
            let s = 1 + (Float(state >> 40) / Float(1 << 24) - 0.5) * 0.04
            let p = SIMD3<Float>(r * cos(phi), r * sin(phi), z) * s
            func byte(_ v: Float) -> UInt32 { UInt32(min(max((v + 1) * 127, 0), 255)) }
            return (p + SIMD3(0, 0, 3), byte(p.x) | byte(p.y) << 8 | byte(p.z) << 16 | 0xFF00_0000)
        }
        let k = CameraIntrinsics.default(width: w, height: h)
        let camera = PointCloudCamera.depthCamera(intrinsics: k, width: w, height: h)
        var row = PointBenchRow(source: "point list (sphere)", points: n, size: "\(w)x\(h)")
        if let renderer {
            let cloud = try GPUPointCloud(renderer: renderer, count: n) { points[$0] }
            renderer.method = .compute
            row.compute_ms = try time { try renderer.draw(cloud: cloud, camera: camera, width: w, height: h) }
        }
        if cpu {
            let list = CPUPointList(count: n) { points[$0] }
            row.cpu_ms = try time { try cpuRenderer.render(points: list, viewProjection: camera.viewProjection, into: out) }
        }
        rows.append(row)
        return (rows, renderer?.atomicBits)
    }

    /// The rows as a table, ms per frame and million points a second.
    static func table(_ rows: [PointBenchRow], device: String, atomicBits: Int?) -> String {
        var lines = ["point cloud → \(size.0)x\(size.1) on \(device) and \(activeCores) CPU cores (\(CPUVectorPath.active.rawValue)), ms/frame (million points/s), point size 1:",
                     "source                      points     raster             compute (\(atomicBits.map { "\($0)-bit" } ?? "-"))     cpu"]
        func cell(_ ms: Double?, _ n: Int) -> String {
            guard let ms else { return "-".padding(toLength: 19, withPad: " ", startingAt: 0) }
            return String(format: "%7.2f (%7.1f)    ", ms, Double(n) / ms / 1e3)
        }
        for r in rows {
            lines.append(r.source.padding(toLength: 28, withPad: " ", startingAt: 0)
                + String(r.points).padding(toLength: 11, withPad: " ", startingAt: 0)
                + cell(r.raster_ms, r.points) + cell(r.compute_ms, r.points) + cell(r.cpu_ms, r.points))
        }
        return lines.joined(separator: "\n")
    }

}
