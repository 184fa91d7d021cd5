import CImGui
import Capture
import DepthKit
import Foundation

/// The panel's Quality section: `depthlens quality`'s metrics (`QualityFrameAnalyzer`, the same
/// code) on the frames the window shows, live, over a ROI chosen in the panel (a centered 80, 60,
/// 40 or 20 %) or dragged on the 2D image; a history plot, and "Save CSV" writing the rows as
/// `quality --csv` does (`QualityCSV`). Owned by `ViewerUIState`.
///
/// The metrics run only while the section is open in the shown panel, on `QualityWorker`'s thread:
/// each new frame is handed over when the worker is free (a frame that comes while the last one
/// is analyzed is skipped, so the rows are the frames analyzed, not every frame shown), and the
/// row comes back a frame or more later. Closed, the section costs one header per frame.
final class QualityPanel {
    /// The Depth Quality Tool's ROI choices (fractions of width and height, centered).
    static let fractions: [Float] = [0.8, 0.6, 0.4, 0.2]
    static let fractionLabels = ["80 %", "60 %", "40 %", "20 %"]
    /// Rows the plots show.
    static let historyLength = 120
    /// Frames in the temporal-noise window (`quality --window`'s default).
    static let window = 40

    /// The section is open (as last drawn, or as Y set it).
    private(set) var isOpen = false
    /// Y's request, applied to the header the next time the panel is drawn.
    private var pendingOpen: Bool?
    /// The ROI as chosen: a centered fraction or the rectangle dragged on the image (depth pixels).
    private(set) var roi: QualityROISpec = .default
    /// The ground truth in mm for Z accuracy; 0: none.
    var groundTruthMM: Float = 0
    /// The rows analyzed since the ROI, the ground truth or the source last changed (what Save CSV writes).
    private(set) var rows: [QualityRow] = []
    /// The plots' values (fill rate %, plane-fit RMS mm) of the last `historyLength` rows, and the
    /// texts of the last row: made once per row, not per frame.
    private var history = History()
    /// Where a left-drag on the 2D image began: the depth pixel and the window point.
    var dragStart: (pixel: (x: Int, y: Int), x: Double, y: Double)?
    private let worker = QualityWorker()
    /// Bumped by every change that starts the rows over; a row of an older one is dropped.
    private var generation = 0
    /// What the last job was made from (the generation, the source's, the frame's index and time).
    private var lastJob: JobKey?
    private var sourceGeneration: Int?
    /// The ground-truth field's place as last printed (`--log-ui`, for tests that type into it).
    private var loggedLayout: SIMD4<Float>?
    /// Y opened the section: the panel scrolls to it, and back to where it was (`returnScroll`) when Y closes it.
    /// Frames it has been open (its layout settles after a scroll).
    private var scrollDue = false
    private var returnScroll: Float?
    private var openFrames = 0

    private struct JobKey: Equatable {
        var generation: Int, source: Int, index: Int, timestamp: Double
    }

    private struct History {
        var fill: [Float] = []
        var rms: [Float] = []
        var lines: [String] = []
        var fillText = ""
        var rmsText = ""
    }

    /// The section was opened or closed by Y: the header follows at the next panel draw.
    func toggle() {
        isOpen.toggle()
        pendingOpen = isOpen
        scrollDue = isOpen
    }

    /// The ROI of the last row (what the metrics used), for the rectangle on the image.
    var shownROI: QualityROI? { rows.last?.metrics.roi }

    /// Starts the rows over (a new ROI, ground truth or source).
    private func restart() {
        generation += 1
        rows.removeAll()
        history = History()
        lastJob = nil
    }

    func setROI(_ spec: QualityROISpec) {
        guard spec != roi else { return }
        roi = spec
        restart()
    }

    /// The rectangle between two depth pixels (both included).
    func setROI(from a: (x: Int, y: Int), to b: (x: Int, y: Int)) {
        setROI(.rect(QualityROI(x: min(a.x, b.x), y: min(a.y, b.y), width: abs(a.x - b.x) + 1, height: abs(a.y - b.y) + 1)))
    }

    /// Takes the worker's finished row (printing it as a `quality:` line through `log`) and hands
    /// it the shown frame when that is new and the worker is free. Called each frame while the
    /// section is open.
    func update(frame: FrameSet?, calibration: RGBDCalibration?, baselineMeters: Float?, sourceGeneration source: Int,
                log: ((String) -> Void)?) {
        if sourceGeneration != source {
            sourceGeneration = source
            restart()
        }
        if let done = worker.take(), done.generation == generation {
            switch done.outcome {
            case .row(let r):
                rows.append(r)
                record(r)
                log?("quality: roi \(r.metrics.roi)  \(r.line())")
            case .failed(let why):
                history.lines = [why]
                log?("quality: \(why)")
            }
        }
        guard let f = frame, let depth = f.depth else { return }
        let key = JobKey(generation: generation, source: source, index: f.index, timestamp: f.timestamp)
        guard key != lastJob else { return }
        let job = QualityWorker.Job(depth: depth, index: f.index, timestamp: f.timestamp, calibration: calibration,
                                    generation: generation, roi: roi, groundTruthMM: groundTruthMM > 0 ? Double(groundTruthMM) : nil,
                                    baselineMeters: baselineMeters)
        if worker.submit(job) { lastJob = key }
    }

    private func record(_ r: QualityRow) {
        func push(_ a: inout [Float], _ v: Float) {
            a.append(v)
            if a.count > Self.historyLength { a.removeFirst(a.count - Self.historyLength) }
        }
        let m = r.metrics
        push(&history.fill, Float(100 * m.fillRate))
        push(&history.rms, Float(m.planeRMSMM ?? .nan))
        func f(_ v: Double?, _ fmt: String, _ none: String) -> String { v.map { String(format: fmt, $0) } ?? none }
        history.lines = [
            "frame \(r.index), ROI \(m.roi) (x,y,w,h)",
            "valid pixels     \(m.validPixels) of \(m.roi.area)",
            String(format: "fill rate        %.2f %%", 100 * m.fillRate),
            "distance         " + f(m.distanceMM, "%.2f mm", "- (no plane)") + ", angle " + f(m.angleDeg, "%.2f deg", "-"),
            "plane-fit RMS    " + f(m.planeRMSMM, "%.3f mm", "-") + " (" + f(m.planeRMSPercent, "%.3f %%", "-") + ")",
            "sub-pixel RMS    " + f(m.subpixelRMS, "%.4f px", "- (no stereo baseline)"),
            "Z accuracy       " + f(m.zAccuracyPercent, "%.3f %%", "- (no ground truth)"),
            "temporal noise   " + f(r.temporalNoisePercent, "%.3f %%", "- (needs 2 frames)") + " over \(Self.window) frames",
        ]
        history.fillText = String(format: "fill %.2f %%", 100 * m.fillRate)
        history.rmsText = f(m.planeRMSMM, "RMS %.3f mm", "RMS -")
    }

    /// The section's widgets (the header itself included); true while it is open. `save` writes the
    /// CSV; with `logLayout` the ground-truth field's rectangle is printed when it moves (`layout: quality-gt`).
    func build(logLayout: Bool, save: () -> Void) -> Bool {
        if let p = pendingOpen {
            dl_imgui_set_next_open(p ? 1 : 0)
            pendingOpen = nil
            if !p, let y = returnScroll { dl_imgui_set_scroll_y(y) }
            returnScroll = p ? dl_imgui_scroll_y() : nil
        }
        isOpen = UI.header("Quality", open: false)
        openFrames = isOpen ? openFrames + 1 : 0
        guard isOpen else { return false }
        if scrollDue {
            dl_imgui_set_scroll_here_y(0)
            scrollDue = false
        }
        UI.text("ROI")
        for (i, p) in Self.fractions.enumerated() {
            UI.sameLine()
            if UI.radio(Self.fractionLabels[i], roi == .centered(p)) { setROI(.centered(p)) }
        }
        UI.sameLine()
        var isRect = false
        if case .rect = roi { isRect = true }
        _ = UI.radio("drag", isRect)
        if !isRect { UI.text("(or drag a rectangle on the 2D image)") }
        var gt = groundTruthMM
        UI.text("ground truth, mm (0: none)")
        UI.sameLine()
        if "##gt".withCString({ l in "%.1f".withCString { dl_imgui_input_float(l, &gt, $0) != 0 } }) {
            let v = gt.isFinite ? max(0, gt) : 0
            if v != groundTruthMM { groundTruthMM = v; restart() }
        }
        if logLayout && openFrames >= 3 {
            let r = UI.lastItemRect, rect = SIMD4(r.x, r.y, r.w, r.h)
            if rect != loggedLayout {
                loggedLayout = rect
                print(String(format: "layout: quality-gt %.0f %.0f %.0f %.0f", r.x, r.y, r.w, r.h))
                fflush(nil)
            }
        }
        for line in history.lines { UI.text(line) }
        UI.plot("##fill", history.fill, overlay: history.fillText, range: 0...100)
        UI.plot("##rms", history.rms, overlay: history.rmsText, range: nil)
        if UI.button("Save CSV") { save() }
        UI.sameLine()
        UI.text(rows.count == 1 ? "1 row" : "\(rows.count) rows")
        return true
    }

    /// The CSV of the rows (`quality --csv`'s layout); nil without rows.
    func csv(metadata: SourceMetadata) -> String? {
        guard let last = rows.last else { return nil }
        return QualityCSV.text(rows: rows, metadata: metadata, groundTruthMM: groundTruthMM > 0 ? Double(groundTruthMM) : nil,
                               distanceMM: last.metrics.distanceMM)
    }
}

extension UI {
    /// A small line plot over the panel's width; `range` nil scales to the values.
    static func plot(_ label: String, _ values: [Float], overlay: String, range: ClosedRange<Float>?) {
        values.withUnsafeBufferPointer { v in
            label.withCString { l in
                overlay.withCString {
                    dl_imgui_plot_lines(l, v.baseAddress, Int32(v.count), $0, range?.lowerBound ?? .nan, range?.upperBound ?? .nan, 48)
                }
            }
        }
    }

    /// A rectangle outline in window pixels, over everything.
    static func rect(_ x0: Float, _ y0: Float, _ x1: Float, _ y1: Float, color: SIMD3<Float> = [0.2, 1, 0.4]) {
        dl_imgui_overlay_rect(x0, y0, x1, y1, color.x, color.y, color.z)
    }
}

/// The Quality section's worker (`LatestRequestWorker`): one frame's metrics at a time
/// (`QualityFrameAnalyzer`, whose temporal-noise window lives here between frames). A frame handed
/// over while one is measured is refused (the section asks again with a later frame). `Sendable`:
/// the analyzer is in a `Locked` that only the worker's thread takes.
final class QualityWorker: Sendable {
    struct Job: Sendable {
        var depth: DepthData
        var index: Int
        var timestamp: Double
        var calibration: RGBDCalibration?
        var generation: Int
        var roi: QualityROISpec
        var groundTruthMM: Double?
        var baselineMeters: Float?
    }

    enum Outcome: Sendable {
        case row(QualityRow)
        case failed(String)
    }

    /// The analyzer of the generation last measured.
    private struct Analyzer: Sendable {
        var analyzer: QualityFrameAnalyzer?
        var generation = -1
    }

    private let worker: LatestRequestWorker<Job, (generation: Int, outcome: Outcome)>

    init() {
        let kept = Locked(Analyzer())
        worker = LatestRequestWorker(name: "depthlens quality") { job, _ in
            var analyzer = kept.withLock { s -> QualityFrameAnalyzer in
                if let a = s.analyzer, s.generation == job.generation { return a }
                s.generation = job.generation
                return QualityFrameAnalyzer(roi: job.roi, groundTruthMM: job.groundTruthMM, baselineMeters: job.baselineMeters,
                                            window: QualityPanel.window)
            }
            let outcome: Outcome
            do {
                outcome = .row(try analyzer.analyze(job.depth, index: job.index, timestamp: job.timestamp, calibration: job.calibration))
            } catch {
                outcome = .failed("\(error)")
            }
            kept.withLock { s in if s.generation == job.generation { s.analyzer = analyzer } }
            return (job.generation, outcome)
        }
    }

    /// Hands `job` to the worker; false (and nothing done) while the last job runs.
    func submit(_ job: Job) -> Bool { worker.submitIfIdle(job) }

    /// The last finished row, once.
    func take() -> (generation: Int, outcome: Outcome)? { worker.poll() }
}
