import CDDS
import Foundation

/// One DDS domain participant (Eclipse Cyclone DDS, Debian's libddsc 0.10) and the raw-CDR topics,
/// readers and writers it makes (`Sources/CDDS`). Deleting the participant (deinit, `close`)
/// deletes everything it made: no writer outlives its owner.
///
/// Network: Cyclone reads its configuration from `CYCLONEDDS_URI`; `interface` adds a
/// `NetworkInterface` element (and turns multicast off when it is the loopback `lo`), and the
/// socket buffers and message sizes large images need are raised (see `config`).
///
/// `@unchecked Sendable`: Cyclone's calls are thread-safe and `handle` and `domain` are `let`s;
/// `closed` belongs to the owner's thread: `close` is called by the owner (`DDSSource.stop`, after
/// its receive thread has ended) or by `deinit`, never while another thread uses the participant.
public final class DDSParticipant: @unchecked Sendable {
    public let domain: Int
    public let handle: Int32
    private var closed = false

    /// Opens a participant on `domain` (0…232, ROS_DOMAIN_ID's range). Throws `CaptureError.unsupported`.
    public init(domain: Int, interface: String? = nil) throws {
        guard (0...232).contains(domain) else {
            throw CaptureError.invalidSource("DDS domain \(domain) is out of range 0…232")
        }
        if let i = interface, i.isEmpty || !i.allSatisfy({ $0.isLetter || $0.isNumber || "._-:".contains($0) }) {
            throw CaptureError.invalidSource("--interface '\(interface!)' is not a network interface name")
        }
        let h = dl_dds_participant(Int32(domain), try Self.config(interface: interface))
        guard h > 0 else {
            throw CaptureError.unsupported(device: "dds domain \(domain)", problem: "cannot create a participant: \(Self.error(h))")
        }
        self.domain = domain
        self.handle = h
    }

    deinit { close() }

    public func close() {
        guard !closed else { return }
        closed = true
        _ = dl_dds_delete(handle)
    }

    /// The configuration added to `CYCLONEDDS_URI`'s: a receive buffer that holds several large
    /// frames (a 1280×720 rgb8 image is 2.7 MB; Cyclone keeps the kernel's size when it cannot have
    /// this one), and the interface when one is named. On the loopback interface, whose MTU is 64 KiB,
    /// samples go out in 64 KB messages and fragments (a real link keeps Cyclone's defaults: 14720 B
    /// messages of 1344 B fragments, below a typical MTU).
    /// When `CYCLONEDDS_URI` already names interfaces, `interface` must be one of them (Cyclone
    /// refuses an interface named twice, and depthlens never widens what the environment allows).
    static func config(interface: String?, environment: [String: String] = ProcessInfo.processInfo.environment) throws -> String {
        var general = ""
        if let i = interface {
            let env = environment["CYCLONEDDS_URI"] ?? ""
            if env.contains("NetworkInterface") {
                guard env.contains("name=\"\(i)\"") || env.contains("name='\(i)'") else {
                    throw CaptureError.invalidSource("--interface \(i): CYCLONEDDS_URI already names other interfaces; drop one of the two")
                }
            } else {
                general += "<Interfaces><NetworkInterface name=\"\(i)\"/></Interfaces>"
            }
            if i == "lo" { general += "<AllowMulticast>false</AllowMulticast><MaxMessageSize>65500B</MaxMessageSize><FragmentSize>65000B</FragmentSize>" }
        }
        return "<CycloneDDS><Domain Id=\"any\"><General>\(general)</General>"
            + "<Internal><SocketReceiveBufferSize min=\"default\" max=\"16MB\"/></Internal></Domain></CycloneDDS>"
    }

    static func error(_ code: Int32) -> String { String(cString: dl_dds_error(code)) }

    /// QoS of a reader or writer.
    public struct QoS: Sendable, Equatable {
        public var reliable: Bool
        public var transientLocal: Bool
        public var depth: Int
        public init(reliable: Bool, transientLocal: Bool = false, depth: Int) {
            self.reliable = reliable; self.transientLocal = transientLocal; self.depth = depth
        }
        /// Matches every writer of a camera stream: best-effort readers take reliable and best-effort
        /// writers, volatile ones take volatile and transient-local ones.
        public static let sensorReader = QoS(reliable: false, transientLocal: false, depth: 4)
        /// ROS 2's `/tf_static`: reliable, transient-local (a late joiner gets what was sent), depth 1
        /// per writer as tf2's static broadcaster; the reader keeps more (several broadcasters).
        public static let tfStaticReader = QoS(reliable: true, transientLocal: true, depth: 100)
        public static let tfStaticWriter = QoS(reliable: true, transientLocal: true, depth: 1)
        /// realsense2_camera's image publishers: ROS 2's sensor-data profile (best effort, keep last 5).
        public static let sensorWriter = QoS(reliable: false, transientLocal: false, depth: 5)
        /// camera_info as realsense2_camera and image_transport's defaults: reliable, keep last 10.
        public static let defaultWriter = QoS(reliable: true, transientLocal: false, depth: 10)
        var c: dl_dds_qos { dl_dds_qos(reliable: reliable ? 1 : 0, transient_local: transientLocal ? 1 : 0, depth: Int32(depth)) }
    }

    /// A topic of raw CDR samples: the ROS 2 topic's DDS name (`rt/…`) and its DDS type name.
    public func topic(ros rosTopic: String, type: String) throws -> Int32 {
        let t = dl_dds_topic(handle, ROS2DDS.ddsTopic(rosTopic), type)
        guard t > 0 else {
            throw CaptureError.unsupported(device: "dds:\(rosTopic)", problem: "cannot create the topic (\(type)): \(Self.error(t))")
        }
        return t
    }

    public func reader(ros rosTopic: String, type: String, qos: QoS) throws -> Int32 {
        let r = dl_dds_reader(handle, try topic(ros: rosTopic, type: type), qos.c)
        guard r > 0 else { throw CaptureError.unsupported(device: "dds:\(rosTopic)", problem: "cannot create a reader: \(Self.error(r))") }
        return r
    }

    public func writer(ros rosTopic: String, type: String, qos: QoS) throws -> Int32 {
        let w = dl_dds_writer(handle, try topic(ros: rosTopic, type: type), qos.c)
        guard w > 0 else { throw CaptureError.unsupported(device: "dds:\(rosTopic)", problem: "cannot create a writer: \(Self.error(w))") }
        return w
    }

    /// Writes one CDR sample stamped `timestampNs` (ns since the Unix epoch; nil: now).
    public func write(_ writer: Int32, _ sample: [UInt8], timestampNs: Int64? = nil, topic: String) throws {
        let rc = sample.withUnsafeBytes { dl_dds_write(writer, $0.baseAddress, UInt32($0.count), timestampNs ?? -1) }
        guard rc >= 0 else { throw CaptureError.unsupported(device: "dds:\(topic)", problem: "write failed: \(Self.error(rc))") }
    }

    /// Writes one image message made straight into the sample's own buffer (no copy of its pixels
    /// after it is made: a 1280x720 rgb8 image is 2.7 MB), stamped with the time of writing.
    public func write(_ writer: Int32, _ message: ROS2Message.ImageEncoding, topic: String) throws {
        guard message.count <= Int(UInt32.max - 8), let buffer = dl_dds_buffer(UInt32(message.count)) else {
            throw CaptureError.unsupported(device: "dds:\(topic)", problem: "write failed: no memory for a \(message.count)-byte sample")
        }
        message.write(into: UnsafeMutableRawBufferPointer(start: buffer, count: message.count))
        let rc = dl_dds_write_buffer(writer, buffer, UInt32(message.count))
        guard rc >= 0 else { throw CaptureError.unsupported(device: "dds:\(topic)", problem: "write failed: \(Self.error(rc))") }
    }

    /// What came with a taken sample.
    public struct SampleInfo: Sendable, Equatable {
        /// The writer's source timestamp (ns since the Unix epoch).
        public var sourceNs: Int64
        /// The writer's sequence number (RTPS writerSN) when the sample came over the network, else 0.
        public var sequence: Int64
        /// When Cyclone handed over the reassembled sample (ns since the Unix epoch), else 0.
        public var receivedNs: Int64
        /// The writer (its instance handle here).
        public var writer: UInt64
    }

    /// Takes every waiting sample of `reader`, handing each to `body` (bytes valid during the call)
    /// with its source timestamp, sequence number and writer. Returns how many.
    @discardableResult
    public func takeAll(_ reader: Int32, _ body: (UnsafeRawBufferPointer, SampleInfo) -> Void) -> Int {
        var n = 0
        var s = dl_dds_sample()
        while dl_dds_take(reader, &s) == 1 {
            body(UnsafeRawBufferPointer(start: s.data, count: Int(s.size)),
                 SampleInfo(sourceNs: s.source_timestamp_ns, sequence: s.sequence, receivedNs: s.received_ns, writer: s.writer))
            dl_dds_release(&s)
            n += 1
        }
        return n
    }

    /// Calls `body` with `context` whenever `reader` has new data, on the thread that delivered it:
    /// for a sample from the network, Cyclone's receive thread, right after the sample is whole (no
    /// other thread to wake). `context` must outlive the reader (the participant's `close` waits
    /// for a call in progress).
    func onData(_ reader: Int32, context: UnsafeMutableRawPointer, _ body: @escaping @convention(c) (Int32, UnsafeMutableRawPointer?) -> Void) throws {
        let rc = dl_dds_on_data(reader, body, context)
        guard rc >= 0 else { throw CaptureError.unsupported(device: "dds", problem: "cannot listen to a reader: \(Self.error(rc))") }
    }

    /// Samples Cyclone knows `reader` lost so far.
    public func samplesLost(_ reader: Int32) -> Int { max(0, Int(dl_dds_samples_lost(reader))) }
    /// Writers matched with `reader` now.
    public func matchedWriters(_ reader: Int32) -> Int { max(0, Int(dl_dds_matched_writers(reader))) }
    /// Readers matched with `writer` now.
    public func matchedReaders(_ writer: Int32) -> Int { max(0, Int(dl_dds_matched_readers(writer))) }

    /// A writer discovered on the domain (DCPSPublication).
    public struct Publication: Sendable, Equatable, Hashable {
        /// The ROS 2 topic (`rt/` taken off), or the DDS topic when it is not a ROS 2 one.
        public var topic: String
        /// The DDS topic as discovered.
        public var ddsTopic: String
        public var type: String
        public var reliable: Bool
    }

    /// The writers discovered on the domain after `seconds` of listening.
    public func publications(listening seconds: Double) throws -> [Publication] {
        let r = try publicationReader()
        defer { _ = dl_dds_delete(r) }
        Thread.sleep(forTimeInterval: seconds)
        return try publications(r)
    }

    /// A reader of the writers discovered on the domain (DCPSPublication); `publications` reads it.
    public func publicationReader() throws -> Int32 {
        let r = dl_dds_publications_reader(handle)
        guard r > 0 else { throw CaptureError.unsupported(device: "dds domain \(domain)", problem: "cannot read DCPSPublication: \(Self.error(r))") }
        return r
    }

    /// The writers `reader` (a `publicationReader`) knows now, each topic and type once.
    public func publications(_ reader: Int32) throws -> [Publication] {
        var buf = [CChar](repeating: 0, count: 1 << 18)
        let n = dl_dds_publications(reader, &buf, buf.count)
        guard n >= 0 else { throw CaptureError.unsupported(device: "dds domain \(domain)", problem: "cannot read DCPSPublication: \(Self.error(n))") }
        let text = String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var out: [Publication] = []
        for line in text.split(separator: "\n") {
            let f = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard f.count == 3 else { continue }
            let ros = f[0].hasPrefix("rt/") ? String(f[0].dropFirst(2)) : f[0]
            let p = Publication(topic: ros, ddsTopic: f[0], type: f[1], reliable: f[2] == "1")
            if !out.contains(p) { out.append(p) }
        }
        return out
    }
}

/// A waitset woken by data on its readers (or by `wake`).
final class DDSWaitset: Sendable {
    let handle: Int32
    init(_ participant: DDSParticipant) throws {
        handle = dl_dds_waitset(participant.handle)
        guard handle > 0 else { throw CaptureError.unsupported(device: "dds", problem: "cannot create a waitset: \(DDSParticipant.error(handle))") }
    }
    func attach(_ reader: Int32) throws {
        let rc = dl_dds_waitset_attach(handle, reader)
        guard rc >= 0 else { throw CaptureError.unsupported(device: "dds", problem: "cannot wait on a reader: \(DDSParticipant.error(rc))") }
    }
    /// Waits up to `seconds` for data (or a wake).
    func wait(_ seconds: Double) { _ = dl_dds_waitset_wait(handle, Int64(seconds * 1e9)) }
    func wake() { _ = dl_dds_waitset_wake(handle) }
}

/// ROS 2 names as DDS sees them. The messages themselves are `ROS2Message`'s, in the same CDR
/// rosbag2 stores (rmw_cyclonedds puts the encapsulation header and the plain CDR on the wire).
public enum ROS2DDS {
    /// ROS 2 type names as DDS sees them.
    public enum TypeName {
        public static let image = "sensor_msgs::msg::dds_::Image_"
        public static let compressedImage = "sensor_msgs::msg::dds_::CompressedImage_"
        public static let cameraInfo = "sensor_msgs::msg::dds_::CameraInfo_"
        public static let tfMessage = "tf2_msgs::msg::dds_::TFMessage_"
    }

    /// The DDS topic of a ROS 2 topic: `rt` and the absolute name (`/camera/color/image_raw` →
    /// `rt/camera/color/image_raw`).
    public static func ddsTopic(_ rosTopic: String) -> String {
        "rt" + (rosTopic.hasPrefix("/") ? rosTopic : "/" + rosTopic)
    }
}
