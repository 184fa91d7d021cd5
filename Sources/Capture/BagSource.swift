import DepthKit
import Foundation

/// A ROS1 bag played as a depthlens source: RealSense Viewer recordings (librealsense's topic
/// layout) and bags written by ROS tools with `sensor_msgs/Image` topics. No SDK: `RosBag` reads
/// the container, `ROSMessage` the messages.
///
/// **Streams.** librealsense writes `/device_D/sensor_S/<Stream>_N/image/data`; `Depth_N` is depth,
/// `Color_N` color, `Infrared_N` infrared (shown as the color image when there is no color stream).
/// Other bags: a 16-bit (`mono16`, `16UC1`) or `32FC1` image topic is depth (a topic naming "depth"
/// wins), an 8-bit one (`rgb8`, `bgr8`, `rgba8`, `bgra8`, `mono8`, `8UC1`, `yuyv`/`YUYV`, `yuv422`
/// = UYVY) is color. Depth comes out as depthFloat32 meters (raw × the recording's Depth Units,
/// exactly as librealsense's `get_distance`; `32FC1` is meters already), color as rgba8.
///
/// **Calibration.** Intrinsics and distortion from each stream's `…/info/camera_info`; depth→color
/// extrinsics from the `…/tf/<group>` transforms. librealsense's `ros_writer::write_extrinsics`
/// stores, per stream, `device::get_extrinsics(stream)`: the extrinsics *from the group's reference
/// ("pin") stream to this stream* (p_stream = R·p_ref + t, R from the quaternion as
/// `ros_file_format.h`'s `quat2rot`), and `playback_device::register_extrinsics` composes two of
/// them as T_to ∘ T_from⁻¹. So depth→color = T_color ∘ T_depth⁻¹ (T_depth is the identity when depth
/// is the reference, as on D400 recordings). Depth units from `/device_D/sensor_S/option/Depth
/// Units/value` (meters per unit; depthScale = 1 / that); without it 16-bit depth is taken as
/// millimeters (ROS's convention for `16UC1`). Device name, serial and firmware from `/device_D/info`.
///
/// **Frames and time.** The stream with more frames leads (color on a tie); each of its frames is
/// paired with the other stream's frame nearest in *receive time* (the bag's message time: one
/// clock for all streams, known from the chunk index without decompressing anything; the
/// streaming `FrameSynchronizer`'s half-interval rule would drop pairs that a recorded file can
/// always make, e.g. the shared D435 bag's color frame lies 0.10 s from its depth at 6 fps).
/// Playback follows receive times, like librealsense's playback (`frameTimes`), and seeks by index
/// or by time through the index; a frame's `timestamp` is its image header stamp (the device
/// timestamp librealsense records), seconds. A bag with depth but no color or infrared plays depth
/// with a black rgba8 color image of the depth size (FrameSet.color is not optional) and says so in
/// `warnings`; a bag with color only plays color without depth.
///
/// **Streams on their own clocks** (`RecordedStreams`, what `convert` writes): the color, depth and
/// infrared streams playback uses, each with every frame once under its own header stamp.
///
/// **IMU** (`IMURecording`): the `sensor_msgs/Imu` topics `ROSIMUTopics` picks (librealsense's
/// Accel_N and Gyro_N streams, else the first Imu topic), each sample under its header stamp.
public final class BagSource: FrameSource, RecordedStreams, IMURecording, RecordingDamage {
    public let path: String
    /// Pause, step, seek, loop and rate (valid after `start()`).
    public let recording: RecordingPlayback
    public var playback: PlaybackControl? { recording }
    /// The color, depth and infrared streams, each on its own clock (what `convert` writes).
    public var recordedStreams: RecordedStreams? { self }
    /// The accelerometer and gyroscope topics, when the bag has any.
    public var imu: IMURecording? { imuTopics.isEmpty ? nil : self }
    public var name: String { "bag:\(path)" }
    /// Intrinsics of the color frames (the color camera's, from the recording when it has them).
    public private(set) var intrinsics: CameraIntrinsics = .default(width: 640, height: 480)
    public var isLive: Bool { false }
    public private(set) var calibration: RGBDCalibration?
    public private(set) var metadata = SourceMetadata(kind: "bag")
    public private(set) var warnings: [String] = []
    public var onWarning: ((String) -> Void)?
    /// `RecordingDamage`: decompress every chunk at `start()` (`info`, `convert`).
    public var checksWholeRecording = false
    /// `RecordingDamage`: the bag's unreadable chunks (`RosBag.damage`), from `start()` (kept after `stop()`).
    public private(set) var damage: [String] = []
    /// Receive time of each frame, seconds from the first frame (the playback timeline). After `start()`.
    public private(set) var frameTimes: [Double] = []
    /// The depth units the depth was converted with (meters per raw unit), after `start()`.
    public private(set) var depthUnits: Float?
    /// The stereo baseline (meters): |t.x| of the Infrared_1 → Infrared_2 extrinsics when the bag
    /// has both (what the Depth Quality Tool uses), else the depth sensor's recorded `Stereo
    /// Baseline` option (mm). Nil when the bag has neither. After `start()`.
    public private(set) var stereoBaselineMeters: Float?

    /// One image stream of the bag.
    struct Stream {
        enum Role { case depth, color, infrared }
        var role: Role
        var topic: String
        var refs: [RosBag.MessageRef]
        /// librealsense's stream prefix ("/device_0/sensor_0/Depth_0"), nil for other bags.
        var prefix: String?
        var sensorPrefix: String?
        var encoding: String
        var width: Int
        var height: Int
        var fps: Double?
    }

    private var bag: RosBag?
    private var lead: Stream?
    /// For each lead frame, the index of the paired frame in the other stream (nil: none).
    private var pairs: [Int?] = []
    private var other: Stream?
    private var depthIsLead = false
    private var cachedColor: (topic: String, index: Int, buffer: PixelBuffer)?
    /// The streams `RecordedStreams` offers (color, depth, infrared, those the bag has), and
    /// their header stamps once read.
    private var exportable: [Stream] = []
    private var recorded: [RecordedStream]?
    private var cachedDepth: (index: Int, depth: DepthData)?
    private var blackColor: PixelBuffer?
    private var imuTopics = ROSIMUTopics(picks: [])
    private var imuRead: IMUSamples?

    public init(path: String) {
        self.path = path
        recording = RecordingPlayback(name: "bag:\(path)")
    }

    // MARK: Opening

    /// Reads the bag's index, streams, calibration and metadata and decodes the first frame.
    /// Throws `CaptureError.file` (one line naming the bag and the problem).
    public func start() throws {
        stop()
        warnings.removeAll()
        damage = []
        do { try open() } catch {
            stop()
            throw CaptureError.wrapping(error, path: path)
        }
    }

    private func open() throws {
        let bag = try RosBag(path: path)
        if checksWholeRecording { bag.checkChunks() }
        // Damage is said, not hidden: the readable frames play, each unreadable chunk is a warning.
        damage = bag.damage
        for line in damage { warn(line) }
        let images = try imageStreams(bag)
        guard !images.isEmpty else {
            let list = bag.topics.prefix(6).map { "\($0.topic) (\($0.type))" }.joined(separator: ", ")
            throw CaptureError.file(path: path, problem: bag.topics.isEmpty ? "the bag holds no topics"
                                    : "no image topic (sensor_msgs/Image) in the bag; it has \(list)\(bag.topics.count > 6 ? ", …" : "")")
        }
        let depth = images.first { $0.role == .depth }
        let color = images.first { $0.role == .color } ?? images.first { $0.role == .infrared }
        guard depth != nil || color != nil else {
            throw CaptureError.file(path: path, problem: "no depth or color image topic with a supported encoding")
        }
        self.bag = bag
        let imuNames = Set(bag.connections.filter { $0.type == "sensor_msgs/Imu" }.map(\.topic))
        imuTopics = ROSIMUTopics(imuTopics: Array(imuNames)) { topic in
            guard let ref = bag.messages(onTopic: topic).first,
                  let m = try? ROSMessage.imu(try bag.data(of: ref), bag: path, topic: topic) else { return (false, false) }
            return (m.linearAccelerationCovariance.first != -1, m.angularVelocityCovariance.first != -1)
        }
        // Depth units: the depth sensor's option, else any, else millimeters.
        var units: Float = 0.001
        var unitsKnown = false
        if let d = depth {
            let candidates = (d.sensorPrefix.map { ["\($0)/option/Depth Units/value"] } ?? [])
                + bag.topics.map(\.topic).filter { $0.hasSuffix("/option/Depth Units/value") }
            for topic in candidates {
                if let ref = bag.messages(onTopic: topic).last,
                   let v = try? ROSMessage.float32(try bag.data(of: ref), bag: path, topic: topic), v >= 1e-7, v < 1 {
                    units = v
                    unitsKnown = true
                    break
                }
            }
        }
        depthUnits = depth == nil ? nil : units
        stereoBaselineMeters = depth.flatMap { stereoBaseline(bag, depth: $0) }

        // Lead stream and pairing by receive time.
        let lead: Stream, other: Stream?
        if let d = depth, let c = color {
            (lead, other) = d.refs.count > c.refs.count ? (d, c) : (c, d)
        } else {
            lead = (depth ?? color)!
            other = nil
        }
        self.lead = lead
        self.other = other
        exportable = [images.first { $0.role == .color }, depth, images.first { $0.role == .infrared }].compactMap { $0 }
        recorded = nil
        depthIsLead = lead.role == .depth
        let t0 = lead.refs[0].time.seconds
        frameTimes = lead.refs.map { $0.time.seconds - t0 }
        pairs = lead.refs.map { ref in other.flatMap { nearest($0.refs, ref.time) } }
        recording.open(count: lead.refs.count, timestamps: frameTimes, defaultFPS: lead.fps ?? 30)

        // Calibration.
        let depthCam = depth.flatMap { cameraModel(bag, $0) }
        let colorCam = color.flatMap { cameraModel(bag, $0) }
        let dW = depth?.width ?? color!.width, dH = depth?.height ?? color!.height
        let cW = color?.width ?? dW, cH = color?.height ?? dH
        var depthToColor = RigidTransform.identity
        if let d = depth, let c = color, let dp = d.prefix, let cp = c.prefix {
            if let td = transform(bag, dp), let tc = transform(bag, cp), td.group == tc.group {
                depthToColor = tc.transform.composed(after: td.transform.inverse)
            } else {
                warn("no extrinsics between \(d.topic) and \(c.topic) in the recording; depth and color taken as registered")
            }
        } else if depth != nil, color != nil {
            warn("the bag has no librealsense extrinsics; depth and color taken as registered")
        }
        let depthScale = Self.unitsPerMeter(units)
        if depthCam != nil || colorCam != nil {
            let dc = depthCam ?? (color == nil ? nil : colorCam) ?? .default(width: dW, height: dH)
            let cc = color == nil ? dc : (colorCam ?? .default(width: cW, height: cH))
            calibration = RGBDCalibration(depth: dc, color: cc, depthToColor: depth == nil || color == nil ? .identity : depthToColor,
                                          depthScale: depthScale, origin: "recording")
            if depth != nil, depthCam == nil { warn("no camera_info for \(depth!.topic); default depth intrinsics assumed") }
            if color != nil, colorCam == nil { warn("no camera_info for \(color!.topic); default color intrinsics assumed") }
        } else {
            calibration = nil
        }
        intrinsics = calibration?.color.intrinsics ?? .default(width: cW, height: cH)
        if color == nil, let d = depth {
            warn("the bag has depth (\(d.topic)) but no color or infrared stream: color is shown black")
            blackColor = PixelBuffer(width: d.width, height: d.height, format: .rgba8)
            if let b = blackColor {
                for y in 0..<b.height {
                    let r = b.row(y, as: UInt8.self)
                    for x in 0..<b.width { r[4 * x] = 0; r[4 * x + 1] = 0; r[4 * x + 2] = 0; r[4 * x + 3] = 255 }
                }
                b.markModified()
            }
        }

        // Metadata.
        var device = SourceMetadata.Device()
        for topic in bag.topics.map(\.topic) where topic.hasPrefix("/device_") && topic.hasSuffix("/info")
            && topic.split(separator: "/").count == 2 {
            for ref in bag.messages(onTopic: topic) {
                guard let kv = try? ROSMessage.keyValue(try bag.data(of: ref), bag: path, topic: topic) else { continue }
                switch kv.key {
                case "Name": device.name = kv.value
                case "Serial Number": device.serial = kv.value
                case "Firmware Version": device.firmware = kv.value
                default: break
                }
            }
            break
        }
        var streams: [SourceMetadata.Stream] = []
        for s in [depth, color].compactMap({ $0 }) {
            let name = s.role == .depth ? "depth" : (s.role == .color ? "color" : "ir")
            streams.append(SourceMetadata.Stream(name: name, width: s.width, height: s.height, fps: s.fps ?? Self.rate(s.refs),
                                                 encoding: s.encoding, frames: s.refs.count))
        }
        var tags: [String: String] = [:]
        if depth != nil { tags["depth_units"] = "\(units)" + (unitsKnown ? "" : " (assumed)") }
        if let v = bag.messages(onTopic: "/file_version").first,
           let n = try? ROSMessage.uint32(try bag.data(of: v), bag: path, topic: "/file_version") {
            tags["realsense_file_version"] = "\(n)"
        }
        if let b = stereoBaselineMeters { tags["stereo_baseline_mm"] = String(format: "%.4f", b * 1000) }
        tags["compression"] = Set(bag.chunks.map(\.compression)).sorted().joined(separator: ",")
        let hasDevice = device.name != nil || device.serial != nil || device.firmware != nil
        metadata = SourceMetadata(kind: "bag", device: hasDevice ? device : nil, streams: streams,
                                  durationSeconds: frameTimes.last, tags: tags)
        if depth != nil, !unitsKnown, depth!.encoding != "32FC1" {
            warn("no Depth Units in the recording; 16-bit depth taken as millimeters")
        }
        // The first frame must decode: a bag whose images cannot be read fails here, not later.
        _ = try frame(at: 0)
    }

    public func stop() {
        recording.close()
        bag = nil
        lead = nil
        other = nil
        pairs = []
        exportable = []
        recorded = nil
        cachedColor = nil
        cachedDepth = nil
        blackColor = nil
        imuTopics = ROSIMUTopics(picks: [])
        imuRead = nil
    }

    /// Meters per unit → units per meter, snapped to a whole number when within 1e-5 of one
    /// (librealsense stores 0.001 as the float32 0.0010000000475).
    static func unitsPerMeter(_ units: Float) -> Float {
        let s = 1 / Double(units)
        let r = s.rounded()
        return Float(abs(s - r) <= 1e-5 * s ? r : s)
    }

    /// Frames per second from the median gap between receive times.
    static func rate(_ refs: [RosBag.MessageRef]) -> Double? {
        guard refs.count >= 2 else { return nil }
        let gaps = zip(refs.dropFirst(), refs).map { $0.time.seconds - $1.time.seconds }.filter { $0 > 0 }.sorted()
        guard !gaps.isEmpty else { return nil }
        return (1 / gaps[gaps.count / 2] * 1000).rounded() / 1000
    }

    /// The index in `refs` (sorted by time) nearest `t`; the earlier one on a tie.
    private func nearest(_ refs: [RosBag.MessageRef], _ t: RosBag.Time) -> Int? {
        guard !refs.isEmpty else { return nil }
        var lo = 0, hi = refs.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if refs[mid].time < t { lo = mid + 1 } else { hi = mid }
        }
        if lo == refs.count { return refs.count - 1 }
        if lo == 0 { return 0 }
        let a = t.nanoseconds - refs[lo - 1].time.nanoseconds, b = refs[lo].time.nanoseconds - t.nanoseconds
        return a <= b ? lo - 1 : lo
    }

    private func warn(_ message: String) {
        warnings.append(message)
        onWarning?(message)
    }

    // MARK: Streams

    /// The image streams of the bag with their roles, best first within each role.
    private func imageStreams(_ bag: RosBag) throws -> [Stream] {
        var out: [Stream] = []
        let imageTopics = Set(bag.connections.filter { $0.type == "sensor_msgs/Image" }.map(\.topic)).sorted()
        var skipped: [String] = []
        for topic in imageTopics {
            let refs = bag.messages(onTopic: topic)
            guard let first = refs.first else { continue }
            let image = try ROSMessage.image(try bag.data(of: first), bag: path, topic: topic)
            let parts = topic.split(separator: "/", omittingEmptySubsequences: false)
            var role: Stream.Role?
            var prefix: String?, sensorPrefix: String?
            // librealsense: "", "device_D", "sensor_S", "<Stream>_N", "image", "data".
            if parts.count == 6, parts[1].hasPrefix("device_"), parts[2].hasPrefix("sensor_"), parts[4] == "image", parts[5] == "data" {
                let stream = parts[3].prefix { $0 != "_" }
                prefix = parts[0...3].joined(separator: "/")
                sensorPrefix = parts[0...2].joined(separator: "/")
                switch stream {
                case "Depth": role = Self.isDepthEncoding(image.encoding) ? .depth : nil
                case "Color": role = Self.isColorEncoding(image.encoding) ? .color : nil
                case "Infrared", "Fisheye": role = Self.isColorEncoding(image.encoding) ? .infrared : nil
                default: role = nil
                }
            } else if Self.isDepthEncoding(image.encoding) {
                role = .depth
            } else if Self.isColorEncoding(image.encoding) {
                role = ["mono8", "8UC1"].contains(image.encoding) ? .infrared : .color
            }
            guard let r = role else { skipped.append("\(topic) (\(image.encoding))"); continue }
            var fps: Double?
            if let p = prefix, let info = bag.messages(onTopic: "\(p)/info").first,
               let si = try? ROSMessage.streamInfo(try bag.data(of: info), bag: path, topic: "\(p)/info"), si.fps > 0 {
                fps = Double(si.fps)
            }
            try Self.checkSize(image, bag: path, topic: topic)
            out.append(Stream(role: r, topic: topic, refs: refs, prefix: prefix, sensorPrefix: sensorPrefix, encoding: image.encoding,
                              width: image.width, height: image.height, fps: fps ?? Self.rate(refs)))
        }
        if !skipped.isEmpty {
            warn("image topics skipped (unsupported stream or encoding): \(skipped.joined(separator: ", "))")
        }
        // Generic bags: a depth topic whose name says depth first; librealsense order otherwise.
        func rank(_ s: Stream) -> Int { s.prefix == nil && !s.topic.lowercased().contains(s.role == .depth ? "depth" : "color") ? 1 : 0 }
        return out.enumerated().sorted { a, b in
            rank(a.element) != rank(b.element) ? rank(a.element) < rank(b.element) : a.offset < b.offset
        }.map(\.element)
    }

    static func isDepthEncoding(_ e: String) -> Bool { ROSImageDecoding.isDepthEncoding(e) }
    static func isColorEncoding(_ e: String) -> Bool { ROSImageDecoding.isColorEncoding(e) }

    static func checkSize(_ image: ROSMessage.Image, bag: String, topic: String) throws {
        try ROSImageDecoding.check(image, file: bag, topic: topic)
    }

    private func cameraModel(_ bag: RosBag, _ s: Stream) -> CameraModel? {
        let candidates = s.prefix.map { ["\($0)/info/camera_info"] }
            ?? [String(s.topic.prefix(upTo: s.topic.lastIndex(of: "/") ?? s.topic.endIndex)) + "/camera_info"]
        for topic in candidates {
            guard let ref = bag.messages(onTopic: topic).first,
                  let info = try? ROSMessage.cameraInfo(try bag.data(of: ref), bag: path, topic: topic) else { continue }
            if let cam = ROSImageDecoding.cameraModel(K: info.K, D: info.D, distortionModel: info.distortionModel, width: info.width,
                                                      height: info.height, streamWidth: s.width, streamHeight: s.height) {
                return cam
            }
        }
        return nil
    }

    static func distortionModel(_ name: String) -> DistortionModel {
        switch name.lowercased().replacingOccurrences(of: "_", with: " ") {
        case "brown conrady", "plumb bob": return .brownConrady
        case "inverse brown conrady": return .inverseBrownConrady
        case "modified brown conrady": return .modifiedBrownConrady
        case "kannala brandt4", "equidistant", "ftheta": return .kannalaBrandt4
        case "rational polynomial": return .rationalPolynomial
        default: return .none
        }
    }

    /// The stream's `tf/<group>` transform (reference stream → this stream) and its group.
    /// See `stereoBaselineMeters`.
    private func stereoBaseline(_ bag: RosBag, depth: Stream) -> Float? {
        let streams = Set(bag.topics.map(\.topic).compactMap { t -> String? in
            guard let r = t.range(of: "/tf/") else { return nil }
            return String(t[..<r.lowerBound])
        })
        for left in streams where left.hasSuffix("/Infrared_1") {
            let right = String(left.dropLast(1)) + "2"
            guard streams.contains(right), let l = transform(bag, left), let r = transform(bag, right), l.group == r.group else { continue }
            let leftToRight = r.transform.composed(after: l.transform.inverse)
            let b = abs(leftToRight.translation.x)
            if b > 0, b < 10 { return b }
        }
        let candidates = (depth.sensorPrefix.map { ["\($0)/option/Stereo Baseline/value"] } ?? [])
            + bag.topics.map(\.topic).filter { $0.hasSuffix("/option/Stereo Baseline/value") }
        for topic in candidates {
            if let ref = bag.messages(onTopic: topic).last,
               let mm = try? ROSMessage.float32(try bag.data(of: ref), bag: path, topic: topic), mm > 0, mm < 10_000 {
                return mm / 1000
            }
        }
        return nil
    }

    private func transform(_ bag: RosBag, _ prefix: String) -> (transform: RigidTransform, group: String)? {
        for topic in bag.topics.map(\.topic) where topic.hasPrefix(prefix + "/tf/") {
            guard let ref = bag.messages(onTopic: topic).first,
                  let t = try? ROSMessage.transform(try bag.data(of: ref), bag: path, topic: topic),
                  (t.translation * t.translation).sum() < 1e6 else { continue }  // within 1 km; no NaN or inf
            let r = t.rotationMatrix.map { Float($0) }
            return (RigidTransform(rotation: r, translation: SIMD3(Float(t.translation.x), Float(t.translation.y), Float(t.translation.z))),
                    String(topic.dropFirst(prefix.count + 4)))
        }
        return nil
    }

    // MARK: Frames

    /// Decodes lead frame `i` with its paired frame.
    private func frame(at i: Int) throws -> FrameSet {
        guard let bag, let lead else { throw CaptureError.invalidState("\(name): nextFrame before start()") }
        let leadRef = lead.refs[i]
        let leadImage = try ROSMessage.image(try bag.data(of: leadRef), bag: path, topic: lead.topic)
        let stamp = leadImage.header.stamp.seconds
        var color: PixelBuffer?
        var depth: DepthData?
        if depthIsLead {
            depth = try decodeDepth(leadImage, index: i)
            if let o = other, let j = pairs[i] { color = try decodeColor(o, index: j, image: nil) }
        } else {
            color = try decodeColor(lead, index: i, image: leadImage)
            if let o = other, let j = pairs[i] { depth = try decodeDepthFrame(o, index: j) }
        }
        guard let c = color ?? blackColor else {
            throw CaptureError.file(path: path, problem: "frame \(i) has no color")
        }
        return FrameSet(color: c, depth: depth, timestamp: stamp, index: i)
    }

    private func decodeDepthFrame(_ s: Stream, index j: Int) throws -> DepthData {
        if let c = cachedDepth, c.index == j { return c.depth }
        guard let bag else { throw CaptureError.invalidState("\(name): not started") }
        let image = try ROSMessage.image(try bag.data(of: s.refs[j]), bag: path, topic: s.topic)
        return try decodeDepth(image, index: j)
    }

    private func decodeDepth(_ image: ROSMessage.Image, index j: Int) throws -> DepthData {
        if let c = cachedDepth, c.index == j { return c.depth }
        guard let s = depthIsLead ? lead : other else { throw CaptureError.invalidState("\(name): no depth stream") }
        try checkFrame(image, s)
        let out = ROSImageDecoding.depthMeters(image, units: depthUnits ?? 0.001)
        let intr = calibration?.depth.intrinsics
        let depth = DepthData(map: out, intrinsics: intr?.width == image.width && intr?.height == image.height ? intr : nil)
        cachedDepth = (j, depth)
        return depth
    }

    private func decodeColor(_ s: Stream, index j: Int, image given: ROSMessage.Image?) throws -> PixelBuffer {
        // A color frame paired with several lead frames is decoded once and its buffer shared
        // (frames are read-only to consumers, as TUMSource's depth kept across frames).
        if let c = cachedColor, c.index == j, c.topic == s.topic { return c.buffer }
        guard let bag else { throw CaptureError.invalidState("\(name): not started") }
        let image = try given ?? ROSMessage.image(try bag.data(of: s.refs[j]), bag: path, topic: s.topic)
        try checkFrame(image, s)
        let out = ROSImageDecoding.rgba(image)
        cachedColor = (s.topic, j, out)
        return out
    }

    /// A frame must keep its stream's encoding and size (the first frame's).
    private func checkFrame(_ image: ROSMessage.Image, _ s: Stream) throws {
        try FrameFormat(s).check(image, bag: path)
    }

    /// A stream's encoding and size (its first frame's), which every frame must keep; a value, so
    /// that `convert`'s workers check and convert messages apart from the source.
    struct FrameFormat: Sendable {
        let topic: String
        let encoding: String
        let width: Int
        let height: Int

        init(_ s: Stream) { topic = s.topic; encoding = s.encoding; width = s.width; height = s.height }

        func check(_ image: ROSMessage.Image, bag path: String) throws {
            guard image.encoding == encoding, image.width == width, image.height == height else {
                throw CaptureError.file(path: path, problem: "\(topic): frame is \(image.width)x\(image.height) \(image.encoding), "
                                        + "the stream started as \(width)x\(height) \(encoding)")
            }
            try BagSource.checkSize(image, bag: path, topic: topic)
        }
    }

    public func nextFrame(now: Double) throws -> FrameSet? {
        guard bag != nil else { throw CaptureError.invalidState("\(name): nextFrame before start()") }
        return try recording.deliverDue(now: now, path: path, decode: { try frame(at: $0) }, warn: warn)
    }

    /// The lead stream's recorded rate (librealsense's stream info), else the median frame interval.
    public var nominalFrameRate: Double? { lead?.fps }
}

// MARK: RecordedStreams

extension BagSource {
    public func streams() throws -> [RecordedStream] {
        if let recorded { return recorded }
        guard let bag else { throw CaptureError.invalidState("\(name): streams before start()") }
        // Header stamps, read in file order (each chunk decompressed once).
        var stamps = exportable.map { [Double](repeating: 0, count: $0.refs.count) }
        let order = exportable.indices.flatMap { s in exportable[s].refs.indices.map { (s, $0) } }.sorted { a, b in
            let ra = exportable[a.0].refs[a.1], rb = exportable[b.0].refs[b.1]
            return (ra.chunk, ra.offset) < (rb.chunk, rb.offset)
        }
        do {
            for (s, i) in order {
                let stream = exportable[s]
                stamps[s][i] = try ROSMessage.stamp(try bag.data(of: stream.refs[i]), bag: path, topic: stream.topic).seconds
            }
        } catch {
            throw CaptureError.wrapping(error, path: path)
        }
        let list = exportable.enumerated().map { s, stream in
            let kind: StreamKind
            switch stream.role {
            case .color: kind = .color
            case .depth: kind = .depth
            case .infrared: kind = .ir
            }
            return RecordedStream(kind: kind, name: stream.topic, width: stream.width, height: stream.height, timestamps: stamps[s])
        }
        recorded = list
        return list
    }

    /// The lead stream's header stamps (playback steps through its frames).
    public func playbackTimestamps() throws -> [Double] {
        let list = try streams()
        guard let lead, let i = exportable.firstIndex(where: { $0.topic == lead.topic }) else { return [] }
        return list[i].timestamps
    }

    /// The message's bytes (its chunk decompressed here, in order), parsed, checked and converted
    /// by the payload on any thread, as `decodeFrame` does.
    public func payload(_ index: Int, ofStream stream: Int) throws -> StreamPayload? {
        guard let bag else { throw CaptureError.invalidState("\(name): payload before start()") }
        guard exportable.indices.contains(stream), exportable[stream].refs.indices.contains(index) else {
            throw CaptureError.invalidState("\(name): no frame \(index) of stream \(stream)")
        }
        let s = exportable[stream], path = self.path, topic = s.topic
        let bytes: [UInt8]
        do { bytes = try bag.data(of: s.refs[index]) } catch { throw CaptureError.wrapping(error, path: path) }
        switch s.role {
        case .depth:
            // As decodeDepth: checked against the depth stream playback uses.
            guard let d = depthIsLead ? lead : other else { throw CaptureError.invalidState("\(name): no depth stream") }
            let format = FrameFormat(d), units = depthUnits ?? 0.001, intr = calibration?.depth.intrinsics
            return StreamPayload {
                do {
                    let image = try ROSMessage.image(bytes, bag: path, topic: topic)
                    try format.check(image, bag: path)
                    let out = ROSImageDecoding.depthMeters(image, units: units)
                    return .depth(DepthData(map: out, intrinsics: intr?.width == image.width && intr?.height == image.height ? intr : nil))
                } catch {
                    throw CaptureError.wrapping(error, path: path)
                }
            }
        case .color, .infrared:
            let format = FrameFormat(s)
            return StreamPayload {
                do {
                    let image = try ROSMessage.image(bytes, bag: path, topic: topic)
                    try format.check(image, bag: path)
                    return .image(ROSImageDecoding.rgba(image))
                } catch {
                    throw CaptureError.wrapping(error, path: path)
                }
            }
        }
    }

    public func decodeFrame(_ index: Int, ofStream stream: Int) throws -> StreamFrame {
        guard let bag else { throw CaptureError.invalidState("\(name): decodeFrame before start()") }
        guard exportable.indices.contains(stream), exportable[stream].refs.indices.contains(index) else {
            throw CaptureError.invalidState("\(name): no frame \(index) of stream \(stream)")
        }
        let s = exportable[stream]
        do {
            let image = try ROSMessage.image(try bag.data(of: s.refs[index]), bag: path, topic: s.topic)
            switch s.role {
            case .depth: return .depth(try decodeDepth(image, index: index))
            case .color, .infrared: return .image(try decodeColor(s, index: index, image: image))
            }
        } catch {
            throw CaptureError.wrapping(error, path: path)
        }
    }
}

// MARK: IMURecording

extension BagSource {
    public func imuSamples() throws -> IMUSamples {
        if let imuRead { return imuRead }
        guard let bag else { throw CaptureError.invalidState("\(name): imuSamples before start()") }
        do {
            let samples = try imuTopics.samples(path: path, read: { pick in
                try bag.messages(onTopic: pick.topic).map { ref in
                    let m = try ROSMessage.imu(try bag.data(of: ref), bag: path, topic: pick.topic)
                    return ROSIMUTopics.Message(stamp: m.header.stamp.seconds, linearAcceleration: m.linearAcceleration, angularVelocity: m.angularVelocity)
                }
            }, rate: { prefix in
                guard let ref = bag.messages(onTopic: "\(prefix)/info").first,
                      let si = try? ROSMessage.streamInfo(try bag.data(of: ref), bag: path, topic: "\(prefix)/info"), si.fps > 0 else { return nil }
                return Double(si.fps)
            })
            imuRead = samples
            return samples
        } catch {
            throw CaptureError.wrapping(error, path: path)
        }
    }
}
