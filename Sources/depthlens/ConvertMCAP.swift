import ArgumentParser
import Capture
import DepthKit
import Foundation

extension ConvertCommand {
    /// `convert --out FILE.mcap`: the recording as ROS 2 MCAP (`MCAPExporter`). Written whole or not
    /// at all: an error or a stop signal leaves no file.
    func runMCAP(out: String, what: String) throws {
        guard !ply else { throw DepthKitError.invalidArgument("--ply writes into a folder; it does not apply to --out FILE.mcap") }
        guard align == "none" else { throw DepthKitError.invalidArgument("--align does not apply to --out FILE.mcap (depth is written as recorded)") }
        guard jobs == nil else { throw DepthKitError.invalidArgument("--jobs applies to a folder; --out FILE.mcap is written by one thread") }
        let selection = try exportSelection()
        let contents = try ExportContents(parsing: what)
        try MCAPExporter.prepare(path: out, overwrite: overwrite)
        let src = try input.makeSource(try input.spec(or: nil))
        (src as? RecordingDamage)?.checksWholeRecording = true
        StopSignals.install()
        let exporter = MCAPExporter(source: src, path: out)
        exporter.selection = selection
        exporter.contents = contents
        exporter.colorJPEG = colorJPEG
        exporter.calibrationOverride = try input.calibrationOverride()
        var bar = ProgressBar(total: 0, label: "convert")
        let summary = try exporter.run(progress: { bar.show($0) })
        bar.finish()
        for w in summary.warnings { warn("\(src.name): \(w)") }
        if let s = summary.stoppedBy {
            warn("stopped by \(StopSignals.name(s)); nothing written (an MCAP file is written whole or not at all)")
            throw ExitCode(128 + s)
        }
        let depth = summary.depthMillimeters ? "16UC1 mm" : "32FC1 m"
        let clock = summary.perStream ? "each stream on its own clock" : "frames as playback pairs them"
        print("wrote \(summary.colorFrames) color and \(summary.depthFrames) depth (\(depth)) frames, \(summary.messages) messages, to \(out) (\(clock))")
        // A damaged recording's readable frames are written; what was missing is said above: exit 1.
        if !((src as? RecordingDamage)?.damage.isEmpty ?? true) { throw ExitCode(1) }
    }
}
