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
        Rendering runs on a Vulkan device (Mesa's lavapipe will do): there is no CPU fallback, and \
        without a device the command fails with one line saying so. \
        --repeat N renders N times and prints milliseconds per frame with and without the readback. \
        Points are drawn by compute shaders (--points compute, the default: 64-bit atomics where the device \
        has them, --atomics 32 forces the 32-bit fallback) or as POINT_LIST primitives (--points raster). \
        --ply FILE renders a point list instead of a depth frame, framed whole (bounding-box center); \
        without colors it is colored by height.
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
    @Option(help: "How points are drawn: compute (atomicMin rasterizer) or raster (POINT_LIST pipeline; depth frames only).")
    var points: PointCloudMethod = .compute
    @Option(parsing: .unconditional, help: "Compute path atomics: 64 (where the device has them) or 32 (the fallback). Default: the best the device has.")
    var atomics: Int?
    @Option(name: .customLong("color-by"), help: "Point color: color, depth or height (jet colormap; compute path). Default: color, height for a PLY without colors.")
    var colorBy: PointCloudColorBy?
    @Option(help: "A PLY point list to render instead of --color/--depth (default size 1280x720).")
    var ply: String?
    @Option(help: "Vulkan device: index or part of the name (see `depthlens devices`).")
    var device: String?
    @Option(help: "Output .png file.")
    var out: String

    /// Every number, before anything is read or rendered.
    func checkArguments() throws {
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
        if try plyPath() != nil && points == .raster { throw DepthKitError.invalidArgument("--points raster draws depth frames only; use --points compute with --ply") }
        if colorBy != nil && colorBy != .color && points == .raster {
            throw DepthKitError.invalidArgument("--color-by \(colorBy!.rawValue) needs --points compute")
        }
        guard repeatCount >= 1 else { throw DepthKitError.invalidArgument("--repeat must be at least 1, got \(repeatCount)") }
        try requireFinite(yaw, "--yaw")
        try requireFinite(roll, "--roll")
        try requireFinite(pitch, "--pitch", in: -89...89)
    }

    /// The PLY file to render: `--ply FILE`, or `--source ply:FILE` (the same thing).
    func plyPath() throws -> String? {
        if let text = input.source, case .ply(let path) = try SourceSpec(parsing: text) {
            if ply != nil { throw DepthKitError.invalidArgument("--ply and --source both name the input; give one") }
            return path
        }
        return ply
    }

    func run() throws {
        try checkArguments()
        if let ply = try plyPath() { return try renderPLY(ply) }
        let frame = try input.load()
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

        GPUBackend.select(device: device)
        let context = try GPUContext.shared()
        let renderer = try makeRenderer(context)
        if let by = colorBy, by != .color {
            renderer.colorBy = by
            renderer.colorRange = PointColorRange.colorRange(by, depthData, depthData.intrinsics.scaled(toWidth: depth.width, height: depth.height))
        }
        renderer.pointSize = pointSize ?? max(1, (max(Float(w) / Float(depth.width), Float(h) / Float(depth.height))).rounded(.up))

        var image = try renderer.render(depth: depth, color: color, intrinsics: depthData.intrinsics, camera: view, width: w, height: h)
        if repeatCount > 1 {
            let start = DispatchTime.now()
            for _ in 0..<repeatCount {
                image = try renderer.render(depth: depth, color: color, intrinsics: depthData.intrinsics, camera: view, width: w, height: h)
            }
            let renderMs = Self.ms(since: start) / Double(repeatCount)
            let drawStart = DispatchTime.now()
            var gpuMs: Double = 0
            for _ in 0..<repeatCount {
                gpuMs += try renderer.draw(depth: depth, color: color, intrinsics: depthData.intrinsics, camera: view,
                                           width: w, height: h).dispatchMs ?? .nan
            }
            let drawMs = Self.ms(since: drawStart) / Double(repeatCount)
            print(String(format: "render3d %@ %dx%d from %dx%d depth (%d points), %d frames on %@: render with readback %.2f ms/frame (%.1f fps), upload+draw without readback %.2f ms/frame (%.1f fps), GPU draw %.2f ms",
                         methodName(renderer), w, h, depth.width, depth.height, depth.width * depth.height, repeatCount, context.name,
                         renderMs, 1000 / renderMs, drawMs, 1000 / drawMs, gpuMs / Double(repeatCount)))
        }
        try ImageIO.write(image, to: out)
        print("wrote \(out) (\(w)x\(h), yaw \(yaw)°, pitch \(pitch)°, roll \(roll)°, distance \(String(format: "%.3f", camera.distance)) m, point size \(renderer.pointSize))")
    }

    private func makeRenderer(_ context: GPUContext) throws -> PointCloudRenderer {
        let renderer = try PointCloudRenderer(context: context, cache: TextureCache(context: context), library: ShaderLibrary.shared())
        renderer.method = points
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
        GPUBackend.select(device: device)
        let context = try GPUContext.shared()
        let contents = try PLYLoading.load(path)
        let renderer = try makeRenderer(context)
        let cloud = try GPUPointCloud(renderer: renderer, cloud: contents.cloud)
        let k = CameraIntrinsics.default(width: w, height: h)
        let framing = CloudFraming(min: cloud.bounds.min, max: cloud.bounds.max, intrinsics: k)
        var camera = OrbitCamera(center: framing.center, distance: distance ?? framing.distance)
        let radians = Float.pi / 180
        camera.orbit(yaw: yaw * radians, pitch: pitch * radians)
        camera.roll(by: roll * radians)
        let planes = framing.planes(distance: camera.distance)
        let projection = Matrix4.projection(fx: k.fx, fy: k.fy, cx: k.cx, cy: k.cy, width: w, height: h,
                                            near: planes.near, far: planes.far)
        let view = PointCloudCamera(view: camera.viewMatrix.floats, projection: projection.floats)
        renderer.pointSize = pointSize ?? 1
        let by = colorBy ?? (contents.hasColor ? .color : .height)
        renderer.colorBy = by
        renderer.colorRange = PointColorRange.colorRange(by, min: cloud.bounds.min, max: cloud.bounds.max)

        var image = try renderer.render(cloud: cloud, camera: view, width: w, height: h)
        if repeatCount > 1 {
            let start = DispatchTime.now()
            for _ in 0..<repeatCount { image = try renderer.render(cloud: cloud, camera: view, width: w, height: h) }
            let renderMs = Self.ms(since: start) / Double(repeatCount)
            let drawStart = DispatchTime.now()
            var gpuMs: Double = 0
            for _ in 0..<repeatCount { gpuMs += try renderer.draw(cloud: cloud, camera: view, width: w, height: h).dispatchMs ?? .nan }
            let drawMs = Self.ms(since: drawStart) / Double(repeatCount)
            print(String(format: "render3d %@ %dx%d from %@ (%d points), %d frames on %@: render with readback %.2f ms/frame (%.1f fps), draw without readback %.2f ms/frame (%.1f fps), GPU draw %.2f ms",
                         methodName(renderer), w, h, path, cloud.count, repeatCount, context.name,
                         renderMs, 1000 / renderMs, drawMs, 1000 / drawMs, gpuMs / Double(repeatCount)))
        }
        try ImageIO.write(image, to: out)
        print("wrote \(out) (\(w)x\(h), \(cloud.count) points colored by \(by.rawValue), distance \(String(format: "%.3f", camera.distance)) m, point size \(renderer.pointSize))")
    }

    private static func ms(since start: DispatchTime) -> Double {
        Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e6
    }
}
