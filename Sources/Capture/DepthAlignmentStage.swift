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
        var out = frame
        let c: RGBDCalibration
        (out.depth, c) = try align(depth, colorWidth: frame.color.width, colorHeight: frame.color.height, calibration: calibration)
        return (out, c)
    }

    /// Depth aligned to a color image of the size given (unchanged when this mode does not align
    /// it), and the calibration that then holds. The result is pooled: valid until the next call.
    public func align(_ depth: DepthData, colorWidth: Int, colorHeight: Int,
                      calibration: RGBDCalibration) throws -> (DepthData, RGBDCalibration) {
        guard let c = cameras(calibration, colorWidth: colorWidth, colorHeight: colorHeight,
                              depthWidth: depth.map.width, depthHeight: depth.map.height) else { return (depth, calibration) }
        let aligned = try aligner.align(depth: depth.depthFloat32(), calibration: c)
        return (DepthData(map: aligned, accuracy: depth.accuracy, intrinsics: c.color.intrinsics), c.alignedToColor)
    }

    /// The calibration `align` gives for images of these sizes, without aligning anything.
    public func calibration(_ calibration: RGBDCalibration, colorWidth: Int, colorHeight: Int,
                            depthWidth: Int, depthHeight: Int) -> RGBDCalibration {
        cameras(calibration, colorWidth: colorWidth, colorHeight: colorHeight, depthWidth: depthWidth, depthHeight: depthHeight)?
            .alignedToColor ?? calibration
    }

    /// Both cameras at their images' sizes (intrinsics may be given for others); nil when this
    /// mode does not align `calibration`.
    private func cameras(_ calibration: RGBDCalibration, colorWidth: Int, colorHeight: Int,
                         depthWidth: Int, depthHeight: Int) -> RGBDCalibration? {
        guard aligns(calibration) else { return nil }
        var c = calibration
        c.color = c.color.scaled(toWidth: colorWidth, height: colorHeight)
        c.depth = c.depth.scaled(toWidth: depthWidth, height: depthHeight)
        return c
    }
}
