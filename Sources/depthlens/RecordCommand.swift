import ArgumentParser
import Capture
import DepthKit
import Foundation

struct RecordCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "record",
        abstract: "Record frames of a source into a TUM RGB-D folder, an H.264 MP4 video and/or an RGB-D Matroska file (headless).",
        discussion: "The folder is written as convert writes it: rgb/, depth/ (16-bit PNG in the source's own depth units), rgb.txt, "
            + "depth.txt, associations.txt and calibration.json, each image under its own stamp (a camera's depth under the depth's); "
            + "of a recording, --frames N (and --mcap) gives what convert --frames 0:N-1 gives. "
            + "--video writes the filtered view (--filter, run on the CPU; the color image without one) through libavcodec "
            + "at the source's frame rate; odd sizes are padded by one black column or row to the even size H.264 needs. "
            + "--mkv writes the RGB-D frames themselves into one Matroska file, in-process through libavformat: a COLOR track "
            + "(H.264, or FFV1 with --lossless: bit-exact), a DEPTH track in 16-bit FFV1 (lossless, the source's depth units), "
            + "each frame's timestamp to the microsecond and the calibration as a calibration.json attachment; mkv:FILE plays it."
    )

    /// Without `--source`: the synthetic scene.
    @OptionGroup var input: SourceOptions
    @Option(help: "How many frames to record.")
    var frames: Int
    @Option(help: "Output folder (created; must not exist or be empty).")
    var out: String?
    @Option(help: "Also (or only) write the view as H.264 video into this .mp4 file .")
    var video: String?
    @Option(help: "Also (or only) write the RGB-D frames into this Matroska .mkv file (COLOR H.264 or FFV1, DEPTH 16-bit FFV1).")
    var mkv: String?
    @Option(help: "Also (or only) write the frames as ROS 2 MCAP into this .mcap file (sensor_msgs Image, CameraInfo, /tf_static; docs/ROS2.md).")
    var mcap: String?
    @Flag(help: "With --mkv: store color losslessly (FFV1) instead of H.264.")
    var lossless = false
    @Option(help: "With --mkv: H.264 quality (libx264 crf, 0-51, lower is better).")
    var crf: Int = 23
    @Option(help: "Filter for the video: \(ProcessFilter.allCases.map(\.rawValue).joined(separator: ", ")).")
    var filter: String?
    @Option(help: "Frames the video encoder (--video) or the Matroska encoder (--mkv) may fall behind a live camera before frames are dropped (and counted); file sources wait.")
    var videoQueue: Int = 16
    @Option(help: "Give up when a live source delivers no frame for this many seconds.")
    var timeout: Double = 10
    @OptionGroup var smoothing: SmoothingOptions
    @OptionGroup var cameraControls: CameraControlOptions

    func run() throws {
        guard frames > 0 else { throw DepthKitError.invalidArgument("--frames must be at least 1, got \(frames)") }
        guard timeout > 0, timeout.isFinite else { throw DepthKitError.invalidArgument("--timeout must be a positive number of seconds") }
        guard out != nil || video != nil || mkv != nil || mcap != nil else {
            throw DepthKitError.invalidArgument("record needs --out FOLDER, --video FILE.mp4, --mkv FILE.mkv and/or --mcap FILE.mcap")
        }
        if let mcap { try MCAPExporter.prepare(path: mcap, overwrite: false) }
        if mkv == nil && lossless { throw DepthKitError.invalidArgument("--lossless applies to --mkv; give --mkv FILE.mkv") }
        guard (0...51).contains(crf) else { throw DepthKitError.invalidArgument("--crf must be 0…51, got \(crf)") }
        if let mkv {
            guard mkv.lowercased().hasSuffix(".mkv") else { throw DepthKitError.file(path: mkv, problem: "--mkv must name an .mkv file") }
            guard !FileManager.default.fileExists(atPath: mkv) else { throw DepthKitError.file(path: mkv, problem: "exists; remove it or choose another name") }
            let folder = (mkv as NSString).deletingLastPathComponent
            var isDir: ObjCBool = false
            if !folder.isEmpty, !(FileManager.default.fileExists(atPath: folder, isDirectory: &isDir) && isDir.boolValue) {
                throw DepthKitError.file(path: mkv, problem: "folder \(folder) does not exist")
            }
        }
        guard videoQueue >= 1 else { throw DepthKitError.invalidArgument("--video-queue must be at least 1, got \(videoQueue)") }
        try input.check()
        // --calibration / --intrinsics: written with the frames (calibration.json, the mkv's, the MCAP's camera_info).
        let camera = try input.calibrationOverride()
        let filter = try self.filter.map { try ProcessFilter.named($0) }
        if filter != nil && video == nil { throw DepthKitError.invalidArgument("--filter applies to --video; give --video FILE.mp4") }
        if let out, let existing = try? FileManager.default.contentsOfDirectory(atPath: out), !existing.isEmpty {
            throw DepthKitError.file(path: out, problem: "output folder exists and is not empty")
        }
        if let video {
            guard video.lowercased().hasSuffix(".mp4") else { throw DepthKitError.file(path: video, problem: "--video must name an .mp4 file") }
            guard !FileManager.default.fileExists(atPath: video) else { throw DepthKitError.file(path: video, problem: "exists; remove it or choose another name") }
            let folder = (video as NSString).deletingLastPathComponent
            var isDir: ObjCBool = false
            if !folder.isEmpty, !(FileManager.default.fileExists(atPath: folder, isDirectory: &isDir) && isDir.boolValue) {
                throw DepthKitError.file(path: video, problem: "folder \(folder) does not exist")
            }
        }
        let smoothSettings = try smoothing.settings()
        let stage = smoothSettings.enabled ? DepthSmoothingStage(smoother: DepthSmoother(settings: smoothSettings)) : nil
        let spec = try input.spec(or: .synthetic)
        let src = try input.makeSource(spec, cameraControls: try cameraControls.options(source: spec))
        // A camera's control notices (refused values) are printed as they happen.
        if src.cameraControls != nil { src.onWarning = { warn($0) } }
        var progress = ProgressBar(total: frames, label: "record")
        var writer: VideoWriter?
        var withoutFilter = 0
        var mkvRecorder: MKVRecorder?
        let mkvOptions = MKVRecorder.Options(lossless: lossless, crf: crf, queueLimit: videoQueue)
        let recordMKV: ((FrameSet) throws -> Void)? = mkv.map { path in
            { f in
                if mkvRecorder == nil {
                    let cal = camera.isEmpty ? nil : try camera.resolve(for: src, frame: f)
                    mkvRecorder = try MKVRecorder(path: path, firstFrame: f, source: src, calibration: cal, options: mkvOptions)
                }
                // A camera is real time (a full queue drops and counts); a file source waits for the encoder.
                try mkvRecorder!.append(f, waitForRoom: !src.isLive)
            }
        }
        let recordVideo: ((FrameSet) throws -> Void)? = video.map { path in
            { f in
                var view = f.color
                if let filter {
                    if filter.needsDepth && f.depth == nil { withoutFilter += 1 } else {
                        view = try runFilter(filter, frame: LoadedFrame(color: f.color, depth: f.depth, colorPath: src.name, depthPath: nil, unitsPerMeter: src.depthUnitsPerMeter ?? DepthIO.defaultDepthScale),
                                             parameters: ProcessParameters(), factory: GPUBackend.cpu)
                    }
                }
                if writer == nil {
                    writer = try VideoWriter(path: path, width: view.width, height: view.height,
                                             fps: nominalFrameRate(of: src), queueLimit: videoQueue)
                }
                // A camera is real time (a full queue drops and counts); a file source waits for the encoder.
                try writer!.append(view, waitForRoom: !src.isLive)
            }
        }
        var mcapWriter: MCAPFrameWriter?
        var lastMCAP: (color: PixelBuffer?, depth: PixelBuffer?)
        // A recording whose streams have their own clocks: --mcap is what `convert --out FILE.mcap
        // --frames 0:N-1` writes (each image once under its own stamp), in a pass of its own after
        // the others; frame by frame (a camera, --smooth) each frame's images as they come.
        let mcapByStream = mcap != nil && stage == nil && !src.isLive && src.recordedStreams != nil
        let recordMCAP: ((FrameSet) throws -> Void)? = mcapByStream ? nil : mcap.map { path in
            { f in
                if mcapWriter == nil {
                    let cal = try camera.resolve(for: src, frame: f)
                    mcapWriter = try MCAPFrameWriter(path: path, calibration: cal, color: true, depth: f.depth != nil,
                                                     depthMillimeters: src.depthUnitsPerMeter == 1000)
                }
                // A recording's frame may repeat the other stream's last image: written once.
                // Each image under its own stamp (the depth's own where the source knows it), as `convert` writes them.
                if let d = f.depth?.map, d !== lastMCAP.depth { try mcapWriter!.addDepth(d, stamp: f.depthTimestamp ?? f.timestamp); lastMCAP.depth = d }
                if f.color !== lastMCAP.color { try mcapWriter!.addColor(f.color, stamp: f.timestamp); lastMCAP.color = f.color }
            }
        }
        let outputs = [recordMKV, recordVideo, recordMCAP].compactMap { $0 }
        let each: ((FrameSet) throws -> Void)? = outputs.isEmpty ? nil : { f in for o in outputs { try o(f) } }
        var summary: RecordingSummary
        StopSignals.install()
        do {
            if out == nil && each == nil {
                summary = RecordingSummary()
            } else {
                summary = try TUMRecorder.record(source: src, frames: frames, to: out, timeout: timeout, smoothing: stage, each: each,
                                                 calibration: camera) { n in progress.update(to: n) }
            }
        } catch {
            // Keep what was recorded: the video is finished (a playable file of the frames so far).
            progress.interrupt()
            if let writer, let v = try? writer.finish() { warn("kept \(v)") }
            if let mkvRecorder, let mkv {
                do { warn("kept \(try mkvRecorder.finish())") } catch let finishing {
                    // One line: the recording's own failure says where what was written is.
                    if "\(error)".contains(mkv) { throw finishing }
                }
            }
            if let mcapWriter, (try? mcapWriter.finish()) != nil { warn("kept \(mcapWriter.path): \(mcapWriter.colorFrames) color and \(mcapWriter.depthFrames) depth frames") }
            throw error
        }
        progress.finish()
        for w in summary.warnings { warn(w) }
        if let out {
            if let images = summary.imagesWritten {
                // Stream by stream, as `convert` says it.
                let kinds = [StreamKind.color, .depth, .ir].compactMap { k in images[k].map { "\($0) \(k.rawValue)" } }
                print("wrote \(kinds.isEmpty ? "no" : kinds.joined(separator: ", ")) frames to \(out)")
            } else {
                print("wrote \(summary.framesWritten) frames to \(out)" +
                      (summary.framesWithoutDepth > 0 ? " (\(summary.framesWithoutDepth) without depth)" : ""))
            }
        }
        if let writer {
            let v = try writer.finish()
            if withoutFilter > 0 { warn("\(withoutFilter) frames had no depth for --filter \(filter!.rawValue); recorded unfiltered") }
            if v.framesDropped > 0 { warn("\(v.framesDropped) video frames dropped: the encoder could not keep up (raise --video-queue)") }
            print("wrote video: \(v)")
        }
        if let mkvRecorder {
            let m = try mkvRecorder.finish()
            if let problem = m.problem { warn("the Matroska recording stopped early: \(problem)") }
            if m.framesDropped > 0 { warn("\(m.framesDropped) frames dropped: the Matroska encoder could not keep up (raise --video-queue)") }
            print("wrote mkv: \(m)")
        }
        if let mcapWriter {
            try mcapWriter.finish()
            print("wrote mcap: \(mcapWriter.path), \(mcapWriter.colorFrames) color and \(mcapWriter.depthFrames) depth frames, \(mcapWriter.messages) messages")
        }
        if mcapByStream, let mcap, summary.stoppedBy == nil {
            let exporter = MCAPExporter(source: src, path: mcap)
            exporter.calibrationOverride = camera
            exporter.selection.frames = 0...(frames - 1)
            exporter.keepOnStop = true
            let m = try exporter.run()
            summary.stoppedBy = m.stoppedBy
            print("wrote mcap: \(mcap), \(m.colorFrames) color and \(m.depthFrames) depth frames, \(m.messages) messages")
        }
        if let s = summary.stoppedBy {
            warn("stopped by \(StopSignals.name(s)) after \(summary.framesWritten) frames; everything recorded was kept")
            throw ExitCode(128 + s)
        }
        // Frames of a recording that could not be read are bad input (each said above); the rest is written.
        if summary.skippedFrames > 0 { throw ExitCode(1) }
    }
}
