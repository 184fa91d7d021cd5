/// The 3D view, owned by the window (`ViewerApp.view3D`): its camera, mouse and picks (`input`);
/// its pictures and point layers (`scene`, nil when the point-cloud renderer cannot be made on this
/// device), which `PresentComposer` draws into the window; and where a posed source's frames are
/// placed (`world`: world coordinates, the camera path, the accumulated cloud; key W).
struct View3D {
    let input: Scene3DInput
    let scene: Scene3D?
    let world = SceneWorld()

    /// A PLY point list is shown in 3D (not the world view's points of a frame source).
    var showsPLY: Bool { scene?.pointList != nil && !world.ownsPointList }
}
