import CGLFW
import CVulkan
import Capture
import DepthKit
import Foundation
import GPUKit

/// A PLY point list in the 3D view (`--source ply:FILE`): uploaded once in chunks (`GPUPointCloud`),
/// framed whole from `CloudFraming`'s home view (reset returns to it exactly), drawn by the compute
/// rasterizer. Progressive: once a whole draw took longer than `frameBudgetMs` (the interval to the
/// next frame), a moving view draws every n-th point (n = ⌈last full ms / budget⌉, at most 16) and
/// the whole cloud again as soon as the view is still.
struct PointListState {
    var cloud: GPUPointCloud
    var hasColor: Bool
    /// The points on the host, for picking (`PointPicker`; 12 bytes a point, the loaded array kept).
    var positions: [SIMD3<Float>] = []
    /// `AdaptivePointSize.spacing` of the cloud (meters), estimated on the first draw with adaptive
    /// size (not at load: it is a scan of thousands of points); a sequence keeps its first file's,
    /// as it keeps its home view.
    var spacing: Float?
    /// The points on the host too, for `CPUPointRenderer` (the panel's "3D points" cpu).
    var host: CPUPointList?
    /// Set on the first draw, from the window size then.
    var framing: CloudFraming?
    /// Milliseconds of the last draw of every point (frame to frame), nil before the first one.
    var lastFullMs: Double?
    /// When the last draw started, whether it drew every point, the camera it drew.
    var lastDraw: (time: Double, full: Bool, camera: OrbitCamera)?
    var stride = 1
    /// Seconds the upload to the GPU and the host copy for the CPU renderer took (`--stats` prints them).
    var loadSeconds = (upload: 0.0, host: 0.0)

    /// The stride of the next draw: every point while still; while moving, every n-th point once a
    /// whole draw took over the budget (n = ⌈ms / budget⌉, at most 16); else the current one.
    static func stride(moving: Bool, lastFullMs: Double?, budgetMs: Double, current: Int) -> Int {
        guard moving else { return 1 }
        guard let ms = lastFullMs, ms > budgetMs else { return current }
        return min(16, Int((ms / budgetMs).rounded(.up)))
    }
}

extension Scene3D {
    static let frameBudgetMs = 33.0

    /// Uploads `contents` (nil clears it); without colors the cloud starts colored by height, with
    /// eye-dome lighting on (off for a colored cloud).
    func setPointList(_ contents: PLYContents?) throws {
        pointList = nil
        camera = nil
        cloud = nil
        picks.removeAll()
        guard let contents else { return }
        let t0 = monotonicSeconds()
        let cloud = try GPUPointCloud(renderer: renderer, cloud: contents.cloud)
        let t1 = monotonicSeconds()
        let host = CPUPointList(cloud: contents.cloud)
        pointList = PointListState(cloud: cloud, hasColor: contents.hasColor, positions: contents.cloud.positions,
                                   host: host)
        pointList?.loadSeconds = (t1 - t0, monotonicSeconds() - t1)
        renderer.method = .compute
        renderer.colorBy = contents.hasColor ? .color : .height
        renderer.eyeDomeLighting.enabled = edlChoice ?? !contents.hasColor   // shape without color reads by its shading
    }

    /// True while a mouse drag is held (the view moves under the user).
    var isDragging: Bool { press?.moved == true }

    /// Records the point list into `cb` (inside `recorder.frame {}`), at the progressive stride.
    func recordPointList(_ cb: VkCommandBuffer, recorder: GPUFrameRecorder, width: Int, height: Int,
                         now: Double, mark: (String) -> Void) throws {
        guard pointList != nil else { return }
        if target?.width != width || target?.height != height {
            target = PixelBuffer(width: width, height: height, format: .rgba8)
        }
        let out = try recorder.target(for: target!)
        preparePointList(width: width, height: height, now: now)
        try renderer.record(cb: cb, recorder: recorder, cloud: pointList!.cloud, output: out,
                            camera: pointCloudCamera(viewProjection))
        mark("point cloud")
        output = out
        picture = nil
    }

    /// The point list drawn on the CPU (`CPUPointRenderer`, the compute path's picture) into a
    /// reused `width`×`height` picture, for the window to copy in.
    func renderPointListOnCPU(width: Int, height: Int, now: Double) throws -> PixelBuffer {
        guard let host = pointList?.host else { throw CaptureError.invalidState("the point list has no host copy") }
        let out: PixelBuffer
        if let p = picture ?? listTarget, p.width == width, p.height == height { out = p } else {
            out = PixelBuffer(width: width, height: height, format: .rgba8)
        }
        listTarget = out
        preparePointList(width: width, height: height, now: now)
        let r = cpuRenderer
        r.pointSize = renderer.pointSize
        r.colorBy = renderer.colorBy
        r.colormap = renderer.colormap
        r.colorRange = renderer.colorRange
        r.clearColor = renderer.clearColor
        r.eyeDomeLighting = renderer.eyeDomeLighting
        r.adaptiveSizeScale = renderer.adaptiveSizeScale
        r.pointStride = renderer.pointStride
        try r.render(points: host, viewProjection: pointCloudCamera(viewProjection).viewProjection, into: out)
        output = nil
        picture = out
        return out
    }

    /// The camera, stride, point size and colors of this frame's draw of the point list.
    private func preparePointList(width: Int, height: Int, now: Double) {
        guard var list = pointList else { return }
        let k = CameraIntrinsics.default(width: width, height: height)
        if list.framing == nil || camera == nil {
            let f = CloudFraming(min: list.cloud.bounds.min, max: list.cloud.bounds.max, intrinsics: k)
            list.framing = f
            camera = f.camera
        }
        let framing = list.framing!, cam = camera!
        // The last draw's cost, frame to frame, when it drew every point.
        if let last = list.lastDraw, last.full { list.lastFullMs = (now - last.time) * 1000 }
        let moving = isDragging || (list.lastDraw.map { $0.camera != cam } ?? false)
        list.stride = PointListState.stride(moving: moving, lastFullMs: list.lastFullMs, budgetMs: Self.frameBudgetMs,
                                            current: list.stride)
        renderer.pointStride = list.stride
        let planes = framing.planes(distance: cam.distance)
        let proj = Matrix4.projection(fx: k.fx, fy: k.fy, cx: k.cx, cy: k.cy, width: width, height: height,
                                      near: planes.near, far: planes.far)
        viewProjection = proj * cam.viewMatrix
        extent = (width, height)
        focal = k.fx
        renderer.pointSize = userPointSize ?? (adaptiveSize ? AdaptivePointSize.defaultLargest : 1)
        if adaptiveSize && list.spacing == nil { list.spacing = AdaptivePointSize.spacing(of: list.positions) }
        renderer.adaptiveSizeScale = adaptiveSize ? AdaptivePointSize.scale(outputFocal: k.fx, spacing: list.spacing ?? 0) : 0
        if renderer.colorBy != .color {
            renderer.colorRange = PointColorRange.colorRange(renderer.colorBy, min: list.cloud.bounds.min, max: list.cloud.bounds.max)
        }
        list.lastDraw = (now, list.stride == 1, cam)
        pointList = list
    }

    /// "drawing 250,000 of 2,000,000 points" (nil without a point list).
    var drawnPointsLine: String? {
        guard let list = pointList else { return nil }
        let drawn = renderer.drawnPoints(list.cloud), total = list.cloud.count
        return "drawing \(Self.grouped(drawn)) of \(Self.grouped(total)) points" + (drawn < total ? " (moving)" : "")
    }

    static func grouped(_ n: Int) -> String {
        var s = String(n), out = ""
        while s.count > 3 { out = "," + s.suffix(3) + out; s.removeLast(3) }
        return s + out
    }
}
