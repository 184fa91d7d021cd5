import DepthKit
import Foundation

/// `--backend auto`: picks, per kernel and frame size, whichever of the CPU and the GPU ran faster
/// on this machine. The first time a (device, kernel, size) is seen both backends are timed on
/// the real input; the choice is kept in `$XDG_CACHE_HOME/depthlens/backend-choice.json` so later
/// runs don't measure again.
public final class BackendSelector {
    public struct Choice: Codable, Equatable {
        public var backend: String   // "cpu" or "gpu"
        public var cpuMs: Double
        public var gpuMs: Double
    }

    private let cachePath: String
    private var choices: [String: Choice]
    private let deviceName: String

    public init(deviceName: String, cachePath: String? = nil) {
        self.deviceName = deviceName
        self.cachePath = cachePath ?? BackendSelector.defaultCachePath()
        if let data = FileManager.default.contents(atPath: self.cachePath),
           let decoded = try? JSONDecoder().decode([String: Choice].self, from: data) {
            choices = decoded
        } else {
            choices = [:]
        }
    }

    public static func defaultCachePath() -> String {
        let env = ProcessInfo.processInfo.environment
        let base = env["XDG_CACHE_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? (NSHomeDirectory() as NSString).appendingPathComponent(".cache")
        return ((base as NSString).appendingPathComponent("depthlens") as NSString).appendingPathComponent("backend-choice.json")
    }

    /// The remembered choice, if any.
    public func cached(kernel: String, width: Int, height: Int) -> Choice? {
        choices[key(kernel, width, height)]
    }

    /// Returns "cpu" or "gpu" for this kernel and size, timing `run` on each backend (median of
    /// `repeats` runs after a warm-up) the first time.
    public func choose(kernel: String, width: Int, height: Int, repeats: Int = 3,
                       run: (_ gpu: Bool) throws -> Void) throws -> Choice {
        let k = key(kernel, width, height)
        if let c = choices[k] { return c }
        func time(_ gpu: Bool) throws -> Double {
            try run(gpu)
            var samples: [Double] = []
            for _ in 0..<max(1, repeats) {
                let t0 = DispatchTime.now().uptimeNanoseconds
                try run(gpu)
                samples.append(Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e6)
            }
            return samples.sorted()[samples.count / 2]
        }
        let cpu = try time(false), gpu = try time(true)
        let c = Choice(backend: gpu < cpu ? "gpu" : "cpu", cpuMs: cpu, gpuMs: gpu)
        choices[k] = c
        save()
        return c
    }

    private func key(_ kernel: String, _ w: Int, _ h: Int) -> String { "\(deviceName)|\(kernel)|\(w)x\(h)" }

    private func save() {
        let dir = (cachePath as NSString).deletingLastPathComponent
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let enc = JSONEncoder()
        enc.outputFormatting = [.prettyPrinted, .sortedKeys]
        guard let data = try? enc.encode(choices) else { return }
        // A cache: losing a write is harmless, a torn file is not (rename is atomic).
        let tmp = cachePath + ".\(getpid()).tmp"
        if FileManager.default.createFile(atPath: tmp, contents: data) {
            _ = rename(tmp, cachePath)
        }
    }
}
