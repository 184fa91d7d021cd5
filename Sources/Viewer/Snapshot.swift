import DepthKit
import Foundation

/// AVCamFilter's "photo with the filter applied", with depth: the displayed filtered image at
/// source resolution, the color image, the depth as a 16-bit PNG in millimeters and a JSON file
/// with the intrinsics, so `depthlens process --color NAME_color.png --depth NAME_depth.png
/// --depth-scale 1000 …` can apply the effects again later.
public enum Snapshot {
    /// NAME.json's contents (defined in DepthKit, where `process --snapshot` and `info` read it).
    public typealias Metadata = SnapshotMetadata

    /// Writes NAME_filtered.png, NAME_color.png, NAME_depth.png (when there is depth) and NAME.json
    /// into `directory` (created if needed); returns the paths written. Each write is atomic.
    @discardableResult
    public static func write(name: String, directory: String, filtered: PixelBuffer, color: PixelBuffer,
                             depth: DepthData?, intrinsics: CameraIntrinsics, mode: String, timestamp: Double,
                             frame: Int, source: String) throws -> [String] {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        func path(_ suffix: String) -> String { (directory as NSString).appendingPathComponent(name + suffix) }
        var written: [String] = []
        try ImageIO.write(filtered, to: path("_filtered.png")); written.append(path("_filtered.png"))
        try ImageIO.write(color, to: path("_color.png")); written.append(path("_color.png"))
        var k = intrinsics
        if let depth {
            try ImageIO.write(millimeters(depth.depthFloat32()), to: path("_depth.png")); written.append(path("_depth.png"))
            k = depth.intrinsics
        }
        let meta = Metadata(intrinsics: k, depthScale: 1000, mode: mode, timestamp: timestamp, frame: frame,
                            source: source, files: written.map { ($0 as NSString).lastPathComponent })
        let data = Data(try meta.encoded())
        let tmp = path(".json.tmp\(getpid())")
        try data.write(to: URL(fileURLWithPath: tmp))
        guard rename(tmp, path(".json")) == 0 else {
            try? FileManager.default.removeItem(atPath: tmp)
            throw DepthKitError.file(path: path(".json"), problem: "cannot write: \(String(cString: strerror(errno)))")
        }
        written.append(path(".json"))
        return written
    }

    /// Depth in meters → 16-bit millimeters (rounded; invalid and out-of-range → 0).
    public static func millimeters(_ d: PixelBuffer) -> PixelBuffer {
        let out = PixelBuffer(width: d.width, height: d.height, format: .gray16(depthScale: 1000))
        for y in 0..<d.height {
            let src = d.row(y, as: Float.self), dst = out.row(y, as: UInt16.self)
            for x in 0..<d.width {
                let z = src[x]
                let mm = isValidDepth(z) ? (z * 1000).rounded() : 0
                dst[x] = mm >= 1 && mm <= 65535 ? UInt16(mm) : 0
            }
        }
        return out
    }

    /// "depthlens-20240131-142501-123-f42": sortable, unique per millisecond and frame.
    public static func name(date: Date = Date(), frame: Int) -> String {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.dateFormat = "yyyyMMdd-HHmmss-SSS"
        return "depthlens-\(f.string(from: date))-f\(frame)"
    }
}
