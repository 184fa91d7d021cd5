import Foundation

/// Camera poses at times: a TUM RGB-D `groundtruth.txt` (`timestamp tx ty tz qx qy qz qw`, the
/// optical frame's pose in the world), or a scan's trajectory, looked up per frame by time.
///
/// A frame between two samples at most `maxGap` apart takes the pose interpolated between them
/// (translation linear, rotation slerp; TUM's ground truth runs at 100 Hz, so its neighbours are
/// 10 ms apart); else the nearest sample within `maxDifference` (0.02 s, TUM's `associate.py`
/// default); else it has none.
public struct PoseTrack: Sendable, Equatable {
    public struct Sample: Sendable, Equatable {
        public var timestamp: Double
        public var pose: CameraPose
        public init(timestamp: Double, pose: CameraPose) { self.timestamp = timestamp; self.pose = pose }
    }

    /// Sorted by time.
    public let samples: [Sample]
    public var maxDifference: Double = 0.02
    public var maxGap: Double = 0.1

    public init(samples: [Sample]) {
        self.samples = samples.sorted { $0.timestamp < $1.timestamp }
    }

    public var isEmpty: Bool { samples.isEmpty }

    /// The pose at `timestamp` (see the type), nil when no sample is near enough.
    public func pose(at timestamp: Double) -> CameraPose? {
        guard !samples.isEmpty, timestamp.isFinite else { return nil }
        var lo = 0, hi = samples.count
        while lo < hi { let mid = (lo + hi) / 2; if samples[mid].timestamp < timestamp { lo = mid + 1 } else { hi = mid } }
        // samples[lo] is the first at or after timestamp.
        if lo < samples.count, samples[lo].timestamp == timestamp { return samples[lo].pose }
        if lo > 0, lo < samples.count {
            let a = samples[lo - 1], b = samples[lo]
            if b.timestamp - a.timestamp <= maxGap {
                return CameraPose.interpolate(a.pose, b.pose, (timestamp - a.timestamp) / (b.timestamp - a.timestamp))
            }
        }
        var best: Sample?
        for i in [lo - 1, lo] where samples.indices.contains(i) {
            if best == nil || abs(samples[i].timestamp - timestamp) < abs(best!.timestamp - timestamp) { best = samples[i] }
        }
        guard let best, abs(best.timestamp - timestamp) <= maxDifference else { return nil }
        return best.pose
    }

    /// Parses a TUM trajectory: lines `timestamp tx ty tz qx qy qz qw` (spaces or tabs), `#`
    /// comments and blank lines skipped. The quaternion is normalized. Throws
    /// `DepthKitError.file` naming `path` and the line for a short line, a bad number or a zero
    /// quaternion.
    public static func parseTUM(_ bytes: [UInt8], path: String) throws -> PoseTrack {
        var out: [Sample] = []
        var lineNumber = 0
        for raw in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            lineNumber += 1
            let line = String(decoding: raw, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            if line.isEmpty || line.hasPrefix("#") { continue }
            let parts = line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "," })
            guard parts.count >= 8 else {
                throw DepthKitError.file(path: path, problem: "line \(lineNumber): expected 'timestamp tx ty tz qx qy qz qw', got \(parts.count) fields")
            }
            var v: [Double] = []
            for p in parts.prefix(8) {
                guard let d = Double(p), d.isFinite else {
                    throw DepthKitError.file(path: path, problem: "line \(lineNumber): '\(p)' is not a number")
                }
                v.append(d)
            }
            guard let pose = CameraPose(quaternion: Quaternion(x: v[4], y: v[5], z: v[6], w: v[7]),
                                        translation: SIMD3(v[1], v[2], v[3]), axes: .opencv, direction: .worldFromCamera) else {
                throw DepthKitError.file(path: path, problem: "line \(lineNumber): the quaternion is zero")
            }
            out.append(Sample(timestamp: v[0], pose: pose))
        }
        return PoseTrack(samples: out)
    }

    /// One TUM line: `timestamp tx ty tz qx qy qz qw` (timestamp with 6 decimals as depthlens
    /// names frames, the rest with 9).
    public static func tumLine(timestamp: Double, pose: CameraPose) -> String {
        let t = pose.translation, q = pose.rotation
        return String(format: "%.6f %.9f %.9f %.9f %.9f %.9f %.9f %.9f", timestamp, t.x, t.y, t.z, q.x, q.y, q.z, q.w)
    }

    /// The header `convert` writes above the lines.
    public static let tumHeader = "# ground truth trajectory: the camera's optical frame (x right, y down, z forward) in the world\n"
        + "# timestamp tx ty tz qx qy qz qw\n"
}
