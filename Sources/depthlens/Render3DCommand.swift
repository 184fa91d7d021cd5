import ArgumentParser
import Capture
import DepthKit
import Foundation
import GPUKit
import Viewer

struct Render3DCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "render3d",
        abstract: "Render the colored point cloud from an orbit camera to a PNG, without a window.",
        discussion: """
        The camera orbits the cloud's center (the median valid depth on the depth camera's axis); \
        with --yaw, --pitch and --roll 0 and the default --distance it is the depth camera itself, \
        and the projection is the depth intrinsics scaled to --width x --height. \
        Points are drawn by compute shaders on a Vulkan device (--points compute, the default: 64-bit \
        atomics where the device has them, --atomics 32 forces the 32-bit fallback), as POINT_LIST \
        primitives (--points raster), or on the CPU (--points cpu: the compute path's picture, pixel for \
        pixel, on every core; no device needed). The GPU paths need a Vulkan device (Mesa's lavapipe \
        will do); without one they fail with one line saying so. --backend cpu|gpu picks --points cpu or \
        compute; --backend auto times both once per device, point source and output size and keeps the \
        faster (remembered in $XDG_CACHE_HOME/depthlens/backend-choice.json). \
        --repeat N renders N times and prints milliseconds per frame (GPU: with and without the readback). \
        --ply FILE renders a point list instead of a depth frame, framed whole (bounding-box center); \
        without colors it is colored by height. \
        --edl shades the picture with eye-dome lighting (compute and cpu: a pixel whose neighbours at \
        --edl-radius pixels are nearer darkens by exp(-300 * --edl-strength * sum of log2 depth steps / 8)); \
        on by default for a PLY without colors, --no-edl turns it off.
        """
    )

    @OptionGroup var input: RGBDInputOptions
    @Option(parsing: .unconditional, help: "Orbit about the center, degrees, about the vertical axis.")
    var yaw: Float = 0
    @Option(parsing: .unconditional, help: "Orbit about the center, degrees, about the horizontal axis (-89…89).")
    var pitch: Float = 0
    @Option(parsing: .unconditional, help: "Turn about the view axis, degrees.")
    var roll: Float = 0
    @Option(parsing: .unconditional, help: "Eye to center in meters (default: the center's depth, the depth camera's own viewpoint).")
    var distance: Float?
    @Option(parsing: .unconditional, help: "Output width in pixels (default: the depth map's).")
    var width: Int?
    @Option(parsing: .unconditional, help: "Output height in pixels (default: the depth map's).")
    var height: Int?
    @Option(name: .customLong("point-size"), parsing: .unconditional,
            help: "Point diameter in output pixels (1…64), clamped to the device's range (default: enough to cover the output at the start pose).")
    var pointSize: Float?
    @Option(name: .customLong("repeat"), parsing: .unconditional, help: "Render N times and print the time per frame.")
    var repeatCount: Int = 1
    @Option(help: "How points are drawn: compute (atomicMin rasterizer on the GPU; the default), raster (POINT_LIST pipeline; depth frames only) or cpu (the compute path's picture on the CPU).")
    var points: PointPath?
    @Option(help: "cpu or gpu (--points cpu or compute), or auto: whichever of the two ran faster here for this source and output size.")
    var backend: String?
    @Option(parsing: .unconditional, help: "Compute path atomics: 64 (where the device has them) or 32 (the fallback). Default: the best the device has.")
    var atomics: Int?
    @Option(name: .customLong("color-by"), help: "Point color: color, depth or height (jet colormap; compute path). Default: color, height for a PLY without colors.")
    var colorBy: PointCloudColorBy?
    @Option(help: "A PLY point list to render instead of --color/--depth (default size 1280x720).")
    var ply: String?
    @Flag(inversion: .prefixedNo, help: "Eye-dome lighting (compute and cpu paths). Default: on for a PLY without colors, else off.")
    var edl: Bool?
    @Option(name: .customLong("edl-strength"), parsing: .unconditional, help: "Eye-dome lighting strength, 0…5 (default 1).")
    var edlStrength: Float?
    @Option(name: .customLong("edl-radius"), parsing: .unconditional, help: "Eye-dome lighting neighbour distance in pixels, 1…8 (default 1).")
    var edlRadius: Int?
    @Flag(name: .customLong("adaptive-size"), help: "Adaptive point size (compute and cpu): each point covers its spacing seen from the camera, at most --point-size (default 8) pixels.")
    var adaptiveSize = false
    @Option(help: "Vulkan device: index or part of the name (see `depthlens devices`).")
    var device: String?
    @Option(help: "Output .png file.")
    var out: String

    /// Every number, before anything is read or rendered.
    func checkArguments(_ spec: SourceSpec?) throws {
        for (v, name) in [(width, "--width"), (height, "--height")] {
            if let v, !(1...16384).contains(v) {
                throw DepthKitError.invalidArgument("\(name) must be a whole number of pixels in 1…16384, got \(v)")
            }
        }
        if let d = distance, !(d > 0 && d.isFinite) {
            throw DepthKitError.invalidArgument("--distance must be a positive number of meters, got \(d)")
        }
        try Limits.pointSize.check(pointSize)
        if let a = atomics, a != 32 && a != 64 { throw DepthKitError.invalidArgument("--atomics must be 32 or 64, got \(a)") }
        if atomics != nil && points == .cpu { throw DepthKitError.invalidArgument("--atomics applies to --points compute, not cpu") }
        if try plyPath(spec) != nil && points == .raster { throw DepthKitError.invalidArgument("--points raster draws depth frames only; use --points compute or cpu with --ply") }
        _ = try backendChoice()
        if colorBy != nil && colorBy != .color && points == .raster {
            throw DepthKitError.invalidArgument("--color-by \(colorBy!.rawValue) needs --points compute")
        }
        if let s = edlStrength, !(EyeDomeLighting.strengthRange.contains(s)) {
            throw DepthKitError.invalidArgument("--edl-strength must be in 0…5, got \(s)")
        }
        if let r = edlRadius, !(EyeDomeLighting.radiusRange.contains(r)) {
            throw DepthKitError.invalidArgument("--edl-radius must be a whole number of pixels in 1…8, got \(r)")
        }
        if adaptiveSize && points == .raster {
            throw DepthKitError.invalidArgument("--adaptive-size needs --points compute or cpu")
        }
        if edl == true && points == .raster {
            throw DepthKitError.invalidArgument("--edl needs --points compute or cpu (the raster path does not shade)")
        }
        guard repeatCount >= 1 else { throw DepthKitError.invalidArgument("--repeat must be at least 1, got \(repeatCount)") }
        try requireFinite(yaw, "--yaw")
        try requireFinite(roll, "--roll")
        try requireFinite(pitch, "--pitch", in: -89...89)
    }

    /// `--backend`, checked against `--points`: nil when not given.
    func backendChoice() throws -> BackendChoice? {
        guard let backend else { return nil }
        let b = try BackendChoice(backend)
        switch (b, points) {
        case (.cpu, .some(.compute)), (.cpu, .some(.raster)), (.gpu, .some(.cpu)):
            throw DepthKitError.invalidArgument("--backend \(backend) and --points \(points!.rawValue) disagree; give one")
        case (.auto, .some(let p)):
            throw DepthKitError.invalidArgument("--backend auto picks the points path itself; drop --points \(p.rawValue)")
        case (.cpu, .some(.cpu)), (.gpu, .some(.compute)), (.gpu, .some(.raster)), (_, .none): return b
        }
    }

    /// The points path: `--points`, or what `--backend` says (auto: the faster of cpu and compute
    /// for `kernel` at `width`x`height`, timed with `measure` the first time on this device).
    func pointPath(kernel: String, width: Int, height: Int, measure: (_ path: PointPath) throws -> Void) throws -> PointPath {
        switch try backendChoice() {
        case nil, .gpu?: return points ?? .compute
        case .cpu?: return .cpu
        case .auto?:
            GPUBackend.select(device: device)
            let context: GPUContext
            do { context = try GPUContext.shared() } catch {
                GPUBackend.noteOnce("\(error); drawing points on the CPU")
                return .cpu
            }
            let choice = try BackendSelector(deviceName: context.name).choose(kernel: kernel, width: width, height: height) { gpu in
                try measure(gpu ? .compute : .cpu)
            }
            return choice.backend == "gpu" ? .compute : .cpu
        }
    }

    /// The PLY file to render: `--ply FILE`, or `--source ply:FILE` (the same thing; `spec` is `input.sourceSpec()`).
    func plyPath(_ spec: SourceSpec?) throws -> String? {
        if case .ply(let path)? = spec {
            if ply != nil { throw DepthKitError.invalidArgument("--ply and --source both name the input; give one") }
            return path
        }
        return ply
    }

    func run() throws {
        let spec = try input.sourceSpec()
        try checkArguments(spec)
        if let ply = try plyPath(spec) { return try renderPLY(ply) }
        let frame = try input.load(spec)
        guard let depthData = frame.depth else { throw DepthKitError.invalidArgument("--depth is required for render3d") }
        let depth = depthData.depthFloat32()
        var color = frame.color.format == .rgba8 || frame.color.format == .bgra8 ? frame.color : ImageIO.toRGBA8(frame.color)
        // Depth and color from different cameras: each point takes the color pixel it projects to.
        if let c = frame.calibration, c.needsAlignment { color = ColorAtDepth().render(depth: depthData, color: color, calibration: c) }
        guard let pivot = PointCloud.orbitPivot(depth: depthData) else {
            throw DepthKitError.file(path: frame.depthPath ?? "depth", problem: "no valid depth to render")
        }
        let w = width ?? depth.width, h = height ?? depth.height

        var camera = OrbitCamera(center: pivot, distance: distance)
        let radians = Float.pi / 180
        camera.orbit(yaw: yaw * radians, pitch: pitch * radians)
        camera.roll(by: roll * radians)
        let k = depthData.intrinsics.scaled(toWidth: w, height: h)
        let far = max(100, 4 * (camera.distance + depthData.depthStatistics().max))
        let projection = Matrix4.projection(fx: k.fx, fy: k.fy, cx: k.cx, cy: k.cy, width: w, height: h, near: 0.01, far: far)
        let view = PointCloudCamera(view: camera.viewMatrix.floats, projection: projection.floats)
        let by = colorBy ?? .color
        let range = by == .color ? 0...5
            : PointColorRange.colorRange(by, depthData, depthData.intrinsics.scaled(toWidth: depth.width, height: depth.height))
        let size = pointSize ?? (adaptiveSize ? AdaptivePointSize.defaultLargest
            : max(1, (max(Float(w) / Float(depth.width), Float(h) / Float(depth.height))).rounded(.up)))
        let adaptScale = adaptiveSize
            ? AdaptivePointSize.scale(outputFocal: k.fx, depthFocal: depthData.intrinsics.scaled(toWidth: depth.width, height: depth.height).fx) : 0

        let lighting = eyeDomeLighting(defaultOn: false)
        let style = PointStyle(pointSize: size, colorBy: by, eyeDomeLighting: lighting, adaptiveSizeScale: adaptScale)
        let cpu = CPUPointRenderer()
        cpu.style = style; cpu.colorRange = range
        var gpu: PointCloudRenderer?
        func gpuRenderer(_ method: PointCloudMethod) throws -> PointCloudRenderer {
            if gpu == nil {
                GPUBackend.select(device: device)
                let r = try makeRenderer(try GPUContext.shared())
                r.style = style; r.colorRange = range
                gpu = r
            }
            gpu!.method = method
            return gpu!
        }
        func render(_ path: PointPath) throws -> PixelBuffer {
            switch path {
            case .cpu:
                return try cpu.render(depth: depth, color: color, intrinsics: depthData.intrinsics, viewProjection: view.viewProjection,
                                      width: w, height: h)
            case .compute, .raster:
                return try gpuRenderer(path == .raster ? .raster : .compute)
                    .render(depth: depth, color: color, intrinsics: depthData.intrinsics, camera: view, width: w, height: h)
            }
        }
        let path = try pointPath(kernel: "points \(depth.width)x\(depth.height)", width: w, height: h) { _ = try render($0) }
        var image = try render(path)
        let drawnSize = path == .cpu ? cpu.pointSize : gpu!.pointSize
        if repeatCount > 1 {
            let source = "\(depth.width)x\(depth.height) depth (\(depth.width * depth.height) points)"
            if path == .cpu {
                let start = DispatchTime.now()
                for _ in 0..<repeatCount { image = try render(.cpu) }
                printCPUTiming(cpu, w, h, source: source, ms: Self.ms(since: start) / Double(repeatCount))
            } else {
                let renderer = gpu!
                let start = DispatchTime.now()
                for _ in 0..<repeatCount { image = try render(path) }
                let renderMs = Self.ms(since: start) / Double(repeatCount)
                let drawStart = DispatchTime.now()
                var gpuMs: Double = 0
                for _ in 0..<repeatCount {
                    gpuMs += try renderer.draw(depth: depth, color: color, intrinsics: depthData.intrinsics, camera: view,
                                               width: w, height: h).dispatchMs ?? .nan
                }
                let drawMs = Self.ms(since: drawStart) / Double(repeatCount)
                print(String(format: "render3d %@ %dx%d from %@, %d frames on %@: render with readback %.2f ms/frame (%.1f fps), upload+draw without readback %.2f ms/frame (%.1f fps), GPU draw %.2f ms",
                             methodName(renderer), w, h, source, repeatCount, renderer.context.name,
                             renderMs, 1000 / renderMs, drawMs, 1000 / drawMs, gpuMs / Double(repeatCount)))
            }
        }
        try ImageIO.write(image, to: out)
        print("wrote \(out) (\(w)x\(h), yaw \(yaw)°, pitch \(pitch)°, roll \(roll)°, distance \(String(format: "%.3f", camera.distance)) m, \(adaptiveSize ? "adaptive point size up to" : "point size") \(drawnSize)\(path == .cpu ? ", on the CPU" : "")\(path == .raster ? "" : edlNote(lighting)))")
    }

    /// `--edl` and its settings; `defaultOn` when neither --edl nor --no-edl is given.
    func eyeDomeLighting(defaultOn: Bool) -> EyeDomeLighting {
        EyeDomeLighting(enabled: edl ?? defaultOn, strength: edlStrength ?? 1, radius: edlRadius ?? 1)
    }

    private func edlNote(_ e: EyeDomeLighting) -> String {
        e.enabled ? ", eye-dome lighting strength \(e.strength) radius \(e.radius)" : ""
    }

    private func printCPUTiming(_ r: CPUPointRenderer, _ w: Int, _ h: Int, source: String, ms: Double) {
        print(String(format: "render3d cpu %dx%d from %@, %d frames on %d cores (%@): render %.2f ms/frame (%.1f fps)",
                     w, h, source, repeatCount, activeCores, CPUVectorPath.active.rawValue, ms, 1000 / ms))
    }

    private func makeRenderer(_ context: GPUContext) throws -> PointCloudRenderer {
        let renderer = try PointCloudRenderer(context: context, cache: TextureCache(context: context), library: ShaderLibrary.shared())
        renderer.forces32BitAtomics = atomics == 32
        if atomics == 64 && renderer.atomicBits != 64 {
            throw DepthKitError.invalidArgument("--atomics 64: \(context.name) has no shaderBufferInt64Atomics")
        }
        return renderer
    }

    private func methodName(_ r: PointCloudRenderer) -> String {
        r.method == .raster ? "raster" : "compute (\(r.atomicBits)-bit atomics)"
    }

    /// `--ply`: the whole cloud from its home view (or orbited from there), default 1280x720.
    private func renderPLY(_ path: String) throws {
        let w = width ?? 1280, h = height ?? 720
        let contents = try PLYLoading.load(path)
        let list = CPUPointList(cloud: contents.cloud)
        let k = CameraIntrinsics.default(width: w, height: h)
        let framing = CloudFraming(min: list.bounds.min, max: list.bounds.max, intrinsics: k)
        var camera = OrbitCamera(center: framing.center, distance: distance ?? framing.distance)
        let radians = Float.pi / 180
        camera.orbit(yaw: yaw * radians, pitch: pitch * radians)
        camera.roll(by: roll * radians)
        let planes = framing.planes(distance: camera.distance)
        let projection = Matrix4.projection(fx: k.fx, fy: k.fy, cx: k.cx, cy: k.cy, width: w, height: h,
                                            near: planes.near, far: planes.far)
        let view = PointCloudCamera(view: camera.viewMatrix.floats, projection: projection.floats)
        let by = colorBy ?? (contents.hasColor ? .color : .height)
        let range = PointColorRange.colorRange(by, min: list.bounds.min, max: list.bounds.max)
        let size = pointSize ?? (adaptiveSize ? AdaptivePointSize.defaultLargest : 1)
        let adaptScale = adaptiveSize ? AdaptivePointSize.scale(outputFocal: k.fx, spacing: AdaptivePointSize.spacing(of: contents.cloud.positions)) : 0

        let lighting = eyeDomeLighting(defaultOn: !contents.hasColor)
        let style = PointStyle(pointSize: size, colorBy: by, eyeDomeLighting: lighting, adaptiveSizeScale: adaptScale)
        let cpu = CPUPointRenderer()
        cpu.style = style; cpu.colorRange = range
        var gpu: (renderer: PointCloudRenderer, cloud: GPUPointCloud)?
        func gpuParts() throws -> (renderer: PointCloudRenderer, cloud: GPUPointCloud) {
            if let gpu { return gpu }
            GPUBackend.select(device: device)
            let r = try makeRenderer(try GPUContext.shared())
            r.style = style; r.colorRange = range
            let parts = (r, try GPUPointCloud(renderer: r, cloud: contents.cloud))
            gpu = parts
            return parts
        }
        func render(_ p: PointPath) throws -> PixelBuffer {
            if p == .cpu { return try cpu.render(points: list, viewProjection: view.viewProjection, width: w, height: h) }
            let g = try gpuParts()
            return try g.renderer.render(cloud: g.cloud, camera: view, width: w, height: h)
        }
        let pointsPath = try pointPath(kernel: "points list \(list.count)", width: w, height: h) { _ = try render($0) }
        var image = try render(pointsPath)
        if repeatCount > 1 {
            if pointsPath == .cpu {
                let start = DispatchTime.now()
                for _ in 0..<repeatCount { image = try render(.cpu) }
                printCPUTiming(cpu, w, h, source: "\(path) (\(list.count) points)", ms: Self.ms(since: start) / Double(repeatCount))
            } else {
                let g = try gpuParts()
                let start = DispatchTime.now()
                for _ in 0..<repeatCount { image = try render(pointsPath) }
                let renderMs = Self.ms(since: start) / Double(repeatCount)
                let drawStart = DispatchTime.now()
                var gpuMs: Double = 0
                for _ in 0..<repeatCount { gpuMs += try g.renderer.draw(cloud: g.cloud, camera: view, width: w, height: h).dispatchMs ?? .nan }
                let drawMs = Self.ms(since: drawStart) / Double(repeatCount)
                print(String(format: "render3d %@ %dx%d from %@ (%d points), %d frames on %@: render with readback %.2f ms/frame (%.1f fps), draw without readback %.2f ms/frame (%.1f fps), GPU draw %.2f ms",
                             methodName(g.renderer), w, h, path, g.cloud.count, repeatCount, g.renderer.context.name,
                             renderMs, 1000 / renderMs, drawMs, 1000 / drawMs, gpuMs / Double(repeatCount)))
            }
        }
        try ImageIO.write(image, to: out)
        let drawnSize = pointsPath == .cpu ? cpu.pointSize : gpu!.renderer.pointSize
        print("wrote \(out) (\(w)x\(h), \(list.count) points colored by \(by.rawValue), distance \(String(format: "%.3f", camera.distance)) m, \(adaptiveSize ? "adaptive point size up to" : "point size") \(drawnSize)\(pointsPath == .cpu ? ", on the CPU" : "")\(edlNote(lighting)))")
    }

    private static func ms(since start: DispatchTime) -> Double {
        Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e6
    }
}

/// `render3d --points`: which renderer draws the points.
enum PointPath: String, CaseIterable, ExpressibleByArgument {
    case cpu, compute, raster
}
