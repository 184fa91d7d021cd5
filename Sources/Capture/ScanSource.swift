import CMedia
import DepthKit
import Foundation

/// A phone LiDAR scan folder (`scan:DIR`): Stray Scanner, Polycam raw data, ARKitScenes or 3D
/// Scanner App "All Data", found from the files it holds (docs/SCANS.md). Each frame: the color
/// image (rgb.mp4 decoded through libavcodec for Stray Scanner), the low-resolution depth
/// (uint16 millimeters) with pixels below `minConfidence` dropped, the color camera's intrinsics
/// (scaled to the depth map for depth) and, when the scan has one, the camera's pose (`poses`).
///
/// A folder whose frames have no pose (poses missing or not matched) plays without them and says
/// so once in `warnings`; a malformed index or pose file is one `CaptureError.file` from `start()`.
/// A Stray Scanner folder's `imu.csv` gives the IMU samples (`ScanFormats.strayIMU`), read by
/// `imuSamples()`.
public final class ScanSource: FrameSource, IMURecording {
    public let directory: String
    /// Depth pixels whose confidence (0 low, 1 medium, 2 high) is below this are dropped.
    public let minConfidence: Int
    public var name: String { "scan:\(directory)" }
    /// Pause, step, seek, loop and rate (valid after `start()`).
    public let recording: RecordingPlayback
    public var playback: PlaybackControl? { recording }
    public private(set) var layout: ScanLayout?
    public private(set) var intrinsics: CameraIntrinsics = .default(width: 640, height: 480)
    public private(set) var calibration: RGBDCalibration?
    public private(set) var poses: FramePoses?
    public var isLive: Bool { false }
    public var depthUnitsPerMeter: Float? { 1000 }
    public private(set) var warnings: [String] = []
    public var onWarning: ((String) -> Void)?
    /// A Stray Scanner folder's imu.csv, when it has one.
    public var imu: IMURecording? { imuFile == nil ? nil : self }
    private var imuFile: String?
    private var imuRead: IMUSamples?

    /// One frame as the folder lists it.
    struct Frame {
        enum Color { case file(String), video(Int) }
        var color: Color
        var depth: String?
        var confidence: String?
        var timestamp: Double
        /// The color camera's intrinsics (no size: the color image gives it).
        var pinhole: ScanFormats.Pinhole?
        var pose: CameraPose?
        var name: String
    }

    private var frames: [Frame] = []
    private var video: VideoFrames?
    private var warned: Set<Int> = []

    /// - Parameter minConfidence: 0, 1 (default) or 2.
    public init(directory: String, minConfidence: Int = 1) {
        self.directory = directory
        self.minConfidence = minConfidence
        recording = RecordingPlayback(name: "scan:\(directory)")
    }

    public var metadata: SourceMetadata {
        var m = SourceMetadata(kind: "scan")
        if let layout { m.device = .init(name: layout.rawValue) }
        if let p = poses { m.tags["poses"] = "\(p.count) of \(frames.count) frames (\(p.origin))" }
        m.tags["min_confidence"] = "\(minConfidence)"
        if frames.count > 1 { m.durationSeconds = frames[frames.count - 1].timestamp - frames[0].timestamp }
        return m
    }

    public func start() throws {
        guard (0...2).contains(minConfidence) else {
            throw CaptureError.invalidSource("min-confidence must be 0, 1 or 2, got \(minConfidence)")
        }
        let dir = TUMSequence.absolute(directory)
        guard FileSupport.isDirectory(dir) else {
            throw CaptureError.file(path: directory, problem: FileManager.default.fileExists(atPath: dir) ? "is not a folder" : "no such folder")
        }
        warnings.removeAll()
        warned.removeAll()
        video = nil
        let found = try ScanFolder.read(dir, shownAs: directory)
        layout = found.layout
        frames = found.frames
        for w in found.warnings { warn(w) }
        imuRead = nil
        imuFile = nil
        if case .strayScanner = found.layout {
            do {
                let folder = try ConfinedFolder(dir)
                try folder.check(dir + "/rgb.mp4")
                try folder.check(dir + "/imu.csv")
            } catch {
                throw CaptureError.wrapping(error, path: directory)
            }
            video = try VideoFrames(path: dir + "/rgb.mp4")
            if FileManager.default.fileExists(atPath: dir + "/imu.csv") { imuFile = dir + "/imu.csv" }
        }
        let withPose = frames.filter { $0.pose != nil }.count
        if withPose == 0 {
            poses = nil
            warn("no frame has a pose (\(found.poseOrigin)): frames play without poses")
        } else {
            poses = FramePoses(.perFrame(frames.map(\.pose)), origin: found.poseOrigin)
            if withPose < frames.count { warn("\(frames.count - withPose) of \(frames.count) frames have no pose (\(found.poseOrigin))") }
        }
        recording.open(count: frames.count, timestamps: frames.map(\.timestamp), defaultFPS: 30)
        calibration = nil
        for i in 0..<min(frames.count, 8) {
            if let f = try? load(i) {
                intrinsics = f.colorIntrinsics
                if let d = f.depth {
                    calibration = RGBDCalibration(depth: CameraModel(intrinsics: d.intrinsics), color: CameraModel(intrinsics: f.colorIntrinsics),
                                                  depthScale: 1000, origin: "scan (\(found.layout.rawValue))")
                }
                break
            }
        }
    }

    public func stop() {
        recording.close()
        video = nil
        imuRead = nil
    }

    public func imuSamples() throws -> IMUSamples {
        if let imuRead { return imuRead }
        guard let imuFile else { return IMUSamples() }
        let bytes: [UInt8]
        do { bytes = try FileSupport.readAll(imuFile) } catch { throw CaptureError.wrapping(error, path: imuFile) }
        let samples = try ScanFormats.strayIMU(bytes, path: imuFile)
        imuRead = samples
        return samples
    }

    public func nextFrame(now: Double) throws -> FrameSet? {
        guard layout != nil else { throw CaptureError.invalidState("\(name): nextFrame before start()") }
        guard let due = recording.clock.due(now: now) else { return nil }
        var i = due.index
        var tries = 0
        while true {
            do {
                let f = try load(i)
                recording.clock.delivered(i, now: now, explicit: due.explicit)
                return FrameSet(color: f.color, depth: f.depth, timestamp: frames[i].timestamp, index: i, name: frames[i].name)
            } catch {
                if warned.insert(i).inserted { warn("frame \(i) skipped: \(CaptureError.wrapping(error, path: directory))") }
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

    private struct Loaded { var color: PixelBuffer; var depth: DepthData?; var colorIntrinsics: CameraIntrinsics }

    private func load(_ i: Int) throws -> Loaded {
        let f = frames[i]
        let color: PixelBuffer
        switch f.color {
        case let .file(path): color = try ImageIO.readColor(path)
        case let .video(n):
            guard let video else { throw CaptureError.invalidState("\(name): no video open") }
            color = try video.frame(n)
        }
        let k = f.pinhole.map { $0.intrinsics(width: color.width, height: color.height) }
            ?? .default(width: color.width, height: color.height)
        guard let depthPath = f.depth else { return Loaded(color: color, depth: nil, colorIntrinsics: k) }
        let raw = try ImageIO.read(depthPath)
        guard case .gray16 = raw.format else { throw CaptureError.file(path: depthPath, problem: "is not a 16-bit depth PNG (\(raw.format))") }
        var confidence: PixelBuffer?
        if let c = f.confidence, minConfidence > 0 {
            let b = try ImageIO.read(c)
            guard b.format == .gray8, b.width == raw.width, b.height == raw.height else {
                throw CaptureError.file(path: c, problem: "is not an 8-bit confidence map of the depth's \(raw.width)x\(raw.height)")
            }
            confidence = b
        }
        let out = PixelBuffer(width: raw.width, height: raw.height, format: .depthFloat32)
        let threshold = minConfidence
        for y in 0..<raw.height {
            let s = raw.row(y, as: UInt16.self), d = out.row(y, as: Float.self)
            let c = confidence?.row(y, as: UInt8.self)
            for x in 0..<raw.width {
                var keep = true
                if let c { keep = Self.confidenceLevel(c[x]) >= threshold }
                d[x] = keep ? Float(s[x]) / 1000 : 0
            }
        }
        out.markModified()
        let depth = DepthData(map: out, accuracy: .absolute, intrinsics: k.scaled(toWidth: raw.width, height: raw.height))
        return Loaded(color: color, depth: depth, colorIntrinsics: k)
    }

    /// A confidence sample's level: ARKit's 0, 1, 2 as they are; an 8-bit map spread over 0…255
    /// (as Polycam may write it) in thirds.
    static func confidenceLevel(_ v: UInt8) -> Int { v <= 2 ? Int(v) : Int(v) * 3 / 256 }

    private func warn(_ message: String) {
        warnings.append(message)
        onWarning?(message)
    }

    /// The median frame interval's rate.
    public var nominalFrameRate: Double? {
        guard frames.count >= 2 else { return nil }
        let gaps = zip(frames.dropFirst(), frames).map { $0.timestamp - $1.timestamp }.filter { $0 > 0 }.sorted()
        guard !gaps.isEmpty else { return nil }
        return (1 / gaps[gaps.count / 2] * 1000).rounded() / 1000
    }
}

/// Lists a scan folder's frames: which layout, each frame's files, intrinsics and pose.
enum ScanFolder {
    struct Found {
        var layout: ScanLayout
        var frames: [ScanSource.Frame]
        /// Where poses come from, for messages ("odometry.csv", "missing odometry.csv").
        var poseOrigin: String
        var warnings: [String]
    }

    /// The folder's layout and frames. Every file a frame names (and every index, pose and
    /// intrinsics file read here) lies inside `dir`: the names are the layout's own, and a file that
    /// is a link leading out of the folder is one error naming it (`ConfinedFolder`).
    static func read(_ dir: String, shownAs shown: String) throws -> Found {
        let found = try layout(dir, shownAs: shown)
        do {
            let folder = try ConfinedFolder(dir)
            for f in found.frames {
                if case let .file(p) = f.color { try folder.check(p) }
                if let p = f.depth { try folder.check(p) }
                if let p = f.confidence { try folder.check(p) }
            }
        } catch {
            throw CaptureError.wrapping(error, path: shown)
        }
        return found
    }

    private static func layout(_ dir: String, shownAs shown: String) throws -> Found {
        let fm = FileManager.default
        func exists(_ p: String) -> Bool { fm.fileExists(atPath: dir + "/" + p) }
        if exists("rgb.mp4") && FileSupport.isDirectory(dir + "/depth") { return try stray(dir) }
        if FileSupport.isDirectory(dir + "/keyframes") { return try polycam(dir) }
        if FileSupport.isDirectory(dir + "/lowres_wide") && FileSupport.isDirectory(dir + "/lowres_depth") { return try arkitScenes(dir) }
        if let names = try? fm.contentsOfDirectory(atPath: dir), names.contains(where: { $0.hasPrefix("frame_") && $0.hasSuffix(".jpg") }) {
            return try scannerApp(dir, names: names)
        }
        throw CaptureError.file(path: shown, problem:
            "is not a scan folder (expected Stray Scanner rgb.mp4 + depth/, Polycam keyframes/, ARKitScenes lowres_wide/ + lowres_depth/, or 3D Scanner App frame_*.jpg)")
    }

    private static func names(_ dir: String, suffix: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).filter { $0.lowercased().hasSuffix(suffix) }.sorted()
    }

    private static func stem(_ name: String) -> String { (name as NSString).deletingPathExtension }

    private static func file(_ path: String) -> String? { FileManager.default.fileExists(atPath: path) ? path : nil }

    static func stray(_ dir: String) throws -> Found {
        var warnings: [String] = []
        var pinhole: ScanFormats.Pinhole?
        let matrixPath = dir + "/camera_matrix.csv"
        if FileManager.default.fileExists(atPath: matrixPath) {
            pinhole = try ScanFormats.strayCameraMatrix(try read(matrixPath, in: dir), path: matrixPath)
        } else {
            warnings.append("no camera_matrix.csv: default intrinsics")
        }
        let odometryPath = dir + "/odometry.csv"
        let depthNames = names(dir + "/depth", suffix: ".png")
        var frames: [ScanSource.Frame] = []
        func frame(_ n: Int, timestamp: Double, pose: CameraPose?, k: ScanFormats.Pinhole?) -> ScanSource.Frame {
            let stem = String(format: "%06d", n)
            return ScanSource.Frame(color: .video(n), depth: file(dir + "/depth/\(stem).png"), confidence: file(dir + "/confidence/\(stem).png"),
                                    timestamp: timestamp, pinhole: k ?? pinhole, pose: pose, name: stem)
        }
        if FileManager.default.fileExists(atPath: odometryPath) {
            let rows = try ScanFormats.strayOdometry(try read(odometryPath, in: dir), path: odometryPath)
            frames = rows.map { frame($0.frame, timestamp: $0.timestamp, pose: $0.pose, k: $0.pinhole) }
            guard !frames.isEmpty else { throw CaptureError.file(path: odometryPath, problem: "lists no frame") }
            return Found(layout: .strayScanner, frames: frames, poseOrigin: "odometry.csv", warnings: warnings)
        }
        for name in depthNames {
            guard let n = Int(stem(name)) else { continue }
            frames.append(frame(n, timestamp: Double(frames.count) / 60, pose: nil, k: nil))
        }
        guard !frames.isEmpty else { throw CaptureError.file(path: dir + "/depth", problem: "holds no NNNNNN.png depth frame") }
        return Found(layout: .strayScanner, frames: frames, poseOrigin: "missing odometry.csv", warnings: warnings)
    }

    static func polycam(_ dir: String) throws -> Found {
        let k = dir + "/keyframes"
        // Polycam's corrected (undistorted, optimized) images and cameras when it wrote them.
        let corrected = FileSupport.isDirectory(k + "/corrected_images") && FileSupport.isDirectory(k + "/corrected_cameras")
        let images = k + (corrected ? "/corrected_images" : "/images"), cameras = k + (corrected ? "/corrected_cameras" : "/cameras")
        let imageNames = names(images, suffix: ".jpg")
        guard !imageNames.isEmpty else { throw CaptureError.file(path: images, problem: "holds no .jpg keyframe") }
        // Names are capture times as integers: order them as numbers.
        let ordered = imageNames.sorted { (Int(stem($0)) ?? 0, $0) < (Int(stem($1)) ?? 0, $1) }
        var frames: [ScanSource.Frame] = []
        var missing = 0
        for (i, name) in ordered.enumerated() {
            let s = stem(name)
            var pose: CameraPose?, pinhole: ScanFormats.Pinhole?
            let cameraPath = cameras + "/\(s).json"
            if FileManager.default.fileExists(atPath: cameraPath) {
                let c = try ScanFormats.polycamCamera(try read(cameraPath, in: dir), path: cameraPath)
                pose = c.pose; pinhole = c.pinhole
            } else {
                missing += 1
            }
            frames.append(ScanSource.Frame(color: .file(images + "/" + name), depth: file(k + "/depth/\(s).png"),
                                           confidence: file(k + "/confidence/\(s).png"), timestamp: Double(i) * 0.1,
                                           pinhole: pinhole, pose: pose, name: s))
        }
        var warnings: [String] = []
        if missing > 0 { warnings.append("\(missing) of \(frames.count) keyframes have no \(corrected ? "corrected_cameras" : "cameras")/NAME.json: default intrinsics") }
        return Found(layout: .polycam, frames: frames, poseOrigin: "keyframes/\(corrected ? "corrected_cameras" : "cameras")", warnings: warnings)
    }

    static func arkitScenes(_ dir: String) throws -> Found {
        let trajPath = dir + "/lowres_wide.traj"
        var track: PoseTrack?
        if FileManager.default.fileExists(atPath: trajPath) {
            var t = try ScanFormats.arkitScenesTrajectory(try read(trajPath, in: dir), path: trajPath)
            t.maxDifference = 0.05
            t.maxGap = 0.2
            track = t
        }
        var frames: [ScanSource.Frame] = []
        var warnings: [String] = []
        var noIntrinsics = 0
        for name in names(dir + "/lowres_wide", suffix: ".png") {
            let s = stem(name)
            // <video id>_<seconds with 3 decimals>
            guard let underscore = s.lastIndex(of: "_"), let t = Double(s[s.index(after: underscore)...]) else { continue }
            var pinhole: ScanFormats.Pinhole?
            let pincamPath = dir + "/lowres_wide_intrinsics/\(s).pincam"
            if FileManager.default.fileExists(atPath: pincamPath) {
                let k = try ScanFormats.pincam(try read(pincamPath, in: dir), path: pincamPath)
                pinhole = ScanFormats.Pinhole(fx: Double(k.fx), fy: Double(k.fy), cx: Double(k.cx), cy: Double(k.cy))
            } else {
                noIntrinsics += 1
            }
            frames.append(ScanSource.Frame(color: .file(dir + "/lowres_wide/" + name), depth: file(dir + "/lowres_depth/" + name),
                                           confidence: file(dir + "/confidence/" + name), timestamp: t, pinhole: pinhole,
                                           pose: track?.pose(at: t), name: s))
        }
        guard !frames.isEmpty else { throw CaptureError.file(path: dir + "/lowres_wide", problem: "holds no <video>_<time>.png frame") }
        frames.sort { $0.timestamp < $1.timestamp }
        if noIntrinsics > 0 { warnings.append("\(noIntrinsics) of \(frames.count) frames have no lowres_wide_intrinsics/*.pincam: default intrinsics") }
        return Found(layout: .arkitScenes, frames: frames, poseOrigin: track == nil ? "missing lowres_wide.traj" : "lowres_wide.traj",
                     warnings: warnings)
    }

    static func scannerApp(_ dir: String, names all: [String]) throws -> Found {
        let jpgs = all.filter { $0.hasPrefix("frame_") && $0.hasSuffix(".jpg") }
            .compactMap { n -> (Int, String)? in Int(n.dropFirst(6).dropLast(4)).map { ($0, n) } }.sorted { $0.0 < $1.0 }
        var frames: [ScanSource.Frame] = []
        var missing = 0
        for (i, (n, name)) in jpgs.enumerated() {
            let number = String(name.dropFirst(6).dropLast(4))
            let jsonPath = dir + "/frame_\(number).json"
            var pose: CameraPose?, pinhole: ScanFormats.Pinhole?, time: Double?
            if FileManager.default.fileExists(atPath: jsonPath) {
                let f = try ScanFormats.scannerAppFrame(try read(jsonPath, in: dir), path: jsonPath)
                pose = f.pose; pinhole = f.pinhole; time = f.time
            } else {
                missing += 1
            }
            frames.append(ScanSource.Frame(color: .file(dir + "/" + name), depth: file(dir + "/depth_\(number).png"),
                                           confidence: file(dir + "/conf_\(number).png"), timestamp: time ?? Double(i) / 30,
                                           pinhole: pinhole, pose: pose, name: "frame_\(number)"))
            _ = n
        }
        var warnings: [String] = []
        if missing > 0 { warnings.append("\(missing) of \(frames.count) frames have no frame_N.json: default intrinsics") }
        return Found(layout: .threeDScannerApp, frames: frames, poseOrigin: "frame_N.json cameraPoseARFrame", warnings: warnings)
    }

    /// A file of the folder `dir`, refused when it is a link leading out of it.
    private static func read(_ path: String, in dir: String) throws -> [UInt8] {
        do {
            try ConfinedFolder(dir).check(path)
            return try FileSupport.readAll(path)
        } catch {
            throw CaptureError.wrapping(error, path: path)
        }
    }
}

/// The frames of a video file, decoded in order through libavcodec (`MediaFile`); asking for an
/// earlier frame than the last decoded starts over from the beginning.
final class VideoFrames {
    let path: String
    private var file: MediaFile?
    private var stream: Int32 = -1
    /// Index of the frame the decoder hands out next.
    private var next = 0
    private var sentEOF = false

    init(path: String) throws {
        self.path = path
        try reopen()
    }

    private func reopen() throws {
        // libavformat's mov demuxer (MP4, QuickTime): what Stray Scanner writes, and nothing else.
        let f = try MediaFile.open(path: path, format: "mov")
        guard let s = f.streams.first(where: { $0.kind == DL_MEDIA_VIDEO }) else {
            throw CaptureError.file(path: path, problem: "has no video stream")
        }
        try f.openDecoder(stream: s.index)
        file = f
        stream = s.index
        next = 0
        sentEOF = false
    }

    /// Frame `index` (0-based, in presentation order) as rgba8.
    func frame(_ index: Int) throws -> PixelBuffer {
        if index < next || file == nil { try reopen() }
        guard let file else { throw CaptureError.file(path: path, problem: "not open") }
        while true {
            switch try file.receive(stream: stream) {
            case let .frame(_, w, h):
                let n = next
                next += 1
                guard n == index else { continue }
                let out = PixelBuffer(width: w, height: h, format: .rgba8)
                try file.convert(stream: stream, into: out)
                return out
            case .again:
                if sentEOF { throw CaptureError.file(path: path, problem: "has \(next) frames, frame \(index) was asked for") }
                guard let p = try file.readPacket() else {
                    try file.sendEOF(stream: stream)
                    sentEOF = true
                    continue
                }
                guard p.stream == stream, let data = p.data else { continue }
                let bytes = UnsafeRawBufferPointer(start: data, count: p.size)
                if try !file.send(stream: stream, bytes: bytes, pts: p.pts, keyframe: p.keyframe) {
                    throw CaptureError.file(path: path, problem: "the decoder refused a packet")
                }
            case .end:
                throw CaptureError.file(path: path, problem: "has \(next) frames, frame \(index) was asked for")
            }
        }
    }
}
