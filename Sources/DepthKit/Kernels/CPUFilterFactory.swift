/// Builds the CPU reference kernels for `FilterSpec`s; backendName "cpu".
public final class CPUFilterFactory: FilterFactory, Sendable {
    public let backendName = "cpu"

    public init() {}

    public func makeFilter(_ spec: FilterSpec) throws -> FilterRenderer {
        switch spec {
        case .rosy: return RosyFilter()
        case .colorMatrix(let m): return ColorMatrixFilter(matrix: m)
        case let .grayscale(offset, range): return DepthToGrayscaleFilter(offset: offset, range: range)
        case let .colormap(map, range): return DepthColormapFilter(colormap: map, range: range)
        }
    }

    public func makeMixer(mixFactor: Float) throws -> MixerRenderer {
        ImageMixer(mixFactor: mixFactor)
    }
}
