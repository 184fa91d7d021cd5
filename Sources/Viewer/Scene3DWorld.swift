import Capture
import DepthKit
import Foundation

/// Where the 3D view puts a source's depth frames (key W, the panel's "3D frame").
public enum WorldView: String, CaseIterable, Sendable {
    /// Each frame in its own camera's optical frame (every source; the default).
    case camera
    /// The frame moved into the recording's world by its pose, the camera path drawn.
    case world
    /// World coordinates, and every frame shown so far fused into one voxel grid (as
    /// `export-ply --fuse`), the camera path drawn.
    case accumulate

    var next: WorldView {
        switch self {
        case .camera: return .world
        case .world: return .accumulate
        case .accumulate: return .camera
        }
    }

    var label: String {
        switch self {
        case .camera: return "camera frame"
        case .world: return "world coordinates"
        case .accumulate: return "world, accumulating"
        }
    }
}

/// The 3D view in world coordinates for a source with camera poses (`FrameSource.poses`: `scan:`,
/// `tum:` with groundtruth.txt). The frame's points (unprojected as `export-ply` unprojects a
/// frame) are moved into the world by the frame's pose and shown as the scene's point list; the
/// camera path is a polyline through every recorded pose, the shown frame's camera a short line
/// along its view. Accumulating, each frame shown is added once to a `VoxelFusion` grid (the one
/// `export-ply --fuse` uses): memory is the grid's occupied cells, not the frames, and the list
/// shows the grid, refreshed at most twice a second while playing. Camera frame (the default)
/// costs nothing per frame.
final class SceneWorld {
    private(set) var mode: WorldView = .camera
    /// Edge of the accumulated cloud's voxels, meters.
    private(set) var voxelSize = 0.02
    /// The source (`SourceSession.generation`) the poses, path and grid belong to.
    private var generation = -1
    private var poses: FramePoses?
    /// Camera positions in the world, in the recording's order (the polyline).
    private(set) var path: [SIMD3<Float>] = []
    /// The pose of the frame shown; nil when it has none.
    private(set) var currentPose: CameraPose?
    private var grid: VoxelFusion?
    /// Frame indices already in the grid.
    private var fused = Set<Int>()
    /// The frame last put into the world: its index and its depth buffer (identity, generation).
    private var shown: FrameKey?
    /// Whether the scene's point list is this world's (not a PLY's).
    private(set) var ownsPointList = false
    /// The grid has frames the point list does not show yet.
    private var stale = false
    private var lastRefresh = -Double.infinity
    /// The overlay's line ("world: 120 poses …"), rebuilt when what it says changes.
    private(set) var line: String?

    struct FrameKey: Equatable {
        var index: Int
        var depth: ObjectIdentifier
        var depthGeneration: UInt64
    }

    static let refreshSeconds = 0.5
    static let voxelSizes: [Double] = [0.005, 0.01, 0.02, 0.05]

    /// Switches to `m` (the key cycles, the panel picks); the next `update` shows it.
    func set(_ m: WorldView) {
        guard m != mode else { return }
        if m == .accumulate { resetGrid() }
        mode = m
        shown = nil
    }

    /// A new voxel edge (meters): the accumulated grid starts over.
    func setVoxelSize(_ v: Double) {
        guard v != voxelSize, v > 0 else { return }
        voxelSize = v
        if mode == .accumulate { resetGrid(); shown = nil }
    }

    private func resetGrid() {
        grid = try? VoxelFusion(voxelSize: voxelSize)
        fused.removeAll()
        stale = false
        lastRefresh = -.infinity
    }

    /// Per frame, after the source was polled: takes a new source's poses, then (not in camera
    /// frame) puts a new frame into the world and refreshes the grid's list. `calibration` is the
    /// frame's (aligned or not). Throws what uploading the points threw.
    func update(_ frame: FrameSet?, source: FrameSource?, generation g: Int, calibration: RGBDCalibration?,
                scene: Scene3D, now: Double, playing: Bool) throws {
        if g != generation { take(source, generation: g) }
        guard mode != .camera else {
            if ownsPointList {
                ownsPointList = false
                try scene.setPointList(nil)
            }
            return
        }
        guard let poses else {
            setLine("3D \(mode.label): this source has no camera poses (scan:, tum: with groundtruth.txt)")
            return
        }
        guard let frame, let depth = frame.depth else { return }
        let key = FrameKey(index: frame.index, depth: ObjectIdentifier(depth.map), depthGeneration: depth.map.generation)
        if key != shown {
            shown = key
            currentPose = poses.pose(of: frame)
            if let pose = currentPose {
                let cloud = Self.cameraCloud(frame, depth: depth, calibration: calibration)
                switch mode {
                case .camera: break
                case .world: try show(Self.moved(cloud, by: pose), scene: scene)
                case .accumulate:
                    if fused.insert(frame.index).inserted {
                        grid?.add(cloud, pose: pose)
                        stale = true
                    }
                }
            }
        }
        if mode == .accumulate, stale, let grid, !playing || !ownsPointList || now - lastRefresh >= Self.refreshSeconds {
            try show(grid.cloud(sorted: false), scene: scene)
            stale = false
            lastRefresh = now
        }
        let cells = grid?.cellCount ?? 0
        let posed = currentPose == nil ? "; this frame has no pose (the last posed frame stays)" : ""
        switch mode {
        case .camera: setLine(nil)
        case .world: setLine("world: frame \(frame.index), camera path of \(path.count) poses\(posed)")
        case .accumulate:
            setLine("accumulated: \(cells) cells of \(Self.centimeters(voxelSize)) from \(fused.count) frames, path of \(path.count) poses\(posed)")
        }
    }

    private func setLine(_ s: String?) { if s != line { line = s } }

    /// Frames in the accumulated grid, and its cells.
    var accumulated: (frames: Int, cells: Int) { (fused.count, grid?.cellCount ?? 0) }

    static func centimeters(_ m: Double) -> String { String(format: m < 0.01 ? "%.1f cm" : "%.0f cm", m * 100) }

    /// A new source: its poses and path; nothing of the last one's world stays (the new source's
    /// point list, if any, was set by the window).
    private func take(_ source: FrameSource?, generation g: Int) {
        generation = g
        poses = source?.poses
        path = poses.map(Self.path) ?? []
        currentPose = nil
        shown = nil
        ownsPointList = false
        line = nil
        if mode == .accumulate { resetGrid() }
    }

    /// Camera positions of every recorded pose, in order.
    static func path(_ poses: FramePoses) -> [SIMD3<Float>] {
        switch poses.lookup {
        case let .perFrame(ps): return ps.compactMap { $0.map { SIMD3<Float>($0.translation) } }
        case let .byTime(track): return track.samples.map { SIMD3<Float>($0.pose.translation) }
        }
    }

    /// The frame's points in its camera (colored as `export-ply` colors a frame; through the
    /// calibration when depth and color are still different cameras).
    static func cameraCloud(_ frame: FrameSet, depth: DepthData, calibration: RGBDCalibration?) -> PointCloud {
        let rgb = ImageIO.toEightBit(frame.color)
        if let c = calibration, c.needsAlignment { return PointCloud.unproject(depth: depth, color: rgb, calibration: c) }
        return PointCloud.unproject(depth: depth, color: rgb)
    }

    /// `cloud` moved into the world by `pose` (world from camera), in Double as `VoxelFusion` does.
    static func moved(_ cloud: PointCloud, by pose: CameraPose) -> PointCloud {
        var out = cloud
        for i in 0..<out.positions.count {
            let p = cloud.positions[i]
            out.positions[i] = SIMD3<Float>(pose.apply(SIMD3<Double>(Double(p.x), Double(p.y), Double(p.z))))
        }
        return out
    }

    /// The points as the scene's point list: set the first time (framed, picks cleared), refilled
    /// after (the framing and camera stay, as a PLY sequence's files do).
    private func show(_ cloud: PointCloud, scene: Scene3D) throws {
        guard cloud.count > 0 else { return }
        let contents = PLYContents(cloud: cloud, hasColor: true, nonFiniteSkipped: 0)
        if ownsPointList, scene.pointList != nil {
            try scene.showSequenceFrame(contents)
        } else {
            try scene.setPointList(contents)
            ownsPointList = true
        }
    }

    /// The panel's last section, "3D world" (last, so its rows move nothing above them): the
    /// frame choice (as W) and, accumulating, the voxel.
    func panel(log: (String) -> Void) {
        guard UI.header("3D world") else { return }
        var w = PanelLists.worldViewCases.firstIndex(of: mode) ?? 0
        if UI.combo("3D frame (W)", &w, joined: PanelLists.worldViews), PanelLists.worldViewCases[w] != mode {
            set(PanelLists.worldViewCases[w])
            log("3d world \(mode.rawValue)")
        }
        var v = Self.voxelSizes.firstIndex(of: voxelSize) ?? 0
        if UI.combo("voxel (accumulate)", &v, joined: PanelLists.voxelSizes) { setVoxelSize(Self.voxelSizes[v]) }
    }

    /// The camera path as lines on screen, and the shown frame's camera: a short line along its
    /// view (its optical z axis). Nothing allocated.
    func drawPath(_ input: Scene3DInput) {
        guard mode != .camera, ownsPointList else { return }
        var last: (Float, Float)?
        for p in path {
            let s = input.screen(p)
            if let a = last, let b = s { UI.line(from: a, to: b, color: [0.3, 0.85, 1]) }
            last = s
        }
        guard let pose = currentPose else { return }
        let eye = pose.apply(.zero), ahead = pose.apply(SIMD3(0, 0, 0.25))
        if let a = input.screen(SIMD3<Float>(eye)), let b = input.screen(SIMD3<Float>(ahead)) {
            UI.line(from: a, to: b, color: [1, 0.45, 0.2])
        }
    }
}

extension ViewerApp {
    /// The 3D view's world (W): the shown frame put into the world, the grid refreshed, while the
    /// 3D view is shown. Nothing happens in the camera frame (the default).
    func updateWorld(now: Double) {
        let world = view3D.world
        guard let scene = view3D.scene, view == .threeD || world.mode == .camera else { return }
        let before = world.accumulated.frames
        do {
            try world.update(depth.current, source: session.source, generation: session.generation, calibration: depth.calibration,
                             scene: scene, now: now, playing: !(playback?.isPaused ?? true))
            let after = world.accumulated
            if after.frames != before, world.mode == .accumulate { logUI("3d accumulated \(after.frames) frames, \(after.cells) cells") }
        } catch {
            notice("3D world: \(error)", isError: true, seconds: 3)
        }
    }
}
