import Foundation

/// The JSON file beside a viewer snapshot (NAME.json next to NAME_filtered.png, NAME_color.png and
/// NAME_depth.png): the depth image's intrinsics, its scale (units per meter of the 16-bit PNG), the
/// view mode, time, frame number, source, and the names of the files written with it. Written by
/// the viewer's `Snapshot.write`, read back by `depthlens process --snapshot` and `depthlens info`.
public struct SnapshotMetadata: Codable, Equatable, Sendable {
    public struct Intrinsics: Codable, Equatable, Sendable {
        public var fx, fy, cx, cy: Float
        public var width, height: Int
        public init(fx: Float, fy: Float, cx: Float, cy: Float, width: Int, height: Int) {
            self.fx = fx; self.fy = fy; self.cx = cx; self.cy = cy; self.width = width; self.height = height
        }
    }
    public var intrinsics: Intrinsics
    public var depth_units: String
    public var depth_scale: Float
    public var mode: String
    public var timestamp: Double
    public var frame: Int
    public var source: String
    public var files: [String]

    public init(intrinsics: CameraIntrinsics, depthScale: Float = 1000, mode: String, timestamp: Double,
                frame: Int, source: String, files: [String]) {
        self.intrinsics = Intrinsics(fx: intrinsics.fx, fy: intrinsics.fy, cx: intrinsics.cx, cy: intrinsics.cy,
                                     width: intrinsics.width, height: intrinsics.height)
        self.depth_units = "mm"
        self.depth_scale = depthScale
        self.mode = mode
        self.timestamp = timestamp
        self.frame = frame
        self.source = source
        self.files = files
    }

    public var cameraIntrinsics: CameraIntrinsics {
        CameraIntrinsics(fx: intrinsics.fx, fy: intrinsics.fy, cx: intrinsics.cx, cy: intrinsics.cy,
                         width: intrinsics.width, height: intrinsics.height)
    }

    /// The listed file whose name ends in `suffix` ("_color.png", "_depth.png", "_filtered.png").
    public func file(endingIn suffix: String) -> String? { files.first { $0.hasSuffix(suffix) } }
    public var colorFile: String? { file(endingIn: "_color.png") }
    public var depthFile: String? { file(endingIn: "_depth.png") }
    public var filteredFile: String? { file(endingIn: "_filtered.png") }

    /// Pretty-printed JSON with sorted keys (the format `Snapshot.write` has always written).
    public func encoded() throws -> [UInt8] {
        let enc = JSONEncoder()
        enc.outputFormatting = [.prettyPrinted, .sortedKeys]
        return Array(try enc.encode(self))
    }

    /// Reads and checks the JSON file at `path`.
    public static func read(_ path: String) throws -> SnapshotMetadata {
        try decode(try FileSupport.readAll(path), name: path)
    }

    /// Parses and checks snapshot JSON; errors are `.file(name, one line)`.
    public static func decode(_ bytes: [UInt8], name: String) throws -> SnapshotMetadata {
        let meta: SnapshotMetadata
        do {
            meta = try JSONDecoder().decode(SnapshotMetadata.self, from: Data(bytes))
        } catch let error as DecodingError {
            throw DepthKitError.file(path: name, problem: "not snapshot JSON: " + describe(error))
        } catch {
            throw DepthKitError.file(path: name, problem: "not snapshot JSON")
        }
        try meta.check(name: name)
        return meta
    }

    /// The checks `decode` applies: usable intrinsics and scale, file names without folders.
    public func check(name: String) throws {
        func bad(_ problem: String) -> DepthKitError { .file(path: name, problem: problem) }
        let k = intrinsics
        guard k.fx.isFinite, k.fx > 0, k.fy.isFinite, k.fy > 0 else {
            throw bad("intrinsics fx and fy must be positive numbers, got \(k.fx), \(k.fy)")
        }
        guard k.cx.isFinite, k.cy.isFinite else { throw bad("intrinsics cx and cy must be finite, got \(k.cx), \(k.cy)") }
        guard k.width >= 1, k.height >= 1, k.width <= Self.maxSide, k.height <= Self.maxSide else {
            throw bad("intrinsics width and height must be 1…\(Self.maxSide), got \(k.width)x\(k.height)")
        }
        guard depth_scale.isFinite, depth_scale > 0 else {
            throw bad("depth_scale must be a positive number of units per meter, got \(depth_scale)")
        }
        guard timestamp.isFinite else { throw bad("timestamp must be a finite number") }
        guard !files.isEmpty else { throw bad("'files' lists no files") }
        for f in files {
            guard !f.isEmpty, f != ".", f != "..", !f.contains("/"), !f.contains("\0") else {
                throw bad("'files' must hold plain file names in the snapshot's folder, got '\(f)'")
            }
        }
    }

    /// Larger than any camera; keeps width × height far from overflow.
    public static let maxSide = 1 << 16

    /// The path of `file` next to the JSON file at `jsonPath`.
    public static func sibling(_ file: String, of jsonPath: String) -> String {
        ((jsonPath as NSString).deletingLastPathComponent as NSString).appendingPathComponent(file)
    }

    /// The path of a listed `file` next to the JSON file at `jsonPath`, to read: `check` already
    /// refuses names with a folder or `..`, and here a file that is a link leading out of the
    /// snapshot's folder is refused too (`ConfinedFolder`), in one error naming the JSON file.
    public static func readablePath(_ file: String, of jsonPath: String) throws -> String {
        let dir = (jsonPath as NSString).deletingLastPathComponent
        return try ConfinedFolder(dir.isEmpty ? "." : dir).resolve(file, namedIn: jsonPath, entry: "'files'")
    }

    private static func describe(_ error: DecodingError) -> String {
        func key(_ path: [CodingKey]) -> String {
            path.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
        }
        switch error {
        case .keyNotFound(let k, let ctx):
            return "missing key '\(key(ctx.codingPath + [k]))'"
        case .valueNotFound(_, let ctx):
            return "'\(key(ctx.codingPath))' is null"
        case .typeMismatch(let type, let ctx):
            return "'\(key(ctx.codingPath))' is not \(type == String.self ? "a string" : type == [String].self ? "a list" : "a number of the right kind")"
        case .dataCorrupted(let ctx):
            // Foundation reports a number too large for its field (1e400 as Float, 6.5 as Int) as bad JSON.
            return ctx.codingPath.isEmpty ? "not valid JSON, or a number that does not fit its field"
                : "bad value for '\(key(ctx.codingPath))'"
        @unknown default:
            return "not valid JSON"
        }
    }
}
