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
    public let directory: String
    public let depthScale: Float
    public var flushInterval = 30
    public private(set) var count = 0
    private var rgbLines: [String] = []
    private var depthLines: [String] = []
    private var assocLines: [String] = []
    private var usedNames: Set<String> = []
    /// Frames listed in the index files on disk (the last flush that succeeded).
    public private(set) var listedCount = 0
    /// The frames written since the last flush: their files and which index files list them.
    private var unlisted: [(files: [String], color: Bool, depth: Bool)] = []

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
        let stamp = String(format: "%.6f", timestamp)
        let depthStamp = String(format: "%.6f", depthTimestamp ?? timestamp)
        var name = stamp
        if usedNames.contains(name) { name = "\(stamp)-\(count)" }
        usedNames.insert(name)
        let colorRel = "rgb/\(name).png", depthRel = "depth/\(name).png"
        if let c = color {
            let rgba = c.format == .rgba8 || c.format == .rgb8 || c.format == .gray8 ? c : ImageIO.toRGBA8(c)
            try ImageIO.write(rgba, to: directory + "/" + colorRel)
        }
        if let d = depth {
            do { try ImageIO.write(TUMWriter.encodeDepth(d, scale: depthScale), to: directory + "/" + depthRel) } catch {
                if color != nil { unlink(directory + "/" + colorRel) }   // no half frame left behind
                throw error
            }
        }
        unlisted.append(([color != nil ? colorRel : nil, depth != nil ? depthRel : nil].compactMap { $0 }, color != nil, depth != nil))
        if color != nil { rgbLines.append("\(stamp) \(colorRel)") }
        if depth != nil { depthLines.append("\(depthStamp) \(depthRel)") }
        if color != nil && depth != nil { assocLines.append("\(stamp) \(colorRel) \(depthStamp) \(depthRel)") }
        count += 1
        if count % max(1, flushInterval) == 0 { try flush() }
        return name
    }

    /// Writes the index files. Call once after the last frame. When they cannot be written (a full
    /// disk), the newest unlisted frames are deleted one by one, freeing their space, until the
    /// index fits or none is left; the folder then lists exactly its PNGs, and the error is thrown.
    public func finish() throws {
        do { try flush() } catch {
            while let last = unlisted.popLast() {
                for f in last.files { unlink(directory + "/" + f) }
                if last.color { rgbLines.removeLast() }
                if last.depth { depthLines.removeLast() }
                if last.color && last.depth { assocLines.removeLast() }
                count -= 1
                if (try? flush()) != nil { break }
            }
            throw error
        }
    }

    private func flush() throws {
        let head = "# written by depthlens\n"
        try FileSupport.atomicWrite(Array((head + "# color images\n# timestamp filename\n" + rgbLines.map { $0 + "\n" }.joined()).utf8),
                                    to: directory + "/rgb.txt")
        try FileSupport.atomicWrite(Array((head + "# depth maps\n# timestamp filename\n" + depthLines.map { $0 + "\n" }.joined()).utf8),
                                    to: directory + "/depth.txt")
        try FileSupport.atomicWrite(Array((head + "# t_rgb rgb_path t_depth depth_path\n" + assocLines.map { $0 + "\n" }.joined()).utf8),
                                    to: directory + "/associations.txt")
        listedCount = count
        unlisted.removeAll(keepingCapacity: true)
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
