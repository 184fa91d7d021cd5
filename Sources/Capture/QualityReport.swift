import DepthKit
import Foundation

/// One frame's depth-quality metrics with its place in the recording: a row of `depthlens
/// quality`'s output and CSV, and of the viewer's Quality section (both make it with
/// `QualityFrameAnalyzer`).
public struct QualityRow: Sendable {
    public var index: Int
    public var timestamp: Double
    public var metrics: QualityMetrics
    public var temporalNoisePercent: Double?

    public init(index: Int, timestamp: Double, metrics: QualityMetrics, temporalNoisePercent: Double?) {
        self.index = index; self.timestamp = timestamp; self.metrics = metrics; self.temporalNoisePercent = temporalNoisePercent
    }

    /// The metric values by their JSON keys (nil where not defined for this frame).
    public var values: [(key: String, value: Double?)] {
        [("fill_rate", metrics.fillRate), ("distance_mm", metrics.distanceMM), ("angle_deg", metrics.angleDeg),
         ("plane_rms_mm", metrics.planeRMSMM), ("plane_rms_percent", metrics.planeRMSPercent),
         ("subpixel_rms_px", metrics.subpixelRMS), ("z_accuracy_percent", metrics.zAccuracyPercent),
         ("temporal_noise_percent", temporalNoisePercent)]
    }

    public func json() -> [String: Any] {
        var d: [String: Any] = ["index": index, "timestamp": timestamp, "valid_pixels": metrics.validPixels,
                                "trimmed_points": metrics.trimmedPoints]
        for (k, v) in values { d[k] = v.map { $0 as Any } ?? NSNull() }
        return d
    }

    /// The text line `depthlens quality` prints per frame (the viewer's `quality:` readout line too).
    public func line() -> String {
        func f(_ v: Double?, _ fmt: String) -> String { v.map { String(format: fmt, $0) } ?? "-" }
        let m = metrics
        return "frame \(index)  t=\(String(format: "%.4f", timestamp))  fill \(String(format: "%.2f", 100 * m.fillRate)) %"
            + "  distance \(f(m.distanceMM, "%.2f")) mm  angle \(f(m.angleDeg, "%.2f")) deg"
            + "  rms \(f(m.planeRMSMM, "%.3f")) mm (\(f(m.planeRMSPercent, "%.3f")) %)"
            + "  subpixel \(f(m.subpixelRMS, "%.4f")) px  z-accuracy \(f(m.zAccuracyPercent, "%.3f")) %"
            + "  temporal noise \(f(temporalNoisePercent, "%.3f")) %"
    }
}

/// The per-frame analysis both `depthlens quality` and the viewer run: the ROI resolved for the
/// frame's size, the depth camera's intrinsics picked, `DepthQuality.analyze`, and the frame added
/// to the temporal-noise window.
public struct QualityFrameAnalyzer: Sendable {
    public var roi: QualityROISpec
    public var groundTruthMM: Double?
    /// The stereo baseline in meters (sub-pixel RMS); nil for sources without one.
    public var baselineMeters: Float?
    public private(set) var noise: TemporalNoiseWindow

    public init(roi: QualityROISpec = .default, groundTruthMM: Double? = nil, baselineMeters: Float? = nil, window: Int = 40) {
        self.roi = roi; self.groundTruthMM = groundTruthMM; self.baselineMeters = baselineMeters
        noise = TemporalNoiseWindow(capacity: window)
    }

    /// The depth camera's intrinsics for a depth map of `map`'s size: the frame's own when they are
    /// for that size, else the calibration's, else the defaults.
    public static func intrinsics(_ depth: DepthData, map: PixelBuffer, calibration: RGBDCalibration?) -> CameraIntrinsics {
        depth.intrinsics.width == map.width && depth.intrinsics.height == map.height
            ? depth.intrinsics : (calibration?.depth.intrinsics ?? .default(width: map.width, height: map.height))
    }

    /// One frame's row. Throws `DepthKitError.invalidArgument` when the ROI does not fit the frame.
    public mutating func analyze(_ depth: DepthData, index: Int, timestamp: Double, calibration: RGBDCalibration?,
                                 backend: PlaneMomentsBackend = CPUPlaneMoments()) throws -> QualityRow {
        let map = depth.depthFloat32()
        let r = try roi.resolve(width: map.width, height: map.height)
        let k = Self.intrinsics(depth, map: map, calibration: calibration)
        let settings = QualitySettings(intrinsics: k, roi: r, baselineMeters: baselineMeters, groundTruthMM: groundTruthMM)
        let m = try DepthQuality.analyze(depth: map, settings: settings, backend: backend)
        noise.add(depth: map, roi: r)
        return QualityRow(index: index, timestamp: timestamp, metrics: m, temporalNoisePercent: noise.noisePercent())
    }
}

/// The mean of each metric over the frames where it is defined; temporal noise as of the last frame.
public struct QualitySummary {
    public var frames: Int
    public var means: [(key: String, value: Double?)]

    public init(_ rows: [QualityRow]) {
        frames = rows.count
        let keys = rows[0].values.map(\.key)
        means = keys.enumerated().map { i, key in
            if key == "temporal_noise_percent" { return (key, rows.last!.temporalNoisePercent) }
            let vs = rows.compactMap { $0.values[i].value }
            return (key, vs.isEmpty ? nil : vs.reduce(0, +) / Double(vs.count))
        }
    }

    public func json() -> [String: Any] {
        var d: [String: Any] = ["frames": frames]
        for (k, v) in means { d[k] = v.map { $0 as Any } ?? NSNull() }
        return d
    }

    public func text(roi: QualityROI, baselineMM: Float?) -> String {
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
/// `depthlens quality --csv` and the viewer's "Save CSV" both write it.
public enum QualityCSV {
    public static func text(rows: [QualityRow], metadata: SourceMetadata, groundTruthMM: Double?, distanceMM: Double?) -> String {
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
