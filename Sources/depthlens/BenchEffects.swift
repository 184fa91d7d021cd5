import DepthKit
import GPUKit
import Foundation

/// `bench` rows of the depth masks and effects (both backends through `FilterFactory`).
extension BenchKernel {
    /// A mask from the frame's depth at the color size; gray8.
    static func mask(_ name: String, _ spec: DepthMaskSpec) -> BenchKernel {
        BenchKernel(name: name, input: { $0.depth.map }) { factory, frame in
            let r = try factory.makeMask(spec, outputWidth: frame.color.width, outputHeight: frame.color.height)
            try r.prepare(input: frame.depth.map.frameFormat, outputRetainedBufferCountHint: 2)
            return Prepared(renderer: r) { try r.render(frame.depth.map) }
        }
    }

    /// An effect on the frame's color by a mask of its depth; greenscreen with solid green.
    static func effect(_ name: String, _ kind: DepthEffectKind, _ spec: DepthMaskSpec) -> BenchKernel {
        BenchKernel(name: name, input: { $0.color }) { factory, frame in
            let r = try factory.makeEffect(kind, mask: spec)
            try r.prepare(input: frame.color.frameFormat, secondInput: frame.depth.map.frameFormat, outputRetainedBufferCountHint: 2)
            return Prepared(renderer: r) { try r.render(frame.color, frame.depth.map) }
        }
    }

    /// highpass, bandpass (soft and sharp), comic, greenscreen, blur, portrait.
    static let depthEffects: [BenchKernel] = [
        .mask("highpass", DepthMaskSpec(kind: .highpass, focus: 0.5)),
        .mask("bandpass", DepthMaskSpec(kind: .bandpass, focus: 0.5)),
        .mask("bandpassSharp", DepthMaskSpec(kind: .bandpass, focus: 0.5, slope: DepthMaskFilter.sharpSlope)),
        .effect("comic", .comic, DepthMaskSpec(focus: 0.5)),
        .effect("greenscreen", .greenscreen, DepthMaskSpec(focus: 0.5)),
        .effect("blur", .blur, DepthMaskSpec(focus: 0.5)),
        .effect("portrait", .blur, .portrait(focus: 0.5)),
    ]
}

extension GPUDepthEffectFilter: DispatchTimed { var lastDispatchMs: Double? { lastTiming?.dispatchMs } }
