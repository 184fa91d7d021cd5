import Capture
import DepthKit
import Foundation
import GPUKit

/// The window's source: opened from the `--source` spec (and reopened from the panel's text
/// field, parsed once there). A `ply:` spec opens no frame source: its points are a layer of the 3D scene, handed
/// over once through `takePointList()`; `source` is then nil. A frame source is run on its own thread (`SourcePrefetcher`, a two-deep queue), polled once a frame for
/// the newest frame, its depth smoothed (`DepthSmoothingStage`, CPU or GPU by the backend) before
/// anything reads it, its depth rate limited while the machine is hot, and its warnings and
/// errors turned into notices. `current` is the frame every consumer shows.
final class SourceSession {
    private let options: ViewerOptions
    private let context: GPUContext
    private let log: ViewerLog
    /// The frame source; nil while a PLY point list is shown instead.
    private(set) var source: FrameSource?
    /// What is open: "synthetic", "bag:rec.bag", "ply:cloud.ply".
    private(set) var name: String
    /// The spec of what is open (an export opens it again on its own thread).
    private(set) var opened: SourceSpec
    /// Counts opens: texts about the source are rebuilt when it changes.
    private(set) var generation = 0
    /// A PLY point list opened, until the 3D scene takes it (no host copy outlives its upload).
    private var pointList: PLYContents?
    /// A folder of PLY files played as frames (`ply:DIR`), loaded on its own thread (PLYSequence);
    /// the 3D scene takes each loaded file (`takeSequenceFrame`).
    private(set) var sequence: PLYSequence?
    /// A PLY the panel asked for, read on its own thread; the old source stays until it is done.
    private var loadJob: PLYLoadJob?
    /// The timeline line of the sequence's frame shown: index, file name, time (made per new frame).
    private(set) var sequenceLine: String?
    /// Runs `source` on its own thread; made by `start()` (after the window is ready, so the frames
    /// it lets go before the first one is taken are not counted from long before the loop).
    private var prefetcher: SourcePrefetcher?
    /// The frame shown: the newest taken, its depth smoothed.
    private(set) var current: FrameSet?
    /// The index of the last frame taken (nil before the first from this source).
    private(set) var lastFrameIndex: Int?
    /// Frames taken from the source (each one shown; skipped ones are counted as dropped).
    private(set) var framesReceived = 0
    /// The source's error while it lasts (e.g. a camera unplugged); cleared by the next frame.
    private(set) var error: String?
    /// Depth smoothing between the source and every consumer, made on the first poll from the settings then.
    private var smoothing: DepthSmoothingStage?
    /// The depth rate limit last asked of the source (nil: full rate); asked again of a reopened source.
    private(set) var depthRateLimit: Double?
    private var saidUnlimited = false
    /// The calibration of `current`: `--calibration`/`--intrinsics`, else the source's, else
    /// defaults (its `origin` says which; the status line shows it). After alignment it is the
    /// aligned one.
    private(set) var calibration: RGBDCalibration?
    /// The calibration before alignment (what `info` would print).
    private(set) var recordedCalibration: RGBDCalibration?
    private let alignment: DepthAlignmentStage
    /// The timestamp of frame 0 once seen (the timeline shows time into the recording from it).
    private(set) var firstTimestamp: Double?
    /// The recording's duration in seconds, read once when the source opens (nil: unknown).
    private(set) var durationSeconds: Double?
    private var saidCalibration = false
    /// What `recordedCalibration` was resolved for: the open counter and the frame sizes.
    private var resolvedFor: (Int, SIMD4<Int>)?
    /// Camera nodes coming and going (the viewer's watcher; nil: an unplugged camera is looked for on a timer).
    /// The cameras present (the panel's list), kept current by the inotify watcher on /dev; its
    /// events also tell an unplugged camera's `ReconnectingSource` when it is back.
    let cameras: CameraCatalog
    private var events: DeviceEvents? { cameras.events }
    /// The camera source when it waits for an unplugged camera and resumes it, and its last state change seen.
    private var reconnecting: CameraReconnection?
    private var reconnectSeen = 0
    /// "waiting for camera /dev/video2 (HD Webcam) …" while an unplugged camera is away (the last frame stays shown).
    private(set) var waitingText: String?

    /// Opens `options.source` (the thread starts with `start()`).
    init(options: ViewerOptions, context: GPUContext, log: ViewerLog, cameras: CameraCatalog) throws {
        self.options = options
        self.context = context
        self.log = log
        self.cameras = cameras
        alignment = DepthAlignmentStage(mode: options.align)
        opened = options.source
        (source, pointList, sequence, name) = try Self.open(options.source, options: options, events: cameras.events)
    }

    deinit {
        loadJob?.control.cancel()
        sequence?.stopLoading()
        prefetcher?.stop()
        source?.stop()
    }

    /// Starts the source's thread.
    func start() {
        durationSeconds = source?.metadata.durationSeconds
        firstTimestamp = nil
        reconnecting = source?.reconnection
        reconnectSeen = reconnecting?.stateChanges ?? 0
        waitingText = nil
        sequenceLine = nil
        if let sequence { durationSeconds = sequence.durationSeconds; sequence.startLoading() }
        // The prefetcher sets the source's warning callback before its thread starts.
        prefetcher = source.map(SourcePrefetcher.init)
    }

    /// The point list a `ply:` string opened, once: the 3D scene uploads it and lets it go.
    func takePointList() -> PLYContents? {
        defer { pointList = nil }
        return pointList
    }

    /// The source's playback controls (through the prefetcher), nil for a live source.
    var playback: PlaybackControl? { prefetcher?.playback ?? sequence?.recording }

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
    /// stays and this returns false.
    func reopen(_ text: String) -> Bool {
        do {
            let spec = try SourceSpec(parsing: text)
            if case .ply(let path) = spec {
                // Read on a thread of its own (the window stays responsive, Esc cancels): `finishLoad` swaps it in.
                loadJob?.control.cancel()
                loadJob = PLYLoadJob(spec: spec, path: path)
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
    /// with `takePointList`); a failure or a cancel is a notice and the old source stays.
    func finishLoad() -> Bool {
        guard let job = loadJob, let result = job.take() else { return false }
        loadJob = nil
        switch result {
        case .success(let contents):
            replace(nil, contents, nil, "ply:\(job.path)", spec: job.spec)
            return true
        case .failure(let error):
            if job.control.isCancelled { log.notice("load of \(job.path) cancelled") }
            else { log.notice("cannot open \(job.spec): \(error)", isError: true) }
            return false
        }
    }

    /// Esc during a long PLY load: cancels the panel's load, or a sequence file read for over half a
    /// second (playback pauses); false when no such load runs (Esc then quits).
    func cancelLoad() -> Bool {
        if let job = loadJob { job.control.cancel(); return true }
        return sequence?.cancelLoad(after: 0.5) ?? false
    }

    /// The progress line of a long load (nil when none): the panel's PLY, or a sequence file read
    /// for over half a second. `--log-ui` prints it once when a load begins to show it.
    func loadLine() -> String? {
        var line: String?
        if let job = loadJob {
            let p = job.control.progress
            line = PLYLoadJob.line(job.path, done: p.done, total: p.total)
        } else if let s = sequence?.loadingStatus(after: 0.5) {
            line = PLYLoadJob.line(s.name, done: s.done, total: s.total)
        }
        if let line, !saidLoading { log.ui(line) }
        saidLoading = line != nil
        return line
    }
    private var saidLoading = false

    /// Puts what `open` made in place of the current source.
    private func replace(_ s: FrameSource?, _ points: PLYContents?, _ q: PLYSequence?, _ name: String, spec: SourceSpec) {
        sequence?.stopLoading()
        prefetcher?.stop()
        source?.stop()
        (source, pointList, sequence, self.name, opened) = (s, points, q, name, spec)
        generation += 1
        start()
        limitDepthRate(depthRateLimit)
        current = nil
        lastFrameIndex = nil
        smoothing?.reset()
        error = nil
        calibration = nil
        recordedCalibration = nil
        saidCalibration = false
    }

    /// The sequence's newest loaded file since the last call (nil when none or no sequence); its
    /// warnings (a file that could not be read) become notices.
    func takeSequenceFrame() -> PLYSequenceFrame? {
        guard let sequence else { return nil }
        let (frame, warnings) = sequence.take()
        for w in warnings { log.notice(w, isError: true) }
        if let f = frame {
            framesReceived += 1
            lastFrameIndex = f.index
            let t = f.timestamp - sequence.timestamp(at: 0)
            sequenceLine = "frame \(f.index) of \(sequence.count)   \(f.name)   "
                + String(format: "t %.3f s   %.3f / %.3f s", f.timestamp, t, sequence.durationSeconds)
        }
        return frame
    }

    /// Takes the newest frame the source's thread finished (never blocking); errors are shown, not
    /// fatal. Frames the source skipped are counted in `stats`. Applies smoothing changes first.
    func poll(settings: inout ViewSettings, stats: inout FrameStats) {
        syncSmoothing(&settings)
        if let r = reconnecting, r.stateChanges != reconnectSeen { noteReconnect(r) }
        guard let prefetcher else { return }
        let (frame, error, warnings) = prefetcher.take()
        for w in warnings { log.notice(w) }
        if let f = frame {
            // Before the first frame taken from a source, the frames its thread made and let go count from where it started.
            if let last = lastFrameIndex ?? prefetcher.startIndex.map({ $0 - 1 }), f.index > last + 1, let p = playback, !p.isPaused {
                stats.drop(f.index - last - 1)
            }
            lastFrameIndex = f.index
            if f.index == 0 { firstTimestamp = f.timestamp }
            framesReceived += 1
            current = prepared(smoothed(f), alignDepth: settings.alignDepth)
            self.error = nil
        } else if let error {
            let text = "\(error)"
            if self.error != text { log.notice("source: \(text)", isError: true) }
            self.error = text
        }
    }

    /// The camera went away or came back: a notice, and the waiting line while it is away (the
    /// last frame stays shown). Runs on a state change only, not per frame.
    private func noteReconnect(_ r: CameraReconnection) {
        reconnectSeen = r.stateChanges
        switch r.state {
        case .waiting(let camera):
            waitingText = "waiting for camera \(camera) (unplugged) - last frame shown"
            log.notice("camera \(camera) unplugged - waiting for it", isError: true)
        case .streaming:
            waitingText = nil
            name = source?.name ?? name   // the camera may be back at another node
            generation += 1
            log.notice("camera \(r.resumedDescription ?? name) is back - resumed")
        }
    }

    /// Sets the depth rate limit on the source (the thermal watch); says once when the source cannot.
    func limitDepthRate(_ limit: Double?) {
        depthRateLimit = limit
        let limitable = prefetcher?.setDepthRateLimit(limit) ?? false
        if !limitable, limit != nil && !saidUnlimited {
            saidUnlimited = true
            log.notice("thermal: \(name) cannot lower its depth rate", isError: true)
        }
    }

    // MARK: Smoothing

    /// Applies panel/key changes and backend switches (smoothing on the GPU when the backend is
    /// gpu, else on the CPU, which on lavapipe is the faster one); a changed setting re-smooths a
    /// paused frame.
    private func syncSmoothing(_ settings: inout ViewSettings) {
        settings.smoothing = settings.smoothing.clamped()
        let stage = smoothing ?? DepthSmoothingStage(smoother: DepthSmoother(settings: settings.smoothing))
        smoothing = stage
        let wantGPU = settings.backend == .gpu
        if wantGPU != (stage.smoother is GPUDepthSmoother) {
            if wantGPU {
                do {
                    stage.replaceSmoother(try GPUDepthSmoother(settings: settings.smoothing, context: context))
                } catch {
                    log.notice("smoothing on the GPU failed: \(error); it runs on the CPU", isError: true)
                    settings.backend = .cpu
                }
            } else {
                stage.replaceSmoother(DepthSmoother(settings: settings.smoothing))
            }
        }
        guard settings.smoothing != stage.settings else { return }
        stage.settings = settings.smoothing
        log.ui("smoothing \(settings.smoothing)")
        if playback?.isPaused ?? false || !((source?.isLive ?? false) || playback != nil) {
            do {
                if let f = try stage.reapplyLast() { current = prepared(f, alignDepth: settings.alignDepth) }
            } catch {
                log.notice("smoothing failed: \(error)", isError: true)
            }
        }
    }

    // MARK: Calibration and alignment

    /// The frame with its calibration resolved and, when the cameras differ and `alignDepth` is
    /// on, its depth aligned to color (smoothing ran before, on the depth camera's own pixels).
    private func prepared(_ f: FrameSet, alignDepth: Bool) -> FrameSet {
        var frame = f
        guard let source else { return f }
        // Resolved once per source and frame sizes (a calibration holds arrays: made per frame,
        // it would be the frame's allocations).
        let key = SIMD4(f.color.width, f.color.height, f.depth?.map.width ?? 0, f.depth?.map.height ?? 0)
        let resolved: RGBDCalibration
        if let r = recordedCalibration, let k = resolvedFor, k.0 == generation, k.1 == key {
            resolved = r
        } else {
            do { resolved = try options.calibration.resolve(for: source, frame: f) } catch {
                // A calibration file for another aspect ratio: said once, and the source's own used.
                log.notice("\(error); the source's own calibration is used", isError: true)
                resolved = (try? CalibrationOverride().resolve(for: source, frame: f))
                    ?? .assumed(depthWidth: key.z, depthHeight: key.w, colorWidth: key.x, colorHeight: key.y)
            }
            recordedCalibration = resolved
            resolvedFor = (generation, key)
        }
        options.calibration.apply(resolved, to: &frame)
        if !saidCalibration {
            saidCalibration = true
            log.notice("calibration: \(resolved.origin)" + (resolved.needsAlignment ? "; depth and color are different cameras" : ""))
        }
        alignment.mode = alignDepth ? options.align : .none
        do {
            let (aligned, c) = try alignment.apply(frame, calibration: resolved)
            calibration = c
            return aligned
        } catch {
            log.notice("alignment failed: \(error); raw depth shown", isError: true, seconds: 3)
            calibration = resolved
            return frame
        }
    }

    /// A frame from the source with its depth smoothed (as delivered when smoothing is off or fails).
    private func smoothed(_ f: FrameSet) -> FrameSet {
        guard let smoothing else { return f }
        do {
            return try smoothing.apply(f, playing: !(playback?.isPaused ?? false))
        } catch {
            log.notice("smoothing failed: \(error)", isError: true, seconds: 3)
            return f
        }
    }
}
