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

    /// What to do with a playback frame read in order.
    public enum Verdict { case take, skip, stop }

    /// The frame `index` at `timestamp`: past the frame or time range stop; before the time range,
    /// or between every n-th, skip; else take. `selected` counts the frames inside the ranges so far
    /// (start it at 0).
    public func verdict(index: Int, timestamp: Double, selected: inout Int) -> Verdict {
        if let r = frames, index > r.upperBound { return .stop }
        if let t = time {
            if timestamp < t.lowerBound { return .skip }
            if timestamp > t.upperBound { return .stop }
        }
        selected += 1
        return (selected - 1) % max(1, every) == 0 ? .take : .skip
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

    /// Of one stream's frames (`times`: its stamps, ascending), those this selection keeps when a
    /// recording is written stream by stream: with `frames` A:B those whose nearest playback frame
    /// (`playback`: each playback frame's stamp; needed only with `frames`) lies in A…B, with `time`
    /// those stamped within it, then every `every`-th of those.
    public func picked(_ times: [Double], playback: [Double]) -> [Int] {
        var picked = Array(times.indices)
        if let r = frames { picked = picked.filter { nearestIndex(in: playback, to: times[$0]).map(r.contains) ?? false } }
        if let t = time { picked = picked.filter { t.contains(times[$0]) } }
        let n = max(1, every)
        return picked.enumerated().filter { $0.offset % n == 0 }.map(\.element)
    }

    /// Playback frames this selection holds of a recording of `frameCount` frames (nil when unknown
    /// or selected by time).
    public func count(frameCount: Int?) -> Int? {
        guard let n = frameCount, time == nil else { return nil }
        let lo = max(0, frames?.lowerBound ?? 0), hi = min(n - 1, frames?.upperBound ?? n - 1)
        guard hi >= lo else { return 0 }
        return (hi - lo) / max(1, every) + 1
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
    /// Units listed: frames (a color/depth pair) from a source read as frames, single images from
    /// one read stream by stream (`RecordedStreams`).
    public var framesWritten: Int
    public var plyWritten: Int
    /// Images written per stream (color, depth, ir).
    public var imagesWritten: [StreamKind: Int] = [:]
    /// True when the streams were written each on its own clock (`RecordedStreams`).
    public var byStream = false
    /// Set when a stop signal ended the export early (everything written is complete and listed).
    public var stoppedBy: Int32?
    /// Frames that could not be read or decoded: skipped, each said in `warnings` (`convert` then exits 1).
    public var skippedFrames = 0
    public var warnings: [String]
    /// Rows of imu.csv, when the source has IMU samples (nil: no imu.csv).
    public var imuRows: Int?

    /// Frames exported, as a person counts them: the most frames any one stream got when written
    /// stream by stream (5 color and 5 depth images are 5 frames), else the pairs written.
    public var frameCount: Int { byStream ? (imagesWritten.values.max() ?? 0) : framesWritten }
}

/// Writes a recording as a TUM-layout folder — `rgb/T.png`, `depth/T.png` (16-bit, the
/// recording's own units), `ir/T.png`, `rgb.txt`, `depth.txt`, `ir.txt`, `associations.txt`,
/// `calibration.json` (the `info --json` calibration) and, with `ply`, `ply/T.ply` per depth frame
/// with the real intrinsics and colors — that `tum:DIR` reopens with the same frames; a source with
/// poses also gets `groundtruth.txt` (TUM's trajectory format: a line per frame written, at its
/// stamp), which `tum:` reads back. A source with IMU samples (`FrameSource.imu`) also gets
/// `imu.csv` (`IMUSamples.csv`: a row per gyroscope sample with the accelerometer interpolated at
/// its stamp, units in the header; with `selection.time` only the rows stamped within it, else
/// every sample); the samples are read before any frame, so an unreadable IMU stream fails the
/// export before it writes anything.
///
/// **Streams on their own clocks.** A source that offers `recordedStreams` (bag, mkv, tum, ros2) is
/// written stream by stream: every color frame once under its own stamp, every depth frame once
/// under its own (IR likewise, with `ir`); associations.txt pairs each depth frame with the written
/// color frame nearest in time. The selection applies to each stream: `time` keeps the frames
/// stamped within it, `frames` A:B the frames nearest in time to playback frames A…B (every frame
/// belongs to the playback frame it is nearest; so consecutive ranges split a recording without
/// overlap), `every` N every N-th of each stream's selected frames. Without a color stream the
/// IR stream is written as color (as the viewer shows it) unless `ir` is asked for too. Other
/// sources (synthetic, live, still) are written frame by frame as they deliver them, each image
/// under its own stamp (the depth under `FrameSet.depthTimestamp` where the frame carries one:
/// a DDS camera's depth), a pair in associations.txt. `record --out` writes through this type too.
///
/// **A pipeline.** The calling thread reads the source while `workers` threads decode, align,
/// encode and write the PNGs; at most `framesInFlight` frames are read and not yet listed, and
/// frames are listed in order. A recording whose frames decode on their own
/// (`RecordedStreams.payload`: MJPEG, raw and FFV1 mkv tracks, bag and ROS 2 messages, TUM files)
/// is read in order on the calling thread and decoded on the workers (except with `writePLY`, whose
/// colors the calling thread decodes); other frames (inter-coded video, sources read frame by
/// frame) are decoded on the calling thread. One worker writes byte for byte what several write.
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
    /// Threads that decode, encode and write (at least 1).
    public var workers = max(1, activeCores)
    /// Frames read and not yet listed, at most (memory: a 4K rgba8 frame is 33 MB decoded).
    public var framesInFlight = max(2, activeCores) + 2
    /// Seconds a live source may go without a frame before the export fails (frame by frame).
    public var timeout: Double = 10
    /// Frames taken at most, frame by frame (a live camera has no end); nil: all the selection holds.
    public var frameLimit: Int?
    /// Called, frame by frame, with each frame taken, before it is written: the frame it returns is
    /// written (`record`'s smoothing, its video and Matroska outputs). Not called stream by stream.
    public var eachFrame: ((FrameSet) throws -> FrameSet)?
    /// False: a recording with `recordedStreams` is written frame by frame too, as playback pairs
    /// it, each image under its own stamp where the frame carries it (`record --smooth`, whose
    /// smoothing runs across playback frames).
    public var streamByStream = true
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

    /// Removes `directory` (made by `prepare`) when it holds no file — only empty folders, as an
    /// export that failed before its first frame leaves it — so a refused source leaves nothing behind.
    public static func removeIfNothingWritten(_ directory: String) {
        let fm = FileManager.default
        guard let walk = fm.enumerator(atPath: directory) else { return }
        for case let name as String in walk {
            var isDir: ObjCBool = false
            guard fm.fileExists(atPath: directory + "/" + name, isDirectory: &isDir), isDir.boolValue else { return }
        }
        try? fm.removeItem(atPath: directory)
    }

    /// Runs the export. `shouldStop` is polled before each frame (a stop signal, a cancel button):
    /// it returns the signal number to report, 0 for a plain cancel, nil to go on.
    public func run(shouldStop: () -> Int32? = { StopSignals.pending },
                    progress: (ExportProgress) -> Void = { _ in }) throws -> ExportSummary {
        // Started first: a source knows its depth units once started.
        let recorded = streamByStream ? source.recordedStreams : nil
        let reader: FrameReader?
        if recorded != nil {
            try source.start()
            reader = nil
        } else {
            reader = try FrameReader(source: source, first: selection.frames?.lowerBound ?? 0, timeout: timeout)
        }
        defer { if recorded != nil { source.stop() } }
        let imu = try source.imu?.imuSamples()
        let units = source.depthUnitsPerMeter ?? DepthIO.defaultDepthScale
        let writer: TUMWriter
        do { writer = try TUMWriter(directory: directory, depthScale: units) } catch { throw CaptureError.wrapping(error, path: directory) }
        var summary = ExportSummary(directory: directory, framesWritten: 0, plyWritten: 0, stoppedBy: nil, warnings: [])
        let pipeline = ExportPipeline(workers: workers, mode: alignment.mode, depthScale: writer.depthScale, directory: directory)
        let listing = OrderedListing(writer: writer, pipeline: pipeline, capacity: framesInFlight)
        var failure: Error?
        do {
            if let streams = recorded {
                writer.pairsByNearestTime = true
                summary.byStream = true
                try runByStream(streams, listing: listing, summary: &summary, shouldStop: shouldStop, progress: progress)
            } else if let reader {
                try runByFrame(reader, listing: listing, summary: &summary, shouldStop: shouldStop, progress: progress)
            }
        } catch {
            failure = error
        }
        // Whatever happened, the folder lists exactly the complete frames.
        pipeline.close()
        do { try writer.finish() } catch { if failure == nil { failure = CaptureError.wrapping(error, path: directory) } }
        framesListed = writer.listedCount
        if source.poses != nil {
            // groundtruth.txt lines of the frames listed (a frame without a pose has none), each stamp once.
            var seen = Set<String>()
            let lines = listing.poseLines.prefix(framesListed).compactMap { $0 }.filter { seen.insert($0).inserted }
            do { try writeGroundTruth(lines) } catch { if failure == nil { failure = error } }
        }
        if let imu, !imu.isEmpty {
            let text = imu.csv(within: selection.time)
            do {
                try wrapped { try FileSupport.atomicWrite(Array(text.utf8), to: directory + "/imu.csv") }
                summary.imuRows = text.utf8.reduce(0) { $0 + ($1 == 10 ? 1 : 0) } - 1
            } catch {
                if failure == nil { failure = error }
            }
        }
        summary.warnings = source.warnings + summary.warnings
        if let failure { throw failure }
        return summary
    }

    // MARK: Frame by frame (sources without RecordedStreams)

    private func runByFrame(_ reader: FrameReader, listing: OrderedListing, summary: inout ExportSummary,
                            shouldStop: () -> Int32?, progress: (ExportProgress) -> Void) throws {
        let writer = listing.writer
        let start = monotonicSeconds()
        let total = selection.count(frameCount: source.playback?.frameCount)
        let poses = source.poses
        var wroteCalibration = false
        var selectedSoFar = 0, taken = 0
        // The images listed last: a frame repeating one (playback pairing one color frame with two
        // depth frames, a depth rate limit) writes it once and pairs the new one with it.
        var lastColor: TUMWriter.Written?, lastDepth: TUMWriter.Written?
        let onListed = { (n: Int) in progress(ExportProgress(written: n, total: total, seconds: monotonicSeconds() - start)) }
        defer { listing.drain(); count(listing, into: &summary) }
        while true {
            if let s = shouldStop() { summary.stoppedBy = s; break }
            if let n = frameLimit, taken >= n { break }
            guard let read = try reader.next() else { break }
            let verdict = selection.verdict(index: read.index, timestamp: read.timestamp, selected: &selectedSoFar)
            if verdict == .stop { break }
            if verdict == .skip { continue }
            taken += 1
            let raw = try eachFrame?(read) ?? read
            var frame = raw
            let calibration = try calibrationOverride.resolve(for: source, frame: raw)
            calibrationOverride.apply(calibration, to: &frame)
            if !wroteCalibration {
                try writeCalibration(alignment.calibration(calibration, colorWidth: frame.color.width, colorHeight: frame.color.height,
                                                           depthWidth: frame.depth?.map.width ?? frame.color.width,
                                                           depthHeight: frame.depth?.map.height ?? frame.color.height))
                wroteCalibration = true
            }
            var color = contents.contains(.color) ? frame.color : nil
            var depth = contents.contains(.depth) ? frame.depth : nil
            guard color != nil || depth != nil else { continue }
            // Each stream under its own stamp: the depth under the depth's (`depthTimestamp`, a
            // camera or recording whose streams have their own clocks), as stream by stream.
            let depthTime = frame.depthTimestamp ?? frame.timestamp
            var pairedWith: TUMWriter.Written?
            if color != nil, depth != nil, let c = lastColor, c.timestamp == frame.timestamp { color = nil; pairedWith = c }
            if color != nil, depth != nil, let d = lastDepth, d.timestamp == depthTime { depth = nil; pairedWith = d }
            if color == nil && depth == nil { continue }
            let names: (stem: String, color: String, depth: String)
            if color != nil && (depthTime == frame.timestamp || depth == nil) {
                names = writer.reservePair(timestamp: frame.timestamp)
            } else {
                let d = depth != nil ? try writer.reserve(.depth, timestamp: depthTime) : ""
                names = (String(d.dropFirst("depth/".count).dropLast(".png".count)),
                         color != nil ? try writer.reserve(.color, timestamp: frame.timestamp) : "", d)
            }
            var unit = ExportUnit(calibration: calibration, colorSize: (frame.color.width, frame.color.height),
                                  paired: (color != nil || pairedWith != nil) && (depth != nil || pairedWith != nil))
            unit.pairedWith = pairedWith
            if let color {
                unit.color = (color, TUMWriter.Written(stream: .color, timestamp: frame.timestamp, path: names.color))
                lastColor = unit.color?.1
            }
            if let depth {
                unit.depth = (depth, TUMWriter.Written(stream: .depth, timestamp: depthTime, path: names.depth))
                lastDepth = unit.depth?.1
            }
            if writePLY, frame.depth != nil, pairedWith?.stream != .depth {
                unit.ply = ("ply/\(names.stem).ply", ImageIO.toEightBit(frame.color), frame.depth)
            }
            unit.pose = poses?.pose(of: raw).map { PoseTrack.tumLine(timestamp: frame.timestamp, pose: $0) }
            try listing.submit(unit, onListed: onListed)
        }
        try listing.finish(onListed: onListed)
    }

    private func count(_ listing: OrderedListing, into summary: inout ExportSummary) {
        summary.framesWritten = listing.listed
        summary.plyWritten = listing.plyWritten
        summary.imagesWritten = listing.images
        summary.warnings += listing.skipped.map(\.warning)
        summary.skippedFrames += listing.skipped.count
    }

    // MARK: Stream by stream

    private func runByStream(_ rec: RecordedStreams, listing: OrderedListing, summary: inout ExportSummary,
                             shouldStop: () -> Int32?, progress: (ExportProgress) -> Void) throws {
        let writer = listing.writer
        let streams = try rec.streams()
        func first(_ kind: StreamKind) -> Int? { streams.firstIndex { $0.kind == kind } }
        let colorStream = first(.color) ?? (contents.contains(.ir) ? nil : first(.ir))
        let depthStream = first(.depth)
        let irStream = contents.contains(.ir) ? first(.ir) : nil
        var jobs: [(stream: Int, as: TUMWriter.Stream)] = []
        if contents.contains(.color), let c = colorStream { jobs.append((c, .color)) }
        if contents.contains(.depth), let d = depthStream { jobs.append((d, .depth)) }
        if let i = irStream { jobs.append((i, .ir)) }
        let plyStream = writePLY ? depthStream : nil

        // The selection, per stream.
        let poses = source.poses
        let playback = selection.frames == nil && poses == nil ? [] : try rec.playbackTimestamps()
        typealias Item = (time: Double, order: Int, stream: Int, as: TUMWriter.Stream, index: Int)
        var items: [Item] = []
        var wanted = jobs
        if let p = plyStream, !jobs.contains(where: { $0.stream == p }) { wanted.append((p, .depth)) }
        for (order, job) in wanted.enumerated() {
            let times = streams[job.stream].timestamps
            items += selection.picked(times, playback: playback).map { (times[$0], order, job.stream, job.as, $0) }
        }
        items.sort { ($0.time, $0.order) < ($1.time, $1.order) }

        // Calibration for the streams' sizes.
        let colorSize = colorStream.map { (streams[$0].width, streams[$0].height) }
        let depthSize = depthStream.map { (streams[$0].width, streams[$0].height) }
        let calibration = try calibrationOverride.resolve(recorded: source.calibration, depthUnits: source.depthUnitsPerMeter,
                                                         colorSize: colorSize ?? depthSize ?? (640, 480), depthSize: depthSize,
                                                         depthIntrinsics: nil)
        let c = colorSize ?? depthSize ?? (640, 480), d = depthSize ?? c
        try writeCalibration(alignment.calibration(calibration, colorWidth: c.0, colorHeight: c.1, depthWidth: d.0, depthHeight: d.1))

        // PLY colors: the color frame nearest each depth frame (decoded once, kept while near).
        let colorTimes = colorStream.map { streams[$0].timestamps } ?? []
        var colorKept: [(index: Int, image: PixelBuffer)] = []
        func colorFrame(_ i: Int) throws -> PixelBuffer? {
            if let k = colorKept.first(where: { $0.index == i }) { return k.image }
            guard let cs = colorStream, case let .image(image) = try rec.decodeFrame(i, ofStream: cs) else { return nil }
            colorKept.append((i, image))
            if colorKept.count > 3 { colorKept.removeFirst() }
            return image
        }

        /// A frame decoded here, on the calling thread (inter-coded video, PLY colors).
        func decode(_ item: Item, into unit: inout ExportUnit) throws {
            let written = TUMWriter.Written(stream: item.as, timestamp: item.time, path: "")
            let writes = jobs.contains { $0.stream == item.stream && $0.as == item.as }
            let decoded: StreamFrame
            if item.stream == colorStream, let image = try colorFrame(item.index) {
                decoded = .image(image)
            } else {
                decoded = try rec.decodeFrame(item.index, ofStream: item.stream)
            }
            switch decoded {
            case let .image(image):
                var w = written
                w.path = try writer.reserve(item.as, timestamp: item.time)
                if item.as == .ir { unit.ir = (image, w) } else { unit.color = (image, w) }
            case var .depth(depth):
                // The resolved depth intrinsics (--intrinsics, --calibration) on the depth, as for frames.
                let k = calibration.depth.intrinsics
                depth.intrinsics = k.width == depth.map.width && k.height == depth.map.height
                    ? k : k.scaled(toWidth: depth.map.width, height: depth.map.height)
                var w = written
                if writes {
                    w.path = try writer.reserve(.depth, timestamp: item.time)
                    unit.depth = (depth, w)
                }
                if item.stream == plyStream {
                    let color = try nearestIndex(in: colorTimes, to: item.time).flatMap(colorFrame)
                    unit.ply = ("ply/\(TUMWriter.stamp(item.time)).ply", color.map(ImageIO.toEightBit), depth)
                }
            }
        }

        let start = monotonicSeconds()
        let total = items.count
        let onListed = { (n: Int) in progress(ExportProgress(written: n, total: total, seconds: monotonicSeconds() - start)) }
        defer { listing.drain(); count(listing, into: &summary) }
        var firstDecodeError: CaptureError?
        for item in items {
            if let s = shouldStop() { summary.stoppedBy = s; break }
            var unit = ExportUnit(calibration: calibration, colorSize: c, paired: false)
            let written = TUMWriter.Written(stream: item.as, timestamp: item.time, path: "")
            let label = "\(streams[item.stream].name) frame \(item.index)"
            do {
                // Read here, decoded by a worker (without PLY, every item is written: `writes`).
                if plyStream == nil, let payload = try rec.payload(item.index, ofStream: item.stream) {
                    var w = written
                    w.path = try writer.reserve(item.as, timestamp: item.time)
                    unit.pending = PendingFrame(payload: payload, written: w, depthIntrinsics: calibration.depth.intrinsics, label: label)
                } else {
                    try decode(item, into: &unit)
                }
            } catch let error as CaptureError {
                // A frame that cannot be read is skipped and said; the others are written.
                summary.warnings.append(SkippedFrame(label: label, error: error).warning)
                summary.skippedFrames += 1
                firstDecodeError = firstDecodeError ?? error
                continue
            }
            // The frame's pose at its own stamp (per-frame poses: those of the playback frame nearest it).
            if let poses, let pose = poses.pose(frame: nearestIndex(in: playback, to: item.time) ?? item.index, timestamp: item.time) {
                unit.pose = PoseTrack.tumLine(timestamp: item.time, pose: pose)
            }
            try listing.submit(unit, onListed: onListed)
        }
        try listing.finish(onListed: onListed)
        // A recording none of whose selected frames can be read is bad input, not an empty export.
        if listing.listed == 0, let error = firstDecodeError ?? listing.skipped.first?.error { throw error }
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
