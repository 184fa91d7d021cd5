import Foundation
import DepthKit

/// A data-set folder (`tum:DIR`: TUM RGB-D, or color/ + depth/ pairs; see `TUMSequence`) played at
/// its recorded timestamps (or at `fps`), with pause, step, seek and loop. A `calibration.json`
/// beside the frames (the schema `info --json` prints) gives the cameras; else defaults are assumed. A missing or unreadable frame is skipped: a warning goes to `warnings` and `onWarning`,
/// and playback goes on.
///
/// Streams on their own clocks (`RecordedStreams`): rgb.txt's and depth.txt's files, each once
/// under its own timestamp (`TUMSequence.streamFiles`).
public final class TUMSource: FrameSource, DepthRateLimiting, RecordedStreams {
    public let directory: String
    /// Units per meter given on the command line; nil for the folder's default (TUM 5000, pairs 1000).
    public let requestedDepthScale: Float?
    /// Units per meter of the folder's 16-bit depth (after `start()`; before it, the TUM default).
    public var depthScale: Float { sequence?.depthScale ?? requestedDepthScale ?? TUMSequence.depthScale }
    /// Pause, step, seek, loop and rate (valid after `start()`).
    public let recording: RecordingPlayback
    public var playback: PlaybackControl? { recording }
    public var depthRate: DepthRateLimiting? { self }
    /// rgb.txt's and depth.txt's frames, each on its own clock (what `convert` writes).
    public var recordedStreams: RecordedStreams? { self }
    public var name: String { "tum:\(directory)" }
    /// From `calibration.json` beside the frames, when there is one.
    public private(set) var calibration: RGBDCalibration?
    public private(set) var intrinsics: CameraIntrinsics = .default(width: 640, height: 480)
    public var isLive: Bool { false }
    public var depthUnitsPerMeter: Float? { depthScale }
    /// From `groundtruth.txt` beside the frames (TUM's trajectory: the optical frame in the world),
    /// looked up by each frame's timestamp (`PoseTrack`).
    public private(set) var poses: FramePoses?
    /// One line per skipped frame, oldest first.
    public private(set) var warnings: [String] = []
    /// Called with each warning as it happens.
    public var onWarning: ((String) -> Void)?

    private var sequence: TUMSequence?
    /// rgb.txt's and depth.txt's files as streams, once asked for.
    private var files: (streams: [RecordedStream], lists: [[TUMSequence.StreamFile]])?
    private var warned: Set<Int> = []
    private var depthGate = DepthRateGate()
    /// The last depth loaded, carried by frames the depth rate limit skips (their depth PNG is not decoded).
    private var lastDepth: (index: Int, depth: DepthData)?
    public var depthRateLimit: Double? {
        get { depthGate.limit }
        set { depthGate.limit = newValue }
    }

    /// - Parameter depthScale: units per meter of the 16-bit depth PNGs (nil: TUM 5000, pairs 1000).
    public init(directory: String, depthScale: Float? = nil) {
        self.directory = directory
        self.requestedDepthScale = depthScale
        recording = RecordingPlayback(name: "tum:\(directory)")
    }

    /// Reads the index files. Throws `CaptureError.file` for a missing or malformed folder.
    public func start() throws {
        // calibration.json beside the frames gives the cameras and the depth units (a folder
        // `convert` wrote keeps its recording's units); --depth-scale still wins.
        let calibrationPath = TUMSequence.absolute(directory) + "/calibration.json"
        let groundTruthPath = TUMSequence.absolute(directory) + "/groundtruth.txt"
        // Files of the folder only: a calibration.json or groundtruth.txt that is a link leading
        // out of it is refused (the lists' files are checked by TUMSequence).
        if let folder = try? ConfinedFolder(directory) {
            do {
                try folder.check(calibrationPath)
                try folder.check(groundTruthPath)
            } catch {
                throw CaptureError.wrapping(error, path: directory)
            }
        }
        if FileManager.default.fileExists(atPath: calibrationPath) {
            do { calibration = try RGBDCalibration.read(calibrationPath) } catch {
                throw CaptureError.wrapping(error, path: calibrationPath)
            }
        } else {
            calibration = nil
        }
        poses = nil
        if FileManager.default.fileExists(atPath: groundTruthPath) {
            do {
                let track = try PoseTrack.parseTUM(try FileSupport.readAll(groundTruthPath), path: groundTruthPath)
                if !track.isEmpty { poses = FramePoses(.byTime(track), origin: "groundtruth.txt") }
            } catch {
                throw CaptureError.wrapping(error, path: groundTruthPath)
            }
        }
        let seq: TUMSequence
        do { seq = try TUMSequence(directory: directory, depthScale: requestedDepthScale ?? calibration?.depthScale) } catch {
            throw CaptureError.wrapping(error, path: directory)
        }
        if let c = calibration, c.depthScale != seq.depthScale { calibration?.depthScale = seq.depthScale }
        sequence = seq
        files = nil
        recording.open(count: seq.count, timestamps: seq.entries.map(\.timestamp), defaultFPS: 30)
        warned.removeAll()
        warnings.removeAll()
        // Intrinsics follow the first readable frame's color size.
        for i in 0..<min(seq.count, 8) {
            if let f = try? seq.loadFrame(at: i) {
                intrinsics = .default(width: f.color.width, height: f.color.height)
                break
            }
        }
    }

    public func stop() {
        recording.close()
        sequence = nil
        files = nil
        lastDepth = nil
        depthGate.reset()
    }

    public func nextFrame(now: Double) throws -> FrameSet? {
        guard let seq = sequence else { throw CaptureError.invalidState("\(name): nextFrame before start()") }
        guard let due = recording.clock.due(now: now) else { return nil }
        var i = due.index
        let explicit = due.explicit
        var tries = 0
        while true {
            do {
                let t = seq.entries[i].timestamp
                if !(depthGate.admits(timestamp: t) || lastDepth == nil), let last = lastDepth {
                    let color = try ImageIO.readColor(seq.entries[i].colorPath)
                    recording.clock.delivered(i, now: now, explicit: explicit)
                    let dt = seq.entries[last.0].depthTimestamp
                    return FrameSet(color: color, depth: last.depth, timestamp: t, index: i, name: seq.entries[i].name,
                                    depthTimestamp: dt != t ? dt : nil)
                }
                let f = try seq.loadFrame(at: i)
                var depth = meters(f.depth)
                if let k = calibration?.depth.intrinsics, k.width == depth.map.width, k.height == depth.map.height {
                    depth.intrinsics = k
                }
                lastDepth = (i, depth)
                recording.clock.delivered(i, now: now, explicit: explicit)
                // The depth's own stamp (depth.txt's), where the folder's streams have their own clocks.
                let dt = seq.entries[i].depthTimestamp
                return FrameSet(color: f.color, depth: depth, timestamp: t, index: i, name: seq.entries[i].name,
                                depthTimestamp: dt != t ? dt : nil)
            } catch {
                warn(i, error)
                tries += 1
                // An explicit move (start, step, seek, loop) goes on to the next readable frame;
                // timed playback just moves past the bad one and waits for the next frame's time.
                if explicit, tries < seq.count, let j = recording.clock.neighbor(of: i, direction: recording.clock.direction) {
                    i = j
                    continue
                }
                recording.clock.delivered(i, now: now, explicit: explicit)
                return nil
            }
        }
    }

    private func warn(_ i: Int, _ error: Error) {
        guard warned.insert(i).inserted else { return }
        let message = "frame \(i) skipped: \(CaptureError.wrapping(error, path: directory))"
        warnings.append(message)
        onWarning?(message)
    }

    /// Frames per second of the recording: the median interval of its timestamps (nil before `start` or for one frame).
    public var nominalFrameRate: Double? {
        guard let e = sequence?.entries, e.count >= 2 else { return nil }
        let gaps = zip(e.dropFirst(), e).map { $0.timestamp - $1.timestamp }.filter { $0 > 0 }.sorted()
        guard !gaps.isEmpty else { return nil }
        return (1 / gaps[gaps.count / 2] * 1000).rounded() / 1000
    }
}

// MARK: RecordedStreams

extension TUMSource {
    private func streamFiles() throws -> (streams: [RecordedStream], lists: [[TUMSequence.StreamFile]]) {
        if let files { return files }
        guard let seq = sequence else { throw CaptureError.invalidState("\(name): streams before start()") }
        do {
            let f = try seq.streamFiles()
            var streams: [RecordedStream] = [], lists: [[TUMSequence.StreamFile]] = []
            for (kind, list, index) in [(StreamKind.color, f.color, "rgb.txt"), (.depth, f.depth, "depth.txt")] where !list.isEmpty {
                // The stream's size: its first frame's.
                let first = try ImageIO.read(list[0].path)
                streams.append(RecordedStream(kind: kind, name: index, width: first.width, height: first.height,
                                              timestamps: list.map(\.timestamp)))
                lists.append(list)
            }
            files = (streams, lists)
            return (streams, lists)
        } catch {
            throw CaptureError.wrapping(error, path: directory)
        }
    }

    /// Color from rgb.txt, depth from depth.txt (or the files the pairs name), sizes from each first frame.
    public func streams() throws -> [RecordedStream] { try streamFiles().streams }

    public func playbackTimestamps() throws -> [Double] {
        guard let seq = sequence else { throw CaptureError.invalidState("\(name): streams before start()") }
        return seq.entries.map(\.timestamp)
    }

    /// The frame's file name: the payload reads and decodes the PNG on any thread, as `decodeFrame` does.
    public func payload(_ index: Int, ofStream stream: Int) throws -> StreamPayload? {
        let f = try streamFiles()
        guard f.streams.indices.contains(stream), f.lists[stream].indices.contains(index) else {
            throw CaptureError.invalidState("\(name): no frame \(index) of stream \(stream)")
        }
        let file = f.lists[stream][index].path, directory = self.directory, scale = depthScale
        let intrinsics = calibration?.depth.intrinsics
        switch f.streams[stream].kind {
        case .depth:
            return StreamPayload {
                do {
                    var d = meters(try DepthIO.readDepth(file, depthScale: scale))
                    if let k = intrinsics, k.width == d.map.width, k.height == d.map.height { d.intrinsics = k }
                    return .depth(d)
                } catch {
                    throw CaptureError.wrapping(error, path: directory)
                }
            }
        case .color, .ir:
            return StreamPayload {
                do { return .image(try ImageIO.readColor(file)) } catch { throw CaptureError.wrapping(error, path: directory) }
            }
        }
    }

    public func decodeFrame(_ index: Int, ofStream stream: Int) throws -> StreamFrame {
        let f = try streamFiles()
        guard f.streams.indices.contains(stream), f.lists[stream].indices.contains(index) else {
            throw CaptureError.invalidState("\(name): no frame \(index) of stream \(stream)")
        }
        let file = f.lists[stream][index]
        do {
            switch f.streams[stream].kind {
            case .depth:
                var d = meters(try DepthIO.readDepth(file.path, depthScale: depthScale))
                if let k = calibration?.depth.intrinsics, k.width == d.map.width, k.height == d.map.height { d.intrinsics = k }
                return .depth(d)
            case .color, .ir:
                return .image(try ImageIO.readColor(file.path))
            }
        } catch {
            throw CaptureError.wrapping(error, path: directory)
        }
    }
}
