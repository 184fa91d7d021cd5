import Capture
import DepthKit

/// `--source synthetic:COLORWxH[,DEPTHWxH]`: the synthetic scene with color and depth at their own
/// sizes (a RealSense-like 1280x720 color with 640x480 depth), for the viewer's speed check.
/// Two `SyntheticSource`s on one clock: color from the first, depth from the second.
final class SizedSyntheticSource: FrameSource, PlaybackControl, DepthRateLimiting {
    private let color: SyntheticSource
    private let depth: SyntheticSource
    private var lastDepth: DepthData?
    var name: String { "synthetic:\(color.width)x\(color.height),\(depth.width)x\(depth.height)" }
    var intrinsics: CameraIntrinsics { color.intrinsics }
    var isLive: Bool { false }

    init(colorSize: (Int, Int), depthSize: (Int, Int)) {
        // The color source's depth is never used: skip its depth pass.
        color = SyntheticSource(width: colorSize.0, height: colorSize.1, renderDepth: false)
        depth = SyntheticSource(width: depthSize.0, height: depthSize.1)
    }

    /// Parses "synthetic:1280x720,640x480" (depth defaults to the color size); nil for other specs.
    static func parse(_ text: String) throws -> SizedSyntheticSource? {
        guard text.hasPrefix("synthetic:") else { return nil }
        let sizes = text.dropFirst("synthetic:".count).split(separator: ",").map { part -> (Int, Int)? in
            let n = part.lowercased().split(separator: "x").compactMap { Int($0) }
            return n.count == 2 && (1...8192).contains(n[0]) && (1...8192).contains(n[1]) ? (n[0], n[1]) : nil
        }
        guard (1...2).contains(sizes.count), let c = sizes[0], let d = sizes.count == 2 ? sizes[1] : c else {
            throw CaptureError.invalidSource("--source '\(text)': expected synthetic:COLORWxH[,DEPTHWxH], e.g. synthetic:1280x720,640x480")
        }
        return SizedSyntheticSource(colorSize: c, depthSize: d)
    }

    func start() throws { try color.start(); try depth.start() }
    func stop() { color.stop(); depth.stop() }

    func nextFrame(now: Double) throws -> FrameSet? {
        guard let c = try color.nextFrame(now: now) else { return nil }
        // Both clocks start together, so depth is due with color; keep the last one if it is not.
        if let d = try depth.nextFrame(now: now) { lastDepth = d.depth }
        return FrameSet(color: c.color, depth: lastDepth, timestamp: c.timestamp, index: c.index)
    }

    var isPaused: Bool { color.isPaused }
    func pause() { color.pause(); depth.pause() }
    func resume() { color.resume(); depth.resume() }
    func step(by delta: Int) throws { try color.step(by: delta); try depth.step(by: delta) }
    func seek(toFrame index: Int) throws { try color.seek(toFrame: index); try depth.seek(toFrame: index) }
    var loop: Bool { get { false } set {} }
    var fps: Double? {
        get { color.fps }
        set { color.fps = newValue; depth.fps = newValue }
    }
    var frameCount: Int? { nil }
    /// The depth source skips its depth pass between depth frames; the last depth is kept meanwhile.
    var depthRateLimit: Double? {
        get { depth.depthRateLimit }
        set { depth.depthRateLimit = newValue }
    }
    var currentIndex: Int { color.currentIndex }
    var isFinished: Bool { false }
}
