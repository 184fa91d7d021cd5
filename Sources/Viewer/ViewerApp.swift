import CGLFW
import CVulkan
import Capture
import DepthKit
import Foundation
import GPUKit

/// `depthlens view`: the window people live in. One frame in flight: wait for the previous
/// frame's fence, poll the source, acquire, record (upload → kernels → mixer → present pass →
/// ImGui), submit, present. Nothing is read back except for a snapshot.
public final class ViewerApp {
    let options: ViewerOptions
    let window: Window
    let context: GPUContext
    let swapchain: Swapchain
    let present: PresentPipeline
    /// CPU-made pictures copied into the swapchain image instead of drawn (`PictureCopy`).
    let pictureCopy = PictureCopy()
    /// Whether this device copies CPU pictures in (`PictureCopy.enabled(on:)`), read once.
    lazy var copiesPictures = PictureCopy.enabled(on: context)
    let processor: FrameProcessor
    var imgui: ImGuiLayer!
    var settings: ViewSettings
    var source: FrameSource
    /// Runs `source` on its own thread (a two-deep queue); the loop takes frames from it.
    var prefetcher: SourcePrefetcher!
    var sourceText: [CChar]
    var current: FrameSet?
    var lastOutput: FrameProcessor.Output?
    var view: ViewerOptions.View
    var showPanel: Bool
    var showHelp = false
    var stats: FrameStats
    var steady = SteadyState()
    /// Title and overlay lines, rebuilt only when they change (`TextMemo`).
    var texts = ViewerTexts()
    /// The status line at the bottom of the window, rebuilt when the figures change (once a second).
    var statusText = ""
    /// Lines shown at the bottom of the window until their time runs out (warnings, errors).
    var notices: [(text: String, until: Double, isError: Bool)] = []
    /// The source's error while it lasts (e.g. a camera unplugged); cleared by the next frame.
    var sourceError: String?
    var hoverReadout: DepthReadout?
    var pinnedReadout: DepthReadout?
    var needsSwapchain = true
    var snapshotRequested = false
    var lastFrameIndex: Int?
    var loggedLayout = false
    /// The last `state:` line printed (`--log-ui`).
    var lastStateLine = ""
    var framesShown = 0
    /// What the last processed output was made from (frame buffers, their generations, settings).
    var processedKey: ProcessedKey?
    var lastShaderErrors: [String] = []
    var startTime: Double
    /// The 3D view (nil until the point-cloud renderer exists in GPUKit).
    var scene3D: Scene3D?
    /// Depth smoothing between the source and every consumer (ViewerSmoothing.swift).
    lazy var smoothingStage = DepthSmoothingStage(smoother: DepthSmoother(settings: settings.smoothing))
    /// Thermal watch (ViewerThermal.swift): zones read once a second on their own thread.
    let thermal = BackgroundThermal()
    var thermalHot = false
    var thermalSaidUnlimited = false
    /// The depth rate limit last asked of the source (nil: full rate).
    var appliedDepthRateLimit: Double?
    /// Frames taken from the source (each one shown; skipped ones are counted in `stats.dropped`).
    var framesReceived = 0
    /// The video Ctrl+R records (ViewerRecording.swift); nil when not recording.
    var videoRecording: ViewerVideoRecording?

    // Per-frame Vulkan objects (one frame in flight).
    private var commandPool: VkCommandPool!
    private var commandBuffer: VkCommandBuffer!
    private var fence: VkFence!
    private var acquireSemaphore: VkSemaphore!
    private var renderDone: [VkSemaphore] = []
    private var queryPool: VkQueryPool?
    private var queryLabels: [String] = []
    private var fenceWaited = true

    public static func run(_ options: ViewerOptions) throws {
        let app = try ViewerApp(options: options)
        defer { app.stopRecording() }   // keeps what was recorded when the loop fails
        try app.loop()
    }

    init(options: ViewerOptions) throws {
        self.options = options
        try Window.initialize()
        let win: Window
        do { win = try Window(width: options.width, height: options.height, title: "depthlens") } catch {
            glfwTerminate()
            throw error
        }
        window = win
        let ctx: GPUContext
        do {
            ctx = try GPUContext(options: GPUContextOptions(
                instanceExtensions: Window.requiredInstanceExtensions(),
                deviceExtensions: ["VK_KHR_swapchain"],
                queueFamilyFilter: { instance, device, family in
                    glfwGetPhysicalDevicePresentationSupport(instance, device, family) == GLFW_TRUE
                }))
        } catch let e as ViewerError {
            throw e
        } catch {
            throw ViewerError.noVulkan("\(error)")
        }
        context = ctx
        ctx.validation?.echo = true
        let surface = try win.makeSurface(instance: ctx.instance)
        swapchain = try Swapchain(context: ctx, surface: surface, vsync: options.vsync)
        let library = try ShaderLibrary.shared()
        present = try PresentPipeline(context: ctx, library: library, renderPass: swapchain.renderPass)
        present.watchesShaders = options.watchShaders
        let factory = try GPUFilterFactory(context: ctx, library: library)
        factory.watchesShaders = options.watchShaders
        processor = FrameProcessor(factory: factory)
        settings = ViewSettings(mode: options.mode)
        settings.mix = options.mix
        settings.colormap = options.colormap
        settings.backend = options.backend
        settings.smoothing = options.smoothing
        view = options.view
        showPanel = options.showPanel
        sourceText = Array(options.source.utf8CString) + [CChar](repeating: 0, count: 1024)
        startTime = monotonicSeconds()
        stats = FrameStats(now: startTime)
        source = try Self.openSource(options.source, options: options)
        try makeFrameObjects()
        let (fw, fh) = win.framebufferSize
        try swapchain.recreate(width: fw, height: fh)
        needsSwapchain = false
        try makeRenderDoneSemaphores()
        imgui = try ImGuiLayer(window: win, context: ctx, renderPass: swapchain.renderPass,
                               imageCount: max(2, swapchain.images.count), oneShot: { try self.oneShot($0) })
        scene3D = Scene3D.make(context: ctx, factory: factory, renderPass: swapchain.renderPass)
        scene3D?.log = { [weak self] line in
            guard let self, self.options.logReadout || self.options.logUI else { return }
            print(line)
            fflush(stdout)
        }
        try showPointList()
        prefetcher = SourcePrefetcher(source)
        source.onWarning = { [weak prefetcher] in prefetcher?.post(warning: $0) }
    }

    deinit {
        thermal.stop()
        let device = context.device
        vkDeviceWaitIdle(device)
        scene3D = nil
        imgui = nil
        renderDone.forEach { vkDestroySemaphore(device, $0, nil) }
        if let acquireSemaphore { vkDestroySemaphore(device, acquireSemaphore, nil) }
        if let fence { vkDestroyFence(device, fence, nil) }
        if let queryPool { vkDestroyQueryPool(device, queryPool, nil) }
        if let commandPool { vkDestroyCommandPool(device, commandPool, nil) }
        prefetcher?.stop()
        source.stop()
    }

    // MARK: Sources

    static func openSource(_ text: String, options: ViewerOptions) throws -> FrameSource {
        let spec = try SourceSpec(parsing: text)
        let s: FrameSource
        if case .ply(let path) = spec {
            s = PointListSource(path: path, contents: try (text == options.source ? options.pointList?.take() : nil) ?? PLYReader.load(path))
        } else {
            s = try spec.makeSource(depthScale: options.depthScale)
        }
        try s.start()
        if let p = s as? PlaybackControl {
            p.loop = options.loop
            if let fps = options.fps { p.fps = fps }
            if options.paused { p.pause() }
            if let n = options.frame { try p.seek(toFrame: n) }
        }
        return s
    }

    /// Opens the text field's source in place of the current one; on failure the old one stays.
    func reopenSource() {
        let text = String(cString: sourceText)
        do {
            let s = try Self.openSource(text, options: options)
            prefetcher.stop()
            source.stop()
            source = s
            prefetcher = SourcePrefetcher(s)
            s.onWarning = { [weak prefetcher] in prefetcher?.post(warning: $0) }
            applyDepthRateLimit(thermalHot ? ThermalState.reducedDepthFPS : nil)
            current = nil
            lastFrameIndex = nil
            smoothingStage.reset()
            sourceError = nil
            do { try showPointList() } catch { notice("cannot show \(s.name): \(error)", isError: true) }
            notice("opened \(s.name)")
        } catch {
            notice("cannot open \(text): \(error)", isError: true)
        }
    }

    func notice(_ s: String, isError: Bool = false, seconds: Double = 6) {
        notices.append((s, monotonicSeconds() + seconds, isError))
        if notices.count > 6 { notices.removeFirst(notices.count - 6) }
        if options.logUI { print("notice: \(s)"); fflush(stdout) }
    }

    // MARK: Vulkan frame objects

    private func makeFrameObjects() throws {
        let p = try Commands.pool(context)
        commandPool = p
        commandBuffer = try Commands.buffer(context, pool: p)
        fence = try Commands.fence(context, signaled: true)
        acquireSemaphore = try makeSemaphore()
        if context.timestampPeriod != nil {
            queryPool = try Commands.timestampQueries(context, count: 16)
        }
    }

    private func makeSemaphore() throws -> VkSemaphore {
        var si = VkSemaphoreCreateInfo()
        si.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO
        var s: VkSemaphore?
        try vkCheck(vkCreateSemaphore(context.device, &si, nil, &s), "vkCreateSemaphore")
        return s!
    }

    /// One "render finished" semaphore per swapchain image: presentation may still wait on the
    /// previous one when the next frame signals.
    private func makeRenderDoneSemaphores() throws {
        while renderDone.count < swapchain.images.count { renderDone.append(try makeSemaphore()) }
    }

    /// Records `body` into a fresh command buffer, submits it and waits (font upload, snapshot).
    func oneShot(_ body: (VkCommandBuffer) throws -> Void) throws {
        try waitFrameFence()
        let cb: VkCommandBuffer = commandBuffer
        try Commands.begin(cb)
        try body(cb)
        try vkCheck(vkEndCommandBuffer(cb), "vkEndCommandBuffer")
        var f: VkFence? = fence
        try vkCheck(vkResetFences(context.device, 1, &f), "vkResetFences")
        var cbs: VkCommandBuffer? = cb
        var submit = VkSubmitInfo()
        submit.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO
        submit.commandBufferCount = 1
        try withUnsafePointer(to: &cbs) { cp in
            submit.pCommandBuffers = cp
            try vkCheck(vkQueueSubmit(context.queue, 1, &submit, fence), "vkQueueSubmit")
        }
        fenceWaited = false
        try waitFrameFence()
    }

    /// Waits for the frame in flight and reads its GPU timestamps. Vulkan: `vkWaitForFences`, `vkGetQueryPoolResults`.
    func waitFrameFence() throws {
        guard !fenceWaited else { return }
        var f: VkFence? = fence
        while try vkCheck(vkWaitForFences(context.device, 1, &f, VkBool32(VK_TRUE), 1_000_000_000), "vkWaitForFences") == VK_TIMEOUT {}
        fenceWaited = true
        if let queryPool, let period = context.timestampPeriod, queryLabels.count >= 2 {
            let n = queryLabels.count
            withUnsafeTemporaryAllocation(of: UInt64.self, capacity: 16) { stamps in
                let r = vkGetQueryPoolResults(context.device, queryPool, 0, UInt32(n), n * 8, stamps.baseAddress, 8,
                                              VK_QUERY_RESULT_64_BIT.rawValue)
                if r == VK_SUCCESS {
                    for i in 1..<n { stats.add(gpu: queryLabels[i], ms: Double(stamps[i] &- stamps[i - 1]) * period / 1e6) }
                }
            }
            queryLabels.removeAll(keepingCapacity: true)
        }
    }

    // MARK: The loop

    func loop() throws {
        var lastTitle = 0.0
        AllocationCounter.counting(true)
        defer { AllocationCounter.counting(false) }
        while true {
            let allocsBefore = AllocationCounter.counts
            glfwPollEvents()
            let now = monotonicSeconds()
            handleInput(now: now)
            if window.shouldClose { break }
            if let t = options.exitAfter, now - startTime >= t { break }
            if let n = options.exitAfterFrames, framesShown >= n { break }

            let (fw, fh) = window.framebufferSize
            if fw == 0 || fh == 0 || window.isIconified {
                // Minimized: nothing to draw into; sleep until something happens.
                glfwWaitEventsTimeout(0.05)
                needsSwapchain = true
                continue
            }
            if needsSwapchain || Int(swapchain.extent.width) != fw || Int(swapchain.extent.height) != fh {
                try waitFrameFence()
                vkDeviceWaitIdle(context.device)
                guard try swapchain.recreate(width: fw, height: fh) else { glfwWaitEventsTimeout(0.05); continue }
                try makeRenderDoneSemaphores()
                imgui.setImageCount(max(2, swapchain.images.count))
                needsSwapchain = false
                logUI("swapchain \(swapchain.extent.width)x\(swapchain.extent.height) \(swapchain.presentModeName)")
            }

            var t0 = DispatchTime.now().uptimeNanoseconds
            var a0 = allocsBefore
            func lap(_ stage: String) {
                let t1 = DispatchTime.now().uptimeNanoseconds, a1 = AllocationCounter.counts
                stats.add(stage: stage, ms: Double(t1 - t0) / 1e6)
                stats.add(stage: stage, allocations: a1.own &- a0.own, driver: a1.driver &- a0.driver)
                t0 = t1
                a0 = a1
            }
            try waitFrameFence()
            lap("gpu wait")
            watchThermal(now: now)
            pollSource(now: now)
            lap("source")
            present.reloadIfNeeded(now: now)

            guard let sc = swapchain.handle else { needsSwapchain = true; continue }
            var imageIndex: UInt32 = 0
            let acquired = vkAcquireNextImageKHR(context.device, sc, UInt64.max, acquireSemaphore, nil, &imageIndex)
            if acquired == VK_ERROR_OUT_OF_DATE_KHR { needsSwapchain = true; continue }
            try vkCheck(acquired, "vkAcquireNextImageKHR")
            if acquired == VK_SUBOPTIMAL_KHR { needsSwapchain = true }
            lap("acquire")

            imgui.newFrame()
            buildUI(now: now)
            lap("ui")

            let cb: VkCommandBuffer = commandBuffer
            try Commands.begin(cb)
            queryLabels.removeAll(keepingCapacity: true)
            if let queryPool {
                vkCmdResetQueryPool(cb, queryPool, 0, 16)
                vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, queryPool, 0)
                queryLabels.append("start")
            }
            // A local function, not a closure value: passed on as a non-escaping argument, its context stays on the stack.
            func mark(_ label: String) {
                guard let queryPool, queryLabels.count < 15 else { return }
                vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queryPool, UInt32(queryLabels.count))
                queryLabels.append(label)
            }
            if let frame = current, view == .twoD, settings.backend == .auto {
                let before = processor.autoNotes.count
                processor.resolveAuto(frame: frame, settings: settings)
                for n in processor.autoNotes.dropFirst(before) { notice(n, seconds: 10) }
            }
            var output: FrameProcessor.Output?
            var drew3D = false
            processor.picturesByCopy = copiesPictures && swapchain.copyFormat != nil && processor.recorder.canCopyPictures
            if view == .threeD, let scene3D, scene3D.pointList != nil {
                drew3D = recordPointList(cb, scene3D, now: now, mark: mark)
            } else if let frame = current {
                do {
                    if view == .threeD, let scene3D {
                        scene3D.renderer.colormap = settings.colormap
                        try processor.recorder.frame {
                            try scene3D.record(cb, frame: frame, recorder: processor.recorder, width: Int(swapchain.extent.width),
                                               height: Int(swapchain.extent.height), mark: mark)
                        }
                        drew3D = true
                    } else if let last = lastOutput, processedKey == key(frame), !options.reprocess, !options.watchShaders {
                        // Same frame, same settings: the last output is still on the GPU; present it again.
                        output = last
                    } else {
                        output = try processor.recorder.frame {
                            try processor.record(cb, frame: frame, settings: settings, fuseMix: true, mark: mark)
                        }
                        processedKey = key(frame)
                    }
                } catch {
                    notice("frame failed: \(error)", isError: true, seconds: 3)
                }
            }
            lastOutput = output ?? lastOutput
            var uploadMs = 0.0
            for (name, ms) in processor.cpuTimes {
                if name == "upload" { uploadMs += ms } else { stats.add(kernel: name, ms: ms) }
            }
            stats.add(stage: "upload", ms: uploadMs)
            lap("kernels")
            stats.add(stage: "kernels", ms: -uploadMs)

            // A picture made on the CPU is copied into the swapchain image rather than drawn.
            var copied = false, touchedByTransfer = false
            if !drew3D, let out = output, out.mixWith == nil, let picture = out.picture, processor.picturesByCopy,
               let format = swapchain.copyFormat {
                touchedByTransfer = true
                do {
                    copied = try processor.recorder.frame {
                        try pictureCopy.record(cb, recorder: processor.recorder, picture: picture, box: imageBox(out),
                                               image: swapchain.images[Int(imageIndex)], extent: swapchain.extent, format: format)
                    }
                    if copied { mark("copy") }
                } catch {
                    notice("copying the picture into the window failed (\(error)); drawing it instead", isError: true, seconds: 3)
                }
            }
            let background = VkClearColorValue(float32: (0.08, 0.08, 0.09, 1))
            // Not copied after all (an empty rectangle, or the copy failed): the picture is drawn, so it needs its texture.
            if !copied, !drew3D, var out = output, out.texture == nil {
                do {
                    out.texture = try processor.recorder.frame { try processor.texture(of: out, cb) }
                    output = out
                    lastOutput = out
                } catch {
                    notice("frame failed: \(error)", isError: true, seconds: 3)
                    output = nil
                }
            }

            var rpBegin = VkRenderPassBeginInfo()
            rpBegin.sType = VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO
            rpBegin.renderPass = copied ? swapchain.loadRenderPass : swapchain.renderPass
            rpBegin.framebuffer = swapchain.framebuffers[Int(imageIndex)]
            rpBegin.renderArea = VkRect2D(offset: VkOffset2D(x: 0, y: 0), extent: swapchain.extent)
            var clear = VkClearValue(color: background)
            withUnsafePointer(to: &clear) { cp in
                rpBegin.clearValueCount = 1
                rpBegin.pClearValues = cp
                vkCmdBeginRenderPass(cb, &rpBegin, VK_SUBPASS_CONTENTS_INLINE)
            }
            if copied {
                pictureCopy.clearBars(cb, extent: swapchain.extent, color: background)
            } else if drew3D, let out = scene3D?.output {
                present.draw(cb, texture: out, sampler: processor.factory.textureCache.linearSampler,
                             rect: Letterbox.Rect(x: 0, y: 0, width: Float(swapchain.extent.width), height: Float(swapchain.extent.height)))
            } else if let out = output {
                let box = imageBox(out)
                if let b = out.mixWith, let a = out.texture {
                    present.drawMix(cb, a: a, b: b, mixFactor: out.mixFactor,
                                    sampler: processor.factory.textureCache.linearSampler, rect: box.rect)
                } else if let t = out.texture {
                    present.draw(cb, texture: t, sampler: processor.factory.textureCache.linearSampler, rect: box.rect)
                }
            }
            imgui.render(cb)
            vkCmdEndRenderPass(cb)
            mark("present")
            try vkCheck(vkEndCommandBuffer(cb), "vkEndCommandBuffer")
            lap("record")

            var f: VkFence? = fence
            try vkCheck(vkResetFences(context.device, 1, &f), "vkResetFences")
            var waitSem: VkSemaphore? = acquireSemaphore
            var signalSem: VkSemaphore? = renderDone[Int(imageIndex)]
            // The copy writes the acquired image at the transfer stage: the acquire must be waited for there too.
            var waitStage = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT.rawValue
                | (touchedByTransfer ? VK_PIPELINE_STAGE_TRANSFER_BIT.rawValue : 0)
            var cbs: VkCommandBuffer? = cb
            var submit = VkSubmitInfo()
            submit.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO
            let submitted: VkResult = withUnsafePointer(to: &waitSem) { wp in
                withUnsafePointer(to: &signalSem) { sp in
                    withUnsafePointer(to: &waitStage) { stp in
                        withUnsafePointer(to: &cbs) { cp in
                            submit.waitSemaphoreCount = 1
                            submit.pWaitSemaphores = wp
                            submit.pWaitDstStageMask = stp
                            submit.commandBufferCount = 1
                            submit.pCommandBuffers = cp
                            submit.signalSemaphoreCount = 1
                            submit.pSignalSemaphores = sp
                            return vkQueueSubmit(context.queue, 1, &submit, fence)
                        }
                    }
                }
            }
            try vkCheck(submitted, "vkQueueSubmit")
            fenceWaited = false
            lap("submit")

            var scOpt: VkSwapchainKHR? = sc
            var idx = imageIndex
            var presentInfo = VkPresentInfoKHR()
            presentInfo.sType = VK_STRUCTURE_TYPE_PRESENT_INFO_KHR
            let presented: VkResult = withUnsafePointer(to: &signalSem) { sp in
                withUnsafePointer(to: &scOpt) { scp in
                    withUnsafePointer(to: &idx) { ip in
                        presentInfo.waitSemaphoreCount = 1
                        presentInfo.pWaitSemaphores = sp
                        presentInfo.swapchainCount = 1
                        presentInfo.pSwapchains = scp
                        presentInfo.pImageIndices = ip
                        return vkQueuePresentKHR(context.queue, &presentInfo)
                    }
                }
            }
            if presented == VK_ERROR_OUT_OF_DATE_KHR || presented == VK_SUBOPTIMAL_KHR {
                needsSwapchain = true
            } else {
                try vkCheck(presented, "vkQueuePresentKHR")
            }
            lap("present")

            framesShown += 1
            if framesShown == 3 { logUI("ready") }
            recordVideoFrame(output: output)
            if snapshotRequested {
                snapshotRequested = false
                // In 3D the picture is the point-cloud render (there is no 2D output this frame).
                takeSnapshot(output: drew3D ? nil : output, texture3D: drew3D ? scene3D?.output : nil)
            }
            let allocsAfter = AllocationCounter.counts
            stats.add(allocations: allocsAfter.own &- allocsBefore.own, driver: allocsAfter.driver &- allocsBefore.driver)
            steady.frameDone(frame: framesShown, allocations: allocsAfter)
            // The statistics themselves (once a second) are not counted: they measure, they are not the frame.
            AllocationCounter.uncounted {
                if stats.frameDone(now: monotonicSeconds()) {
                    statusText = makeStatusText()
                    texts.panelStatus = makePanelStatusLines()
                    if options.stats {
                        print("stats: \(stats.line)")
                        fflush(stdout)
                    }
                }
            }
            if now - lastTitle > 1 {
                lastTitle = now
                updateWindowTitle()
            }
        }
        stopRecording()
        try waitFrameFence()
        vkDeviceWaitIdle(context.device)
        let allocsAtEnd = AllocationCounter.counts
        AllocationCounter.counting(false)
        if options.stats, let line = steady.line(frames: framesShown, allocations: allocsAtEnd) {
            print(line)
            fflush(stdout)
        }
        logUI("exit frames \(framesReceived) shown \(framesShown) dropped \(stats.dropped) last \(lastFrameIndex ?? -1)")
    }

    /// What an output was made from: the frame's buffers and their generations, its index, the settings.
    struct ProcessedKey: Equatable {
        let color: ObjectIdentifier, colorGeneration: UInt64
        let depth: ObjectIdentifier?, depthGeneration: UInt64
        let index: Int
        let settings: ViewSettings
    }

    func key(_ f: FrameSet) -> ProcessedKey {
        let d = f.depth?.map
        return ProcessedKey(color: ObjectIdentifier(f.color), colorGeneration: f.color.generation, depth: d.map { ObjectIdentifier($0) },
                            depthGeneration: d?.generation ?? 0, index: f.index, settings: settings)
    }

    /// Takes the newest frame the source's thread finished (never blocking); errors are shown, not fatal.
    func pollSource(now: Double) {
        syncSmoothing()
        let (frame, error, warnings) = prefetcher.take()
        for w in warnings { notice(w) }
        if let f = frame {
            // Before the first frame taken from a source, the frames its thread made and let go count from where it started.
            if let last = lastFrameIndex ?? prefetcher.startIndex.map({ $0 - 1 }), f.index > last + 1, let p = playback, !p.isPaused {
                stats.drop(f.index - last - 1)
            }
            lastFrameIndex = f.index
            framesReceived += 1
            current = smoothed(f)
            sourceError = nil
        } else if let error {
            let text = "\(error)"
            if sourceError != text { notice("source: \(text)", isError: true) }
            sourceError = text
        }
    }

    // MARK: Snapshot

    /// Reads back what the window shows as an image: the point-cloud render (`texture3D`), or the 2D
    /// output, where a blend left to the window's pass (`mixWith`) has no image of its own, so the
    /// mixer runs for it. Snapshots and video recording use it.
    func readBackView(output: FrameProcessor.Output?, texture3D: GPUTexture?, frame: FrameSet) throws -> PixelBuffer? {
        var image: PixelBuffer?
        try processor.recorder.frame {
            try oneShot { cb in
                if let texture3D { image = try processor.recorder.readback(cb, texture3D); return }
                guard let output else { return }
                let out = output.mixWith == nil ? output : try processor.record(cb, frame: frame, settings: settings) { _ in }
                // A picture made on the CPU is already what a readback of its texture would give.
                if let picture = out.picture { image = picture; return }
                image = try processor.recorder.readback(cb, try processor.texture(of: out, cb))
            }
        }
        return image
    }

    /// Writes the snapshot files: the 2D output (`output`), or in 3D the point-cloud render (`texture3D`).
    func takeSnapshot(output: FrameProcessor.Output?, texture3D: GPUTexture?) {
        guard let frame = current, output != nil || texture3D != nil else { notice("snapshot: no frame yet", isError: true); return }
        do {
            let filtered = try readBackView(output: output, texture3D: texture3D, frame: frame)
            guard let filtered else { return }
            let name = Snapshot.name(frame: frame.index)
            let files = try Snapshot.write(name: name, directory: options.snapshotDir, filtered: filtered,
                                           color: frame.color, depth: frame.depth, intrinsics: source.intrinsics,
                                           mode: view == .threeD ? "3d" : settings.mode.name, timestamp: frame.timestamp, frame: frame.index,
                                           source: source.name)
            notice("snapshot: \(files.count) files as \(options.snapshotDir)/\(name)_*")
            if options.logUI { print("snapshot: \((options.snapshotDir as NSString).appendingPathComponent(name))"); fflush(stdout) }
        } catch {
            notice("snapshot failed: \(error)", isError: true)
        }
    }
}
