import CPlatform
import CGLFW
import CVulkan
import Capture
import DepthKit
import Foundation
import GPUKit

/// A PLY point list in the 3D view (`--source ply:FILE`): uploaded once in chunks (`GPUPointCloud`),
/// framed whole from `CloudFraming`'s home view (reset returns to it exactly), drawn by the compute
/// rasterizer (or on the CPU). Still, the whole cloud is drawn once and that picture shown again
/// until something changes (`DrawKey`; `--reprocess` draws every frame). Progressive while moving:
/// every n-th point, n (1…16, or 1…256 with a subset) sized so that a moving frame fits
/// `frameBudgetMs` (`stride(…)`): from the last whole draw's milliseconds when a move starts, then
/// from the moving frames' own. A cloud of at least `subsetMinimum` points also keeps every
/// `subsetStep`-th point in a buffer of its own: a moving draw with n ≥ 16 reads that subset
/// contiguously (the same points as the whole cloud at stride 16·⌊n/16⌋) instead of every 16th point
/// of the whole buffer.
struct PointListState {
    var cloud: GPUPointCloud
    var hasColor: Bool
    /// The points on the host, for picking (`PointPicker`; 12 bytes a point, the loaded array kept).
    var positions: [SIMD3<Float>] = []
    /// Their colors, for the hover readout (empty for a cloud without colors).
    var colors: [SIMD3<UInt8>] = []
    /// `AdaptivePointSize.spacing` of the cloud (meters), estimated on the first draw with adaptive
    /// size (not at load: it is a scan of thousands of points); a sequence keeps its first file's,
    /// as it keeps its home view.
    var spacing: Float?
    /// The points on the host too, for `CPUPointRenderer` (the panel's "3D points" cpu).
    var host: CPUPointList?
    /// Every `subsetStep`-th point (on the GPU, and on the host with `host`), for clouds of at least
    /// `subsetMinimum` points; nil for smaller ones.
    var subset: GPUPointCloud?
    var hostSubset: CPUPointList?
    /// Set on the first draw, from the window size then.
    var framing: CloudFraming?
    /// Milliseconds of the last draw of every point (frame to frame), nil before the first one.
    var lastFullMs: Double?
    /// Milliseconds of the last moving frame (frame to frame) and the stride it drew at.
    var lastMoving: (ms: Double, stride: Int)?
    /// When the last draw started, the stride it drew at (1: every point).
    var lastDraw: (time: Double, stride: Int)?
    /// The camera of the last frame (drawn or shown again).
    var lastCamera: OrbitCamera?
    /// The stride of this frame (1…`maxStride`).
    var stride = 1
    /// Points drawn by this frame.
    var drawn = 0
    /// What the picture shown was drawn from; nil before the first draw (and after a sequence file).
    var drawnKey: DrawKey?
    /// Seconds the upload to the GPU and the host copy for the CPU renderer took (`--stats` prints them).
    var loadSeconds = (upload: 0.0, host: 0.0)

    static let subsetStep = 16
    static let subsetMinimum = 1 << 20

    /// The largest stride: 16 (the renderers' limit) or 16 × 16 with the subset.
    var maxStride: Int { subset != nil ? 16 * Self.subsetStep : 16 }

    /// Everything a point-list picture depends on: equal keys draw equal pictures.
    struct DrawKey: Equatable {
        var cloud: ObjectIdentifier
        var count: Int
        var onCPU: Bool
        var viewProjection: Matrix4
        var width: Int, height: Int
        var stride: Int
        var look: PointStyle
        var colorRange: ClosedRange<Float>
        var atomicBits: Int
    }

    /// The stride of the next draw (1…`maxStride`): every point while still. When a move starts
    /// (current 1), ⌈last whole draw's ms / target⌉ once that is over the budget (target 0.9 ×
    /// budget). While moving, once a moving frame was measured at the current stride n: a frame is
    /// modelled as F + C/n ms (F: what every frame costs whatever it draws, the present included; C:
    /// drawing every point), F and C solved from the whole draw and that frame, and the stride is
    /// the least that fits the target, or 1.2 × F when F alone is over it (fewer points would
    /// no longer buy speed, only holes). It changes only by more than a quarter (noise).
    static func stride(moving: Bool, lastFullMs: Double?, lastMoving: (ms: Double, stride: Int)?, budgetMs: Double,
                       current: Int, maxStride: Int) -> Int {
        guard moving else { return 1 }
        let target = 0.9 * budgetMs
        // With a subset (maxStride > 16), strides 2…15 are not offered: they read the whole buffer
        // with gaps, as many cache lines as every point (16-byte points, 64-byte lines), so they cost
        // nearly a whole draw, and frames measured there misled the model into a large F (20 M
        // points orbiting on compute: stuck at 5 M points drawn, 4.8 FPS). From 16 the subset is read.
        func clamped(_ v: Double) -> Int {
            let n = min(maxStride, max(1, Int(v.rounded(.up))))
            return maxStride > 16 && n > 1 && n < 16 ? 16 : n
        }
        guard let full = lastFullMs else { return current }
        guard current > 1, let m = lastMoving, m.stride == current else {
            return current == 1 && full > budgetMs ? clamped(full / target) : current
        }
        let part = 1 - 1 / Double(m.stride)
        let c = max(0, (full - m.ms) / part), f = max(0, full - c)
        guard c > 0 else { return 1 }   // drawing every point costs no more
        let next = clamped(c / (max(target, 1.2 * f) - f))
        return abs(next - current) <= max(1, current / 4) ? current : next
    }

    /// Which buffer a draw at stride `n` reads and at which stride: the subset at ⌊n/16⌋ when there
    /// is one and n ≥ 16, else the whole cloud at min(n, 16).
    static func source(stride n: Int, hasSubset: Bool) -> (subset: Bool, stride: Int) {
        if hasSubset, n >= subsetStep { return (true, min(16, n / subsetStep)) }
        return (false, min(max(n, 1), 16))
    }

    /// Points a draw at stride `n` draws of a cloud of `count`.
    static func drawnPoints(count: Int, stride n: Int, hasSubset: Bool) -> Int {
        let (fromSubset, s) = source(stride: n, hasSubset: hasSubset)
        let total = fromSubset ? (count + subsetStep - 1) / subsetStep : count
        return (total + s - 1) / s
    }

    func source(stride n: Int) -> (subset: Bool, stride: Int) { Self.source(stride: n, hasSubset: subset != nil) }
    func drawnPoints(stride n: Int) -> Int { Self.drawnPoints(count: cloud.count, stride: n, hasSubset: subset != nil) }
}

extension Scene3D {
    static let frameBudgetMs = 33.0

    /// Uploads `contents` (nil clears it); without colors the cloud starts colored by height, with
    /// eye-dome lighting on (off for a colored cloud).
    func setPointList(_ contents: PLYContents?) throws {
        pointList = nil
        input.camera = nil
        cloud = nil
        input.picks.removeAll()
        cloudHover.pointsChanged()
        guard let contents else { return }
        let t0 = monotonicSeconds()
        let cloud = try GPUPointCloud(renderer: renderer, cloud: contents.cloud)
        let t1 = monotonicSeconds()
        var list = PointListState(cloud: cloud, hasColor: contents.hasColor, positions: contents.cloud.positions,
                                  colors: contents.hasColor ? contents.cloud.colors : [],
                                  host: CPUPointList(cloud: contents.cloud))
        let t2 = monotonicSeconds()
        try makeSubsets(&list, contents.cloud)
        list.drawn = cloud.count
        list.loadSeconds = (t1 - t0 + monotonicSeconds() - t2, t2 - t1)
        pointList = list
        renderer.method = .compute
        renderer.colorBy = contents.hasColor ? .color : .height
        renderer.eyeDomeLighting.enabled = edlChoice ?? !contents.hasColor   // shape without color reads by its shading
    }

    /// Every `subsetStep`-th point of `cloud` on the GPU and the host, for a cloud of at least
    /// `subsetMinimum` points (else none). The GPU buffer of the last subset is refilled in place
    /// when the new one fits (a PLY sequence's files; the frame in flight was waited for).
    func makeSubsets(_ list: inout PointListState, _ cloud: PointCloud) throws {
        guard cloud.count >= PointListState.subsetMinimum else {
            list.subset = nil
            list.hostSubset = nil
            return
        }
        let step = PointListState.subsetStep
        let picked = Swift.stride(from: 0, to: cloud.count, by: step)
        let sub = PointCloud(positions: picked.map { cloud.positions[$0] }, colors: picked.map { cloud.colors[$0] })
        if let s = list.subset, try s.replace(with: sub) {} else { list.subset = try GPUPointCloud(renderer: renderer, cloud: sub) }
        list.hostSubset = CPUPointList(cloud: sub)
    }

    /// Records the point list into `cb` (inside `recorder.frame {}`), at the progressive stride;
    /// records nothing when the picture of the last frame is still right (it is shown again).
    func recordPointList(_ cb: VkCommandBuffer, recorder: GPUFrameRecorder, width: Int, height: Int,
                         now: Double, mark: (String) -> Void) throws {
        guard pointList != nil else { return }
        let key = preparePointList(width: width, height: height, now: now, onCPU: false)
        // A moving view at a stride is drawn at half the window's size (the present pass scales it up).
        let half = key.width != width
        var buffer = half ? movingTarget : target
        if buffer?.width != key.width || buffer?.height != key.height {
            buffer = PixelBuffer(width: key.width, height: key.height, format: .rgba8)
            if half { movingTarget = buffer } else { target = buffer }
        }
        let out = try recorder.target(for: buffer!)
        if !redrawsAlways, output === out, pointList!.drawnKey == key { return }
        let list = pointList!
        let (fromSubset, stride) = list.source(stride: list.stride)
        renderer.pointStride = stride
        try renderer.record(cb: cb, recorder: recorder, cloud: fromSubset ? list.subset! : list.cloud, output: out,
                            camera: input.pointCloudCamera(key.viewProjection))
        mark("point cloud")
        drew(key, now: now)
        output = out
        picture = nil
    }

    /// The point list drawn on the CPU (`CPUPointRenderer`, the compute path's picture) into a
    /// reused `width`×`height` picture, for the window to copy in (the last one again when still right).
    func renderPointListOnCPU(width: Int, height: Int, now: Double) throws -> PixelBuffer {
        guard let host = pointList?.host else { throw CaptureError.invalidState("the point list has no host copy") }
        let out: PixelBuffer
        if let p = picture ?? listTarget, p.width == width, p.height == height { out = p } else {
            out = PixelBuffer(width: width, height: height, format: .rgba8)
        }
        let key = preparePointList(width: width, height: height, now: now, onCPU: true)
        if !redrawsAlways, picture === out, pointList!.drawnKey == key { return out }
        listTarget = out
        let list = pointList!
        let (fromSubset, stride) = list.source(stride: list.stride)
        let r = cpuRendererWithGPUSettings()
        r.colorRange = renderer.colorRange
        r.pointStride = stride
        try r.render(points: fromSubset ? list.hostSubset! : host, viewProjection: input.pointCloudCamera(key.viewProjection).viewProjection,
                     into: out)
        drew(key, now: now)
        output = nil
        picture = out
        return out
    }

    /// A draw of `key` started at `now` (its milliseconds are measured when the next one starts).
    private func drew(_ key: PointListState.DrawKey, now: Double) {
        pointList?.drawnKey = key
        pointList?.lastDraw = (now, key.stride)
    }

    /// The camera, stride, point size and colors of this frame's draw of the point list, and what
    /// its picture depends on.
    private func preparePointList(width: Int, height: Int, now: Double, onCPU: Bool) -> PointListState.DrawKey {
        var list = pointList!
        let k = CameraIntrinsics.default(width: width, height: height)
        if list.framing == nil || input.camera == nil {
            let f = CloudFraming(min: list.cloud.bounds.min, max: list.cloud.bounds.max, intrinsics: k)
            list.framing = f
            input.camera = f.camera
        }
        let framing = list.framing!, cam = input.camera!
        // The last draw's cost, frame to frame (a picture shown again costs nothing to measure).
        if let last = list.lastDraw {
            let ms = (now - last.time) * 1000
            if last.stride == 1 { list.lastFullMs = ms } else { list.lastMoving = (ms, last.stride) }
            list.lastDraw = nil
        }
        let moving = input.isDragging || (list.lastCamera.map { $0 != cam } ?? false)
        list.lastCamera = cam
        list.stride = PointListState.stride(moving: moving, lastFullMs: list.lastFullMs, lastMoving: list.lastMoving,
                                            budgetMs: Self.frameBudgetMs, current: list.stride, maxStride: list.maxStride)
        list.drawn = list.drawnPoints(stride: list.stride)
        let planes = framing.planes(distance: cam.distance)
        // The window's framing (picking and the overlay use it); the GPU draws a moving view at a
        // stride at half that size, through the same camera (the compute pass's per-pixel cost).
        let viewProjection = Matrix4.projection(fx: k.fx, fy: k.fy, cx: k.cx, cy: k.cy, width: width, height: height,
                                                near: planes.near, far: planes.far) * cam.viewMatrix
        input.frame(viewProjection: viewProjection, width: width, height: height, focal: k.fx)
        var draw = (width: width, height: height, k: k, viewProjection: viewProjection)
        if !onCPU, list.stride > 1, width >= 2, height >= 2 {
            let w = (width + 1) / 2, h = (height + 1) / 2, kh = CameraIntrinsics.default(width: w, height: h)
            draw = (w, h, kh, Matrix4.projection(fx: kh.fx, fy: kh.fy, cx: kh.cx, cy: kh.cy, width: w, height: h,
                                                 near: planes.near, far: planes.far) * cam.viewMatrix)
        }
        renderer.pointSize = input.userPointSize ?? (adaptiveSize ? AdaptivePointSize.defaultLargest : 1)
        if adaptiveSize && list.spacing == nil { list.spacing = AdaptivePointSize.spacing(of: list.positions) }
        renderer.adaptiveSizeScale = adaptiveSize ? AdaptivePointSize.scale(outputFocal: draw.k.fx, spacing: list.spacing ?? 0) : 0
        if renderer.colorBy != .color {
            renderer.colorRange = PointColorRange.colorRange(renderer.colorBy, min: list.cloud.bounds.min, max: list.cloud.bounds.max)
        }
        pointList = list
        return PointListState.DrawKey(
            cloud: ObjectIdentifier(list.cloud), count: list.cloud.count, onCPU: onCPU, viewProjection: draw.viewProjection,
            width: draw.width, height: draw.height, stride: list.stride, look: renderer.style,
            colorRange: renderer.colorRange, atomicBits: renderer.atomicBits)
    }

    /// "drawing 250,000 of 2,000,000 points" (nil without a point list).
    var drawnPointsLine: String? {
        guard let list = pointList else { return nil }
        return Self.drawnPointsText(drawn: list.drawn, total: list.cloud.count)
    }

    /// "drawing 62,500 of 2,000,000 points (moving)": the overlay's line (dl_format_drawn_points).
    static func drawnPointsText(drawn: Int, total: Int) -> String {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 96) { buf in
            _ = dl_format_drawn_points(buf.baseAddress, buf.count, drawn, total)
            return String(cString: buf.baseAddress!)
        }
    }
}
