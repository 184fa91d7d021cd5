import DepthKit
import Foundation

/// A ROS 2 recording (rosbag2 folder, bare `.db3` or bare `.mcap`; `ROS2Recording` reads the
/// container) played as a depthlens source, without ROS installed. `ROS2Message` decodes the CDR.
///
/// **Streams.** Chosen automatically unless `depth=`/`color=` name the topics (`ros2:PATH,depth=/a,color=/b`):
/// - librealsense's layout, `/device_D/sensor_S/<Stream>_N/image/data` (`sensor_msgs/msg/Image`, the
///   first ROS 2 writer) or `…/image/data/compressedDepth` and `…/image/data/compressed`
///   (`sensor_msgs/msg/CompressedImage`, 2.59's writer): `Depth_N` is depth, `Color_N` color,
///   `Infrared_N` infrared (shown as color when there is no color stream). The shared ROS 1 layout
///   converted by `rosbags-convert` is the same without the suffixes.
/// - any other bag (realsense2_camera's `/camera/camera/{depth,color,aligned_depth_to_color,infra1}/…`
///   included): an `Image` with a 16-bit or `32FC1` encoding, or a `compressedDepth`
///   `CompressedImage`, is depth; an 8-bit `Image` or a PNG/JPEG `CompressedImage` is color (`mono8`
///   infrared). A topic naming "depth" (resp. "color") wins, a raw `Image` wins over its compressed
///   twin, and `aligned_depth_to_color` comes after the depth camera's own.
///
/// Depth comes out as depthFloat32 meters (16-bit raw × the recording's depth units; `32FC1` is
/// meters; compressedDepth as image_transport decodes it), color as rgba8.
///
/// **Calibration.** Intrinsics from each stream's `sensor_msgs/msg/CameraInfo`: the topic next to
/// the image (`…/camera_info`); for librealsense its `key=value` string `<stream>/camera_info` (it
/// names the distortion model exactly), else `…/image/camera_info` or (ROS 1 converted) `…/info/camera_info`. Depth→color extrinsics from the TF tree
/// of `/tf_static` (and `/tf`'s first transform per frame pair): each frame's pose in its tree's
/// root composed from the depth image's `frame_id` to the color image's (the driver's
/// `camera_link → *_frame → *_optical_frame` chain; librealsense's `ref_N → Depth, Color`); else
/// librealsense's `…/tf/ref_N` strings (rs2_extrinsics from the reference stream, rotation column-major)
/// or converted `…/tf/<group>` transforms, composed as `BagSource` does (T_color ∘ T_depth⁻¹). Depth
/// units from librealsense's `option/Depth Units` (Float32 or string) or its per-frame
/// `depth_units` metadata; else 16-bit depth is millimeters (ROS's `16UC1` convention).
///
/// **Frames and time.** As `BagSource`: the stream with more frames leads (color on a tie), each of
/// its frames paired with the other stream's frame nearest in log time (the recording's index: one
/// clock, no message read); playback follows log times and seeks by index or time. A frame's
/// `timestamp` is its header stamp, seconds; for librealsense recordings the frame timestamp its
/// `…/image/metadata` carries (`timestamp=` milliseconds, as pyrealsense2 reports it).
///
/// **Streams on their own clocks** (`RecordedStreams`, what `convert` writes): the depth and color
/// topics playback uses, each with every message once under its own stamp (as its frames carry it
/// when they lead: librealsense's metadata timestamp, else the header stamp).
///
/// **IMU** (`IMURecording`): the `sensor_msgs/msg/Imu` topics `ROSIMUTopics` picks (librealsense's
/// Accel_N and Gyro_N streams, else the first Imu topic), each sample under its header stamp.
public final class ROS2Source: FrameSource, RecordedStreams, IMURecording, RecordingDamage {
    public let path: String
    /// Topics chosen by the user (nil: automatic).
    public let depthTopic: String?
    public let colorTopic: String?
    public var name: String { "ros2:\(path)" }
    public private(set) var intrinsics: CameraIntrinsics = .default(width: 640, height: 480)
    public var isLive: Bool { false }
    public private(set) var calibration: RGBDCalibration?
    public private(set) var metadata = SourceMetadata(kind: "ros2")
    public private(set) var warnings: [String] = []
    public var onWarning: ((String) -> Void)?
    /// Log time of each lead frame, seconds from the first (the playback timeline). After `start()`.
    public private(set) var frameTimes: [Double] = []
    /// Meters per raw unit of 16-bit depth, after `start()`.
    public private(set) var depthUnits: Float?
    /// `RecordingDamage`: read every chunk at `start()` (`info`, `convert`).
    public var checksWholeRecording = false
    /// `RecordingDamage`: what of the recording could not be read (`ROS2Recording.damage`), from
    /// `start()` (kept after `stop()`, for the exit status of a command that has finished with it).
    public private(set) var damage: [String] = []

    /// One image topic of the recording.
    struct Stream {
        enum Role { case depth, color, infrared }
        /// `zstd`: librealsense's raw pixels compressed with zstd in a `CompressedImage` (`YUYV; zstd; 640x480 step=1280`).
        enum Kind { case raw, compressed, compressedDepth, zstd }
        var role: Role
        var kind: Kind
        var topic: String
        var type: String
        var refs: [ROS2MessageRef]
        /// librealsense's stream prefix ("/device_0/sensor_0/Depth_0"), nil for other bags.
        var prefix: String?
        var sensorPrefix: String?
        /// The encoding (raw) or format string (compressed).
        var encoding: String
        var width: Int
        var height: Int
        var frameID: String
        var fps: Double?
        /// False for topics of another stream or encoding: listed by `info`, never played.
        var playable = true
        /// 16-bit or float depth (raw or compressedDepth), what `depth=` may name.
        var holdsDepth = false
    }

    private var recording: ROS2Recording?
    private var lead: Stream?
    private var other: Stream?
    private var pairs: [Int?] = []
    private var depthIsLead = false
    private var metadataRefs: [ROS2MessageRef] = []
    private var metadataTopic: String?
    /// Pause, step, seek, loop and rate (the one implementation every recording shares).
    public let playbackState: RecordingPlayback
    public var playback: PlaybackControl? { playbackState }
    /// The depth and color topics, each on its own clock (what `convert` writes).
    public var recordedStreams: RecordedStreams? { self }
    /// The accelerometer and gyroscope topics, when the recording has any.
    public var imu: IMURecording? { imuTopics.isEmpty ? nil : self }
    private var imuTopics = ROSIMUTopics(picks: [])
    private var imuRead: IMUSamples?
    private var cachedColor: (index: Int, buffer: PixelBuffer)?
    /// The streams `RecordedStreams` offers (color, then depth: those played) and their stamps once read.
    private var exportable: [(stream: Stream, kind: StreamKind)] = []
    private var recorded: [RecordedStream]?
    private var cachedDepth: (index: Int, depth: DepthData)?
    private var blackColor: PixelBuffer?
    /// Frames of timed playback being decoded on worker threads (`readAhead`).
    private let ahead = PlaybackReadAhead<DecodedFrame>()
    /// Frames playback delivered that were decoded ahead (tests).
    var framesDecodedAhead: Int { ahead.taken }
    /// `recordedStreams()`' answer and its streams, once asked.
    private var streamsCache: [RecordedStream]?
    private var playedStreams: [Stream] = []

    public init(path: String, depthTopic: String? = nil, colorTopic: String? = nil) {
        self.path = path
        playbackState = RecordingPlayback(name: "ros2:\(path)")
        self.depthTopic = depthTopic
        self.colorTopic = colorTopic
    }

    // MARK: Opening

    /// Reads the recording's index, streams, calibration and metadata and decodes the first frame.
    /// Throws `CaptureError.file` (one line naming the recording and the problem).
    public func start() throws {
        stop()
        warnings.removeAll()
        damage = []
        do { try open() } catch {
            stop()
            throw CaptureError.wrapping(error, path: path)
        }
    }

    static let imageTypes: Set<String> = ["sensor_msgs/msg/Image", "sensor_msgs/msg/CompressedImage"]

    private func open() throws {
        let rec = try ROS2Recording(path: path)
        if checksWholeRecording { rec.checkChunks() }
        // Damage is said, not hidden: the readable frames play, each missing part is a warning (a notice in the viewer).
        damage = rec.damage
        for line in damage { warn(line) }
        recording = rec
        imuTopics = ROSIMUTopics(imuTopics: rec.topics.filter { $0.type == "sensor_msgs/msg/Imu" }.map(\.name)) { topic in
            guard let ref = rec.messages(onTopic: topic).first,
                  let m = try? ROS2Message.imu(try rec.data(of: ref), file: path, topic: topic) else { return (false, false) }
            return (m.linearAccelerationCovariance.first != -1, m.angularVelocityCovariance.first != -1)
        }
        let inspected = imageStreams(rec)
        var all = inspected.streams
        let problems = inspected.problems
        for (topic, role) in [(depthTopic, Stream.Role.depth), (colorTopic, .color)] {
            guard let topic else { continue }
            guard let i = all.firstIndex(where: { $0.topic == topic }) else {
                let known = all.map(\.topic).joined(separator: ", ")
                throw CaptureError.file(path: path, problem: "no image topic \(topic) in the recording"
                                        + (known.isEmpty ? "" : " (image topics: \(known))"))
            }
            guard all[i].playable || role == .color, !all[i].refs.isEmpty else {
                throw CaptureError.file(path: path, problem: "\(topic) (\(all[i].encoding)) cannot be played"
                                        + (all[i].refs.isEmpty ? ": it holds no messages" : ""))
            }
            guard role == .color || all[i].holdsDepth else {
                throw CaptureError.file(path: path, problem: "\(topic) (\(all[i].encoding)) is not depth")
            }
            all[i].playable = true
            all[i].role = role == .color && all[i].role == .infrared ? .infrared : role
        }
        guard !all.isEmpty else {
            let list = rec.topics.prefix(6).map { "\($0.name) (\($0.type))" }.joined(separator: ", ")
            throw CaptureError.file(path: path, problem: rec.topics.isEmpty ? "the recording holds no topics"
                                    : "no image topic (sensor_msgs/msg/Image or CompressedImage) in the recording; it has \(list)"
                                    + (rec.topics.count > 6 ? ", …" : ""))
        }
        let usable = all.filter { $0.playable && !$0.refs.isEmpty }
        let depth = depthTopic.flatMap { t in usable.first { $0.topic == t } } ?? usable.first { $0.role == .depth }
        let color = colorTopic.flatMap { t in usable.first { $0.topic == t } }
            ?? usable.first { $0.role == .color } ?? usable.first { $0.role == .infrared }
        guard depth != nil || color != nil else {
            if let first = problems.first { throw first }
            throw CaptureError.file(path: path, problem: "no depth or color image topic with a supported encoding")
        }
        for p in problems { warn("\(p)") }

        // Depth units.
        var units: Float = 0.001
        var unitsKnown = false
        if let d = depth, d.encoding != "32FC1", !d.encoding.hasPrefix("32FC1") {
            if let u = depthUnitsOption(rec, d) { units = u; unitsKnown = true }
        }
        depthUnits = depth == nil ? nil : units

        // Lead stream and pairing by log time.
        let lead: Stream, other: Stream?
        if let d = depth, let c = color {
            (lead, other) = d.refs.count > c.refs.count ? (d, c) : (c, d)
        } else {
            lead = (depth ?? color)!
            other = nil
        }
        self.lead = lead
        self.other = other
        exportable = [color.map { ($0, $0.role == .infrared ? StreamKind.ir : .color) }, depth.map { ($0, StreamKind.depth) }].compactMap { $0 }
        recorded = nil
        depthIsLead = lead.role == .depth
        let t0 = lead.refs[0].logTime
        frameTimes = lead.refs.map { Double($0.logTime - t0) * 1e-9 }
        pairs = lead.refs.map { ref in other.flatMap { Self.nearest($0.refs, ref.logTime) } }
        playbackState.open(count: lead.refs.count, timestamps: frameTimes, defaultFPS: lead.fps ?? 30)
        if let p = lead.prefix, rec.topics.contains(where: { $0.name == "\(p)/image/metadata" && $0.type == "std_msgs/msg/String" }) {
            // librealsense's ROS 2 per-frame metadata (its ROS 1 layout has KeyValue messages there).
            metadataTopic = "\(p)/image/metadata"
            metadataRefs = rec.messages(onTopic: "\(p)/image/metadata")
        }

        // Calibration.
        let depthCam = depth.flatMap { cameraModel(rec, $0) }
        let colorCam = color.flatMap { cameraModel(rec, $0) }
        let dW = depth?.width ?? color!.width, dH = depth?.height ?? color!.height
        let cW = color?.width ?? dW, cH = color?.height ?? dH
        var depthToColor = RigidTransform.identity
        if let d = depth, let c = color {
            if let t = extrinsics(rec, depth: d, color: c) {
                depthToColor = t
            } else if d.frameID == c.frameID, !d.frameID.isEmpty, d.prefix == nil {
                // The same frame (an aligned_depth_to_color stream): registered.
            } else {
                warn("no extrinsics from \(d.topic) (frame '\(d.frameID)') to \(c.topic) (frame '\(c.frameID)') in the recording; "
                     + "depth and color taken as registered")
            }
        }
        let depthScale = BagSource.unitsPerMeter(units)
        if depthCam != nil || colorCam != nil {
            let dc = depthCam ?? (color == nil ? nil : colorCam) ?? .default(width: dW, height: dH)
            let cc = color == nil ? dc : (colorCam ?? .default(width: cW, height: cH))
            calibration = RGBDCalibration(depth: dc, color: cc, depthToColor: depth == nil || color == nil ? .identity : depthToColor,
                                          depthScale: depthScale, origin: "recording")
            if let d = depth, depthCam == nil { warn("no camera_info for \(d.topic); default depth intrinsics assumed") }
            if let c = color, colorCam == nil { warn("no camera_info for \(c.topic); default color intrinsics assumed") }
        } else {
            calibration = nil
        }
        intrinsics = calibration?.color.intrinsics ?? .default(width: cW, height: cH)
        if color == nil, let d = depth {
            warn("the recording has depth (\(d.topic)) but no color or infrared stream: color is shown black")
            let b = PixelBuffer(width: d.width, height: d.height, format: .rgba8)
            for y in 0..<b.height {
                let r = b.row(y, as: UInt8.self)
                for x in 0..<b.width { r[4 * x] = 0; r[4 * x + 1] = 0; r[4 * x + 2] = 0; r[4 * x + 3] = 255 }
            }
            b.markModified()
            blackColor = b
        }

        // Metadata: the streams played, then every image topic (info lists them all).
        var streams: [SourceMetadata.Stream] = []
        for s in [depth, color].compactMap({ $0 }) {
            let name = s.role == .depth ? "depth" : (s.role == .color ? "color" : "ir")
            streams.append(SourceMetadata.Stream(name: name, width: s.width, height: s.height, fps: s.fps,
                                                 encoding: s.encoding, frames: s.refs.count))
        }
        for s in all {
            let type = s.type.split(separator: "/").last.map(String.init) ?? s.type
            streams.append(SourceMetadata.Stream(name: s.topic, width: s.width, height: s.height, fps: s.fps,
                                                 encoding: "\(type) \(s.encoding)", frames: s.refs.count))
        }
        var tags: [String: String] = ["storage": rec.storage]
        if depth != nil { tags["depth_units"] = "\(units)" + (unitsKnown ? "" : " (assumed)") }
        if let v = rec.messages(onTopic: "/file_version").first,
           let n = try? ROS2Message.uint32(try rec.data(of: v), file: path, topic: "/file_version") {
            tags["realsense_file_version"] = "\(n)"
        }
        let device = deviceInfo(rec)
        metadata = SourceMetadata(kind: "ros2", device: device, streams: streams, durationSeconds: frameTimes.last, tags: tags)
        if let d = depth, !unitsKnown, !d.encoding.hasPrefix("32FC1") {
            warn("no Depth Units in the recording; 16-bit depth taken as millimeters")
        }
        // The first frame must decode: a recording whose images cannot be read fails here, not later.
        _ = try frame(at: 0)
    }

    public func stop() {
        recording = nil
        playbackState.close()
        lead = nil
        other = nil
        pairs = []
        metadataRefs = []
        metadataTopic = nil
        exportable = []
        recorded = nil
        cachedColor = nil
        cachedDepth = nil
        blackColor = nil
        ahead.removeAll()
        streamsCache = nil
        playedStreams = []
        imuTopics = ROSIMUTopics(picks: [])
        imuRead = nil
    }

    /// The index in `refs` (sorted by log time) nearest `t`; the earlier one on a tie.
    static func nearest(_ refs: [ROS2MessageRef], _ t: Int64) -> Int? {
        guard !refs.isEmpty else { return nil }
        var lo = 0, hi = refs.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if refs[mid].logTime < t { lo = mid + 1 } else { hi = mid }
        }
        if lo == refs.count { return refs.count - 1 }
        if lo == 0 { return 0 }
        return t - refs[lo - 1].logTime <= refs[lo].logTime - t ? lo - 1 : lo
    }

    /// Frames per second from the median gap between log times.
    static func rate(_ refs: [ROS2MessageRef]) -> Double? {
        guard refs.count >= 2 else { return nil }
        let gaps = zip(refs.dropFirst(), refs).map { $0.logTime - $1.logTime }.filter { $0 > 0 }.sorted()
        guard !gaps.isEmpty else { return nil }
        return (1e9 / Double(gaps[gaps.count / 2]) * 1000).rounded() / 1000
    }

    private func warn(_ message: String) {
        warnings.append(message)
        onWarning?(message)
    }

    // MARK: Streams

    /// Every image topic with its role (topics of no role listed but not playable), best first
    /// within each role; and the problems of topics that could not be read.
    private func imageStreams(_ rec: ROS2Recording) -> (streams: [Stream], problems: [CaptureError]) {
        var out: [Stream] = []
        var problems: [CaptureError] = []
        var skipped: [String] = []
        for topic in rec.topics where Self.imageTypes.contains(topic.type) {
            let refs = rec.messages(onTopic: topic.name)
            let parts = topic.name.split(separator: "/", omittingEmptySubsequences: false)
            var prefix: String?, sensorPrefix: String?, rsStream: Substring?
            // librealsense: "", "device_D", "sensor_S", "<Stream>_N", "image", "data"[, "compressed…"].
            if (6...7).contains(parts.count), parts[1].hasPrefix("device_"), parts[2].hasPrefix("sensor_"), parts[4] == "image",
               parts[5] == "data" {
                prefix = parts[0...3].joined(separator: "/")
                sensorPrefix = parts[0...2].joined(separator: "/")
                rsStream = parts[3].prefix { $0 != "_" }
            }
            guard let first = refs.first else {
                out.append(Stream(role: .color, kind: .raw, topic: topic.name, type: topic.type, refs: [], prefix: prefix,
                                  sensorPrefix: sensorPrefix, encoding: "", width: 0, height: 0, frameID: "", fps: nil,
                                  playable: false))
                continue
            }
            // The first frame says what the topic holds. A topic that cannot be read is listed (not
            // played) and its problem kept: the recording fails with it only when nothing else plays.
            var kind = Stream.Kind.raw
            var encoding = "?", width = 0, height = 0, frameID = ""
            var isDepth = false, isColor = false, isMono = false
            do {
                let bytes = try rec.data(of: first)
                if topic.type == "sensor_msgs/msg/Image" {
                    let image = try ROS2Message.image(bytes, file: path, topic: topic.name)
                    (encoding, width, height, frameID) = (image.encoding, image.width, image.height, image.header.frameID)
                    try ROSImageDecoding.check(image, file: path, topic: topic.name)
                    isDepth = ROSImageDecoding.isDepthEncoding(image.encoding)
                    isColor = ROSImageDecoding.isColorEncoding(image.encoding)
                    isMono = ["mono8", "8UC1"].contains(image.encoding)
                } else {
                    let m = try ROS2Message.compressedImage(bytes, file: path, topic: topic.name)
                    (encoding, frameID) = (m.format, m.header.frameID)
                    if CompressedDepth.isCompressedDepth(m.format) {
                        kind = .compressedDepth
                        let d = try CompressedDepth.decode(m.data, format: m.format, file: path, topic: topic.name)
                        (width, height, isDepth) = (d.width, d.height, true)
                    } else if ROSImageDecoding.isLibrealsenseZstd(m.format) {
                        kind = .zstd
                        let image = try ROSImageDecoding.librealsenseZstd(m.data, format: m.format, file: path, topic: topic.name)
                        (width, height) = (image.width, image.height)
                        isDepth = ROSImageDecoding.isDepthEncoding(image.encoding)
                        isColor = ROSImageDecoding.isColorEncoding(image.encoding)
                        isMono = ["mono8", "8UC1"].contains(image.encoding)
                    } else {
                        kind = .compressed
                        let c = try ROSImageDecoding.compressedColor(m.data, format: m.format, file: path, topic: topic.name)
                        (width, height, isColor) = (c.width, c.height, true)
                        isMono = m.format.hasPrefix("mono8") || m.format.hasPrefix("8UC1")
                    }
                }
            } catch {
                problems.append(CaptureError.wrapping(error, path: path))
            }
            var role: Stream.Role?
            if let stream = rsStream {
                switch stream {
                case "Depth": role = isDepth ? .depth : nil
                case "Color": role = isColor ? .color : nil
                case "Infrared", "Fisheye": role = isColor ? .infrared : nil
                default: role = nil
                }
            } else if isDepth {
                role = .depth
            } else if isColor {
                role = isMono || topic.name.contains("infra") ? .infrared : .color
            }
            var fps: Double?
            if let p = prefix { fps = streamFPS(rec, p) }
            let s = Stream(role: role ?? .color, kind: kind, topic: topic.name, type: topic.type, refs: refs, prefix: prefix,
                           sensorPrefix: sensorPrefix, encoding: encoding, width: width, height: height, frameID: frameID,
                           fps: fps ?? Self.rate(refs), holdsDepth: isDepth)
            if role == nil {
                skipped.append("\(topic.name) (\(encoding))")
                var listed = s
                listed.playable = false
                out.append(listed)
                continue
            }
            out.append(s)
        }
        if !skipped.isEmpty {
            warn("image topics skipped (unsupported stream or encoding): \(skipped.joined(separator: ", "))")
        }
        func rank(_ s: Stream) -> Int {
            var r = 0
            let t = s.topic.lowercased()
            if s.prefix == nil, !t.contains(s.role == .depth ? "depth" : (s.role == .color ? "color" : "infra")) { r += 4 }
            if t.contains("aligned") { r += 2 }
            if s.kind != .raw { r += 1 }
            return r
        }
        return (out.enumerated().sorted { a, b in
            rank(a.element) != rank(b.element) ? rank(a.element) < rank(b.element) : a.offset < b.offset
        }.map(\.element), problems)
    }

    /// librealsense's stream fps: ROS 2's `…/info` string (`encoding=Z16;fps=30`) or ROS 1's StreamInfo.
    private func streamFPS(_ rec: ROS2Recording, _ prefix: String) -> Double? {
        let topic = "\(prefix)/info"
        guard let t = rec.topics.first(where: { $0.name == topic }), let ref = rec.messages(onTopic: topic).first,
              let bytes = try? rec.data(of: ref) else { return nil }
        switch t.type {
        case "std_msgs/msg/String":
            guard let s = try? ROS2Message.string(bytes, file: path, topic: topic),
                  let fps = ROS2Message.keyValues(s)["fps"].flatMap(Double.init), fps > 0, fps < 10000 else { return nil }
            return fps
        case "realsense_msgs/msg/StreamInfo":
            guard let si = try? ROS2Message.streamInfo(bytes, file: path, topic: topic), si.fps > 0 else { return nil }
            return Double(si.fps)
        default:
            return nil
        }
    }

    /// Depth units (meters per unit): librealsense's option topic (ROS 1 converted: `Depth Units`,
    /// Float32; ROS 2: `Depth_Units`, Float32 or a string), else its per-frame metadata's `depth_units`.
    private func depthUnitsOption(_ rec: ROS2Recording, _ d: Stream) -> Float? {
        func plausible(_ v: Double?) -> Float? {
            guard let v, v >= 1e-7, v < 1 else { return nil }
            return Float(v)
        }
        let suffixes = ["/option/Depth Units/value", "/option/Depth_Units/value"]
        let candidates = (d.sensorPrefix.map { p in suffixes.map { p + $0 } } ?? [])
            + rec.topics.map(\.name).filter { n in suffixes.contains { n.hasSuffix($0) } }
        for topic in candidates {
            guard let t = rec.topics.first(where: { $0.name == topic }), let ref = rec.messages(onTopic: topic).last,
                  let bytes = try? rec.data(of: ref) else { continue }
            switch t.type {
            case "std_msgs/msg/Float32":
                if let v = plausible((try? ROS2Message.float32(bytes, file: path, topic: topic)).map(Double.init)) { return v }
            case "std_msgs/msg/String":
                let s = (try? ROS2Message.string(bytes, file: path, topic: topic)) ?? ""
                if let v = plausible(Double(s.trimmingCharacters(in: .whitespaces)) ?? ROS2Message.keyValues(s)["value"].flatMap(Double.init)) {
                    return v
                }
            default: continue
            }
        }
        if let p = d.prefix, let ref = rec.messages(onTopic: "\(p)/image/metadata").first,
           let s = try? ROS2Message.string(try rec.data(of: ref), file: path, topic: "\(p)/image/metadata"),
           let v = plausible(ROS2Message.keyValues(s)["depth_units"].flatMap(Double.init)) {
            return v
        }
        return nil
    }

    /// Device name, serial and firmware: librealsense's `/device_0/info` (ROS 1 KeyValue converted,
    /// or ROS 2 `key=value` strings).
    private func deviceInfo(_ rec: ROS2Recording) -> SourceMetadata.Device? {
        var device = SourceMetadata.Device()
        for t in rec.topics where t.name.hasPrefix("/device_") && t.name.hasSuffix("/info") && t.name.split(separator: "/").count == 2 {
            for ref in rec.messages(onTopic: t.name) {
                guard let bytes = try? rec.data(of: ref) else { continue }
                var pairs: [String: String] = [:]
                switch t.type {
                case "diagnostic_msgs/msg/KeyValue":
                    if let kv = try? ROS2Message.keyValue(bytes, file: path, topic: t.name) { pairs[kv.key] = kv.value }
                case "std_msgs/msg/String":
                    pairs = ROS2Message.keyValues((try? ROS2Message.string(bytes, file: path, topic: t.name)) ?? "")
                default: break
                }
                for (k, v) in pairs {
                    switch k {
                    case "Name": device.name = v
                    case "Serial Number", "Serial_Number": device.serial = v
                    case "Firmware Version", "Firmware_Version": device.firmware = v
                    default: break
                    }
                }
            }
            break
        }
        return device.name != nil || device.serial != nil || device.firmware != nil ? device : nil
    }

    /// The stream's CameraInfo as a camera model (see the type's documentation for the topics tried).
    private func cameraModel(_ rec: ROS2Recording, _ s: Stream) -> CameraModel? {
        var candidates: [String] = []
        if let p = s.prefix {
            // The stream's own key=value string first: librealsense's CameraInfo says plumb_bob for
            // every model but Kannala-Brandt (inverse Brown-Conrady too); the string names it.
            candidates = ["\(p)/camera_info", "\(p)/image/camera_info", "\(p)/info/camera_info"]
        } else {
            var base = s.topic
            for suffix in ["/compressedDepth", "/compressed"] where base.hasSuffix(suffix) { base = String(base.dropLast(suffix.count)) }
            candidates = [String(base.prefix(upTo: base.lastIndex(of: "/") ?? base.endIndex)) + "/camera_info"]
        }
        for topic in candidates {
            guard let t = rec.topics.first(where: { $0.name == topic }), let ref = rec.messages(onTopic: topic).first,
                  let bytes = try? rec.data(of: ref) else { continue }
            switch t.type {
            case "sensor_msgs/msg/CameraInfo":
                guard let info = try? ROS2Message.cameraInfo(bytes, file: path, topic: topic),
                      let cam = ROSImageDecoding.cameraModel(K: info.K, D: info.D, distortionModel: info.distortionModel,
                                                             width: info.width, height: info.height,
                                                             streamWidth: s.width, streamHeight: s.height) else { continue }
                return cam
            case "std_msgs/msg/String":
                // librealsense's first ROS 2 writer: width=;height=;fx=;ppx=;fy=;ppy=;model=;coeffs=a,b,c,d,e
                guard let text = try? ROS2Message.string(bytes, file: path, topic: topic) else { continue }
                let kv = ROS2Message.keyValues(text)
                func num(_ k: String) -> Double? { kv[k].flatMap(Double.init) }
                guard let fx = num("fx"), let fy = num("fy"), let ppx = num("ppx"), let ppy = num("ppy") else { continue }
                let coeffs = (kv["coeffs"] ?? "").split(separator: ",").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
                if let cam = ROSImageDecoding.cameraModel(K: [fx, 0, ppx, 0, fy, ppy, 0, 0, 1], D: coeffs,
                                                          distortionModel: kv["model"] ?? "", width: Int(num("width") ?? 0),
                                                          height: Int(num("height") ?? 0), streamWidth: s.width, streamHeight: s.height) {
                    return cam
                }
            default: continue
            }
        }
        return nil
    }

    // MARK: Extrinsics

    /// A plausible rigid transform from a ROS translation and quaternion (finite, within 1 km).
    static func rigid(_ t: ROSMessage.Transform) -> RigidTransform? {
        let tr = t.translation, q = t.rotation
        guard (tr * tr).sum() < 1e6, (q * q).sum().isFinite, (q * q).sum() > 1e-12 else { return nil }
        return RigidTransform(rotation: t.rotationMatrix.map { Float($0) }, translation: SIMD3(Float(tr.x), Float(tr.y), Float(tr.z)))
    }

    /// Depth→color: librealsense's per-stream extrinsics for its layout, else the TF tree.
    private func extrinsics(_ rec: ROS2Recording, depth d: Stream, color c: Stream) -> RigidTransform? {
        if let dp = d.prefix, let cp = c.prefix, let td = streamExtrinsics(rec, dp), let tc = streamExtrinsics(rec, cp),
           td.group == tc.group {
            return tc.transform.composed(after: td.transform.inverse)
        }
        guard !d.frameID.isEmpty, !c.frameID.isEmpty, d.frameID != c.frameID else { return nil }
        return tfTree(rec).transform(from: d.frameID, to: c.frameID)
    }

    /// The static transforms of `/tf_static` (every message: writers repeat or extend the set) and the
    /// first of each parent/child pair on `/tf`.
    private func tfTree(_ rec: ROS2Recording) -> TFTree {
        var tree = TFTree()
        for topic in ["/tf_static", "/tf"] {
            guard rec.topics.contains(where: { $0.name == topic && $0.type == "tf2_msgs/msg/TFMessage" }) else { continue }
            // /tf may be long: its first messages are enough for a rig's fixed links.
            for ref in rec.messages(onTopic: topic).prefix(topic == "/tf" ? 50 : 10_000) {
                guard let bytes = try? rec.data(of: ref),
                      let list = try? ROS2Message.tfMessage(bytes, file: path, topic: topic) else { continue }
                for ts in list {
                    guard let t = Self.rigid(ts.transform) else { continue }
                    tree.add(parent: ts.header.frameID, child: ts.childFrameID, transform: t, replace: topic == "/tf_static")
                }
            }
        }
        return tree
    }

    /// librealsense's per-stream extrinsics from its reference stream: ROS 2's `…/tf/ref_N` string
    /// (rs2_extrinsics: `rotation=` 9 floats column-major, `translation=` 3) or ROS 1's converted
    /// `…/tf/<group>` Transform.
    private func streamExtrinsics(_ rec: ROS2Recording, _ prefix: String) -> (transform: RigidTransform, group: String)? {
        for t in rec.topics where t.name.hasPrefix(prefix + "/tf/") {
            let group = String(t.name.dropFirst(prefix.count + 4))
            guard let ref = rec.messages(onTopic: t.name).first, let bytes = try? rec.data(of: ref) else { continue }
            switch t.type {
            case "std_msgs/msg/String":
                guard let text = try? ROS2Message.string(bytes, file: path, topic: t.name) else { continue }
                let kv = ROS2Message.keyValues(text)
                let r = (kv["rotation"] ?? "").split(separator: ",").compactMap { Float($0.trimmingCharacters(in: .whitespaces)) }
                let tr = (kv["translation"] ?? "").split(separator: ",").compactMap { Float($0.trimmingCharacters(in: .whitespaces)) }
                guard r.count == 9, tr.count == 3, (r + tr).allSatisfy({ $0.isFinite && abs($0) < 1000 }) else { continue }
                // Column-major → row-major: R[i][j] = r[j·3 + i].
                let rowMajor = (0..<9).map { k in r[(k % 3) * 3 + k / 3] }
                return (RigidTransform(rotation: rowMajor, translation: SIMD3(tr[0], tr[1], tr[2])), group)
            case "geometry_msgs/msg/Transform":
                guard let x = try? ROS2Message.transform(bytes, file: path, topic: t.name), let rt = Self.rigid(x) else { continue }
                return (rt, group)
            default: continue
            }
        }
        return nil
    }

    // MARK: Frames

    /// Decodes lead frame `i` with its paired frame (taking what was decoded ahead for it, if anything).
    private func frame(at i: Int, ahead decoded: DecodedFrame? = nil) throws -> FrameSet {
        guard recording != nil, let lead else { throw CaptureError.invalidState("\(name): nextFrame before start()") }
        var color: PixelBuffer?
        var depth: DepthData?
        let stamp: Double
        if depthIsLead {
            let d = try decodeDepth(lead, index: i, ahead: decoded)
            depth = d.depth
            stamp = d.stamp
            if let o = other, let j = pairs[i] { color = try decodeColor(o, index: j, ahead: decoded).buffer }
        } else {
            let c = try decodeColor(lead, index: i, ahead: decoded)
            color = c.buffer
            stamp = c.stamp
            if let o = other, let j = pairs[i] { depth = try decodeDepth(o, index: j, ahead: decoded).depth }
        }
        guard let c = color ?? blackColor else {
            throw CaptureError.file(path: path, problem: "frame \(i) has no color")
        }
        return FrameSet(color: c, depth: depth, timestamp: frameTimestamp(lead.refs[i]) ?? stamp, index: i)
    }

    /// librealsense's frame timestamp for the lead frame at `ref`: the `timestamp=` (ms) of the
    /// metadata message logged with it.
    private func frameTimestamp(_ ref: ROS2MessageRef) -> Double? {
        guard let topic = metadataTopic else { return nil }
        return frameTimestamp(ref, metadata: metadataRefs, topic: topic)
    }

    /// The `timestamp=` (ms) of the message in `metadataRefs` (of `topic`) logged with `ref`.
    private func frameTimestamp(_ ref: ROS2MessageRef, metadata metadataRefs: [ROS2MessageRef], topic: String) -> Double? {
        guard let rec = recording, let j = Self.nearest(metadataRefs, ref.logTime),
              metadataRefs[j].logTime == ref.logTime,
              let text = try? ROS2Message.string(try rec.data(of: metadataRefs[j]), file: path, topic: topic),
              let ms = ROS2Message.keyValues(text)["timestamp"].flatMap(Double.init), ms.isFinite else { return nil }
        return ms / 1000
    }

    private func decodeDepth(_ s: Stream, index j: Int, ahead decoded: DecodedFrame? = nil) throws -> (depth: DepthData, stamp: Double) {
        guard let rec = recording else { throw CaptureError.invalidState("\(name): not started") }
        if let a = decoded?.depth, a.index == j {
            let d = try a.result.get()
            cachedDepth = (j, d.depth)
            return d
        }
        let bytes = try rec.data(of: s.refs[j])
        if let c = cachedDepth, c.index == j {
            return (c.depth, try ROS2Message.header(bytes, file: path, topic: s.topic, type: s.type).stamp.seconds)
        }
        let d = try Self.depth(bytes, messageFormat(s), units: depthUnits ?? 0.001, intrinsics: calibration?.depth.intrinsics)
        cachedDepth = (j, d.depth)
        return d
    }

    private func decodeColor(_ s: Stream, index j: Int, ahead decoded: DecodedFrame? = nil) throws -> (buffer: PixelBuffer, stamp: Double) {
        guard let rec = recording else { throw CaptureError.invalidState("\(name): not started") }
        if let a = decoded?.color, a.index == j {
            let c = try a.result.get()
            cachedColor = (j, c.buffer)
            return c
        }
        let bytes = try rec.data(of: s.refs[j])
        // A color frame paired with several lead frames is decoded once and its buffer shared.
        if let c = cachedColor, c.index == j {
            return (c.buffer, try ROS2Message.header(bytes, file: path, topic: s.topic, type: s.type).stamp.seconds)
        }
        let c = try Self.color(bytes, messageFormat(s))
        cachedColor = (j, c.buffer)
        return c
    }

    /// What decoding one message of a stream needs to know of the stream (a value: `convert`'s
    /// workers decode messages apart from the source).
    struct MessageFormat: Sendable {
        let path: String
        let kind: Stream.Kind
        let topic: String
        let type: String
        /// The stream's encoding or format string and size (its first frame's), which every frame must keep.
        let encoding: String
        let width: Int
        let height: Int
    }

    private func messageFormat(_ s: Stream) -> MessageFormat {
        MessageFormat(path: path, kind: s.kind, topic: s.topic, type: s.type, encoding: s.encoding, width: s.width, height: s.height)
    }

    /// One depth message (raw, compressedDepth or librealsense's zstd) in meters, with `intrinsics`
    /// when they are the map's size, and its header stamp.
    static func depth(_ bytes: [UInt8], _ s: MessageFormat, units: Float,
                      intrinsics intr: CameraIntrinsics?) throws -> (depth: DepthData, stamp: Double) {
        let path = s.path
        let map: PixelBuffer, stamp: Double
        switch s.kind {
        case .raw:
            let image = try ROS2Message.image(bytes, file: path, topic: s.topic)
            try check(image.encoding, image.width, image.height, s)
            try ROSImageDecoding.check(image, file: path, topic: s.topic)
            guard ROSImageDecoding.isDepthEncoding(image.encoding) else {
                throw CaptureError.file(path: path, problem: "\(s.topic) (\(s.encoding)) is not depth")
            }
            map = ROSImageDecoding.depthMeters(image, units: units)
            stamp = image.header.stamp.seconds
        case .zstd:
            let m = try ROS2Message.compressedImage(bytes, file: path, topic: s.topic)
            let image = try ROSImageDecoding.librealsenseZstd(m.data, format: m.format, file: path, topic: s.topic)
            try check(m.format, image.width, image.height, s)
            guard ROSImageDecoding.isDepthEncoding(image.encoding) else {
                throw CaptureError.file(path: path, problem: "\(s.topic) (\(s.encoding)) is not depth")
            }
            map = ROSImageDecoding.depthMeters(image, units: units)
            stamp = m.header.stamp.seconds
        case .compressedDepth:
            let m = try ROS2Message.compressedImage(bytes, file: path, topic: s.topic)
            let d = try CompressedDepth.decode(m.data, format: m.format, file: path, topic: s.topic)
            try check(m.format, d.width, d.height, s)
            map = d.meters(units: units)
            stamp = m.header.stamp.seconds
        case .compressed:
            throw CaptureError.file(path: path, problem: "\(s.topic) (\(s.encoding)) is not depth")
        }
        let depth = DepthData(map: map, intrinsics: intr?.width == map.width && intr?.height == map.height ? intr : nil)
        return (depth, stamp)
    }

    /// One color message (raw, PNG/JPEG or librealsense's zstd) as rgba8, and its header stamp.
    static func color(_ bytes: [UInt8], _ s: MessageFormat) throws -> (buffer: PixelBuffer, stamp: Double) {
        let path = s.path
        let out: PixelBuffer, stamp: Double
        switch s.kind {
        case .raw:
            let image = try ROS2Message.image(bytes, file: path, topic: s.topic)
            try check(image.encoding, image.width, image.height, s)
            try ROSImageDecoding.check(image, file: path, topic: s.topic)
            out = ROSImageDecoding.isDepthEncoding(image.encoding) ? Self.grayOfDepth(ROSImageDecoding.depthMeters(image, units: 1))
                : ROSImageDecoding.rgba(image)
            stamp = image.header.stamp.seconds
        case .zstd:
            let m = try ROS2Message.compressedImage(bytes, file: path, topic: s.topic)
            let image = try ROSImageDecoding.librealsenseZstd(m.data, format: m.format, file: path, topic: s.topic)
            try check(m.format, image.width, image.height, s)
            out = ROSImageDecoding.isDepthEncoding(image.encoding) ? Self.grayOfDepth(ROSImageDecoding.depthMeters(image, units: 1))
                : ROSImageDecoding.rgba(image)
            stamp = m.header.stamp.seconds
        case .compressed:
            let m = try ROS2Message.compressedImage(bytes, file: path, topic: s.topic)
            out = try ROSImageDecoding.compressedColor(m.data, format: m.format, file: path, topic: s.topic)
            try check(m.format, out.width, out.height, s)
            stamp = m.header.stamp.seconds
        case .compressedDepth:
            throw CaptureError.file(path: path, problem: "\(s.topic) (\(s.encoding)) is depth, not color")
        }
        return (out, stamp)
    }

    /// A 16-bit image chosen as color (`color=` naming a mono16 infrared topic): gray of its top 8 bits.
    static func grayOfDepth(_ raw: PixelBuffer) -> PixelBuffer {
        let out = PixelBuffer(width: raw.width, height: raw.height, format: .rgba8)
        for y in 0..<raw.height {
            let s = raw.row(y, as: Float.self), d = out.row(y, as: UInt8.self)
            for x in 0..<raw.width {
                let v = UInt8(min(255, max(0, s[x] / 256)))
                d[4 * x] = v; d[4 * x + 1] = v; d[4 * x + 2] = v; d[4 * x + 3] = 255
            }
        }
        out.markModified()
        return out
    }

    /// A frame must keep its stream's encoding and size (the first frame's).
    private static func check(_ encoding: String, _ width: Int, _ height: Int, _ s: MessageFormat) throws {
        guard encoding == s.encoding, width == s.width, height == s.height else {
            throw CaptureError.file(path: s.path, problem: "\(s.topic): frame is \(width)x\(height) \(encoding), "
                                    + "the stream started as \(s.width)x\(s.height) \(s.encoding)")
        }
    }

    public func nextFrame(now: Double) throws -> FrameSet? {
        guard recording != nil else { throw CaptureError.invalidState("\(name): nextFrame before start()") }
        let f = try playbackState.deliverDue(now: now, path: path, decode: { try frame(at: $0, ahead: ahead.take($0)) }, warn: warn)
        if let f { readAhead(after: f.index) }
        return f
    }

    /// Lead frame i's messages decoded on a worker (`readAhead`): the color and the depth message
    /// playback pairs for it (by stream index), each decoded or its error; nil for one not decoded
    /// ahead (none paired, or held by the cache when it was begun).
    struct DecodedFrame: Sendable {
        var color: (index: Int, result: Result<(buffer: PixelBuffer, stamp: Double), any Error>)?
        var depth: (index: Int, result: Result<(depth: DepthData, stamp: Double), any Error>)?
    }

    /// Begins decoding the frames timed playback will ask for after `i` (`PlaybackReadAhead`): their
    /// messages are read here and decoded (PNG, JPEG, compressedDepth, zstd, raw conversions) on workers.
    private func readAhead(after i: Int) {
        for k in ahead.framesToBegin(after: i, clock: playbackState.clock) {
            // A frame that cannot be read is left to `frame(at:)`, which reports it when it is due.
            guard let work = try? decodeWork(frame: k) else { return }
            ahead.begin(k, work)
        }
    }

    /// Reads lead frame `i`'s messages; the decoding of them, to run on a worker.
    private func decodeWork(frame i: Int) throws -> @Sendable () -> DecodedFrame {
        guard let rec = recording, let lead else { throw CaptureError.invalidState("\(name): not started") }
        let (colorStream, colorIndex) = depthIsLead ? (other, pairs[i]) : (lead, i)
        let (depthStream, depthIndex) = depthIsLead ? (lead, i) : (other, pairs[i])
        var color: (index: Int, bytes: [UInt8], format: MessageFormat)?
        if let s = colorStream, let j = colorIndex, cachedColor?.index != j { color = (j, try rec.data(of: s.refs[j]), messageFormat(s)) }
        var depth: (index: Int, bytes: [UInt8], format: MessageFormat)?
        if let s = depthStream, let j = depthIndex, cachedDepth?.index != j { depth = (j, try rec.data(of: s.refs[j]), messageFormat(s)) }
        let units = depthUnits ?? 0.001, intrinsics = calibration?.depth.intrinsics
        return { [color, depth] in
            var d = DecodedFrame()
            if let c = color { d.color = (c.index, Result { try Self.color(c.bytes, c.format) }) }
            if let e = depth { d.depth = (e.index, Result { try Self.depth(e.bytes, e.format, units: units, intrinsics: intrinsics) }) }
            return d
        }
    }

    /// The lead stream's recorded rate (librealsense's stream info), else the median log-time interval.
    public var nominalFrameRate: Double? { lead?.fps }
}

// MARK: RecordedStreams

extension ROS2Source {
    /// Color (or the infrared shown as color) and depth, every message under its own stamp: the
    /// metadata timestamp librealsense logs with it, else its header stamp (read in storage order
    /// once, on the first call).
    public func streams() throws -> [RecordedStream] {
        if let recorded { return recorded }
        guard let rec = recording else { throw CaptureError.invalidState("\(name): streams before start()") }
        var stamps = exportable.map { [Double](repeating: 0, count: $0.stream.refs.count) }
        var metadata: [(refs: [ROS2MessageRef], topic: String)?] = []
        for e in exportable {
            let topic = e.stream.prefix.map { "\($0)/image/metadata" }
            metadata.append(topic.flatMap { t in
                rec.topics.contains { $0.name == t && $0.type == "std_msgs/msg/String" } ? (rec.messages(onTopic: t), t) : nil
            })
        }
        let order = exportable.indices.flatMap { s in exportable[s].stream.refs.indices.map { (s, $0) } }.sorted { a, b in
            let ra = exportable[a.0].stream.refs[a.1], rb = exportable[b.0].stream.refs[b.1]
            return (ra.file, ra.chunk, ra.position) < (rb.file, rb.chunk, rb.position)
        }
        do {
            for (s, i) in order {
                let stream = exportable[s].stream, ref = stream.refs[i]
                if let m = metadata[s], let t = frameTimestamp(ref, metadata: m.refs, topic: m.topic) {
                    stamps[s][i] = t
                } else {
                    stamps[s][i] = try rec.headerStamp(of: ref, topic: stream.topic, type: stream.type)
                }
            }
        } catch {
            throw CaptureError.wrapping(error, path: path)
        }
        let list = exportable.enumerated().map { s, e in
            RecordedStream(kind: e.kind, name: e.stream.topic, width: e.stream.width, height: e.stream.height, timestamps: stamps[s])
        }
        recorded = list
        return list
    }

    /// The lead stream's stamps (playback steps through its frames).
    public func playbackTimestamps() throws -> [Double] {
        let list = try streams()
        guard let lead, let i = exportable.firstIndex(where: { $0.stream.topic == lead.topic }) else { return [] }
        return list[i].timestamps
    }

    /// The message's bytes (read, and decompressed when the recording compresses it, here), decoded
    /// by the payload: PNG, JPEG, compressedDepth, zstd and the raw conversions run on any thread.
    public func payload(_ index: Int, ofStream stream: Int) throws -> StreamPayload? {
        guard let rec = recording else { throw CaptureError.invalidState("\(name): payload before start()") }
        guard exportable.indices.contains(stream), exportable[stream].stream.refs.indices.contains(index) else {
            throw CaptureError.invalidState("\(name): no frame \(index) of stream \(stream)")
        }
        let e = exportable[stream]
        let bytes: [UInt8]
        do { bytes = try rec.data(of: e.stream.refs[index]) } catch { throw CaptureError.wrapping(error, path: path) }
        let format = messageFormat(e.stream), path = self.path
        switch e.kind {
        case .depth:
            let units = depthUnits ?? 0.001, intrinsics = calibration?.depth.intrinsics
            return StreamPayload {
                do { return .depth(try Self.depth(bytes, format, units: units, intrinsics: intrinsics).depth) } catch {
                    throw CaptureError.wrapping(error, path: path)
                }
            }
        case .color, .ir:
            return StreamPayload {
                do { return .image(try Self.color(bytes, format).buffer) } catch { throw CaptureError.wrapping(error, path: path) }
            }
        }
    }

    public func decodeFrame(_ index: Int, ofStream stream: Int) throws -> StreamFrame {
        guard recording != nil else { throw CaptureError.invalidState("\(name): decodeFrame before start()") }
        guard exportable.indices.contains(stream), exportable[stream].stream.refs.indices.contains(index) else {
            throw CaptureError.invalidState("\(name): no frame \(index) of stream \(stream)")
        }
        let e = exportable[stream]
        do {
            switch e.kind {
            case .depth: return .depth(try decodeDepth(e.stream, index: index).depth)
            case .color, .ir: return .image(try decodeColor(e.stream, index: index).buffer)
            }
        } catch {
            throw CaptureError.wrapping(error, path: path)
        }
    }
}

// MARK: IMURecording

extension ROS2Source {
    public func imuSamples() throws -> IMUSamples {
        if let imuRead { return imuRead }
        guard let rec = recording else { throw CaptureError.invalidState("\(name): imuSamples before start()") }
        do {
            let samples = try imuTopics.samples(path: path, read: { pick in
                try rec.messages(onTopic: pick.topic).map { ref in
                    let m = try ROS2Message.imu(try rec.data(of: ref), file: path, topic: pick.topic)
                    return ROSIMUTopics.Message(stamp: m.header.stamp.seconds, linearAcceleration: m.linearAcceleration, angularVelocity: m.angularVelocity)
                }
            }, rate: { streamFPS(rec, $0) })
            imuRead = samples
            return samples
        } catch {
            throw CaptureError.wrapping(error, path: path)
        }
    }
}

/// A TF tree: each child frame's pose in its parent (p_parent = T·p_child), composed to any two
/// connected frames.
struct TFTree {
    private var parent: [String: (frame: String, transform: RigidTransform)] = [:]

    mutating func add(parent p: String, child: String, transform: RigidTransform, replace: Bool) {
        guard !p.isEmpty, !child.isEmpty, p != child else { return }
        if !replace, parent[child] != nil { return }
        parent[child] = (p, transform)
    }

    /// The pose of `frame` in its root (T_root←frame) and the root's name. Cycles end the walk.
    func toRoot(_ frame: String) -> (root: String, transform: RigidTransform) {
        var t = RigidTransform.identity
        var f = frame
        var seen: Set<String> = [f]
        while let up = parent[f], !seen.contains(up.frame) {
            t = up.transform.composed(after: t)
            f = up.frame
            seen.insert(f)
        }
        return (f, t)
    }

    /// T mapping points in `from` to points in `to` (p_to = T·p_from), nil when not connected or unknown.
    func transform(from: String, to: String) -> RigidTransform? {
        guard parent[from] != nil || parent[to] != nil else { return nil }
        let a = toRoot(from), b = toRoot(to)
        guard a.root == b.root else { return nil }
        return b.transform.inverse.composed(after: a.transform)
    }
}
