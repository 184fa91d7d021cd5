import Capture
import DepthKit
import Foundation

/// What `depthlens view` was asked for (the CLI fills it; tests and scripts rely on the flags).
public struct ViewerOptions: Sendable {
    public enum View: String, Sendable { case twoD = "2d", threeD = "3d" }

    /// `--source`, parsed once by the CLI: what the window opens (and an export opens again).
    public var source: SourceSpec = .synthetic
    public var depthScale: Float?
    public var mode: PreviewMode = PreviewMode.all[0]
    public var view: View = .twoD
    public var backend: ViewerBackend = .auto
    public var vsync = true
    public var snapshotDir = "snapshots"
    /// Start paused (on frame `frame` when given).
    public var paused = false
    public var frame: Int?
    /// Quit by itself after this many seconds (tests, benchmarks).
    public var exitAfter: Double?
    /// Quit by itself after this many displayed frames (the steady-state check, soak runs).
    public var exitAfterFrames: Int?
    /// Print the readout line to stdout on each click.
    public var logReadout = false
    /// Print UI events (mode changes, widget rectangles, snapshots) to stdout for tests.
    public var logUI = false
    /// Print FPS and per-stage milliseconds to stdout once a second.
    public var stats = false
    public var watchShaders = false
    /// Run upload and kernels for every displayed frame, even when neither the frame nor the
    /// settings changed (timing the pipeline; normally the last output is presented again).
    public var reprocess = false
    public var showPanel = true
    public var width = 1280
    public var height = 720
    public var mix: Float = 0.5
    public var colormap: Colormap = .jet
    public var fps: Double?
    public var loop = false
    /// `--smooth …`: depth smoothing from the start.
    public var smoothing = DepthSmoothingSettings()
    /// `--calibration FILE` / `--intrinsics`: over what the source recorded.
    public var calibration = CalibrationOverride()
    /// `--ctrl` / `--no-restore`: what a V4L2 source does with its cameras' controls on open.
    public var cameraControls = V4L2ControlOptions()
    /// `--align auto|none`: depth aligned to color when the cameras differ (auto), or raw depth.
    public var align: AlignMode = .auto
    /// `--record-rgbd`: Ctrl+R records RGB-D as Matroska (the panel's "RGB-D as mkv").
    public var recordRGBD = false
    /// `--export-dir DIR|FILE.mcap|FILE.mp4|FILE.mkv`: the panel's export folder or file (Ctrl+E
    /// exports into it; the kind follows the name); the section starts open.
    public var exportDir: String?
    /// `--source ply:FILE` already read by the CLI (with its progress bar), so a bad file fails before a window opens.
    public var pointList: PointListHandoff?
    /// `--points compute|raster|cpu`: how the 3D view draws points (nil: cpu on a CPU Vulkan device
    /// such as lavapipe, where the CPU renderer is 3–5× faster than lavapipe's compute, else compute).
    public var points: PointDrawing?
    /// `--edl` / `--no-edl`: the 3D view's eye-dome lighting (nil: on for a PLY without colors, else off).
    public var edl: Bool?
    /// `--spin DEG`: the 3D view orbits by itself at this many degrees a second (benchmarks of a moving view).
    public var spinDegreesPerSecond: Double?
    /// When `depthlens view` started (`monotonicSeconds()`): `--stats` prints a point list's load
    /// times from here.
    public var startedAt: Double?

    public init() {}
}

/// `--backend` in the window: where the kernels that have both ports run.
public enum ViewerBackend: String, CaseIterable, Sendable {
    case gpu, cpu, auto

    public static func named(_ s: String) throws -> ViewerBackend {
        guard let b = ViewerBackend(rawValue: s.lowercased()) else {
            throw DepthKitError.invalidArgument("--backend must be cpu, gpu or auto, got '\(s)'")
        }
        return b
    }

    var next: ViewerBackend {
        let all = ViewerBackend.allCases
        return all[(all.firstIndex(of: self)! + 1) % all.count]
    }
}

/// Why the viewer could not start; each is one line for `depthlens: …`.
public enum ViewerError: Error, CustomStringConvertible {
    case noDisplay(String)
    case noVulkan(String)
    case window(String)

    public var description: String {
        switch self {
        case .noDisplay(let why):
            return "no display: \(why); the viewer needs a window. Without one, use the headless commands "
                + "`depthlens process`, `depthlens export-ply` or `depthlens render3d`"
        case .noVulkan(let why): return "no Vulkan device for the window: \(why)"
        case .window(let why): return "cannot open the window: \(why)"
        }
    }
}
