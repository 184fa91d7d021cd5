import ArgumentParser
import DepthKit
import Foundation
import GPUKit

/// Reads a PLY for `render3d --ply` and `view --source ply:`, with a progress bar on standard
/// error once the load has taken a second.
enum PLYLoading {
    static func load(_ path: String) throws -> PLYContents {
        let start = DispatchTime.now()
        var bar: ProgressBar?
        let contents = try PLYReader.load(path) { done, total in
            if bar == nil, Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) > 1e9 {
                bar = ProgressBar(total: max(total / 1_048_576, 1), label: "load \((path as NSString).lastPathComponent)")
                bar?.unit = "MiB"
            }
            if let total = bar?.total { bar?.update(to: min(done / 1_048_576, total)) }
        }
        bar?.finish()
        return contents
    }
}

extension PointCloudMethod: ExpressibleByArgument {}
extension PointCloudColorBy: ExpressibleByArgument {}
