import CDepthKit
import CPlatform
import DepthKit
import Foundation
import GPUKit

/// What the 3D view shows for the point of a PLY point list under the cursor (the depth frames'
/// `DepthReadout`, for a loaded cloud): the point's index in the file, its depth along the view,
/// its position, and its color where the cloud has colors.
public struct CloudReadout: Equatable, Sendable {
    public let index: Int
    /// Meters along the view axis, from the eye (the clip w of the last draw's projection).
    public let depth: Float
    public let position: SIMD3<Float>
    public let color: SIMD3<UInt8>?

    /// "point 12  2.000 m  x -0.300 y 0.050 z 2.000 m  rgb 255 0 0" (no rgb without colors).
    public var text: String { withText(prefix: "") { String(cString: $0) } }

    /// The text after `prefix`, formatted on the stack (the overlay draws it every frame).
    func withText<R>(prefix: StaticString, _ body: (UnsafePointer<CChar>) throws -> R) rethrows -> R {
        try withUnsafeTemporaryAllocation(of: CChar.self, capacity: 192) { buf in
            let c = SIMD3<Int32>(truncatingIfNeeded: color ?? .zero)
            withCString(prefix) { pre in
                _ = dl_format_point_readout(buf.baseAddress, buf.count, pre, index, depth,
                                            position.x, position.y, position.z, color == nil ? 0 : 1, c.x, c.y, c.z)
            }
            return try body(buf.baseAddress!)
        }
    }
}

/// Per window pixel, the index of the point drawn nearest the eye there, from one view of a point
/// list (the depth test of the point renderers, on the points' centers): made in one pass over the
/// points, then any number of hover look-ups read a few hundred pixels around the cursor instead of
/// projecting the whole cloud again. A pixel keeps (depth bits << 32 | index): positive floats
/// order as their bits, so the smallest key is the nearest point (the lower index on a tie).
///
/// A value (`Sendable`): `CloudHover` hands it to its worker to be built and gets it back, and
/// its storage goes with it (reused while the window's size does not grow).
struct PointIDMap: Sendable {
    private(set) var width = 0
    private(set) var height = 0
    private var keys: [UInt64] = []
    static let empty = UInt64.max

    /// Fills the map for `positions` seen through `m` in a `width`×`height` window (storage is
    /// reused while the window's size does not grow and the map is not shared).
    mutating func build(_ positions: [SIMD3<Float>], viewProjection m: Matrix4, width: Int, height: Int) {
        let n = max(width, 0) * max(height, 0)
        if n > keys.count { keys = Array(repeating: Self.empty, count: n) }
        self.width = width
        self.height = height
        guard n > 0 else { return }
        // One pass in C (point_id_map.c): seconds for 2 M points in a debug build's Swift.
        let stride = MemoryLayout<SIMD3<Float>>.stride / MemoryLayout<Float>.stride
        keys.withUnsafeMutableBufferPointer { k in
            let keys = k.baseAddress!
            withUnsafeBytes(of: m) { mb in
                positions.withUnsafeBufferPointer { p in
                    guard let base = p.baseAddress else { return keys.update(repeating: Self.empty, count: n) }
                    dl_point_id_map(UnsafeRawPointer(base).assumingMemoryBound(to: Float.self), p.count, stride,
                                    mb.baseAddress!.assumingMemoryBound(to: Float.self), width, height, keys)
                }
            }
        }
    }

    /// The point within `radius` pixels of window point (x, y) that `PointPicker.nearest` would
    /// pick among the points this map kept (score = d² + w·1e-3 on the point's exact projection),
    /// with its depth along the view; nil when none. `positions` and `m` must be the ones built.
    func nearest(_ positions: [SIMD3<Float>], viewProjection m: Matrix4, x: Double, y: Double,
                 radius: Float = PointPicker.radius) -> (index: Int, depth: Float)? {
        guard width > 0, height > 0, keys.count >= width * height, x.isFinite, y.isFinite else { return nil }
        let tx = Float(x), ty = Float(y), r2 = radius * radius, w = Float(width), h = Float(height)
        // Pixels whose center is within radius + ½ px of the cursor hold every point within radius.
        let reach = radius + 1
        let u0 = max(0, Int((tx - reach).rounded(.down))), u1 = min(width - 1, Int((tx + reach).rounded(.up)))
        let v0 = max(0, Int((ty - reach).rounded(.down))), v1 = min(height - 1, Int((ty + reach).rounded(.up)))
        guard u0 <= u1, v0 <= v1 else { return nil }
        var best: (score: Float, index: Int, depth: Float)?
        keys.withUnsafeBufferPointer { keys in
            positions.withUnsafeBufferPointer { p in
                for v in v0...v1 {
                    for u in u0...u1 {
                        let key = keys[v * width + u]
                        guard key != Self.empty else { continue }
                        let i = Int(key & 0xFFFF_FFFF)
                        guard i < p.count, let s = PointPicker.project(p[i], m, width: w, height: h),
                              let score = PointPicker.score(s, x: tx, y: ty, radius2: r2) else { continue }
                        if best == nil || score < best!.score || (score == best!.score && i < best!.index) { best = (score, i, s.w) }
                    }
                }
            }
        }
        return best.map { ($0.index, $0.depth) }
    }
}

/// The hover readout of a PLY point list in the 3D view, without projecting the cloud each frame:
/// once the view has stood still for a frame (and the cursor is over the picture), a worker thread
/// (`LatestRequestWorker`: a newer still view replaces one not yet started) builds the
/// `PointIDMap` of that view off the frame loop; from then on each cursor move is a look-up of a
/// few hundred pixels on the frame's thread. Nothing is shown while the view moves or the map is
/// being made. With the cursor and the view still, a frame does nothing (no allocation).
///
/// The map's storage travels with the request and comes back with the built map, so the frame's
/// thread and the worker never share it: while a map is being made the frame's thread holds none.
final class CloudHover {
    /// What a map is made for: the last draw's view-projection and size, and the points' generation.
    struct View: Equatable, Sendable {
        var matrix: Matrix4
        var width: Int
        var height: Int
        var generation: Int

        /// The same view-projection and size (the points may differ).
        func sameCamera(_ o: View) -> Bool { matrix == o.matrix && width == o.width && height == o.height }
    }

    /// A map to build: the view, its points, and the storage to build it in.
    private struct Job: Sendable {
        var view: View
        var positions: [SIMD3<Float>]
        var map: PointIDMap
    }

    private let worker = LatestRequestWorker<Job, (view: View, map: PointIDMap)>(name: "depthlens hover") { job, _ in
        var job = job
        job.map.build(job.positions, viewProjection: job.view.matrix, width: job.view.width, height: job.view.height)
        return (job.view, job.map)
    }
    /// The map the frame's thread holds (empty while the worker builds one), and the view it was made for.
    private var map = PointIDMap()
    private var built: View?
    /// The view asked for last (made, being made, or waiting).
    private var asked: View?
    /// Bumped when the points change (a new list, the next file of a sequence).
    private(set) var generation = 0
    private var lastView: View?
    private var lookedUp: (x: Double, y: Double, view: View)?
    private(set) var readout: CloudReadout?

    /// The points changed (a new list, the next file of a sequence): the next still frame asks for
    /// a new map (`update` keeps the last readout until it answers while the view stays).
    func pointsChanged() { generation += 1 }

    /// Maps made so far (each one projection of the whole cloud).
    var builds: Int { worker.completed }

    /// Takes a map the worker finished, if any.
    private func takeBuilt() {
        guard let done = worker.poll() else { return }
        map = done.map
        built = done.view
    }

    /// Per frame: the readout for window point (x, y) over the last draw (`view`) of `positions`
    /// (`colors`: one a point, or empty). `active`: the cursor is over the picture and free (not
    /// over the panel, not dragging). True when the readout changed.
    @discardableResult
    func update(view: View, positions: [SIMD3<Float>], colors: [SIMD3<UInt8>], x: Double, y: Double, active: Bool) -> Bool {
        let before = readout
        defer { lastView = view }
        let inside = x >= 0 && y >= 0 && x < Double(view.width) && y < Double(view.height)
        guard active, inside, let last = lastView, last.sameCamera(view) else {   // moving, or the cursor is elsewhere
            readout = nil
            lookedUp = nil
            return readout != before
        }
        takeBuilt()
        if built == view {
            if lookedUp.map({ $0.x != x || $0.y != y || $0.view != view }) ?? true {
                lookedUp = (x, y, view)
                readout = map.nearest(positions, viewProjection: view.matrix, x: x, y: y).map { hit in
                    CloudReadout(index: hit.index, depth: hit.depth, position: positions[hit.index],
                                 color: hit.index < colors.count ? colors[hit.index] : nil)
                }
            }
        } else {
            // New points under a still view (the next file of a sequence): the last readout stays
            // until the new map answers, so a playing sequence does not blink it; else nothing.
            if !(lookedUp.map { $0.x == x && $0.y == y && $0.view.sameCamera(view) } ?? false) { readout = nil }
            if asked != view {
                asked = view
                // The storage goes to the worker (no copy: this side keeps no reference to it).
                var storage = PointIDMap()
                swap(&storage, &map)
                built = nil
                worker.submit(Job(view: view, positions: positions, map: consume storage))
            }
        }
        return readout != before
    }

    /// Waits (tests) until the map of `view` is made; false after `timeout` seconds.
    func waitForMap(_ view: View, timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            takeBuilt()
            if built == view { return true }
            let left = deadline.timeIntervalSinceNow
            guard left > 0, worker.waitUntilIdle(timeout: left) else { return false }
            takeBuilt()
            if built == view { return true }
            guard worker.isBusy else { return false }
        }
    }
}

extension Scene3D {
    /// The hover readout of a point list, per frame from the window's input (`CloudHover`): the
    /// point nearest the cursor in the last draw. True when it changed.
    @discardableResult
    func updateHover(x: Double, y: Double, active: Bool) -> Bool {
        guard let list = pointList else { return cloudHover.update(view: .init(matrix: .identity, width: 0, height: 0, generation: -1),
                                                                    positions: [], colors: [], x: x, y: y, active: false) }
        let view = CloudHover.View(matrix: input.viewProjection, width: input.extent.width, height: input.extent.height,
                                   generation: cloudHover.generation)
        return cloudHover.update(view: view, positions: list.positions, colors: list.colors, x: x, y: y,
                                 active: active && input.press == nil)
    }

    var hoverReadout: CloudReadout? { cloudHover.readout }
}
