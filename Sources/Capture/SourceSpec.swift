import DepthKit
import Foundation

/// A width × height in pixels (`synthetic:1280x720,640x480`).
public struct PixelSize: Equatable, Hashable, Sendable, CustomStringConvertible {
    public var width: Int
    public var height: Int
    public init(_ width: Int, _ height: Int) { self.width = width; self.height = height }
    public var description: String { "\(width)x\(height)" }

    /// "WxH" with both in 1…8192, else nil.
    public static func parse<S: StringProtocol>(_ text: S) -> PixelSize? {
        let n = text.lowercased().split(separator: "x", omittingEmptySubsequences: false).map { Int($0) }
        guard n.count == 2, let w = n[0], let h = n[1], (1...8192).contains(w), (1...8192).contains(h) else { return nil }
        return PixelSize(w, h)
    }
}

/// A parsed `--source` string. Every command that reads frames (view, record, process, export-ply,
/// render3d, convert, info) parses its `--source` here and nowhere else; the usage text, `--help`
/// and the source tables of README.md and docs/SOURCES.md come from `SourceSpec.kinds`.
///
/// Adding a kind: a case here, its row in `kinds` and its parse branch, and its source in its own
/// file; the switches below are exhaustive, so the compiler lists every place that must change.
public enum SourceSpec: Equatable, Sendable, CustomStringConvertible {
    /// The built-in animated scene; color and depth at their own sizes (default 640×480 both).
    case synthetic(color: PixelSize, depth: PixelSize)
    /// A data-set folder: TUM RGB-D (rgb.txt, depth.txt) or color/ + depth/ subfolders paired by name.
    case tum(directory: String)
    /// One color + depth pair of files.
    case pair(color: String, depth: String)
    /// A V4L2 camera, with an optional second node for depth.
    case v4l2(color: String, depth: String?)
    /// A viewer snapshot's NAME.json: its color and depth files with its scale and intrinsics.
    case snapshot(json: String)
    /// A PLY point list: a layer of the 3D scene, not a stream of frames.
    case ply(path: String)
    /// A folder of PLY files (`ply:DIR`, or those matching a glob, `ply:DIR/*.ply`) played as frames.
    case plySequence(directory: String, pattern: String?)
    /// A ROS1 bag: RealSense Viewer recordings (and bags with the same message types).
    case bag(path: String)
    /// A Matroska recording: the Azure Kinect recorder's, or depthlens' own `record --mkv`.
    case mkv(path: String)
    /// A phone's depth photo: HEIC/HEIF or JPEG (iPhone portrait, GDepth, Dynamic Depth), found from its bytes.
    case photo(path: String)
    /// ROS 2 image topics over DDS (Cyclone DDS), or a realsense2_camera namespace.
    case dds(DDSTopics)
    /// A ROS 2 recording (rosbag2 folder, `.db3` or `.mcap`), with optional depth and color topics.
    case ros2(path: String, depth: String?, color: String?)
    /// A phone LiDAR scan folder (Stray Scanner, Polycam, ARKitScenes, 3D Scanner App), with the
    /// lowest depth confidence kept (0, 1, 2; default 1).
    case scan(directory: String, minConfidence: Int)

    public static let defaultSyntheticSize = PixelSize(640, 480)
    public static let synthetic = SourceSpec.synthetic(color: defaultSyntheticSize, depth: defaultSyntheticSize)

    /// One row of the source table.
    public struct Kind: Sendable {
        /// The prefix before the colon ("tum"), or the whole word ("synthetic").
        public let name: String
        /// The forms it takes, as typed.
        public let syntax: String
        /// What it is, one line.
        public let summary: String
        /// False for kinds that give a point list rather than frames (`ply:`).
        public let hasFrames: Bool
    }

    /// Every kind, in the order the help lists them.
    public static let kinds: [Kind] = [
        Kind(name: "synthetic", syntax: "synthetic[:WxH[,WxH]]",
             summary: "the built-in animated RGB-D scene; color and depth sizes (default 640x480 both)", hasFrames: true),
        Kind(name: "tum", syntax: "tum:DIR",
             summary: "a data-set folder: TUM RGB-D (rgb.txt, depth.txt) or color/ and depth/ subfolders paired by name",
             hasFrames: true),
        Kind(name: "pair", syntax: "pair:COLOR,DEPTH", summary: "one color image and one depth image", hasFrames: true),
        Kind(name: "v4l2", syntax: "v4l2:/dev/videoN[,depth=/dev/videoM]",
             summary: "a V4L2 camera, with a second node for depth", hasFrames: true),
        Kind(name: "snapshot", syntax: "snapshot:NAME.json",
             summary: "a viewer snapshot: its color and depth PNGs with its depth scale and intrinsics", hasFrames: true),
        Kind(name: "ply", syntax: "ply:FILE, ply:DIR[/GLOB]",
             summary: "a PLY point list, shown in the 3D view; a folder of PLY files (or those matching GLOB, e.g. *.ply) plays as frames, in name order with numbers compared as numbers",
             hasFrames: false),
        Kind(name: "bag", syntax: "bag:FILE",
             summary: "a ROS bag: RealSense Viewer recordings (depth, color, IR, calibration; lz4/bz2 chunks)", hasFrames: true),
        Kind(name: "mkv", syntax: "mkv:FILE",
             summary: "a Matroska recording: Azure Kinect (COLOR, DEPTH, IR tracks, calibration.json) or depthlens' own",
             hasFrames: true),
        Kind(name: "photo", syntax: "photo:FILE",
             summary: "a phone's depth photo: iPhone HEIC/JPEG portrait (depth + mattes), Google GDepth or Android Dynamic Depth JPEG",
             hasFrames: true),
        Kind(name: "dds", syntax: "dds:TOPIC[,depth=TOPIC][,domain=N][,max-image=WxH], dds:/NAMESPACE[,domain=N][,max-image=WxH]",
             summary: "live ROS 2 image topics over DDS (no ROS install), or a realsense2_camera namespace (color, depth, camera_info, /tf_static)",
             hasFrames: true),
        Kind(name: "ros2", syntax: "ros2:PATH[,depth=TOPIC][,color=TOPIC]",
             summary: "a ROS 2 recording (rosbag2 folder, .db3 or .mcap): RealSense Viewer recordings, realsense2_camera and any bag with depth and color image topics (picked automatically, or named)",
             hasFrames: true),
        Kind(name: "scan", syntax: "scan:DIR[,min-confidence=0|1|2]",
             summary: "a phone LiDAR scan folder with poses: Stray Scanner, Polycam raw data, ARKitScenes, 3D Scanner App (depth below the confidence, default 1, dropped)",
             hasFrames: true),
    ]

    /// "synthetic[:WxH[,WxH]] | tum:DIR | …": the one-line usage every command's help shows.
    public static var usage: String { kinds.map(\.syntax).joined(separator: " | ") }

    /// The `--source` help of every command.
    public static var help: String { "Where frames come from: \(usage)." }

    /// The table of sources (Markdown): README.md and docs/SOURCES.md hold exactly this text (a test).
    public static var markdownTable: String {
        "| `--source` | what it opens |\n| --- | --- |\n"
            + kinds.map { "| `\($0.syntax)` | \($0.summary) |" }.joined(separator: "\n") + "\n"
    }

    /// The row of this spec's kind.
    public var kind: Kind {
        let name: String
        switch self {
        case .synthetic: name = "synthetic"
        case .tum: name = "tum"
        case .pair: name = "pair"
        case .v4l2: name = "v4l2"
        case .snapshot: name = "snapshot"
        case .ply, .plySequence: name = "ply"
        case .bag: name = "bag"
        case .mkv: name = "mkv"
        case .photo: name = "photo"
        case .dds: name = "dds"
        case .ros2: name = "ros2"
        case .scan: name = "scan"
        }
        return Self.kinds.first { $0.name == name }!
    }

    /// Parses a `--source` value. Throws `CaptureError.invalidSource` with a one-line reason.
    public init(parsing text: String) throws {
        let s = text.trimmingSpaces()
        func bad(_ why: String) -> CaptureError { .invalidSource("--source '\(text)': \(why)") }
        let usage = "expected \(Self.usage)"
        if s == "synthetic" { self = .synthetic; return }
        guard let colon = s.firstIndex(of: ":") else {
            throw bad(s.isEmpty ? "empty (\(usage))" : "unknown source '\(s)' (\(usage))")
        }
        let kind = String(s[..<colon]), rest = String(s[s.index(after: colon)...])
        func path(_ what: String) throws -> String {
            guard !rest.isEmpty else { throw bad("missing \(what) after '\(kind):'") }
            return rest
        }
        switch kind {
        case "synthetic":
            let sizes = rest.split(separator: ",", omittingEmptySubsequences: false).map { PixelSize.parse($0) }
            guard (1...2).contains(sizes.count), let c = sizes[0], let d = sizes.count == 2 ? sizes[1] : c else {
                throw bad("expected synthetic:COLORWxH[,DEPTHWxH] with sizes 1…8192, e.g. synthetic:1280x720,640x480")
            }
            self = .synthetic(color: c, depth: d)
        case "tum": self = .tum(directory: try path("directory"))
        case "snapshot": self = .snapshot(json: try path("NAME.json"))
        case "ply": self = Self.ply(try path("file"))
        case "bag": self = .bag(path: try path("file"))
        case "mkv": self = .mkv(path: try path("file"))
        case "photo": self = .photo(path: try path("file"))
        case "dds":
            do { self = .dds(try DDSTopics.parse(rest)) } catch let CaptureError.invalidSource(why) { throw bad(why) }
        case "ros2": self = try Self.ros2(try path("recording"), bad)
        case "scan":
            // The folder, then options after the last commas that look like options.
            var parts = rest.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            var confidence = 1
            while parts.count > 1, let option = parts.last, option.contains("=") {
                guard option.hasPrefix("min-confidence="), let c = Int(option.dropFirst("min-confidence=".count)), (0...2).contains(c) else {
                    throw bad("unknown option '\(option)' (expected min-confidence=0, 1 or 2)")
                }
                confidence = c
                parts.removeLast()
            }
            let dir = parts.joined(separator: ",")
            guard !dir.isEmpty else { throw bad("missing directory after 'scan:'") }
            self = .scan(directory: dir, minConfidence: confidence)
        case "pair":
            let parts = rest.split(separator: ",", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
                throw bad("expected pair:COLOR,DEPTH (two files separated by a comma)")
            }
            self = .pair(color: parts[0], depth: parts[1])
        case "v4l2":
            let parts = rest.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            guard let device = parts.first, !device.isEmpty else { throw bad("missing device after 'v4l2:' (e.g. v4l2:/dev/video0)") }
            guard device.hasPrefix("/dev/") else { throw bad("device '\(device)' is not a path under /dev/") }
            var depth: String?
            for option in parts.dropFirst() {
                guard option.hasPrefix("depth=") else {
                    throw bad("unknown option '\(option)' (expected depth=/dev/videoM)")
                }
                guard depth == nil else { throw bad("depth= given twice") }
                let d = String(option.dropFirst("depth=".count))
                guard d.hasPrefix("/dev/") else { throw bad("depth device '\(d)' is not a path under /dev/") }
                guard d != device else { throw bad("color and depth are the same device \(d)") }
                depth = d
            }
            self = .v4l2(color: device, depth: depth)
        default:
            throw bad("unknown source kind '\(kind)' (\(usage))")
        }
    }

    /// `ros2:PATH[,depth=TOPIC][,color=TOPIC]`: the options are the trailing comma-separated parts
    /// that start with `depth=` or `color=` (topics start with `/`), so a path may hold commas.
    private static func ros2(_ rest: String, _ bad: (String) -> CaptureError) throws -> SourceSpec {
        var parts = rest.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        var depth: String?, color: String?
        while parts.count > 1, let last = parts.last, last.hasPrefix("depth=") || last.hasPrefix("color=") {
            parts.removeLast()
            let isDepth = last.hasPrefix("depth="), topic = String(last.dropFirst(6))
            guard topic.hasPrefix("/") else { throw bad("topic '\(topic)' does not start with / (e.g. ros2:rec.db3,depth=/camera/depth/image_raw)") }
            if isDepth {
                guard depth == nil else { throw bad("depth= given twice") }
                depth = topic
            } else {
                guard color == nil else { throw bad("color= given twice") }
                color = topic
            }
        }
        let path = parts.joined(separator: ",")
        guard !path.isEmpty else { throw bad("missing recording after 'ros2:'") }
        if let d = depth, d == color { throw bad("depth and color are the same topic \(d)") }
        return .ros2(path: path, depth: depth, color: color)
    }

    /// `ply:` with a glob in its last path component (`*`, `?`, `[`) is a sequence of the matching
    /// files; a path that is a folder (or ends in `/`) is a sequence of its `.ply` files; else one file.
    private static func ply(_ rest: String) -> SourceSpec {
        let slash = rest.lastIndex(of: "/")
        let last = slash.map { rest[rest.index(after: $0)...] } ?? Substring(rest)
        if last.contains(where: { "*?[".contains($0) }) {
            let dir = slash.map { String(rest[..<$0]) } ?? "."
            return .plySequence(directory: dir.isEmpty ? "/" : dir, pattern: String(last))
        }
        var isDir: ObjCBool = false
        if rest.hasSuffix("/") || (FileManager.default.fileExists(atPath: rest, isDirectory: &isDir) && isDir.boolValue) {
            return .plySequence(directory: rest, pattern: nil)
        }
        return .ply(path: rest)
    }

    public var description: String {
        switch self {
        case let .synthetic(c, d):
            if c == Self.defaultSyntheticSize && d == c { return "synthetic" }
            return d == c ? "synthetic:\(c)" : "synthetic:\(c),\(d)"
        case let .tum(d): return "tum:\(d)"
        case let .pair(c, d): return "pair:\(c),\(d)"
        case let .v4l2(c, d): return "v4l2:\(c)" + (d.map { ",depth=\($0)" } ?? "")
        case let .snapshot(j): return "snapshot:\(j)"
        case let .ply(p): return "ply:\(p)"
        case let .plySequence(d, pattern): return "ply:" + (pattern.map { d == "." ? $0 : (d.hasSuffix("/") ? d : d + "/") + $0 } ?? d)
        case let .bag(p): return "bag:\(p)"
        case let .mkv(p): return "mkv:\(p)"
        case let .photo(p): return "photo:\(p)"
        case let .dds(t): return t.description
        case let .ros2(p, d, c): return "ros2:\(p)" + (d.map { ",depth=\($0)" } ?? "") + (c.map { ",color=\($0)" } ?? "")
        case let .scan(d, c): return "scan:\(d)" + (c == 1 ? "" : ",min-confidence=\(c)")
        }
    }

    /// The file or folder this spec reads, for one-line errors (nil for the scene and cameras).
    public var path: String? {
        switch self {
        case .synthetic, .v4l2, .dds: return nil
        case let .tum(d): return d
        case let .pair(c, _): return c
        case let .snapshot(j): return j
        case let .ply(p), let .bag(p), let .mkv(p), let .photo(p), let .ros2(p, _, _): return p
        case let .plySequence(d, _): return d
        case let .scan(d, _): return d
        }
    }

    /// The source this spec names (not started). `depthScale` (`--depth-scale`, units per meter)
    /// defaults per source: TUM 5000, pair and V4L2 1000; a snapshot brings its own. A `ply:` spec
    /// has no frames: the 3D view loads it as a layer (`PLYReader`), so this throws for it.
    /// `cameraControls` (`--ctrl`, `--no-restore`) go to a camera's controls; with `reconnect` a
    /// camera that is unplugged is waited for and resumed (`ReconnectingSource`, told of nodes
    /// coming and going by `events`, else checking on a timer) rather than an error per frame.
    public func makeSource(depthScale: Float? = nil, system: V4L2System? = nil, cameraControls: V4L2ControlOptions? = nil,
                           reconnect: Bool = false, events: DeviceEvents? = nil) throws -> FrameSource {
        if let s = depthScale, !(s > 0 && s.isFinite) {
            throw CaptureError.invalidSource("--depth-scale must be a positive number, got \(s)")
        }
        switch self {
        case let .synthetic(c, d):
            if c == d { return SyntheticSource(width: c.width, height: c.height) }
            return SizedSyntheticSource(colorSize: c, depthSize: d)
        case let .tum(d): return TUMSource(directory: d, depthScale: depthScale)
        case let .pair(c, d): return PairSource(color: c, depth: d, depthScale: depthScale)
        case let .v4l2(c, d):
            let camera = V4L2Source(colorPath: c, depthPath: d, system: system ?? LinuxV4L2System(),
                                    depthScale: depthScale ?? DepthIO.defaultDepthScale)
            if let cameraControls { camera.controls.options = cameraControls }
            return reconnect ? ReconnectingSource(camera, events: events) : camera
        case let .snapshot(j):
            if depthScale != nil {
                throw CaptureError.invalidSource("--source '\(self)': a snapshot brings its own depth scale; drop --depth-scale")
            }
            return SnapshotSource(json: j)
        case let .bag(p):
            if depthScale != nil {
                throw CaptureError.invalidSource("--source '\(self)': a bag records its depth units; drop --depth-scale")
            }
            return BagSource(path: p)
        case let .mkv(p):
            if depthScale != nil {
                throw CaptureError.invalidSource("--source '\(self)': an mkv records its depth units; drop --depth-scale")
            }
            return MKVSource(path: p)
        case let .photo(p):
            if depthScale != nil {
                throw CaptureError.invalidSource("--source '\(self)': a photo brings its own depth range; drop --depth-scale")
            }
            return PhotoSource(path: p)
        case let .dds(t):
            if depthScale != nil {
                throw CaptureError.invalidSource("--source '\(self)': ROS depth images carry their units (16UC1 mm, 32FC1 m); drop --depth-scale")
            }
            // With `reconnect` (the viewer) it opens at once and shows frames when they come.
            return DDSSource(topics: t, startTimeout: reconnect ? 0 : 5)
        case let .ros2(p, d, c):
            if depthScale != nil {
                throw CaptureError.invalidSource("--source '\(self)': a ROS 2 recording brings its depth units (16-bit depth without them is millimeters); drop --depth-scale")
            }
            return ROS2Source(path: p, depthTopic: d, colorTopic: c)
        case let .scan(d, c):
            if depthScale != nil {
                throw CaptureError.invalidSource("--source '\(self)': a scan's depth is millimeters; drop --depth-scale")
            }
            return ScanSource(directory: d, minConfidence: c)
        case .plySequence:
            throw CaptureError.invalidSource("--source '\(self)': a PLY sequence has no color or depth frames (open it with view)")
        case let .ply(p):
            throw CaptureError.invalidSource("--source 'ply:\(p)': a PLY point list has no color or depth frames (open it with view or render3d)")
        }
    }
}

private extension String {
    func trimmingSpaces() -> String {
        var s = Substring(self)
        while s.first == " " { s.removeFirst() }
        while s.last == " " { s.removeLast() }
        return String(s)
    }
}
