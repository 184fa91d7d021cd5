import ArgumentParser
import DepthKit
import Foundation

struct ExportPLYCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export-ply",
        abstract: "Unproject a depth map (colored by the color image) to a PLY point cloud.",
        discussion: "Points use the depth camera's intrinsics; when the color camera is another one (a RealSense or Azure Kinect recording, a calibration.json), each point is colored by projecting it into the color image."
    )

    @OptionGroup var input: RGBDInputOptions
    @Flag(help: "Write ASCII PLY instead of binary little-endian.")
    var ascii = false
    @Option(help: "Output .ply file.")
    var out: String

    func run() throws {
        let frame = try input.load()
        // Depth and color from different cameras: each point takes the color pixel it projects to.
        let cloud = frame.calibration.map { $0.needsAlignment } == true
            ? PointCloud.unproject(depth: frame.depth!, color: ImageIO.toEightBit(frame.color), calibration: frame.calibration!)
            : PointCloud.unproject(depth: frame.depth!, color: ImageIO.toEightBit(frame.color))
        try PLYWriter.write(cloud, to: out, ascii: ascii)
        print("wrote \(out) (\(cloud.positions.count) points, \(ascii ? "ascii" : "binary_little_endian"))")
    }
}
