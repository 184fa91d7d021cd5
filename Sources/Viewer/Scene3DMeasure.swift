import DepthKit
import Foundation

/// What clicking points in the 3D view measures (A cycles, Enter measures).
enum PickTool: String, CaseIterable, Sendable {
    /// Two points: the distance between them (at once, no Enter).
    case distance
    /// A polygon: its area on the least-squares plane through the depth pixels inside it.
    case area
    /// The volume above (and below) the floor: the plane through the picked points (three or
    /// more), or with none picked the frame's dominant plane (RANSAC).
    case volume
    /// Length × width × height of the object on that floor.
    case box

    var next: PickTool {
        switch self {
        case .distance: .area
        case .area: .volume
        case .volume: .box
        case .box: .distance
        }
    }

    /// Picks kept before the next click starts over.
    var maxPicks: Int {
        switch self {
        case .distance: 2
        case .area, .volume, .box: 64
        }
    }

    /// The overlay's line while points are being picked.
    func hint(picks n: Int) -> String? {
        switch self {
        case .distance: n == 1 ? "picked 1 point; click a second one to measure" : nil
        case .area: "area: \(n) point\(n == 1 ? "" : "s") picked; click the polygon's corners, Enter measures"
        case .volume, .box:
            "\(rawValue): \(n) floor point\(n == 1 ? "" : "s") picked; Enter measures (none picked: the dominant plane)"
        }
    }
}

/// The 3D view's polygon area, volume and box (`PickTool`) over the depth frame shown: the picks
/// become depth pixels (each pick is a pixel's point), a `PixelPolygon`, and `DepthMeasure` runs
/// on the frame's depth: the code and the numbers of `depthlens measure --area / --floor /
/// --volume / --box` on that frame. Owned by `Scene3DInput` (next to the picks). Enter starts a
/// measurement on a thread of its own (a RANSAC floor and the clusters of a 640×480 frame take a
/// second or two in a debug build); `poll` takes its lines when they are done.
final class MeasureTool {
    var tool: PickTool = .distance
    /// The last measurement's lines (shown in the overlay until the picks change).
    private(set) var result: [String] = []
    /// What it found, to draw: closed outlines in camera coordinates (the area's corners on its
    /// plane; the box's rectangle on the floor, its top and its edges).
    private(set) var shapes: [[SIMD3<Float>]] = []
    /// Bumped when `result` changes (the overlay's memo compares it).
    private(set) var generation = 0
    /// A measurement was made (not refused): the next pick starts a new polygon.
    private(set) var measured = false
    /// The measurement under way (its token), nil when none; a `clear` makes its lines unwanted.
    private var running: Int?
    private var token = 0

    /// A measurement's lines and outlines.
    struct Found: Sendable {
        var lines: [String]
        var shapes: [[SIMD3<Float>]] = []
    }
    /// A measurement to make on the worker: the tool, the picks, the depth frame (nil: a point list).
    private struct Job: Sendable {
        var token: Int
        var tool: PickTool
        var picks: [SIMD3<Float>]
        var cloud: (depth: PixelBuffer, intrinsics: CameraIntrinsics)?
    }
    /// Measures off the frame loop (one at a time: `measure` refuses while one runs).
    private let worker = LatestRequestWorker<Job, (token: Int, found: Found, ok: Bool)>(
        name: "depthlens measure", qualityOfService: .userInitiated) { job, _ in
        do {
            return (job.token, try MeasureTool.run(job.tool, job.picks, job.cloud), true)
        } catch let e as DepthKitError {
            if case .invalidArgument(let why) = e { return (job.token, Found(lines: ["cannot measure: \(why)"]), false) }
            return (job.token, Found(lines: ["cannot measure: \(e)"]), false)
        } catch {
            return (job.token, Found(lines: ["cannot measure: \(error)"]), false)
        }
    }

    func clear() {
        token += 1
        if !result.isEmpty || !shapes.isEmpty { result = []; shapes = []; generation += 1 }
        measured = false
    }

    /// Starts measuring `picks` with the tool over `cloud` (the depth frame's meters and
    /// intrinsics; nil for a point list); false while the last one still runs.
    @discardableResult
    func measure(picks: [SIMD3<Float>], cloud: (depth: PixelBuffer, intrinsics: CameraIntrinsics)?) -> Bool {
        guard running == nil else { return false }
        token += 1
        let t = token, chosen = tool
        running = t
        result = ["\(chosen.rawValue): measuring…"]
        shapes = []
        generation += 1
        worker.submit(Job(token: t, tool: chosen, picks: picks, cloud: cloud))
        return true
    }

    /// The finished measurement's lines, once (for the overlay and `--log-readout`); nil while none
    /// finished, or when the picks were cleared since it began.
    func poll() -> [String]? {
        guard let t = running, let d = worker.poll() else { return nil }
        running = nil
        guard d.token == t, t == token else { return nil }
        result = d.found.lines
        shapes = d.found.shapes
        generation += 1
        measured = d.ok
        return d.found.lines
    }

    private static func run(_ tool: PickTool, _ picks: [SIMD3<Float>], _ cloud: (depth: PixelBuffer, intrinsics: CameraIntrinsics)?) throws
        -> Found {
        switch tool {
        case .distance:
            throw DepthKitError.invalidArgument("the distance tool measures two picks as they are clicked; A picks the area, volume or box tool")
        case .area, .volume, .box:
            break
        }
        guard let (depth, k) = cloud else {
            // A point list: an area on the plane through the picked points themselves; no floor to stand on.
            guard tool == .area else {
                throw DepthKitError.invalidArgument("\(tool.rawValue) measures a depth frame; a PLY point list has no depth pixels")
            }
            let a = try DepthMeasure.area(corners: picks)
            return Found(lines: [String(format: "area %.6f m² on the plane through the %d picked points (RMS %.2f mm from it)",
                                        a.areaM2, a.points, a.rms * 1000)], shapes: [a.corners.map { SIMD3<Float>($0) }])
        }
        let polygon = picks.isEmpty ? nil : Self.polygon(picks, k)
        let settings = MeasureSettings(intrinsics: k)
        switch tool {
        case .distance:
            return Found(lines: [])
        case .area:
            guard let polygon, picks.count >= 3 else {
                throw DepthKitError.invalidArgument("an area needs 3 or more picked corners, \(picks.count) picked")
            }
            let a = try DepthMeasure.area(depth: depth, intrinsics: k, polygon: polygon)
            return Found(lines: [a.line + ", polygon \(polygon)"], shapes: [a.corners.map { SIMD3<Float>($0) }])
        case .volume, .box:
            guard picks.isEmpty || picks.count >= 3 else {
                throw DepthKitError.invalidArgument("a floor needs 3 or more picked points (or none: the dominant plane), \(picks.count) picked")
            }
            let floor = try DepthMeasure.floor(depth: depth, settings: settings, region: polygon)
            let floorLine = floor.line(named: polygon.map { "the plane through the picked polygon \($0)" } ?? "the dominant plane (RANSAC)")
            if tool == .volume {
                return Found(lines: [floorLine, try DepthMeasure.volume(depth: depth, settings: settings, floor: floor).line + ", over the largest clusters"])
            }
            let b = try DepthMeasure.box(depth: depth, settings: settings, floor: floor)
            let bottom = b.corners.map { SIMD3<Float>($0) }
            let top = b.corners.map { SIMD3<Float>($0 + b.heightM * floor.plane.normal) }
            return Found(lines: [floorLine, b.line], shapes: [bottom, top] + zip(bottom, top).map { [$0, $1] })
        }
    }

    /// The depth pixels the picks are the points of (a pick on a depth frame is a pixel's point:
    /// projected back, it lands on the pixel's center).
    static func polygon(_ picks: [SIMD3<Float>], _ k: CameraIntrinsics) -> PixelPolygon {
        PixelPolygon(picks.map { p in
            let q = k.project(p)
            return SIMD2(Double(q.x.rounded()), Double(q.y.rounded()))
        })
    }
}
