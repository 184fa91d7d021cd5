import ArgumentParser
import Capture
import DepthKit
import Foundation

struct InfoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Describe sources (device, streams, duration, calibration) and image, depth, PLY or snapshot files.",
        discussion: """
        An argument that is a --source (\(SourceSpec.usage)) is described as a source: kind, device,
        streams, duration, depth scale, both cameras' intrinsics and the depth→color extrinsics
        (one JSON object per source with --json). Other arguments are files and folders.
        """
    )

    @OptionGroup var input: SourceOptions
    @Flag(help: "16-bit PGM samples are little-endian.")
    var pgmLittleEndian = false
    @Flag(help: "Print one JSON object per source (the calibration.json schema plus source, kind, device, duration_s, streams).")
    var json = false
    @Argument(help: "Sources, files and folders to describe.")
    var files: [String] = []

    /// `--depth-scale` describes 16-bit depth images too.
    var depthScale: Float? { input.depthScale }

    func run() throws {
        try input.check()
        // --calibration / --intrinsics: each source is described with the camera given.
        let camera = try input.calibrationOverride()
        var failed = 0
        // `--source` is described first, as an argument is (it was parsed as a source already).
        let items: [(String, SourceSpec?)] = (input.source.map { [($0.description, $0)] } ?? []) + files.map { ($0, Self.sourceSpec($0)) }
        guard !items.isEmpty else { throw DepthKitError.invalidArgument("info needs a source or a file to describe") }
        for (path, parsed) in items {
            do {
                let spec = try parsed.map { try input.applyingMaxImage(to: $0) }
                if let spec, spec.kind.hasFrames {
                    let d = try SourceDescription(spec, depthScale: depthScale, camera: camera)
                    print(json ? try d.jsonText() : d.text)
                    // A damaged recording is described (its readable frames) and said: exit 1, as for unreadable files.
                    if !d.damage.isEmpty { failed += 1 }
                    continue
                }
                // `ply:FILE`, the point-list source, is described as its file is.
                if case .ply(let file)? = spec {
                    if json { throw DepthKitError.invalidArgument("--json describes sources with frames; \(path) is a point list (info \(file) describes it)") }
                    print(try describePLY(file))
                    continue
                }
                if case let .plySequence(d, p)? = spec {
                    if json { throw DepthKitError.invalidArgument("--json describes sources with frames; \(path) is a PLY sequence") }
                    let (text, bad) = try describePLYSequence(d, pattern: p)
                    print(text)
                    failed += bad
                    continue
                }
                if json { throw DepthKitError.invalidArgument("--json describes sources (\(SourceSpec.usage)); '\(path)' is a file") }
                print(try describe(path))
            } catch {
                warn("\(error)")
                failed += 1
            }
        }
        if failed > 0 { throw ExitCode.failure }
    }

    /// The spec when `text` is a source ("tum:DIR", "synthetic", "ply:FILE"…), nil for plain paths
    /// (a file called "a:b.png" that exists is a file).
    static func sourceSpec(_ text: String) -> SourceSpec? {
        guard !FileManager.default.fileExists(atPath: text) else { return nil }
        return try? SourceSpec(parsing: text)
    }

    private func describe(_ path: String) throws -> String {
        var isDir: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDir), isDir.boolValue {
            let folder = try TUMSequence(directory: path, depthScale: depthScale)
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
        case .bgra8, .rgba8, .rgb8, .gray8:
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

    /// A PLY sequence (`ply:DIR`): its files in playing order, how they are timed, the points of
    /// the first and of all; every file is read (one at a time), and one that cannot be is a line
    /// of its own (counted in the second value, for the exit status).
    private func describePLYSequence(_ directory: String, pattern: String?) throws -> (String, Int) {
        let q = try PLYSequence(directory: directory, pattern: pattern)
        var lines = ["\(q.name): PLY sequence, \(q.count) file\(q.count == 1 ? "" : "s"), \(q.entries[0].name) … \(q.entries[q.count - 1].name)",
                     q.timedByNames ? String(format: "  timed by the numbers in the file names: %.3f s", q.durationSeconds)
                                    : "  timed by index: file i at i / fps (--fps, default \(Int(PLYSequence.defaultFPS)))"]
        var total = 0, bad = 0
        for (i, e) in q.entries.enumerated() {
            do {
                let c = try PLYReader.load(e.path)
                total += c.cloud.count
                if i == 0 { lines.append("  first: \(e.name), \(c.cloud.count) points, \(c.hasColor ? "with color" : "no color")") }
            } catch {
                lines.append("  unreadable: \(error)")
                bad += 1
            }
        }
        lines.append("  total: \(total) points in \(q.count - bad) readable file\(q.count - bad == 1 ? "" : "s")")
        return (lines.joined(separator: "\n"), bad)
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

/// `info SOURCE`: what a source says about itself after `start()`, completed from its first frame
/// where it does not say (stream sizes, assumed intrinsics).
struct SourceDescription {
    let spec: SourceSpec
    let metadata: SourceMetadata
    let calibration: RGBDCalibration
    let frameCount: Int?
    /// "N poses (origin)" when the source has camera poses.
    let poses: (count: Int, origin: String)?
    /// The IMU streams (samples read; listed without them), when the source has any.
    let imu: [IMUSummary]
    /// What of a recording could not be read (`RecordingDamage`, the whole recording checked);
    /// nil for sources that are not such recordings.
    let damageReport: [String]?
    var damage: [String] { damageReport ?? [] }

    /// One IMU stream as `info` lists it.
    struct IMUSummary {
        var kind: IMUKind
        var name: String
        var samples: Int
        var rate: Double?
        var first: Double?
        var last: Double?
    }

    /// `camera`: `--calibration` / `--intrinsics`, shown instead of what the source recorded.
    init(_ spec: SourceSpec, depthScale: Float?, camera: CalibrationOverride = CalibrationOverride()) throws {
        self.spec = spec
        let source = try spec.makeSource(depthScale: depthScale)
        (source as? RecordingDamage)?.checksWholeRecording = true
        let reader = try FrameReader(source: source)   // keeps the source started while it is read
        damageReport = (source as? RecordingDamage)?.damage
        guard let first = try reader.next() else { throw CaptureError.invalidState("\(source.name) has no frame") }
        var meta = source.metadata
        frameCount = source.playback?.frameCount
        poses = source.poses.map { ($0.count, $0.origin) }
        imu = try source.imu?.imuSamples().streams.map {
            IMUSummary(kind: $0.kind, name: $0.name, samples: $0.count, rate: $0.rate, first: $0.timestamps.first, last: $0.timestamps.last)
        } ?? []
        if meta.streams.isEmpty {
            let fps = source.nominalFrameRate
            meta.streams.append(.init(name: "color", width: first.color.width, height: first.color.height, fps: fps,
                                      encoding: "\(first.color.format)", frames: frameCount))
            if let d = first.depth {
                meta.streams.append(.init(name: "depth", width: d.map.width, height: d.map.height, fps: fps,
                                          encoding: "\(d.map.format)", frames: frameCount))
            }
        }
        if meta.durationSeconds == nil, let n = source.playback?.frameCount, n > 1,
           let fps = source.nominalFrameRate, fps > 0 {
            meta.durationSeconds = Double(n - 1) / fps
        }
        metadata = meta
        let depthSize = first.depth.map { ($0.map.width, $0.map.height) } ?? (first.color.width, first.color.height)
        calibration = !camera.isEmpty ? try camera.resolve(for: source, frame: first) : source.calibration ?? RGBDCalibration(
            depth: CameraModel(intrinsics: first.depth?.intrinsics ?? .default(width: depthSize.0, height: depthSize.1)),
            color: .default(width: first.color.width, height: first.color.height),
            depthScale: source.depthUnitsPerMeter ?? DepthIO.defaultDepthScale, origin: "default (assumed)")
        withExtendedLifetime(reader) {}
    }

    var jsonObject: [String: Any] {
        var o = calibration.jsonObject
        o["source"] = spec.description
        o["kind"] = metadata.kind
        o["calibration_origin"] = calibration.origin
        var device: [String: Any] = [:]
        device["name"] = metadata.device?.name ?? NSNull()
        device["serial"] = metadata.device?.serial ?? NSNull()
        device["firmware"] = metadata.device?.firmware ?? NSNull()
        o["device"] = device
        o["duration_s"] = metadata.durationSeconds ?? NSNull()
        o["streams"] = metadata.streams.map { s -> [String: Any] in
            ["name": s.name, "width": s.width, "height": s.height, "fps": s.fps ?? NSNull(),
             "encoding": s.encoding, "frames": s.frames ?? NSNull()]
        }
        if !metadata.tags.isEmpty { o["tags"] = metadata.tags }
        // A photo's depth may be relative (iPhone portrait): not meters, said at the top level.
        if let a = metadata.tags["depth_accuracy"] { o["accuracy"] = a }
        o["poses"] = poses.map { ["count": $0.count, "origin": $0.origin, "frame": "optical (x right, y down, z forward), world from camera"] as [String: Any] } ?? NSNull()
        let imuStreams = imu.map { s -> [String: Any] in
            ["kind": s.kind.rawValue, "name": s.name, "samples": s.samples, "rate_hz": s.rate ?? NSNull(), "unit": s.kind.unit,
             "first_s": s.first ?? NSNull(), "last_s": s.last ?? NSNull()]
        }
        o["imu"] = imuStreams.isEmpty ? NSNull() as Any : imuStreams as Any
        if let damageReport { o["damage"] = damageReport }
        return o
    }

    func jsonText() throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: jsonObject, options: [.prettyPrinted, .sortedKeys]),
               as: UTF8.self)
    }

    var text: String {
        var lines = ["\(spec): \(metadata.kind) source" + (frameCount.map { ", \($0) frames" } ?? "")
                     + (metadata.durationSeconds.map { String(format: ", %.3f s", $0) } ?? "")]
        if let d = metadata.device {
            lines.append("  device: " + [d.name, d.serial.map { "serial \($0)" }, d.firmware.map { "firmware \($0)" }]
                .compactMap { $0 }.joined(separator: ", "))
        }
        for s in metadata.streams {
            lines.append("  \(s.name): \(s.width)x\(s.height) \(s.encoding)" + (s.fps.map { String(format: " @ %.2f fps", $0) } ?? "")
                         + (s.frames.map { ", \($0) frames" } ?? ""))
        }
        func camera(_ name: String, _ m: CameraModel) -> String {
            let k = m.intrinsics
            return String(format: "  %@ intrinsics: %dx%d fx %.3f fy %.3f cx %.3f cy %.3f", name, k.width, k.height,
                          k.fx, k.fy, k.cx, k.cy) + " \(m.model.rawValue)" + (m.coeffs.isEmpty ? "" : " \(m.coeffs)")
        }
        if metadata.kind == "photo" {
            // What the photo says about its depth: container, encoding and range, accuracy, lens.
            for (k, v) in metadata.tags.sorted(by: { $0.key < $1.key }) { lines.append("  \(k.replacingOccurrences(of: "_", with: " ")): \(v)") }
        }
        lines.append(camera("depth", calibration.depth))
        lines.append(camera("color", calibration.color))
        let t = calibration.depthToColor.translation
        lines.append(String(format: "  depth→color: translation %.4f %.4f %.4f m, rotation ", t.x, t.y, t.z)
                     + calibration.depthToColor.rotation.map { String(format: "%.5f", $0) }.joined(separator: " "))
        lines.append("  depth scale \(calibration.depthScale) units/m; calibration: \(calibration.origin)")
        if let p = poses { lines.append("  poses: \(p.count) camera poses from \(p.origin) (world from the optical frame)") }
        for s in imu {
            lines.append("  imu \(s.kind.rawValue): \(s.name), \(s.samples) samples" + (s.rate.map { String(format: " @ %.2f Hz", $0) } ?? "")
                         + " (\(s.kind.unit))")
        }
        for line in damage { lines.append("  damaged: \(line)") }
        return lines.joined(separator: "\n")
    }
}
