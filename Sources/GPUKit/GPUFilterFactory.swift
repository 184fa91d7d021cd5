import DepthKit
import Foundation

/// Builds GPU renderers for `FilterSpec`s: the GPU counterpart of `CPUFilterFactory`.
///
/// Renderers of one factory share its `TextureCache` (and so images of shared inputs).
public final class GPUFilterFactory: FilterFactory {
    public let context: GPUContext
    public let textureCache: TextureCache
    public let library: ShaderLibrary
    /// The device's name.
    public var backendName: String { context.name }
    /// New renderers poll their shader files and rebuild on change (`--watch-shaders`).
    public var watchesShaders = false

    /// - Parameters:
    ///   - context: defaults to `GPUContext.shared()`.
    ///   - library: defaults to `ShaderLibrary.shared()`.
    ///   - allowHostImport: false forces staging uploads (for tests and comparisons).
    public init(context: GPUContext? = nil, library: ShaderLibrary? = nil, allowHostImport: Bool = true) throws {
        let ctx = try context ?? GPUContext.shared()
        self.context = ctx
        self.library = try library ?? ShaderLibrary.shared()
        textureCache = try TextureCache(context: ctx, allowHostImport: allowHostImport)
    }

    /// A `GPUFilter` (with `lastTiming`); typed as the protocol for `FilterFactory`.
    public func makeFilter(_ spec: FilterSpec) throws -> FilterRenderer {
        try makeGPUFilter(spec)
    }

    public func makeGPUFilter(_ spec: FilterSpec) throws -> GPUFilter {
        let f: GPUFilter
        switch spec {
        case .rosy: f = try GPURosyFilter(context: context, cache: textureCache, library: library)
        case .colorMatrix(let m): f = try GPUColorMatrixFilter(matrix: m, context: context, cache: textureCache, library: library)
        case let .grayscale(offset, range):
            f = try GPUDepthToGrayscaleFilter(offset: offset, range: range, context: context, cache: textureCache, library: library)
        case let .colormap(map, range):
            return try makeColormapFilter(map, range: range)
        }
        f.watchesShaders = watchesShaders
        return f
    }

    /// The depth colormap kernel as its own type (its colormap and range are settable between frames).
    public func makeColormapFilter(_ colormap: Colormap, range: DepthRange) throws -> GPUDepthColormapFilter {
        let f = try GPUDepthColormapFilter(colormap: colormap, range: range, context: context, cache: textureCache, library: library)
        f.watchesShaders = watchesShaders
        return f
    }

    public func makeMixer(mixFactor: Float) throws -> MixerRenderer {
        try makeGPUMixer(mixFactor: mixFactor)
    }

    public func makeGPUMixer(mixFactor: Float) throws -> GPUFragmentMixer {
        let m = try GPUFragmentMixer(mixFactor: mixFactor, context: context, cache: textureCache, library: library)
        m.watchesShaders = watchesShaders
        return m
    }
}
