import ArgumentParser
import DepthKit
import Foundation

struct InfoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Print size, format and depth statistics of image, depth, PLY files or data-set folders."
    )

    @Option(help: "Units per meter of 16-bit depth images (default 1000).")
    var depthScale: Float?
    @Flag(help: "16-bit PGM samples are little-endian.")
    var pgmLittleEndian = false
    @Argument(help: "Files to describe.")
    var files: [String]

    func run() throws {
        if depthScale != nil { _ = try DepthIO.validatedScale(depthScale) }
        var failed = 0
        for path in files {
            do {
                print(try describe(path))
            } catch {
                warn("\(error)")
                failed += 1
            }
        }
        if failed > 0 { throw ExitCode.failure }
    }

    private func describe(_ path: String) throws -> String {
        var isDir: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDir), isDir.boolValue {
            let folder = try DatasetFolder(path: path, depthScale: depthScale, pgmLittleEndian: pgmLittleEndian)
            return "\(path): data-set folder, \(folder.count) color/depth frames"
        }
        if path.lowercased().hasSuffix(".json") { return try describeSnapshot(path) }
        if path.lowercased().hasSuffix(".ply") { return try describePLY(path) }
        let image = try ImageIO.read(path, pgmLittleEndian: pgmLittleEndian)
        var line = "\(path): \(image.width)x\(image.height) \(image.format)"
        let asDepth: DepthData?
        switch image.format {
        case .gray16:
            let scale = depthScale ?? 1000
            let scaled = PixelBuffer(wrapping: image.baseAddress, width: image.width, height: image.height,
                                     bytesPerRow: image.bytesPerRow, format: .gray16(depthScale: scale),
                                     deallocate: { [image] _ in _ = image })
            asDepth = DepthData(map: scaled)
            line += ", depth scale \(scale) units/m"
        case .depthFloat32, .depthFloat16, .disparityFloat32, .disparityFloat16:
            asDepth = DepthData(map: image)
        default:
            asDepth = nil
        }
        if let d = asDepth {
            let s = d.depthStatistics()
            let total = image.width * image.height
            line += String(format: ", valid depth %d/%d (%.1f%%)", s.validCount, total, 100 * Double(s.validCount) / Double(total))
            if s.validCount > 0 {
                line += String(format: ", min %.3f m, max %.3f m", s.min, s.max)
            }
        }
        return line
    }

    /// A PLY file: points, color, skipped vertices; then its format, every element with its
    /// properties as declared, which properties gave color, alpha and normals, and the bounding box.
    private func describePLY(_ path: String) throws -> String {
        let c = try PLYReader.load(path)
        var lines = ["\(path): PLY point cloud, \(c.cloud.count) points, \(c.hasColor ? "with color" : "no color")"
                     + ", \(c.nonFiniteSkipped) non-finite vertices skipped"]
        if let h = c.header {
            lines.append("  format \(h.format)" + (h.bareCRLineEnds ? ", header lines end in CR" : ""))
            for e in h.elements {
                lines.append("  element \(e.name) \(e.count): " + e.properties.map(\.description).joined(separator: ", "))
            }
            var color = h.colorProperties.isEmpty ? "none" : h.colorProperties.joined(separator: " ")
            if h.colorFromSphericalHarmonics { color += " (3DGS SH DC: 0.5 + 0.28209479·f_dc)" }
            var alpha = h.alphaProperty ?? "none"
            if h.alphaIsLogit { alpha += " (3DGS logit: sigmoid)" }
            let normals = h.normalProperties.isEmpty ? "none" : h.normalProperties.joined(separator: " ")
            lines.append("  color: \(color); alpha: \(alpha); normals: \(normals)")
        }
        if let b = c.bounds {
            func xyz(_ v: SIMD3<Float>) -> String { "(\(v.x), \(v.y), \(v.z))" }
            lines.append("  bounding box: min \(xyz(b.min)), max \(xyz(b.max)), size \(xyz(b.max - b.min))")
        } else {
            lines.append("  bounding box: none (no points)")
        }
        return lines.joined(separator: "\n")
    }

    /// A viewer snapshot's NAME.json: what it holds, and that the files it names are there.
    private func describeSnapshot(_ path: String) throws -> String {
        let m = try SnapshotMetadata.read(path)
        for f in m.files where !FileManager.default.fileExists(atPath: SnapshotMetadata.sibling(f, of: path)) {
            throw DepthKitError.file(path: path, problem: "names \(f), which is not in its folder")
        }
        let k = m.intrinsics
        return "\(path): depthlens snapshot, frame \(m.frame) of \(m.source), mode \(m.mode), time \(m.timestamp)"
            + String(format: ", depth %dx%d fx %.2f fy %.2f cx %.2f cy %.2f", k.width, k.height, k.fx, k.fy, k.cx, k.cy)
            + ", depth scale \(m.depth_scale) units/m, files \(m.files.joined(separator: " "))"
    }
}
