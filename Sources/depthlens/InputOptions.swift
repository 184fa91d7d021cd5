import ArgumentParser
import Capture
import DepthKit
import Foundation

/// Where one RGB-D frame comes from: any `--source` (frame `--frame` of it; `SourceOptions`, the
/// group every command that reads frames takes), or the shorthands that map onto one —
/// `--color/--depth` (pair:), `--synthetic` (synthetic), `--snapshot` (snapshot:) — plus the depth
/// decodings only a pair of files has (disparity, inverse depth).
struct RGBDInputOptions: ParsableArguments {
    @OptionGroup var sourceOptions: SourceOptions
    @Option(help: "Which frame of --source to use (0-based; default 0).")
    var frame: Int?
    @Option(help: "Color image (PNG, JPEG, PPM).")
    var color: String?
    @Option(help: "Depth image: 16-bit PNG/PGM (with --depth-scale) or PFM in meters; a disparity PFM with --disparity.")
    var depth: String?
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
    @Flag(help: "Use the built-in synthetic RGB-D scene (640x480) instead of files.")
    var synthetic = false
    @Option(help: "A viewer snapshot's NAME.json: its color and depth files, depth scale and intrinsics (instead of --color/--depth).")
    var snapshot: String?

    var source: SourceSpec? { sourceOptions.source }
    var depthScale: Float? { sourceOptions.depthScale }
    var intrinsics: String? { sourceOptions.intrinsics }
    var calibration: String? { sourceOptions.calibration }

    /// The `--source` these options name: --source itself, or the shorthand given; nil for a
    /// pair of files with a disparity or inverse-depth decoding (only `load` reads those).
    func sourceSpec() throws -> SourceSpec? {
        if let source {
            let others = [color != nil ? "--color" : nil, depth != nil ? "--depth" : nil, synthetic ? "--synthetic" : nil,
                          snapshot != nil ? "--snapshot" : nil, disparity ? "--disparity" : nil,
                          inverseDepth ? "--inverse-depth" : nil].compactMap { $0 }
            if let first = others.first {
                throw DepthKitError.invalidArgument("--source names the input; drop \(first)")
            }
            return try sourceOptions.applyingMaxImage(to: source)
        }
        if sourceOptions.maxImage != nil { throw DepthKitError.invalidArgument("--max-image goes with --source dds:…") }
        if frame != nil { throw DepthKitError.invalidArgument("--frame goes with --source") }
        if let snapshot { return .snapshot(json: snapshot) }
        if synthetic { return .synthetic }
        if disparity || inverseDepth || pgmLittleEndian { return nil }
        if let color, let depth { return .pair(color: color, depth: depth) }
        return nil
    }

    /// Checks the numbers; errors are `DepthKitError`s so they print as one line.
    func check() throws {
        if let frame, frame < 0 { throw DepthKitError.invalidArgument("--frame must be ≥ 0, got \(frame)") }
        if snapshot != nil {
            let others = [color != nil ? "--color" : nil, depth != nil ? "--depth" : nil, depthScale != nil ? "--depth-scale" : nil,
                          disparity ? "--disparity" : nil, inverseDepth ? "--inverse-depth" : nil,
                          intrinsics != nil ? "--intrinsics" : nil, calibration != nil ? "--calibration" : nil,
                          synthetic ? "--synthetic" : nil].compactMap { $0 }
            if let first = others.first {
                throw DepthKitError.invalidArgument("--snapshot brings its own files, scale and intrinsics; drop \(first)")
            }
        }
        try sourceOptions.check()
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
        try load(try sourceSpec(), needDepth: needDepth)
    }

    /// Loads the frame of `spec` (what `sourceSpec()` returned: a command that asked already
    /// passes it on rather than parse `--source` again).
    func load(_ spec: SourceSpec?, needDepth: Bool = true) throws -> LoadedFrame {
        try check()
        var frame: LoadedFrame
        if let spec {
            frame = try Self.load(spec, frame: self.frame ?? 0, depthScale: depthScale)
            if frame.depth == nil && needDepth {
                throw DepthKitError.file(path: spec.path ?? spec.description, problem: "has no depth (this command needs depth)")
            }
        } else {
            guard let color else { throw DepthKitError.invalidArgument("--color is required (or --source, --synthetic, --snapshot)") }
            guard let depth else {
                if needDepth { throw DepthKitError.invalidArgument("--depth is required for this command") }
                return LoadedFrame(color: try ImageIO.readColor(color), depth: nil, colorPath: color, depthPath: nil,
                                   unitsPerMeter: try DepthIO.validatedScale(depthScale))
            }
            frame = try loadDecoded(color: color, depth: depth)
        }
        var set = FrameSet(color: frame.color, depth: frame.depth, timestamp: 0, index: 0)
        frame.calibration = try sourceOptions.calibrationOverride().calibrate(&set, recorded: frame.calibration, depthUnits: frame.unitsPerMeter)
        frame.depth = set.depth
        return frame
    }

    /// Frame `index` of a source, through the same `FrameReader` every command uses.
    static func load(_ spec: SourceSpec, frame index: Int, depthScale: Float?) throws -> LoadedFrame {
        let source = try spec.makeSource(depthScale: depthScale)
        let f = try FrameReader.frame(index, of: source)
        let name = spec.path ?? spec.description
        let units = try source.depthUnitsPerMeter ?? DepthIO.validatedScale(depthScale)
        for w in source.warnings { warn(w) }
        if f.depth?.accuracy == .relative {
            // An iPhone portrait photo's depth: good for near/far, not meters; say so with every result.
            warn("\(name): the depth is relative (not metric): distances and point positions are not meters")
        }
        return LoadedFrame(color: f.color, depth: f.depth, colorPath: name, depthPath: f.depth == nil ? nil : name,
                           unitsPerMeter: units, calibration: source.calibration)
    }

    /// A pair of files whose depth is 16-bit with PGM byte-order overrides, disparity or inverse depth.
    private func loadDecoded(color: String, depth: String) throws -> LoadedFrame {
        if disparity || inverseDepth {
            let colorImage = try ImageIO.readColor(color)
            let d = disparity
                ? try DepthIO.readDisparityAsDepth(depth, focal: focal!, baseline: baseline!, doffs: doffs!, disparityScale: disparityScale)
                : try DepthIO.readInverseDepth(depth)
            try RGBDFrame.checkAspect(colorWidth: colorImage.width, colorHeight: colorImage.height,
                                      depthWidth: d.map.width, depthHeight: d.map.height, colorPath: color, depthPath: depth)
            return LoadedFrame(color: colorImage, depth: d, colorPath: color, depthPath: depth,
                               unitsPerMeter: try DepthIO.validatedScale(depthScale))
        }
        let f = try RGBDFrame.loadPair(color: color, depth: depth, depthScale: depthScale, pgmLittleEndian: pgmLittleEndian)
        return LoadedFrame(color: f.color, depth: f.depth, colorPath: color, depthPath: depth,
                           unitsPerMeter: try DepthIO.validatedScale(depthScale))
    }
}

/// One loaded input frame; depth is absent only for color-only filters.
struct LoadedFrame {
    var color: PixelBuffer
    var depth: DepthData?
    var colorPath: String
    var depthPath: String?
    /// Units per meter of the input's 16-bit depth (what `--filter depth` writes back).
    var unitsPerMeter: Float
    /// Both cameras: what the input recorded, then `--calibration`/`--intrinsics` (after `load`,
    /// always set: defaults when nothing is known).
    var calibration: RGBDCalibration? = nil
}
