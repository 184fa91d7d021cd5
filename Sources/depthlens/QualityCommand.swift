import ArgumentParser
import Capture
import DepthKit
import Foundation
import GPUKit

struct QualityCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "quality",
        abstract: "Depth quality of a recording, as the RealSense Depth Quality Tool measures it (point the camera at a flat wall).",
        discussion: """
        Per frame: fill rate, the least-squares plane through the ROI (distance, angle), plane-fit RMS
        (mm and % of the distance, 0.5 % trimmed at each end in z), sub-pixel RMS (sources with a stereo
        baseline), Z accuracy (with --gt-mm) and temporal noise over the last --window frames; then the
        mean of each over the frames. docs/QUALITY.md gives every formula.
        """
    )

    @OptionGroup var input: SourceOptions
    @Option(help: "Region of interest: a centered fraction of width and height (0.8, 0.6, 0.4, 0.2, or 40%) or x,y,w,h in depth pixels. Default 0.4.")
    var roi: String?
    @Option(help: "Frame range A:B (0-based, inclusive; either end may be left out).")
    var frames: String?
    @Option(name: .customLong("gt-mm"), help: "Ground-truth distance to the wall in mm (Z accuracy).")
    var gtMM: Double?
    @Option(help: "Frames in the temporal-noise window (at least 2).")
    var window: Int = 40
    @Option(name: .customLong("baseline-mm"), help: "Stereo baseline in mm (instead of what the source recorded), for the sub-pixel RMS.")
    var baselineMM: Float?
    @Option(help: "Where the plane-fit sums run: cpu or gpu (falls back to the CPU without a Vulkan device).")
    var backend: String = "cpu"
    @Option(help: "Also write the per-frame metrics as CSV (the Depth Quality Tool's layout).")
    var csv: String?
    @Flag(help: "Print JSON instead of text.")
    var json = false

    func run() throws {
        let roiSpec = try roi.map(QualityROISpec.init(parsing:)) ?? .default
        var range: ClosedRange<Int> = 0...Int.max
        if let frames { range = try ExportSelection.parseRange(frames, name: "--frames", lowest: 0, highest: Int.max) }
        if let gtMM, !(gtMM > 0 && gtMM.isFinite) { throw DepthKitError.invalidArgument("--gt-mm must be a positive number of mm, got \(gtMM)") }
        guard window >= 2 else { throw DepthKitError.invalidArgument("--window must be at least 2, got \(window)") }
        if let b = baselineMM, !(b > 0 && b.isFinite) { throw DepthKitError.invalidArgument("--baseline-mm must be a positive number, got \(b)") }
        let sums: PlaneMomentsBackend
        switch backend.lowercased() {
        case "cpu": sums = CPUPlaneMoments()
        case "gpu":
            if let gpu = GPUBackend.gpuOrCPU() as? GPUFilterFactory {
                sums = try GPUPlaneMoments(context: gpu.context, library: gpu.library)
            } else {
                sums = CPUPlaneMoments()
            }
        default: throw DepthKitError.invalidArgument("--backend must be cpu or gpu, got '\(backend)'")
        }

        try input.check()
        let spec = try input.spec(or: nil)
        let camera = try input.calibrationOverride()
        let src = try input.makeSource(spec)
        let name = spec.path ?? spec.description
        let reader = try FrameReader(source: src, first: range.lowerBound)
        let baseline = baselineMM.map { $0 / 1000 } ?? src.stereoBaselineMeters
        var analyzer = QualityFrameAnalyzer(roi: roiSpec, groundTruthMM: gtMM, baselineMeters: baseline, window: window)
        var rows: [QualityRow] = []
        while var f = try reader.next() {
            if f.index > range.upperBound { break }
            // --calibration / --intrinsics: the depth camera the plane, distances and RMS use.
            let calibration = try camera.calibrate(&f, of: src)
            guard let depth = f.depth else { continue }
            if depth.accuracy == .relative, rows.isEmpty {
                warn("\(name): depth of relative accuracy; distances and RMS are in its arbitrary scale")
            }
            let row = try analyzer.analyze(depth, index: f.index, timestamp: f.timestamp, calibration: calibration, backend: sums)
            rows.append(row)
            if !json { print(row.line()) }
        }
        guard let last = rows.last else {
            throw DepthKitError.file(path: name, problem: "has no depth frame\(frames.map { " in --frames \($0)" } ?? "")")
        }
        for w in src.warnings { warn("\(name): \(w)") }
        let summary = QualitySummary(rows)
        if let csv {
            let text = QualityCSV.text(rows: rows, metadata: src.metadata, groundTruthMM: gtMM, distanceMM: last.metrics.distanceMM)
            try FileSupport.atomicWrite(Array(text.utf8), to: csv)
        }
        if json {
            let doc: [String: Any] = [
                "source": name, "backend": sums.backendName,
                "roi": ["x": last.metrics.roi.x, "y": last.metrics.roi.y, "width": last.metrics.roi.width, "height": last.metrics.roi.height],
                "baseline_mm": baseline.map { Double($0) * 1000 as Any } ?? NSNull(),
                "ground_truth_mm": gtMM.map { $0 as Any } ?? NSNull(),
                "window": window,
                "frames": rows.map { $0.json() },
                "summary": summary.json(),
            ]
            let data = try JSONSerialization.data(withJSONObject: doc, options: [.prettyPrinted, .sortedKeys])
            print(String(decoding: data, as: UTF8.self))
        } else {
            print(summary.text(roi: last.metrics.roi, baselineMM: baseline.map { $0 * 1000 }))
        }
    }
}
