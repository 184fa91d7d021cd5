import DepthKit
import Foundation

/// What a `dds:` source names: image topics, or a realsense2_camera-style namespace.
public struct DDSTopics: Equatable, Sendable, CustomStringConvertible {
    public enum Target: Equatable, Sendable {
        /// A color (or depth-only) image topic and an optional depth topic.
        case topics(color: String, depth: String?)
        /// `NAMESPACE/color/image_raw` (or its `/compressed`), and depth from `depth/image_rect_raw`,
        /// `depth/image_raw` or `aligned_depth_to_color/image_raw`, whichever publishes first.
        case namespace(String)
    }
    public var target: Target
    /// ROS_DOMAIN_ID; nil is 0.
    public var domain: Int?
    /// The largest image taken (`max-image=WxH`); nil: `DDSImageLimit.standard`.
    public var maxImage: DDSImageLimit?

    public init(target: Target, domain: Int? = nil, maxImage: DDSImageLimit? = nil) {
        self.target = target; self.domain = domain; self.maxImage = maxImage
    }

    /// Parses what follows `dds:`: `TOPIC[,depth=TOPIC][,domain=N][,max-image=WxH]` or
    /// `/NAMESPACE[,domain=N][,max-image=WxH]`.
    /// A topic's last name has "image" in it or is `compressed`; anything else is a namespace.
    /// Throws the reason, one line.
    public static func parse(_ rest: String) throws -> DDSTopics {
        let parts = rest.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        guard let first = parts.first, !first.isEmpty else {
            throw CaptureError.invalidSource("missing topic after 'dds:' (e.g. dds:/camera/camera/color/image_raw or dds:/camera/camera)")
        }
        func checkName(_ t: String) throws {
            guard t.hasPrefix("/"), t.count > 1, !t.hasSuffix("/"), !t.contains("//"),
                  t.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "/") }) else {
                throw CaptureError.invalidSource("'\(t)' is not an absolute ROS 2 topic name (/a/b_c, letters, digits, _)")
            }
        }
        try checkName(first)
        var depth: String?, domain: Int?, maxImage: DDSImageLimit?
        for option in parts.dropFirst() {
            if option.hasPrefix("depth=") {
                guard depth == nil else { throw CaptureError.invalidSource("depth= given twice") }
                let d = String(option.dropFirst(6))
                try checkName(d)
                guard d != first else { throw CaptureError.invalidSource("color and depth are the same topic \(d)") }
                depth = d
            } else if option.hasPrefix("domain=") {
                guard domain == nil else { throw CaptureError.invalidSource("domain= given twice") }
                guard let n = Int(option.dropFirst(7)), (0...232).contains(n) else {
                    throw CaptureError.invalidSource("domain '\(option.dropFirst(7))' is not a DDS domain id 0…232")
                }
                domain = n
            } else if option.hasPrefix("max-image=") {
                guard maxImage == nil else { throw CaptureError.invalidSource("max-image= given twice") }
                maxImage = try DDSImageLimit.parse(String(option.dropFirst(10)))
            } else {
                throw CaptureError.invalidSource("unknown option '\(option)' (expected depth=TOPIC, domain=N or max-image=WxH)")
            }
        }
        if isImageTopic(first) {
            if let d = depth, d.hasSuffix("/compressed") {
                throw CaptureError.invalidSource("depth topic \(d) is compressed; depth is read as sensor_msgs/Image")
            }
            return DDSTopics(target: .topics(color: first, depth: depth), domain: domain, maxImage: maxImage)
        }
        guard depth == nil else {
            throw CaptureError.invalidSource("'\(first)' is a namespace (its last name has no 'image'); depth= goes with an image topic")
        }
        return DDSTopics(target: .namespace(first), domain: domain, maxImage: maxImage)
    }

    static func isImageTopic(_ t: String) -> Bool {
        let last = t.split(separator: "/").last.map(String.init) ?? ""
        return last.contains("image") || last == "compressed"
    }

    public var description: String {
        let d = (domain.map { ",domain=\($0)" } ?? "") + (maxImage.map { ",max-image=\($0)" } ?? "")
        switch target {
        case let .topics(c, depth): return "dds:\(c)" + (depth.map { ",depth=\($0)" } ?? "") + d
        case let .namespace(n): return "dds:\(n)\(d)"
        }
    }
}

/// A live RGB-D stream from ROS 2 topics over DDS (Eclipse Cyclone DDS; no ROS install): the
/// `sensor_msgs/Image` (or JPEG/PNG `CompressedImage`) color and depth topics a ROS 2 camera
/// driver publishes, their `camera_info` and `/tf_static`.
///
/// **Receiving.** Each image sample is taken on the thread that delivered it (Cyclone's receive
/// thread, through a listener; a thread of the source's own takes transforms and what is late),
/// decoded (`ROS2Message`,
/// the decoders of the `ros2:` recordings, over the bytes as on the wire; then `DDSImages`' tighter
/// checks) and converts it (`ROSImageDecoding`): color to rgba8, depth to meters
/// (`16UC1`/`mono16` millimeters, `32FC1` meters). Readers are best-effort and volatile, so they
/// match best-effort (realsense2_camera, the sensor-data profile) and reliable writers, volatile
/// and transient-local ones; `/tf_static` is read reliable and transient-local, so a late joiner
/// still gets the transforms. Frames keep their header stamps (`FrameSet.timestamp`); depth pairs
/// with color by stamp within half a frame interval (`FrameSynchronizer`), a color frame waiting
/// at most one interval for its depth.
///
/// **Calibration.** Intrinsics and distortion from each image topic's sibling `camera_info`;
/// depth→color extrinsics by walking the TF tree between the two images' frame ids (`/tf_static`,
/// then `/tf`); registered depth (`aligned_depth_to_color`) takes the color camera.
///
/// **Untrusted input.** A sample that does not decode, whose `step · height` exceeds its data, with
/// an unknown encoding, a size over 16384 a side, or a camera_info with non-finite or implausible
/// values is dropped and counted (`droppedSamples`), with one warning per topic naming it; nothing
/// traps. An image whose header claims more than the size limit (`DDSImageLimit`: `max-image=WxH`,
/// default 8192x8192, never above the topic's camera_info size) is dropped before anything is
/// decoded or allocated for it and counted apart (`oversizeSamples`), with one notice per topic.
/// What a peer can grow is capped: writers followed per topic, TF frames, notices (`forgotten`). A stream silent for 2 s gets a warning, and another when it resumes; frames flow again
/// without a restart.
///
/// `@unchecked Sendable`: `start`, `stop` and `nextFrame` run on the consumer's thread, which owns
/// `thread`, `participant`, `waitset`, `receiver`, `deliveredWarnings`, `onWarning`, `startTimeout` and
/// `silenceSeconds`; the `Receiver` is used under its own lock (its doc); what it and the consumer
/// both touch is in `shared`, every field of it under `shared.lock`.
public final class DDSSource: FrameSource, DeliveryCounting, FrameReadiness, @unchecked Sendable {
    public let topics: DDSTopics
    public var name: String { topics.description }
    public var isLive: Bool { true }
    /// How long `start` waits for the first frame; 0: it does not wait (a notice says when nothing
    /// was heard for `silenceSeconds`), as the viewer opens it.
    public var startTimeout: Double
    /// Seconds without samples after which a stream is called silent.
    public var silenceSeconds: Double = 2

    private let shared = Shared()
    private var thread: Thread?
    private var participant: DDSParticipant?
    private var waitset: DDSWaitset?
    /// Kept until the participant is closed: Cyclone's listeners point at it.
    private var receiver: Receiver?
    private var deliveredWarnings = 0

    public init(topics: DDSTopics, startTimeout: Double = 5) {
        self.topics = topics
        self.startTimeout = startTimeout
    }

    /// State both threads reach.
    ///
    /// `@unchecked Sendable`: every `var` is read and written only under `lock` (`with`); a new
    /// frame is signalled on it (`waitForFrame`).
    final class Shared: @unchecked Sendable {
        let lock = NSCondition()
        /// Frames for the consumer with their color sample's way so far.
        var frames: [(frame: FrameSet, timing: DDSFrameTiming)] = []
        /// Each delivered frame's way from its publication to `nextFrame` handing it over, the latest
        /// 100000.
        var timings: [DDSFrameTiming] = []
        /// Image samples received and lost on the way (`DeliveryCounts`).
        var delivery = DeliveryCounts()
        /// The latest `maxWarnings` notices; `warningsDropped` older ones were let go (a peer can make
        /// one a frame: a stream whose size changes every sample).
        var warnings: [String] = []
        var warningsDropped = 0
        var calibration: RGBDCalibration?
        var colorIntrinsics: CameraIntrinsics?
        var streams: [SourceMetadata.Stream] = []
        var dropped: [String: Int] = [:]
        /// Samples over the size limit (`DDSImageLimit`), by topic: dropped before decoding.
        var oversize: [String: Int] = [:]
        /// What the receiver's caps let go (`DDSSource.forgotten`).
        var forgotten = DDSSource.Forgotten()
        var framesReceived = 0
        var framesOverrun = 0
        var running = true
        var fps: Double?
        func with<T>(_ body: (Shared) -> T) -> T { lock.lock(); defer { lock.unlock() }; return body(self) }

        /// Appends a notice, letting the oldest go past `maxWarnings` (under `lock`).
        func append(warning: String) {
            warnings.append(warning)
            if warnings.count > DDSSource.maxWarnings {
                let extra = warnings.count - DDSSource.maxWarnings
                warnings.removeFirst(extra)
                warningsDropped += extra
                forgotten.warnings += extra
            }
        }
    }

    /// Most notices kept for the consumer (it takes them with each `nextFrame`).
    static let maxWarnings = 256
    /// Most writers whose sequence numbers are followed per image topic (the least recently heard goes).
    static let maxWritersPerTopic = 64
    /// Most TF frames kept (the least recently updated goes), and the longest frame id taken.
    static let maxTFFrames = 1024
    static let maxFrameIDLength = 256

    /// What the receiver's caps let go: state a peer can grow (writers, TF frames, notices) is
    /// bounded, the oldest dropped first and counted here.
    public struct Forgotten: Sendable, Equatable {
        /// Writers whose sequence numbers were no longer followed (a gap after one comes back is not seen).
        public var writers = 0
        /// TF frames let go (a calibration needing one waits for it again).
        public var tfFrames = 0
        /// Notices let go before the consumer took them.
        public var warnings = 0
    }

    public var intrinsics: CameraIntrinsics {
        shared.with { $0.colorIntrinsics ?? $0.calibration?.color.intrinsics } ?? .default(width: 640, height: 480)
    }
    public var calibration: RGBDCalibration? { shared.with { $0.calibration } }
    public var warnings: [String] { shared.with { $0.warnings } }
    /// What the receiver's caps let go so far.
    public var forgotten: Forgotten { shared.with { $0.forgotten } }
    /// Samples over the size limit, dropped before decoding, by topic (one notice per topic).
    public var oversizeSamples: [String: Int] { shared.with { $0.oversize } }
    /// The size limit of network images before any camera_info lowers it.
    public var maxImage: DDSImageLimit { topics.maxImage ?? .standard }
    public var onWarning: ((String) -> Void)?
    public var nominalFrameRate: Double? { shared.with { $0.fps } }
    public var depthUnitsPerMeter: Float? { 1000 }
    /// Samples dropped as bad input, by topic.
    public var droppedSamples: [String: Int] { shared.with { $0.dropped } }
    /// Seconds from publication (the writer's source timestamp) to `nextFrame`, per delivered frame
    /// (the latest 100000; clocks of two machines must agree for this to mean anything).
    public var latencies: [Double] { shared.with { $0.timings.map(\.latency) } }
    /// Each delivered frame's way from publication to `nextFrame`, step by step (the latest 100000).
    public var timings: [DDSFrameTiming] { shared.with { $0.timings } }
    /// Image samples lost on the way: gaps in each writer's sequence numbers (a sample with a lost
    /// fragment, one the kernel dropped, one the reader's history let go before it was taken), or what
    /// Cyclone reports lost (sample_lost), whichever is more, summed over the image topics.
    public var samplesLost: Int { shared.with { $0.delivery.lost } }
    /// Image samples received (color and depth, good or bad).
    public var samplesReceived: Int { shared.with { $0.delivery.received } }
    /// Frames the consumer did not take before newer ones pushed them out.
    public var framesOverrun: Int { shared.with { $0.framesOverrun } }
    /// Received, lost and overrun together (a short lock; any thread).
    public var deliveryCounts: DeliveryCounts { shared.with { $0.delivery } }
    public var delivery: DeliveryCounting? { self }
    public var readiness: FrameReadiness? { self }
    public var metadata: SourceMetadata {
        shared.with { s in
            var tags = ["domain": "\(topics.domain ?? 0)"]
            for (t, n) in s.dropped { tags["dropped \(t)"] = "\(n)" }
            for (t, n) in s.oversize { tags["over \(topics.maxImage ?? .standard) \(t)"] = "\(n)" }
            return SourceMetadata(kind: "dds", streams: s.streams, tags: tags)
        }
    }

    /// Most frames kept for the consumer; older ones are dropped (and counted) first.
    static let queueLength = 4

    public func start() throws {
        stop()
        shared.with { s in
            s.frames.removeAll(); s.warnings.removeAll(); s.warningsDropped = 0; s.dropped.removeAll(); s.oversize.removeAll()
            s.forgotten = Forgotten(); s.running = true
            s.framesReceived = 0; s.framesOverrun = 0; s.delivery = DeliveryCounts()
        }
        deliveredWarnings = 0
        let p = try DDSParticipant(domain: topics.domain ?? 0)
        let ws = try DDSWaitset(p)
        let receiver = try Receiver(participant: p, waitset: ws, topics: topics, shared: shared, silence: silenceSeconds,
                                    sayNothingHeard: startTimeout <= 0)
        participant = p
        waitset = ws
        self.receiver = receiver
        try receiver.listen()
        let t = Thread { receiver.run() }
        t.name = "dds-receive"
        thread = t
        t.start()
        guard startTimeout > 0 else { return }
        // The first frame (and the camera_info that came with it) before returning, as a camera's open.
        let deadline = Date().addingTimeInterval(startTimeout)
        while shared.with({ $0.framesReceived == 0 }) {
            guard Date() < deadline else {
                stop()
                throw CaptureError.unsupported(device: name, problem: "no frames within \(Int(startTimeout)) s "
                                               + "(no publisher on domain \(topics.domain ?? 0), or its QoS or type does not match)")
            }
            Thread.sleep(forTimeInterval: 0.01)
        }
    }

    public func stop() {
        shared.with { s in s.running = false; s.lock.broadcast() }
        waitset?.wake()
        if let t = thread { while !t.isFinished { Thread.sleep(forTimeInterval: 0.002) } }
        thread = nil
        waitset = nil
        participant?.close()   // waits for a listener call in progress
        participant = nil
        receiver = nil
    }

    deinit { stop() }

    /// Waits up to `seconds` for a frame `nextFrame` would return (true), without polling: the
    /// receive thread signals each one (`subscribe`, the viewer's source thread).
    @discardableResult
    public func waitForFrame(seconds: Double) -> Bool {
        let deadline = Date(timeIntervalSinceNow: seconds)
        shared.lock.lock()
        defer { shared.lock.unlock() }
        while shared.frames.isEmpty && shared.running {
            guard shared.lock.wait(until: deadline) else { break }
        }
        return !shared.frames.isEmpty
    }

    public func nextFrame(now: Double) throws -> FrameSet? {
        guard thread != nil else { throw CaptureError.invalidState("\(name): nextFrame before start()") }
        let (frame, news, total) = shared.with { s -> (FrameSet?, [String], Int) in
            // `deliveredWarnings` counts every notice ever delivered; the kept ones start after `warningsDropped`.
            let news = Array(s.warnings.dropFirst(max(0, deliveredWarnings - s.warningsDropped)))
            let total = s.warningsDropped + s.warnings.count
            guard !s.frames.isEmpty else { return (nil, news, total) }
            var f = s.frames.removeFirst()
            f.timing.handed = DDSFrameTiming.now()
            if s.timings.count >= 100_000 { s.timings.removeFirst(50_000) }
            s.timings.append(f.timing)
            return (f.frame, news, total)
        }
        deliveredWarnings = total
        for w in news { onWarning?(w) }
        return frame
    }

    // MARK: Receiving without a network

    /// A sample handed to the offline receiver (`receive(_:topics:)`), as a reader would take it.
    public struct Sample: Sendable {
        /// The ROS 2 topic it came on (an image topic of `topics`, its camera_info, `/tf`, `/tf_static`).
        public var topic: String
        /// The CDR as on the wire (encapsulation header first).
        public var bytes: [UInt8]
        public var writer: UInt64
        /// The writer's sequence number (0: not known).
        public var sequence: Int64
        /// The writer's source timestamp, ns since the Unix epoch.
        public var sourceNs: Int64
        public init(topic: String, bytes: [UInt8], writer: UInt64 = 1, sequence: Int64 = 0, sourceNs: Int64 = 0) {
            self.topic = topic; self.bytes = bytes; self.writer = writer; self.sequence = sequence; self.sourceNs = sourceNs
        }
    }

    /// What the offline receiver made of its samples.
    public struct ReceiveSummary: Sendable {
        /// Frames made (queued for a consumer).
        public var frames: Int
        public var delivery: DeliveryCounts
        public var dropped: [String: Int]
        public var oversize: [String: Int]
        /// The notices still kept (at most `maxWarnings`).
        public var warnings: [String]
        public var forgotten: Forgotten
        public var calibration: RGBDCalibration?
    }

    /// The `dds:` receive path without a network: each sample is handled in order exactly as the
    /// receiver handles what its readers take (decoding, the size limit, conversion, pairing, the
    /// counts and caps), then a color still waiting for its depth is emitted. For the fuzzer (`fuzz(_:)`)
    /// and tests; nothing is opened.
    public static func receive(_ samples: [Sample], topics: DDSTopics) -> ReceiveSummary {
        let shared = Shared()
        guard let r = try? Receiver(participant: nil, waitset: nil, topics: topics, shared: shared, silence: .infinity,
                                    sayNothingHeard: false) else {
            return ReceiveSummary(frames: 0, delivery: DeliveryCounts(), dropped: [:], oversize: [:], warnings: [], forgotten: Forgotten())
        }
        r.lock.withLock {
            for sample in samples {
                sample.bytes.withUnsafeBytes {
                    r.handle(topic: sample.topic, $0,
                             info: DDSParticipant.SampleInfo(sourceNs: sample.sourceNs, sequence: sample.sequence, receivedNs: 0, writer: sample.writer))
                }
            }
            r.emitPending()
            r.shareCounts()
        }
        return shared.with { s in
            ReceiveSummary(frames: s.framesReceived, delivery: s.delivery, dropped: s.dropped, oversize: s.oversize, warnings: s.warnings,
                           forgotten: s.forgotten, calibration: s.calibration)
        }
    }

    /// The topics `fuzz` feeds: realsense2_camera's layout under `/fz` (images, compressed color,
    /// camera_infos) and the TF topics, in the order a record's selector byte picks them.
    public static let fuzzTopics = ["/fz/color/image_raw", "/fz/color/image_raw/compressed", "/fz/depth/image_rect_raw",
                                    "/fz/depth/image_raw", "/fz/aligned_depth_to_color/image_raw", "/fz/color/camera_info",
                                    "/fz/depth/camera_info", "/fz/aligned_depth_to_color/camera_info", "/tf_static", "/tf"]

    /// A fuzzer's bytes as a sequence of samples for `receive` on `dds:/fz,max-image=2048x2048`
    /// (the limit keeps one decode under 16 MiB of rgba8): records of a selector byte (the topic,
    /// `fuzzTopics[b % count]`), a writer byte, a little-endian Int64 sequence number, a
    /// little-endian UInt16 length and that many bytes of CDR; a record cut short ends the input.
    @discardableResult
    public static func fuzz(_ data: [UInt8]) -> ReceiveSummary {
        var samples: [Sample] = []
        var at = 0
        while data.count - at >= 12 {
            let topic = fuzzTopics[Int(data[at]) % fuzzTopics.count], writer = UInt64(data[at + 1])
            var sequence: UInt64 = 0
            for i in 0..<8 { sequence |= UInt64(data[at + 2 + i]) << (8 * UInt64(i)) }
            let length = Int(data[at + 10]) | Int(data[at + 11]) << 8
            at += 12
            let n = min(length, data.count - at)
            samples.append(Sample(topic: topic, bytes: Array(data[at..<(at + n)]), writer: writer, sequence: Int64(bitPattern: sequence),
                                  sourceNs: Int64(bitPattern: sequence &* 33_333_333)))
            at += n
        }
        return receive(samples, topics: DDSTopics(target: .namespace("/fz"), maxImage: DDSImageLimit(width: 2048, height: 2048)))
    }

    // MARK: Receiving

    /// One image topic being read.
    struct Stream {
        enum Role { case color, depth, either }
        var topic: String
        var compressed: Bool
        var role: Role
        var reader: Int32
        var infoTopic: String
        var infoReader: Int32
    }

    /// The receiving state: image samples are taken and converted on the thread that delivered
    /// them (Cyclone's receive thread, through a data-available listener: no other thread to wake
    /// between a sample's arrival and its conversion); the receive thread takes transforms and, every
    /// 20 ms, anything left, emits a color whose depth did not come, counts and watches for silence.
    ///
    /// `@unchecked Sendable`: made by `start` on the consumer's thread before the listeners are set
    /// and the receive thread starts; from then on every pass over it (`pass`, `takeImages`) runs
    /// under `lock`, on either thread (what it shares with the consumer goes through `shared`,
    /// under its own lock, always taken after `lock`).
    final class Receiver: @unchecked Sendable {
        let lock = NSLock()
        /// nil for the offline receiver (`DDSSource.receive(_:topics:)`: samples handed in, no network).
        let participant: DDSParticipant?
        let waitset: DDSWaitset?
        let shared: Shared
        /// The size limit before camera_info lowers it.
        let maxImage: DDSImageLimit
        let silence: Double
        var streams: [Stream] = []
        var tfReaders: [(topic: String, reader: Int32)] = []
        /// The topics that delivered first: later candidates of the same role are ignored.
        var colorTopic: String?
        var depthTopic: String?
        /// Depth waiting for its color, with its own stamp (the frame carries it: `FrameSet.depthTimestamp`).
        var sync = FrameSynchronizer<(depth: DepthData, stamp: Double)>(frameInterval: 1.0 / 30, capacity: 6)
        var pendingColor: (frame: PixelBuffer, stamp: Double, arrived: Double, timing: DDSFrameTiming)?
        var lastColorStamp: Double?
        var intervals: [Double] = []
        var lastDepthArrival = -Double.infinity
        var firstDepthArrival: Double?
        var lastSample: [String: Double] = [:]
        var silent: Set<String> = []
        /// For the notice when nothing was heard at all (only when `start` did not wait for a frame):
        /// the source's name and domain, and whether it is still to be given.
        let name: String
        let domain: Int
        var sayNothingHeard: Bool
        var warnedTopics: Set<String> = []
        var infos: [String: ROS2Message.CameraInfo] = [:]
        var frames: [String: String] = [:]    // image topic → header frame id
        var tf: [String: ROS2Message.TransformStamped] = [:]   // child frame → transform from its parent
        /// When each TF frame was last sent (a count of transforms taken), for letting the oldest go.
        var tfHeard: [String: Int] = [:]
        var tfCount = 0
        var sizes: [String: (Int, Int, String)] = [:]
        var index = 0
        var started = ProcessInfo.processInfo.systemUptime
        /// Per image topic: the buffers its frames are converted into, reused once every holder let
        /// go of them (a fresh 1280x720 rgba8 buffer is 3.7 MB of new pages to fault in and clear on
        /// every frame; a reused one is already mapped).
        var pools: [String: BufferPool] = [:]
        /// Per image topic: samples taken, and each writer's last sequence number and the gaps seen.
        var delivery: [String: TopicDelivery] = [:]

        struct TopicDelivery {
            var received = 0
            var gaps = 0
            /// Per writer (at most `maxWriters`): its last sequence number, and when it was heard (the
            /// `received` count then).
            var lastSequence: [UInt64: (sequence: Int64, heard: Int)] = [:]
            /// Writers let go to stay within `maxWriters` (the least recently heard first).
            var writersForgotten = 0
            var maxWriters = DDSSource.maxWritersPerTopic

            /// Counts a sample of `writer` numbered `sequence` (0: not known, e.g. from this process;
            /// a peer's number may be anything: nothing here can overflow).
            mutating func count(writer: UInt64, sequence: Int64) {
                received &+= 1
                guard sequence > 0 else { return }
                if let last = lastSequence[writer]?.sequence, sequence > last {
                    // Both are positive, so the difference cannot overflow; one gap counts at most 2^30
                    // and the sum stops at 2^62.
                    gaps = min(gaps + Int(min(sequence - last - 1, 1 << 30)), 1 << 62)
                }
                if lastSequence[writer] == nil, lastSequence.count >= maxWriters {
                    // Let the least recently heard quarter go at once (one sort per maxWriters/4 new writers).
                    let oldest = lastSequence.sorted { $0.value.heard < $1.value.heard }.prefix(max(1, maxWriters / 4))
                    for (w, _) in oldest { lastSequence[w] = nil }
                    writersForgotten += oldest.count
                }
                lastSequence[writer] = (sequence, received)
            }
        }

        init(participant: DDSParticipant?, waitset: DDSWaitset?, topics: DDSTopics, shared: Shared, silence: Double,
             sayNothingHeard: Bool) throws {
            self.participant = participant
            self.waitset = waitset
            self.shared = shared
            self.silence = silence
            maxImage = topics.maxImage ?? .standard
            name = topics.description
            domain = topics.domain ?? 0
            self.sayNothingHeard = sayNothingHeard
            var candidates: [(String, Stream.Role)] = []
            switch topics.target {
            case let .topics(c, d):
                candidates.append((c, d == nil ? .either : .color))
                if let d { candidates.append((d, .depth)) }
            case let .namespace(ns):
                candidates = [("\(ns)/color/image_raw", .color), ("\(ns)/color/image_raw/compressed", .color),
                              ("\(ns)/depth/image_rect_raw", .depth), ("\(ns)/depth/image_raw", .depth),
                              ("\(ns)/aligned_depth_to_color/image_raw", .depth)]
            }
            for (topic, role) in candidates {
                let compressed = topic.hasSuffix("/compressed")
                let base = compressed ? String(topic.dropLast("/compressed".count)) : topic
                let info = String(base[..<(base.lastIndex(of: "/") ?? base.endIndex)]) + "/camera_info"
                let r = try participant?.reader(ros: topic, type: compressed ? ROS2DDS.TypeName.compressedImage : ROS2DDS.TypeName.image,
                                                qos: .sensorReader) ?? -1
                let infoReader: Int32
                if let known = streams.first(where: { $0.infoTopic == info })?.infoReader {
                    infoReader = known
                } else {
                    infoReader = try participant?.reader(ros: info, type: ROS2DDS.TypeName.cameraInfo, qos: .sensorReader) ?? -1
                }
                streams.append(Stream(topic: topic, compressed: compressed, role: role, reader: r, infoTopic: info, infoReader: infoReader))
            }
            for (topic, qos) in [("/tf_static", DDSParticipant.QoS.tfStaticReader), ("/tf", .sensorReader)] {
                let r = try participant?.reader(ros: topic, type: ROS2DDS.TypeName.tfMessage, qos: qos) ?? -1
                try waitset?.attach(r)
                tfReaders.append((topic, r))
            }
        }

        /// One sample of `topic` as if taken from its reader (the offline receiver): an image, a
        /// camera_info or a TF message of the topics this receiver reads; others are ignored.
        func handle(topic: String, _ bytes: UnsafeRawBufferPointer, info: DDSParticipant.SampleInfo) {
            if let s = streams.first(where: { $0.topic == topic }) {
                delivery[s.topic, default: TopicDelivery()].count(writer: info.writer, sequence: info.sequence)
                image(s, bytes, timing: DDSFrameTiming(written: info.sourceNs, received: info.receivedNs, taken: DDSFrameTiming.now()))
                shareCounts()
            } else if let s = streams.first(where: { $0.infoTopic == topic }) {
                cameraInfo(s.infoTopic, bytes)
            } else if tfReaders.contains(where: { $0.topic == topic }) {
                transforms(topic, bytes)
            }
        }

        var now: Double { ProcessInfo.processInfo.systemUptime }

        /// Sets the image and camera_info readers' listeners: a sample is taken and converted on the
        /// thread that delivered it. Called once, before the receive thread starts.
        func listen() throws {
            guard let participant else { return }
            let context = Unmanaged.passUnretained(self).toOpaque()
            for r in Set(streams.flatMap { [$0.reader, $0.infoReader] }) {
                try participant.onData(r, context: context) { _, context in
                    guard let context else { return }
                    let receiver = Unmanaged<Receiver>.fromOpaque(context).takeUnretainedValue()
                    receiver.lock.withLock { receiver.takeImages() }
                }
            }
        }

        /// Takes and handles every waiting image and camera_info sample (under `lock`).
        func takeImages() {
            guard let participant else { return }
            var seenInfos = Set<Int32>()
            var taken = 0
            for s in streams {
                taken += participant.takeAll(s.reader) { bytes, info in
                    self.delivery[s.topic, default: TopicDelivery()].count(writer: info.writer, sequence: info.sequence)
                    self.image(s, bytes, timing: DDSFrameTiming(written: info.sourceNs, received: info.receivedNs, taken: DDSFrameTiming.now()))
                }
                if seenInfos.insert(s.infoReader).inserted {
                    participant.takeAll(s.infoReader) { bytes, _ in self.cameraInfo(s.infoTopic, bytes) }
                }
            }
            if taken > 0 { shareCounts() }
        }

        /// Cyclone's sample-lost count per image topic, as last asked (by `pass`: not asked from
        /// within a reader's own listener).
        var cycloneLost: [String: Int] = [:]

        /// Received and lost (the larger of the sequence gaps and Cyclone's count) for the consumer.
        func shareCounts() {
            var writersForgotten = 0
            let counts = streams.reduce(into: DeliveryCounts()) { c, s in
                let d = delivery[s.topic] ?? TopicDelivery()
                c.received &+= d.received
                c.lost = min(c.lost + max(d.gaps, cycloneLost[s.topic] ?? 0), 1 << 62)
                writersForgotten += d.writersForgotten
            }
            shared.with { s in
                s.delivery.received = counts.received
                s.delivery.lost = counts.lost
                s.delivery.overrun = s.framesOverrun
                s.delivery.oversize = s.oversize.values.reduce(0, +)
                s.forgotten.writers = writersForgotten
            }
        }

        func run() {
            while shared.with({ $0.running }) {
                waitset?.wait(0.02)
                lock.withLock { pass() }
            }
        }

        /// The receive thread's pass (under `lock`): what the listeners left, transforms, a color
        /// whose depth did not come in time, the counts, silence.
        func pass() {
            takeImages()
            if let participant {
                for t in tfReaders { participant.takeAll(t.reader) { bytes, _ in self.transforms(t.topic, bytes) } }
            }
            if let p = pendingColor, now - p.arrived > sync.frameInterval || now - lastDepthArrival > 1 { emitPending() }
            if let participant { for s in streams { cycloneLost[s.topic] = participant.samplesLost(s.reader) } }
            shareCounts()
            checkSilence()
        }

        func warn(_ message: String) { shared.with { $0.append(warning: message) } }

        /// Counts a bad sample; the first of a topic is a warning naming it.
        func drop(_ topic: String, _ error: Error) {
            let first = shared.with { s -> Bool in
                s.dropped[topic, default: 0] += 1
                return s.dropped[topic] == 1
            }
            if first { warn("dds:\(topic): sample dropped (further ones are counted): \(error)") }
        }

        /// Counts a sample over the size limit (dropped before decoding); the first of a topic is a
        /// notice naming it and the limit.
        func dropOversize(_ e: DDSImages.Oversize) {
            let first = shared.with { s -> Bool in
                s.oversize[e.topic, default: 0] += 1
                s.delivery.oversize = s.oversize.values.reduce(0, +)
                return s.oversize[e.topic] == 1
            }
            if first { warn("\(e): dropped before decoding (further ones are counted)") }
        }

        /// The size limit of `s`'s images: `maxImage`, no side above its camera_info's when one came.
        func limit(_ s: Stream) -> (limit: DDSImageLimit, fromCameraInfo: Bool) {
            guard let info = infos[s.infoTopic], info.width > 0, info.height > 0 else { return (maxImage, false) }
            let l = maxImage.capped(byCameraInfo: info.width, info.height)
            return (l, l != maxImage)
        }

        func checkSilence() {
            let t = now
            if colorTopic == nil, depthTopic == nil, sayNothingHeard, t - started > silence {
                sayNothingHeard = false
                warn("\(name): no frames in \(Int(silence)) s (no publisher on domain \(domain), or its QoS or type does not match); "
                     + "they show when they come")
            }
            for topic in [colorTopic, depthTopic].compactMap({ $0 }) {
                let last = lastSample[topic] ?? started
                if t - last > silence, !silent.contains(topic) {
                    silent.insert(topic)
                    warn("dds:\(topic) silent for \(Int(silence)) s")
                }
            }
        }

        func heard(_ topic: String) {
            lastSample[topic] = now
            if silent.remove(topic) != nil { warn("dds:\(topic) resumed") }
        }

        func image(_ s: Stream, _ bytes: UnsafeRawBufferPointer, timing: DDSFrameTiming) {
            do {
                let (header, role, decoded) = try decode(s, bytes)
                var timing = timing
                timing.converted = DDSFrameTiming.now()
                heard(s.topic)
                frames[s.topic] = header.frameID
                let stamp = header.stamp.seconds
                switch decoded {
                case let .color(buffer):
                    guard role != .depth else { return }
                    if colorTopic == nil { colorTopic = s.topic; updateCalibration() }
                    guard colorTopic == s.topic else { return }
                    if let last = lastColorStamp, stamp > last {
                        intervals.append(stamp - last)
                        if intervals.count > 15 { intervals.removeFirst() }
                        let median = intervals.sorted()[intervals.count / 2]
                        if median > 0.001, median < 2 {
                            sync.frameInterval = median
                            shared.with { $0.fps = (1 / median * 100).rounded() / 100 }
                        }
                    }
                    lastColorStamp = stamp
                    if pendingColor != nil { emitPending() }
                    if let d = sync.match(timestamp: stamp) {
                        // Its depth came first (publish sends depth before color): complete now.
                        publish(FrameSet(color: buffer, depth: d.depth, timestamp: stamp, index: 0, depthTimestamp: d.stamp), timing: timing)
                        return
                    }
                    pendingColor = (buffer, stamp, now, timing)
                    if now - lastDepthArrival > 1 { emitPending() }
                case let .depth(map):
                    if depthTopic == nil { depthTopic = s.topic; updateCalibration() }
                    guard depthTopic == s.topic else { return }
                    lastDepthArrival = now
                    if firstDepthArrival == nil { firstDepthArrival = now }
                    let intr = shared.with { $0.calibration?.depth.intrinsics }
                    let depth = DepthData(map: map, intrinsics: intr?.width == map.width && intr?.height == map.height ? intr : nil)
                    if colorTopic == nil && s.role != .color && streams.allSatisfy({ $0.role != .color || lastSample[$0.topic] == nil }) {
                        // Depth only (so far): shown with a black color image of its size, once depth has
                        // come for a second without any color (counted from the first depth, not from
                        // start: a publisher found late sends its first depth just before its first color).
                        if s.role == .either || now - (firstDepthArrival ?? now) > 1 {
                            publish(FrameSet(color: Self.black(map.width, map.height), depth: depth, timestamp: stamp, index: 0), timing: timing)
                            return
                        }
                    }
                    sync.add((depth, stamp), timestamp: stamp)
                    if let p = pendingColor, let d = sync.match(timestamp: p.stamp) {
                        pendingColor = nil
                        publish(FrameSet(color: p.frame, depth: d.depth, timestamp: p.stamp, index: 0, depthTimestamp: d.stamp), timing: p.timing)
                    }
                }
            } catch let e as DDSImages.Oversize {
                dropOversize(e)
            } catch {
                drop(s.topic, error)
            }
        }

        func emitPending() {
            guard let p = pendingColor else { return }
            pendingColor = nil
            let d = sync.match(timestamp: p.stamp)
            publish(FrameSet(color: p.frame, depth: d?.depth, timestamp: p.stamp, index: 0, depthTimestamp: d?.stamp), timing: p.timing)
        }

        func publish(_ frame: FrameSet, timing: DDSFrameTiming) {
            var f = frame
            f.index = index
            index += 1
            var timing = timing
            timing.queued = DDSFrameTiming.now()
            shared.with { s in
                s.frames.append((f, timing))
                if s.frames.count > DDSSource.queueLength { s.frames.removeFirst(); s.framesOverrun += 1 }
                s.framesReceived += 1
                s.lock.broadcast()
            }
        }

        static func black(_ w: Int, _ h: Int) -> PixelBuffer {
            let b = PixelBuffer(width: w, height: h, format: .rgba8)
            for y in 0..<h {
                let r = b.row(y, as: UInt8.self)
                for x in 0..<w { r[4 * x] = 0; r[4 * x + 1] = 0; r[4 * x + 2] = 0; r[4 * x + 3] = 255 }
            }
            b.markModified()
            return b
        }

        enum Decoded { case color(PixelBuffer), depth(PixelBuffer) }

        /// Decodes and converts one image sample; throws for anything a frame cannot be made of.
        func decode(_ s: Stream, _ bytes: UnsafeRawBufferPointer) throws -> (ROS2Message.Header, Stream.Role, Decoded) {
            let file = DDSImages.file(s.topic)
            let (limit, fromInfo) = self.limit(s)
            if s.compressed {
                let m = try ROS2Message.compressedImage(Array(bytes), file: file, topic: s.topic)
                // The header's size against the limit before the decoder allocates anything for it
                // (a 600-byte JPEG may claim 16384x16384); over it, the sample goes no further.
                let claim = try DDSImages.claimedSize(m, topic: s.topic)
                try DDSImages.checkLimit(claim.what, width: claim.width, height: claim.height, limit: limit, fromCameraInfo: fromInfo, topic: s.topic)
                // A color JPEG is decoded straight into the topic's pool (no fresh pages a frame).
                return (m.header, .color, .color(try DDSImages.decompress(m, topic: s.topic, limit: limit) { w, h in
                    buffer(s.topic, w, h, .rgba8)
                }))
            }
            // The pixels are converted from the sample's own bytes (a 1280x720 rgb8 image is 2.7 MB; not copied first).
            let m = try ROS2Message.imageView(bytes, file: file, topic: s.topic)
            try DDSImages.check(m, topic: s.topic)
            try DDSImages.checkLimit(m.encoding, width: m.width, height: m.height, limit: limit, fromCameraInfo: fromInfo, topic: s.topic)
            let isDepth = ROSImageDecoding.isDepthEncoding(m.encoding)
            if s.role == .depth && !isDepth {
                throw CaptureError.file(path: file, problem: "a depth topic sent \(m.encoding), not 16UC1, mono16 or 32FC1")
            }
            if s.role == .color && isDepth {
                throw CaptureError.file(path: file, problem: "a color topic sent depth (\(m.encoding))")
            }
            let key = (m.width, m.height, m.encoding)
            if let old = sizes[s.topic], old != key {
                warn("dds:\(s.topic): stream changed from \(old.0)x\(old.1) \(old.2) to \(m.width)x\(m.height) \(m.encoding)")
            }
            if sizes[s.topic] == nil || sizes[s.topic]! != key {
                sizes[s.topic] = key
                let stream = SourceMetadata.Stream(name: isDepth ? "depth" : "color", width: m.width, height: m.height, encoding: m.encoding)
                shared.with { sh in
                    sh.streams.removeAll { $0.name == stream.name }
                    sh.streams.append(stream)
                }
            }
            // 16-bit depth is millimeters on ROS 2 topics (REP 118).
            if isDepth {
                return (m.header, .depth, .depth(ROSImageDecoding.depthMeters(m, units: 0.001, into: buffer(s.topic, m.width, m.height, .depthFloat32))))
            }
            return (m.header, .color, .color(ROSImageDecoding.rgba(m, into: buffer(s.topic, m.width, m.height, .rgba8))))
        }

        /// A pooled buffer for `topic`'s next frame, or nil (a new one is made) when every buffer is
        /// held: by the source's queue (`queueLength`), the consumer (`framesHeldByConsumer`), the
        /// color waiting for its depth, the depths waiting for their color (`sync`'s 6), and more
        /// than that only when a consumer keeps frames longer (a recorder's queue).
        func buffer(_ topic: String, _ width: Int, _ height: Int, _ format: PixelFormat) -> PixelBuffer? {
            let f = FrameFormat(width: width, height: height, pixelFormat: format)
            if pools[topic]?.format != f {
                pools[topic] = BufferPool(format: f, outputRetainedBufferCountHint: 2,
                                          allocationThreshold: DDSSource.queueLength + framesHeldByConsumer + 8)
            }
            return try? pools[topic]?.makeBuffer()
        }

        func cameraInfo(_ topic: String, _ bytes: UnsafeRawBufferPointer) {
            do {
                let info = try ROS2Message.cameraInfo(Array(bytes), file: DDSImages.file(topic), topic: topic)
                try DDSImages.check(info, topic: topic)
                if infos[topic] != info {
                    infos[topic] = info
                    updateCalibration()
                }
            } catch {
                drop(topic, error)
            }
        }

        func transforms(_ topic: String, _ bytes: UnsafeRawBufferPointer) {
            do {
                var changed = false
                let list = try ROS2Message.tfMessage(Array(bytes), file: DDSImages.file(topic), topic: topic)
                guard list.count <= DDSImages.maxTransforms else {
                    throw CaptureError.file(path: DDSImages.file(topic), problem: "TF message holds \(list.count) transforms (at most \(DDSImages.maxTransforms))")
                }
                for t in list {
                    let (p, q) = (t.transform.translation, t.transform.rotation)
                    let v = [p.x, p.y, p.z, q.x, q.y, q.z, q.w]
                    guard t.childFrameID.utf8.count <= DDSSource.maxFrameIDLength, t.header.frameID.utf8.count <= DDSSource.maxFrameIDLength else {
                        throw CaptureError.file(path: "dds:\(topic)", problem: "a frame id is over \(DDSSource.maxFrameIDLength) bytes")
                    }
                    guard v.allSatisfy({ $0.isFinite }), (p * p).sum() < 1e6,
                          !t.childFrameID.isEmpty, t.childFrameID != t.header.frameID else {
                        throw CaptureError.file(path: "dds:\(topic)", problem: "transform \(t.header.frameID) → \(t.childFrameID) is not finite or over 1 km")
                    }
                    tfCount &+= 1
                    tfHeard[t.childFrameID] = tfCount
                    if tf[t.childFrameID] != t { tf[t.childFrameID] = t; changed = true }
                }
                if tf.count > DDSSource.maxTFFrames { forgetTFFrames() }
                if changed { updateCalibration() }
            } catch {
                drop(topic, error)
            }
        }

        /// Lets the least recently sent TF frames go, down to three quarters of `maxTFFrames` (one sort
        /// per quarter of new frames), but never one on the way from an image's frame to its root.
        func forgetTFFrames() {
            var keep = Set<String>()
            for topic in [colorTopic, depthTopic].compactMap({ $0 }) {
                guard var f = frames[topic] else { continue }
                while let t = tf[f], keep.insert(f).inserted { f = t.header.frameID }
            }
            let target = DDSSource.maxTFFrames * 3 / 4
            let candidates = tfHeard.filter { tf[$0.key] != nil && !keep.contains($0.key) }.sorted { $0.value < $1.value }
            var removed = 0
            for (frame, _) in candidates where tf.count > target {
                tf[frame] = nil
                tfHeard[frame] = nil
                removed += 1
            }
            tfHeard = tfHeard.filter { tf[$0.key] != nil }
            shared.with { $0.forgotten.tfFrames += removed }
        }

        /// frame → root: the chain of transforms (each p_parent = R p_child + t) composed.
        func toRoot(_ frame: String) -> (root: String, transform: RigidTransform) {
            var f = frame, T = RigidTransform.identity, seen: Set<String> = [frame]
            while let t = tf[f], seen.insert(t.header.frameID).inserted {
                let m = t.transform
                let step = RigidTransform(rotation: m.rotationMatrix.map { Float($0) },
                                          translation: SIMD3(Float(m.translation.x), Float(m.translation.y), Float(m.translation.z)))
                T = step.composed(after: T)
                f = t.header.frameID
            }
            return (f, T)
        }

        func camera(_ topic: String?) -> CameraModel? {
            guard let topic, let s = streams.first(where: { $0.topic == topic }), let info = infos[s.infoTopic],
                  let size = sizes[topic] else { return nil }
            let k = info.K
            let w = info.width > 0 ? info.width : size.0, h = info.height > 0 ? info.height : size.1
            var cam = CameraModel(intrinsics: CameraIntrinsics(fx: Float(k[0]), fy: Float(k[4]), cx: Float(k[2]), cy: Float(k[5]), width: w, height: h),
                                  model: BagSource.distortionModel(info.distortionModel), coeffs: info.D.map { Float($0) })
            if w != size.0 || h != size.1 { cam = cam.scaled(toWidth: size.0, height: size.1) }
            return cam
        }

        func updateCalibration() {
            let colorCam = camera(colorTopic), depthCam = camera(depthTopic)
            guard colorCam != nil || depthCam != nil else { return }
            var depthToColor = RigidTransform.identity
            var registered = depthTopic?.contains("aligned_depth_to_color") ?? false
            if let c = colorTopic, let d = depthTopic, let cf = frames[c], let df = frames[d], cf != df, !registered {
                let a = toRoot(df), b = toRoot(cf)
                if a.root == b.root { depthToColor = b.transform.inverse.composed(after: a.transform) } else { registered = false }
            }
            let dSize = depthTopic.flatMap { sizes[$0] }, cSize = colorTopic.flatMap { sizes[$0] }
            let cc = colorCam ?? cSize.map { CameraModel.default(width: $0.0, height: $0.1) } ?? depthCam!
            var dc = depthCam ?? dSize.map { CameraModel.default(width: $0.0, height: $0.1) } ?? cc
            if registered, let c = colorCam, let ds = dSize { dc = c.scaled(toWidth: ds.0, height: ds.1) }
            let cal = RGBDCalibration(depth: dc, color: cc, depthToColor: depthToColor, depthScale: 1000, origin: "camera_info")
            shared.with { s in
                s.calibration = cal
                s.colorIntrinsics = colorCam?.intrinsics
            }
        }
    }
}

/// One frame's way from the publisher to the consumer, in ns since the Unix epoch (CLOCK_REALTIME,
/// the clock of DDS source timestamps), for its color sample (a depth-only frame: its depth sample).
/// Each step's time is when it was done; 0 when not (yet) known. `subscribe --json` reports the
/// steps (docs/DDS.md, "Receiving fast").
public struct DDSFrameTiming: Sendable, Equatable {
    /// The writer's source timestamp: when the publisher wrote the sample (`dds_write`).
    public var written: Int64
    /// When the last of its fragments had arrived and Cyclone handed the reassembled sample over
    /// (0 for a sample that did not come over the network).
    public var received: Int64
    /// When the receive thread took it from its reader.
    public var taken: Int64
    /// When it was decoded and converted (color to rgba8, depth to meters).
    public var converted: Int64 = 0
    /// When it was paired with its depth and queued for the consumer.
    public var queued: Int64 = 0
    /// When `nextFrame` handed the frame over.
    public var handed: Int64 = 0

    public init(written: Int64, received: Int64, taken: Int64) {
        self.written = written; self.received = received; self.taken = taken
    }

    /// Seconds from publication to `nextFrame` (`written` is the peer's number: subtracted as
    /// doubles, so no value of it can trap).
    public var latency: Double { (Double(handed) - Double(written)) * 1e-9 }

    /// The steps in order with their seconds: `write_to_received` (the publisher's write, the
    /// network, Cyclone's reassembly), `received_to_taken` (the sample's copy out of Cyclone's
    /// buffers, its delivery to the reader and the listener), `taken_to_converted` (decoding and pixel conversion),
    /// `converted_to_queued` (waiting for the paired depth), `queued_to_handed` (waking the consumer).
    /// A step whose ends are not both known is left out.
    public var steps: [(name: String, seconds: Double)] {
        let marks: [(String, Int64)] = [("write", written), ("received", received), ("taken", taken), ("converted", converted),
                                        ("queued", queued), ("handed", handed)]
        var out: [(name: String, seconds: Double)] = []
        for i in 1..<marks.count where marks[i - 1].1 > 0 && marks[i].1 > 0 {
            out.append(("\(marks[i - 1].0)_to_\(marks[i].0)", (Double(marks[i].1) - Double(marks[i - 1].1)) * 1e-9))
        }
        return out
    }

    /// Now on CLOCK_REALTIME, ns since the Unix epoch.
    public static func now() -> Int64 {
        var t = timespec()
        clock_gettime(CLOCK_REALTIME, &t)
        return Int64(t.tv_sec) * 1_000_000_000 + Int64(t.tv_nsec)
    }
}

/// The `dds:` source's extra checks of untrusted samples, over the shared `ROS2Message` decoders
/// and `ROSImageDecoding` conversions: tighter limits than a recording's (a side of at most 16384
/// pixels, at most 64 distortion coefficients and 4096 transforms a message), plausible intrinsics.
public enum DDSImages {
    /// Most pixels a side.
    public static let maxSide = 16384
    /// Most distortion coefficients a camera_info may carry, most transforms a TF message.
    public static let maxCoefficients = 64
    public static let maxTransforms = 4096

    /// The name errors give a sample of `topic`.
    static func file(_ topic: String) -> String { "dds:\(topic)" }

    /// Throws for a size, step or encoding a frame cannot be made of.
    public static func check(_ m: some RawROSImage, topic: String) throws {
        guard (1...maxSide).contains(m.width), (1...maxSide).contains(m.height) else {
            throw CaptureError.file(path: file(topic), problem: "image is \(m.width)x\(m.height) (each side 1…\(maxSide))")
        }
        guard ROSImageDecoding.isDepthEncoding(m.encoding) || ROSImageDecoding.isColorEncoding(m.encoding) else {
            throw CaptureError.file(path: file(topic), problem: "unknown encoding '\(m.encoding.prefix(32))'")
        }
        try ROSImageDecoding.check(m, file: file(topic), topic: topic)
    }

    /// Throws for a camera_info with non-finite or implausible intrinsics.
    public static func check(_ info: ROS2Message.CameraInfo, topic: String) throws {
        let k = info.K
        guard info.D.count <= maxCoefficients, (info.K + info.D + info.R + info.P).allSatisfy({ $0.isFinite }), k[0] > 0, k[4] > 0,
              k[0] < 1e6, k[4] < 1e6, abs(k[2]) < 1e6, abs(k[5]) < 1e6, (0...maxSide).contains(info.width),
              (0...maxSide).contains(info.height) else {
            throw CaptureError.file(path: file(topic), problem: "camera_info has non-finite or implausible values (K \(k.prefix(6).map { "\($0)" }.joined(separator: " ")) …, \(info.D.count) coefficients, \(info.width)x\(info.height))")
        }
    }

    /// A CompressedImage (JPEG or PNG color) as rgba8, at most `maxSide` a side. The size its
    /// header claims is checked against `limit` first (`Oversize`): nothing is decoded over it.
    /// `into`: a pooled buffer for a color JPEG's rows (the receiver's pool for the topic).
    public static func decompress(_ m: ROS2Message.CompressedImage, topic: String, limit: DDSImageLimit = .standard,
                                  into target: (_ width: Int, _ height: Int) -> PixelBuffer? = { _, _ in nil }) throws -> PixelBuffer {
        let claim = try claimedSize(m, topic: topic)
        try checkLimit(claim.what, width: claim.width, height: claim.height, limit: limit, fromCameraInfo: false, topic: topic)
        let out = try ROSImageDecoding.compressedColor(m.data, format: m.format, file: file(topic), topic: topic, into: target)
        guard out.width <= maxSide, out.height <= maxSide else {
            throw CaptureError.file(path: file(topic), problem: "compressed image is \(out.width)x\(out.height) (each side 1…\(maxSide))")
        }
        return out
    }
}

/// The largest image a network source takes, each side (`--max-image WxH`, a `dds:` source's
/// `max-image=WxH`): checked on a sample's header — a compressed image's JPEG frame header or PNG
/// IHDR (`ImageHeader`), a raw image's width and height — before anything is decoded or allocated
/// for it, and never above the topic's camera_info size when one is known. A peer's 600-byte JPEG
/// may claim 16384×16384 (1 GiB of rgba8); over the limit it costs the header's walk and a count.
public struct DDSImageLimit: Sendable, Equatable, CustomStringConvertible {
    public var width: Int
    public var height: Int
    public init(width: Int, height: Int) { self.width = width; self.height = height }

    /// 8192×8192 (256 MiB of rgba8): above every camera a ROS 2 driver publishes today.
    public static let standard = DDSImageLimit(width: 8192, height: 8192)

    /// "WxH", each side 1…`DDSImages.maxSide`. Throws `CaptureError.invalidSource`, one line.
    public static func parse(_ text: String) throws -> DDSImageLimit {
        let parts = text.lowercased().split(separator: "x", omittingEmptySubsequences: false)
        guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]),
              (1...DDSImages.maxSide).contains(w), (1...DDSImages.maxSide).contains(h) else {
            throw CaptureError.invalidSource("max-image '\(text.prefix(40))' is not WxH with each side 1…\(DDSImages.maxSide) (e.g. 1920x1080)")
        }
        return DDSImageLimit(width: w, height: h)
    }

    public func allows(width w: Int, height h: Int) -> Bool { w <= width && h <= height }

    /// This limit, no side above a camera_info's size (`width`, `height`; 0 means not given).
    public func capped(byCameraInfo w: Int, _ h: Int) -> DDSImageLimit {
        guard w > 0, h > 0 else { return self }
        return DDSImageLimit(width: min(width, w), height: min(height, h))
    }

    public var description: String { "\(width)x\(height)" }
}

extension DDSImages {
    /// A sample whose header claims more than the limit: dropped before decoding, counted apart
    /// from bad samples (`DDSSource.oversizeSamples`).
    public struct Oversize: Error, CustomStringConvertible, Equatable {
        public var topic: String
        /// "JPEG", "PNG", or the raw image's encoding.
        public var what: String
        public var width: Int
        public var height: Int
        public var limit: DDSImageLimit
        /// Whether a camera_info lowered the limit.
        public var fromCameraInfo: Bool
        public var description: String {
            "dds:\(topic): \(what) of \(width)x\(height) is over the \(limit) limit"
                + (fromCameraInfo ? " (the topic's camera_info size)" : " (--max-image, max-image=WxH)")
        }
    }

    /// The size a compressed image's `data` claims, from its header only (`ImageHeader`; a
    /// compressedDepth PNG after its 12-byte config header, an RVL's two little-endian sides).
    /// Throws for data that is neither JPEG nor PNG (nothing else is decoded from the network).
    public static func claimedSize(_ m: ROS2Message.CompressedImage, topic: String) throws -> (what: String, width: Int, height: Int) {
        var data = m.data
        if CompressedDepth.isCompressedDepth(m.format) {
            guard data.count > 12 else {
                throw CaptureError.file(path: file(topic), problem: "compressedDepth image of \(data.count) bytes has no header")
            }
            data = data.dropFirst(12)
            if m.format.contains("rvl") {
                guard data.count >= 8 else { throw CaptureError.file(path: file(topic), problem: "RVL data of \(data.count) bytes has no size") }
                let s = data.startIndex
                func le32(_ i: Int) -> Int { Int(data[i]) | Int(data[i + 1]) << 8 | Int(data[i + 2]) << 16 | Int(data[i + 3]) << 24 }
                return ("RVL", le32(s), le32(s + 4))
            }
        }
        do {
            let info = try ImageHeader.read(data, name: file(topic))
            return (info.kind.rawValue, info.width, info.height)
        } catch let e as DepthKitError {
            switch e {
            case let .file(_, problem), let .invalidArgument(problem):
                throw CaptureError.file(path: file(topic), problem: "compressed image (\(m.format.prefix(64))): \(problem)")
            }
        }
    }

    /// Throws `Oversize` when `width`×`height` is over `limit`.
    static func checkLimit(_ what: String, width: Int, height: Int, limit: DDSImageLimit, fromCameraInfo: Bool, topic: String) throws {
        guard limit.allows(width: width, height: height) else {
            throw Oversize(topic: topic, what: what, width: width, height: height, limit: limit, fromCameraInfo: fromCameraInfo)
        }
    }
}
