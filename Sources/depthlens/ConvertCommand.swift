import ArgumentParser
import Capture
import DepthKit
import Foundation

struct ConvertCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "convert",
        abstract: "Export a whole recording as a TUM-layout folder (PNGs, 16-bit depth, index files, calibration.json), ROS 2 MCAP, or a colorized video.",
        discussion: """
        Writes rgb/TIMESTAMP.png, depth/TIMESTAMP.png (16-bit, the recording's own units), rgb.txt,
        depth.txt, associations.txt and calibration.json (and ply/TIMESTAMP.ply with --ply, ir/ and
        ir.txt with --what ir); timestamps are the recording's own clock in seconds with 6 decimals.
        Recordings (bag:, mkv:, tum:) are written stream by stream: every color frame once under its
        own stamp, every depth frame once under its own; associations.txt pairs each depth frame with
        the color frame nearest in time. --time keeps each stream's frames stamped within it, --frames
        A:B each stream's frames nearest in time to playback frames A..B, --every N every N-th frame
        of each stream. `tum:DIR` reopens the folder with the same frames. A source with IMU samples
        (bag, ros2, mkv, a Stray Scanner scan) also gets imu.csv: timestamp, ax ay az (m/s^2), gx gy gz
        (rad/s), a row per gyroscope sample with the accelerometer interpolated at its stamp (--time
        keeps the rows within it). Ctrl+C, SIGTERM and SIGHUP stop cleanly: what was written is
        complete and listed. A frame that cannot be read is one line (the recording, the frame, the
        problem); the others are written and listed, and the exit status is 1. --jobs N: N threads
        decode, align, encode and write (the frames are written in order, the same bytes for any N).
        --video FILE.mp4|FILE.mkv (instead of --out) writes a video (H.264; FFV1 with --lossless, .mkv
        only) of --what depth (default; through --colormap and --range, as the view colors it), color,
        side-by-side or blend (by --mix), each frame at its own stamp (microseconds from the first).
        """
    )

    @OptionGroup var input: SourceOptions
    @Option(help: "Output folder (created; refused when it exists and is not empty, unless --overwrite), or FILE.mcap: ROS 2 MCAP (docs/ROS2.md).")
    var out: String?
    @Option(help: "A colorized video, FILE.mp4 or FILE.mkv, instead of --out (docs/COMMANDS.md).")
    var video: String?
    @Flag(help: "Write into an existing, non-empty folder (or replace an existing .mcap or video file).")
    var overwrite = false
    @Option(help: "Frame range A:B (0-based playback frames, inclusive; either end may be left out). Recordings: each stream's frames nearest in time to those.")
    var frames: String?
    @Option(help: "Time range T0:T1 in seconds of the recording's clock (inclusive).")
    var time: String?
    @Option(help: "Every n-th selected frame (of each stream, for recordings).")
    var every: Int = 1
    @Flag(help: "Also write ply/TIMESTAMP.ply per depth frame (the depth camera's intrinsics; colors from the color camera).")
    var ply = false
    @Option(help: "What to write: color, depth, ir (comma-separated; default color,depth). With --video: depth (default), color, side-by-side or blend.")
    var what: String?
    @Option(help: "color: write depth aligned to the color camera, at the color size (calibration.json says so); none (default): raw depth.")
    var align = "none"

    @Flag(help: "With --out FILE.mcap: color as JPEG CompressedImage (lossy) instead of rgb8 Image.")
    var colorJPEG = false
    @Option(help: "Threads that decode, align, encode and write (default: the cores); 1 does it all in order on one.")
    var jobs: Int?

    @Option(help: "With --video: jet, turbo, viridis or grayscale.")
    var colormap = "jet"
    @Option(help: "With --video: the colormap's depth range, 'equalized' (histogram-equalized, the view's default) or MIN:MAX meters.")
    var range = "equalized"
    @Option(help: "With --video --what blend: 0 = color, 1 = colored depth.")
    var mix: Float = 0.5
    @Flag(help: "With --video FILE.mkv: FFV1 (bit-exact RGB) instead of H.264.")
    var lossless = false
    @Option(help: "With --video: libx264's constant rate factor, 0 (best) … 51.")
    var crf = 23

    func run() throws {
        if let video {
            guard out == nil else {
                throw DepthKitError.invalidArgument("--video \(video) and --out \(out ?? ""): give one (convert writes one output a run)")
            }
            return try runVideo(video)
        }
        guard let out else { throw DepthKitError.invalidArgument("--out FOLDER, --out FILE.mcap or --video FILE.mp4|.mkv is required") }
        let videoOnly = [("--colormap", colormap != "jet"), ("--range", range != "equalized"), ("--mix", mix != 0.5),
                         ("--lossless", lossless), ("--crf", crf != 23)].filter(\.1).map(\.0)
        guard videoOnly.isEmpty else {
            throw DepthKitError.invalidArgument("\(videoOnly.joined(separator: ", ")) \(videoOnly.count == 1 ? "applies" : "apply") to --video only")
        }
        let what = self.what ?? "color,depth"
        if out.lowercased().hasSuffix(".mcap") { return try runMCAP(out: out, what: what) }
        if let jobs, !(1...256).contains(jobs) { throw DepthKitError.invalidArgument("--jobs must be 1…256, got \(jobs)") }
        let selection = try exportSelection()
        let contents = try ExportContents(parsing: what)
        let src = try input.makeSource(try input.spec(or: nil))
        (src as? RecordingDamage)?.checksWholeRecording = true
        StopSignals.install()
        // Every option checked before the folder is made.
        let calibrationOverride = try input.calibrationOverride()
        let mode = try AlignMode.named(align)
        guard mode != .auto else { throw DepthKitError.invalidArgument("convert --align is color or none") }
        let existed = FileManager.default.fileExists(atPath: out)
        try DatasetExporter.prepare(directory: out, overwrite: overwrite)
        let exporter = DatasetExporter(source: src, directory: out)
        exporter.selection = selection
        exporter.contents = contents
        exporter.writePLY = ply
        if let jobs {
            exporter.workers = jobs
            exporter.framesInFlight = max(2, jobs) + 2
        }
        exporter.calibrationOverride = calibrationOverride
        exporter.alignment = DepthAlignmentStage(mode: mode)
        var bar = ProgressBar(total: 0, label: "convert")
        let summary: ExportSummary
        do {
            summary = try exporter.run(progress: { p in
                bar.show(p)
            })
        } catch {
            // A source that cannot be opened or read leaves no output behind: the folder this
            // run made goes again while it holds no file.
            if !existed { DatasetExporter.removeIfNothingWritten(out) }
            throw error
        }
        bar.finish()
        for w in summary.warnings { warn("\(src.name): \(w)") }
        if src.metadata.tags["depth_accuracy"] == DepthData.Accuracy.relative.rawValue {
            warn("\(src.name): the depth is relative (not metric): the depth images' millimeters are not real distances")
        }
        let plys = (ply ? ", \(summary.plyWritten) PLY files" : "") + (summary.imuRows.map { ", imu.csv (\($0) IMU rows)" } ?? "")
        if let s = summary.stoppedBy {
            warn("stopped by \(StopSignals.name(s)) after \(summary.framesWritten) frames; \(out) lists every frame written")
            throw ExitCode(128 + s)
        }
        if summary.byStream {
            let kinds = [StreamKind.color, .depth, .ir].compactMap { k in summary.imagesWritten[k].map { "\($0) \(k.rawValue)" } }
            print("wrote \(kinds.isEmpty ? "no" : kinds.joined(separator: ", ")) frames\(plys) to \(out)")
        } else {
            print("wrote \(summary.framesWritten) frames\(plys) to \(out)")
        }
        // Frames that could not be read, and the parts of a damaged recording that could not
        // (said above among the warnings), are bad input: the rest is written, and the exit status is 1.
        if summary.skippedFrames > 0 || !((src as? RecordingDamage)?.damage.isEmpty ?? true) { throw ExitCode(1) }
    }
}

extension ProgressBar {
    /// An export's progress: frames, frames per second, time left.
    mutating func show(_ p: ExportProgress) {
        total = p.total ?? 0
        detail = String(format: ", %.1f fps", p.framesPerSecond) + (p.secondsLeft.map { String(format: ", %.0f s left", $0) } ?? "")
        update(to: p.written)
    }
}

extension ConvertCommand {
    /// Which frames `--every`, `--frames` and `--time` keep (folders, MCAP and video alike).
    func exportSelection() throws -> ExportSelection {
        guard every >= 1 else { throw DepthKitError.invalidArgument("--every must be at least 1, got \(every)") }
        var selection = ExportSelection(every: every)
        if let frames { selection.frames = try ExportSelection.parseRange(frames, name: "--frames", lowest: 0, highest: Int.max) }
        if let time {
            let r: ClosedRange<Double> = try ExportSelection.parseRange(time, name: "--time", lowest: -Double.greatestFiniteMagnitude,
                                                                        highest: Double.greatestFiniteMagnitude)
            guard r.lowerBound.isFinite, r.upperBound.isFinite else { throw DepthKitError.invalidArgument("--time must be finite seconds") }
            selection.time = r
        }
        return selection
    }
}
