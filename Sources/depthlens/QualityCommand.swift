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

    @Option(help: ArgumentHelp(SourceSpec.help, valueName: "source"))
    var source: String
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
    @Option(help: "Units per meter of the source's 16-bit depth.")
    var depthScale: Float?
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

        let spec = try SourceSpec(parsing: source)
        let src = try spec.makeSource(depthScale: depthScale)
        let name = spec.path ?? spec.description
        let reader = try FrameReader(source: src, first: range.lowerBound)
        let baseline = baselineMM.map { $0 / 1000 } ?? src.stereoBaselineMeters
        var noise = TemporalNoiseWindow(capacity: window)
        var rows: [QualityRow] = []
        while let f = try reader.next() {
            if f.index > range.upperBound { break }
            guard let depth = f.depth else { continue }
            if depth.accuracy == .relative, rows.isEmpty {
                warn("\(name): depth of relative accuracy; distances and RMS are in its arbitrary scale")
            }
            let map = depth.depthFloat32()
            let r = try roiSpec.resolve(width: map.width, height: map.height)
            let k = depth.intrinsics.width == map.width && depth.intrinsics.height == map.height
                ? depth.intrinsics : (src.calibration?.depth.intrinsics ?? .default(width: map.width, height: map.height))
            let settings = QualitySettings(intrinsics: k, roi: r, baselineMeters: baseline, groundTruthMM: gtMM)
            let m = try DepthQuality.analyze(depth: map, settings: settings, backend: sums)
            noise.add(depth: map, roi: r)
            let row = QualityRow(index: f.index, timestamp: f.timestamp, metrics: m, temporalNoisePercent: noise.noisePercent())
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

/// One frame's metrics with its place in the recording.
struct QualityRow {
    var index: Int
    var timestamp: Double
    var metrics: QualityMetrics
    var temporalNoisePercent: Double?

    /// The metric values by their JSON keys (nil where not defined for this frame).
    var values: [(key: String, value: Double?)] {
        [("fill_rate", metrics.fillRate), ("distance_mm", metrics.distanceMM), ("angle_deg", metrics.angleDeg),
         ("plane_rms_mm", metrics.planeRMSMM), ("plane_rms_percent", metrics.planeRMSPercent),
         ("subpixel_rms_px", metrics.subpixelRMS), ("z_accuracy_percent", metrics.zAccuracyPercent),
         ("temporal_noise_percent", temporalNoisePercent)]
    }

    func json() -> [String: Any] {
        var d: [String: Any] = ["index": index, "timestamp": timestamp, "valid_pixels": metrics.validPixels,
                                "trimmed_points": metrics.trimmedPoints]
        for (k, v) in values { d[k] = v.map { $0 as Any } ?? NSNull() }
        return d
    }

    func line() -> String {
        func f(_ v: Double?, _ fmt: String) -> String { v.map { String(format: fmt, $0) } ?? "-" }
        let m = metrics
        return "frame \(index)  t=\(String(format: "%.4f", timestamp))  fill \(String(format: "%.2f", 100 * m.fillRate)) %"
            + "  distance \(f(m.distanceMM, "%.2f")) mm  angle \(f(m.angleDeg, "%.2f")) deg"
            + "  rms \(f(m.planeRMSMM, "%.3f")) mm (\(f(m.planeRMSPercent, "%.3f")) %)"
            + "  subpixel \(f(m.subpixelRMS, "%.4f")) px  z-accuracy \(f(m.zAccuracyPercent, "%.3f")) %"
            + "  temporal noise \(f(temporalNoisePercent, "%.3f")) %"
    }
}

/// The mean of each metric over the frames where it is defined; temporal noise as of the last frame.
struct QualitySummary {
    var frames: Int
    var means: [(key: String, value: Double?)]

    init(_ rows: [QualityRow]) {
        frames = rows.count
        let keys = rows[0].values.map(\.key)
        means = keys.enumerated().map { i, key in
            if key == "temporal_noise_percent" { return (key, rows.last!.temporalNoisePercent) }
            let vs = rows.compactMap { $0.values[i].value }
            return (key, vs.isEmpty ? nil : vs.reduce(0, +) / Double(vs.count))
        }
    }

    func json() -> [String: Any] {
        var d: [String: Any] = ["frames": frames]
        for (k, v) in means { d[k] = v.map { $0 as Any } ?? NSNull() }
        return d
    }

    func text(roi: QualityROI, baselineMM: Float?) -> String {
        var lines = ["summary over \(frames) frame\(frames == 1 ? "" : "s"), ROI \(roi) (x,y,w,h)"
                     + (baselineMM.map { String(format: ", baseline %.3f mm", $0) } ?? ", no stereo baseline")]
        for (k, v) in means {
            let shown = k == "fill_rate" ? v.map { 100 * $0 } : v
            let label = k == "fill_rate" ? "fill_rate_percent" : k
            lines.append("  \(label.padding(toLength: 24, withPad: " ", startingAt: 0)) \(shown.map { String(format: "%.4f", $0) } ?? "-")")
        }
        return lines.joined(separator: "\n")
    }
}

/// The Depth Quality Tool's CSV (`metrics_recorder::serialize_to_csv`): device and stream lines,
/// the environment, then one row per frame with the tool's columns and depthlens's extra ones.
enum QualityCSV {
    static func text(rows: [QualityRow], metadata: SourceMetadata, groundTruthMM: Double?, distanceMM: Double?) -> String {
        func q(_ s: String) -> String { s.contains(",") || s.contains("\"") ? "\"" + s.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : s }
        var out = "Device Info:\nType:,\(q(metadata.device?.name ?? metadata.kind))\n"
        out += "Serial Num:,\(q(metadata.device?.serial ?? "N/A"))\nFirmware Ver:,\(q(metadata.device?.firmware ?? "N/A"))\n"
        out += "\nStreaming profile:\nStream,Format,Resolution,FPS\n"
        for s in metadata.streams {
            out += "\(q(s.name)),\(q(s.encoding)),\(s.width)x\(s.height),\(s.fps.map { String(format: "%g", $0) } ?? "N/A")\n"
        }
        out += "\nEnvironment:\nPlane-Fit_distance_mm,\(distanceMM.map { String(format: "%f", $0) } ?? "N/A")\n"
        out += "Ground-Truth_Distance_mm,\(groundTruthMM.map { String(format: "%g", $0) } ?? "N/A")\n"
        out += "\nSample Id,Frame #,Timestamp (ms),Fill-Rate %,Z Accuracy %,Plane Fit RMS Error %,Subpixel RMS Error (pixel),"
            + "Plane Fit RMS Error mm,Distance mm,Angle deg,Temporal Noise %,\n"
        for (i, r) in rows.enumerated() {
            let m = r.metrics
            let cells: [Double?] = [100 * m.fillRate, m.zAccuracyPercent, m.planeRMSPercent, m.subpixelRMS, m.planeRMSMM,
                                    m.distanceMM, m.angleDeg, r.temporalNoisePercent]
            out += "\(i),\(r.index),\(String(format: "%.4f", r.timestamp * 1000)),"
                + cells.map { $0.map { String(format: "%.6f", $0) } ?? "" }.joined(separator: ",") + ",\n"
        }
        return out
    }
}
