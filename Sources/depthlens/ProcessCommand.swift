import ArgumentParser
import DepthKit
import Foundation

struct ProcessCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "process",
        abstract: "Apply a filter to a color + depth frame (or every frame of a data-set folder) and write PNGs.",
        discussion: """
        Filters: rosy (color), grayscale | jet | turbo | viridis (depth → colors, at the depth size),
        mix (color blended with JET depth by --mix), highpass | bandpass (depth mask, gray, at the color size),
        comic | greenscreen | blur (depth-masked effects on the color image),
        portrait (the viewer's portrait mode: blur under a sharp high-pass mask),
        depth (the depth, smoothed with --smooth, as a 16-bit PNG at the input's scale).
        """
    )

    @OptionGroup var input: RGBDInputOptions
    @Option(name: .customLong("input"),
            help: "A data-set folder (TUM layout, or color/ and depth/ subfolders of pairs); --out is then a folder.")
    var inputFolder: String?
    @Option(help: "Filter name (see above).")
    var filter: String
    @Option(help: "Blend factor for --filter mix: 0 = color, 1 = JET depth.")
    var mix: Float = 0.5
    @Option(help: "Near end of the depth range in meters (grayscale offset, colormap min).")
    var min: Float?
    @Option(help: "Far end of the depth range in meters.")
    var max: Float?
    @Flag(help: "Map depth linearly between --min and --max instead of histogram equalization.")
    var noEqualize = false
    @Option(help: "Focus for depth masks and effects, 0 (far) … 1 (near).")
    var focus: Float = 0.5
    @Flag(help: "Sharp mask edge (slope 100 instead of 4).")
    var sharp = false
    @Option(help: "Background image for --filter greenscreen (default: solid green).")
    var background: String?
    @Option(help: "cpu, gpu or auto (the faster one measured on this machine, per filter and size).")
    var backend: String = "cpu"
    @Option(help: "Vulkan device for --backend gpu|auto: index or part of the name (see `depthlens devices`).")
    var device: String?
    @Option(help: "Output PNG (or folder with --input-folder).")
    var out: String
    @OptionGroup var smoothing: SmoothingOptions

    func run() throws {
        let f = try ProcessFilter.named(filter)
        var p = ProcessParameters(mix: mix, min: min, max: max, equalize: !noEqualize, focus: focus, sharp: sharp)
        try p.check()
        let choice = try BackendChoice(backend)
        GPUBackend.select(device: device)
        if let background { p.background = try ImageIO.readColor(background) }
        let smoothSettings = try smoothing.settings()
        let smoother = smoothSettings.enabled ? SmoothingOptions.makeSmoother(smoothSettings, gpu: choice == .gpu) : nil
        if let folder = inputFolder {
            try processFolder(folder, filter: f, parameters: p, backend: choice, smoother: smoother)
            return
        }
        p.depthScale = try input.unitsPerMeter()
        var frame = try input.load(needDepth: f.needsDepth)
        if let smoother, let d = frame.depth { frame.depth = try smoother.smooth(d) }
        let factory = f == .depth ? GPUBackend.cpu : try choice.factory(for: f, frame: frame, parameters: p)
        let result = try runFilter(f, frame: frame, parameters: p, factory: factory)
        try ImageIO.write(result, to: out)
        print("wrote \(out) (\(result.width)x\(result.height), \(f.rawValue), \(factory.backendName))")
    }

    private func processFolder(_ folder: String, filter f: ProcessFilter, parameters p: ProcessParameters,
                               backend: BackendChoice, smoother: DepthSmoothing?) throws {
        let frames = try DatasetFolder(path: folder, depthScale: input.depthScale, pgmLittleEndian: input.pgmLittleEndian)
        var p = p
        p.depthScale = frames.unitsPerMeter
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        var progress = ProgressBar(total: frames.count, label: "process \(f.rawValue)")
        var failures = 0
        for i in 0..<frames.count {
            do {
                var frame = try frames.load(i)
                if let smoother, let d = frame.depth { frame.depth = try smoother.smooth(d) }
                let factory = f == .depth ? GPUBackend.cpu : try backend.factory(for: f, frame: frame, parameters: p)
                let result = try runFilter(f, frame: frame, parameters: p, factory: factory)
                try ImageIO.write(result, to: (out as NSString).appendingPathComponent(frames.outputName(i)))
            } catch {
                smoother?.reset()  // the next frame does not follow the last smoothed one
                progress.interrupt()
                warn("\(error)")
                failures += 1
            }
            progress.advance()
        }
        progress.finish()
        if failures > 0 {
            throw DepthKitError.invalidArgument("\(failures) of \(frames.count) frames in \(folder) failed")
        }
        print("wrote \(frames.count) frames to \(out)")
    }
}

/// A textual progress bar on standard error, redrawn in place on a terminal and printed once otherwise.
struct ProgressBar {
    let total: Int
    let label: String
    private(set) var done = 0
    private let isTTY = isatty(STDERR_FILENO) != 0

    init(total: Int, label: String) { self.total = total; self.label = label }

    /// What `finish` counts when not on a terminal.
    var unit = "frames"

    mutating func advance() { update(to: done + 1) }

    /// Sets the count done so far and redraws.
    mutating func update(to count: Int) {
        done = count
        guard isTTY else { return }
        let width = 30, filled = total > 0 ? width * done / total : width
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
        FileHandle.standardError.write(Data("\r\(label) [\(bar)] \(done)/\(total)".utf8))
    }

    /// Ends the current line so a warning starts on its own.
    func interrupt() { if isTTY && done > 0 { FileHandle.standardError.write(Data("\n".utf8)) } }

    func finish() {
        if isTTY { FileHandle.standardError.write(Data("\n".utf8)) }
        else { FileHandle.standardError.write(Data("\(label): \(done)/\(total) \(unit)\n".utf8)) }
    }
}
