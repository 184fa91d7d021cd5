import CDepthKit
import Foundation

/// What colors a point: its color texel (PLY: its own color), its depth through the current
/// colormap (near = warm, as in the 2D view), or its height (−y of the depth camera) through it.
/// Shared by the CPU renderer and GPUKit's `PointCloudRenderer`.
public enum PointCloudColorBy: String, CaseIterable, Sendable {
    case color, depth, height

    /// The next choice (the viewer's key G).
    public var next: PointCloudColorBy {
        let all = Self.allCases
        return all[(all.firstIndex(of: self)! + 1) % all.count]
    }

    /// DL_COLOR_BY_* of dl_codes.h.
    public var code: UInt32 {
        switch self {
        case .color: return DL_COLOR_BY_COLOR
        case .depth: return DL_COLOR_BY_DEPTH
        case .height: return DL_COLOR_BY_HEIGHT
        }
    }
}

/// Points that are not a depth frame (a PLY file) for `CPUPointRenderer`: 4 floats a point, x, y,
/// z and the rgba8 color's bits (r | g<<8 | b<<16 | a<<24), the layout GPUKit's `GPUPointCloud`
/// uploads.
public final class CPUPointList {
    public let count: Int
    /// Axis-aligned bounds of the points (zero box for an empty list).
    public let bounds: (min: SIMD3<Float>, max: SIMD3<Float>)
    let words: UnsafeMutablePointer<Float>

    /// `count` points made by `point(i) -> (xyz, rgba8 packed)`.
    public init(count: Int, point: (Int) -> (SIMD3<Float>, UInt32)) {
        self.count = max(count, 0)
        words = .allocate(capacity: max(self.count, 1) * 4)
        var lo = SIMD3<Float>(repeating: .infinity), hi = SIMD3<Float>(repeating: -.infinity)
        for i in 0..<self.count {
            let (p, c) = point(i)
            lo = pointwiseMin(lo, p); hi = pointwiseMax(hi, p)
            words[4 * i] = p.x; words[4 * i + 1] = p.y; words[4 * i + 2] = p.z
            words[4 * i + 3] = Float(bitPattern: c)
        }
        bounds = self.count > 0 ? (lo, hi) : (.zero, .zero)
    }

    /// A point cloud (PLY, `export-ply`) with its 8-bit colors, opaque.
    public convenience init(cloud: PointCloud) {
        let positions = cloud.positions, colors = cloud.colors
        self.init(count: positions.count) { i in
            let c = colors[i]
            return (positions[i], UInt32(c.x) | UInt32(c.y) << 8 | UInt32(c.z) << 16 | 0xFF00_0000)
        }
    }

    deinit { words.deallocate() }
}

/// The CPU point renderer: the compute path of GPUKit's `PointCloudRenderer` (pointCloudProject.comp
/// and pointCloudResolve.comp) on the CPU, with the same picture. Every point is projected with the
/// shader's float operations in lavapipe's order and lands on one output pixel, where the nearest
/// point (smallest depth key, then smallest color: the compute path's 64-bit atomicMin) is kept;
/// each output pixel then takes the nearest point within the s×s window [−⌊(s−1)/2⌋, ⌊s/2⌋]² around
/// it (s = point size rounded; a point covers [−⌊s/2⌋, ⌊(s−1)/2⌋]² around its pixel; own pixel first, then rows top to bottom, left to right, strictly
/// nearer replaces), or the background. Even sizes land on the nearest pixel (⌊f + ½⌋).
///
/// The loops are points.c (CDepthKit): points are projected in chunks on the worker pool and sorted
/// by the row band their pixel is in; each band then keeps its pixels' minima (one writer a
/// pixel, no atomics, the same result in any order) and resolves its rows. The scratch is kept
/// between frames: after the first frame of a size nothing is allocated. Not thread-safe: one
/// thread renders.
public final class CPUPointRenderer {
    /// How points look (size, background, colors, lighting, adaptive size): one value, the same
    /// type the GPU renderer holds. The point size is clamped to 1…64 (NaN → 1).
    public var style: PointStyle {
        get { storedStyle }
        set {
            storedStyle = newValue
            storedStyle.pointSize = newValue.pointSize.isNaN ? 1 : min(max(newValue.pointSize, 1), 64)
        }
    }
    private var storedStyle = PointStyle()
    /// Point diameter in output pixels, 1…64 (NaN → 1), rounded to whole pixels.
    public var pointSize: Float {
        get { style.pointSize }
        set { style.pointSize = newValue }
    }
    /// Background, RGBA in [0, 1]; dark gray by default (as `PointCloudRenderer.clearColor`).
    public var clearColor: SIMD4<Float> {
        get { style.clearColor }
        set { storedStyle.clearColor = newValue }
    }
    /// What colors points.
    public var colorBy: PointCloudColorBy {
        get { style.colorBy }
        set { storedStyle.colorBy = newValue }
    }
    /// The colormap of `colorBy` depth / height.
    public var colormap: Colormap {
        get { style.colormap }
        set { storedStyle.colormap = newValue }
    }
    /// Meters mapped onto the colormap: depth (near end = warm) or height (−y).
    public var colorRange: ClosedRange<Float> = 0...5
    /// Draw every n-th point of a point list; 1…16.
    public var pointStride = 1
    /// Eye-dome lighting after the resolve (off by default): `EyeDomeLighting`'s formula, as the
    /// compute path's pointCloudEDL.comp.
    public var eyeDomeLighting: EyeDomeLighting {
        get { style.eyeDomeLighting }
        set { storedStyle.eyeDomeLighting = newValue }
    }
    /// Adaptive point size (0: off): `AdaptivePointSize`'s scale; each point gets ⌈scale·z / w⌉
    /// (depth frames) or ⌈scale / w⌉ (point lists) pixels, w its view depth, clamped to 1…pointSize.
    public var adaptiveSizeScale: Float {
        get { style.adaptiveSizeScale }
        set { storedStyle.adaptiveSizeScale = newValue }
    }
    /// Run the phases on the calling thread only (tests: the banded run must equal it).
    public var runsSerially = false

    private var scratch: UnsafeMutableRawPointer?
    private var scratchBytes = 0
    private var pool: BufferPool?

    public init() {}

    deinit { scratch?.deallocate() }

    // MARK: Depth frames

    /// Draws one point per depth pixel (`.depthFloat32` meters, unprojected with `intrinsics`,
    /// scaled to the depth's size if given for another) colored from `color` (rgba8 or bgra8, any
    /// size: texel (⌊u·Wc/Wd⌋, ⌊v·Hc/Hd⌋)) into `out` (rgba8, rewritten whole), seen through
    /// `viewProjection` (16 floats, column-major: world → Vulkan clip space).
    public func render(depth: PixelBuffer, color: PixelBuffer, intrinsics: CameraIntrinsics, viewProjection: [Float],
                       into out: PixelBuffer) throws {
        guard depth.format == .depthFloat32 else {
            throw RenderError.formatMismatch(kernel: "points", expected: "depthFloat32", got: depth.frameFormat)
        }
        guard color.format == .rgba8 || color.format == .bgra8 else {
            throw RenderError.invalidParameter("points: color must be rgba8 or bgra8, not \(color.format)")
        }
        guard intrinsics.width > 0, intrinsics.height > 0 else {
            throw RenderError.invalidParameter("points: intrinsics refer to an empty image: \(intrinsics)")
        }
        let k = intrinsics.width == depth.width && intrinsics.height == depth.height
            ? intrinsics : intrinsics.scaled(toWidth: depth.width, height: depth.height)
        guard k.fx > 0, k.fy > 0, k.fx.isFinite, k.fy.isFinite, k.cx.isFinite, k.cy.isFinite else {
            throw RenderError.invalidParameter("points: intrinsics need positive, finite focal lengths: \(k)")
        }
        var job = try makeJob(viewProjection: viewProjection, out: out)
        job.source = DL_POINT_SOURCE_DEPTH
        job.depth = UnsafePointer(depth.baseAddress.assumingMemoryBound(to: Float.self))
        job.depth_stride = Int64(depth.bytesPerRow / 4)
        job.depth_width = Int32(depth.width); job.depth_height = Int32(depth.height)
        job.color = UnsafePointer(color.baseAddress.assumingMemoryBound(to: UInt8.self))
        job.color_stride = Int64(color.bytesPerRow)
        job.color_width = Int32(color.width); job.color_height = Int32(color.height)
        job.color_bgra = color.format == .bgra8 ? 1 : 0
        job.fx = k.fx; job.fy = k.fy; job.cx = k.cx; job.cy = k.cy
        job.count = Int64(depth.width * depth.height)
        job.stride = 1
        run(&job)
        out.markModified()
    }

    /// `render(depth:…into:)` into a `width`×`height` buffer from a pool of two (it comes back
    /// when released, so steady state allocates nothing).
    public func render(depth: PixelBuffer, color: PixelBuffer, intrinsics: CameraIntrinsics, viewProjection: [Float],
                       width: Int, height: Int) throws -> PixelBuffer {
        let out = try outputBuffer(width: width, height: height)
        try render(depth: depth, color: color, intrinsics: intrinsics, viewProjection: viewProjection, into: out)
        return out
    }

    // MARK: Point lists

    /// Draws every `pointStride`-th point of `points` into `out` (rgba8, rewritten whole).
    public func render(points: CPUPointList, viewProjection: [Float], into out: PixelBuffer) throws {
        var job = try makeJob(viewProjection: viewProjection, out: out)
        job.source = DL_POINT_SOURCE_BUFFER
        job.points = UnsafePointer(points.words)
        job.count = Int64(points.count)
        job.stride = Int32(min(max(pointStride, 1), 16))
        run(&job)
        out.markModified()
    }

    /// `render(points:…into:)` into a pooled `width`×`height` buffer.
    public func render(points: CPUPointList, viewProjection: [Float], width: Int, height: Int) throws -> PixelBuffer {
        let out = try outputBuffer(width: width, height: height)
        try render(points: points, viewProjection: viewProjection, into: out)
        return out
    }

    /// Points drawn from `points` at `pointStride`.
    public func drawnPoints(_ points: CPUPointList) -> Int {
        let s = min(max(pointStride, 1), 16)
        return (points.count + s - 1) / s
    }

    // MARK: Shared

    /// The s×s window a pixel searches for points, as offsets [−back, reach]: s = round(pointSize),
    /// back ⌊(s−1)/2⌋, reach ⌊s/2⌋ (a point landed at x covers [x − ⌊s/2⌋, x + ⌊(s−1)/2⌋]).
    public static func window(_ pointSize: Float) -> (back: Int, reach: Int) {
        let s = max(1, Int(pointSize.rounded()))
        return ((s - 1) / 2, s / 2)
    }

    /// rgba8 of a color in [0, 1] (NaN → 0), as the compute path packs its background.
    public static func packRGBA(_ c: SIMD4<Float>) -> UInt32 {
        func u(_ v: Float) -> UInt32 { UInt32(min(max(v.isNaN ? 0 : v, 0), 1) * 255 + 0.5) }
        return u(c.x) | u(c.y) << 8 | u(c.z) << 16 | u(c.w) << 24
    }

    private func outputBuffer(width: Int, height: Int) throws -> PixelBuffer {
        guard width > 0, height > 0, width <= 16384, height <= 16384 else {
            throw RenderError.invalidParameter("points: output must be 1…16384 pixels a side, got \(width)x\(height)")
        }
        let format = FrameFormat(width: width, height: height, pixelFormat: .rgba8)
        if pool?.format != format { pool = BufferPool(format: format, outputRetainedBufferCountHint: 2) }
        return try pool!.makeBuffer()
    }

    private func makeJob(viewProjection m: [Float], out: PixelBuffer) throws -> dl_points_job {
        // A while loop: a for-in over the array allocates per call in unoptimized builds.
        var finite = m.count == 16, i = 0
        while finite && i < 16 { finite = m[i].isFinite; i += 1 }
        guard finite else {
            throw RenderError.invalidParameter("points: the camera matrix must be 16 finite floats")
        }
        guard out.format == .rgba8 else {
            throw RenderError.formatMismatch(kernel: "points", expected: "rgba8", got: out.frameFormat)
        }
        guard out.width > 0, out.height > 0, out.width <= 16384, out.height <= 16384, out.bytesPerRow % 4 == 0 else {
            throw RenderError.invalidParameter("points: output must be 1…16384 pixels a side, got \(out.width)x\(out.height)")
        }
        var job = dl_points_job()
        job.m = (m[0], m[1], m[2], m[3], m[4], m[5], m[6], m[7], m[8], m[9], m[10], m[11], m[12], m[13], m[14], m[15])
        job.width = Int32(out.width); job.height = Int32(out.height)
        job.out = out.baseAddress.assumingMemoryBound(to: UInt32.self)
        job.out_stride = Int64(out.bytesPerRow / 4)
        job.color_by = colorBy.code
        job.colormap = colormap.code
        job.range_lo = colorRange.lowerBound; job.range_hi = colorRange.upperBound
        let s = max(1, Int(pointSize.rounded()))
        job.nearest_pixel = s % 2 == 0 ? 1 : 0
        let w = Self.window(pointSize)
        job.back = Int32(w.back); job.reach = Int32(w.reach)
        job.background = Self.packRGBA(clearColor)
        if adaptiveSizeScale > 0 && adaptiveSizeScale.isFinite {
            job.adapt_scale = adaptiveSizeScale
            job.adapt_max = Int32(s)
        }
        let edl = eyeDomeLighting
        if edl.enabled {
            let terms = EyeDomeLighting.depthTerms(m)
            job.edl = 1
            job.edl_r = Int32(edl.radius); job.edl_d = Int32(edl.diagonal)
            job.edl_a = terms.a; job.edl_b = terms.b; job.edl_factor = edl.factor
        }
        job.bands = Int32(min(bandCount(out.height, minimumRowsPerBand: 8), Int(DL_POINTS_MAX_BANDS)))
        return job
    }

    private func run(_ job: inout dl_points_job) {
        let s = job.source == DL_POINT_SOURCE_BUFFER ? Int64(max(job.stride, 1)) : 1
        let drawn = (job.count + s - 1) / s
        let need = dl_points_scratch_bytes(job.width, job.height, drawn, job.bands)
        if need > scratchBytes {
            scratch?.deallocate()
            scratch = UnsafeMutableRawPointer.allocate(byteCount: need, alignment: 64)
            scratchBytes = need
        }
        job.scratch = scratch
        dl_points_prepare(&job)
        if runsSerially {
            dl_points_run_serial(&job)
        } else {
            parallelFor(Int(job.chunks), context: &job, dl_points_project_chunk)
            parallelFor(Int(job.bands), context: &job, dl_points_apply_band)
            parallelFor(Int(job.bands), context: &job, dl_points_resolve_band)
            if job.edl != 0 { parallelFor(Int(job.bands), context: &job, dl_points_edl_band) }
        }
    }
}
