import CDepthKit
import Foundation

/// Depth aligned to color, exactly as librealsense's `align` to color (`rs.align(rs.stream.color)`)
/// computes it in librealsense 2.59 on x86-64 (`image_transform`, src/proc/sse/sse-align.cpp; the
/// older scalar `align_images` of src/proc/align.cpp differs in the three points marked ★):
/// every valid depth pixel (x, y) with depth z is deprojected at its corners (x − 0.5, y − 0.5)
/// and (x + 0.5, y + 0.5) with the depth intrinsics, moved by the depth→color extrinsics
/// (★ summed r0·x + (r1·y + (r2·z + t))) and projected with the color intrinsics; the color pixels
/// between the two projected corners, x0 = (int)(u0 + 0.5) … x1 = (int)(u1 + 0.5) (C truncation),
/// ★ clipped to the image, take z where they are empty or farther (the nearest wins). ★ When the
/// depth camera has at least as many pixels per degree as the color camera in both directions
/// (`rs2_fov`), only the top-left corner is projected and each depth pixel writes one color
/// pixel (`usesBothCorners`). Color pixels no depth pixel reaches stay 0. The value kept is the
/// depth camera's z, in meters. On librealsense's D435 test recording this equals pyrealsense2
/// 2.59.1's `rs.align` in every pixel (DepthAlignmentTests.testMatchesLibrealsenseAlign).
///
/// Cameras are pinhole: the distortion coefficients are not applied (librealsense's D400 depth and
/// color streams are `brown_conrady` with zero coefficients, which is the pinhole camera exactly;
/// its x86 `align` applies none but `modified_brown_conrady` for the color camera).
/// Intrinsics given for another image size are scaled to the buffers' sizes.
///
/// The CPU kernel is align.c (CDepthKit): phase 1 in bands of depth rows computes each pixel's
/// rectangle (SIMD on AVX2/AVX-512), phase 2 in bands of color rows clears and fills them, so
/// each color pixel has one writer and the result equals the serial one bit for bit. Nothing is
/// allocated per frame once the scratch for a depth size exists. `GPUDepthAligner` (GPUKit) is the
/// Vulkan port and agrees exactly.
public final class DepthAligner {
    private var scratch: UnsafeMutableRawPointer?
    private var scratchBytes = 0
    private var pool: BufferPool?

    public init() {}

    deinit { scratch?.deallocate() }

    /// Aligns `depth` (`.depthFloat32`, meters, 0 invalid) to the color camera of `calibration`,
    /// writing every pixel of `out` (`.depthFloat32`, the color image's size; the color intrinsics
    /// are scaled to it when they were given for another size). `out` may be reused frame after
    /// frame; nothing is allocated then.
    public func align(depth: PixelBuffer, calibration: RGBDCalibration, into out: PixelBuffer) throws {
        // Checked without `requireFormat`'s array literal, which would allocate every frame.
        guard depth.format == .depthFloat32 else {
            throw RenderError.formatMismatch(kernel: "align", expected: "depthFloat32", got: depth.frameFormat)
        }
        guard out.format == .depthFloat32 else {
            throw RenderError.formatMismatch(kernel: "align", expected: "depthFloat32", got: out.frameFormat)
        }
        guard out.width <= 32767, out.height <= 32767 else {
            throw RenderError.invalidParameter("align: color images up to 32767 pixels a side, got \(out.width)x\(out.height)")
        }
        let need = dl_align_scratch_bytes(Int32(depth.width), Int32(depth.height))
        if need > scratchBytes {
            scratch?.deallocate()
            scratch = UnsafeMutableRawPointer.allocate(byteCount: need, alignment: 64)
            scratchBytes = need
        }
        var job = Self.job(depth: depth, out: out, calibration: calibration, scratch: scratch!)
        dl_align_prepare(&job)
        job.rect_bands = Int32(bandCount(depth.height, minimumRowsPerBand: 8))
        job.scatter_bands = Int32(bandCount(out.height, minimumRowsPerBand: 8))
        parallelFor(Int(job.rect_bands), context: &job, dl_align_rects_band)
        parallelFor(Int(job.scatter_bands), context: &job, dl_align_scatter_band)
        out.markModified()
    }

    /// `align(depth:calibration:into:)` into a buffer of the color camera's size from a pool
    /// (buffers come back when released, so steady state allocates nothing).
    public func align(depth: PixelBuffer, calibration: RGBDCalibration) throws -> PixelBuffer {
        let c = calibration.color.intrinsics
        let format = FrameFormat(width: c.width, height: c.height, pixelFormat: .depthFloat32)
        if pool?.format != format { pool = BufferPool(format: format, outputRetainedBufferCountHint: 3) }
        let out = try pool!.makeBuffer()
        try align(depth: depth, calibration: calibration, into: out)
        return out
    }

    /// The same alignment on the calling thread only, phase after phase (for tests: the banded
    /// run must equal it).
    public static func alignSerially(depth: PixelBuffer, calibration: RGBDCalibration, into out: PixelBuffer) {
        precondition(depth.format == .depthFloat32 && out.format == .depthFloat32)
        let bytes = dl_align_scratch_bytes(Int32(depth.width), Int32(depth.height))
        let scratch = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 64)
        defer { scratch.deallocate() }
        var job = job(depth: depth, out: out, calibration: calibration, scratch: scratch)
        dl_align_run_serial(&job)
        out.markModified()
    }

    /// The pinhole intrinsics the kernels use for an image of this size: `camera`'s, scaled when
    /// they were given for another size.
    public static func intrinsics(_ camera: CameraModel, width: Int, height: Int) -> CameraIntrinsics {
        let k = camera.intrinsics
        return k.width == width && k.height == height ? k : k.scaled(toWidth: width, height: height)
    }

    /// librealsense's choice between a rectangle from both corners and the top-left corner's pixel
    /// alone: both when the depth camera has fewer pixels per degree than the color camera in
    /// either direction (`rs2_fov`: atan2f of the principal point + 0.5 and the rest of the width,
    /// in degrees), or for its two special cases (640×240 → 320×180, 640×480 → 640×360).
    public static func usesBothCorners(depth d: CameraIntrinsics, color c: CameraIntrinsics) -> Bool {
        func fov(_ k: CameraIntrinsics) -> (Float, Float) {
            let x = (atan2f(k.cx + 0.5, k.fx) + atan2f(Float(k.width) - (k.cx + 0.5), k.fx)) * 57.2957795
            let y = (atan2f(k.cy + 0.5, k.fy) + atan2f(Float(k.height) - (k.cy + 0.5), k.fy)) * 57.2957795
            return (x, y)
        }
        let fd = fov(d), fc = fov(c)
        let depthX = Float(d.width) / fd.0, depthY = Float(d.height) / fd.1
        let colorX = Float(c.width) / fc.0, colorY = Float(c.height) / fc.1
        let special = (d.width == 640 && d.height == 240 && c.width == 320 && c.height == 180)
            || (d.width == 640 && d.height == 480 && c.width == 640 && c.height == 360)
        return depthX < colorX || depthY < colorY || special
    }

    private static func job(depth: PixelBuffer, out: PixelBuffer, calibration: RGBDCalibration,
                            scratch: UnsafeMutableRawPointer) -> dl_align_job {
        let d = intrinsics(calibration.depth, width: depth.width, height: depth.height)
        let c = intrinsics(calibration.color, width: out.width, height: out.height)
        let r = calibration.depthToColor.rotation, t = calibration.depthToColor.translation
        var job = dl_align_job()
        job.depth = UnsafePointer(depth.baseAddress.assumingMemoryBound(to: Float.self))
        job.depth_stride = Int64(depth.bytesPerRow / 4)
        job.depth_width = Int32(depth.width); job.depth_height = Int32(depth.height)
        job.out = out.baseAddress.assumingMemoryBound(to: Float.self)
        job.out_stride = Int64(out.bytesPerRow / 4)
        job.color_width = Int32(out.width); job.color_height = Int32(out.height)
        job.dfx = d.fx; job.dfy = d.fy; job.dcx = d.cx; job.dcy = d.cy
        job.cfx = c.fx; job.cfy = c.fy; job.ccx = c.cx; job.ccy = c.cy
        job.r = (r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8])
        job.t = (t.x, t.y, t.z)
        job.scratch = scratch
        job.rect_bands = 1; job.scatter_bands = 1
        job.both_corners = usesBothCorners(depth: d, color: c) ? 1 : 0
        return job
    }
}

extension RGBDCalibration {
    /// A calibration like an Intel RealSense D435's, for benches and tests: pinhole depth and
    /// color cameras (depth fx = fy = 424 at 848×480, color fx ≈ 920 at 1280×720, scaled with the
    /// sizes asked for, principal points a little off center) and the depth→color extrinsics of
    /// the D435 in librealsense's unit-test recording (shared/data/realsense-d435-640x480.bag):
    /// a 14.3 mm baseline along x and a rotation of about 0.8°. Depth in millimeters.
    public static func d435Like(depthWidth: Int = 848, depthHeight: Int = 480,
                                colorWidth: Int = 1280, colorHeight: Int = 720) -> RGBDCalibration {
        let ds = Float(depthWidth) / 848, cs = Float(colorWidth) / 1280
        let depth = CameraIntrinsics(fx: 424.0 * ds, fy: 424.0 * ds, cx: Float(depthWidth - 1) / 2 + 3.39,
                                     cy: Float(depthHeight - 1) / 2 + 2.69, width: depthWidth, height: depthHeight)
        let color = CameraIntrinsics(fx: 919.81 * cs, fy: 920.13 * cs, cx: Float(colorWidth - 1) / 2 + 0.44,
                                     cy: Float(colorHeight - 1) / 2 - 0.32, width: colorWidth, height: colorHeight)
        // The recording's rs2_extrinsics (rotation column-major there), row-major here.
        let rotation: [Float] = [0.99986332654953, -0.010310042649507523, 0.012925871647894382,
                                 0.01030866801738739, 0.9999468326568604, 0.00017303005733992904,
                                 -0.01292696874588728, -3.9757887861924246e-05, 0.9999164342880249]
        return RGBDCalibration(depth: CameraModel(intrinsics: depth, model: .brownConrady, coeffs: [0, 0, 0, 0, 0]),
                               color: CameraModel(intrinsics: color, model: .brownConrady, coeffs: [0, 0, 0, 0, 0]),
                               depthToColor: RigidTransform(rotation: rotation,
                                                            translation: SIMD3(0.014311314560472965, 0.000602306448854506, 0.000610804243478924)),
                               depthScale: 1000, origin: "D435-like example")
    }
}
