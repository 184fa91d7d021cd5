import CVulkan
import Capture
import DepthKit
import Foundation
import GPUKit

/// What the window shows each frame and how it gets into the swapchain image. `process` records
/// the picture: the 3D scene's render (the frame's depth, or a PLY point list), or the 2D output
/// of `FrameProcessor` (presented again while neither the frame nor the settings changed).
/// `draw` puts it into the window: a picture made on the CPU is copied in (`PictureCopy`, on a
/// CPU Vulkan device), anything else is drawn by `PresentPipeline` into the letterbox (one texture,
/// or color and colormapped depth mixed in the pass), then ImGui on top. `readBack` gives what the
/// window shows as an image (snapshots, video).
final class PresentComposer {
    /// What one frame composed.
    struct Frame {
        /// The 2D output shown (nil in 3D, or when nothing could be made).
        var output: FrameProcessor.Output?
        /// The 3D scene drew the picture (`Scene3D.output`, or `picture3D`).
        var drew3D = false
        /// The 3D picture made on the CPU (`PointDrawing.cpu`), copied into the window.
        var picture3D: PixelBuffer?
        /// A transfer wrote the swapchain image (the picture copy): the acquire is waited for there too.
        var touchedByTransfer = false
    }

    /// What an output was made from: the frame's buffers and their generations, its index, the settings.
    struct ProcessedKey: Equatable {
        let color: ObjectIdentifier, colorGeneration: UInt64
        let depth: ObjectIdentifier?, depthGeneration: UInt64
        let index: Int
        let settings: ViewSettings

        init(_ f: FrameSet, _ settings: ViewSettings) {
            let d = f.depth?.map
            color = ObjectIdentifier(f.color)
            colorGeneration = f.color.generation
            depth = d.map { ObjectIdentifier($0) }
            depthGeneration = d?.generation ?? 0
            index = f.index
            self.settings = settings
        }
    }

    let present: PresentPipeline
    let processor: FrameProcessor
    /// The 3D view's pictures and point layers (nil when the point-cloud renderer cannot be made on
    /// this device); its camera and input are the window's (`ViewerApp.input3D`).
    let scene3D: Scene3D?
    /// Where the 3D view puts a posed source's frames: world coordinates, the camera path, the
    /// accumulated cloud (Scene3DWorld.swift; key W). Its points are `scene3D`'s point list then.
    let world = SceneWorld()
    private let pictureCopy = PictureCopy()
    /// Whether this device copies CPU pictures in (`PictureCopy.enabled(on:)`).
    private let copiesPictures: Bool
    private let sync: FrameSync
    private let log: ViewerLog
    /// Upload and kernels run for every frame (`--reprocess`, `--watch-shaders`).
    private let alwaysProcess: Bool
    /// The last 2D output (presented again while the frame and settings hold) and what it was made from.
    private(set) var lastOutput: FrameProcessor.Output?
    private(set) var processedKey: ProcessedKey?
    /// The picture `drawAhead` made for the coming `process`.
    private var aheadPicture: PixelBuffer?
    /// The last `process` gave a 3D picture to copy in (`drawsAhead`).
    private var lastCopiedPicture = false

    init(context: GPUContext, swapchain: Swapchain, options: ViewerOptions, sync: FrameSync, log: ViewerLog,
         input3D: Scene3DInput) throws {
        self.sync = sync
        self.log = log
        alwaysProcess = options.reprocess || options.watchShaders
        let library = try ShaderLibrary.shared()
        present = try PresentPipeline(context: context, library: library, swapchain: swapchain)
        present.watchesShaders = options.watchShaders
        let factory = try GPUFilterFactory(context: context, library: library)
        factory.watchesShaders = options.watchShaders
        processor = FrameProcessor(factory: factory)
        copiesPictures = PictureCopy.enabled(on: context)
        scene3D = Scene3D.make(context: context, factory: factory, input: input3D)
        scene3D?.drawing = options.points ?? (context.properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU ? .cpu : .compute)
        scene3D?.edlChoice = options.edl
    }

    /// A PLY point list is shown in 3D (not the world view's points of a frame source).
    var showsPLY: Bool { scene3D?.pointList != nil && !world.ownsPointList }

    /// Shader errors of everything that draws (`--watch-shaders`), one per program.
    var shaderErrors: [String] { processor.shaderErrors + [present.lastError, scene3D?.shaderError].compactMap { $0 } }

    /// Records the frame's picture into `cb` (before the window's pass): the 3D scene, or the 2D
    /// output of `frame` (the last one again when nothing changed). Errors become notices.
    func process(_ cb: VkCommandBuffer, frame current: FrameSet?, view: ViewerOptions.View, settings: ViewSettings,
                 extent: VkExtent2D, copyFormat: PixelFormat?, now: Double) -> Frame {
        // A local function, not a closure value: passed on as a non-escaping argument, its context stays on the stack.
        func mark(_ label: String) { sync.mark(label) }
        if let frame = current, view == .twoD, settings.backend == .auto {
            let before = processor.autoNotes.count
            processor.resolveAuto(frame: frame, settings: settings)
            for n in processor.autoNotes.dropFirst(before) { log.notice(n, seconds: 10) }
        }
        var result = Frame()
        processor.picturesByCopy = picturesByCopy(copyFormat: copyFormat)
        let width = Int(extent.width), height = Int(extent.height)
        // A picture made ahead (`drawAhead`) for this frame, taken once.
        let ahead = aheadPicture
        aheadPicture = nil
        defer { lastCopiedPicture = result.picture3D != nil }
        // A 3D picture made on the CPU: copied into the window as 2D CPU pictures are (else uploaded).
        func show(_ picture: PixelBuffer, _ scene3D: Scene3D) throws {
            if processor.picturesByCopy {
                result.picture3D = picture
            } else {
                scene3D.output = try processor.recorder.frame { try processor.recorder.upload(cb, picture) }
                mark("upload")
            }
            result.drew3D = true
        }
        if view == .threeD, let scene3D, scene3D.pointList != nil, scene3D.drawsOnCPU {
            do {
                try show(ahead ?? renderOnCPU(scene3D, frame: nil, settings: settings, width: width, height: height, now: now), scene3D)
            } catch {
                log.notice("frame failed: \(error)", isError: true, seconds: 3)
            }
        } else if view == .threeD, let scene3D, scene3D.pointList != nil {
            result.drew3D = recordPointList(cb, scene3D, colormap: settings.colormap, width: width, height: height, now: now)
        } else if let frame = current {
            do {
                if view == .threeD, let scene3D, scene3D.drawsOnCPU {
                    try show(ahead ?? renderOnCPU(scene3D, frame: frame, settings: settings, width: width, height: height, now: now), scene3D)
                } else if view == .threeD, let scene3D {
                    scene3D.renderer.colormap = settings.colormap
                    try processor.recorder.frame {
                        try scene3D.record(cb, frame: frame, recorder: processor.recorder, width: width, height: height, mark: mark)
                    }
                    result.drew3D = true
                } else if let last = lastOutput, processedKey == ProcessedKey(frame, settings), !alwaysProcess {
                    // Same frame, same settings: the last output is still on the GPU; present it again.
                    result.output = last
                } else {
                    result.output = try processor.recorder.frame {
                        try processor.record(cb, frame: frame, settings: settings, fuseMix: true, mark: mark)
                    }
                    processedKey = ProcessedKey(frame, settings)
                }
            } catch {
                log.notice("frame failed: \(error)", isError: true, seconds: 3)
            }
        }
        lastOutput = result.output ?? lastOutput
        return result
    }

    /// Whether this frame's 3D picture is to be made on the CPU before the loop waits for the
    /// last frame (`drawAhead`): the picture is made on the CPU and copied in, and so was the last
    /// frame's, whose commands then read only their own copy of the picture, the swapchain image
    /// and ImGui's buffers, nothing the source, the panel or this drawing changes.
    func drawsAhead(view: ViewerOptions.View, copyFormat: PixelFormat?) -> Bool {
        guard view == .threeD, lastCopiedPicture, let scene3D, scene3D.drawsOnCPU else { return false }
        return picturesByCopy(copyFormat: copyFormat)
    }

    /// Whether CPU pictures are copied into the swapchain image (rather than uploaded and drawn).
    private func picturesByCopy(copyFormat: PixelFormat?) -> Bool {
        copiesPictures && copyFormat != nil && processor.recorder.canCopyPictures
    }

    /// Makes this frame's 3D picture on the CPU now, while the last frame's commands and present
    /// may still run (the loop checked `drawsAhead`); `process` then copies it in. A failure is
    /// left for `process`, which tries again and says so.
    func drawAhead(frame current: FrameSet?, view: ViewerOptions.View, settings: ViewSettings, extent: VkExtent2D, now: Double) {
        // The panel may have changed the view or the drawing since `drawsAhead`.
        guard view == .threeD, let scene3D, scene3D.drawsOnCPU else { return }
        if scene3D.pointList == nil && current == nil { return }
        aheadPicture = try? renderOnCPU(scene3D, frame: scene3D.pointList == nil ? current : nil, settings: settings,
                                        width: Int(extent.width), height: Int(extent.height), now: now)
    }

    /// The 3D picture drawn on the CPU: the point list's (`frame` nil) or `frame`'s depth points.
    private func renderOnCPU(_ scene3D: Scene3D, frame: FrameSet?, settings: ViewSettings, width: Int, height: Int,
                             now: Double) throws -> PixelBuffer {
        scene3D.renderer.colormap = settings.colormap
        guard let frame else { return try scene3D.renderPointListOnCPU(width: width, height: height, now: now) }
        return try scene3D.renderOnCPU(frame: frame, width: width, height: height, reuse: !alwaysProcess)
    }

    /// The PLY point list in 3D; false (with a notice) when it failed.
    private func recordPointList(_ cb: VkCommandBuffer, _ scene3D: Scene3D, colormap: Colormap, width: Int, height: Int,
                                 now: Double) -> Bool {
        func mark(_ label: String) { sync.mark(label) }
        do {
            scene3D.renderer.colormap = colormap
            try processor.recorder.frame {
                try scene3D.recordPointList(cb, recorder: processor.recorder, width: width, height: height, now: now, mark: mark)
            }
            return true
        } catch {
            log.notice("frame failed: \(error)", isError: true, seconds: 3)
            return false
        }
    }

    /// The letterbox of `out` in the window area `area` (the window less the docked panel).
    static func box(_ out: FrameProcessor.Output, in area: (width: Int, height: Int)) -> Letterbox {
        Letterbox(imageWidth: out.width, imageHeight: out.height, windowWidth: area.width, windowHeight: area.height)
    }

    /// Records the window's pass into swapchain image `image`: the picture copied in or drawn into
    /// its letterbox in `area`, then ImGui. `frame.output` may change (its texture made for drawing,
    /// or nil when that failed).
    func draw(_ cb: VkCommandBuffer, _ frame: inout Frame, swapchain: Swapchain, image: UInt32,
              area: (width: Int, height: Int), imgui: ImGuiLayer) {
        // A picture made on the CPU is copied into the swapchain image rather than drawn.
        var copied = false
        if let picture = frame.picture3D, let format = swapchain.copyFormat {
            // The 3D view fills the window: the picture is the swapchain's size.
            frame.touchedByTransfer = true
            let e = swapchain.extent
            let box = Letterbox(imageWidth: picture.width, imageHeight: picture.height, windowWidth: Int(e.width), windowHeight: Int(e.height))
            do {
                copied = try processor.recorder.frame {
                    try pictureCopy.record(cb, recorder: processor.recorder, picture: picture, box: box,
                                           image: swapchain.images[Int(image)], extent: e, format: format)
                }
                if copied { sync.mark("copy") }
            } catch {
                log.notice("copying the 3D picture into the window failed: \(error)", isError: true, seconds: 3)
            }
        }
        if !frame.drew3D, let out = frame.output, out.mixWith == nil, let picture = out.picture, processor.picturesByCopy,
           let format = swapchain.copyFormat {
            frame.touchedByTransfer = true
            do {
                copied = try processor.recorder.frame {
                    try pictureCopy.record(cb, recorder: processor.recorder, picture: picture, box: Self.box(out, in: area),
                                           image: swapchain.images[Int(image)], extent: swapchain.extent, format: format)
                }
                if copied { sync.mark("copy") }
            } catch {
                log.notice("copying the picture into the window failed (\(error)); drawing it instead", isError: true, seconds: 3)
            }
        }
        // Not copied after all (an empty rectangle, or the copy failed): the picture is drawn, so it needs its texture.
        if !copied, !frame.drew3D, var out = frame.output, out.texture == nil {
            do {
                out.texture = try processor.recorder.frame { try processor.texture(of: out, cb) }
                frame.output = out
                lastOutput = out
            } catch {
                log.notice("frame failed: \(error)", isError: true, seconds: 3)
                frame.output = nil
            }
        }
        let background = VkClearColorValue(float32: (0.08, 0.08, 0.09, 1))
        var rpBegin = VkRenderPassBeginInfo()
        rpBegin.sType = VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO
        rpBegin.renderPass = copied ? swapchain.loadRenderPass : swapchain.renderPass
        rpBegin.framebuffer = swapchain.framebuffers[Int(image)]
        rpBegin.renderArea = VkRect2D(offset: VkOffset2D(x: 0, y: 0), extent: swapchain.extent)
        var clear = VkClearValue(color: background)
        withUnsafePointer(to: &clear) { cp in
            rpBegin.clearValueCount = 1
            rpBegin.pClearValues = cp
            vkCmdBeginRenderPass(cb, &rpBegin, VK_SUBPASS_CONTENTS_INLINE)
        }
        let sampler = processor.factory.textureCache.linearSampler
        if copied {
            pictureCopy.clearBars(cb, extent: swapchain.extent, color: background)
        } else if frame.drew3D, let out = scene3D?.output {
            present.draw(cb, texture: out, sampler: sampler,
                         rect: Letterbox.Rect(x: 0, y: 0, width: Float(swapchain.extent.width), height: Float(swapchain.extent.height)))
        } else if let out = frame.output {
            let box = Self.box(out, in: area)
            if let b = out.mixWith, let a = out.texture {
                present.drawMix(cb, a: a, b: b, mixFactor: out.mixFactor, sampler: sampler, rect: box.rect)
            } else if let t = out.texture {
                present.draw(cb, texture: t, sampler: sampler, rect: box.rect)
            }
        }
        imgui.render(cb)
        vkCmdEndRenderPass(cb)
        sync.mark("present")
    }

    /// Reads back what the window shows as an image: the point-cloud render (`texture3D`), or the 2D
    /// output, where a blend left to the window's pass (`mixWith`) has no image of its own, so the
    /// mixer runs for it. Snapshots and video recording use it.
    func readBack(output: FrameProcessor.Output?, texture3D: GPUTexture?, frame: FrameSet, settings: ViewSettings) throws -> PixelBuffer? {
        var image: PixelBuffer?
        try processor.recorder.frame {
            try sync.oneShot { cb in
                if let texture3D { image = try processor.recorder.readback(cb, texture3D); return }
                // A 3D picture made on the CPU is the image itself.
                if output == nil, let picture = scene3D?.picture { image = picture; return }
                guard let output else { return }
                let out = output.mixWith == nil ? output : try processor.record(cb, frame: frame, settings: settings) { _ in }
                // A picture made on the CPU is already what a readback of its texture would give.
                if let picture = out.picture { image = picture; return }
                image = try processor.recorder.readback(cb, try processor.texture(of: out, cb))
            }
        }
        return image
    }
}
