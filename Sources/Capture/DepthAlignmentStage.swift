import DepthKit

/// When to align depth to the color camera.
public enum AlignMode: String, CaseIterable, Sendable {
    /// Whenever the calibration says depth and color are different cameras (the default where
    /// depth and color pixels are combined: the viewer, `process`).
    case auto
    /// Always (`convert --align color`): depth comes out at the color size, seen by the color camera.
    case color
    /// Never: raw depth with its own intrinsics.
    case none

    public static func named(_ s: String) throws -> AlignMode {
        guard let m = AlignMode(rawValue: s.lowercased()) else {
            throw DepthKitError.invalidArgument("--align must be one of \(allCases.map(\.rawValue).joined(separator: ", ")), got '\(s)'")
        }
        return m
    }
}

/// Depth aligned to color between a source and the consumers that combine depth with color
/// pixels (blends, masks, effects, snapshots, exports): each valid depth pixel reprojected into
/// the color camera exactly as librealsense's `align` does (`DepthAligner`), the nearest kept,
/// holes 0. The frame's depth then has the color image's size and the color camera's intrinsics,
/// and the calibration says so (`RGBDCalibration.alignedToColor`). Buffers are pooled: nothing is
/// allocated per frame in steady state.
public final class DepthAlignmentStage {
    public var mode: AlignMode
    private let aligner = DepthAligner()

    public init(mode: AlignMode = .auto) { self.mode = mode }

    /// Whether `calibration` gets aligned under this mode.
    public func aligns(_ calibration: RGBDCalibration) -> Bool {
        switch mode {
        case .auto: return calibration.needsAlignment
        case .color: return true
        case .none: return false
        }
    }

    /// The frame with its depth aligned to color (unchanged when this mode does not align it or it
    /// has no depth), and the calibration that then holds.
    public func apply(_ frame: FrameSet, calibration: RGBDCalibration) throws -> (FrameSet, RGBDCalibration) {
        guard let depth = frame.depth, aligns(calibration) else { return (frame, calibration) }
        var c = calibration
        // The color camera at the color image's size (intrinsics may be given for another).
        c.color = c.color.scaled(toWidth: frame.color.width, height: frame.color.height)
        c.depth = c.depth.scaled(toWidth: depth.map.width, height: depth.map.height)
        let aligned = try aligner.align(depth: depth.depthFloat32(), calibration: c)
        var out = frame
        out.depth = DepthData(map: aligned, accuracy: depth.accuracy, intrinsics: c.color.intrinsics)
        return (out, c.alignedToColor)
    }
}
