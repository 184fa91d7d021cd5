import CVulkan
import Foundation

/// The window's side of `--source ply:FILE` (hooks in ViewerApp: after a source opens, and the 3D draw).
extension ViewerApp {
    /// Uploads the source's point list to the 3D view (or clears it) and starts in 3D for one.
    func showPointList() throws {
        let contents = (source as? PointListSource)?.take()
        guard let scene3D else {
            if contents != nil { notice("the 3D view is not available in this build: a PLY point list cannot be shown", isError: true) }
            return
        }
        try scene3D.setPointList(contents)
        if let list = scene3D.pointList {
            view = .threeD
            logUI("point list \(list.cloud.count) points, \(list.hasColor ? "colored" : "colored by height")")
        }
    }

    /// Records the point list; false (with a notice) when it failed.
    func recordPointList(_ cb: VkCommandBuffer, _ scene3D: Scene3D, now: Double, mark: (String) -> Void) -> Bool {
        do {
            scene3D.renderer.colormap = settings.colormap
            try processor.recorder.frame {
                try scene3D.recordPointList(cb, recorder: processor.recorder, width: Int(swapchain.extent.width),
                                            height: Int(swapchain.extent.height), now: now, mark: mark)
            }
            return true
        } catch {
            notice("frame failed: \(error)", isError: true, seconds: 3)
            return false
        }
    }
}
