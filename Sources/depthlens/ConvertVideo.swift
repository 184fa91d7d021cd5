import ArgumentParser
import Capture
import DepthKit
import Foundation

extension ConvertCommand {
    /// `convert --video FILE.mp4|FILE.mkv`: the recording as an ordinary video (`VideoExporter`),
    /// colored as the view colors it. An error leaves no file; a stop signal finishes the video with
    /// the frames written.
    func runVideo(_ path: String) throws {
        guard !ply else { throw DepthKitError.invalidArgument("--ply writes into a folder; it does not apply to --video") }
        guard align == "none" else {
            throw DepthKitError.invalidArgument("--align does not apply to --video (side-by-side and blend align depth to color as the view does)")
        }
        guard !colorJPEG else { throw DepthKitError.invalidArgument("--color-jpeg applies to --out FILE.mcap only") }
        guard let map = Colormap(rawValue: colormap.lowercased()) else {
            throw DepthKitError.invalidArgument("--colormap must be one of \(Colormap.allCases.map(\.rawValue).joined(separator: ", ")), got '\(colormap)'")
        }
        guard mix.isFinite, (0...1).contains(mix) else { throw DepthKitError.invalidArgument("--mix must be within 0…1, got \(mix)") }
        guard (0...51).contains(crf) else { throw DepthKitError.invalidArgument("--crf must be within 0…51, got \(crf)") }
        let content = try VideoContent.named(what ?? VideoContent.depth.rawValue)
        let look = VideoLook(colormap: map, range: try VideoLook.parseRange(range), mix: mix)
        let selection = try exportSelection()
        try VideoExporter.prepare(path: path, overwrite: overwrite, lossless: lossless)
        let src = try input.makeSource(try input.spec(or: nil))
        // A damaged recording: every chunk checked first, its missing parts said, exit 1 (as the
        // folder and MCAP outputs do, docs/ROS2.md).
        (src as? RecordingDamage)?.checksWholeRecording = true
        StopSignals.install()
        let exporter = VideoExporter(source: src, path: path)
        exporter.selection = selection
        exporter.content = content
        exporter.look = look
        exporter.lossless = lossless
        exporter.crf = crf
        exporter.calibrationOverride = try input.calibrationOverride()
        var bar = ProgressBar(total: 0, label: "convert")
        let summary = try exporter.run(progress: { bar.show($0) })
        bar.finish()
        for w in summary.warnings { warn("\(src.name): \(w)") }
        let what = "\(summary.framesWritten) frames (\(content.rawValue), \(summary.width)x\(summary.height) \(summary.codec), "
            + String(format: "%.3f s", summary.seconds)
            + (summary.perStream ? ", the stream's own stamps)" : ", playback's frames)")
        if let s = summary.stoppedBy {
            warn("stopped by \(StopSignals.name(s)) after " + (summary.written ? "\(what); \(path) holds them" : "no frame; nothing written"))
            throw ExitCode(128 + s)
        }
        print("wrote \(what) to \(path)")
        if !((src as? RecordingDamage)?.damage.isEmpty ?? true) { throw ExitCode(1) }
    }
}
