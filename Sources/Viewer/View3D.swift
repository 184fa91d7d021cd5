/// The 3D view, both halves owned by the window (`ViewerApp.view3D`): its camera, mouse and picks
/// (`input`), and its pictures and point layers (`scene`, nil when the point-cloud renderer cannot
/// be made on this device), which `PresentComposer` draws into the window.
struct View3D {
    let input: Scene3DInput
    let scene: Scene3D?
}
