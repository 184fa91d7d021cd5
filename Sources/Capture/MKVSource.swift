import CMedia
import DepthKit
import Foundation

/// A Matroska recording played in-process through libavformat / libavcodec: Azure Kinect
/// recordings (`k4arecorder`) and depthlens' own mkv files.
///
/// - Tracks: the video tracks titled COLOR, DEPTH and IR (legacy DEPTH_IR), or marked by the
///   K4A_COLOR_TRACK / K4A_DEPTH_TRACK / K4A_IR_TRACK tags; IMU and other tracks are skipped.
///   COLOR is MJPG, NV12, YUY2 or BGRA (Azure Kinect) or anything libavcodec decodes → rgba8.
///   DEPTH and IR are `b16g` (16-bit big-endian millimeters, raw packets of width·height·2 bytes)
///   or anything libavcodec decodes to 16-bit gray (depthlens' FFV1 gray16le). Depth is delivered
///   as meters (depthFloat32: units / depth scale, 1000 for Azure Kinect). Without a COLOR track
///   the IR (else the depth) image is the frame's color, as gray16.
/// - Frames follow the COLOR track (else IR, else DEPTH); each takes the DEPTH packet nearest in
///   time within half a frame interval, each depth packet used once (FrameSynchronizer's rule,
///   applied to the whole index). K4A_DEPTH_DELAY_NS shifts the color (positive) or depth
///   (negative) times used for pairing, as the SDK does.
/// - Timestamps are the device timestamps the Azure Kinect SDK reports (matroska_read.cpp):
///   microseconds = block time in ns / 1000 + K4A_START_OFFSET_NS / 1000, here in seconds.
/// - Calibration: the `calibration.json` attachment (the one the K4A_CALIBRATION_FILE tag targets,
///   else the one of that name), in the Azure Kinect schema (`AzureKinectCalibration`: intrinsics
///   per K4A_DEPTH_MODE and the color track's resolution) or in depthlens' own
///   (`RGBDCalibration.decode`). Without one the source plays with default intrinsics
///   (`calibration` nil) and says so in `warnings`.
/// - `start()` reads the file once to index every packet (no decoding); frames are then decoded on
///   demand, reading forward for playback and seeking (libavformat's cue index) for jumps.
/// - Streams on their own clocks (`RecordedStreams`, what `convert` writes): the COLOR, DEPTH and IR
///   tracks, each with every frame once in presentation order, stamped as above.
/// - IMU (`IMURecording`): the track titled IMU or marked by K4A_IMU_TRACK (codec `S_K4A/IMU`, the
///   recorder's samples laced into block groups; libavformat hands each out as a packet). Each
///   sample is the SDK's packed little-endian `matroska_imu_sample_t` (matroska_common.h), 40
///   bytes: accelerometer device timestamp (u64, ns), accelerometer x y z (float32, m/s²), gyroscope
///   timestamp (u64, ns), gyroscope x y z (float32, rad/s); the stamps in seconds as the SDK reports
///   them (whole microseconds). Its packets are kept while indexing and decoded by `imuSamples()`.
public final class MKVSource: FrameSource, RecordedStreams, IMURecording {
    public let path: String
    /// Pause, step, seek, loop and rate (valid after `start()`).
    public let recording: RecordingPlayback
    public var playback: PlaybackControl? { recording }
    /// Every COLOR, DEPTH and IR frame on its own clock (what `convert` writes).
    public var recordedStreams: RecordedStreams? { self }
    /// The Azure Kinect IMU track, when the recording has one.
    public var imu: IMURecording? { imuTrack == nil ? nil : self }
    public var name: String { "mkv:\(path)" }
    public private(set) var intrinsics: CameraIntrinsics = .default(width: 640, height: 480)
    public var isLive: Bool { false }
    public private(set) var warnings: [String] = []
    public var onWarning: ((String) -> Void)?
    public private(set) var calibration: RGBDCalibration?
    public private(set) var metadata = SourceMetadata(kind: "mkv")
    public private(set) var nominalFrameRate: Double?
    /// The Azure Kinect calibration when the recording holds one.
    public private(set) var azureKinectCalibration: AzureKinectCalibration?
    /// Each frame's timestamp in seconds (device time), in playback order. Valid after `start()`.
    public private(set) var frameTimestamps: [Double] = []

    private let memory: [UInt8]?
    private var file: MediaFile?
    private var tracks: [Int32: Track] = [:]
    private var display: Track?
    private var depthTrack: Track?
    private var frames: [Frame] = []
    private var depthScale: Float = 1000
    /// The COLOR, DEPTH and IR tracks (those the file has), for `RecordedStreams`.
    private var streamTracks: [Track] = []
    private var startOffsetNS: Int64 = 0
    /// Decoders apart from the file per intra-only track (`payload`: decoded on `convert`'s workers).
    private var frameDecoders: [Int32: FrameDecoders] = [:]
    /// The IMU track (its title or index) and its packets, in file order.
    private var imuTrack: (name: String, packets: [[UInt8]])?
    private var imuRead: IMUSamples?
    /// Tracks read for `decodeFrame` besides the displayed and the depth track: their packets are
    /// kept (and inter-coded ones fed) while reading forward, as those two tracks' are.
    private var wanted: Set<Int32> = []
    private var warned: Set<Int> = []
    /// Decode index of the last packet read per stream since the last seek.
    private var lastRead: [Int32: Int] = [:]
    /// Seeks done since `start()` (sequential playback does none).
    private(set) var seekCount = 0
    /// Packets read ahead of need (intra-only tracks), per stream by decode index.
    private var stash: [Int32: [(index: Int, bytes: [UInt8])]] = [:]
    /// Frames an inter-coded track's decoder gave back past the frame asked for (a decoder with
    /// frame threads or reordering hands frames out some packets late), per stream by decode index:
    /// the next frames of sequential playback, kept so that reading on does not seek back.
    private var decodedAhead: [Int32: [(index: Int, image: PixelBuffer)]] = [:]
    /// Presentation rank of the last frame each inter-coded decoder gave back since the last seek.
    private var lastOutputRank: [Int32: Int] = [:]
    /// Frames `decodedAhead` keeps per stream.
    static let decodedAheadLimit = 8
    /// Frames of timed playback being decoded on worker threads: each its needs' states (`readAhead`).
    private let ahead = PlaybackReadAhead<[NeedState]>()
    /// Frames playback delivered that were decoded ahead (tests).
    var framesDecodedAhead: Int { ahead.taken }
    /// Buffers the pools of decoded images have made (tests).
    var pooledImageCount: Int { pools.values.reduce(0) { $0 + $1.allocatedCount } }
    /// Decoded images of intra-only tracks in playback, per stream, and depth in meters: a buffer is
    /// used again once nobody holds it (no new 33 MB picture, its page faults and its texture a
    /// 4K frame).
    private var pools: [Int32: BufferPool] = [:]
    private var metersPool: BufferPool?
    /// The most buffers a pool makes: frames decoded ahead, the viewer's queue and the frame it
    /// shows; past that a frame gets a buffer of its own.
    static let pooledBuffers = 10

    /// Packets of intra-only tracks `stash` keeps per stream: enough for a muxer's interleaving
    /// (an encoder's delay puts one track's packets up to a second ahead of another's in the file).
    static let stashLimit = 48

    /// Largest frame a track may declare (2^26 pixels: 8192 × 8192).
    static let maxPixels = 1 << 26

    public init(path: String) {
        self.path = path
        self.memory = nil
        recording = RecordingPlayback(name: "mkv:\(path)")
    }

    /// A recording held in memory, read through a custom AVIOContext; `name` names it in messages.
    public init(bytes: [UInt8], name: String) {
        self.path = name
        self.memory = bytes
        recording = RecordingPlayback(name: "mkv:\(name)")
    }

    enum Role: String { case color = "COLOR", depth = "DEPTH", ir = "IR" }

    final class Track {
        let role: Role
        let info: dl_media_stream_info
        var stream: Int32 { info.index }
        var width: Int { Int(info.width) }
        var height: Int { Int(info.height) }
        /// Raw 16-bit big-endian packets (Azure Kinect depth and IR).
        let isB16G: Bool
        /// Every packet decodes on its own: the codec says so (MJPEG, raw), or every packet of
        /// the track is a keyframe (depthlens' FFV1, written with a GOP of 1; set after indexing).
        var intraOnly: Bool
        /// Packets in decode (file) order.
        var pts: [Int64] = []
        var ns: [Int64] = []
        var keyframe: [Bool] = []
        var sizes: [Int] = []
        /// Byte offsets in the file (nil where the demuxer did not say).
        var positions: [Int64?] = []
        var byPTS: [Int64: Int] = [:]
        /// Decode indices in presentation (timestamp) order.
        var order: [Int] = [] { didSet { rank = [Int](repeating: 0, count: order.count); for (r, i) in order.enumerated() { rank[i] = r } } }
        /// Presentation rank of each decode index (the inverse of `order`).
        private(set) var rank: [Int] = []
        var decoderOpen = false

        init(role: Role, info: dl_media_stream_info) {
            self.role = role
            self.info = info
            isB16G = info.fourCC == "b16g" && info.codecNameString == "rawvideo"
            intraOnly = isB16G || info.intra_only != 0
        }

        var encoding: String { info.fourCC ?? info.codecNameString }
        var expectedRawSize: Int { width * height * 2 }
        var format: TrackFormat { TrackFormat(role: role, width: width, height: height, isB16G: isB16G) }

        /// The latest keyframe at or before decode index `i` (i itself for intra-only tracks).
        func keyframe(atOrBefore i: Int) -> Int {
            if intraOnly { return i }
            var k = i
            while k > 0 && !keyframe[k] { k -= 1 }
            return k
        }
    }

    /// What decoding a track's packet needs to know of the track (a value: `convert`'s workers
    /// decode packets of intra-only tracks apart from the source).
    struct TrackFormat: Sendable {
        let role: Role
        let width: Int
        let height: Int
        let isB16G: Bool

        var pixelFormat: PixelFormat { role == .color && !isB16G ? .rgba8 : .gray16(depthScale: 0) }

        /// Output buffer for the track's image: rgba8 color, 16-bit gray for depth, IR and any b16g
        /// track; from `pool` when it has one free (playback), else a new one.
        func buffer(from pool: BufferPool? = nil) -> PixelBuffer {
            if let pool, let b = try? pool.makeBuffer() { return b }
            return PixelBuffer(width: width, height: height, format: pixelFormat)
        }
    }

    struct Frame {
        /// Decode index in the display track.
        var display: Int
        /// Decode index in the depth track, when one was paired (or the display track is depth).
        var depth: Int?
        var timestamp: Double
    }

    // MARK: Opening

    /// Opens and indexes the recording. Throws `CaptureError.file` naming the file and the problem.
    public func start() throws {
        stop()
        warnings.removeAll()
        warned.removeAll()
        let f: MediaFile
        if let memory {
            f = try MediaFile.open(bytes: memory, name: path, format: "matroska")
            if let problem = MKVSource.truncation(prefix: Array(memory.prefix(4096)), fileSize: Int64(memory.count)) {
                throw CaptureError.file(path: path, problem: problem)
            }
        } else {
            f = try MediaFile.open(path: path, format: "matroska")
            if let problem = MKVSource.truncation(of: path) { throw CaptureError.file(path: path, problem: problem) }
        }

        // Tracks.
        var byRole: [Role: Track] = [:]
        for s in f.streams where s.kind == DL_MEDIA_VIDEO {
            let title = s.titleString
            let tags = Set(f.tags(stream: s.index).map(\.key))
            let role: Role?
            if title == "COLOR" || tags.contains("K4A_COLOR_TRACK") { role = .color }
            else if title == "DEPTH" || tags.contains("K4A_DEPTH_TRACK") { role = .depth }
            else if title == "IR" || title == "DEPTH_IR" || tags.contains("K4A_IR_TRACK") { role = .ir }
            else { role = nil }
            guard let role, byRole[role] == nil else { continue }
            guard s.width >= 1, s.height >= 1, Int(s.width) * Int(s.height) <= MKVSource.maxPixels else {
                throw CaptureError.file(path: path, problem: "\(role.rawValue) track has an unusable size \(s.width)x\(s.height)")
            }
            byRole[role] = Track(role: role, info: s)
        }
        guard let shown = byRole[.color] ?? byRole[.ir] ?? byRole[.depth] else {
            let titles = f.streams.filter { $0.kind == DL_MEDIA_VIDEO }.map { "'\($0.titleString)'" }
            throw CaptureError.file(path: path, problem: "no COLOR, DEPTH or IR video track"
                                    + (titles.isEmpty ? " (no video tracks)" : " (video tracks: \(titles.joined(separator: ", ")))"))
        }
        for t in byRole.values where t.role != .color && !t.isB16G && t.info.codecNameString == "none" {
            throw CaptureError.file(path: path, problem: "\(t.role.rawValue) track has a codec libavcodec does not know")
        }

        // Tags: the container's, then each track's (the recorder targets some at tracks).
        var tags: [String: String] = [:]
        for (k, v) in f.tags(stream: -1) where k.hasPrefix("K4A_") || k.hasPrefix("DEPTHLENS_") { tags[k] = v }
        for s in f.streams {
            for (k, v) in f.tags(stream: s.index) where k.hasPrefix("K4A_") && tags[k] == nil { tags[k] = v }
        }

        // The IMU track (any kind: libavformat makes S_K4A/IMU a subtitle stream of no codec).
        let imuStream = f.streams.first { s in
            s.kind != DL_MEDIA_VIDEO && s.kind != DL_MEDIA_ATTACHMENT
                && (s.titleString == "IMU" || f.tags(stream: s.index).contains { $0.key == "K4A_IMU_TRACK" })
        }
        var imuPackets: [[UInt8]] = []

        // Index every packet.
        let used = Array(byRole.values)
        var byStream: [Int32: Track] = [:]
        for t in used { byStream[t.stream] = t }
        var unstamped = 0, duplicate = 0
        do {
            while let p = try f.readPacket() {
                if p.stream == imuStream?.index { imuPackets.append(p.bytes); continue }
                guard let t = byStream[p.stream] else { continue }
                guard let pts = p.pts, let ns = p.ptsNS else { unstamped += 1; continue }
                guard t.byPTS[pts] == nil else { duplicate += 1; continue }
                t.byPTS[pts] = t.pts.count
                t.pts.append(pts)
                t.ns.append(ns)
                t.keyframe.append(p.keyframe)
                t.sizes.append(p.size)
                t.positions.append(p.position)
            }
        } catch {
            guard used.contains(where: { !$0.pts.isEmpty }) else { throw error }
            warn("reading stopped early: \(error)")
        }
        for t in used where !t.intraOnly && !t.keyframe.isEmpty && !t.keyframe.contains(false) { t.intraOnly = true }
        if unstamped > 0 { warn("\(unstamped) packets without a timestamp skipped") }
        if duplicate > 0 { warn("\(duplicate) packets with a repeated timestamp skipped") }
        guard !shown.pts.isEmpty else {
            throw CaptureError.file(path: path, problem: "\(shown.role.rawValue) track holds no frames")
        }
        for t in used { t.order = t.pts.indices.sorted { t.pts[$0] < t.pts[$1] } }

        // Raw 16-bit tracks: every packet must be width·height·2 bytes.
        for t in used where t.isB16G {
            let bad = t.sizes.indices.filter { t.sizes[$0] != t.expectedRawSize }
            guard let first = bad.first else { continue }
            let what = "\(t.role.rawValue) track: packet \(first) holds \(t.sizes[first]) bytes, expected \(t.expectedRawSize) (\(t.width)x\(t.height) 16-bit)"
            if bad.count == t.sizes.count { throw CaptureError.file(path: path, problem: what) }
            let effect = t === shown ? "are skipped" : (t.role == .depth ? "play without depth" : "are not shown")
            warn("\(what); \(bad.count) of \(t.sizes.count) such frames \(effect)")
        }

        // Pairing and timestamps.
        // depthlens' own recordings (MKVRecorder) store times from the first frame, whose time is
        // DEPTHLENS_START_OFFSET_US.
        let startOffsetNS = tags["K4A_START_OFFSET_NS"].flatMap { Int64($0) }
            ?? tags["DEPTHLENS_START_OFFSET_US"].flatMap { Int64($0) }.flatMap { $0.multipliedReportingOverflow(by: 1000).overflow ? nil : $0 * 1000 } ?? 0
        let delayNS = tags["K4A_DEPTH_DELAY_NS"].flatMap { Int64($0) } ?? 0
        let depth = byRole[.depth]
        let interval = MKVSource.medianInterval(shown) ?? 1.0 / 30
        var list: [Frame] = []
        list.reserveCapacity(shown.order.count)
        var nextDepth = 0
        let colorDelay = shown.role == .color ? max(delayNS, 0) : 0
        let depthDelay = shown.role == .color ? max(-delayNS, 0) : 0
        for i in shown.order {
            var d: Int?
            if shown === depth {
                d = i
            } else if let depth, !depth.order.isEmpty {
                // Nearest unused depth packet within half a frame interval.
                let t = shown.ns[i] + colorDelay
                func time(_ k: Int) -> Int64 { depth.ns[depth.order[k]] + depthDelay }
                var lo = nextDepth, hi = depth.order.count
                while lo < hi { let mid = (lo + hi) / 2; if time(mid) < t { lo = mid + 1 } else { hi = mid } }
                var best: Int?
                for k in [lo - 1, lo] where k >= nextDepth && k < depth.order.count {
                    if best == nil || abs(time(k) - t) < abs(time(best!) - t) { best = k }
                }
                if let b = best, Double(abs(time(b) - t)) <= interval / 2 * 1e9 {
                    d = depth.order[b]
                    nextDepth = b + 1
                }
            }
            let micro = shown.ns[i] / 1000 + startOffsetNS / 1000
            list.append(Frame(display: i, depth: d, timestamp: Double(micro) / 1e6))
        }

        // Calibration.
        calibration = nil
        azureKinectCalibration = nil
        depthScale = 1000
        loadCalibration(f, tags: tags, color: byRole[.color], depth: depth ?? byRole[.ir])
        if let c = calibration { depthScale = c.depthScale }
        intrinsics = calibration?.color.intrinsics ?? .default(width: shown.width, height: shown.height)

        // Metadata.
        var streams: [SourceMetadata.Stream] = []
        for role in [Role.color, .depth, .ir] {
            guard let t = byRole[role] else { continue }
            let fps = t.info.average_fps > 0 ? t.info.average_fps : MKVSource.medianInterval(t).map { 1 / $0 }
            streams.append(.init(name: role.rawValue.lowercased(), width: t.width, height: t.height, fps: fps,
                                 encoding: t.encoding, frames: t.pts.count))
        }
        var device: SourceMetadata.Device?
        if tags.keys.contains(where: { $0.hasPrefix("K4A_") }) {
            var firmware: [String] = []
            if let c = tags["K4A_COLOR_FIRMWARE_VERSION"] { firmware.append("color \(c)") }
            if let d = tags["K4A_DEPTH_FIRMWARE_VERSION"] { firmware.append("depth \(d)") }
            device = .init(name: "Azure Kinect", serial: tags["K4A_DEVICE_SERIAL_NUMBER"],
                           firmware: firmware.isEmpty ? nil : firmware.joined(separator: ", "))
        }
        let duration = list.count > 1 ? list[list.count - 1].timestamp - list[0].timestamp : (list.isEmpty ? nil : 0)
        metadata = SourceMetadata(kind: "mkv", device: device, streams: streams, durationSeconds: duration, tags: tags)
        nominalFrameRate = streams.first?.fps.map { ($0 * 1000).rounded() / 1000 }

        file = f
        tracks = byStream
        streamTracks = [Role.color, .depth, .ir].compactMap { byRole[$0] }
        self.startOffsetNS = startOffsetNS
        imuTrack = imuStream.map { s in (s.titleString.isEmpty ? "track \(s.index)" : s.titleString, imuPackets) }
        imuRead = nil
        wanted.removeAll()
        display = shown
        depthTrack = depth
        frames = list
        frameTimestamps = list.map(\.timestamp)
        lastRead.removeAll()
        stash.removeAll()
        seekCount = 0
        recording.open(count: list.count, timestamps: frameTimestamps, defaultFPS: 30)
    }

    private func loadCalibration(_ f: MediaFile, tags: [String: String], color: Track?, depth: Track?) {
        let attachments = f.streams.filter { $0.kind == DL_MEDIA_ATTACHMENT }
        guard let a = attachments.first(where: { s in f.tags(stream: s.index).contains { $0.key == "K4A_CALIBRATION_FILE" } })
                ?? attachments.first(where: { $0.filenameString == "calibration.json" }) else {
            warn("no calibration.json attachment: default intrinsics")
            return
        }
        let bytes = f.attachment(stream: a.index)
        let label = "\(path): attachment \(a.filenameString.isEmpty ? "calibration.json" : a.filenameString)"
        do {
            if AzureKinectCalibration.isAzureKinectJSON(bytes) {
                let k = try AzureKinectCalibration.decode(bytes, name: label)
                azureKinectCalibration = k
                let mode = tags["K4A_DEPTH_MODE"].flatMap(AzureKinectCalibration.DepthMode.init(tag:))
                    ?? depth.flatMap { AzureKinectCalibration.DepthMode(width: $0.width, height: $0.height) }
                if let depth, let m = mode, m.size != (depth.width, depth.height) {
                    warn("K4A_DEPTH_MODE \(m.rawValue) is \(m.size.width)x\(m.size.height) but the \(depth.role.rawValue) track is \(depth.width)x\(depth.height): default intrinsics")
                    return
                }
                let resolution = color.flatMap { AzureKinectCalibration.ColorResolution(width: $0.width, height: $0.height) }
                if let color, resolution == nil {
                    warn("color track is \(color.width)x\(color.height), not an Azure Kinect resolution: default intrinsics")
                    return
                }
                switch (mode, resolution) {
                case let (m?, r?):
                    calibration = try k.rgbdCalibration(depthMode: m, colorResolution: r)
                case let (m?, nil):
                    // No color track: the frames' image is the depth camera's own IR or depth.
                    let d = try k.depthCamera(mode: m)
                    calibration = RGBDCalibration(depth: d, color: d, depthScale: 1000, origin: "recording")
                case let (nil, r?):
                    let c = try k.colorCamera(resolution: r)
                    calibration = RGBDCalibration(depth: c, color: c, depthScale: 1000, origin: "recording")
                case (nil, nil):
                    warn("no K4A_DEPTH_MODE tag and no track of a known size: default intrinsics")
                }
            } else {
                var c = try RGBDCalibration.decode(bytes, name: label)
                c.origin = "recording"
                if let color, (c.color.intrinsics.width, c.color.intrinsics.height) != (color.width, color.height) {
                    warn("calibration.json color camera is \(c.color.intrinsics.width)x\(c.color.intrinsics.height), the COLOR track \(color.width)x\(color.height): intrinsics scaled")
                    c.color = c.color.scaled(toWidth: color.width, height: color.height)
                }
                if let depth, (c.depth.intrinsics.width, c.depth.intrinsics.height) != (depth.width, depth.height) {
                    warn("calibration.json depth camera is \(c.depth.intrinsics.width)x\(c.depth.intrinsics.height), the \(depth.role.rawValue) track \(depth.width)x\(depth.height): intrinsics scaled")
                    c.depth = c.depth.scaled(toWidth: depth.width, height: depth.height)
                }
                calibration = c
            }
        } catch {
            azureKinectCalibration = nil
            calibration = nil
            warn("\(CaptureError.wrapping(error, path: label)): default intrinsics")
        }
    }

    public func stop() {
        recording.close()
        file = nil
        tracks.removeAll()
        display = nil
        depthTrack = nil
        streamTracks = []
        frameDecoders.removeAll()
        wanted.removeAll()
        ahead.removeAll()
        pools.removeAll()
        metersPool = nil
        forgetReadPosition()
    }

    /// After a seek or a stop nothing read or decoded before says where the file is.
    private func forgetReadPosition() {
        lastRead.removeAll()
        stash.removeAll()
        decodedAhead.removeAll()
        lastOutputRank.removeAll()
    }

    // MARK: Frames

    public func nextFrame(now: Double) throws -> FrameSet? {
        guard file != nil else { throw CaptureError.invalidState("\(name): nextFrame before start()") }
        guard let due = recording.clock.due(now: now) else { return nil }
        var i = due.index
        var tries = 0
        while true {
            do {
                let set = try playbackFrame(i)
                recording.clock.delivered(i, now: now, explicit: due.explicit)
                readAhead(after: i)
                return set
            } catch {
                warn(frame: i, error)
                tries += 1
                if due.explicit, tries < frames.count, let j = recording.clock.neighbor(of: i, direction: recording.clock.direction) {
                    i = j
                    continue
                }
                recording.clock.delivered(i, now: now, explicit: due.explicit)
                return nil
            }
        }
    }

    /// Frame `i` of playback: decoded ahead (`readAhead`) when it was, else now.
    private func playbackFrame(_ i: Int) throws -> FrameSet {
        guard let states = ahead.take(i) else { return try frame(i) }
        return try frameSet(i, display: states[0], depth: states.count > 1 ? states[1] : nil)
    }

    /// Begins decoding the frames timed playback will ask for after `i` (`PlaybackReadAhead`),
    /// when every track involved is intra-only (MJPEG, raw depth, FFV1 a keyframe a packet): their
    /// packets are read here, in file order, and decoded on workers.
    private func readAhead(after i: Int) {
        guard let display, display.intraOnly, depthTrack?.intraOnly ?? true else { return }
        for k in ahead.framesToBegin(after: i, clock: recording.clock) {
            // A frame that cannot be read is left to `frame(_:)`, which reports it when it is due.
            guard let work = try? decodeWork(frame: k) else { return }
            ahead.begin(k, work)
        }
    }

    /// Reads frame `k`'s packets; the decoding of them, to run on a worker.
    private func decodeWork(frame k: Int) throws -> @Sendable () -> [NeedState] {
        guard let display else { throw CaptureError.invalidState("\(name): not started") }
        let fr = frames[k]
        var needs = [Need(track: display, index: fr.display, packetOnly: true)]
        if let d = fr.depth, let depthTrack, depthTrack !== display { needs.append(Need(track: depthTrack, index: d, packetOnly: true)) }
        try load(&needs)
        let work = try needs.map { try decodeWork($0, pool: pool(for: $0.track)) }
        return { work.map { $0() } }
    }

    /// The buffer pool of an intra-only track's decoded images.
    private func pool(for t: Track) -> BufferPool {
        if let p = pools[t.stream] { return p }
        let p = Self.playbackPool(FrameFormat(width: t.width, height: t.height, pixelFormat: t.format.pixelFormat))
        pools[t.stream] = p
        return p
    }

    /// A pool of playback's buffers of `format`: one made now, up to `pooledBuffers`.
    private static func playbackPool(_ format: FrameFormat) -> BufferPool {
        BufferPool(format: format, outputRetainedBufferCountHint: 1, allocationThreshold: pooledBuffers)
    }

    /// Decodes frame `i` (0-based, playback order) without moving playback.
    public func frame(_ i: Int) throws -> FrameSet {
        guard let display, i >= 0, i < frames.count else { throw CaptureError.invalidState("\(name): frame \(i) is out of range 0..<\(frames.count)") }
        let fr = frames[i]
        var needs = [Need(track: display, index: fr.display)]
        if let d = fr.depth, let depthTrack, depthTrack !== display { needs.append(Need(track: depthTrack, index: d)) }
        try load(&needs)
        return try frameSet(i, display: needs[0].state, depth: needs.count > 1 ? needs[1].state : nil)
    }

    /// Frame `i` from what reading and decoding its display track's packet (and its depth
    /// track's, when that is another track) came to: the same for `frame(_:)` and for frames
    /// decoded ahead (`readAhead`).
    private func frameSet(_ i: Int, display displayState: NeedState, depth depthState: NeedState?) throws -> FrameSet {
        guard let display else { throw CaptureError.invalidState("\(name): not started") }
        guard case let .done(image) = displayState else {
            if case let .failed(problem) = displayState { throw CaptureError.file(path: path, problem: "frame \(i): \(problem)") }
            throw CaptureError.file(path: path, problem: "frame \(i) not found")
        }
        var depthMap: PixelBuffer?
        if display.role == .depth {
            depthMap = image
        } else if let depthState {
            switch depthState {
            case let .done(d): depthMap = d
            case let .failed(problem): warn(frame: i, CaptureError.file(path: path, problem: "frame \(i): depth \(problem); shown without depth"))
            case .pending, .packet: break
            }
        }
        let depth = depthMap.map { gray in
            DepthData(map: meters(gray), intrinsics: calibration?.depth.intrinsics ?? .default(width: gray.width, height: gray.height))
        }
        return FrameSet(color: image, depth: depth, timestamp: frames[i].timestamp, index: i)
    }

    private func meters(_ gray: PixelBuffer) -> PixelBuffer {
        let format = FrameFormat(width: gray.width, height: gray.height, pixelFormat: .depthFloat32)
        if metersPool?.format != format { metersPool = Self.playbackPool(format) }
        return Self.meters(gray, scale: depthScale, into: try? metersPool?.makeBuffer())
    }

    /// 16-bit depth units → meters (units / `scale`), into `out` when given (of gray's size, depthFloat32).
    static func meters(_ gray: PixelBuffer, scale: Float, into given: PixelBuffer? = nil) -> PixelBuffer {
        let out = given ?? PixelBuffer(width: gray.width, height: gray.height, format: .depthFloat32)
        let width = gray.width
        parallelRows(gray.height) { rows in
            for y in rows {
                let s = gray.row(y, as: UInt16.self), d = out.row(y, as: Float.self)
                for x in 0..<width { d[x] = Float(s[x]) / scale }
            }
        }
        out.markModified()
        return out
    }

    /// `packet`: the packet's bytes, read for a need that asked for them undecoded (`packetOnly`).
    enum NeedState: Sendable { case pending, done(PixelBuffer), failed(String), packet([UInt8]) }

    struct Need {
        let track: Track
        let index: Int
        /// Read the packet of an intra-only track without decoding it (`payload`).
        var packetOnly = false
        var state = NeedState.pending
        var isPending: Bool { if case .pending = state { return true } else { return false } }
    }

    /// Reads (and seeks when it must) until every need is decoded or has failed.
    private func load(_ needs: inout [Need]) throws {
        guard let file else { throw CaptureError.invalidState("\(name): not started") }
        for n in needs where n.track !== display && n.track !== depthTrack { wanted.insert(n.track.stream) }
        // Packets read ahead earlier, and frames decoded ahead.
        for k in needs.indices {
            let t = needs[k].track
            if let e = stash[t.stream]?.first(where: { $0.index == needs[k].index }) {
                needs[k].state = needs[k].packetOnly ? .packet(e.bytes) : decodeAlone(t, e.bytes, index: needs[k].index, file: file)
            } else if let j = decodedAhead[t.stream]?.firstIndex(where: { $0.index == needs[k].index }) {
                // Handed out once: the caller owns the buffer from here.
                needs[k].state = .done(decodedAhead[t.stream]!.remove(at: j).image)
            }
        }
        for attempt in 0..<2 {
            let pending = needs.filter(\.isPending)
            if pending.isEmpty { return }
            let forward = attempt == 0 && pending.allSatisfy { n in
                guard let last = lastRead[n.track.stream] else { return false }
                if n.track.intraOnly { return n.index > last && n.index - last <= 12 }
                // An inter-coded frame is still to come from the decoder while its presentation
                // rank is past the last frame given back (its packet may already be inside).
                let rank = n.track.rank[n.index]
                return rank > (lastOutputRank[n.track.stream] ?? -1) && n.index - last <= 12
            }
            if !forward {
                // Seek on the need whose keyframe comes first in the file (a muxer may write one
                // track's packets well ahead of another's of the same time), else the earliest in
                // time; to the start on a retry.
                var target = pending[0]
                var best = (position: Int64.max, ns: Int64.max)
                for n in pending {
                    let k = n.track.keyframe(atOrBefore: n.index)
                    let key = (position: n.track.positions[k] ?? Int64.max, ns: n.track.ns[k])
                    if key < best { best = key; target = n }
                }
                let t = target.track
                let ts = attempt == 0 ? t.pts[t.keyframe(atOrBefore: target.index)] : (t.pts.min() ?? 0)
                try file.seek(stream: t.stream, timestamp: ts)
                seekCount += 1
                forgetReadPosition()
            }
            var missed = false
            try readForward(&needs, file: file, missed: &missed)
            if !missed { break }
        }
        for k in needs.indices where needs[k].isPending { needs[k].state = .failed("not found in the file") }
    }

    private func readForward(_ needs: inout [Need], file: MediaFile, missed: inout Bool) throws {
        while needs.contains(where: \.isPending) {
            guard let p = try file.readPacket() else {
                // End of file: decoders give back what they hold.
                for k in needs.indices where needs[k].isPending && !needs[k].track.intraOnly && needs[k].track.decoderOpen {
                    try? file.sendEOF(stream: needs[k].track.stream)
                    drain(needs[k].track, &needs, file: file)
                    file.flushDecoder(stream: needs[k].track.stream)
                    lastOutputRank[needs[k].track.stream] = nil
                }
                missed = needs.contains(where: \.isPending)
                return
            }
            guard let t = tracks[p.stream], let pts = p.pts, let idx = t.byPTS[pts] else { continue }
            lastRead[t.stream] = idx
            if let k = needs.firstIndex(where: { $0.track === t && $0.index == idx && $0.isPending }) {
                if t.intraOnly {
                    needs[k].state = needs[k].packetOnly ? .packet(p.bytes) : decodeAlone(t, p.bytes, index: idx, file: file)
                } else {
                    feed(t, p, &needs, file: file)
                }
            } else if !t.intraOnly && (t === display || t === depthTrack || wanted.contains(t.stream)) {
                // Inter-coded tracks need every packet since the keyframe.
                feed(t, p, &needs, file: file)
            } else if t === display || t === depthTrack || wanted.contains(t.stream) {
                var s = stash[t.stream] ?? []
                s.append((idx, p.bytes))
                if s.count > Self.stashLimit { s.removeFirst(s.count - Self.stashLimit) }
                stash[t.stream] = s
            }
            // A need this track has passed can only be found again from earlier in the file.
            for k in needs.indices where needs[k].isPending && needs[k].track === t
                && (t.intraOnly ? idx > needs[k].index : idx > needs[k].index + 32) {
                missed = true
                return
            }
        }
    }

    /// Output buffer for a track's image: rgba8 color, 16-bit gray for depth, IR and any b16g track.
    private func buffer(for t: Track) -> PixelBuffer { t.format.buffer() }

    /// Decodes one packet of an intra-only track with the file's decoder.
    private func decodeAlone(_ t: Track, _ bytes: [UInt8], index: Int, file: MediaFile) -> NeedState {
        Self.decodeAlone(t.format, bytes, pts: t.pts[index], decoder: TrackDecoder(file: file, track: t), pool: pool(for: t))
    }

    /// The file's own decoder of a track, as `PacketDecoding`.
    private struct TrackDecoder: PacketDecoding {
        let file: MediaFile
        let track: Track
        func openDecoder() throws {
            guard !track.decoderOpen else { return }
            try file.openDecoder(stream: track.stream)
            track.decoderOpen = true
        }
        func flush() { file.flushDecoder(stream: track.stream) }
        func send(_ bytes: UnsafeRawBufferPointer, pts: Int64?, keyframe: Bool) throws -> Bool {
            try file.send(stream: track.stream, bytes: bytes, pts: pts, keyframe: keyframe)
        }
        func sendEOF() throws { try file.sendEOF(stream: track.stream) }
        func receive() throws -> MediaFile.Received { try file.receive(stream: track.stream) }
        func convert(into dst: PixelBuffer) throws { try file.convert(stream: track.stream, into: dst) }
    }

    /// Decodes one packet of an intra-only track (the file's decoder, or one apart from it on a
    /// worker thread: the same steps, so the same pixels and the same problems).
    static func decodeAlone(_ t: TrackFormat, _ bytes: [UInt8], pts: Int64, decoder: some PacketDecoding,
                            pool: BufferPool? = nil) -> NeedState {
        if t.isB16G {
            let out = t.buffer(from: pool)
            var message = [CChar](repeating: 0, count: 256)
            let r = bytes.withUnsafeBufferPointer {
                dl_media_b16g_to_gray16($0.baseAddress, $0.count, Int32(t.width), Int32(t.height),
                                        out.baseAddress.assumingMemoryBound(to: UInt16.self), out.bytesPerRow, &message, message.count)
            }
            guard r == 0 else { return .failed(String(cBuffer: message)) }
            out.markModified()
            return .done(out)
        }
        do {
            try decoder.openDecoder()
            decoder.flush()
            var accepted = try bytes.withUnsafeBytes { try decoder.send($0, pts: pts, keyframe: true) }
            for _ in 0..<4 {
                switch try decoder.receive() {
                case let .frame(_, w, h):
                    guard w == t.width, h == t.height else { return .failed("frame is \(w)x\(h), the track says \(t.width)x\(t.height)") }
                    let out = t.buffer(from: pool)
                    try decoder.convert(into: out)
                    return .done(out)
                case .again:
                    if accepted { try decoder.sendEOF(); accepted = false } else { return .failed("the decoder gave no frame") }
                case .end:
                    decoder.flush()
                    return .failed("the decoder gave no frame")
                }
            }
            return .failed("the decoder gave no frame")
        } catch {
            decoder.flush()
            return .failed(problem(error))
        }
    }

    /// Gives a packet of an inter-coded track to its decoder and takes the frames it gives back.
    private func feed(_ t: Track, _ p: MediaFile.Packet, _ needs: inout [Need], file: MediaFile) {
        do {
            try openDecoder(t, file: file)
            guard let data = p.data else { return }
            let raw = UnsafeRawBufferPointer(start: data, count: p.size)
            if try !file.send(stream: t.stream, bytes: raw, pts: p.pts, keyframe: p.keyframe) {
                drain(t, &needs, file: file)
                _ = try file.send(stream: t.stream, bytes: raw, pts: p.pts, keyframe: p.keyframe)
            }
        } catch {
            if let k = needs.firstIndex(where: { $0.track === t && $0.isPending && t.pts[$0.index] == p.pts }) {
                needs[k].state = .failed(Self.problem(error))
            }
        }
        drain(t, &needs, file: file)
    }

    private func drain(_ t: Track, _ needs: inout [Need], file: MediaFile) {
        while true {
            guard let r = try? file.receive(stream: t.stream), case let .frame(pts, w, h) = r else { return }
            guard let pts, let index = t.byPTS[pts] else { continue }
            let rank = t.rank[index]
            lastOutputRank[t.stream] = rank
            guard let k = needs.firstIndex(where: { $0.track === t && $0.isPending && $0.index == index }) else {
                keepAhead(t, index: index, rank: rank, needs: needs, w: w, h: h, file: file)
                continue
            }
            guard w == t.width, h == t.height else {
                needs[k].state = .failed("frame is \(w)x\(h), the track says \(t.width)x\(t.height)")
                continue
            }
            let out = buffer(for: t)
            do {
                try file.convert(stream: t.stream, into: out)
                needs[k].state = .done(out)
            } catch {
                needs[k].state = .failed(Self.problem(error))
            }
        }
    }

    /// Keeps a frame the decoder gave back that is not on the way to a pending need of its track
    /// (the frames after the one asked for, when the decoder hands frames out late), so reading on
    /// finds it; frames decoded only to reach a later one (from a keyframe) are not kept.
    private func keepAhead(_ t: Track, index: Int, rank: Int, needs: [Need], w: Int, h: Int, file: MediaFile) {
        guard w == t.width, h == t.height,
              !needs.contains(where: { $0.track === t && $0.isPending && t.rank[$0.index] > rank }) else { return }
        let out = buffer(for: t)
        guard (try? file.convert(stream: t.stream, into: out)) != nil else { return }
        var kept = decodedAhead[t.stream] ?? []
        kept.append((index, out))
        if kept.count > Self.decodedAheadLimit { kept.removeFirst(kept.count - Self.decodedAheadLimit) }
        decodedAhead[t.stream] = kept
    }

    private func openDecoder(_ t: Track, file: MediaFile) throws {
        guard !t.decoderOpen else { return }
        try file.openDecoder(stream: t.stream)
        t.decoderOpen = true
    }

    /// The problem part of an error (the file is named once, by the caller).
    static func problem(_ error: Error) -> String {
        if case let .file(_, problem)? = error as? CaptureError { return problem }
        return "\(error)"
    }

    private func warn(_ message: String) {
        warnings.append(message)
        onWarning?(message)
    }

    private func warn(frame i: Int, _ error: Error) {
        guard warned.insert(i).inserted else { return }
        warn("frame \(i) skipped: \(CaptureError.wrapping(error, path: path))")
    }

    // MARK: Helpers

    static func medianInterval(_ t: Track) -> Double? {
        guard t.order.count >= 2 else { return nil }
        let gaps = zip(t.order.dropFirst(), t.order).map { Double(t.ns[$0] - t.ns[$1]) / 1e9 }.filter { $0 > 0 }.sorted()
        return gaps.isEmpty ? nil : gaps[gaps.count / 2]
    }

    /// A problem line when the Matroska segment declares more bytes than the file holds.
    static func truncation(of path: String) -> String? {
        guard let h = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? h.close() }
        guard let prefix = try? h.read(upToCount: 4096), let size = try? h.seekToEnd() else { return nil }
        return truncation(prefix: Array(prefix), fileSize: Int64(size))
    }

    /// Parses the EBML header and the Segment's size: (EBML id 1A45DFA3, size, …) (Segment id
    /// 18538067, size). An unknown size (all value bits 1) is a live recording, not a truncation.
    static func truncation(prefix b: [UInt8], fileSize: Int64) -> String? {
        var at = 0
        func vint(keepMarker: Bool) -> (value: UInt64, allOnes: Bool)? {
            guard at < b.count, b[at] != 0 else { return nil }
            let length = b[at].leadingZeroBitCount + 1
            guard length <= 8, at + length <= b.count else { return nil }
            var v = UInt64(keepMarker ? b[at] : b[at] & (0xFF >> length))
            for i in 1..<length { v = v << 8 | UInt64(b[at + i]) }
            let ones = !keepMarker && v == (UInt64(1) << (7 * length)) - 1
            at += length
            return (v, ones)
        }
        guard let id = vint(keepMarker: true), id.value == 0x1A45_DFA3, let headerSize = vint(keepMarker: false),
              !headerSize.allOnes, headerSize.value < 4096 else { return nil }
        at += Int(headerSize.value)
        guard let segment = vint(keepMarker: true), segment.value == 0x1853_8067, let size = vint(keepMarker: false),
              !size.allOnes, size.value < UInt64(Int64.max) / 2 else { return nil }
        let end = Int64(at) + Int64(size.value)
        guard end > fileSize else { return nil }
        return "truncated: the Matroska segment ends at byte \(end), the file has \(fileSize) bytes"
    }
}

// MARK: RecordedStreams

extension MKVSource {
    public func streams() throws -> [RecordedStream] {
        guard file != nil else { throw CaptureError.invalidState("\(name): streams before start()") }
        return streamTracks.map { t in
            RecordedStream(kind: t.role == .color ? .color : (t.role == .depth ? .depth : .ir), name: t.role.rawValue,
                           width: t.width, height: t.height,
                           timestamps: t.order.map { Double(t.ns[$0] / 1000 + startOffsetNS / 1000) / 1e6 })
        }
    }

    public func playbackTimestamps() throws -> [Double] {
        guard file != nil else { throw CaptureError.invalidState("\(name): streams before start()") }
        return frameTimestamps
    }

    /// Frame `index` of a track in presentation order: COLOR as rgba8, IR as gray16, DEPTH in meters.
    public func decodeFrame(_ index: Int, ofStream stream: Int) throws -> StreamFrame {
        guard file != nil else { throw CaptureError.invalidState("\(name): decodeFrame before start()") }
        guard streamTracks.indices.contains(stream), streamTracks[stream].order.indices.contains(index) else {
            throw CaptureError.invalidState("\(name): no frame \(index) of stream \(stream)")
        }
        let t = streamTracks[stream]
        var needs = [Need(track: t, index: t.order[index])]
        try load(&needs)
        switch needs[0].state {
        case let .done(image):
            guard t.role == .depth else { return .image(image) }
            return .depth(DepthData(map: meters(image), intrinsics: calibration?.depth.intrinsics ?? .default(width: image.width, height: image.height)))
        case let .failed(problem):
            throw CaptureError.file(path: path, problem: "\(t.role.rawValue) frame \(index): \(problem)")
        case .pending, .packet:
            throw CaptureError.file(path: path, problem: "\(t.role.rawValue) frame \(index) not found")
        }
    }

    /// Frame `index` of an intra-only track (MJPEG, raw b16g, FFV1 written a keyframe a packet):
    /// its packet, read in file order as `decodeFrame` reads it, decoded by a decoder apart from the
    /// file. nil for inter-coded tracks (H.264), whose frames need the ones before them.
    public func payload(_ index: Int, ofStream stream: Int) throws -> StreamPayload? {
        guard file != nil else { throw CaptureError.invalidState("\(name): payload before start()") }
        guard streamTracks.indices.contains(stream), streamTracks[stream].order.indices.contains(index) else {
            throw CaptureError.invalidState("\(name): no frame \(index) of stream \(stream)")
        }
        let t = streamTracks[stream]
        guard t.intraOnly else { return nil }
        var needs = [Need(track: t, index: t.order[index], packetOnly: true)]
        try load(&needs)
        let path = self.path, format = t.format, scale = depthScale
        let intrinsics = calibration?.depth.intrinsics
        let what = "\(t.role.rawValue) frame \(index)"
        switch needs[0].state {
        case .packet, .done: break
        case let .failed(problem): throw CaptureError.file(path: path, problem: "\(what): \(problem)")
        case .pending: throw CaptureError.file(path: path, problem: "\(what) not found")
        }
        let decode = try decodeWork(needs[0])
        return StreamPayload {
            switch decode() {
            case let .done(image): return Self.streamFrame(image, format: format, scale: scale, intrinsics: intrinsics)
            case let .failed(problem): throw CaptureError.file(path: path, problem: "\(what): \(problem)")
            case .pending, .packet: throw CaptureError.file(path: path, problem: "\(what) not found")
            }
        }
    }

    /// The decoding of a need read undecoded (`packetOnly`) of an intra-only track, to run apart
    /// from the source on any thread (its packet's bytes decoded by one of the track's decoders,
    /// made here on first use; b16g packets need none), into `pool`'s buffers when one is given.
    /// A need in any other state gives that state.
    private func decodeWork(_ need: Need, pool: BufferPool? = nil) throws -> @Sendable () -> NeedState {
        guard case let .packet(bytes) = need.state else {
            let state = need.state
            return { state }
        }
        guard let file else { throw CaptureError.invalidState("\(name): not started") }
        let t = need.track
        if !t.isB16G, frameDecoders[t.stream] == nil {
            frameDecoders[t.stream] = FrameDecoders(try file.streamParameters(stream: t.stream), name: path)
        }
        let decoders = t.isB16G ? nil : frameDecoders[t.stream]
        let format = t.format, pts = t.pts[need.index]
        return {
            guard let decoders else { return Self.decodeAlone(format, bytes, pts: pts, decoder: NoDecoder(), pool: pool) }
            do {
                return try decoders.with { Self.decodeAlone(format, bytes, pts: pts, decoder: $0, pool: pool) }
            } catch {
                return .failed(Self.problem(error))   // no decoder could be opened
            }
        }
    }

    /// A decoded image as `decodeFrame` gives it: DEPTH in meters, COLOR and IR as they are.
    private static func streamFrame(_ image: PixelBuffer, format: TrackFormat, scale: Float, intrinsics: CameraIntrinsics?) -> StreamFrame {
        guard format.role == .depth else { return .image(image) }
        return .depth(DepthData(map: meters(image, scale: scale), intrinsics: intrinsics ?? .default(width: image.width, height: image.height)))
    }

    /// The decoder of a b16g track, which needs none (its packets are converted by `dl_media_b16g_to_gray16`).
    private struct NoDecoder: PacketDecoding {
        func openDecoder() throws {}
        func flush() {}
        func send(_ bytes: UnsafeRawBufferPointer, pts: Int64?, keyframe: Bool) throws -> Bool { true }
        func sendEOF() throws {}
        func receive() throws -> MediaFile.Received { .end }
        func convert(into dst: PixelBuffer) throws {}
    }
}

// MARK: IMURecording

extension MKVSource {
    /// Size of the SDK's packed `matroska_imu_sample_t`.
    static let imuSampleSize = 40

    public func imuSamples() throws -> IMUSamples {
        if let imuRead { return imuRead }
        guard let imuTrack else { return IMUSamples() }
        let samples = try Self.imuSamples(imuTrack.packets, track: imuTrack.name, path: path)
        imuRead = samples
        return samples
    }

    /// Decodes the IMU track's packets (each one sample or several laced together: a multiple of
    /// 40 bytes). A packet of another size or a value that is not finite is a `CaptureError.file`
    /// naming `path`.
    static func imuSamples(_ packets: [[UInt8]], track: String, path: String) throws -> IMUSamples {
        var accT: [Double] = [], acc: [SIMD3<Double>] = [], gyroT: [Double] = [], gyro: [SIMD3<Double>] = []
        for (i, p) in packets.enumerated() {
            guard !p.isEmpty, p.count % imuSampleSize == 0 else {
                throw CaptureError.file(path: path, problem: "\(track) track: packet \(i) holds \(p.count) bytes, not whole \(imuSampleSize)-byte IMU samples")
            }
            var r = ByteReader(bytes: p, name: path, what: "\(track) packet \(i)")
            for k in 0..<(p.count / imuSampleSize) {
                let at = try r.u64()
                let a = SIMD3(Double(try r.f32()), Double(try r.f32()), Double(try r.f32()))
                let gt = try r.u64()
                let g = SIMD3(Double(try r.f32()), Double(try r.f32()), Double(try r.f32()))
                try IMUSamples.checkFinite(a, path: path, what: "\(track) packet \(i) sample \(k): the accelerometer")
                try IMUSamples.checkFinite(g, path: path, what: "\(track) packet \(i) sample \(k): the gyroscope")
                accT.append(Double(at / 1000) / 1e6)
                acc.append(a)
                gyroT.append(Double(gt / 1000) / 1e6)
                gyro.append(g)
            }
        }
        guard !accT.isEmpty else { return IMUSamples() }
        return IMUSamples(accelerometer: IMUStream(kind: .accelerometer, name: track, timestamps: accT, values: acc),
                          gyroscope: IMUStream(kind: .gyroscope, name: track, timestamps: gyroT, values: gyro))
    }
}
