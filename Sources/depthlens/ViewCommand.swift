import ArgumentParser
import Capture
import DepthKit
import Foundation
import Viewer

struct ViewCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "view",
        abstract: "Open the viewer window on a color + depth source.",
        discussion: """
        Without --source: the synthetic scene.
        Modes: \(PreviewMode.all.map(\.name).joined(separator: ", ")) (number keys 1–9 in the window).
        Keys: `depthlens view --keys` prints the key table; `?` shows it in the window.
        Without a display, use the headless commands: process, export-ply, render3d.
        """
    )

    /// Without `--source`: the synthetic scene.
    @OptionGroup var input: SourceOptions
    @Option(help: "First preview mode.")
    var mode = "original"
    @Option(help: "2d or 3d.")
    var view = "2d"
    @Option(help: "cpu, gpu or auto (default): where the kernels with a GPU port run (auto: whichever was measured faster here).")
    var backend = "auto"
    @Option(help: "How the 3D view draws points: compute, raster or cpu (the compute path's picture made on the CPU). Default: cpu on a CPU Vulkan device (lavapipe), where it is 3–5× faster, else compute.")
    var points: String?
    @Flag(inversion: .prefixedNo, help: "3D eye-dome lighting (key N; compute and cpu points). Default: on for a PLY without colors, else off.")
    var edl: Bool?
    @Option(help: "Vulkan device: index or part of the name (see `depthlens devices`).")
    var device: String?
    @Flag(help: "Present without vsync (MAILBOX or IMMEDIATE when the surface has them).")
    var noVsync = false
    @Option(help: "Where S writes snapshots and P writes PLY files.")
    var snapshotDir = "snapshots"
    @Flag(help: "Start paused.")
    var paused = false
    @Option(help: "Start on this frame (0-based).")
    var frame: Int?
    @Option(help: "Playback frames per second (default: the recorded timestamps).")
    var fps: Double?
    @Flag(help: "Loop playback.")
    var loop = false
    @Option(help: "Blend factor of the colormap mode: 0 = color, 1 = colored depth.")
    var mix: Float = 0.5
    @Option(help: "jet, turbo, viridis or grayscale.")
    var colormap = "jet"
    @Option(help: "Window size WxH.")
    var size = "1280x720"
    @Flag(help: "Start with the control panel hidden (F1 or H shows it).")
    var noPanel = false
    @Flag(help: "Rebuild shaders when their files change; a shader that does not compile leaves the old one running.")
    var watchShaders = false
    @Flag(help: "Print FPS and per-stage milliseconds to stdout once a second.")
    var stats = false
    @Flag(help: "Upload and run the kernels for every displayed frame, even an unchanged one (for timing).")
    var reprocess = false
    @Flag(help: "Print the depth readout to stdout on each click (and, in the 3D view of a PLY cloud, each new hover readout).")
    var logReadout = false
    @Flag(help: "Print UI events and panel layout to stdout (for tests).")
    var logUi = false
    @Option(help: "Quit after this many seconds.")
    var exitAfter: Double?
    @Option(help: "Quit after this many displayed frames; with --stats, print the steady-state line (allocations, RSS) at the end; with --log-ui a last 'ui: exit' line.")
    var exitAfterFrames: Int?
    @Option(help: ArgumentHelp("Orbit the 3D view by itself at this many degrees a second (the view moves every frame, as under a drag: for timing a moving view; a drag still works).", valueName: "deg/s"))
    var spin: Double?
    @Flag(help: "Print the key table (Markdown) and exit.")
    var keys = false
    @Flag(help: "Ctrl+R records RGB-D (color, 16-bit depth, calibration) as Matroska instead of the filtered view as H.264.")
    var recordRgbd = false
    @Option(help: "auto (default): depth aligned to the color camera when the source's cameras differ; none: raw depth with its own intrinsics.")
    var align = "auto"
    @Option(help: "Where the panel's Export section (and Ctrl+E) writes the recording: a TUM-layout folder, or FILE.mcap (ROS 2 MCAP) or FILE.mp4 / FILE.mkv (a colorized video; .mkv lossless): the kind follows the name (default: <snapshot-dir>/export-DATE-TIME).")
    var exportDir: String?
    @OptionGroup var smoothing: SmoothingOptions
    @OptionGroup var cameraControls: CameraControlOptions

    func run() throws {
        if keys {
            print(KeyBindings.markdown, terminator: "")
            return
        }
        var o = ViewerOptions()
        o.startedAt = monotonicSeconds()
        try input.check()
        let spec = try input.spec(or: .synthetic)
        o.source = spec
        if case .ply(let path) = spec {
            // Read before the window opens: a bad PLY is one line and exit 1, with no window.
            let t = monotonicSeconds()
            let contents = try PLYLoading.load(path)
            o.pointList = PointListHandoff(contents, readSeconds: monotonicSeconds() - t)
            o.view = .threeD
        } else if case let .plySequence(directory, pattern) = spec {
            // Listed before the window opens: an empty folder is one line and exit 1, with no window.
            _ = try PLYSequence(directory: directory, pattern: pattern)
        }
        o.depthScale = input.depthScale
        o.mode = try PreviewMode.named(mode)
        guard let v = ViewerOptions.View(rawValue: view.lowercased()) else {
            throw DepthKitError.invalidArgument("--view must be 2d or 3d, got '\(view)'")
        }
        o.view = v
        o.backend = try ViewerBackend.named(backend)
        if let points {
            guard let p = PointDrawing(rawValue: points.lowercased()) else {
                throw DepthKitError.invalidArgument("--points must be compute, raster or cpu, got '\(points)'")
            }
            o.points = p
        }
        o.edl = edl
        o.vsync = !noVsync
        o.snapshotDir = snapshotDir
        o.paused = paused
        if let frame, frame < 0 { throw DepthKitError.invalidArgument("--frame must be ≥ 0, got \(frame)") }
        o.frame = frame
        try Limits.fps.check(fps)
        o.fps = fps
        o.loop = loop
        try Limits.mix.check(mix)
        o.mix = mix
        guard let cm = Colormap(rawValue: colormap.lowercased()) else {
            throw DepthKitError.invalidArgument("--colormap must be one of \(Colormap.allCases.map(\.rawValue).joined(separator: ", ")), got '\(colormap)'")
        }
        o.colormap = cm
        let parts = size.lowercased().split(separator: "x").compactMap { Int($0) }
        guard parts.count == 2, parts[0] > 0, parts[1] > 0, parts[0] <= 16384, parts[1] <= 16384 else {
            throw DepthKitError.invalidArgument("--size must be WIDTHxHEIGHT, got '\(size)'")
        }
        o.width = parts[0]; o.height = parts[1]
        o.showPanel = !noPanel
        o.watchShaders = watchShaders
        o.stats = stats
        o.reprocess = reprocess
        o.logReadout = logReadout
        o.logUI = logUi
        if let exitAfter, !(exitAfter >= 0 && exitAfter.isFinite) {
            throw DepthKitError.invalidArgument("--exit-after must be a non-negative number of seconds, got \(exitAfter)")
        }
        o.exitAfter = exitAfter
        if let exitAfterFrames, exitAfterFrames < 1 {
            throw DepthKitError.invalidArgument("--exit-after-frames must be a positive number of frames, got \(exitAfterFrames)")
        }
        o.exitAfterFrames = exitAfterFrames
        if let spin, !(spin.isFinite && abs(spin) <= 3600) {
            throw DepthKitError.invalidArgument("--spin must be degrees a second between -3600 and 3600, got \(spin)")
        }
        o.spinDegreesPerSecond = spin
        o.smoothing = try smoothing.settings()
        o.align = try AlignMode.named(align)
        o.recordRGBD = recordRgbd
        o.exportDir = exportDir
        guard o.align != .color else { throw DepthKitError.invalidArgument("view --align is auto or none") }
        o.calibration = try input.calibrationOverride()
        o.cameraControls = try cameraControls.options(source: spec)
        GPUBackend.select(device: device)
        try ViewerApp.run(o)
        if let s = StopSignals.pending {
            warn("stopped by \(StopSignals.name(s)); recordings and exports were finished")
            throw ExitCode(128 + s)
        }
    }
}
