import ArgumentParser
import Capture
import DepthKit
import Foundation

struct RecordCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "record",
        abstract: "Record frames of a source into a TUM RGB-D folder (headless).",
        discussion: "The folder gets rgb/, depth/ (16-bit PNG, 5000 units per meter), rgb.txt, depth.txt and associations.txt."
    )

    @Option(help: "synthetic | tum:DIR | pair:COLOR,DEPTH | v4l2:/dev/videoN[,depth=/dev/videoM]")
    var source: String = "synthetic"
    @Option(help: "Units per meter of the source's 16-bit depth.")
    var depthScale: Float?
    @Option(help: "How many frames to record.")
    var frames: Int
    @Option(help: "Output folder (created; must not exist or be empty).")
    var out: String
    @Option(help: "Give up when a live source delivers no frame for this many seconds.")
    var timeout: Double = 10

    func run() throws {
        guard frames > 0 else { throw DepthKitError.invalidArgument("--frames must be at least 1, got \(frames)") }
        guard timeout > 0, timeout.isFinite else { throw DepthKitError.invalidArgument("--timeout must be a positive number of seconds") }
        if depthScale != nil { _ = try DepthIO.validatedScale(depthScale) }
        if let existing = try? FileManager.default.contentsOfDirectory(atPath: out), !existing.isEmpty {
            throw DepthKitError.file(path: out, problem: "output folder exists and is not empty")
        }
        let src = try makeFrameSource(source, depthScale: depthScale)
        var progress = ProgressBar(total: frames, label: "record")
        let summary = try TUMRecorder.record(source: src, frames: frames, to: out, timeout: timeout) { _ in progress.advance() }
        progress.finish()
        for w in summary.warnings { warn(w) }
        print("wrote \(summary.framesWritten) frames to \(out)" +
              (summary.framesWithoutDepth > 0 ? " (\(summary.framesWithoutDepth) without depth)" : ""))
    }
}
