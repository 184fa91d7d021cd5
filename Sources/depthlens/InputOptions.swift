import ArgumentParser
import DepthKit
import Foundation

/// Where one RGB-D frame comes from: a color + depth pair, a disparity map, or the synthetic scene.
struct RGBDInputOptions: ParsableArguments {
    @Option(help: "Color image (PNG, JPEG, PPM).")
    var color: String?
    @Option(help: "Depth image: 16-bit PNG/PGM (with --depth-scale) or PFM in meters; a disparity PFM with --disparity.")
    var depth: String?
    @Option(help: "Units per meter of 16-bit depth (TUM 5000, RealSense/Kinect 1000). Default 1000.")
    var depthScale: Float?
    @Flag(help: "16-bit PGM samples are little-endian (NYU samples), not big-endian as the format says.")
    var pgmLittleEndian = false
    @Flag(help: "--depth is a disparity map in pixels (Middlebury); needs --focal, --baseline, --doffs.")
    var disparity = false
    @Option(help: "Focal length in pixels (with --disparity).")
    var focal: Float?
    @Option(help: "Baseline in meters (with --disparity).")
    var baseline: Float?
    @Option(help: "Disparity offset in pixels (with --disparity).")
    var doffs: Float?
    @Option(help: "With --disparity: --depth is an 8-bit PNG (Middlebury disp0GT-style) whose value / this is disparity in pixels; 0 is invalid.")
    var disparityScale: Float?
    @Flag(help: "--depth is a PFM of inverse depth (1/m).")
    var inverseDepth = false
    @Option(help: "Camera intrinsics fx,fy,cx,cy in pixels of the depth image (default: 525·W/640, image center).")
    var intrinsics: String?
    @Flag(help: "Use the built-in synthetic RGB-D scene (640x480) instead of files.")
    var synthetic = false
    @Option(help: "A viewer snapshot's NAME.json: its color and depth files, depth scale and intrinsics (instead of --color/--depth).")
    var snapshot: String?

    /// Checks the numbers; errors are `DepthKitError`s so they print as one line.
    func check() throws {
        if snapshot != nil {
            let others = [color != nil ? "--color" : nil, depth != nil ? "--depth" : nil, depthScale != nil ? "--depth-scale" : nil,
                          disparity ? "--disparity" : nil, inverseDepth ? "--inverse-depth" : nil,
                          intrinsics != nil ? "--intrinsics" : nil, synthetic ? "--synthetic" : nil].compactMap { $0 }
            if let first = others.first {
                throw DepthKitError.invalidArgument("--snapshot brings its own files, scale and intrinsics; drop \(first)")
            }
        }
        if depthScale != nil { _ = try DepthIO.validatedScale(depthScale) }
        if disparityScale != nil && !disparity {
            throw DepthKitError.invalidArgument("--disparity-scale needs --disparity (with --focal, --baseline, --doffs)")
        }
        if let s = disparityScale, !(s > 0 && s.isFinite) {
            throw DepthKitError.invalidArgument("--disparity-scale must be a positive number, got \(s)")
        }
        if inverseDepth && disparity {
            throw DepthKitError.invalidArgument("--inverse-depth and --disparity exclude each other")
        }
        if disparity {
            guard let f = focal, let b = baseline, let o = doffs else {
                throw DepthKitError.invalidArgument("--disparity needs --focal, --baseline and --doffs")
            }
            guard f > 0, f.isFinite, b > 0, b.isFinite, o.isFinite else {
                throw DepthKitError.invalidArgument("--focal and --baseline must be positive numbers and --doffs finite")
            }
        }
    }

    /// Loads the frame. `needDepth` false lets color-only filters run without --depth.
    func load(needDepth: Bool = true) throws -> LoadedFrame {
        try check()
        if let snapshot { return try loadSnapshot(snapshot, needDepth: needDepth) }
        if synthetic {
            let f = SyntheticScene().render(width: 640, height: 480, time: 0)
            return LoadedFrame(color: f.color, depth: f.depth, colorPath: "synthetic", depthPath: "synthetic")
        }
        guard let color else { throw DepthKitError.invalidArgument("--color is required (or --synthetic)") }
        guard let depth else {
            if needDepth { throw DepthKitError.invalidArgument("--depth is required for this command") }
            return LoadedFrame(color: try ImageIO.readColor(color), depth: nil, colorPath: color, depthPath: nil)
        }
        var frame: LoadedFrame
        if disparity || inverseDepth {
            let colorImage = try ImageIO.readColor(color)
            let d = disparity
                ? try DepthIO.readDisparityAsDepth(depth, focal: focal!, baseline: baseline!, doffs: doffs!, disparityScale: disparityScale)
                : try DepthIO.readInverseDepth(depth)
            try RGBDFrame.checkAspect(colorWidth: colorImage.width, colorHeight: colorImage.height,
                                      depthWidth: d.map.width, depthHeight: d.map.height, colorPath: color, depthPath: depth)
            frame = LoadedFrame(color: colorImage, depth: d, colorPath: color, depthPath: depth)
        } else {
            let f = try RGBDFrame.loadPair(color: color, depth: depth, depthScale: depthScale,
                                           pgmLittleEndian: pgmLittleEndian)
            frame = LoadedFrame(color: f.color, depth: f.depth, colorPath: color, depthPath: depth)
        }
        if let s = intrinsics, let d = frame.depth {
            guard let k = CameraIntrinsics.parse(s, width: d.map.width, height: d.map.height) else {
                throw DepthKitError.invalidArgument("--intrinsics must be fx,fy,cx,cy with positive focal lengths, got '\(s)'")
            }
            frame.depth?.intrinsics = k
        }
        return frame
    }
}

extension RGBDInputOptions {
    /// Units per meter of 16-bit depth: the snapshot's depth_scale with --snapshot, else --depth-scale (default 1000).
    func unitsPerMeter() throws -> Float {
        if let snapshot { return try SnapshotMetadata.read(snapshot).depth_scale }
        return try DepthIO.validatedScale(depthScale)
    }

    /// The color and depth files a snapshot's JSON names (beside it), at its scale, with its intrinsics.
    private func loadSnapshot(_ json: String, needDepth: Bool) throws -> LoadedFrame {
        let meta = try SnapshotMetadata.read(json)
        guard let colorName = meta.colorFile else {
            throw DepthKitError.file(path: json, problem: "'files' names no *_color.png")
        }
        let colorPath = SnapshotMetadata.sibling(colorName, of: json)
        guard let depthName = meta.depthFile else {
            if needDepth { throw DepthKitError.file(path: json, problem: "'files' names no *_depth.png (a snapshot without depth)") }
            return LoadedFrame(color: try ImageIO.readColor(colorPath), depth: nil, colorPath: colorPath, depthPath: nil)
        }
        let depthPath = SnapshotMetadata.sibling(depthName, of: json)
        let f = try RGBDFrame.loadPair(color: colorPath, depth: depthPath, depthScale: meta.depth_scale)
        let k = meta.cameraIntrinsics
        guard k.width == f.depth.map.width, k.height == f.depth.map.height else {
            throw DepthKitError.file(path: json, problem:
                "intrinsics are for \(k.width)x\(k.height) but \(depthName) is \(f.depth.map.width)x\(f.depth.map.height)")
        }
        var depth = f.depth
        depth.intrinsics = k
        return LoadedFrame(color: f.color, depth: depth, colorPath: colorPath, depthPath: depthPath)
    }
}

/// One loaded input frame; depth is absent only for color-only filters.
struct LoadedFrame {
    var color: PixelBuffer
    var depth: DepthData?
    var colorPath: String
    var depthPath: String?
}
