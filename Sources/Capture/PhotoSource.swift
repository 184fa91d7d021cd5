import DepthKit
import Foundation

/// A phone's depth photo (`photo:FILE`: HEIC/HEIF or JPEG, the kind found from its bytes),
/// delivered once after `start()` and then shown still, like a `PairSource`. Depth and color
/// have their own cameras (the photo's intrinsics scaled to each size, extrinsics identity).
/// Relative depth (iPhone portrait photos: `depthData:Accuracy` relative) is carried in the
/// depth's `accuracy` and in `metadata.tags["depth_accuracy"]`, so consumers can say it is not
/// metric. See docs/PHOTOS.md.
public final class PhotoSource: FrameSource {
    public let path: String
    public var name: String { "photo:\(path)" }
    public private(set) var intrinsics: CameraIntrinsics = .default(width: 640, height: 480)
    public var isLive: Bool { false }
    /// Depth is decoded to float meters; a writer of 16-bit depth uses millimeters. A depth in the
    /// photo's own scale (GDepth without Units: a Lens Blur photo's Far is 390 or 633) gets
    /// `storageScale`'s coarser steps, so that its far end still fits in 16 bits.
    public var depthUnitsPerMeter: Float? { unitsPerMeter }
    private var unitsPerMeter = DepthIO.defaultDepthScale
    public private(set) var calibration: RGBDCalibration?
    public private(set) var metadata = SourceMetadata(kind: "photo")
    public private(set) var warnings: [String] = []
    public var onWarning: ((String) -> Void)?
    /// The decoded photo (after `start()`).
    public private(set) var photo: DepthPhoto?
    private var delivered = false

    public init(path: String) { self.path = path }

    /// Reads and decodes the file. Throws one line naming the file and the problem.
    public func start() throws {
        let p: DepthPhoto
        do { p = try DepthPhoto.read(path) } catch { throw CaptureError.wrapping(error, path: path) }
        photo = p
        intrinsics = p.colorCamera.intrinsics
        delivered = false
        unitsPerMeter = Self.storageScale(p)
        calibration = RGBDCalibration(depth: p.depthCamera, color: p.colorCamera, depthScale: unitsPerMeter,
                                      origin: "photo \(p.intrinsicsOrigin)")
        metadata = Self.metadata(of: p)
        warnings = []
        for n in p.notes {
            warnings.append("\(path): \(n)")
            onWarning?("\(path): \(n)")
        }
    }

    public func stop() { photo = nil }

    /// Units per depth unit of 16-bit depth written from this photo: 1000 (millimeters) for depth
    /// in meters; for depth in the photo's own scale (no units) the largest of 1000, 100, 10, 1
    /// that keeps the larger of Near/Far and the deepest value within 65535.
    static func storageScale(_ p: DepthPhoto) -> Float {
        guard let r = p.range, r.units.isEmpty else { return DepthIO.defaultDepthScale }
        let deepest = Double(p.depth?.depthStatistics().max ?? 0)
        let top = [abs(r.low), abs(r.high), deepest].filter(\.isFinite).max() ?? 0
        let scales: [Double] = [1000, 100, 10, 1]
        return Float(scales.first { top * $0 <= 65535 } ?? 1)
    }

    public func nextFrame(now: Double) throws -> FrameSet? {
        guard let photo else { throw CaptureError.invalidState("\(name): nextFrame before start()") }
        guard !delivered else { return nil }
        delivered = true
        return FrameSet(color: photo.color, depth: photo.depth, timestamp: 0, index: 0, matte: Self.subjectMatte(photo.mattes))
    }

    /// The photo's subject as one matte: the portrait effects matte (the person, soft edges) when
    /// there is one, else the per-pixel maximum of the semantic mattes that are parts of a person
    /// (skin, hair, teeth, glasses, person; not sky), those of the first one's size; nil without either.
    public static func subjectMatte(_ mattes: [(type: String, image: PixelBuffer)]) -> PixelBuffer? {
        let gray = mattes.filter { $0.image.format == .gray8 }
        if let p = gray.first(where: { $0.type.lowercased().hasSuffix("portraiteffectsmatte") }) { return p.image }
        let parts = gray.filter { m in
            let t = m.type.lowercased()
            return t.contains("semantic") && ["skin", "hair", "teeth", "glasses", "person"].contains { t.contains($0) }
        }.map(\.image)
        guard let first = parts.first else { return nil }
        let same = parts.filter { $0.width == first.width && $0.height == first.height }
        if same.count == 1 { return first }
        let out = PixelBuffer(width: first.width, height: first.height, format: .gray8)
        for y in 0..<first.height {
            let o = out.row(y, as: UInt8.self)
            for x in 0..<first.width { o[x] = same.reduce(0) { max($0, $1.row(y, as: UInt8.self)[x]) } }
        }
        out.markModified()
        return out
    }

    /// Streams (color, depth as stored, mattes) and tags: container, depth encoding and range,
    /// accuracy, intrinsics origin, Apple's lens distortion, auxiliary images.
    static func metadata(of p: DepthPhoto) -> SourceMetadata {
        var streams = [SourceMetadata.Stream(name: "color", width: p.color.width, height: p.color.height, encoding: "rgba8", frames: 1)]
        var tags: [String: String] = ["container": p.container]
        if let d = p.storedDepth, let r = p.range {
            let bits = d.format == .gray8 ? 8 : 16
            streams.append(.init(name: "depth", width: d.width, height: d.height,
                                 encoding: "\(r.encoding.rawValue) \(bits)-bit", frames: 1))
            tags["depth_encoding"] = r.encoding.rawValue
            // No units (a Lens Blur photo's GDepth): Near/Far and the depth are in the photo's own scale.
            let ownScale = r.units.isEmpty
            tags["depth_range"] = "\(r.low) … \(r.high) \(ownScale ? "(no units)" : r.units) (\(r.format), stored \(Int(r.intLow)) … \(Int(r.intHigh)))"
            tags["depth_accuracy"] = p.accuracy.rawValue
            if p.accuracy == .relative {
                tags["depth_note"] = ownScale
                    ? "relative depth: the file gives no units (GDepth without Units), values are in its own scale (Near/Far as written): good for near/far separation, not metric (measurements are not meters)"
                    : "relative depth: good for near/far separation, not metric (measurements are not meters)"
            }
            if let dm = p.depth?.depthStatistics(), dm.validCount > 0 {
                if ownScale {
                    tags["depth_values"] = String(format: "%.4f … %.4f (the photo's own scale, not meters)", dm.min, dm.max)
                } else {
                    tags["depth_meters"] = String(format: "%.4f … %.4f m", dm.min, dm.max)
                }
            }
        } else {
            tags["depth_encoding"] = "none"
        }
        for (type, m) in p.mattes {
            streams.append(.init(name: "matte " + (type.split(separator: ":").last.map(String.init) ?? type),
                                 width: m.width, height: m.height, encoding: "gray8", frames: 1))
        }
        tags["intrinsics"] = p.intrinsicsOrigin
        for (k, v) in p.lensDistortion { tags["lens_\(k)"] = v }
        if !p.otherAuxiliary.isEmpty {
            // In file order, repeats counted (an iOS 18 file can hold hundreds).
            var order: [String] = [], count: [String: Int] = [:]
            for t in p.otherAuxiliary {
                if count[t] == nil { order.append(t) }
                count[t, default: 0] += 1
            }
            tags["auxiliary_not_decoded"] = order.map { count[$0]! > 1 ? "\($0) ×\(count[$0]!)" : $0 }.joined(separator: ", ")
        }
        return SourceMetadata(kind: "photo", device: nil, streams: streams, durationSeconds: nil, tags: tags)
    }
}
