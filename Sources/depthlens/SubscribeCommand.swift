import ArgumentParser
import Capture
import DepthKit
import Foundation

/// `depthlens subscribe`: how a DDS stream arrives here, without a window.
struct SubscribeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "subscribe",
        abstract: "Receive a dds: source for a while and report how it arrived: frames, rate, losses, latency (no window).",
        discussion: "Latency is from the publisher's DDS source timestamp (when it wrote the color sample) to the frame in "
            + "depthlens' hands (nextFrame), so it needs the two machines' clocks in agreement (it is exact on one machine). "
            + "Received counts image samples (color and depth); lost counts those missing on the way (gaps in each writer's "
            + "sequence numbers: a sample with a lost fragment, one the kernel or the reader's history dropped; or Cyclone DDS's "
            + "sample-lost count when higher). Images whose header claims more than --max-image (default 8192x8192, never above "
            + "the topic's camera_info size) are dropped before decoding and counted (oversize_samples), with one notice. "
            + "--json prints {frames, seconds, fps, received_samples, lost_samples, overrun, "
            + "dropped, oversize_samples, oversize, latency_ms: {median, p90, p99, max}, stages_ms, stamps}; stages_ms splits the latency into the steps of "
            + "the color sample's way, each {median, p90}: write_to_received (the publisher's write, the network, Cyclone's "
            + "reassembly), received_to_taken (the copy out of Cyclone's buffers, the delivery to the reader), taken_to_converted "
            + "(decoding, pixel conversion), converted_to_queued (waiting for the paired depth), queued_to_handed (waking the consumer)."
    )

    /// `--source` must be a dds: source (dds:TOPIC[,depth=TOPIC][,domain=N][,max-image=WxH] or dds:/NAMESPACE).
    @OptionGroup var input: SourceOptions
    @Option(help: "Seconds to receive after the first frame (at most).")
    var seconds: Double = 10
    @Option(help: "Stop after this many frames.")
    var frames: Int?
    @Option(help: "Stop when no frame came for this many seconds.")
    var idle: Double?
    @Flag(help: "Print JSON.")
    var json = false
    @Flag(help: "Also list every frame's header stamp (JSON: stamps).")
    var stamps = false

    struct Report: Encodable {
        var frames: Int
        var seconds: Double
        var fps: Double
        var received_samples: Int
        var lost_samples: Int
        var overrun: Int
        var dropped: [String: Int]
        /// Samples over the size limit, dropped before decoding: in all and by topic.
        var oversize_samples: Int
        var oversize: [String: Int]
        var latency_ms: [String: Double]
        var stages_ms: [String: [String: Double]]
        var stamps: [Double]?
    }

    func run() throws {
        guard seconds > 0, seconds <= 3600 else { throw DepthKitError.invalidArgument("--seconds must be in (0, 3600]") }
        try input.check()
        if let given = input.source, case .dds = given {} else if input.source != nil {
            throw DepthKitError.invalidArgument("--source must be a dds: source")
        }
        // With --max-image as its max-image=.
        guard case let .dds(topics) = try input.spec(or: nil) else { throw DepthKitError.invalidArgument("--source must be a dds: source") }
        // It counts what arrives: nothing here reads depth units or a camera.
        if let given = [input.depthScale != nil ? "--depth-scale" : nil, input.calibration != nil ? "--calibration" : nil,
                        input.intrinsics != nil ? "--intrinsics" : nil].compactMap({ $0 }).first {
            throw DepthKitError.invalidArgument("\(given): subscribe counts the images that arrive (ROS depth images carry their units); drop it")
        }
        let src = DDSSource(topics: topics)
        src.onWarning = { FileHandle.standardError.write(Data("depthlens: \($0)\n".utf8)) }
        try src.start()
        defer { src.stop() }
        StopSignals.install()
        let t0 = ProcessInfo.processInfo.systemUptime
        if let f = frames, f < 1 { throw DepthKitError.invalidArgument("--frames must be at least 1") }
        if let i = idle, !(i > 0) { throw DepthKitError.invalidArgument("--idle must be a positive number of seconds") }
        var count = 0
        var frameStamps: [Double] = []
        var last = t0
        while StopSignals.pending == nil, ProcessInfo.processInfo.systemUptime - t0 < seconds, count < (frames ?? .max) {
            let now = ProcessInfo.processInfo.systemUptime
            if let f = try src.nextFrame(now: now) {
                count += 1
                last = now
                if stamps { frameStamps.append(f.timestamp) }
            } else {
                if let idle, now - last > idle { break }
                // Woken by the receive thread when a frame is ready (no polling interval in the latency).
                src.waitForFrame(seconds: 0.05)
            }
        }
        let frames = count
        let elapsed = last - t0
        let timings = src.timings.suffix(frames)
        let l = timings.map(\.latency).sorted()
        func quantile(_ l: [Double], _ p: Double) -> Double { l.isEmpty ? 0 : (l[min(l.count - 1, Int(Double(l.count) * p))] * 1e6).rounded() / 1e3 }
        func q(_ p: Double) -> Double { quantile(l, p) }
        var steps: [String: [Double]] = [:]
        for t in timings { for step in t.steps { steps[step.name, default: []].append(step.seconds) } }
        let stages = steps.mapValues { v -> [String: Double] in
            let sorted = v.sorted()
            return ["median": quantile(sorted, 0.5), "p90": quantile(sorted, 0.9)]
        }
        let report = Report(frames: frames, seconds: elapsed, fps: elapsed > 0 ? Double(max(frames - 1, 0)) / elapsed : 0, received_samples: src.samplesReceived, lost_samples: src.samplesLost,
                            overrun: src.framesOverrun, dropped: src.droppedSamples,
                            oversize_samples: src.oversizeSamples.values.reduce(0, +), oversize: src.oversizeSamples,
                            latency_ms: ["median": q(0.5), "p90": q(0.9), "p99": q(0.99), "max": q(1)], stages_ms: stages,
                            stamps: stamps ? frameStamps : nil)
        if json {
            let enc = JSONEncoder()
            enc.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try enc.encode(report), as: UTF8.self))
        } else {
            print(String(format: "%d frames in %.1f s (%.2f fps), %d images received, %d lost, %d overrun; latency median %.2f ms, p90 %.2f, p99 %.2f, max %.2f",
                         frames, elapsed, report.fps, report.received_samples, report.lost_samples, report.overrun, q(0.5), q(0.9), q(0.99), q(1)))
            for (t, n) in report.dropped.sorted(by: { $0.key < $1.key }) { print("  \(n) bad samples dropped on \(t)") }
            for (t, n) in report.oversize.sorted(by: { $0.key < $1.key }) { print("  \(n) samples over the \(src.maxImage) limit dropped on \(t)") }
        }
    }
}
