import Capture
import DepthKit
import GPUKit

extension Scene3D {
    /// Shows one file of a PLY sequence (`ply:DIR`): refills the point buffer in place when the
    /// cloud fits (a loop of same-sized files allocates nothing on the device), else uploads a new
    /// one. The home view stays the first file's (`PointListState.framing`, the camera and picks
    /// are kept), so the picture does not jump from frame to frame. True when the buffer was reused.
    @discardableResult
    func showSequenceFrame(_ contents: PLYContents) throws -> Bool {
        guard var list = pointList else {
            try setPointList(contents)
            return false
        }
        var reused = try list.cloud.replace(with: contents.cloud)
        if !reused {
            list.cloud = try GPUPointCloud(renderer: renderer, cloud: contents.cloud)
            reused = false
        }
        if list.hasColor != contents.hasColor {
            renderer.colorBy = contents.hasColor ? .color : .height
            list.hasColor = contents.hasColor
        }
        list.positions = contents.cloud.positions
        list.colors = contents.hasColor ? contents.cloud.colors : []
        cloudHover.pointsChanged()
        list.host = CPUPointList(cloud: contents.cloud)
        try makeSubsets(&list, contents.cloud)
        list.drawnKey = nil   // refilled in place: the same buffer, new points
        pointList = list
        return reused
    }
}
