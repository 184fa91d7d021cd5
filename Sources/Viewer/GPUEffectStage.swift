import CVulkan
import DepthKit
import Foundation
import GPUKit

/// The depth-mask modes (mask, comic, green screen, blur, portrait) on the GPU, recorded into
/// the frame's command buffer: upload → depth stats → (summed-area table) → mask or effect, with
/// the mask scaled from the depth size to the color size inside the kernel; nothing read back.
final class GPUEffectStage {
    let factory: GPUFilterFactory
    let recorder: GPUFrameRecorder
    private var masks: [String: GPUDepthMaskFilter] = [:]
    private var effects: [String: GPUDepthEffectFilter] = [:]
    private var targets: [String: PixelBuffer] = [:]

    init(factory: GPUFilterFactory, recorder: GPUFrameRecorder) {
        self.factory = factory
        self.recorder = recorder
    }

    /// The mask a mode uses: soft high-pass, or portrait's sharp one.
    static func maskSpec(_ stage: PreviewMode.Stage, focus: Float) -> DepthMaskSpec {
        stage == .portrait ? .portrait(focus: focus) : DepthMaskSpec(kind: .highpass, focus: focus)
    }

    static func effectKind(_ stage: PreviewMode.Stage) -> DepthEffectKind? {
        switch stage {
        case .effect(let k): return k
        case .portrait: return .blur
        case .original, .rosy, .grayscale, .colormap, .mask: return nil
        }
    }

    /// Shader errors of the kernels in use (`--watch-shaders`).
    var shaderErrors: [String] {
        masks.values.compactMap { $0.lastShaderError.map { "\($0)" } } + effects.values.compactMap { $0.lastShaderError.map { "\($0)" } }
    }

    private func target(_ name: String, _ w: Int, _ h: Int) throws -> GPUTexture {
        if let b = targets[name], b.width == w, b.height == h { return try recorder.target(for: b) }
        let b = PixelBuffer(width: w, height: h, format: .rgba8)
        targets[name] = b
        return try recorder.target(for: b)
    }

    /// Records `stage` for `color` and `depth`; the result (rgba8, the color's size) stays on the GPU.
    func record(_ cb: VkCommandBuffer, stage: PreviewMode.Stage, name: String, color: PixelBuffer, depth: PixelBuffer,
                focus: Float, timed: (String, () throws -> Void) throws -> Void, mark: (String) -> Void) throws -> GPUTexture {
        let spec = Self.maskSpec(stage, focus: focus)
        guard let kind = Self.effectKind(stage) else {
            var td: GPUTexture!
            try timed("upload") { td = try recorder.upload(cb, depth) }
            mark("upload")
            let key = "\(color.width)x\(color.height)"
            let f: GPUDepthMaskFilter
            if let existing = masks[key] { f = existing } else {
                f = try factory.makeGPUMask(spec, outputWidth: color.width, outputHeight: color.height)
                masks = [key: f]
            }
            f.spec = spec
            if f.inputFormat != depth.frameFormat { try f.prepare(input: depth.frameFormat, outputRetainedBufferCountHint: 1) }
            let out = try target("mask", color.width, color.height)
            try timed(name) { try recorder.apply(cb, f, input: td, output: out) }
            mark(name)
            return out
        }
        var tc: GPUTexture!, td: GPUTexture!
        try timed("upload") { tc = try recorder.upload(cb, color); td = try recorder.upload(cb, depth) }
        mark("upload")
        let e: GPUDepthEffectFilter
        if let existing = effects[kind.rawValue] { e = existing } else {
            e = try factory.makeGPUEffect(kind, mask: spec)
            effects[kind.rawValue] = e
        }
        e.mask = spec
        if e.inputFormat != color.frameFormat || e.secondInputFormat != depth.frameFormat {
            try e.prepare(input: color.frameFormat, secondInput: depth.frameFormat, outputRetainedBufferCountHint: 1)
        }
        let out = try target("effect", color.width, color.height)
        try timed(name) { try recorder.applyEffect(cb, e, color: tc, depth: td, output: out) }
        mark(name)
        return out
    }

    /// `--backend auto`: what renders `stage` once on either backend (the synchronous paths).
    func autoRun(stage: PreviewMode.Stage, color: PixelBuffer, depth: PixelBuffer, focus: Float) throws -> (Bool) throws -> Void {
        let spec = Self.maskSpec(stage, focus: focus)
        let cpu = CPUFilterFactory()
        if let kind = Self.effectKind(stage) {
            let g = try factory.makeEffect(kind, mask: spec), c = try cpu.makeEffect(kind, mask: spec)
            for r in [g, c] as [EffectRenderer] {
                try r.prepare(input: color.frameFormat, secondInput: depth.frameFormat, outputRetainedBufferCountHint: 1)
            }
            return { gpu in _ = try (gpu ? g : c).render(color, depth) }
        }
        let g = try factory.makeMask(spec, outputWidth: color.width, outputHeight: color.height)
        let c = try cpu.makeMask(spec, outputWidth: color.width, outputHeight: color.height)
        for r in [g, c] { try r.prepare(input: depth.frameFormat, outputRetainedBufferCountHint: 1) }
        return { gpu in _ = try (gpu ? g : c).render(depth) }
    }
}
