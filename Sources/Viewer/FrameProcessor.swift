import CVulkan
import Capture
import DepthKit
import Foundation
import GPUKit

/// Turns one `FrameSet` into the texture the window shows, recording into the frame's command
/// buffer: upload (texture cache) → compute kernels → fragment mixer, all on the GPU with no
/// readback. The depth-mask modes (mask, comic, green screen, blur, portrait) run on the GPU the
/// same way (`GPUEffectStage`); on the CPU backend they run once per source frame and setting,
/// cached while paused, and upload their result.
final class FrameProcessor {
    struct Output {
        /// The picture on the GPU; nil for a picture made on the CPU that the window copies in
        /// (`picturesByCopy`) until something needs it there (`FrameProcessor.texture(of:_:)`).
        var texture: GPUTexture?
        let width: Int
        let height: Int
        /// What was shown, for the status line ("jet blend 0.50 (GPU)").
        let label: String
        /// Set when the mode wanted something the frame lacks (no depth).
        let note: String?
        /// A blend left to the window's pass (`record(fuseMix: true)`): `texture` is the color,
        /// this the colormapped depth, mixed by `mixFactor` while drawing into the swapchain image.
        var mixWith: GPUTexture? = nil
        var mixFactor: Float = 0
        /// The CPU buffer `texture` was uploaded from, when the picture was made on the CPU (or is
        /// the source's own color): the window may copy it in instead of drawing the texture.
        var picture: PixelBuffer? = nil
    }

    let recorder: GPUFrameRecorder
    let factory: GPUFilterFactory
    private let cpu = CPUFilterFactory()
    /// The kernels made so far, kept by name and size, and the CPU pictures they draw into.
    private var kernels = Kernels()
    private struct Kernels {
        var gpu: [String: GPUFilter] = [:]
        /// The colormap kernel, one for every colormap and range (set per frame).
        var colormap: GPUDepthColormapFilter?
        var mixer: GPUFragmentMixer?
        var targets: [String: PixelBuffer] = [:]
        var cpu: [String: FilterRenderer] = [:]
        var cpuMixer: ImageMixer?
    }
    private var cpuCache: (key: CPUEffectKey, buffer: PixelBuffer, label: String)?
    /// `--backend auto`: per kernel and size, the backend BackendSelector measured as faster
    /// (remembered on disk per device, shared with `process --backend auto`).
    private lazy var selector = BackendSelector(deviceName: factory.backendName)
    /// Per kernel and size: on the GPU or not (what the selector chose).
    private var autoChoices: [String: Bool] = [:]
    /// The depth-mask modes on the GPU.
    private lazy var gpuEffects = GPUEffectStage(factory: factory, recorder: recorder)
    /// Lines for the status (what auto chose).
    private(set) var autoNotes: [String] = []
    /// CPU milliseconds of the last frame per kernel.
    private(set) var cpuTimes: [(String, Double)] = []
    /// The last output label, auto key and CPU colormap key, rebuilt only when their parts change
    /// (no allocation per frame).
    private var memos = Memos()
    private struct Memos {
        var label = TextMemo<OutputLabelParts>(), autoKey = TextMemo<AutoKeyParts>()
        var cpuColormapKey = TextMemo<CPUColormapKeyParts>()
    }

    /// The last relative depth as shown (`displayDepth`: scaled, or the map itself when in range),
    /// by the buffer and generation it came from.
    private var displayScaled: (source: PixelBuffer, generation: UInt64, scaled: PixelBuffer)?

    /// The depth the kernels show. Relative depth that goes past the equalized colormap's 16 units
    /// (a Lens Blur photo's GDepth without Units: 15 … 290 in its own scale) is scaled into them,
    /// so that the colormap spreads over it instead of giving most of it the last bin's color; the
    /// readouts, the status line and the 3D view keep the file's values. Made once per buffer.
    func displayDepth(_ depth: DepthData) -> PixelBuffer {
        let map = depth.depthFloat32()
        guard depth.accuracy == .relative else { return map }
        if let c = displayScaled, c.source === map, c.generation == map.generation { return c.scaled }
        let top = depth.depthStatistics().max
        guard top > 16 else {
            displayScaled = (map, map.generation, map)
            return map
        }
        let k = 16 / top
        let out = PixelBuffer(width: map.width, height: map.height, format: .depthFloat32)
        for y in 0..<map.height {
            let src = map.row(y, as: Float.self), dst = out.row(y, as: Float.self)
            for x in 0..<map.width { dst[x] = src[x] * k }
        }
        out.markModified()
        displayScaled = (map, map.generation, out)
        return out
    }

    /// Set by the window each frame: pictures made on the CPU will be copied into the swapchain
    /// image (`PictureCopy`), so they are not uploaded as textures (a GPU copy a frame saved).
    var picturesByCopy = false

    /// A picture made on the CPU (or the source's own color) as a texture, unless the window
    /// copies it in (`picturesByCopy`): then nil, and no upload.
    private func pictureTexture(_ cb: VkCommandBuffer, _ picture: PixelBuffer, mark: (String) -> Void) throws -> GPUTexture? {
        guard !picturesByCopy else { return nil }
        let t = try timed("upload") { try recorder.upload(cb, picture) }
        mark("upload")
        return t
    }

    /// `out`'s texture, uploading its picture now if it was left to the window's copy.
    func texture(of out: Output, _ cb: VkCommandBuffer) throws -> GPUTexture {
        if let t = out.texture { return t }
        guard let picture = out.picture else { throw GPUError.unsupported("the frame's output has neither a texture nor a picture") }
        return try recorder.upload(cb, picture)
    }

    init(factory: GPUFilterFactory) {
        self.factory = factory
        recorder = GPUFrameRecorder(cache: factory.textureCache)
    }

    /// Shader errors of the kernels in use (`--watch-shaders`), one line each.
    var shaderErrors: [String] {
        var e = (Array(kernels.gpu.values) + [kernels.colormap].compactMap { $0 }).compactMap { $0.lastShaderError.map { "\($0)" } }
        if let m = kernels.mixer?.lastShaderError { e.append("\(m)") }
        e += gpuEffects.shaderErrors
        return e
    }

    /// A buffer standing for a GPU-only image (its host memory is never read or written per frame).
    private func target(_ name: String, _ w: Int, _ h: Int) -> PixelBuffer {
        if let b = kernels.targets[name], b.width == w, b.height == h { return b }
        let b = PixelBuffer(width: w, height: h, format: .rgba8)
        kernels.targets[name] = b
        return b
    }

    private func gpuFilter(_ key: String, _ spec: FilterSpec, input: FrameFormat) throws -> GPUFilter {
        let f: GPUFilter
        if let existing = kernels.gpu[key] { f = existing } else {
            f = try factory.makeGPUFilter(spec)
            kernels.gpu[key] = f
        }
        if f.inputFormat != input { try f.prepare(input: input, outputRetainedBufferCountHint: 1) }
        return f
    }

    private func cpuFilter(_ key: String, _ spec: FilterSpec, input: FrameFormat) throws -> FilterRenderer {
        let f: FilterRenderer
        if let existing = kernels.cpu[key] { f = existing } else {
            f = try cpu.makeFilter(spec)
            kernels.cpu[key] = f
        }
        if f.inputFormat != input { try f.prepare(input: input, outputRetainedBufferCountHint: 2) }
        return f
    }

    private func timed<R>(_ name: String, _ body: () throws -> R) rethrows -> R {
        let t0 = DispatchTime.now().uptimeNanoseconds
        let r = try body()
        cpuTimes.append((name, Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e6))
        return r
    }

    /// Records the frame. `mark` writes a GPU timestamp after each stage (label = the stage just done).
    /// With `fuseMix`, the GPU blend is not run here but left to the window's pass (`Output.mixWith`).
    func record(_ cb: VkCommandBuffer, frame: FrameSet, settings s: ViewSettings, fuseMix: Bool = false,
                mark: (String) -> Void) throws -> Output {
        cpuTimes.removeAll(keepingCapacity: true)
        let color: PixelBuffer = frame.color.format == PixelFormat.rgba8 || frame.color.format == PixelFormat.bgra8 ? frame.color : ImageIO.toRGBA8(frame.color)
        let depthMap: PixelBuffer? = s.depthOn ? frame.depth.map(displayDepth) : nil
        let stage: PreviewMode.Stage = s.filterOn ? s.mode.stage : .original
        let needsDepth = stage != .original && stage != .rosy
        if needsDepth && depthMap == nil {
            let t = try pictureTexture(cb, color, mark: mark)
            return Output(texture: t, width: color.width, height: color.height, label: "original",
                          note: s.depthOn ? "this frame has no depth" : "depth is off", picture: color)
        }
        let onGPU = s.backend == .auto ? (autoChoices[autoKey(stage, s, color: color, depth: depthMap)] ?? true) : s.kernelsOnGPU
        switch stage {
        case .original:
            let t = try pictureTexture(cb, color, mark: mark)
            return Output(texture: t, width: color.width, height: color.height, label: "original", note: nil, picture: color)

        case .rosy:
            let spec: FilterSpec = s.rosyMatrix ? .colorMatrix(.rosy) : .rosy
            let name = s.rosyMatrix ? "colorMatrix" : "rosy"
            if onGPU {
                let input = try timed("upload") { try recorder.upload(cb, color) }
                mark("upload")
                let f = try gpuFilter(name, spec, input: color.frameFormat)
                let out = try recorder.target(for: target(name, color.width, color.height))
                try timed(name) { try recorder.apply(cb, f, input: input, output: out) }
                mark(name)
                return Output(texture: out, width: color.width, height: color.height, label: outputLabel(name, gpu: true), note: nil)
            }
            let f = try cpuFilter(name, spec, input: color.frameFormat)
            let b = try timed(name) { try f.render(color) }
            let t = try pictureTexture(cb, b, mark: mark)
            return Output(texture: t, width: b.width, height: b.height, label: outputLabel(name, gpu: false), note: nil, picture: b)

        case .grayscale:
            let d = depthMap!
            let spec = FilterSpec.grayscale(offset: nil, range: nil)
            if onGPU {
                let input = try timed("upload") { try recorder.upload(cb, d) }
                mark("upload")
                let f = try gpuFilter("grayscale", spec, input: d.frameFormat)
                let out = try recorder.target(for: target("grayscale", d.width, d.height))
                try timed("grayscale") { try recorder.apply(cb, f, input: input, output: out) }
                mark("grayscale")
                return Output(texture: out, width: d.width, height: d.height, label: "depth grayscale (GPU)", note: nil)
            }
            let f = try cpuFilter("grayscale", spec, input: d.frameFormat)
            let b = try timed("grayscale") { try f.render(d) }
            let t = try pictureTexture(cb, b, mark: mark)
            return Output(texture: t, width: b.width, height: b.height, label: "depth grayscale (CPU)", note: nil, picture: b)

        case .colormap:
            let d = depthMap!
            let spec = FilterSpec.colormap(s.colormap, s.depthRange)
            let name = s.colormap.rawValue
            if onGPU {
                let (tc, td) = try timed("upload") { (s.blend ? try recorder.upload(cb, color) : nil, try recorder.upload(cb, d)) }
                mark("upload")
                let f = try kernels.colormap ?? factory.makeColormapFilter(s.colormap, range: s.depthRange)
                kernels.colormap = f
                if f.inputFormat != d.frameFormat { try f.prepare(input: d.frameFormat, outputRetainedBufferCountHint: 1) }
                f.colormap = s.colormap
                f.range = s.depthRange
                let mapped = try recorder.target(for: target("colormap", d.width, d.height))
                try timed(name) { try recorder.apply(cb, f, input: td, output: mapped) }
                mark(name)
                guard s.blend, let tc else {
                    return Output(texture: mapped, width: d.width, height: d.height, label: outputLabel(name, gpu: true), note: nil)
                }
                if fuseMix {
                    return Output(texture: tc, width: color.width, height: color.height, label: outputLabel(name, blend: s.blend ? s.mix : nil, gpu: true), note: nil,
                                  mixWith: mapped, mixFactor: s.mix.isNaN ? 0 : min(max(s.mix, 0), 1))
                }
                let m: GPUFragmentMixer
                if let existing = kernels.mixer { m = existing } else {
                    m = try factory.makeGPUMixer(mixFactor: s.mix)
                    kernels.mixer = m
                }
                let mappedFormat = FrameFormat(width: d.width, height: d.height, pixelFormat: .rgba8)
                if m.inputFormat != color.frameFormat || m.secondInputFormat != mappedFormat {
                    try m.prepare(input: color.frameFormat, secondInput: mappedFormat, outputRetainedBufferCountHint: 1)
                }
                m.mixFactor = s.mix
                let out = try recorder.target(for: target("mix", color.width, color.height))
                try timed("mix") { try recorder.mix(cb, m, a: tc, b: mapped, output: out) }
                mark("mix")
                return Output(texture: out, width: color.width, height: color.height, label: outputLabel(name, blend: s.blend ? s.mix : nil, gpu: true), note: nil)
            }
            let key = memos.cpuColormapKey.text(for: CPUColormapKeyParts(name: name, range: s.depthRange)) { "colormap-\($0.name)-\($0.range)" }
            let f = try cpuFilter(key, spec, input: d.frameFormat)
            var b = try timed(name) { try f.render(d) }
            if s.blend {
                let m: ImageMixer
                if let existing = kernels.cpuMixer, existing.mixFactor == min(max(s.mix, 0), 1) { m = existing } else {
                    m = ImageMixer(mixFactor: s.mix)
                    kernels.cpuMixer = m
                }
                if m.inputFormat != color.frameFormat || m.secondInputFormat != b.frameFormat {
                    try m.prepare(input: color.frameFormat, secondInput: b.frameFormat, outputRetainedBufferCountHint: 2)
                }
                let jet = b
                b = try timed("mix") { try m.render(color, jet) }
            }
            let out = b
            let t = try pictureTexture(cb, out, mark: mark)
            return Output(texture: t, width: out.width, height: out.height, label: outputLabel(name, blend: s.blend ? s.mix : nil, gpu: false),
                          note: nil, picture: out)

        case .mask, .effect, .portrait:
            let d = depthMap!
            // A photo's subject matte is the mask (MatteMask); the CPU kernels take it, whatever the
            // backend (a still: made once and cached below).
            if onGPU, frame.matte == nil {
                let t = try gpuEffects.record(cb, stage: stage, name: s.mode.name, color: color, depth: d, focus: s.focus,
                                              timed: { name, body in try timed(name, body) }, mark: mark)
                return Output(texture: t, width: color.width, height: color.height, label: outputLabel(s.mode.name, gpu: true), note: nil)
            }
            let key = CPUEffectKey(color: ObjectIdentifier(color), colorGeneration: color.generation, depth: ObjectIdentifier(d),
                                   depthGeneration: d.generation, mode: s.mode.name, focus: s.focus,
                                   matte: frame.matte.map { ObjectIdentifier($0) })
            let buffer: PixelBuffer, label: String
            if let c = cpuCache, c.key == key {
                buffer = c.buffer; label = c.label
            } else {
                let result: PixelBuffer = try timed(s.mode.name) {
                    try cpuEffect(stage: stage, color: color, depth: d, focus: s.focus, matte: frame.matte)
                }
                let keep = cpuCache?.buffer.width == result.width && cpuCache?.buffer.height == result.height
                    ? cpuCache!.buffer : PixelBuffer(width: result.width, height: result.height, format: .rgba8)
                keep.copy(from: result)
                keep.markModified()
                buffer = keep
                label = outputLabel(frame.matte == nil ? s.mode.name : s.mode.name + ", photo matte", gpu: false)
                cpuCache = (key, keep, label)
            }
            let t = try pictureTexture(cb, buffer, mark: mark)
            return Output(texture: t, width: buffer.width, height: buffer.height, label: label, note: nil, picture: buffer)
        }
    }

    /// The kernel (named as `process --filter` names it) and size `--backend auto` decides for.
    private func autoKey(_ stage: PreviewMode.Stage, _ s: ViewSettings, color: PixelBuffer, depth: PixelBuffer?) -> String {
        let parts = AutoKeyParts(stage: stage, rosyMatrix: s.rosyMatrix, blend: s.blend, colormap: s.colormap.rawValue, mode: s.mode.name,
                                 colorWidth: color.width, colorHeight: color.height,
                                 depthWidth: depth?.width ?? 0, depthHeight: depth?.height ?? 0)
        return memos.autoKey.text(for: parts) { _ in makeAutoKey(stage, s, color: color, depth: depth) }
    }

    /// A frame's label, rebuilt only when its parts change.
    private func outputLabel(_ name: String, blend: Float? = nil, gpu: Bool) -> String {
        memos.label.text(for: OutputLabelParts(name: name, blend: blend, gpu: gpu)) { $0.text }
    }

    private func makeAutoKey(_ stage: PreviewMode.Stage, _ s: ViewSettings, color: PixelBuffer, depth: PixelBuffer?) -> String {
        switch stage {
        case .rosy: return "\(s.rosyMatrix ? "colorMatrix" : "rosy")|\(color.width)x\(color.height)"
        case .grayscale: return "grayscale|\(depth?.width ?? 0)x\(depth?.height ?? 0)"
        case .colormap:
            return s.blend ? "mix|\(color.width)x\(color.height)|\(depth?.width ?? 0)x\(depth?.height ?? 0)"
                           : "\(s.colormap.rawValue)|\(depth?.width ?? 0)x\(depth?.height ?? 0)"
        case .mask, .effect, .portrait: return "\(s.mode.name)|\(color.width)x\(color.height)|\(depth?.width ?? 0)x\(depth?.height ?? 0)"
        case .original: return ""
        }
    }

    /// Decides CPU or GPU for this frame's kernel under `--backend auto`, timing both once with
    /// their synchronous paths (outside `recorder.frame`: they lock the texture cache themselves).
    func resolveAuto(frame: FrameSet, settings s: ViewSettings) {
        guard s.backend == .auto, s.filterOn else { return }
        let color: PixelBuffer = frame.color.format == PixelFormat.rgba8 ? frame.color : ImageIO.toRGBA8(frame.color)
        let depth = s.depthOn ? frame.depth?.depthFloat32() : nil
        let stage = s.mode.stage
        let key = autoKey(stage, s, color: color, depth: depth)
        guard !key.isEmpty, autoChoices[key] == nil else { return }
        let parts = key.split(separator: "|")
        let kernel = String(parts[0])
        let size = parts[1].split(separator: "x").compactMap { Int($0) }
        do {
            let run: (Bool) throws -> Void
            switch stage {
            case .rosy:
                let spec: FilterSpec = s.rosyMatrix ? .colorMatrix(.rosy) : .rosy
                let g = try factory.makeGPUFilter(spec), c = try cpu.makeFilter(spec)
                try g.prepare(input: color.frameFormat, outputRetainedBufferCountHint: 1)
                try c.prepare(input: color.frameFormat, outputRetainedBufferCountHint: 1)
                run = { gpu in _ = try (gpu ? g : c).render(color) }
            case .grayscale, .colormap:
                guard let depth else { return }
                let spec: FilterSpec = stage == .grayscale ? .grayscale(offset: nil, range: nil) : .colormap(s.colormap, s.depthRange)
                let g = try factory.makeGPUFilter(spec), c = try cpu.makeFilter(spec)
                try g.prepare(input: depth.frameFormat, outputRetainedBufferCountHint: 2)
                try c.prepare(input: depth.frameFormat, outputRetainedBufferCountHint: 2)
                let mapped = FrameFormat(width: depth.width, height: depth.height, pixelFormat: .rgba8)
                let gm = try factory.makeGPUMixer(mixFactor: s.mix), cm = ImageMixer(mixFactor: s.mix)
                try gm.prepare(input: color.frameFormat, secondInput: mapped, outputRetainedBufferCountHint: 1)
                try cm.prepare(input: color.frameFormat, secondInput: mapped, outputRetainedBufferCountHint: 1)
                let blend = stage == .colormap && s.blend
                run = { gpu in
                    let m = try (gpu ? g : c).render(depth)
                    if blend { _ = try (gpu ? gm as MixerRenderer : cm).render(color, m) }
                }
            case .mask, .effect, .portrait:
                guard let depth else { return }
                run = try gpuEffects.autoRun(stage: stage, color: color, depth: depth, focus: s.focus)
            case .original:
                return
            }
            let choice = try selector.choose(kernel: kernel, width: size.first ?? 0, height: size.last ?? 0, run: run)
            autoChoices[key] = choice.backend == "gpu"
            autoNotes.append(String(format: "auto: %@ %@ on the %@ (CPU %.1f ms, GPU %.1f ms)", kernel, String(parts[1]),
                                    choice.backend.uppercased(), choice.cpuMs, choice.gpuMs))
        } catch {
            autoChoices[key] = true
            autoNotes.append("auto: \(kernel): \(error); using the GPU")
        }
    }

    /// The depth-mask modes' CPU mask filter and effect renderers, kept while their settings and
    /// sizes hold (made per frame, their pools, locks and tables were most of a frame's allocations).
    /// The depth-mask modes on the CPU: the mask (kept while focus, slope and size stay) and one
    /// renderer per effect.
    private var cpuEffects = CPUEffects()
    private struct CPUEffects {
        var mask: DepthMaskFilter?
        var renderers: [DepthEffectKind: DepthEffectRenderer] = [:]
    }

    /// The CPU kernels of the depth-mask modes (DepthKit), rgba8 at the color size: the same
    /// filters `DepthEffect.apply` would make, prepared once instead of every frame. With a
    /// `matte` (a photo's subject), the matte is the mask instead of the depth's (`MatteMask`).
    func cpuEffect(stage: PreviewMode.Stage, color: PixelBuffer, depth: PixelBuffer, focus: Float,
                   matte: PixelBuffer? = nil) throws -> PixelBuffer {
        let slope = stage == .portrait ? DepthMaskFilter.sharpSlope : DepthMaskFilter.softSlope
        let mask: DepthMaskFilter
        if let m = cpuEffects.mask, m.focus == focus, m.slope == slope, m.outputWidth == color.width, m.outputHeight == color.height {
            mask = m
        } else {
            mask = DepthMaskFilter(kind: .highpass, focus: focus, slope: slope, width: 0.1,
                                   outputWidth: color.width, outputHeight: color.height)
            cpuEffects.mask = mask
        }
        if mask.inputFormat != depth.frameFormat { try mask.prepare(input: depth.frameFormat, outputRetainedBufferCountHint: 1) }
        func effect(_ kind: DepthEffectKind) throws -> PixelBuffer {
            let values = try matte.map(MatteMask.values) ?? mask.floatMask(depth)
            let r = cpuEffects.renderers[kind] ?? DepthEffectRenderer(kind: kind)
            cpuEffects.renderers[kind] = r
            if r.inputFormat != color.frameFormat {
                try r.prepare(image: color.frameFormat, maskWidth: values.width, maskHeight: values.height,
                              outputRetainedBufferCountHint: 1)
            }
            return try r.render(image: color, mask: values)
        }
        switch stage {
        case .mask: return try matte.map { MatteMask.picture($0, width: color.width, height: color.height) } ?? mask.renderRGBA8(depth)
        case .effect(let kind): return try effect(kind)
        case .portrait: return try effect(.blur)
        case .original, .rosy, .grayscale, .colormap: return color
        }
    }
}
