import Capture
import DepthKit
import Foundation

/// `--source ply:FILE`: a PLY point list for the 3D view. It delivers no frames (there is no color
/// or depth image: the 2D view has nothing to show); `Scene3D` draws `contents` from its own home view.
final class PointListSource: FrameSource {
    let path: String
    /// The points until the 3D view has uploaded them (`take()`); the window keeps no host copy after.
    private var contents: PLYContents?
    var name: String { "ply:\(path)" }
    var intrinsics: CameraIntrinsics { .default(width: 1280, height: 720) }
    var isLive: Bool { false }

    init(path: String, contents: PLYContents) {
        self.path = path
        self.contents = contents
    }

    /// The points, once: the caller uploads them and lets the host copy go.
    func take() -> PLYContents? {
        defer { contents = nil }
        return contents
    }

    func start() throws {}
    func stop() {}
    func nextFrame(now: Double) throws -> FrameSet? { nil }
}

/// `ViewerOptions.pointList`: a PLY the CLI read (with its progress bar) before the window opened,
/// handed to the window once so that no copy of the points outlives their upload.
public final class PointListHandoff: @unchecked Sendable {
    private let lock = NSLock()
    private var contents: PLYContents?

    public init(_ contents: PLYContents) { self.contents = contents }

    /// The contents on the first call, nil after.
    func take() -> PLYContents? {
        lock.withLock {
            defer { contents = nil }
            return contents
        }
    }
}
