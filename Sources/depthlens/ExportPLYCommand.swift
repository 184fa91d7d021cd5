import ArgumentParser
import Capture
import DepthKit
import Foundation

struct ExportPLYCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export-ply",
        abstract: "Unproject a depth map (colored by the color image) to a PLY point cloud.",
        discussion: "Points use the depth camera's intrinsics; when the color camera is another one (a RealSense or Azure Kinect recording, a calibration.json), each point is colored by projecting it into the color image. With --fuse, every frame of a --source with camera poses (scan:DIR, or tum:DIR with groundtruth.txt) goes into one world-space cloud, one averaged point per --voxel cell; Ctrl+C, SIGTERM and SIGHUP stop it without writing."
    )

    @OptionGroup var input: RGBDInputOptions
    @Flag(help: "Write ASCII PLY instead of binary little-endian.")
    var ascii = false
    @Option(help: "Output .ply file.")
    var out: String
    @Flag(help: "Fuse every frame of --source by its camera pose into one world-space cloud (see --voxel).")
    var fuse = false
    @Option(help: "With --fuse: voxel edge in meters; each occupied voxel keeps one point, the mean of its points' positions and colors.")
    var voxel: Double?

    func run() throws {
        if voxel != nil && !fuse { throw DepthKitError.invalidArgument("--voxel goes with --fuse") }
        if fuse { return try runFused() }
        let frame = try input.load()
        // Depth and color from different cameras: each point takes the color pixel it projects to.
        let cloud = frame.calibration.map { $0.needsAlignment } == true
            ? PointCloud.unproject(depth: frame.depth!, color: ImageIO.toEightBit(frame.color), calibration: frame.calibration!)
            : PointCloud.unproject(depth: frame.depth!, color: ImageIO.toEightBit(frame.color))
        try PLYWriter.write(cloud, to: out, ascii: ascii)
        print("wrote \(out) (\(cloud.positions.count) points, \(ascii ? "ascii" : "binary_little_endian"))")
    }

    /// `--fuse`: the whole source, frame by frame, into one voxel grid.
    private func runFused() throws {
        guard input.source != nil, let spec = try input.sourceSpec() else { throw DepthKitError.invalidArgument("--fuse needs --source (a scan:DIR or a tum:DIR with groundtruth.txt)") }
        if input.frame != nil { throw DepthKitError.invalidArgument("--fuse reads every frame; drop --frame") }
        let src = try input.sourceOptions.makeSource(spec)
        StopSignals.install()
        var bar = ProgressBar(total: 0, label: "fuse")
        var fuser = CloudFuser(source: src, voxelSize: voxel ?? 0.01)
        fuser.calibration = try input.sourceOptions.calibrationOverride()
        let (cloud, summary) = try fuser.run(progress: { n, total, cells in
            bar.total = total ?? 0
            bar.detail = ", \(cells) voxels"
            bar.update(to: n)
        })
        bar.finish()
        for w in src.warnings { warn("\(src.name): \(w)") }
        if let s = summary.stoppedBy {
            warn("stopped by \(StopSignals.name(s)) after \(summary.framesFused) frames; \(out) not written")
            throw ExitCode(128 + s)
        }
        if summary.framesWithoutPose > 0 { warn("\(summary.framesWithoutPose) frames without a pose left out") }
        guard summary.framesFused > 0 else {
            throw DepthKitError.file(path: spec.path ?? spec.description, problem: "no frame has both depth and a pose; nothing to fuse")
        }
        try PLYWriter.write(cloud, to: out, ascii: ascii)
        print("wrote \(out) (\(cloud.count) points from \(summary.pointsAdded) in \(summary.framesFused) frames, voxel \(fuser.voxelSize) m, \(ascii ? "ascii" : "binary_little_endian"))")
    }
}
