import Foundation

/// The window's side of `--source ply:FILE` and `ply:DIR` (hooks: after a source opens here, each
/// frame after the source is polled, and the 3D draw in `PresentComposer`).
extension ViewerApp {
    /// Uploads the source's point list to the 3D view (or clears it) and starts in 3D for one; a
    /// PLY sequence clears it too and starts in 3D, its files arriving in `showSequenceFrame`.
    func showPointList() throws {
        let contents = session.ply.takePointList()
        guard let scene3D = view3D.scene else {
            if contents != nil || session.ply.sequence != nil {
                notice("the 3D view is not available in this build: a PLY point list cannot be shown", isError: true)
            }
            return
        }
        scene3D.redrawsAlways = options.reprocess || options.watchShaders
        try scene3D.setPointList(contents)
        if let list = scene3D.pointList {
            view = .threeD
            if options.stats {
                let read = stats.framesShown == 0 ? options.pointList?.readSeconds : nil
                print("load: \(list.cloud.count) points:" + (read.map { String(format: " read and parse %.2f s,", $0) } ?? "")
                      + String(format: " GPU upload %.2f s, host copy %.2f s", list.loadSeconds.upload, list.loadSeconds.host))
                fflush(nil)
            }
            logUI("point list \(list.cloud.count) points, \(list.hasColor ? "colored" : "colored by height")")
        } else if let q = session.ply.sequence {
            view = .threeD
            logUI("ply sequence \(q.count) files")
        }
    }

    /// Once a frame, after the source is polled: a PLY the panel opened that finished loading is
    /// shown, and the PLY sequence's newest loaded file goes to the 3D view.
    func pollPointLists() {
        if session.finishLoad() {
            depth.reset()
            do { try showPointList() } catch { notice("cannot show \(session.name): \(error)", isError: true) }
            notice("opened \(session.name)")
        }
        showSequenceFrame()
    }

    /// Hands the PLY sequence's newest loaded file to the 3D view (after the frame in flight was
    /// waited for, so its point buffer can be refilled in place).
    func showSequenceFrame() {
        guard let frame = session.takeSequenceFrame(), let scene3D = view3D.scene else { return }
        do {
            let reused = try scene3D.showSequenceFrame(frame.contents)
            logUI("ply frame \(frame.index) \(frame.name) \(frame.contents.cloud.count) points\(reused ? " (buffer reused)" : "")")
        } catch {
            notice("cannot show \(frame.name): \(error)", isError: true)
        }
    }
}
