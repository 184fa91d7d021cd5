import Capture
import Foundation

/// `view --spin DEG`: the 3D view orbits by itself, so a moving view can be timed without a mouse
/// (scripts/bench-view3d), and `--stats` reports a point list's load times.
extension ViewerApp {
    /// Turns the 3D camera about its center by the rate × the time since the last frame (the
    /// first frame of a camera only starts the clock). A drag still moves the view on top.
    func spinView(now: Double) {
        guard let rate = options.spinDegreesPerSecond, view == .threeD else { return }
        defer { view3D.input.spunAt = now }
        guard let last = view3D.input.spunAt, var camera = view3D.input.camera else { return }
        camera.orbit(yaw: Float((now - last) * rate * .pi / 180), pitch: 0)
        view3D.input.camera = camera
    }

    /// With `--stats` and `--source ply:FILE`, after the first frame was presented: how long since
    /// `view` started (the load's stages are printed by `showPointList`).
    func reportFirstFrame() {
        guard options.stats, options.pointList != nil, stats.framesShown == 1, let start = options.startedAt else { return }
        print(String(format: "load: first frame presented %.2f s after start", monotonicSeconds() - start))
        fflush(nil)
    }
}
