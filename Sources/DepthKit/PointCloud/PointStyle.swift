/// How points look, whichever renderer draws them: DepthKit's `CPUPointRenderer` and GPUKit's
/// `PointCloudRenderer` each hold one (`style`), so the viewer hands the GPU renderer's settings to
/// the CPU one, and keys a reusable picture, with one value rather than field by field. The color
/// range is not part of it: it follows each picture's points (`PointColorRange`).
public struct PointStyle: Equatable, Sendable {
    /// Point diameter in output pixels (each renderer clamps it to what it draws).
    public var pointSize: Float = 1
    /// Background, RGBA in [0, 1]; dark gray by default.
    public var clearColor: SIMD4<Float> = [0.1, 0.1, 0.1, 1]
    /// What colors points (the raster path always uses the color texel).
    public var colorBy: PointCloudColorBy = .color
    /// The colormap of `colorBy` depth / height.
    public var colormap: Colormap = .jet
    /// Eye-dome lighting after the resolve (off by default).
    public var eyeDomeLighting = EyeDomeLighting()
    /// Adaptive point size (0: off): `AdaptivePointSize`'s scale.
    public var adaptiveSizeScale: Float = 0

    public init(pointSize: Float = 1, clearColor: SIMD4<Float> = [0.1, 0.1, 0.1, 1], colorBy: PointCloudColorBy = .color,
                colormap: Colormap = .jet, eyeDomeLighting: EyeDomeLighting = EyeDomeLighting(), adaptiveSizeScale: Float = 0) {
        self.pointSize = pointSize; self.clearColor = clearColor; self.colorBy = colorBy; self.colormap = colormap
        self.eyeDomeLighting = eyeDomeLighting; self.adaptiveSizeScale = adaptiveSizeScale
    }
}
