import Capture
import DepthKit
import Foundation

/// The window's source and its thread: opened from the `--source` spec (and reopened from the
/// panel's text field, parsed once there). A frame source runs on its own thread
/// (`SourcePrefetcher`, a two-deep queue) and is polled once a frame for the newest frame (which
/// `DepthPipeline` then prepares), its depth rate limited while the machine is hot (`thermal`),
/// an unplugged camera waited for, and its warnings and errors turned into notices. A `ply:` spec
/// opens no frame source (`source` is nil): its points, or a folder of PLY files, are the 3D
/// scene's layer (`ply`).
final class SourceSession {
    private let options: ViewerOptions
    private let log: ViewerLog
    /// The cameras present (the panel's list), kept current by the inotify watcher on /dev; its
    /// events also tell an unplugged camera's `ReconnectingSource` when it is back.
    let cameras: CameraCatalog
    /// The machine's temperature: hot, it lowers the source's depth rate (`limitDepthRate`).
    let thermal: ThermalWatch
    /// The frame source; nil while a PLY point list or sequence is shown instead.
    private(set) var source: FrameSource?
    /// What is open: "synthetic", "bag:rec.bag", "ply:cloud.ply".
    private(set) var name: String
    /// The spec of what is open (an export opens it again on its own thread).
    private(set) var opened: SourceSpec
    /// Counts opens (and a camera coming back): texts about the source are rebuilt when it changes.
    private(set) var generation = 0
    /// The PLY point list or sequence open instead of a frame source, and PLY loads from the panel.
    let ply: PLYInput
    /// Runs `source` on its own thread; made by `start()` (after the window is ready, so the frames
    /// it lets go before the first one is taken are not counted from long before the loop).
    private var prefetcher: SourcePrefetcher?
    /// The source's error while it lasts (e.g. a camera unplugged); cleared by the next frame.
    private(set) var error: String?
    /// Where the source's frames stand: the last taken, how many, the first's time, the duration.
    private(set) var timeline = Timeline()
    /// An unplugged camera's state as last seen, and the waiting line while it is away.
    private var reconnect = ReconnectWatch()
    /// The depth rate limit last asked of the source, and whether it was said that it cannot.
    private var depthRate = DepthRateRequest()

    /// Where a source's frames stand (reset when another opens).
    struct Timeline {
        /// The index of the last frame taken (nil before the first from this source).
        var lastFrameIndex: Int?
        /// Frames taken from every source opened (each one shown; skipped ones are counted as dropped).
        var framesReceived = 0
        /// The timestamp of frame 0 once seen (the timeline shows time into the recording from it).
        var firstTimestamp: Double?
        /// The recording's duration in seconds, read once when the source opens (nil: unknown).
        var durationSeconds: Double?
        /// The recording's accelerometer and gyroscope samples, read once when the source opens
        /// (nil: it has none, or they could not be read, which a notice said).
        var imu: IMUSamples?
    }

    /// The camera source's reconnection, when it has one: its last state change seen and the line
    /// shown while it waits.
    private struct ReconnectWatch {
        var reconnection: CameraReconnection?
        var seen = 0
        /// "waiting for camera /dev/video2 (HD Webcam) …" while an unplugged camera is away.
        var waitingText: String?
    }

    private struct DepthRateRequest {
        /// nil: full rate; asked again of a reopened source.
        var limit: Double?
        var saidUnlimited = false
    }

    /// Opens `options.source` (the thread starts with `start()`).
    init(options: ViewerOptions, log: ViewerLog, cameras: CameraCatalog) throws {
        self.options = options
        self.log = log
        self.cameras = cameras
        thermal = ThermalWatch(log: log)
        opened = options.source
        let (s, points, q, name) = try Self.open(options.source, options: options, events: cameras.events)
        (source, self.name) = (s, name)
        ply = PLYInput(log: log, pointList: points, sequence: q)
    }

    deinit {
        prefetcher?.stop()
        source?.stop()
        thermal.stop()
    }

    private var events: DeviceEvents? { cameras.events }

    /// Starts the source's thread (and a PLY sequence's loading thread).
    func start() {
        // Read here, before the source's thread starts (a source is used from one thread at a time).
        var imu: IMUSamples?
        if let r = source?.imu {
            do { imu = try r.imuSamples() } catch { log.notice("IMU samples not shown: \(error)", isError: true) }
        }
        timeline = Timeline(framesReceived: timeline.framesReceived,
                            durationSeconds: ply.sequence?.durationSeconds ?? source?.metadata.durationSeconds,
                            imu: imu.flatMap { $0.isEmpty ? nil : $0 })
        reconnect = ReconnectWatch(reconnection: source?.reconnection, seen: source?.reconnection?.stateChanges ?? 0)
        ply.start()
        // What the source said while it opened (a damaged recording's missing parts, assumed
        // calibration) is shown as its later warnings are: its callback is only set below.
        for w in source?.warnings ?? [] { log.notice(w) }
        // The prefetcher sets the source's warning callback before its thread starts.
        prefetcher = source.map(SourcePrefetcher.init)
    }

    /// The source's playback controls (through the prefetcher, or the PLY sequence's), nil for a live source.
    var playback: PlaybackControl? { prefetcher?.playback ?? ply.sequence?.recording }

    /// "waiting for camera … - last frame shown" while an unplugged camera is away.
    var waitingText: String? { reconnect.waitingText }

    /// Makes and starts the source `spec` names, with `options`' playback settings; for `ply:`, reads
    /// the point list instead (the CLI's, already read with its progress bar, for the first open).
    /// A camera that is unplugged is waited for and resumed (`reconnect`), not an error per frame.
    static func open(_ spec: SourceSpec, options: ViewerOptions, events: DeviceEvents? = nil) throws -> (FrameSource?, PLYContents?, PLYSequence?, String) {
        if case .ply(let path) = spec {
            let contents = try (spec == options.source ? options.pointList?.take() : nil) ?? PLYReader.load(path)
            return (nil, contents, nil, spec.description)
        }
        if case let .plySequence(directory, pattern) = spec {
            let q = try PLYSequence(directory: directory, pattern: pattern)
            try applyPlayback(options, to: q.recording)
            return (nil, nil, q, q.name)
        }
        let s = try spec.makeSource(depthScale: options.depthScale, cameraControls: options.cameraControls,
                                    reconnect: true, events: events)
        try s.start()
        if let p = s.playback { try applyPlayback(options, to: p) }
        return (s, nil, nil, s.name)
    }

    /// `--loop`, `--fps`, `--paused`, `--frame`.
    private static func applyPlayback(_ options: ViewerOptions, to p: PlaybackControl) throws {
        p.loop = options.loop
        if let fps = options.fps { p.fps = fps }
        if options.paused { p.pause() }
        if let n = options.frame { try p.seek(toFrame: n) }
    }

    /// Opens `text` in place of the current source; on failure (a notice says why) the old one
    /// stays and this returns false. A `ply:` file is read on a thread of its own: `finishLoad`
    /// swaps it in.
    func reopen(_ text: String) -> Bool {
        do {
            let spec = try SourceSpec(parsing: text)
            if case .ply(let path) = spec {
                ply.load(spec, path: path)
                return false
            }
            let (s, points, q, name) = try Self.open(spec, options: options, events: events)
            replace(s, points, q, name, spec: spec)
            return true
        } catch {
            log.notice("cannot open \(text): \(error)", isError: true)
            return false
        }
    }

    /// A PLY read by `reopen` that is done: true when it replaced the source (the 3D scene takes it
    /// with `ply.takePointList`); a failure or a cancel is a notice and the old source stays.
    func finishLoad() -> Bool {
        guard let (contents, spec, path) = ply.finishLoad() else { return false }
        replace(nil, contents, nil, "ply:\(path)", spec: spec)
        return true
    }

    /// Esc during a long PLY load; false when none runs (Esc then quits).
    func cancelLoad() -> Bool { ply.cancelLoad() }

    /// Puts what `open` made in place of the current source.
    private func replace(_ s: FrameSource?, _ points: PLYContents?, _ q: PLYSequence?, _ name: String, spec: SourceSpec) {
        ply.replace(pointList: points, sequence: q)
        prefetcher?.stop()
        source?.stop()
        (source, self.name, opened) = (s, name, spec)
        generation += 1
        start()
        limitDepthRate(depthRate.limit)
        error = nil
    }

    /// The sequence's newest loaded file since the last call (nil when none or no sequence).
    func takeSequenceFrame() -> PLYSequenceFrame? {
        guard let f = ply.takeSequenceFrame() else { return nil }
        timeline.framesReceived += 1
        timeline.lastFrameIndex = f.index
        return f
    }

    /// The newest frame the source's thread finished since the last call (never blocking; nil when
    /// none); errors are shown, not fatal. Frames the source skipped are counted in `stats`. Asks
    /// the source for the thermal watch's depth rate first.
    func poll(stats: inout FrameStats) -> FrameSet? {
        if let limit = thermal.poll(), limit != depthRate.limit { limitDepthRate(limit) }
        if let r = reconnect.reconnection, r.stateChanges != reconnect.seen { noteReconnect(r) }
        guard let prefetcher else { return nil }
        let (frame, error, warnings) = prefetcher.take()
        for w in warnings { log.notice(w) }
        if let f = frame {
            // Before the first frame taken from a source, the frames its thread made and let go count from where it started.
            if let last = timeline.lastFrameIndex ?? prefetcher.startIndex.map({ $0 - 1 }), f.index > last + 1,
               let p = playback, !p.isPaused {
                stats.drop(f.index - last - 1)
            }
            timeline.lastFrameIndex = f.index
            if f.index == 0 { timeline.firstTimestamp = f.timestamp }
            timeline.framesReceived += 1
            self.error = nil
        } else if let error {
            let text = "\(error)"
            if self.error != text { log.notice("source: \(text)", isError: true) }
            self.error = text
        }
        return frame
    }

    /// The camera went away or came back: a notice, and the waiting line while it is away (the
    /// last frame stays shown). Runs on a state change only, not per frame.
    private func noteReconnect(_ r: CameraReconnection) {
        reconnect.seen = r.stateChanges
        switch r.state {
        case .waiting(let camera):
            reconnect.waitingText = "waiting for camera \(camera) (unplugged) - last frame shown"
            log.notice("camera \(camera) unplugged - waiting for it", isError: true)
        case .streaming:
            reconnect.waitingText = nil
            name = source?.name ?? name   // the camera may be back at another node
            generation += 1
            log.notice("camera \(r.resumedDescription ?? name) is back - resumed")
        }
    }

    /// Sets the depth rate limit on the source (the thermal watch); says once when the source cannot.
    private func limitDepthRate(_ limit: Double?) {
        depthRate.limit = limit
        let limitable = prefetcher?.setDepthRateLimit(limit) ?? false
        if !limitable, limit != nil && !depthRate.saidUnlimited {
            depthRate.saidUnlimited = true
            log.notice("thermal: \(name) cannot lower its depth rate", isError: true)
        }
    }
}
