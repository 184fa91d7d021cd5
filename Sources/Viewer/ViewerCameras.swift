import Capture
import Foundation

/// The panel's camera list: the cameras present now (`CameraCatalog`, listed again when the
/// inotify watcher on /dev reports a node added or removed, never per frame), grouped by device;
/// a click opens one as the source.
extension ViewerApp {
    /// The catalog over /dev; without inotify it says so once and lists again only on "rescan".
    static func makeCameraCatalog(log: ViewerLog) -> CameraCatalog {
        let catalog = CameraCatalog()
        if let problem = catalog.watchProblem {
            log.notice("camera watch: \(problem); the camera list changes on rescan, an unplugged camera is looked for once a second")
        }
        return catalog
    }

    /// The "Cameras" section: one line per device, a button per way to open it; then the DDS image
    /// topics, listened for on a thread of their own when asked (the button), never on this one.
    /// The texts were made when the lists were (no allocation per frame).
    func buildCameraList() {
        let menu = session.cameras.menu
        if menu.groups.isEmpty { UI.text("no cameras") }
        buildMenuGroups(menu)
        if session.cameras.watchProblem != nil { UI.text("not watching /dev: rescan to update") }
        if UI.button("rescan cameras") { session.cameras.refresh() }
        let dds = session.cameras.dds, state = dds.state
        if let m = state.menu {
            if m.groups.isEmpty { UI.text("no DDS image topics heard") }
            buildMenuGroups(m)
        }
        if let p = state.problem { UI.text(p) }
        if state.listening {
            UI.text(dds.listeningText)
        } else if UI.button(dds.listenLabel) {
            dds.listen()
        }
    }

    private func buildMenuGroups(_ menu: CameraMenu) {
        for group in menu.groups {
            UI.text(group.title)
            for entry in group.entries {
                if UI.button(entry.label) { openCamera(entry.source) }
                if entry.source == session.name {
                    UI.sameLine()
                    UI.text("(open)")
                }
            }
        }
    }

    /// Puts `source` in the source field and opens it, as typing it and pressing reopen would.
    private func openCamera(_ source: String) {
        ui.sourceText = Array(source.utf8CString) + [CChar](repeating: 0, count: 1024)
        reopenSource()
    }
}
