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
    @Option(help: "Camera intrinsics fx,fy,cx,cy in pixels of the depth image (default: 525·W/640, image center).")
    var intrinsics: String?
    @Flag(help: "Use the built-in synthetic RGB-D scene (640x480) instead of files.")
    var synthetic = false

    /// Checks the numbers; errors are `DepthKitError`s so they print as one line.
    func check() throws {
        if depthScale != nil { _ = try DepthIO.validatedScale(depthScale) }
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
        if disparity {
            let colorImage = try ImageIO.readColor(color)
            let d = try DepthIO.readDisparityAsDepth(depth, focal: focal!, baseline: baseline!, doffs: doffs!)
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

/// One loaded input frame; depth is absent only for color-only filters.
struct LoadedFrame {
    var color: PixelBuffer
    var depth: DepthData?
    var colorPath: String
    var depthPath: String?
}
