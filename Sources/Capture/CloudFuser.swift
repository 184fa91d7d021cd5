import DepthKit

/// Fuses every frame of a source with poses into one world-space cloud (`export-ply --fuse`):
/// each frame's depth is unprojected (colored as `export-ply` colors one frame), moved into the
/// world by the frame's pose and added to a `VoxelFusion` grid. Frames are read one at a time,
/// so memory is the grid, not the recording.
public struct CloudFuser {
    public struct Summary: Sendable {
        /// Frames whose points went into the grid.
        public var framesFused = 0
        /// Frames read that had no pose or no depth (left out).
        public var framesWithoutPose = 0
        public var framesWithoutDepth = 0
        public var pointsAdded = 0
        /// Set when `shouldStop` ended the run early.
        public var stoppedBy: Int32?
    }

    public let source: FrameSource
    public var voxelSize: Double
    /// `--calibration` / `--intrinsics`: the depth camera every frame is unprojected with (and the
    /// color camera it is colored by) instead of what the source recorded.
    public var calibration = CalibrationOverride()

    public init(source: FrameSource, voxelSize: Double = 0.01) {
        self.source = source
        self.voxelSize = voxelSize
    }

    /// Reads the whole source. `shouldStop` is polled before each frame (a signal's number, nil to
    /// go on); `progress` gets (frames read, frames in the source when known, cells so far).
    /// Throws the source's one-line error, or `CaptureError.invalidSource` when it has no poses.
    public func run(shouldStop: () -> Int32? = { StopSignals.pending },
                    progress: (_ read: Int, _ total: Int?, _ cells: Int) -> Void = { _, _, _ in }) throws -> (cloud: PointCloud, summary: Summary) {
        var grid = try VoxelFusion(voxelSize: voxelSize)
        let reader = try FrameReader(source: source)
        guard let poses = source.poses else {
            throw CaptureError.invalidSource("\(source.name) has no camera poses to fuse with (a scan folder, or a tum: folder with groundtruth.txt, has them)")
        }
        let total = source.playback?.frameCount
        var summary = Summary()
        var read = 0
        while true {
            if let s = shouldStop() { summary.stoppedBy = s; break }
            guard var frame = try reader.next() else { break }
            read += 1
            defer { progress(read, total, grid.cellCount) }
            guard frame.depth != nil else { summary.framesWithoutDepth += 1; continue }
            guard let pose = poses.pose(of: frame) else { summary.framesWithoutPose += 1; continue }
            let calibration = try self.calibration.calibrate(&frame, of: source)
            let depth = frame.depth!, rgb = ImageIO.toEightBit(frame.color)
            let cloud = calibration.map(\.needsAlignment) == true
                ? PointCloud.unproject(depth: depth, color: rgb, calibration: calibration!)
                : PointCloud.unproject(depth: depth, color: rgb)
            grid.add(cloud, pose: pose)
            summary.framesFused += 1
        }
        summary.pointsAdded = grid.pointsAdded
        withExtendedLifetime(reader) {}
        return (grid.cloud(), summary)
    }
}
