import DepthKit
import Foundation
import GPUKit

/// `depthlens bench`'s point-cloud rows: points a second drawn into 1280x720 without readback
/// (upload, record, submit, wait: what `render3d --repeat` reports), raster vs compute, for a
/// 640x480 depth frame (307,200 points), a 1920x1080 one (2,073,600) and a 2,000,000-point list
/// generated here (compute only: the raster pipeline draws depth frames).
enum PointCloudBench {
    static func table(iterations: Int) throws -> String {
        let context = try GPUContext.shared()
        let renderer = try PointCloudRenderer(context: context, cache: TextureCache(context: context), library: ShaderLibrary.shared())
        let (w, h) = (1280, 720)
        var lines = ["point cloud → \(w)x\(h) on \(context.name), ms/frame without readback (million points/s):",
                     "source                      points     raster             compute (\(renderer.atomicBits)-bit)"]
        func time(_ body: () throws -> Void) throws -> Double {
            try body()   // warm-up: pipelines, textures, buffers
            let start = DispatchTime.now()
            for _ in 0..<iterations { try body() }
            return Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e6 / Double(iterations)
        }
        func cell(_ ms: Double?, _ n: Int) -> String {
            guard let ms else { return "-".padding(toLength: 19, withPad: " ", startingAt: 0) }
            return String(format: "%7.2f (%7.1f)    ", ms, Double(n) / ms / 1e3)
        }
        for (dw, dh) in [(640, 480), (1920, 1080)] {
            let frame = SyntheticScene().render(width: dw, height: dh, time: 0)
            let depth = frame.depth.depthFloat32(), k = frame.depth.intrinsics
            let camera = PointCloudCamera.depthCamera(intrinsics: k, width: w, height: h)
            renderer.pointSize = 1
            var ms: [PointCloudMethod: Double] = [:]
            for m in PointCloudMethod.allCases {
                renderer.method = m
                ms[m] = try time { try renderer.draw(depth: depth, color: frame.color, intrinsics: k, camera: camera, width: w, height: h) }
            }
            let n = dw * dh
            lines.append("\("depth \(dw)x\(dh)".padding(toLength: 28, withPad: " ", startingAt: 0))\(String(n).padding(toLength: 11, withPad: " ", startingAt: 0))\(cell(ms[.raster], n))\(cell(ms[.compute], n))")
        }
        // 2,000,000 points: a noisy sphere shell, colored by direction.
        let n = 2_000_000
        var rng = SystemRandomNumberGenerator()
        let cloud = try GPUPointCloud(renderer: renderer, count: n) { i in
            let t = Float(i) / Float(n)
            let phi = Float(i) * 2.399963, z = 1 - 2 * t, r = (1 - z * z).squareRoot()
            let s = 1 + Float.random(in: -0.02...0.02, using: &rng)
            let p = SIMD3<Float>(r * cos(phi), r * sin(phi), z) * s
            func byte(_ v: Float) -> UInt32 { UInt32(min(max((v + 1) * 127, 0), 255)) }
            let c = SIMD3<UInt32>(byte(p.x), byte(p.y), byte(p.z))
            return (p + SIMD3(0, 0, 3), c.x | c.y << 8 | c.z << 16 | 0xFF00_0000)
        }
        renderer.method = .compute
        let k = CameraIntrinsics.default(width: w, height: h)
        let camera = PointCloudCamera.depthCamera(intrinsics: k, width: w, height: h)
        let cms = try time { try renderer.draw(cloud: cloud, camera: camera, width: w, height: h) }
        lines.append("\("point list (sphere)".padding(toLength: 28, withPad: " ", startingAt: 0))\(String(n).padding(toLength: 11, withPad: " ", startingAt: 0))\(cell(nil, n))\(cell(cms, n))")
        return lines.joined(separator: "\n")
    }
}
