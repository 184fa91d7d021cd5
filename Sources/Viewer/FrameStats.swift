import Foundation

/// Frames per second and per-stage milliseconds, averaged over about a second: the status line,
/// and `--stats` (one line a second on stdout).
struct FrameStats {
    /// CPU stages of one displayed frame, in order.
    static let stages = ["source", "upload", "kernels", "present", "gpu wait"]

    private var windowStart: Double
    private var frames = 0
    private var sums: [String: Double] = [:]
    private var gpuSums: [String: Double] = [:]
    private var gpuOrder: [String] = []
    private var kernelSums: [String: Double] = [:]
    private var kernelOrder: [String] = []
    private(set) var dropped = 0
    /// The last completed second.
    private(set) var fps = 0.0
    private(set) var stageMs: [(String, Double)] = []
    private(set) var gpuMs: [(String, Double)] = []
    private(set) var kernelMs: [(String, Double)] = []

    init(now: Double) { windowStart = now }

    mutating func add(stage: String, ms: Double) { sums[stage, default: 0] += ms }

    mutating func add(gpu: [(String, Double)]) {
        for (k, v) in gpu {
            if gpuSums[k] == nil { gpuOrder.append(k) }
            gpuSums[k, default: 0] += v
        }
    }

    mutating func add(kernels: [(String, Double)]) {
        for (k, v) in kernels {
            if kernelSums[k] == nil { kernelOrder.append(k) }
            kernelSums[k, default: 0] += v
        }
    }

    mutating func drop(_ n: Int) { dropped += n }

    /// Counts one displayed frame; returns true when a new second's numbers are ready.
    mutating func frameDone(now: Double) -> Bool {
        frames += 1
        let dt = now - windowStart
        guard dt >= 1 else { return false }
        let n = Double(frames)
        fps = n / dt
        stageMs = Self.stages.map { ($0, (sums[$0] ?? 0) / n) }
        gpuMs = gpuOrder.map { ($0, gpuSums[$0]! / n) }
        kernelMs = kernelOrder.map { ($0, kernelSums[$0]! / n) }
        frames = 0
        sums.removeAll(); gpuSums.removeAll(); gpuOrder.removeAll(); kernelSums.removeAll(); kernelOrder.removeAll()
        windowStart = now
        return true
    }

    /// "fps 71.2 | cpu ms: source 1.20 (9%) upload 0.31 (2%) … | gpu ms: upload 0.10 jet 1.93 … | dropped 0"
    var line: String {
        let frameMs = fps > 0 ? 1000 / fps : 0
        func pct(_ v: Double) -> String { frameMs > 0 ? String(format: " (%.0f%%)", 100 * v / frameMs) : "" }
        let cpu = stageMs.map { String(format: "%@ %.2f", $0.0, $0.1) + pct($0.1) }.joined(separator: " ")
        let gpu = gpuMs.map { String(format: "%@ %.2f", $0.0, $0.1) }.joined(separator: " ")
        let kernels = kernelMs.map { String(format: "%@ %.2f", $0.0, $0.1) }.joined(separator: " ")
        return String(format: "fps %.1f (%.2f ms/frame)", fps, frameMs) + " | cpu ms: \(cpu)"
            + (kernels.isEmpty ? "" : " | kernels cpu ms: \(kernels)")
            + (gpu.isEmpty ? "" : " | gpu ms: \(gpu)") + " | dropped \(dropped)"
    }
}
