import DepthKit
import Foundation

/// A viewer snapshot (`snapshot:NAME.json`): the `*_color.png` and `*_depth.png` its JSON names
/// beside it, read at its depth scale with its intrinsics, delivered once like a `PairSource`.
/// Only files in the JSON's own folder are read (`SnapshotMetadata.readablePath`).
public final class SnapshotSource: FrameSource {
    public let json: String
    public var name: String { "snapshot:\(json)" }
    public private(set) var intrinsics: CameraIntrinsics = .default(width: 640, height: 480)
    public var isLive: Bool { false }
    public private(set) var depthUnitsPerMeter: Float?
    public private(set) var calibration: RGBDCalibration?
    private var frame: FrameSet?
    private var delivered = false

    public init(json: String) { self.json = json }

    /// Reads and checks the JSON and both files. Throws one line naming the bad file.
    public func start() throws {
        do {
            let meta = try SnapshotMetadata.read(json)
            guard let colorName = meta.colorFile else {
                throw DepthKitError.file(path: json, problem: "'files' names no *_color.png")
            }
            guard let depthName = meta.depthFile else {
                // A snapshot without depth serves color-only filters; consumers that need depth say so.
                let color = try ImageIO.readColor(SnapshotMetadata.readablePath(colorName, of: json))
                intrinsics = .default(width: color.width, height: color.height)
                calibration = nil
                frame = FrameSet(color: color, depth: nil, timestamp: meta.timestamp, index: meta.frame)
                delivered = false
                return
            }
            let f = try RGBDFrame.loadPair(color: SnapshotMetadata.readablePath(colorName, of: json),
                                           depth: SnapshotMetadata.readablePath(depthName, of: json), depthScale: meta.depth_scale)
            let k = meta.cameraIntrinsics
            guard k.width == f.depth.map.width, k.height == f.depth.map.height else {
                throw DepthKitError.file(path: json, problem:
                    "intrinsics are for \(k.width)x\(k.height) but \(depthName) is \(f.depth.map.width)x\(f.depth.map.height)")
            }
            var depth = meters(f.depth)
            depth.intrinsics = k
            depthUnitsPerMeter = meta.depth_scale
            intrinsics = .default(width: f.color.width, height: f.color.height)
            calibration = RGBDCalibration(depth: CameraModel(intrinsics: k),
                                          color: CameraModel(intrinsics: k.scaled(toWidth: f.color.width, height: f.color.height)),
                                          depthScale: meta.depth_scale, origin: "snapshot \((json as NSString).lastPathComponent)")
            frame = FrameSet(color: f.color, depth: depth, timestamp: meta.timestamp, index: meta.frame)
            delivered = false
        } catch {
            throw CaptureError.wrapping(error, path: json)
        }
    }

    public func stop() { frame = nil }

    public func nextFrame(now: Double) throws -> FrameSet? {
        guard let frame else { throw CaptureError.invalidState("\(name): nextFrame before start()") }
        guard !delivered else { return nil }
        delivered = true
        return frame
    }
}
