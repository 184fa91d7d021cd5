/// The color each depth pixel sees: for every valid depth pixel, its 3D point (depth intrinsics)
/// moved into the color camera (p_c = R·p + t) and projected with the color intrinsics, then the
/// color pixel it lands on (nearest: ⌊x + ½⌋, ⌊y + ½⌋). The result is an rgba8 image at the depth
/// size whose pixel (u, v) is the color of depth pixel (u, v): the 3D view and render3d color
/// points from it with their usual texel lookup, so points of a RealSense or Azure Kinect
/// recording get the colors of what they are. Invalid depth, and points that land outside the color
/// image or behind it, are black with alpha 0. Same rule as `PointCloud.unproject(depth:color:calibration:)`.
///
/// The output buffer is kept and reused while the depth size holds: no allocation a frame.
public final class ColorAtDepth {
    private var output: PixelBuffer?

    public init() {}

    /// `color` is rgba8 or bgra8 (the output keeps its channel order).
    public func render(depth: DepthData, color: PixelBuffer, calibration: RGBDCalibration) -> PixelBuffer {
        precondition(color.format == .rgba8 || color.format == .bgra8, "ColorAtDepth: color must be rgba8 or bgra8, got \(color.format)")
        let d = depth.depthFloat32()
        if output == nil || output!.width != d.width || output!.height != d.height || output!.format != color.format {
            output = PixelBuffer(width: d.width, height: d.height, format: color.format)
        }
        let out = output!
        var k = calibration.depth.intrinsics
        if k.width != d.width || k.height != d.height { k = k.scaled(toWidth: d.width, height: d.height) }
        var kc = calibration.color.intrinsics
        if kc.width != color.width || kc.height != color.height { kc = kc.scaled(toWidth: color.width, height: color.height) }
        var job = Job(depth: d, color: color, out: out, k: k, kc: kc, r: calibration.depthToColor.rotation.withUnsafeBufferPointer {
            ($0[0], $0[1], $0[2], $0[3], $0[4], $0[5], $0[6], $0[7], $0[8])
        }, t: calibration.depthToColor.translation)
        let bands = max(1, min(d.height, 2 * activeCores))
        job.bands = bands
        parallelFor(bands, context: &job) { raw, band in
            let job = raw!.assumingMemoryBound(to: Job.self).pointee
            for v in bandRows(Int(band), of: job.bands, rows: job.depth.height) { job.row(v) }
        }
        out.markModified()
        return out
    }

    private struct Job {
        let depth: PixelBuffer, color: PixelBuffer, out: PixelBuffer
        let k: CameraIntrinsics, kc: CameraIntrinsics
        let r: (Float, Float, Float, Float, Float, Float, Float, Float, Float)
        let t: SIMD3<Float>
        var bands = 1

        func row(_ v: Int) {
            let src = depth.row(v, as: Float.self)
            let dst = out.row(v, as: UInt32.self)
            let cw = Float(color.width), ch = Float(color.height)
            let dv = (Float(v) - k.cy) / k.fy
            for u in 0..<depth.width {
                let z = src[u]
                guard isValidDepth(z) else { dst[u] = 0; continue }
                let x = (Float(u) - k.cx) / k.fx * z, y = dv * z
                let xc = r.0 * x + r.1 * y + r.2 * z + t.x
                let yc = r.3 * x + r.4 * y + r.5 * z + t.y
                let zc = r.6 * x + r.7 * y + r.8 * z + t.z
                guard zc > 0 else { dst[u] = 0; continue }
                let px = (xc * kc.fx / zc + kc.cx + 0.5).rounded(.down), py = (yc * kc.fy / zc + kc.cy + 0.5).rounded(.down)
                guard px >= 0, py >= 0, px < cw, py < ch else { dst[u] = 0; continue }   // false for NaN too
                dst[u] = color.row(Int(py), as: UInt32.self)[Int(px)] | 0xFF00_0000
            }
        }
    }
}
