import DepthKit

extension BenchKernel {
    /// Colormap rows beside JET and Turbo: Viridis (equalized). The masks and effects have their
    /// rows in `depthEffects`.
    static let moreColormapRows: [BenchKernel] = [
        .filter("viridis", .colormap(.viridis, .defaultEqualized)),
    ]
}
