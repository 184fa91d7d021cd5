import DepthKit
import Foundation

/// The frames of a data-set folder for `process --input`: a TUM RGB-D sequence (rgb.txt …) or a
/// folder with `color/` and `depth/` subfolders whose files pair up by name (without extension).
struct DatasetFolder {
    private enum Layout {
        case tum(TUMSequence)
        case pairs([(color: String, depth: String, stem: String)])
    }
    private let layout: Layout
    private let depthScale: Float?
    private let pgmLittleEndian: Bool

    init(path: String, depthScale: Float?, pgmLittleEndian: Bool) throws {
        self.depthScale = depthScale
        self.pgmLittleEndian = pgmLittleEndian
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir) else {
            throw DepthKitError.file(path: path, problem: "no such folder")
        }
        guard isDir.boolValue else { throw DepthKitError.file(path: path, problem: "not a folder") }
        let fm = FileManager.default
        if fm.fileExists(atPath: (path as NSString).appendingPathComponent("rgb.txt")) {
            layout = .tum(try TUMSequence(directory: path))
            return
        }
        let colorDir = (path as NSString).appendingPathComponent("color")
        let depthDir = (path as NSString).appendingPathComponent("depth")
        guard let colors = try? fm.contentsOfDirectory(atPath: colorDir),
              let depths = try? fm.contentsOfDirectory(atPath: depthDir) else {
            throw DepthKitError.file(path: path, problem: "not a data-set folder: expected rgb.txt (TUM) or color/ and depth/ subfolders")
        }
        func stem(_ name: String) -> String { (name as NSString).deletingPathExtension }
        let depthByStem = Dictionary(depths.map { (stem($0), $0) }, uniquingKeysWith: { a, _ in a })
        let pairs = colors.sorted().compactMap { c -> (String, String, String)? in
            guard let d = depthByStem[stem(c)] else { return nil }
            return ((colorDir as NSString).appendingPathComponent(c), (depthDir as NSString).appendingPathComponent(d), stem(c))
        }
        guard !pairs.isEmpty else {
            throw DepthKitError.file(path: path, problem: "no color/depth pairs with matching names in color/ and depth/")
        }
        layout = .pairs(pairs.map { (color: $0.0, depth: $0.1, stem: $0.2) })
    }

    var count: Int {
        switch layout {
        case .tum(let s): return s.entries.count
        case .pairs(let p): return p.count
        }
    }

    func load(_ i: Int) throws -> LoadedFrame {
        switch layout {
        case .tum(let s):
            let f = try s.loadFrame(at: i)
            return LoadedFrame(color: f.color, depth: f.depth, colorPath: f.colorPath, depthPath: f.depthPath)
        case .pairs(let p):
            let f = try RGBDFrame.loadPair(color: p[i].color, depth: p[i].depth, depthScale: depthScale,
                                           pgmLittleEndian: pgmLittleEndian)
            return LoadedFrame(color: f.color, depth: f.depth, colorPath: p[i].color, depthPath: p[i].depth)
        }
    }

    /// Units per meter of the folder's 16-bit depth (TUM: 5000; pairs: --depth-scale or 1000).
    var unitsPerMeter: Float {
        switch layout {
        case .tum(let s): return s.depthScale
        case .pairs: return depthScale ?? DepthIO.defaultDepthScale
        }
    }

    /// Output file name for frame `i`: the TUM timestamp or the pair's name, as PNG.
    func outputName(_ i: Int) -> String {
        switch layout {
        case .tum(let s): return String(format: "%.6f.png", s.entries[i].timestamp)
        case .pairs(let p): return p[i].stem + ".png"
        }
    }
}
