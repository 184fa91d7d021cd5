import Foundation

/// A data-set folder: a TUM RGB-D sequence — `rgb.txt` and `depth.txt` (lines `timestamp path`,
/// `#` comments), optionally `associations.txt` (`t_rgb rgb_path t_depth depth_path`), 16-bit depth
/// PNGs at 5000 units per meter — or a folder with `color/` and `depth/` subfolders whose files pair
/// by name without extension (sorted by name, 1000 units per meter, frame i at i/30 s).
///
/// With `associations.txt` its pairs are used as they are. Without it each color frame is paired
/// with the depth frame of the nearest timestamp if that is within `maxTimeDifference` (0.02 s);
/// color frames with no such depth are dropped. A depth frame may serve more than one color
/// frame: nearest is enough for viewing, and TUM's own `associate.py` is there for stricter pairing.
///
/// The lists name files inside the folder only (`ConfinedFolder`): an absolute path, a `..`
/// component, or a file that is a link leading out of the folder is one error naming the list file,
/// the line and the path, when the folder is opened.
public final class TUMSequence: Sendable {
    public struct Entry: Hashable, Sendable {
        /// The color frame's timestamp, in seconds.
        public var timestamp: Double
        public var depthTimestamp: Double
        /// Absolute paths, inside the folder (`ConfinedFolder`).
        public var colorPath: String
        public var depthPath: String
        /// The pair's file name without extension (color/ + depth/ folders); nil for TUM entries.
        public var name: String? = nil
    }

    public enum Layout: Sendable { case tum, pairs }
    /// Units per meter of a color/ + depth/ folder's 16-bit depth when none is given.
    public static let pairsDepthScale: Float = 1000
    /// Seconds between frames of a color/ + depth/ folder (it has no timestamps).
    public static let pairsFrameInterval: Double = 1.0 / 30

    public static let depthScale: Float = 5000
    public static let maxTimeDifference: Double = 0.02

    public let directory: String
    public let depthScale: Float
    public let entries: [Entry]
    public let layout: Layout
    public var count: Int { entries.count }

    /// - Parameter depthScale: units per meter of the 16-bit depth; nil for the layout's default
    ///   (TUM 5000, color/ + depth/ 1000).
    public init(directory: String, depthScale: Float? = nil) throws {
        let dir = TUMSequence.absolute(directory)
        guard FileManager.default.fileExists(atPath: dir) else {
            throw DepthKitError.file(path: directory, problem: "no such directory")
        }
        guard FileSupport.isDirectory(dir) else {
            throw DepthKitError.file(path: directory, problem: "is not a directory (a TUM RGB-D folder holds rgb.txt and depth.txt)")
        }
        self.directory = dir
        let folder = try ConfinedFolder(dir)
        let assocPath = dir + "/associations.txt"
        let fm = FileManager.default
        if !fm.fileExists(atPath: assocPath) && !fm.fileExists(atPath: dir + "/rgb.txt")
            && FileSupport.isDirectory(dir + "/color") && FileSupport.isDirectory(dir + "/depth") {
            self.layout = .pairs
            self.depthScale = try DepthIO.validatedScale(depthScale ?? TUMSequence.pairsDepthScale)
            self.entries = try TUMSequence.pairsByName(in: folder, shownAs: directory)
            return
        }
        self.layout = .tum
        self.depthScale = try DepthIO.validatedScale(depthScale ?? TUMSequence.depthScale)
        var pairs: [Entry]
        if FileManager.default.fileExists(atPath: assocPath) {
            pairs = try TUMSequence.parseList(assocPath, fields: 4, in: folder).map {
                Entry(timestamp: $0.times[0], depthTimestamp: $0.times[1], colorPath: $0.paths[0], depthPath: $0.paths[1])
            }
        } else {
            for name in ["rgb.txt", "depth.txt"] where !FileManager.default.fileExists(atPath: dir + "/" + name) {
                throw DepthKitError.file(path: dir + "/" + name, problem: "no such file (a TUM RGB-D folder needs rgb.txt and depth.txt)")
            }
            let color = try TUMSequence.parseList(dir + "/rgb.txt", fields: 2, in: folder).map { ($0.times[0], $0.paths[0]) }
            let depth = try TUMSequence.parseList(dir + "/depth.txt", fields: 2, in: folder).map { ($0.times[0], $0.paths[0]) }
            pairs = TUMSequence.associate(color: color, depth: depth, maxDifference: TUMSequence.maxTimeDifference)
        }
        guard !pairs.isEmpty else {
            throw DepthKitError.file(path: directory, problem:
                "no color frame has a depth frame within \(TUMSequence.maxTimeDifference) s")
        }
        self.entries = pairs
    }

    /// The files of `color/` and `depth/` that share a name without extension, sorted by name;
    /// a link among them that leads out of the folder is refused (`ConfinedFolder`).
    static func pairsByName(in folder: ConfinedFolder, shownAs directory: String) throws -> [Entry] {
        let dir = folder.path
        let fm = FileManager.default
        let colors = (try? fm.contentsOfDirectory(atPath: dir + "/color")) ?? []
        let depths = (try? fm.contentsOfDirectory(atPath: dir + "/depth")) ?? []
        func stem(_ name: String) -> String { (name as NSString).deletingPathExtension }
        let depthByStem = Dictionary(depths.map { (stem($0), $0) }, uniquingKeysWith: { a, b in min(a, b) })
        let pairs = colors.sorted().compactMap { c -> Entry? in
            guard let d = depthByStem[stem(c)] else { return nil }
            return Entry(timestamp: 0, depthTimestamp: 0, colorPath: dir + "/color/" + c, depthPath: dir + "/depth/" + d,
                         name: stem(c))
        }
        guard !pairs.isEmpty else {
            throw DepthKitError.file(path: directory, problem: "no color/depth pairs with matching names in color/ and depth/")
        }
        for e in pairs {
            try folder.check(e.colorPath)
            try folder.check(e.depthPath)
        }
        return pairs.enumerated().map { i, e in
            var e = e
            e.timestamp = Double(i) * pairsFrameInterval
            e.depthTimestamp = e.timestamp
            return e
        }
    }

    /// Loads frame `index` (color as rgba8, depth in meters).
    public func loadFrame(at index: Int) throws -> RGBDFrame {
        guard entries.indices.contains(index) else {
            throw DepthKitError.invalidArgument("frame \(index) is out of range 0..<\(entries.count) of \(directory)")
        }
        let e = entries[index]
        return try RGBDFrame.loadPair(color: e.colorPath, depth: e.depthPath, depthScale: depthScale, timestamp: e.timestamp)
    }

    /// Pairs each color frame with the nearest depth frame within `maxDifference` seconds, in color order.
    public static func associate(color: [(Double, String)], depth: [(Double, String)], maxDifference: Double) -> [Entry] {
        let sorted = depth.sorted { $0.0 < $1.0 }
        var out: [Entry] = []
        for (t, path) in color {
            var lo = 0, hi = sorted.count
            while lo < hi { let mid = (lo + hi) / 2; if sorted[mid].0 < t { lo = mid + 1 } else { hi = mid } }
            var best: (Double, String)?
            for i in [lo - 1, lo] where sorted.indices.contains(i) {
                if best == nil || abs(sorted[i].0 - t) < abs(best!.0 - t) { best = sorted[i] }
            }
            if let b = best, abs(b.0 - t) <= maxDifference {
                out.append(Entry(timestamp: t, depthTimestamp: b.0, colorPath: path, depthPath: b.1))
            }
        }
        return out
    }

    /// One file of a stream: its timestamp and absolute path.
    public struct StreamFile: Hashable, Sendable {
        public var timestamp: Double
        public var path: String
    }

    /// Every color and every depth frame of the folder, each once with its own timestamp, in
    /// timestamp order: the lines of rgb.txt and depth.txt when the folder has them, else the
    /// distinct files its pairs name (associations.txt, a color/ + depth/ folder).
    public func streamFiles() throws -> (color: [StreamFile], depth: [StreamFile]) {
        func distinct(_ list: [StreamFile]) -> [StreamFile] {
            var seen = Set<String>()
            return list.filter { seen.insert($0.path).inserted }.sorted { $0.timestamp < $1.timestamp }
        }
        func listed(_ name: String) throws -> [StreamFile]? {
            guard layout == .tum, FileManager.default.fileExists(atPath: directory + "/" + name) else { return nil }
            return try TUMSequence.parseList(directory + "/" + name, fields: 2, in: try ConfinedFolder(directory)).map {
                StreamFile(timestamp: $0.times[0], path: $0.paths[0])
            }
        }
        let color = try listed("rgb.txt") ?? entries.map { StreamFile(timestamp: $0.timestamp, path: $0.colorPath) }
        let depth = try listed("depth.txt") ?? entries.map { StreamFile(timestamp: $0.depthTimestamp, path: $0.depthPath) }
        return (distinct(color), distinct(depth))
    }

    struct Line { var times: [Double]; var paths: [String] }

    /// Parses `timestamp path` (fields 2) or `t path t path` (fields 4) lines, skipping `#` comments.
    /// Each path is resolved inside `folder` (`ConfinedFolder.resolve`): an absolute path, a `..` or
    /// a link leading out of the folder is one error naming the list file, the line and the path.
    static func parseList(_ path: String, fields: Int, in folder: ConfinedFolder) throws -> [Line] {
        let bytes = try FileSupport.readAll(path)
        let text = String(decoding: bytes, as: UTF8.self)
        var out: [Line] = []
        for (n, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespacesAndNewlines)
            if line.isEmpty || line.hasPrefix("#") { continue }
            let parts = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            let shape = fields == 2 ? "'timestamp path'" : "'t_rgb rgb_path t_depth depth_path'"
            guard parts.count >= fields else {
                throw DepthKitError.file(path: path, problem: "line \(n + 1): expected \(shape)")
            }
            var times: [Double] = [], paths: [String] = []
            for k in stride(from: 0, to: fields, by: 2) {
                guard let t = Double(parts[k]), t.isFinite else {
                    throw DepthKitError.file(path: path, problem: "line \(n + 1): bad timestamp '\(parts[k])'")
                }
                times.append(t)
                paths.append(try folder.resolve(String(parts[k + 1]), namedIn: path, entry: "line \(n + 1)"))
            }
            out.append(Line(times: times, paths: paths))
        }
        return out
    }

    public static func absolute(_ p: String) -> String {
        var s = p.hasPrefix("/") ? p : FileManager.default.currentDirectoryPath + "/" + p
        while s.count > 1 && s.hasSuffix("/") { s.removeLast() }
        return s
    }
}
