import Foundation

/// The window's side of `--source ply:FILE` (hooks: after a source opens here, and the 3D draw in
/// `PresentComposer`).
extension ViewerApp {
    /// Uploads the source's point list to the 3D view (or clears it) and starts in 3D for one.
    func showPointList() throws {
        let contents = session.takePointList()
        guard let scene3D = composer.scene3D else {
            if contents != nil { notice("the 3D view is not available in this build: a PLY point list cannot be shown", isError: true) }
            return
        }
        try scene3D.setPointList(contents)
        if let list = scene3D.pointList {
            view = .threeD
            logUI("point list \(list.cloud.count) points, \(list.hasColor ? "colored" : "colored by height")")
        }
    }
}
