import ArgumentParser
import DepthKit
import Foundation

struct ExportPLYCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export-ply",
        abstract: "Unproject a depth map (colored by the color image) to a PLY point cloud."
    )

    @OptionGroup var input: RGBDInputOptions
    @Flag(help: "Write ASCII PLY instead of binary little-endian.")
    var ascii = false
    @Option(help: "Output .ply file.")
    var out: String

    func run() throws {
        let frame = try input.load()
        let cloud = PointCloud.unproject(depth: frame.depth!, color: frame.color)
        try PLYWriter.write(cloud, to: out, ascii: ascii)
        print("wrote \(out) (\(cloud.positions.count) points, \(ascii ? "ascii" : "binary_little_endian"))")
    }
}
