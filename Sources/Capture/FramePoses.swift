import DepthKit

/// A source's camera poses: what `FrameSource.poses` gives, looked up per frame. Each pose is the
/// frame's optical frame (x right, y down, z forward) in the recording's world, already converted
/// from the recording's own convention (`CameraPose.init(rotationRows:translation:axes:direction:)`).
public struct FramePoses: Sendable {
    public enum Lookup: Sendable {
        /// One pose (or none) per frame index (scans: the pose is recorded with the frame).
        case perFrame([CameraPose?])
        /// Poses at times, looked up by the frame's timestamp (TUM's groundtruth.txt).
        case byTime(PoseTrack)
    }

    public let lookup: Lookup
    /// Where the poses came from and their recorded convention, for `info` ("odometry.csv: ARKit
    /// camera axes, world from camera").
    public let origin: String

    public init(_ lookup: Lookup, origin: String) {
        self.lookup = lookup
        self.origin = origin
    }

    /// The pose of frame `index` taken at `timestamp`; nil when it has none.
    public func pose(frame index: Int, timestamp: Double) -> CameraPose? {
        switch lookup {
        case let .perFrame(poses): return poses.indices.contains(index) ? poses[index] : nil
        case let .byTime(track): return track.pose(at: timestamp)
        }
    }

    /// The pose of a delivered frame.
    public func pose(of frame: FrameSet) -> CameraPose? { pose(frame: frame.index, timestamp: frame.timestamp) }

    /// Poses recorded (per-frame: frames that have one; by time: samples).
    public var count: Int {
        switch lookup {
        case let .perFrame(poses): return poses.reduce(0) { $0 + ($1 == nil ? 0 : 1) }
        case let .byTime(track): return track.samples.count
        }
    }
}
