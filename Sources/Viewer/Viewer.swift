/// Viewer
