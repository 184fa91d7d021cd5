import CDepthKit
import DepthKit
import Foundation

/// The ROS 2 message definitions (`ros2msg`, as rosbag2's MCAP plugin stores them: the type's
/// own definition, then each type it uses after a line of 80 `=` and `MSG: pkg/Type`).
enum ROS2MessageDefinitions {
    static let separator = String(repeating: "=", count: 80)
    static let time = "int32 sec\nuint32 nanosec\n"
    static let header = "builtin_interfaces/Time stamp\nstring frame_id\n"

    static func joined(_ main: String, _ deps: [(String, String)]) -> [UInt8] {
        Array((main + deps.map { "\(separator)\nMSG: \($0.0)\n\($0.1)" }.joined()).utf8)
    }

    static let image = joined("""
        std_msgs/Header header
        uint32 height
        uint32 width
        string encoding
        uint8 is_bigendian
        uint32 step
        uint8[] data

        """, [("std_msgs/Header", header), ("builtin_interfaces/Time", time)])

    static let compressedImage = joined("""
        std_msgs/Header header
        string format
        uint8[] data

        """, [("std_msgs/Header", header), ("builtin_interfaces/Time", time)])

    static let cameraInfo = joined("""
        std_msgs/Header header
        uint32 height
        uint32 width
        string distortion_model
        float64[] d
        float64[9] k
        float64[9] r
        float64[12] p
        uint32 binning_x
        uint32 binning_y
        RegionOfInterest roi

        """, [("std_msgs/Header", header), ("builtin_interfaces/Time", time),
              ("sensor_msgs/RegionOfInterest", "uint32 x_offset\nuint32 y_offset\nuint32 height\nuint32 width\nbool do_rectify\n")])

    static let tfMessage = joined("geometry_msgs/TransformStamped[] transforms\n", [
        ("geometry_msgs/TransformStamped", "std_msgs/Header header\nstring child_frame_id\nTransform transform\n"),
        ("std_msgs/Header", header), ("builtin_interfaces/Time", time),
        ("geometry_msgs/Transform", "Vector3 translation\nQuaternion rotation\n"),
        ("geometry_msgs/Vector3", "float64 x\nfloat64 y\nfloat64 z\n"),
        ("geometry_msgs/Quaternion", "float64 x 0\nfloat64 y 0\nfloat64 z 0\nfloat64 w 1\n"),
    ])

    /// rosbag2's `offered_qos_profiles` channel metadata (Humble's YAML): reliable, keep-all history;
    /// durability transient-local for `/tf_static` (late joiners of `ros2 bag play` get it), else volatile.
    static func qos(transientLocal: Bool) -> String {
        let forever = "    sec: 2147483647\n    nsec: 4294967295\n"
        return "- history: 3\n  depth: 0\n  reliability: 1\n  durability: \(transientLocal ? 1 : 2)\n  deadline:\n\(forever)"
            + "  lifespan:\n\(forever)  liveliness: 1\n  liveliness_lease_duration:\n\(forever)  avoid_ros_namespace_conventions: false\n"
    }
}

/// What an MCAP export wrote.
public struct MCAPExportSummary: Sendable {
    public var path: String
    public var colorFrames = 0
    public var depthFrames = 0
    public var messages: UInt64 = 0
    /// Depth went out as 16UC1 millimeters (else 32FC1 meters).
    public var depthMillimeters = false
    /// Set when a stop signal ended the export early.
    public var stoppedBy: Int32?
    /// False when nothing was written (a convert stopped by a signal: an MCAP is written whole or not at all).
    public var written = true
    /// Each stream went out on its own clock (the source reads streams separately); false: frames as
    /// playback pairs them, both under the frame's stamp.
    public var perStream = false
    public var warnings: [String] = []
}

/// Writes a recording (or a live source's frames) as a ROS 2 MCAP file that `ros2 bag`, Foxglove,
/// rerun and `ros2:` open, laid out as realsense2_camera publishes: `/camera/camera/color/image_raw`
/// (`sensor_msgs/msg/Image` rgb8, or with `colorJPEG` `…/image_raw/compressed`, a CompressedImage
/// JPEG), `/camera/camera/depth/image_rect_raw` (16UC1 millimeters when the recording's units are
/// 1000 per meter, else 32FC1 meters: lossless either way), a `camera_info` beside each, and the
/// depth→color transform on `/tf_static` (frames `camera_depth_optical_frame` in
/// `camera_color_optical_frame`). Every frame goes out once under its own stamp (log time = publish
/// time = header stamp) when the source reads its streams separately (`RecordedStreams`); other
/// sources give their frames as playback pairs them, both images under the frame's stamp, a
/// repeated image written once. Chunks are zstd-compressed; the file is written under a temporary
/// name and renamed once complete, so an error leaves no file.
public final class MCAPExporter {
    public let source: FrameSource
    public let path: String
    public var selection = ExportSelection()
    public var contents: ExportContents = [.color, .depth]
    /// Color as JPEG `CompressedImage` (lossy) instead of rgb8 `Image`.
    public var colorJPEG = false
    public var jpegQuality = 95
    public var calibrationOverride = CalibrationOverride()
    /// At most this many frames (record --frames N); nil: all.
    public var frameLimit: Int?
    /// On a stop signal: finish the file with what was written (record), or write nothing (convert).
    public var keepOnStop = false
    public var options = MCAPWriter.Options()

    public static let colorFrame = "camera_color_optical_frame"
    public static let depthFrame = "camera_depth_optical_frame"
    public static let namespace = "/camera/camera"

    public init(source: FrameSource, path: String) {
        self.source = source
        self.path = path
    }

    /// Refuses a path that is not `.mcap`, or that exists unless `overwrite`.
    public static func prepare(path: String, overwrite: Bool) throws {
        guard path.lowercased().hasSuffix(".mcap") else { throw CaptureError.file(path: path, problem: "an MCAP output must end in .mcap") }
        if FileManager.default.fileExists(atPath: path) {
            guard overwrite, !FileSupport.isDirectory(path) else {
                throw CaptureError.file(path: path, problem: FileSupport.isDirectory(path) ? "is a folder" : "exists (--overwrite to replace it)")
            }
        }
    }

    /// One image of one stream, due at `stamp`.
    private enum Item {
        case color(PixelBuffer)
        case depth(PixelBuffer)
    }

    private struct Stopped: Error { var signal: Int32 }

    /// Runs the export. `shouldStop` is polled before each frame.
    public func run(shouldStop: () -> Int32? = { StopSignals.pending },
                    progress: (ExportProgress) -> Void = { _ in }) throws -> MCAPExportSummary {
        var summary = MCAPExportSummary(path: path)
        var out: MCAPFrameWriter?
        do {
            try write(&out, summary: &summary, shouldStop: shouldStop, progress: progress)
        } catch let s as Stopped {
            out?.abort()
            summary.stoppedBy = s.signal
            summary.written = false
        } catch {
            out?.abort()
            source.stop()
            throw CaptureError.wrapping(error, path: path)
        }
        summary.warnings = source.warnings
        return summary
    }

    private func write(_ out: inout MCAPFrameWriter?, summary: inout MCAPExportSummary, shouldStop: () -> Int32?,
                       progress: (ExportProgress) -> Void) throws {
        var wantColor = contents.contains(.color), wantDepth = contents.contains(.depth)
        let start = monotonicSeconds()

        // The frames, in time order: each stream's own, or playback's pairs.
        var pull: () throws -> (Double, Item)?
        let total: Int?
        defer { source.stop() }
        if let streams = source.recordedStreams, !source.isLive {
            try source.start()
            summary.perStream = true
            let list = try streams.streams()
            let depthIndex = list.firstIndex { $0.kind == .depth }
            let colorIndex = list.firstIndex { $0.kind == .color } ?? list.firstIndex { $0.kind == .ir }
            wantColor = wantColor && colorIndex != nil
            wantDepth = wantDepth && depthIndex != nil
            var events: [(t: Double, stream: Int, index: Int)] = []
            let playback = try streams.playbackTimestamps()
            for (k, s) in list.enumerated() where (k == colorIndex && wantColor) || (k == depthIndex && wantDepth) {
                for i in selectedFrames(of: s.timestamps, playback: playback) { events.append((s.timestamps[i], k, i)) }
            }
            events.sort { a, b in a.t != b.t ? a.t < b.t : (a.stream == depthIndex) && (b.stream != depthIndex) }
            if let limit = frameLimit { events = Array(events.prefix(limit)) }
            total = events.count
            var next = 0
            pull = {
                guard next < events.count else { return nil }
                let e = events[next]
                next += 1
                switch try streams.decodeFrame(e.index, ofStream: e.stream) {
                case let .image(b): return (e.t, .color(b))
                case let .depth(d): return (e.t, .depth(d.map))
                }
            }
        } else {
            let reader = try FrameReader(source: source, first: selection.frames?.lowerBound ?? 0)
            var pending: [(Double, Item)] = []
            var lastColor: PixelBuffer?, lastDepth: PixelBuffer?
            var selected = 0, frames = 0
            let (wc, wd) = (wantColor, wantDepth)
            total = nil
            pull = { [selection, frameLimit] in
                while pending.isEmpty {
                    if let limit = frameLimit, frames >= limit { return nil }
                    guard let f = try reader.next() else { return nil }
                    let verdict = selection.verdict(index: f.index, timestamp: f.timestamp, selected: &selected)
                    if verdict == .stop { return nil }
                    if verdict == .skip { continue }
                    frames += 1
                    if wd, let d = f.depth?.map, d !== lastDepth { pending.append((f.timestamp, .depth(d))); lastDepth = d }
                    if wc, f.color !== lastColor { pending.append((f.timestamp, .color(f.color))); lastColor = f.color }
                }
                return pending.removeFirst()
            }
        }

        // Calibration and channels, once the first frames say the sizes (the first of each stream,
        // looked for among the first few frames).
        var buffered: [(Double, Item)] = []
        var firstColor: PixelBuffer?, firstDepth: PixelBuffer?
        while (wantColor && firstColor == nil) || (wantDepth && firstDepth == nil), buffered.count < 16, let n = try pull() {
            buffered.append(n)
            switch n.1 {
            case let .color(b): firstColor = firstColor ?? b
            case let .depth(d): firstDepth = firstDepth ?? d
            }
        }
        guard firstColor != nil || firstDepth != nil else {
            throw CaptureError.file(path: source.name, problem: "no frame to write")
        }
        let colorForCalibration = firstColor ?? PixelBuffer(width: firstDepth!.width, height: firstDepth!.height, format: .rgba8)
        let calibration = try calibrationOverride.resolve(recorded: source.calibration, depthUnits: source.depthUnitsPerMeter,
                                                          color: colorForCalibration,
                                                          depth: firstDepth.map { DepthData(map: $0, intrinsics: nil) })
        let millimeters = source.depthUnitsPerMeter == 1000
        summary.depthMillimeters = millimeters
        let writer = try MCAPFrameWriter(path: path, calibration: calibration, color: wantColor && firstColor != nil,
                                         depth: wantDepth && firstDepth != nil, depthMillimeters: millimeters,
                                         colorJPEG: colorJPEG, jpegQuality: jpegQuality, options: options)
        out = writer

        var written = 0, index = 0
        while true {
            if let s = shouldStop() {
                summary.stoppedBy = s
                if !keepOnStop { throw Stopped(signal: s) }
                break
            }
            let item: (Double, Item)
            if index < buffered.count {
                item = buffered[index]
                index += 1
            } else {
                guard let n = try pull() else { break }
                item = n
            }
            switch item.1 {
            case let .color(b): try writer.addColor(b, stamp: item.0)
            case let .depth(d): try writer.addDepth(d, stamp: item.0)
            }
            written += 1
            progress(ExportProgress(written: written, total: total, seconds: monotonicSeconds() - start))
        }
        try writer.finish()
        summary.colorFrames = writer.colorFrames
        summary.depthFrames = writer.depthFrames
        summary.messages = writer.messages
    }

    /// Of a stream's frames, those the selection picks: all; with `--frames`/`--every`, the frames
    /// nearest in time to the playback frames selected; with `--time`, those whose stamps lie in it.
    func selectedFrames(of times: [Double], playback: [Double]) -> [Int] {
        var picked: [Int]
        if selection.frames == nil, selection.every <= 1 {
            picked = Array(times.indices)
        } else {
            let lo = max(0, selection.frames?.lowerBound ?? 0), hi = min(playback.count - 1, selection.frames?.upperBound ?? Int.max)
            var set = Set<Int>()
            if lo <= hi {
                for i in stride(from: lo, through: hi, by: max(1, selection.every)) {
                    if let j = nearestIndex(in: times, to: playback[i]) { set.insert(j) }
                }
            }
            picked = set.sorted()
        }
        if let t = selection.time { picked = picked.filter { t.contains(times[$0]) } }
        return picked
    }
}

/// The incremental side of an MCAP export (`MCAPExporter`, `record --mcap`): the schemas and
/// channels of the streams it is given, then each image as it comes (with its stream's
/// camera_info; the depth→color transform on `/tf_static` before the first image when both streams
/// are written), into a temporary file beside `path` that `finish` renames onto `path` and `abort`
/// (or an error, or deinit without `finish`) removes.
public final class MCAPFrameWriter {
    public let path: String
    public let calibration: RGBDCalibration
    public let depthMillimeters: Bool
    public let colorJPEG: Bool
    public let jpegQuality: Int
    public private(set) var colorFrames = 0
    public private(set) var depthFrames = 0
    public var messages: UInt64 { writer.messagesWritten }
    private let temp: String
    private let file: OutputFile
    private let writer: MCAPWriter
    private var colorChannel: UInt16?, colorInfoChannel: UInt16 = 0, depthChannel: UInt16?, depthInfoChannel: UInt16 = 0
    private let tfChannel: UInt16?
    private var wroteTF = false
    private var done = false

    public init(path: String, calibration: RGBDCalibration, color: Bool, depth: Bool, depthMillimeters: Bool,
                colorJPEG: Bool = false, jpegQuality: Int = 95, options: MCAPWriter.Options = MCAPWriter.Options()) throws {
        self.path = path
        self.calibration = calibration
        self.depthMillimeters = depthMillimeters
        self.colorJPEG = colorJPEG
        self.jpegQuality = jpegQuality
        let slash = path.lastIndex(of: "/")
        let dir = slash.map { String(path[..<$0]) } ?? "."
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        guard FileSupport.isDirectory(dir.isEmpty ? "/" : dir) else { throw CaptureError.file(path: path, problem: "no such folder \(dir)") }
        temp = (slash == nil ? "" : dir + "/") + ".\(name).tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let file = try OutputFile(temp, reportingAs: path)
        self.file = file
        do {
            writer = try MCAPWriter(profile: "ros2", library: "depthlens", options: options) { try file.write($0) }
            let imageSchema = try writer.addSchema(name: "sensor_msgs/msg/Image", encoding: "ros2msg", data: ROS2MessageDefinitions.image)
            let infoSchema = try writer.addSchema(name: "sensor_msgs/msg/CameraInfo", encoding: "ros2msg", data: ROS2MessageDefinitions.cameraInfo)
            let qos = [("offered_qos_profiles", ROS2MessageDefinitions.qos(transientLocal: false))]
            let ns = MCAPExporter.namespace
            if color && depth {
                let tfSchema = try writer.addSchema(name: "tf2_msgs/msg/TFMessage", encoding: "ros2msg", data: ROS2MessageDefinitions.tfMessage)
                tfChannel = try writer.addChannel(schemaID: tfSchema, topic: "/tf_static", messageEncoding: "cdr",
                                                  metadata: [("offered_qos_profiles", ROS2MessageDefinitions.qos(transientLocal: true))])
            } else {
                tfChannel = nil
            }
            if depth {
                depthChannel = try writer.addChannel(schemaID: imageSchema, topic: "\(ns)/depth/image_rect_raw", messageEncoding: "cdr", metadata: qos)
                depthInfoChannel = try writer.addChannel(schemaID: infoSchema, topic: "\(ns)/depth/camera_info", messageEncoding: "cdr", metadata: qos)
            }
            if color {
                let schema = colorJPEG
                    ? try writer.addSchema(name: "sensor_msgs/msg/CompressedImage", encoding: "ros2msg", data: ROS2MessageDefinitions.compressedImage)
                    : imageSchema
                colorChannel = try writer.addChannel(schemaID: schema, topic: "\(ns)/color/image_raw" + (colorJPEG ? "/compressed" : ""),
                                                     messageEncoding: "cdr", metadata: qos)
                colorInfoChannel = try writer.addChannel(schemaID: infoSchema, topic: "\(ns)/color/camera_info", messageEncoding: "cdr", metadata: qos)
            }
        } catch {
            file.close()
            unlink(temp)
            throw error
        }
    }

    deinit { abort() }

    private func time(_ seconds: Double) -> (ROS2Message.Time, UInt64) {
        let t = ROS2Message.Time(seconds: seconds)
        return (t, UInt64(max(0, t.nanoseconds)))
    }

    private func transformOnce(_ stamp: ROS2Message.Time, _ ns: UInt64) throws {
        guard !wroteTF, let tfChannel else { return }
        let tf = ROS2FrameEncoding.depthToColor(calibration, stamp: stamp, colorFrame: MCAPExporter.colorFrame, depthFrame: MCAPExporter.depthFrame)
        try writer.addMessage(channel: tfChannel, logTime: ns, publishTime: ns, data: ROS2Message.encodeTFMessage([tf]))
        wroteTF = true
    }

    private static func camera(_ cam: CameraModel, _ w: Int, _ h: Int) -> CameraModel {
        cam.intrinsics.width == w && cam.intrinsics.height == h ? cam : cam.scaled(toWidth: w, height: h)
    }

    /// A color image (rgba8 → rgb8, gray → mono8/mono16, or JPEG) and its camera_info, at `stamp` seconds.
    public func addColor(_ b: PixelBuffer, stamp seconds: Double) throws {
        guard let colorChannel else { return }
        let (stamp, ns) = time(seconds)
        try transformOnce(stamp, ns)
        let header = ROS2Message.Header(stamp: stamp, frameID: MCAPExporter.colorFrame)
        let data = colorJPEG ? try jpeg(b, header: header) : ROS2FrameEncoding.colorImage(b, header: header, keepGray16: true)
        try writer.addMessage(channel: colorChannel, logTime: ns, publishTime: ns, data: data)
        let info = ROS2FrameEncoding.cameraInfo(Self.camera(calibration.color, b.width, b.height), header: header)
        try writer.addMessage(channel: colorInfoChannel, logTime: ns, publishTime: ns, data: ROS2Message.encodeCameraInfo(info))
        colorFrames += 1
    }

    /// A depth map in meters and its camera_info, at `stamp` seconds.
    public func addDepth(_ d: PixelBuffer, stamp seconds: Double) throws {
        guard let depthChannel else { return }
        let (stamp, ns) = time(seconds)
        try transformOnce(stamp, ns)
        let header = ROS2Message.Header(stamp: stamp, frameID: MCAPExporter.depthFrame)
        try writer.addMessage(channel: depthChannel, logTime: ns, publishTime: ns,
                              data: ROS2FrameEncoding.depthImage(d, header: header, millimeters: depthMillimeters))
        let info = ROS2FrameEncoding.cameraInfo(Self.camera(calibration.depth, d.width, d.height), header: header)
        try writer.addMessage(channel: depthInfoChannel, logTime: ns, publishTime: ns, data: ROS2Message.encodeCameraInfo(info))
        depthFrames += 1
    }

    /// Writes the summary and footer and renames the file onto `path`.
    public func finish() throws {
        guard !done else { return }
        do {
            try writer.finish()
            try file.flush()
            file.close()
            guard rename(temp, path) == 0 else {
                throw CaptureError.file(path: path, problem: "cannot write: \(String(cString: strerror(errno)))")
            }
            done = true
        } catch {
            abort()
            throw error
        }
    }

    /// Removes the temporary file (nothing is left at `path`).
    public func abort() {
        guard !done else { return }
        done = true
        file.close()
        unlink(temp)
    }

    /// A CompressedImage of `b` as JPEG (image_transport's `compressed` format string).
    private func jpeg(_ b: PixelBuffer, header: ROS2Message.Header) throws -> [UInt8] {
        let px: PixelBuffer
        let channels: UInt32
        switch b.format {
        case .rgba8: (px, channels) = (b, 4)
        case .gray8: (px, channels) = (b, 1)
        case .gray16, .rgb8, .bgra8, .depthFloat16, .depthFloat32, .disparityFloat16, .disparityFloat32:
            (px, channels) = (ImageIO.toRGBA8(ImageIO.toEightBit(b)), 4)
        }
        var out: UnsafeMutablePointer<UInt8>?
        var size = 0
        var err = [CChar](repeating: 0, count: 256)
        let code = dl_jpeg_encode(px.baseAddress.assumingMemoryBound(to: UInt8.self), UInt32(px.width), UInt32(px.height), channels,
                                  px.bytesPerRow, Int32(jpegQuality), &out, &size, &err, err.count)
        guard code == 0, let out else {
            throw CaptureError.file(path: path, problem: "JPEG: " + String(decoding: err.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        defer { dl_jpeg_free(out) }
        let format = channels == 1 ? "mono8; jpeg compressed mono8" : "rgb8; jpeg compressed bgr8"
        return ROS2Message.encodeCompressedImage(header: header, format: format, data: Array(UnsafeBufferPointer(start: out, count: size)))
    }
}

/// A file written through a buffer (POSIX write, EINTR retried); errors name `reportingAs`.
final class OutputFile {
    private var fd: Int32
    private let name: String
    private var buffer: [UInt8] = []
    private static let bufferSize = 1 << 20

    init(_ path: String, reportingAs name: String) throws {
        self.name = name
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o666)
        guard fd >= 0 else { throw CaptureError.file(path: name, problem: "cannot write: \(String(cString: strerror(errno)))") }
        buffer.reserveCapacity(Self.bufferSize)
    }

    func write(_ bytes: [UInt8]) throws {
        if buffer.count + bytes.count > Self.bufferSize { try flush() }
        if bytes.count >= Self.bufferSize { try writeAll(bytes) } else { buffer.append(contentsOf: bytes) }
    }

    func flush() throws {
        try writeAll(buffer)
        buffer.removeAll(keepingCapacity: true)
    }

    private func writeAll(_ bytes: [UInt8]) throws {
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + done, bytes.count - done) }
            if n < 0 {
                if errno == EINTR { continue }
                throw CaptureError.file(path: name, problem: "cannot write: \(String(cString: strerror(errno)))")
            }
            done += n
        }
    }

    func close() {
        if fd >= 0 { Glibc.close(fd); fd = -1 }
    }
}
