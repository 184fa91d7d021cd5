import Foundation

/// Writes frames as a TUM RGB-D folder: `rgb/T.png` (RGBA), `depth/T.png` (16-bit, `depthScale`
/// units per meter: TUM's 5000 by default, a recording's own units when converting), `rgb.txt`,
/// `depth.txt` and `associations.txt`, readable by `TUMSequence`.
///
/// Depth beyond 65535/scale (13.1 m at 5000) cannot be stored and is written as 0 (invalid). Each
/// PNG is written atomically (no truncated file, even on a full disk) and listed only once it is
/// complete; the index files are rewritten (atomically) every `flushInterval` frames and by
/// `finish()`, so an interrupted recording is still a readable folder up to its last flush. When
/// `finish()` cannot write the index (a full disk), it deletes the newest frames not yet listed
/// until the index fits, or all of them: the folder then lists exactly the PNGs it holds
/// (`listedCount`). A frame whose depth cannot be written leaves no color PNG behind either.
public final class TUMWriter {
    /// The folders and index files a stream is written to.
    public enum Stream: String, Sendable, CaseIterable {
        case color, depth, ir
        /// The folder (and index file's name without `.txt`).
        public var folder: String {
            switch self {
            case .color: return "rgb"
            case .depth: return "depth"
            case .ir: return "ir"
            }
        }
        var heading: String {
            switch self {
            case .color: return "# color images"
            case .depth: return "# depth maps"
            case .ir: return "# infrared images"
            }
        }
    }

    public let directory: String
    public let depthScale: Float
    public var flushInterval = 30
    /// associations.txt pairs each listed depth frame with the listed color frame nearest in time
    /// (the streams were written each on its own clock) instead of the pairs `append` was given.
    public var pairsByNearestTime = false
    /// Units written or listed (a pair counts once).
    public private(set) var count = 0
    private var lines: [Stream: [(time: Double, line: String)]] = [:]
    private var assocLines: [String] = []
    private var usedNames: [Stream: Set<String>] = [:]
    /// Frames listed in the index files on disk (the last flush that succeeded).
    public private(set) var listedCount = 0
    /// The units written since the last flush: their files and which index files list them.
    private var unlisted: [(files: [String], streams: [Stream], paired: Bool)] = []

    /// Creates `directory` (and its `rgb/`, `depth/`) if needed.
    public init(directory: String, depthScale: Float = TUMSequence.depthScale) throws {
        self.directory = directory
        self.depthScale = try DepthIO.validatedScale(depthScale)
        for sub in ["", "/rgb", "/depth"] {
            let p = directory + sub
            do {
                try FileManager.default.createDirectory(atPath: p, withIntermediateDirectories: true)
            } catch {
                throw DepthKitError.file(path: p, problem: "cannot create directory")
            }
        }
    }

    /// Writes one frame; its timestamp names the files (a repeated timestamp gets a suffix).
    public func append(_ frame: RGBDFrame) throws {
        try append(color: frame.color, depth: frame.depth, timestamp: frame.timestamp)
    }

    /// Writes the parts given (either may be left out); a pair is listed in associations.txt.
    /// `depthTimestamp` is the depth frame's own time when it differs from the color's.
    /// Returns the file name stem used.
    @discardableResult
    public func append(color: PixelBuffer?, depth: DepthData?, timestamp: Double, depthTimestamp: Double? = nil) throws -> String {
        let names = reservePair(timestamp: timestamp)
        let colorRel = names.color, depthRel = names.depth
        if let c = color { try Self.writeImage(c, to: directory + "/" + colorRel) }
        if let d = depth {
            do { try Self.writeDepth(d, scale: depthScale, to: directory + "/" + depthRel) } catch {
                if color != nil { unlink(directory + "/" + colorRel) }   // no half frame left behind
                throw error
            }
        }
        var files: [Written] = []
        if color != nil { files.append(Written(stream: .color, timestamp: timestamp, path: colorRel)) }
        if depth != nil { files.append(Written(stream: .depth, timestamp: depthTimestamp ?? timestamp, path: depthRel)) }
        try list(files, paired: color != nil && depth != nil)
        return names.stem
    }

    /// File names for a color/depth pair at `timestamp` (the same stem in rgb/ and depth/; a
    /// repeated timestamp gets a suffix), relative to the folder.
    public func reservePair(timestamp: Double) -> (stem: String, color: String, depth: String) {
        let stamp = Self.stamp(timestamp)
        var name = stamp
        var k = count
        while usedNames[.color]?.contains(name) == true || usedNames[.depth]?.contains(name) == true { name = "\(stamp)-\(k)"; k += 1 }
        usedNames[.color, default: []].insert(name)
        usedNames[.depth, default: []].insert(name)
        return (name, "rgb/\(name).png", "depth/\(name).png")
    }

    /// A file written outside the writer (`writeImage`, `writeDepth`), to be listed.
    public struct Written: Sendable {
        public var stream: Stream
        public var timestamp: Double
        /// Relative to the folder, as `reserve` returned it.
        public var path: String
        public init(stream: Stream, timestamp: Double, path: String) {
            self.stream = stream; self.timestamp = timestamp; self.path = path
        }
    }

    /// A file name for a frame of `stream` at `timestamp`, relative to the folder
    /// (`rgb/1305031102.175304.png`; a repeated timestamp in the same stream gets a suffix), that
    /// no other frame gets. Creates the stream's folder when needed (`ir/`).
    public func reserve(_ stream: Stream, timestamp: Double) throws -> String {
        let stamp = Self.stamp(timestamp)
        var name = stamp
        var k = 1
        while usedNames[stream]?.contains(name) == true { name = "\(stamp)-\(k)"; k += 1 }
        usedNames[stream, default: []].insert(name)
        if stream == .ir, !FileSupport.isDirectory(directory + "/ir") {
            do { try FileManager.default.createDirectory(atPath: directory + "/ir", withIntermediateDirectories: true) } catch {
                throw DepthKitError.file(path: directory + "/ir", problem: "cannot create directory")
            }
        }
        return "\(stream.folder)/\(name).png"
    }

    /// Lists files already written completely (one unit: a color/depth pair when `paired`, else
    /// any files). They are in the index files from the next flush on. `other`: the pair's other
    /// image when it was listed before (a frame repeating it), paired with and not listed again.
    public func list(_ files: [Written], paired: Bool, with other: Written? = nil) throws {
        for f in files {
            lines[f.stream, default: []].append((f.timestamp, "\(Self.stamp(f.timestamp)) \(f.path)"))
        }
        let all = files + (other.map { [$0] } ?? [])
        if paired, let c = all.first(where: { $0.stream == .color }), let d = all.first(where: { $0.stream == .depth }) {
            assocLines.append("\(Self.stamp(c.timestamp)) \(c.path) \(Self.stamp(d.timestamp)) \(d.path)")
        }
        unlisted.append((files.map(\.path), files.map(\.stream), paired))
        count += 1
        if count % max(1, flushInterval) == 0 { try flush() }
    }

    /// Writes the index files. Call once after the last frame. When they cannot be written (a full
    /// disk), the newest unlisted frames are deleted one by one, freeing their space, until the
    /// index fits or none is left; the folder then lists exactly its PNGs, and the error is thrown.
    public func finish() throws {
        do { try flush() } catch {
            while let last = unlisted.popLast() {
                for f in last.files { unlink(directory + "/" + f) }
                for s in last.streams { lines[s]?.removeLast() }
                if last.paired { assocLines.removeLast() }
                count -= 1
                if (try? flush()) != nil { break }
            }
            throw error
        }
    }

    private func flush() throws {
        let head = "# written by depthlens\n"
        for stream in Stream.allCases where stream != .ir || lines[.ir] != nil {
            let body = (lines[stream] ?? []).map { $0.line + "\n" }.joined()
            try FileSupport.atomicWrite(Array((head + stream.heading + "\n# timestamp filename\n" + body).utf8),
                                        to: directory + "/\(stream.folder).txt")
        }
        let pairs = pairsByNearestTime ? nearestPairs() : assocLines
        try FileSupport.atomicWrite(Array((head + "# t_rgb rgb_path t_depth depth_path\n" + pairs.map { $0 + "\n" }.joined()).utf8),
                                    to: directory + "/associations.txt")
        listedCount = count
        unlisted.removeAll(keepingCapacity: true)
    }

    /// Each listed depth frame with the listed color frame nearest in time (the earlier on a tie),
    /// in depth order.
    private func nearestPairs() -> [String] {
        let color = (lines[.color] ?? []).sorted { $0.time < $1.time }
        guard !color.isEmpty else { return [] }
        let times = color.map(\.time)
        return (lines[.depth] ?? []).map { d in
            var lo = 0, hi = times.count
            while lo < hi { let mid = (lo + hi) / 2; if times[mid] < d.time { lo = mid + 1 } else { hi = mid } }
            if lo == times.count || (lo > 0 && d.time - times[lo - 1] <= times[lo] - d.time) { lo -= 1 }
            return color[lo].line + " " + d.line
        }
    }

    /// A timestamp as the index files and file names write it: seconds with 6 decimals.
    public static func stamp(_ t: Double) -> String { String(format: "%.6f", t) }

    /// Writes a color or IR image as PNG, atomically: rgba8, rgb8 and gray8 as they are, gray16 as
    /// 16-bit gray when `keepGray16` (IR), anything else as rgba8.
    public static func writeImage(_ c: PixelBuffer, keepGray16: Bool = false, to path: String) throws {
        var keep = c.format == .rgba8 || c.format == .rgb8 || c.format == .gray8
        if keepGray16, case .gray16 = c.format { keep = true }
        try ImageIO.writePNG(keep ? c : ImageIO.toRGBA8(c), to: path, options: .frames)
    }

    /// Writes depth as a 16-bit PNG of `scale` units per meter, atomically.
    public static func writeDepth(_ d: DepthData, scale: Float, to path: String) throws {
        try ImageIO.writePNG(encodeDepth(d, scale: scale), to: path, options: .depthFrames)
    }

    /// Depth in meters → 16-bit counts at `scale` units per meter (invalid or out of range → 0).
    public static func encodeDepth(_ depth: DepthData, scale: Float) -> PixelBuffer {
        let d = depth.depthFloat32()
        let out = PixelBuffer(width: d.width, height: d.height, format: .gray16(depthScale: scale))
        for y in 0..<d.height {
            let s = d.row(y, as: Float.self), o = out.row(y, as: UInt16.self)
            for x in 0..<d.width {
                let v = (s[x] * scale).rounded()
                o[x] = isValidDepth(s[x]) && v >= 1 && v <= 65535 ? UInt16(v) : 0
            }
        }
        return out
    }
}
