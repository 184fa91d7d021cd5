import DepthKit

/// What the panel and the keys change between frames; the frame processor reads it every frame.
public struct ViewSettings: Equatable, Sendable {
    /// The 2D or the 3D view (Tab, the panel; `view --3d`).
    public var view: ViewerOptions.View = .twoD
    public var mode: PreviewMode
    /// Off shows the original color image whatever the mode.
    public var filterOn = true
    /// Off ignores depth: depth modes show the color image and the readout is off.
    public var depthOn = true
    /// Colormap mode: blend the colored depth with the color image by `mix` (TrueDepthStreamer).
    public var blend = true
    /// 0 = color, 1 = colored depth.
    public var mix: Float = 0.5
    public var colormap: Colormap = .jet
    /// Histogram-equalized colormap (default) or the fixed range `rangeMin`…`rangeMax` meters.
    public var equalized = true
    public var rangeMin: Float = 0.5
    public var rangeMax: Float = 4
    /// Rosy through the color matrix (the CIColorMatrix way) instead of the rosy shader.
    public var rosyMatrix = false
    public var backend: ViewerBackend = .gpu
    /// Focus of the depth masks (normalized disparity, 0 far … 1 near).
    public var focus: Float = 0.5
    /// Depth smoothing (Z, the panel, `--smooth`), before every depth consumer.
    public var smoothing = DepthSmoothingSettings()
    /// Depth aligned to the color camera when the source's cameras differ (off: raw depth with its
    /// own intrinsics, for comparison).
    public var alignDepth = true

    public init(mode: PreviewMode) { self.mode = mode }

    var depthRange: DepthRange {
        equalized ? .equalized(minDepth: 0, maxDepth: 16, binsPerMeter: 1000)
                  : .fixed(min: rangeMin, max: max(rangeMax, rangeMin + 0.001))
    }

    /// The backend the GPU-ported kernels use now.
    var kernelsOnGPU: Bool { backend != .cpu }

    mutating func cycleColormap() {
        let all = Colormap.allCases
        colormap = all[((all.firstIndex(of: colormap) ?? 0) + 1) % all.count]
    }
}
