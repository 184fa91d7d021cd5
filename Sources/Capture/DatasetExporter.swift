import DepthKit
import Foundation

/// Which frames of a recording to export: a frame range, a time range, every n-th.
public struct ExportSelection: Sendable, Equatable {
    /// Frame indices, inclusive (`--frames A:B`); nil for all.
    public var frames: ClosedRange<Int>?
    /// Seconds on the recording's own clock, inclusive (`--time T0:T1`); nil for all.
    public var time: ClosedRange<Double>?
    /// Every n-th selected frame (`--every N`), counted from the first selected.
    public var every: Int

    public init(frames: ClosedRange<Int>? = nil, time: ClosedRange<Double>? = nil, every: Int = 1) {
        self.frames = frames; self.time = time; self.every = every
    }

    /// Parses "A:B" (either end may be left out: "10:", ":20").
    public static func parseRange<T: LosslessStringConvertible & Comparable>(_ text: String, name: String, lowest: T,
                                                                          highest: T) throws -> ClosedRange<T> {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2 else { throw CaptureError.invalidSource("\(name) must be A:B, got '\(text)'") }
        let a = parts[0].isEmpty ? lowest : T(String(parts[0]))
        let b = parts[1].isEmpty ? highest : T(String(parts[1]))
        guard let a, let b, a <= b else { throw CaptureError.invalidSource("\(name) must be A:B with A ≤ B, got '\(text)'") }
        return a...b
    }
}

/// What to write of each frame.
public struct ExportContents: OptionSet, Sendable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    public static let color = ExportContents(rawValue: 1)
    public static let depth = ExportContents(rawValue: 2)
    /// Infrared: written when the source delivers it (no source in this build does yet).
    public static let ir = ExportContents(rawValue: 4)

    /// Parses "color,depth,ir".
    public init(parsing text: String) throws {
        var c: ExportContents = []
        for part in text.split(separator: ",") {
            switch part.trimmingCharacters(in: .whitespaces).lowercased() {
            case "color", "rgb": c.insert(.color)
            case "depth": c.insert(.depth)
            case "ir", "infrared": c.insert(.ir)
            default: throw CaptureError.invalidSource("--what takes color, depth and ir, got '\(part)'")
            }
        }
        guard !c.isEmpty else { throw CaptureError.invalidSource("--what names nothing to write") }
        self = c
    }
}

/// How far an export is, for progress bars (CLI and panel).
public struct ExportProgress: Sendable {
    public var written: Int
    /// Frames the selection holds, when the source's length is known.
    public var total: Int?
    public var seconds: Double
    public var framesPerSecond: Double { seconds > 0 ? Double(written) / seconds : 0 }
    /// Seconds left at the rate so far; nil when unknown.
    public var secondsLeft: Double? {
        guard let total, written > 0, seconds > 0 else { return nil }
        return Double(max(0, total - written)) / framesPerSecond
    }
}

/// What an export wrote.
public struct ExportSummary: Sendable {
    public var directory: String
    public var framesWritten: Int
    public var plyWritten: Int
    /// Set when a stop signal ended the export early (everything written is complete and listed).
    public var stoppedBy: Int32?
    public var warnings: [String]
}

/// Writes a recording as a TUM-layout folder — `rgb/T.png`, `depth/T.png` (16-bit, the
/// recording's own units), `rgb.txt`, `depth.txt`, `associations.txt` (the pairing the viewer
/// uses), `calibration.json` (the `info --json` calibration) and, with `ply`, `ply/T.ply` per depth
/// frame with the real intrinsics and colors — that `tum:DIR` reopens with the same frames; a
/// source with poses also gets `groundtruth.txt` (TUM's trajectory format), which `tum:` reads back.
///
/// Every file is written atomically and listed once complete; on an error, a stop signal or a
/// cancel, the index files are finished with what was written before the export returns or throws.
public final class DatasetExporter {
    public let source: FrameSource
    public let directory: String
    public var selection = ExportSelection()
    public var contents: ExportContents = [.color, .depth]
    public var writePLY = false
    /// `--calibration` / `--intrinsics`, over what the source recorded.
    public var calibrationOverride = CalibrationOverride()
    /// Depth aligned to color before writing (`--align color`): depth at the color size, and
    /// calibration.json says depth is seen by the color camera.
    public var alignment = DepthAlignmentStage(mode: .none)
    /// Frames the folder's index files list once `run` returned or threw (on a full disk, fewer
    /// than were written: the newest unlisted ones are deleted so the index fits).
    public private(set) var framesListed = 0

    public init(source: FrameSource, directory: String) {
        self.source = source
        self.directory = directory
    }

    /// Refuses a folder that exists and is not empty unless `overwrite`; creates it.
    public static func prepare(directory: String, overwrite: Bool) throws {
        let fm = FileManager.default
        var isDir: ObjCBool = false
        if fm.fileExists(atPath: directory, isDirectory: &isDir) {
            guard isDir.boolValue else { throw CaptureError.file(path: directory, problem: "exists and is not a folder") }
            let entries = (try? fm.contentsOfDirectory(atPath: directory)) ?? []
            if !entries.isEmpty && !overwrite {
                throw CaptureError.file(path: directory, problem: "exists and is not empty (--overwrite to write into it)")
            }
        }
        do { try fm.createDirectory(atPath: directory, withIntermediateDirectories: true) } catch {
            throw CaptureError.file(path: directory, problem: "cannot create folder: \(describe(error))")
        }
        guard fm.isWritableFile(atPath: directory) else { throw CaptureError.file(path: directory, problem: "not writable") }
    }

    /// Runs the export. `shouldStop` is polled before each frame (a stop signal, a cancel button):
    /// it returns the signal number to report, 0 for a plain cancel, nil to go on.
    public func run(shouldStop: () -> Int32? = { StopSignals.pending },
                    progress: (ExportProgress) -> Void = { _ in }) throws -> ExportSummary {
        let reader = try FrameReader(source: source, first: selection.frames?.lowerBound ?? 0)
        let units = source.depthUnitsPerMeter ?? DepthIO.defaultDepthScale
        let writer: TUMWriter
        do { writer = try TUMWriter(directory: directory, depthScale: units) } catch { throw CaptureError.wrapping(error, path: directory) }
        var summary = ExportSummary(directory: directory, framesWritten: 0, plyWritten: 0, stoppedBy: nil, warnings: [])
        let start = monotonicSeconds()
        let total = selectedCount(frameCount: source.playback?.frameCount)
        var wroteCalibration = false
        var selectedSoFar = 0
        var failure: Error?
        // groundtruth.txt lines of the frames written, in order (nil: that frame has no pose).
        let poses = source.poses
        var poseLines: [String?] = []
        do {
            while true {
                if let s = shouldStop() { summary.stoppedBy = s; break }
                guard let raw = try reader.next() else { break }
                if let r = selection.frames, raw.index > r.upperBound { break }
                if let t = selection.time {
                    if raw.timestamp < t.lowerBound { continue }
                    if raw.timestamp > t.upperBound { break }
                }
                selectedSoFar += 1
                if (selectedSoFar - 1) % max(1, selection.every) != 0 { continue }
                var frame = raw
                var calibration = try calibrationOverride.resolve(for: source, frame: raw)
                calibrationOverride.apply(calibration, to: &frame)
                (frame, calibration) = try alignment.apply(frame, calibration: calibration)
                if !wroteCalibration {
                    try writeCalibration(calibration)
                    wroteCalibration = true
                }
                let color = contents.contains(.color) ? frame.color : nil
                let depth = contents.contains(.depth) ? frame.depth : nil
                let name = try wrapped { try writer.append(color: color, depth: depth, timestamp: frame.timestamp) }
                summary.framesWritten += 1
                if let poses {
                    poseLines.append(poses.pose(of: raw).map { PoseTrack.tumLine(timestamp: frame.timestamp, pose: $0) })
                }
                if writePLY, let d = frame.depth {
                    let rgb = ImageIO.toEightBit(frame.color)
                    let cloud = calibration.needsAlignment
                        ? PointCloud.unproject(depth: d, color: rgb, calibration: calibration)
                        : PointCloud.unproject(depth: d, color: rgb)
                    try wrapped {
                        try FileManager.default.createDirectory(atPath: directory + "/ply", withIntermediateDirectories: true)
                        try PLYWriter.write(cloud, to: directory + "/ply/\(name).ply")
                    }
                    summary.plyWritten += 1
                }
                progress(ExportProgress(written: summary.framesWritten, total: total, seconds: monotonicSeconds() - start))
            }
        } catch {
            failure = error
        }
        // Whatever happened, the folder lists exactly the complete frames.
        do { try writer.finish() } catch { if failure == nil { failure = CaptureError.wrapping(error, path: directory) } }
        framesListed = writer.listedCount
        if poses != nil {
            do { try writeGroundTruth(poseLines.prefix(framesListed).compactMap { $0 }) } catch { if failure == nil { failure = error } }
        }
        summary.warnings = source.warnings
        if let failure { throw failure }
        return summary
    }

    /// Frames the selection holds of a recording of `frameCount` frames (nil when unknown or
    /// selected by time).
    func selectedCount(frameCount: Int?) -> Int? {
        guard let n = frameCount, selection.time == nil else { return nil }
        let lo = max(0, selection.frames?.lowerBound ?? 0), hi = min(n - 1, selection.frames?.upperBound ?? n - 1)
        guard hi >= lo else { return 0 }
        return (hi - lo) / max(1, selection.every) + 1
    }

    /// `groundtruth.txt` (TUM: `timestamp tx ty tz qx qy qz qw`, the optical frame in the world)
    /// for the frames listed that have a pose.
    private func writeGroundTruth(_ lines: [String]) throws {
        let text = PoseTrack.tumHeader + lines.map { $0 + "\n" }.joined()
        try wrapped { try FileSupport.atomicWrite(Array(text.utf8), to: directory + "/groundtruth.txt") }
    }

    private func writeCalibration(_ c: RGBDCalibration) throws {
        try wrapped { try FileSupport.atomicWrite(try c.encodedJSON() + Array("\n".utf8), to: directory + "/calibration.json") }
    }

    private func wrapped<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch { throw CaptureError.wrapping(error, path: directory) }
    }
}

private func describe(_ error: Error) -> String {
    (error as NSError).localizedDescription
}
