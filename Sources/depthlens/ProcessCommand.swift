import ArgumentParser
import Capture
import DepthKit
import Foundation

struct ProcessCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "process",
        abstract: "Apply a filter to a color + depth frame (or every frame of a recording or data-set folder) and write PNGs.",
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
            help: "A data-set folder (TUM layout, or color/ and depth/ subfolders of pairs): --source tum:DIR; --out is then a folder.")
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
    @Option(help: "Output PNG; a folder for a source with many frames (a recording, a data-set folder) unless --frame picks one.")
    var out: String
    @Option(help: "Align depth to the color camera before filters that combine them: auto (when the cameras differ), color, none.")
    var align = "auto"
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
            if input.source != nil { throw DepthKitError.invalidArgument("--input is --source tum:DIR; give one of them") }
            let spec = SourceSpec.tum(directory: folder)
            guard let recording = try Recording(spec, depthScale: input.depthScale) else {
                throw DepthKitError.file(path: folder, problem: "holds no frames")
            }
            try processAll(recording, spec, filter: f, parameters: p, backend: choice, smoother: smoother)
            return
        }
        let spec = try input.sourceSpec()
        if let spec, input.source != nil, input.frame == nil {
            // A recording (a data-set folder, a bag, an mkv…) is processed frame by frame into the
            // folder --out; any other source gives its one frame.
            try input.check()
            if let recording = try Recording(spec, depthScale: input.depthScale) {
                try processAll(recording, spec, filter: f, parameters: p, backend: choice, smoother: smoother)
                return
            }
        }
        var frame = try input.load(spec, needDepth: f.needsDepth)
        p.depthScale = frame.unitsPerMeter
        if let smoother, let d = frame.depth { frame.depth = try smoother.smooth(d) }
        frame = try aligned(frame, filter: f, stage: DepthAlignmentStage(mode: try AlignMode.named(align)))
        let factory = f == .depth ? GPUBackend.cpu : try choice.factory(for: f, frame: frame, parameters: p)
        let result = try runFilter(f, frame: frame, parameters: p, factory: factory)
        try ImageIO.write(result, to: out)
        print("wrote \(out) (\(result.width)x\(result.height), \(f.rawValue), \(factory.backendName))")
    }

    /// The frame with depth aligned to color when `f` combines depth with color pixels and the
    /// stage's mode says so (smoothing ran before, on the depth camera's own pixels).
    private func aligned(_ frame: LoadedFrame, filter f: ProcessFilter, stage: DepthAlignmentStage) throws -> LoadedFrame {
        guard f.combinesDepthAndColor, let d = frame.depth, let c = frame.calibration else { return frame }
        let (set, _) = try stage.apply(FrameSet(color: frame.color, depth: d, timestamp: 0, index: 0), calibration: c)
        var out = frame
        out.depth = set.depth
        return out
    }

    /// A source opened for `processAll` when it is a recording: a source whose playback has a
    /// known end. Its warnings are printed and counted (those of its opening once it is known to be one).
    private struct Recording {
        final class Warnings {
            let name: String
            /// Warnings since the recording opened: each one a frame skipped or unreadable.
            private(set) var count = 0
            private var held: [String]? = []
            init(name: String) { self.name = name }
            func note(_ message: String) {
                if held != nil { held!.append(message) } else { count += 1; warn("\(name): \(message)") }
            }
            func release() {
                for m in held ?? [] { warn("\(name): \(m)") }
                held = nil
            }
        }
        let reader: FrameReader
        let warnings: Warnings

        /// Opens `spec`; nil when it is not a recording (a pair, a snapshot, the endless synthetic scene).
        init?(_ spec: SourceSpec, depthScale: Float?) throws {
            let source = try spec.makeSource(depthScale: depthScale)
            let w = Warnings(name: source.name)
            source.onWarning = { w.note($0) }   // before it starts: warnings of its opening count too
            reader = try FrameReader(source: source)
            warnings = w
            guard source.recordedFrameCount != nil else { return nil }
            w.release()
        }
    }

    /// Every frame of a recording into the folder `out`, named by the frame's own name or its
    /// timestamp (`%.6f.png`); a bad frame is reported on its own line and the run ends with exit
    /// 1 after the others are written.
    private func processAll(_ recording: Recording, _ spec: SourceSpec, filter f: ProcessFilter, parameters p: ProcessParameters,
                            backend: BackendChoice, smoother: DepthSmoothing?) throws {
        let reader = recording.reader, source = reader.source
        let override = try input.sourceOptions.calibrationOverride()
        let stage = DepthAlignmentStage(mode: try AlignMode.named(align))
        var p = p
        p.depthScale = source.depthUnitsPerMeter ?? DepthIO.defaultDepthScale
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let total = source.recordedFrameCount ?? 1
        var progress = ProgressBar(total: total, label: "process \(f.rawValue)")
        var failures = 0, written = 0
        var unwarned = 0, errorsInARow = 0
        while true {
            let warned = recording.warnings.count
            let raw: FrameSet
            do {
                guard let f = try reader.next() else { break }
                raw = f
                errorsInARow = 0
            } catch {
                // A frame the recording could not read (a bag's undecodable message): said once
                // (the source's warning, else here); the frames after it go on.
                errorsInARow += 1
                if errorsInARow > (source.recordedFrameCount ?? 0) { throw error }
                if recording.warnings.count == warned {
                    progress.interrupt()
                    warn("\(error)")
                    unwarned += 1
                }
                continue
            }
            do {
                var frame = LoadedFrame(color: raw.color, depth: raw.depth, colorPath: source.name,
                                        depthPath: raw.depth == nil ? nil : source.name, unitsPerMeter: p.depthScale)
                if f.needsDepth && frame.depth == nil {
                    throw DepthKitError.file(path: source.name, problem: "frame \(raw.index) has no depth")
                }
                if let smoother, let d = frame.depth { frame.depth = try smoother.smooth(d) }
                frame.calibration = try override.resolve(for: source, frame: raw)
                frame = try aligned(frame, filter: f, stage: stage)
                let factory = f == .depth ? GPUBackend.cpu : try backend.factory(for: f, frame: frame, parameters: p)
                let result = try runFilter(f, frame: frame, parameters: p, factory: factory)
                let name = (raw.name ?? String(format: "%.6f", raw.timestamp)) + ".png"
                try ImageIO.write(result, to: (out as NSString).appendingPathComponent(name))
                written += 1
            } catch {
                smoother?.reset()  // the next frame does not follow the last smoothed one
                progress.interrupt()
                warn("\(error)")
                failures += 1
            }
            progress.update(to: raw.index + 1)
        }
        progress.finish()
        failures += recording.warnings.count + unwarned
        if failures > 0 {
            throw DepthKitError.invalidArgument("\(failures) of \(written + failures) frames in \(spec.path ?? spec.description) failed")
        }
        print("wrote \(written) frames to \(out)")
    }
}

/// A textual progress bar on standard error, redrawn in place on a terminal and printed once otherwise.
struct ProgressBar {
    var total: Int
    let label: String
    private(set) var done = 0
    private let isTTY = isatty(STDERR_FILENO) != 0

    init(total: Int, label: String) { self.total = total; self.label = label }

    /// What `finish` counts when not on a terminal.
    var unit = "frames"
    /// Shown after the count (rate, time left).
    var detail = ""

    mutating func advance() { update(to: done + 1) }

    /// Sets the count done so far and redraws.
    mutating func update(to count: Int) {
        done = count
        guard isTTY else { return }
        let width = 30, filled = total > 0 ? min(width, width * done / total) : 0
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
        let count = total > 0 ? "\(done)/\(total)" : "\(done)"
        FileHandle.standardError.write(Data("\r\(label) [\(bar)] \(count)\(detail)\u{1B}[K".utf8))
    }

    /// Ends the current line so a warning starts on its own.
    func interrupt() { if isTTY && done > 0 { FileHandle.standardError.write(Data("\n".utf8)) } }

    func finish() {
        if isTTY { FileHandle.standardError.write(Data("\n".utf8)) }
        else { FileHandle.standardError.write(Data("\(label): \(total > 0 ? "\(done)/\(total)" : "\(done)") \(unit)\(detail)\n".utf8)) }
    }
}
