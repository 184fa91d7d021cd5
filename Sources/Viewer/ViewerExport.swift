import CImGui
import Capture
import DepthKit
import Foundation

/// The timeline's selection: a start and an end mark (frame indices), each set from the frame
/// shown (I, O, the panel's buttons). A mark set past the other one clears the other one.
struct TimelineSelection: Equatable {
    private(set) var start: Int?
    private(set) var end: Int?

    var isEmpty: Bool { start == nil && end == nil }

    mutating func markStart(_ frame: Int) {
        start = max(0, frame)
        if let e = end, e < frame { end = nil }
    }

    mutating func markEnd(_ frame: Int) {
        end = max(0, frame)
        if let s = start, s > frame { start = nil }
    }

    mutating func clear() { start = nil; end = nil }

    /// The frames an export writes of a recording of `frameCount` frames (nil: it never ends, the
    /// synthetic scene): the marks (a missing start is frame 0, a missing end the last frame)
    /// clamped to the recording, or the whole recording when `whole` or no mark is set. Fails with
    /// the reason when that range is empty or endless.
    func frames(frameCount: Int?, whole: Bool) -> Result<ClosedRange<Int>, ExportRangeError> {
        let marks = !whole && !isEmpty
        if let n = frameCount {
            guard n > 0 else { return .failure(.noFrames) }
            guard marks else { return .success(0...(n - 1)) }
            let lo = start ?? 0, hi = min(end ?? (n - 1), n - 1)
            guard lo <= n - 1 else { return .failure(.startPastEnd(last: n - 1)) }
            return .success(lo...hi)
        }
        guard marks, let e = end else { return .failure(.endless) }
        return .success((start ?? 0)...e)
    }
}

/// Why the range cannot be exported (one line for the panel and the notice).
enum ExportRangeError: Error, Equatable, CustomStringConvertible {
    case noFrames
    case startPastEnd(last: Int)
    case endless

    var description: String {
        switch self {
        case .noFrames: return "the recording has no frames"
        case .startPastEnd(let last): return "the start mark is past the last frame (\(last))"
        case .endless: return "this source never ends: mark an end frame (O)"
        }
    }
}

/// What an export writes: the kinds `convert` writes.
enum ExportKind: String, CaseIterable, Sendable {
    /// A TUM-layout folder (`convert --out DIR`, `DatasetExporter`).
    case folder
    /// ROS 2 MCAP (`convert --out FILE.mcap`, `MCAPExporter`).
    case mcap
    /// A colorized video (`convert --video FILE.mp4|.mkv`, `VideoExporter`).
    case video

    /// The kind a name asks for: .mcap, .mp4 or .mkv files, else a folder.
    init(path: String) {
        let p = path.lowercased()
        if p.hasSuffix(".mcap") { self = .mcap } else if VideoExporter.container(of: p) != nil { self = .video } else { self = .folder }
    }
}

/// One export running on a worker of its own (`LatestRequestWorker`, one request), with its own
/// instance of the source (the `--source` text opened again, as `convert` opens it), so the view
/// keeps playing. The render loop reads its progress under a short lock; `cancel` and the stop
/// signals end it between two frames: `DatasetExporter` then finishes the index files
/// with exactly the frames written, `MCAPExporter` and `VideoExporter` finish their file with the
/// frames written. The render loop's own (not shared: the worker holds only the request, the
/// progress box and the cancel flag). A cancel only asks the export to stop: the request always
/// runs, so an export cancelled before it began still has its outcome.
final class ViewerExportJob {
    struct Request: Sendable {
        var source: SourceSpec
        /// The folder, or the .mcap / video file.
        var target: String
        var output: Output
        var overwrite: Bool
        var selection: ExportSelection
        var contents: ExportContents
        var calibration: CalibrationOverride
        var depthScale: Float?
        /// Frames the range holds (the progress bar's end when the exporter does not say).
        var total: Int
    }

    /// The kind, with its own settings.
    enum Output: Sendable {
        case folder(ply: Bool, align: AlignMode)
        case mcap
        case video(VideoContent, VideoLook, lossless: Bool)

        var kind: ExportKind {
            switch self {
            case .folder: return .folder
            case .mcap: return .mcap
            case .video: return .video
            }
        }
    }

    /// What an export that ran to its end (or was stopped) wrote.
    struct Report: Sendable {
        /// Frames as a person counts them.
        var frames: Int
        var plys = 0
        var stoppedBy: Int32?
        /// False when a stopped export left no file.
        var written = true
        var warnings: [String]
    }

    enum Outcome: Sendable {
        case finished(Report)
        case failed(String, framesWritten: Int)
    }

    let request: Request
    /// Frames written so far, as the exporter reports them (the worker writes, the loop reads).
    private let progress = Locked<ExportProgress?>(nil)
    private let cancelled = Locked(false)
    private let worker: LatestRequestWorker<Request, Outcome>
    /// The outcome once polled from the worker (kept: the panel and `wait` both ask).
    private var outcome: Outcome?

    init(_ request: Request) {
        self.request = request
        worker = LatestRequestWorker(name: "depthlens export") { [progress, cancelled] r, cancellation in
            Self.work(r, progress: progress) { cancelled.current || cancellation.isCancelled }
        }
        worker.submit(request)
    }

    /// Frames written so far, seconds since the start, and the outcome once the export is done.
    var state: (progress: ExportProgress?, outcome: Outcome?) {
        if outcome == nil { outcome = worker.poll() }
        return (progress.current, outcome)
    }

    /// Stops after the frame being written (the folder then lists what was written, a file holds it).
    func cancel() { cancelled.withLock { $0 = true } }

    /// Waits for the export to end and returns its outcome.
    func wait() -> Outcome {
        worker.waitUntilIdle()
        if outcome == nil { outcome = worker.poll() }
        return outcome!
    }

    private static func work(_ r: Request, progress box: Locked<ExportProgress?>, cancelled: @escaping @Sendable () -> Bool) -> Outcome {
        let result: Outcome
        var exporter: DatasetExporter?
        // A stop signal is reported as such; the cancel button (or a quit) as 0.
        let shouldStop = { () -> Int32? in StopSignals.pending ?? (cancelled() ? 0 : nil) }
        let progress = { (p: ExportProgress) in box.withLock { $0 = p } }
        do {
            let source = try r.source.makeSource(depthScale: r.depthScale)
            switch r.output {
            case let .folder(ply, align):
                try DatasetExporter.prepare(directory: r.target, overwrite: r.overwrite)
                let e = DatasetExporter(source: source, directory: r.target)
                exporter = e
                e.selection = r.selection
                e.contents = r.contents
                e.writePLY = ply
                e.calibrationOverride = r.calibration
                e.alignment = DepthAlignmentStage(mode: align)
                let s = try e.run(shouldStop: shouldStop, progress: progress)
                result = .finished(Report(frames: s.frameCount, plys: s.plyWritten, stoppedBy: s.stoppedBy, warnings: s.warnings))
            case .mcap:
                try MCAPExporter.prepare(path: r.target, overwrite: r.overwrite)
                let e = MCAPExporter(source: source, path: r.target)
                e.selection = r.selection
                e.contents = r.contents
                e.calibrationOverride = r.calibration
                e.keepOnStop = true   // as the folder keeps what was written
                let s = try e.run(shouldStop: shouldStop, progress: progress)
                result = .finished(Report(frames: max(s.colorFrames, s.depthFrames), stoppedBy: s.stoppedBy, written: s.written,
                                          warnings: s.warnings))
            case let .video(content, look, lossless):
                try VideoExporter.prepare(path: r.target, overwrite: r.overwrite, lossless: lossless)
                let e = VideoExporter(source: source, path: r.target)
                e.selection = r.selection
                e.content = content
                e.look = look
                e.lossless = lossless
                e.calibrationOverride = r.calibration
                let s = try e.run(shouldStop: shouldStop, progress: progress)
                result = .finished(Report(frames: s.framesWritten, stoppedBy: s.stoppedBy, written: s.written, warnings: s.warnings))
            }
        } catch {
            // What the folder lists (on a full disk the newest frames may have made room for the
            // index); an MCAP or video file is written whole or not at all.
            result = .failed("\(error)", framesWritten: exporter?.framesListed ?? 0)
        }
        return result
    }
}

/// The panel's "Export..." section and Ctrl+E: writes the timeline's selection (I and O mark it)
/// or the whole recording as a TUM-layout folder (`DatasetExporter`), ROS 2 MCAP (`MCAPExporter`)
/// or a colorized video colored as the view colors it (`VideoExporter`) — the writers behind
/// `depthlens convert` — on its own thread (`ViewerExportJob`). A progress bar with frames, fps and
/// time left and a cancel button while it runs; a notice says where the files are, or the error.
/// Quitting and the stop signals finish a running export first (`finish`): its folder lists
/// exactly the frames written. Nothing here builds a string per frame: the texts are remade only
/// when what they show changes (`TextMemo`).
final class ViewerExport {
    private let log: ViewerLog
    private let snapshotDir: String
    /// The folder (or file) field: a C buffer ImGui edits in place. Its ending follows the kind.
    var folder: [CChar]
    /// The folder the field was filled with when it was made here (not typed or `--export-dir`):
    /// a new one is picked after each export, so the next does not land in a full folder.
    private var madeFolder: String?
    var selection = TimelineSelection()
    /// The panel's choices: what to write, which range, alignment, overwriting.
    var choices = Choices()
    struct Choices {
        var kind = ExportKind.folder
        /// Export the whole recording even when marks are set.
        var whole = false
        var color = true, depth = true, ir = false, ply = false
        /// Depth registered to the color camera, at the color size (`convert --align color`).
        var alignToColor = false
        var overwrite = false
        /// The video's picture, and FFV1 in Matroska instead of H.264.
        var video = VideoContent.depth
        var lossless = false
    }
    /// The section starts open when `--export-dir` was given.
    let startsOpen: Bool
    /// Exports started (`--log-ui`'s state line).
    private(set) var started = 0
    /// The source the marks belong to (`SourceSession.generation`).
    private var markedGeneration = 0
    private var job: ViewerExportJob?
    /// The last outcome, kept in the panel (the notice fades).
    private(set) var lastResult = ""
    private var lastResultIsError = false
    private var texts = Texts()
    /// The section's lines, each remade only when what it shows changes.
    private struct Texts {
        var marks = TextMemo<SIMD2<Int>>()
        var range = TextMemo<RangeParts>()
        var progress = TextMemo<SIMD2<Int>>()
        var look = TextMemo<VideoLook>()
    }

    private struct RangeParts: Equatable {
        var selection: TimelineSelection
        var frameCount: Int?
        var whole: Bool
        var still: Bool
        var unavailable: Bool
    }

    init(options: ViewerOptions, log: ViewerLog) {
        self.log = log
        snapshotDir = options.snapshotDir
        folder = []
        startsOpen = options.exportDir != nil
        if let d = options.exportDir {
            setFolder(d)
            choices.kind = ExportKind(path: d)
            choices.lossless = d.lowercased().hasSuffix(".mkv")
        } else {
            pickFolder()
        }
    }

    var isRunning: Bool { job != nil }

    private func setFolder(_ s: String) {
        folder = Array(s.utf8CString.dropLast()) + [CChar](repeating: 0, count: 1024)
    }

    private var folderText: String { String(cBuffer: folder) }

    /// A fresh `<snapshot-dir>/export-YYYYMMDD-HHMMSS` in the folder field.
    private func pickFolder() {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.dateFormat = "yyyyMMdd-HHmmss"
        let base = (snapshotDir as NSString).appendingPathComponent("export-\(f.string(from: Date()))")
        let ending = fileEnding
        var name = base + ending, n = 2
        while FileManager.default.fileExists(atPath: name) { name = "\(base)-\(n)\(ending)"; n += 1 }
        setFolder(name)
        madeFolder = name
    }

    /// The ending a name of the chosen kind has ("" for a folder).
    private var fileEnding: String {
        switch choices.kind {
        case .folder: return ""
        case .mcap: return ".mcap"
        case .video: return choices.lossless ? ".mkv" : ".mp4"
        }
    }

    /// Picks the kind to write, and gives the field's name its ending.
    private func choose(_ kind: ExportKind) {
        guard choices.kind != kind else { return }
        choices.kind = kind
        renameForKind()
    }

    /// The field's name with the chosen kind's ending instead of another kind's.
    private func renameForKind() {
        var name = folderText.trimmingCharacters(in: .whitespaces)
        for e in [".mcap", ".mp4", ".mkv"] where name.lowercased().hasSuffix(e) { name = String(name.dropLast(e.count)) }
        guard !name.isEmpty else { return }
        let renamed = name + fileEnding
        if madeFolder == folderText { madeFolder = renamed }
        setFolder(renamed)
    }

    // MARK: What can be exported

    /// What the open source offers an export.
    enum Availability: Equatable {
        /// A recording with a timeline; `frameCount` nil when it never ends (the synthetic scene).
        case recording(frameCount: Int?)
        /// One frame (a pair of files, a snapshot).
        case still
        /// Nothing to export, and why.
        case unavailable(Reason)
    }

    enum Reason: Equatable {
        case pointList, live, noSource
        var text: String {
            switch self {
            case .pointList: return "a PLY point list has no color or depth frames to export"
            case .live: return "a live camera has no recording to export: record it with Ctrl+R"
            case .noSource: return "no source is open"
            }
        }
    }

    static func availability(source: FrameSource?, playback: PlaybackControl?, isPointList: Bool) -> Availability {
        guard let source else { return .unavailable(isPointList ? .pointList : .noSource) }
        if source.isLive { return .unavailable(.live) }
        if let p = playback { return .recording(frameCount: p.frameCount) }
        return .still
    }

    /// The frames the panel's settings select, or why none.
    func range(_ a: Availability) -> Result<ClosedRange<Int>?, Error> {
        switch a {
        case .unavailable(let why): return .failure(CaptureError.invalidState(why.text))
        case .still: return .success(nil)
        case .recording(let n):
            switch selection.frames(frameCount: n, whole: choices.whole) {
            case .success(let r): return .success(r)
            case .failure(let e): return .failure(e)
            }
        }
    }

    // MARK: Starting, following, finishing

    /// Starts an export of `source` (opened again on the export's thread) with the panel's settings;
    /// a video is colored by `look`, the view's colormap, range and blend factor.
    func start(source: SourceSpec, availability: Availability, options: ViewerOptions, look: VideoLook) {
        guard job == nil else { log.notice("export: one is running (Ctrl+E cancels it)", isError: true); return }
        let frames: ClosedRange<Int>?
        switch range(availability) {
        case .success(let r): frames = r
        case .failure(let e): log.notice("export: \(e)", isError: true); return
        }
        var contents: ExportContents = []
        if choices.color { contents.insert(.color) }
        if choices.depth { contents.insert(.depth) }
        if choices.kind != .video {
            guard !contents.isEmpty else { log.notice("export: tick color or depth to write", isError: true); return }
        }
        if choices.ir && choices.kind == .folder { contents.insert(.ir) }
        let dir = folderText.trimmingCharacters(in: .whitespaces)
        guard !dir.isEmpty else { log.notice("export: the \(choices.kind == .folder ? "folder" : "file name") is empty", isError: true); return }
        let output: ViewerExportJob.Output
        switch choices.kind {
        case .folder:
            if !choices.overwrite, let entries = try? FileManager.default.contentsOfDirectory(atPath: dir), !entries.isEmpty {
                log.notice("export: \(dir) exists and is not empty (tick \"overwrite\" to write into it)", isError: true)
                return
            }
            output = .folder(ply: choices.ply, align: choices.alignToColor ? .color : .none)
        case .mcap, .video:
            if choices.kind == .mcap {
                guard dir.lowercased().hasSuffix(".mcap") else { log.notice("export: an MCAP file's name ends in .mcap", isError: true); return }
                output = .mcap
            } else {
                do { try VideoExporter.prepare(path: dir, overwrite: true, lossless: choices.lossless) } catch {
                    log.notice("export: \(error)", isError: true)
                    return
                }
                output = .video(choices.video, look, lossless: choices.lossless)
            }
            if !choices.overwrite, FileManager.default.fileExists(atPath: dir) {
                log.notice("export: \(dir) exists (tick \"overwrite\" to replace it)", isError: true)
                return
            }
        }
        let total = frames?.count ?? 1
        job = ViewerExportJob(.init(
            source: source, target: dir, output: output, overwrite: choices.overwrite, selection: ExportSelection(frames: frames),
            contents: contents, calibration: options.calibration, depthScale: options.depthScale, total: total))
        started += 1
        lastResult = ""
        let what = frames.map { "frames \($0.lowerBound)-\($0.upperBound)" } ?? "its frame"
        log.notice("exporting \(what) to \(dir) (Ctrl+E cancels)")
        log.ui("export start \(total) \(dir)" + (choices.kind == .folder ? "" : " \(choices.kind.rawValue)"))
    }

    func cancel() {
        guard let job else { return }
        job.cancel()
        log.ui("export cancel")
    }

    /// Once a frame: forgets the marks when another source was opened (`SourceSession.generation`),
    /// and reports an export that ended. Nothing is allocated while none runs.
    func poll(sourceGeneration: Int) {
        if sourceGeneration != markedGeneration {
            markedGeneration = sourceGeneration
            selection.clear()
        }
        guard let j = job, case let (_, outcome?) = j.state else { return }
        job = nil
        report(outcome, request: j.request, why: nil)
    }

    /// Before the viewer exits (a quit, a stop signal, the loop failing): stops a running export
    /// after the frame it is writing and waits until its folder lists exactly what was written.
    func finish() {
        guard let j = job else { return }
        let signal = StopSignals.pending
        j.cancel()
        let outcome = j.wait()
        job = nil
        report(outcome, request: j.request, why: signal.map(StopSignals.name) ?? "quit")
    }

    private func report(_ outcome: ViewerExportJob.Outcome, request r: ViewerExportJob.Request, why exitReason: String?) {
        let dir = r.target
        switch outcome {
        case .finished(let s):
            let plys = s.plys > 0 ? " and \(s.plys) PLY files" : ""
            if let stop = s.stoppedBy {
                let by = stop == 0 ? (exitReason.map { "at \($0)" } ?? "cancelled") : "by \(StopSignals.name(stop))"
                let kept: String
                switch r.output.kind {
                case .folder: kept = "\(dir) lists every frame written"
                case .mcap, .video: kept = s.written ? "\(dir) holds every frame written" : "nothing written"
                }
                lastResult = "export stopped \(by) after \(s.frames) of \(r.total) frames; \(kept)"
                lastResultIsError = true
                log.ui("export stopped \(s.frames) \(dir)")
            } else {
                lastResult = "exported \(s.frames) frames\(plys) to \(dir)"
                lastResultIsError = false
                log.ui("export done \(s.frames) \(dir)")
            }
            for w in s.warnings { log.notice("export: \(w)", isError: true) }
        case .failed(let e, let written):
            lastResult = "export failed: \(e)" + (written > 0 ? "; the \(written) frames written are complete and listed in \(dir)" : "")
            lastResultIsError = true
            log.ui("export failed \(written) \(dir)")
        }
        log.notice(lastResult, isError: lastResultIsError, seconds: 10)
        if exitReason != nil || StopSignals.pending != nil {
            // The window is closing: say it where it stays.
            FileHandle.standardError.write(Data("depthlens: \(lastResult)\n".utf8))
        }
        if madeFolder == folderText { pickFolder() }
    }

    // MARK: The panel

    /// The section's widgets (the header is drawn by the caller). `current`: the playback index;
    /// `look`: the view's colormap, range and blend factor (a video's colors).
    func panel(availability a: Availability, current: Int?, source: SourceSpec, options: ViewerOptions, look: VideoLook) {
        var why: String?
        if case .unavailable(let r) = a { why = r.text }
        if let why { wrapped(why, color: [1, 0.7, 0.3]) }
        UI.beginDisabled(why != nil || job != nil)
        // Literal labels: nothing is built per frame.
        if UI.radio("TUM folder##exportkind", choices.kind == .folder) { choose(.folder) }
        UI.sameLine()
        if UI.radio("MCAP##exportkind", choices.kind == .mcap) { choose(.mcap) }
        UI.sameLine()
        if UI.radio("video##exportkind", choices.kind == .video) { choose(.video) }
        UI.text(choices.kind == .folder ? "folder" : "file")
        UI.sameLine()
        _ = UI.inputText("##exportfolder", &folder)

        // The timeline's marks (a recording only).
        var hasTimeline = false
        var frameCount: Int?
        if case .recording(let n) = a { hasTimeline = true; frameCount = n }
        UI.beginDisabled(!hasTimeline)
        let marks = texts.marks.text(for: SIMD2(selection.start ?? -1, selection.end ?? -1)) { m in
            "marks: " + (m.x < 0 ? "start" : "\(m.x)") + " - " + (m.y < 0 ? "end" : "\(m.y)") + "  (I, O)"
        }
        UI.text(marks)
        if UI.button("start here"), let c = current { selection.markStart(c) }
        UI.sameLine()
        if UI.button("end here"), let c = current { selection.markEnd(c) }
        UI.sameLine()
        if UI.button("clear marks") { selection.clear() }
        if UI.radio("marked range", !choices.whole) { choices.whole = false }
        UI.sameLine()
        if UI.radio("whole recording", choices.whole) { choices.whole = true }
        UI.endDisabled()
        var unavailable = false
        if case .unavailable = a { unavailable = true }
        let parts = RangeParts(selection: selection, frameCount: frameCount, whole: choices.whole, still: a == .still, unavailable: unavailable)
        wrapped(texts.range.text(for: parts) { p in
            if p.unavailable { return "range: none" }
            if p.still { return "range: the one frame" }
            switch selection.frames(frameCount: p.frameCount, whole: p.whole) {
            case .success(let r): return "range: frames \(r.lowerBound)-\(r.upperBound) (\(r.count))"
            case .failure(let e): return "range: none, \(e)"
            }
        })

        switch choices.kind {
        case .folder, .mcap:
            UI.checkbox("color", &choices.color)
            UI.sameLine()
            UI.checkbox("depth", &choices.depth)
            if choices.kind == .folder {
                UI.sameLine()
                UI.checkbox("ir", &choices.ir)
                UI.sameLine()
                UI.checkbox("ply", &choices.ply)
                UI.text("align depth")
                UI.sameLine()
                if UI.radio("none##align", !choices.alignToColor) { choices.alignToColor = false }
                UI.sameLine()
                if UI.radio("to color##align", choices.alignToColor) { choices.alignToColor = true }
            }
        case .video:
            if UI.radio("depth##videocontent", choices.video == .depth) { choices.video = .depth }
            UI.sameLine()
            if UI.radio("color##videocontent", choices.video == .color) { choices.video = .color }
            UI.sameLine()
            if UI.radio("side-by-side##videocontent", choices.video == .sideBySide) { choices.video = .sideBySide }
            UI.sameLine()
            if UI.radio("blend##videocontent", choices.video == .blend) { choices.video = .blend }
            if UI.checkbox("lossless (FFV1, .mkv)", &choices.lossless) { renameForKind() }
            wrapped(texts.look.text(for: look) { l in
                "colors as the view: \(l.colormap.rawValue), range \(l.rangeText), blend " + String(format: "%.2f", l.mix)
            })
        }
        UI.checkbox(choices.kind == .folder ? "overwrite a non-empty folder" : "overwrite an existing file", &choices.overwrite)
        UI.endDisabled()

        if let j = job {
            let p = j.state.progress
            let total = p?.total ?? j.request.total, written = p?.written ?? 0, fps = p?.framesPerSecond ?? 0
            dl_imgui_progress_bar(total > 0 ? Float(written) / Float(total) : 0, nil)
            UI.text(texts.progress.text(for: SIMD2(written, total)) { _ in
                guard p != nil else { return "opening the source..." }
                var s = "\(written) / \(total) frames, " + String(format: "%.1f fps", fps)
                if written > 0, fps > 0 { s += String(format: ", %.0f s left", Double(max(0, total - written)) / fps) }
                return s
            })
            if UI.button("cancel (Ctrl+E)") { cancel() }
        } else {
            UI.beginDisabled(why != nil)
            if UI.button("export (Ctrl+E)") { start(source: source, availability: a, options: options, look: look) }
            UI.endDisabled()
        }
        if !lastResult.isEmpty { wrapped(lastResult, color: lastResultIsError ? [1, 0.45, 0.4] : [0.6, 1, 0.6]) }
    }

    /// Text wrapped at the panel's edge (a reason, a folder path).
    private func wrapped(_ s: String, color c: SIMD3<Float>? = nil) {
        s.withCString { dl_imgui_text_wrapped($0, c?.x ?? 0, c?.y ?? 0, c?.z ?? 0, c == nil ? 0 : 1) }
    }
}

extension ViewerApp {
    private var exportAvailability: ViewerExport.Availability {
        ViewerExport.availability(source: session.source, playback: playback, isPointList: view3D.showsPLY)
    }

    /// A video export's colors: the view's colormap, range and blend factor.
    private var exportLook: VideoLook {
        VideoLook(colormap: settings.colormap, range: settings.depthRange, mix: settings.mix)
    }

    /// The panel's "Export..." section (collapsed at first unless `--export-dir` was given).
    func buildExportSection() {
        guard UI.header("Export...", open: export.startsOpen) else { return }
        export.panel(availability: exportAvailability, current: playback?.currentIndex, source: session.opened,
                     options: options, look: exportLook)
    }

    /// I and O: marks the export's first or last frame at the frame shown.
    func markExport(start: Bool) {
        // The playback index: the frame stepped or sought to, as the panel's frame slider shows it.
        guard case .recording = exportAvailability, let i = playback?.currentIndex else {
            notice("export marks: \(session.name) has no timeline", isError: true)
            return
        }
        if start { export.selection.markStart(i) } else { export.selection.markEnd(i) }
        logUI("export marks \(export.selection.start ?? -1) \(export.selection.end ?? -1)")
    }

    /// Ctrl+E: starts an export, or cancels the one running.
    func toggleExport() {
        if export.isRunning { export.cancel() } else {
            export.start(source: session.opened, availability: exportAvailability, options: options, look: exportLook)
        }
    }
}
