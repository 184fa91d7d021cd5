import CPlatform
import CVulkan
import Capture
import DepthKit
import Foundation
import GPUKit

/// The 3D view's picture cache and point layers: GPUKit's `PointCloudRenderer` draws the frame's
/// cloud offscreen (in the same command buffer, no readback), or `CPUPointRenderer` on the CPU, and
/// the present pass shows it; a PLY point list (`pointList`) or the last depth frame's points
/// (`cloud`) are what is drawn, picked and hovered. The camera, the mouse and the picks are
/// `Scene3DInput`'s (`input`, owned by `ViewerApp`): each draw frames the view there.
final class Scene3D {
    /// The drawing's choices that are not the renderer's own (`PointStyle`).
    struct Options: Equatable {
        /// Depth frames drawn on the CPU (`PointDrawing.cpu`), see Scene3DPoints.swift.
        var usesCPU = false
        /// Adaptive point size (the panel): the point size is the largest (`AdaptivePointSize.defaultLargest` until [ / ]).
        var adaptiveSize = false
        /// `view --edl` / `--no-edl` (nil: eye-dome lighting on for a PLY without colors, else off).
        var edl: Bool?
        /// `--reprocess` / `--watch-shaders`: a still point list is drawn again every frame (timing).
        var redrawsAlways = false
    }

    let renderer: PointCloudRenderer
    /// The camera, the framing of the last draw, the picks (the window's input).
    let input: Scene3DInput
    var options = Options()
    var target: PixelBuffer?
    var output: GPUTexture?
    /// The last depth frame's points (meters, intrinsics at their size; relative: a portrait
    /// photo's depth, not meters), for picking.
    var cloud: (depth: PixelBuffer, intrinsics: CameraIntrinsics, relative: Bool)?
    /// A PLY point list shown instead of the frame's depth (`--source ply:FILE`), see Scene3DPointList.swift.
    var pointList: PointListState?
    let cpuRenderer = CPUPointRenderer()
    /// The last picture drawn on the CPU (nil when the GPU drew the last frame: `output` then).
    var picture: PixelBuffer?
    /// The hover readout of a point list (CloudHover.swift).
    let cloudHover = CloudHover()
    /// The GPU's picture of a point list moving at a stride, at half the window's size (Scene3DPointList.swift).
    var movingTarget: PixelBuffer?

    init(renderer: PointCloudRenderer, input: Scene3DInput = Scene3DInput()) {
        self.renderer = renderer
        self.input = input
    }

    static func make(context: GPUContext, factory: GPUFilterFactory, input: Scene3DInput) -> Scene3D? {
        guard let r = try? PointCloudRenderer(context: context, cache: factory.textureCache, library: factory.library) else { return nil }
        r.watchesShaders = factory.watchesShaders
        return Scene3D(renderer: r, input: input)
    }

    var usesCPU: Bool {
        get { options.usesCPU }
        set { options.usesCPU = newValue }
    }
    var adaptiveSize: Bool {
        get { options.adaptiveSize }
        set { options.adaptiveSize = newValue }
    }
    var redrawsAlways: Bool {
        get { options.redrawsAlways }
        set { options.redrawsAlways = newValue }
    }
    /// `view --edl` / `--no-edl`: set, it switches the renderer's eye-dome lighting.
    var edlChoice: Bool? {
        get { options.edl }
        set {
            options.edl = newValue
            if let e = newValue { renderer.eyeDomeLighting.enabled = e }
        }
    }
    var log: ((String) -> Void)? { input.log }

    /// The point diameter drawn (the user's once set by keys or the panel, else the fitted one),
    /// clamped to `Limits.pointSize` and to what the device draws.
    var pointSize: Float {
        get { input.userPointSize ?? renderer.pointSize }
        set {
            let v = Limits.pointSize.clamp(newValue)
            input.userPointSize = min(max(v, renderer.pointSizeRange.lowerBound), renderer.pointSizeRange.upperBound)
        }
    }

    var shaderError: String? { renderer.lastShaderError.map { "\($0)" } }

    /// Home framing: the depth camera's intrinsics scaled uniformly to fit the window, centered,
    /// so the reset view shows the depth image letterboxed as the 2D view does.
    private func projection(_ k: CameraIntrinsics, width w: Int, height h: Int, far: Float) -> (Matrix4, Float) {
        let s = min(Float(w) / Float(k.width), Float(h) / Float(k.height))
        let cx = (Float(w) - 1) / 2 + (k.cx - (Float(k.width) - 1) / 2) * s
        let cy = (Float(h) - 1) / 2 + (k.cy - (Float(k.height) - 1) / 2) * s
        return (Matrix4.projection(fx: k.fx * s, fy: k.fy * s, cx: cx, cy: cy, width: w, height: h, near: 0.01, far: far), k.fx * s)
    }

    /// Records upload + point-cloud pass for `frame` into `cb` (inside `recorder.frame {}`).
    func record(_ cb: VkCommandBuffer, frame: FrameSet, recorder: GPUFrameRecorder, width: Int, height: Int,
                mark: (String) -> Void) throws {
        let (depthData, depth, color, k) = try prepare(frame, width: width, height: height)
        let td = try recorder.upload(cb, depth)
        let tc = try recorder.upload(cb, color)
        mark("upload")
        if target?.width != width || target?.height != height {
            target = PixelBuffer(width: width, height: height, format: .rgba8)
        }
        let out = try recorder.target(for: target!)
        if renderer.colorBy != .color { renderer.colorRange = PointColorRange.colorRange(renderer.colorBy, depthData, k) }
        try renderer.record(cb: cb, recorder: recorder, depth: td, color: tc, intrinsics: k, output: out,
                            camera: input.pointCloudCamera(input.viewProjection))
        mark("point cloud")
        output = out
        picture = nil
    }

    /// The CPU renderer with the GPU renderer's style (point size, colors, shading: one
    /// `PointStyle`, also both pictures' keys); the color range and stride are the caller's.
    func cpuRendererWithGPUSettings() -> CPUPointRenderer {
        cpuRenderer.style = renderer.style
        return cpuRenderer
    }

    /// Draws `frame`'s points on the CPU (`CPUPointRenderer`, the compute path's picture) into a
    /// reused `width`×`height` picture, for the window to copy in. With `reuse`, a picture drawn
    /// from the same frame, camera, size and settings as the last one is not drawn again (a still
    /// view of a paused or slower source); `view --reprocess` draws every frame.
    func renderOnCPU(frame: FrameSet, width: Int, height: Int, reuse: Bool = false) throws -> PixelBuffer {
        let (depthData, depth, color, k) = try prepare(frame, width: width, height: height)
        let out: PixelBuffer
        if let p = picture ?? cpuTarget, p.width == width, p.height == height { out = p } else {
            out = PixelBuffer(width: width, height: height, format: .rgba8)
        }
        cpuTarget = out
        let r = cpuRendererWithGPUSettings()
        let key = CPUDrawKey(frame, viewProjection: input.viewProjection, look: renderer.style, stride: r.pointStride, into: out)
        if reuse, picture === out, lastCPUDraw == key { return out }
        lastCPUDraw = nil   // not valid while drawing (a failed draw leaves no picture to reuse)
        if r.colorBy != .color { r.colorRange = PointColorRange.colorRange(r.colorBy, depthData, k) }
        try r.render(depth: depth, color: color, intrinsics: k, viewProjection: input.pointCloudCamera(input.viewProjection).viewProjection,
                     into: out)
        output = nil
        picture = out
        lastCPUDraw = key
        return out
    }

    /// What a depth frame's CPU picture was drawn from: the frame's buffers and their generations,
    /// the camera's matrix, the renderer's settings and the picture (`renderOnCPU`'s `reuse`).
    struct CPUDrawKey: Equatable {
        let depth: ObjectIdentifier?, depthGeneration: UInt64, color: ObjectIdentifier, colorGeneration: UInt64, index: Int
        let viewProjection: Matrix4
        let look: PointStyle, pointStride: Int
        let picture: ObjectIdentifier, width: Int, height: Int

        init(_ f: FrameSet, viewProjection: Matrix4, look: PointStyle, stride: Int, into out: PixelBuffer) {
            let d = f.depth?.map
            depth = d.map { ObjectIdentifier($0) }
            depthGeneration = d?.generation ?? 0
            color = ObjectIdentifier(f.color)
            colorGeneration = f.color.generation
            index = f.index
            self.viewProjection = viewProjection
            self.look = look; pointStride = stride
            picture = ObjectIdentifier(out); width = out.width; height = out.height
        }
    }
    private var lastCPUDraw: CPUDrawKey?

    private var cpuTarget: PixelBuffer?
    /// The CPU picture of a point list, reused.
    var listTarget: PixelBuffer?

    /// What both ways of drawing a depth frame need: its depth in meters, rgba8/bgra8 color, the
    /// intrinsics at the depth's size; sets the camera (first frame), the projection and the point size.
    private func prepare(_ frame: FrameSet, width: Int, height: Int) throws
        -> (DepthData, PixelBuffer, PixelBuffer, CameraIntrinsics) {
        guard let depthData = frame.depth else { throw CaptureError.invalidState("the 3D view needs depth; this frame has none") }
        let depth = depthData.depthFloat32()
        let color = frame.color.format == .rgba8 || frame.color.format == .bgra8 ? frame.color : ImageIO.toRGBA8(frame.color)
        let k = depthData.intrinsics.width == depth.width ? depthData.intrinsics
            : depthData.intrinsics.scaled(toWidth: depth.width, height: depth.height)
        if input.camera == nil {
            guard let pivot = PointCloud.orbitPivot(depth: depthData) else { throw CaptureError.invalidState("no valid depth to show in 3D") }
            input.camera = OrbitCamera(center: pivot)
        }
        let camera = input.camera!
        let far = max(100, 4 * (camera.distance + 20))
        let (proj, f) = projection(k, width: width, height: height, far: far)
        input.frame(viewProjection: proj * camera.viewMatrix, width: width, height: height, focal: f)
        cloud = (depth, k, depthData.accuracy == .relative)
        let s = min(Float(width) / Float(k.width), Float(height) / Float(k.height))
        renderer.pointSize = input.userPointSize ?? (adaptiveSize ? AdaptivePointSize.defaultLargest : max(1, s.rounded(.up)))
        renderer.adaptiveSizeScale = adaptiveSize ? AdaptivePointSize.scale(outputFocal: f, depthFocal: k.fx) : 0
        return (depthData, depth, color, k)
    }

    /// The cloud point drawn nearest to window point (x, y), within 8 px, preferring the nearest to the eye
    /// (depth frames: unprojected depth pixels; point lists: their points).
    func pick(x: Double, y: Double) -> SIMD3<Float>? {
        let viewProjection = input.viewProjection, extent = input.extent
        if let list = pointList {   // a PLY point list (Scene3DPicking.swift)
            return PointPicker.nearest(list.positions, viewProjection: viewProjection, width: extent.width, height: extent.height, x: x, y: y)
        }
        guard let (d, k, _) = cloud else { return nil }
        var best: (score: Float, p: SIMD3<Float>)?
        let tx = Float(x), ty = Float(y), w = Float(extent.width), h = Float(extent.height)
        let r2 = PointPicker.radius * PointPicker.radius
        for v in 0..<d.height {
            let row = d.row(v, as: Float.self)
            for u in 0..<d.width {
                let z = row[u]
                guard isValidDepth(z) else { continue }
                let p = k.unproject(u: Float(u), v: Float(v), depth: z)
                guard let s = PointPicker.project(p, viewProjection, width: w, height: h),
                      let score = PointPicker.score(s, x: tx, y: ty, radius2: r2) else { continue }
                if best == nil || score < best!.score { best = (score, p) }
            }
        }
        return best?.p
    }

    /// What the overlay's steady lines are made from; compared each frame (no allocation) so they are
    /// rebuilt only when one of them changes. The camera line and the drawn-points line change every
    /// frame while the view moves, so they are formatted on the stack instead (`withOverlayLines`).
    private struct OverlayParts: Equatable {
        var method: PointCloudMethod, atomicBits: Int, colorBy: PointCloudColorBy, onCPU: Bool
        var measured: Float?
        var picks: Int
        var relative: Bool
        var tool: PickTool
        var measurement: Int
    }
    private var overlayMemo: (parts: OverlayParts, points: String, picks: [String])?

    /// The overlay's lines in order, each as a C string: the camera, how points are drawn, how many
    /// of a point list (while a camera is set), then the picks. Nothing is allocated while only the
    /// camera or the points drawn change (a moving view).
    func withOverlayLines(_ body: (UnsafePointer<CChar>) -> Void) {
        let parts = OverlayParts(method: renderer.method, atomicBits: renderer.atomicBits, colorBy: renderer.colorBy,
                                 onCPU: drawsOnCPU, measured: input.measuredDistance, picks: input.picks.count,
                                 relative: pointList == nil && cloud?.relative == true,
                                 tool: input.measure.tool, measurement: input.measure.generation)
        if overlayMemo?.parts != parts {
            // Relative depth (a portrait photo's) measures in its own arbitrary scale.
            let unit = parts.relative ? " (relative depth: not a real distance)" : ""
            var picksLines: [String] = []
            if let d = input.measuredDistance { picksLines.append(String(format: "distance between the picks: %.0f mm", d * 1000) + unit) }
            else if input.measure.result.isEmpty, let hint = input.measure.tool.hint(picks: input.picks.count) { picksLines.append(hint) }
            picksLines += input.measure.result.map { $0 + unit }
            overlayMemo = (parts, pointsLine, picksLines)
        }
        guard let memo = overlayMemo else { return }
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 160) { buf in
            if let c = input.camera {
                let degrees = 180 / Float.pi
                _ = dl_format_camera_line(buf.baseAddress, buf.count, c.distance, c.pose.yaw * degrees,
                                          c.pose.pitch * degrees, c.pose.roll * degrees, renderer.pointSize)
                body(buf.baseAddress!)
                memo.points.withCString(body)
                if let list = pointList {
                    _ = dl_format_drawn_points(buf.baseAddress, buf.count, list.drawn, list.cloud.count)
                    body(buf.baseAddress!)
                }
            }
            for line in memo.picks { line.withCString(body) }
        }
    }

    /// The overlay's lines as Strings (tests, logs).
    var overlayLines: [String] {
        var lines: [String] = []
        withOverlayLines { lines.append(String(cString: $0)) }
        return lines
    }

    /// The 3D view's keys: the camera's go to `input`, the drawing's are handled here (all of them
    /// only while there is a camera). Every action is named: one added to `ViewerAction` must be
    /// routed here or listed as the window's (a compile error until it is).
    func perform(_ action: ViewerAction) {
        guard input.camera != nil else { return }
        switch action {
        case .resetView, .zoomIn, .zoomOut, .orbitLeft, .orbitRight, .orbitUp, .orbitDown:
            input.perform(action)
        case .pointSizeUp: pointSize = pointSize + 1
        case .pointSizeDown: pointSize = pointSize - 1
        case .cycleColorBy:
            renderer.colorBy = renderer.colorBy.next
            if renderer.colorBy != .color { renderer.method = .compute }   // the raster pipeline colors by texel only
            log?("3D color by \(renderer.colorBy.rawValue)")
        case .togglePointMethod:
            drawing = drawing == .compute ? .raster : .compute
            log?("3D points by \(drawing.rawValue)")
        case .toggleEDL:
            renderer.eyeDomeLighting.enabled.toggle()
            if renderer.eyeDomeLighting.enabled && drawing == .raster { drawing = .compute }   // raster does not shade
            log?(renderer.eyeDomeLighting.enabled ? "3D eye-dome lighting on" : "3D eye-dome lighting off")
        case .cyclePickTool:
            input.measure.tool = input.measure.tool.next
            input.picks.removeAll()
            input.measure.clear()
            log?("pick tool \(input.measure.tool.rawValue)")
        case .measurePicks:
            if !input.measure.measure(picks: input.picks, cloud: pointList == nil ? cloud.map { ($0.depth, $0.intrinsics) } : nil) { log?("measure: still measuring") }
        case .togglePause, .stepBackward, .stepForward, .seekBackward, .seekForward, .seekStart, .mode, .snapshot, .exportPLY,
             .toggleView, .quit, .fullscreen, .toggleVsync, .toggleRecord, .cycleColormap, .cycleBackend, .togglePanel,
             .toggleHelp, .toggleFilter, .toggleDepth, .toggleBlend, .toggleRosyMatrix, .toggleRange, .toggleLoop,
             .mixUp, .mixDown, .toggleSmoothing, .markStart, .markEnd, .toggleExport, .cycleWorld, .toggleQuality, .saveQualityCSV:
            return   // the window's actions (ViewerApp.perform), not the 3D view's
        }
    }
}
