import Foundation

/// Frames per second and per-stage milliseconds, averaged over about a second: the status line,
/// and `--stats` (one line a second on stdout).
struct FrameStats {
    /// CPU stages of one displayed frame, in order: "acquire" is vkAcquireNextImageKHR, "ui" the
    /// ImGui frame, "record" the window's render pass, "submit" handing the frame to the present
    /// thread (`FramePresenter`: vkQueueSubmit and vkQueuePresentKHR run there), "present" waiting
    /// for that thread to finish the last frame's (with `DEPTHLENS_PRESENT_THREAD=0` both run in "submit").
    static let stages = ["source", "upload", "kernels", "acquire", "ui", "record", "submit", "present", "gpu wait"]

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
    private var allocSum: UInt64 = 0, driverAllocSum: UInt64 = 0
    private var allocSums: [String: UInt64] = [:], driverAllocSums: [String: UInt64] = [:]
    /// depthlens' own allocations per frame by stage over the last second, and the driver's.
    private(set) var stageAllocs: [(String, Double)] = []
    private(set) var stageDriverAllocs: [(String, Double)] = []
    private var allocMax: UInt64 = 0, driverAllocMax: UInt64 = 0
    /// Heap allocations of the render loop's thread per frame over the last second (average and
    /// worst frame; see `AllocationCounter`): depthlens' own and the driver's (Vulkan driver and
    /// loader, GLFW, X11); and the resident set size at its end (MiB).
    private(set) var allocsPerFrame = 0.0
    private(set) var allocsWorstFrame: UInt64 = 0
    private(set) var driverAllocsPerFrame = 0.0
    private(set) var driverAllocsWorstFrame: UInt64 = 0
    private(set) var rssMiB = 0.0

    init(now: Double) { windowStart = now }

    mutating func add(stage: String, ms: Double) { sums[stage, default: 0] += ms }

    mutating func add(gpu k: String, ms v: Double) {
        if gpuSums[k] == nil { gpuOrder.append(k) }
        gpuSums[k, default: 0] += v
    }

    mutating func add(kernel k: String, ms v: Double) {
        if kernelSums[k] == nil { kernelOrder.append(k) }
        kernelSums[k, default: 0] += v
    }

    /// The allocations one stage of one frame made: own and the driver's.
    mutating func add(stage: String, allocations n: UInt64, driver d: UInt64) {
        allocSums[stage, default: 0] += n
        driverAllocSums[stage, default: 0] += d
    }

    mutating func drop(_ n: Int) { dropped += n }

    /// The allocations one frame made (counted by the caller around its frame): own and the driver's.
    mutating func add(allocations n: UInt64, driver d: UInt64) {
        allocSum += n
        allocMax = max(allocMax, n)
        driverAllocSum += d
        driverAllocMax = max(driverAllocMax, d)
    }

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
        allocsPerFrame = Double(allocSum) / n
        allocsWorstFrame = allocMax
        stageAllocs = Self.stages.map { ($0, Double(allocSums[$0] ?? 0) / n) }
        driverAllocsPerFrame = Double(driverAllocSum) / n
        driverAllocsWorstFrame = driverAllocMax
        stageDriverAllocs = Self.stages.map { ($0, Double(driverAllocSums[$0] ?? 0) / n) }
        allocSum = 0; allocMax = 0; driverAllocSum = 0; driverAllocMax = 0
        for k in allocSums.keys { allocSums[k] = 0 }
        for k in driverAllocSums.keys { driverAllocSums[k] = 0 }
        rssMiB = AllocationCounter.residentMiB()
        frames = 0
        sums.removeAll(keepingCapacity: true); gpuSums.removeAll(keepingCapacity: true); gpuOrder.removeAll(keepingCapacity: true)
        kernelSums.removeAll(keepingCapacity: true); kernelOrder.removeAll(keepingCapacity: true)
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
            + String(format: " | allocs/frame own %.2f (max %llu), driver %.2f (max %llu) | rss %.2f MiB", allocsPerFrame,
                     allocsWorstFrame, driverAllocsPerFrame, driverAllocsWorstFrame, rssMiB)
            + " | own allocs by stage: " + stageAllocs.map { String(format: "%@ %.1f", $0.0, $0.1) }.joined(separator: " ")
            + " | driver allocs by stage: " + stageDriverAllocs.map { String(format: "%@ %.1f", $0.0, $0.1) }.joined(separator: " ")
    }
}
