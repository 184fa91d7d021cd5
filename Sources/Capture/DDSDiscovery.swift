import DepthKit
import Foundation

/// An image topic heard on a DDS domain: what `devices --dds` prints and the viewer's Cameras
/// section lists, with the `--source` that opens it.
public struct DDSImageTopic: Sendable, Equatable, Encodable {
    /// The ROS 2 topic ("/camera/color/image_raw").
    public var topic: String
    /// "sensor_msgs/msg/Image" or "sensor_msgs/msg/CompressedImage".
    public var type: String
    /// "reliable" or "best effort" (the writer's).
    public var reliability: String
    /// Of the first sample heard, a compressed image's from its header (nil when none was heard, or
    /// its header did not read, or it was over the size limit: `problem` says so).
    public var width: Int?
    public var height: Int?
    /// The Image's encoding ("rgb8", "16UC1"), or the CompressedImage's format ("jpeg").
    public var encoding: String?
    /// Samples a second as they arrived here while listening (nil for fewer than two samples).
    public var rate: Double?
    /// Samples heard while listening.
    public var samples: Int
    /// The `--source` that opens it ("dds:/camera/color/image_raw,domain=3").
    public var source: String
    /// Why the first sample's size is not given: "JPEG of 16384x16384 is over the 8192x8192 limit".
    public var problem: String?

    /// "640x480 rgb8, 30.0 Hz" (or what is known of it).
    public var summary: String {
        var parts: [String] = []
        if let w = width, let h = height { parts.append("\(w)x\(h)" + (encoding.map { " \($0)" } ?? "")) } else if let e = encoding { parts.append(e) }
        if let r = rate { parts.append(String(format: "%.1f Hz", r)) } else { parts.append(samples == 0 ? "no samples heard" : "1 sample heard") }
        if let p = problem { parts.append(p) }
        return parts.joined(separator: ", ")
    }
}

/// Lists the image topics published on a domain (`sensor_msgs/msg/Image` and `CompressedImage`
/// writers, from DDS discovery) and listens to each for a moment for its size, encoding and rate.
/// The samples are read as the `dds:` source reads them (`ROS2Message`, over the bytes as they
/// came; a bad one is counted as heard, its size unknown); a compressed image is never decoded: its
/// size is its header's (`DDSImages.claimedSize`), and one over the size limit is said, not given.
/// At most `maxTopics` topics are listened to (a peer can announce any number of writers).
public enum DDSDiscovery {
    /// Most image topics one listing reads (each is a reader); further ones are left out.
    public static let maxTopics = 256

    static let types = [ROS2DDS.TypeName.image: "sensor_msgs/msg/Image",
                        ROS2DDS.TypeName.compressedImage: "sensor_msgs/msg/CompressedImage"]

    /// What was heard of one topic.
    struct Heard {
        var topic: DDSImageTopic
        var reader: Int32
        var compressed: Bool
        var first: Double?
        var last: Double?
    }

    /// Listens on `domain` for `seconds`: writers as they are discovered, then each image topic's
    /// samples from the moment its reader exists. Sorted by topic.
    public static func imageTopics(domain: Int, listening seconds: Double, maxImage: DDSImageLimit = .standard) throws -> [DDSImageTopic] {
        let participant = try DDSParticipant(domain: domain)
        defer { participant.close() }
        let publications = try participant.publicationReader()
        let waitset = try DDSWaitset(participant)
        let suffix = domain == 0 ? "" : ",domain=\(domain)"
        var heard: [String: Heard] = [:]
        let start = ProcessInfo.processInfo.systemUptime
        var lastDiscovery = -Double.infinity
        while true {
            let now = ProcessInfo.processInfo.systemUptime
            if now - start >= seconds { break }
            if now - lastDiscovery >= 0.05 {
                lastDiscovery = now
                for p in try participant.publications(publications) where p.ddsTopic.hasPrefix("rt/") && heard[p.topic] == nil {
                    guard let type = types[p.type], heard.count < maxTopics else { continue }
                    let reader = try participant.reader(ros: p.topic, type: p.type, qos: .sensorReader)
                    try waitset.attach(reader)
                    heard[p.topic] = Heard(topic: DDSImageTopic(topic: p.topic, type: type, reliability: p.reliable ? "reliable" : "best effort",
                                                                samples: 0, source: "dds:\(p.topic)\(suffix)"),
                                           reader: reader, compressed: p.type == ROS2DDS.TypeName.compressedImage)
                }
            }
            waitset.wait(min(0.05, max(0.001, seconds - (now - start))))
            for key in Array(heard.keys) {
                participant.takeAll(heard[key]!.reader) { bytes, _ in
                    let t = ProcessInfo.processInfo.systemUptime
                    var h = heard[key]!
                    h.topic.samples += 1
                    if h.first == nil { h.first = t }
                    h.last = t
                    if h.topic.encoding == nil { describe(&h, bytes, maxImage: maxImage) }
                    heard[key] = h
                }
            }
        }
        return heard.values.map { h in
            var t = h.topic
            if t.samples >= 2, let a = h.first, let b = h.last, b > a { t.rate = (Double(t.samples - 1) / (b - a) * 10).rounded() / 10 }
            return t
        }.sorted { $0.topic < $1.topic }
    }

    /// Size and encoding from a sample (left unknown when it does not decode; a size over
    /// `maxImage` is said in `problem`). A compressed image's size is read from its header: nothing
    /// is decoded.
    static func describe(_ h: inout Heard, _ bytes: UnsafeRawBufferPointer, maxImage: DDSImageLimit = .standard) {
        let file = DDSImages.file(h.topic.topic)
        let size: (what: String, width: Int, height: Int)
        if h.compressed {
            guard let m = try? ROS2Message.compressedImage(Array(bytes), file: file, topic: h.topic.topic) else { return }
            h.topic.encoding = m.format
            do { size = try DDSImages.claimedSize(m, topic: h.topic.topic) } catch {
                h.topic.problem = "first sample did not read"
                return
            }
        } else if let m = try? ROS2Message.imageView(bytes, file: file, topic: h.topic.topic), (try? DDSImages.check(m, topic: h.topic.topic)) != nil {
            h.topic.encoding = m.encoding
            size = (m.encoding, m.width, m.height)
        } else {
            return
        }
        guard maxImage.allows(width: size.width, height: size.height) else {
            h.topic.problem = "\(size.what) of \(size.width)x\(size.height) is over the \(maxImage) limit"
            return
        }
        (h.topic.width, h.topic.height) = (size.width, size.height)
    }

    /// realsense2_camera-style namespaces among `topics` (those with `NS/color/image_raw`), each with
    /// the `--source` that opens its color and depth together.
    public static func cameraNamespaces(_ topics: [DDSImageTopic], domain: Int) -> [(namespace: String, source: String)] {
        let suffix = domain == 0 ? "" : ",domain=\(domain)"
        return Set(topics.compactMap { t -> String? in
            t.topic.hasSuffix("/color/image_raw") ? String(t.topic.dropLast("/color/image_raw".count)) : nil
        }).filter { !$0.isEmpty }.sorted().map { ($0, "dds:\($0)\(suffix)") }
    }
}

/// The DDS image topics for the viewer's Cameras section: listened for on a thread of its own when
/// asked (`listen`: DDS discovery announces this machine on the network, so never unasked), read by
/// the render loop under a short lock (`state`), never waited for.
///
/// `@unchecked Sendable`: `current` is read and written only under `lock`; the listening thread
/// touches nothing else.
public final class DDSTopicCatalog: @unchecked Sendable {
    /// What the section shows.
    public struct State: Sendable, Equatable {
        public var listening = false
        /// The last listing (nil before the first).
        public var menu: CameraMenu?
        /// Why the last listing failed.
        public var problem: String?
        /// Counts finished listings.
        public var generation = 0
    }

    /// ROS_DOMAIN_ID (0 when unset or not a domain).
    public let domain: Int
    public let seconds: Double
    /// The button that starts a listing, and the line while it runs.
    public let listenLabel: String
    public let listeningText: String
    private let lock = NSLock()
    private var current = State()

    public init(domain: Int? = nil, seconds: Double = 2, environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.domain = domain ?? environment["ROS_DOMAIN_ID"].flatMap { Int($0) }.flatMap { (0...232).contains($0) ? $0 : nil } ?? 0
        self.seconds = seconds
        listenLabel = "listen for DDS image topics (domain \(self.domain))"
        listeningText = String(format: "listening on DDS domain %d for %.0f s ...", self.domain, seconds)
    }

    public var state: State { lock.withLock { current } }

    /// Starts a listing on its own thread unless one runs.
    public func listen() {
        let starting = lock.withLock { () -> Bool in
            guard !current.listening else { return false }
            current.listening = true
            return true
        }
        guard starting else { return }
        let (domain, seconds) = (self.domain, self.seconds)
        let t = Thread { [self] in
            let result = Result { try DDSDiscovery.imageTopics(domain: domain, listening: seconds) }
            lock.withLock {
                current.listening = false
                current.generation += 1
                switch result {
                case .success(let topics):
                    current.menu = Self.menu(topics, domain: domain)
                    current.problem = nil
                case .failure(let e):
                    current.problem = "\(e)"
                }
            }
        }
        t.name = "dds discovery"
        t.start()
    }

    /// One group per camera namespace (its color and depth together), then one for the topics.
    public static func menu(_ topics: [DDSImageTopic], domain: Int) -> CameraMenu {
        var groups: [CameraMenu.Group] = []
        for (ns, source) in DDSDiscovery.cameraNamespaces(topics, domain: domain) {
            let parts = topics.filter { $0.topic.hasPrefix(ns + "/") }.map { "\($0.topic.dropFirst(ns.count + 1)): \($0.summary)" }
            groups.append(CameraMenu.Group(title: "DDS camera \(ns) (domain \(domain))",
                                           entries: [CameraMenu.Entry(label: "\(ns)  " + parts.joined(separator: "; "), source: source)]))
        }
        if !topics.isEmpty {
            groups.append(CameraMenu.Group(title: "DDS image topics (domain \(domain))",
                                           entries: topics.map { CameraMenu.Entry(label: "\($0.topic)  \($0.summary)", source: $0.source) }))
        }
        return CameraMenu(groups: groups)
    }
}
