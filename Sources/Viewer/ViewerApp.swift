import CGLFW
import CVulkan
import Capture
import DepthKit
import Foundation
import GPUKit

/// `depthlens view`: the window people live in, a coordinator of the owners that do the work.
/// One frame in flight (`FrameSync`): wait for the previous frame's fence, poll the source
/// (`SourceSession`), acquire, record (the picture, then the window's pass: `PresentComposer`,
/// with ImGui on top), submit and present (on the present thread, `FramePresenter`, while the
/// next frame begins; a 3D picture made on the CPU is drawn before the wait, see `runFrame`).
/// Nothing is read back except for a snapshot or a video (`ViewerCapture`). The keys and the panel change `settings` and `view` and call the owners.
public final class ViewerApp {
    let options: ViewerOptions
    let window: Window
    let swapchain: Swapchain
    let log: ViewerLog
    let stats: ViewerStats
    let sync: FrameSync
    /// The source and its thread (and the thermal watch that limits its depth rate).
    let session: SourceSession
    /// Each new frame smoothed, calibrated and aligned: `depth.current` is the frame shown.
    let depth: DepthPipeline
    let composer: PresentComposer
    /// The 3D view: its camera, mouse and picks, and its pictures and point layers.
    let view3D: View3D
    let imgui: ImGuiLayer
    let capture: ViewerCapture
    /// The panel's Export section and Ctrl+E: recordings written as TUM folders on their own thread.
    let export: ViewerExport
    /// What the panel and the keys change between frames (the 2D or 3D `view` too).
    var settings: ViewSettings
    /// The panel's and the overlay's own state (shown or not, the source field, readouts, texts).
    var ui: ViewerUIState

    /// Returns when the window closes (Esc, Q, the window's close button, `--exit-after`) or a stop
    /// signal came (SIGINT, SIGTERM, SIGHUP: `StopSignals.pending` says which); either way a
    /// recording in progress is finished first.
    public static func run(_ options: ViewerOptions) throws {
        StopSignals.install()
        let app = try ViewerApp(options: options)
        defer { app.capture.stopRecording(); app.export.finish() }   // keeps what was recorded when the loop fails
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
        ctx.validation?.echo = true
        swapchain = try Swapchain(context: ctx, surface: try win.makeSurface(instance: ctx.instance), vsync: options.vsync)
        let log = ViewerLog(logsUI: options.logUI), stats = ViewerStats(now: monotonicSeconds())
        let sync = try FrameSync(context: ctx, stats: stats)
        let printsPicks = options.logReadout || options.logUI
        let input3D = Scene3DInput { line in
            guard printsPicks else { return }
            print(line)
            fflush(nil)
        }
        let factory = try GPUFilterFactory(context: ctx, library: try ShaderLibrary.shared())
        factory.watchesShaders = options.watchShaders
        let scene3D = Scene3D.make(context: ctx, factory: factory, input: input3D)
        scene3D?.drawing = options.points ?? (ctx.properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU ? .cpu : .compute)
        scene3D?.edlChoice = options.edl
        let composer = try PresentComposer(context: ctx, swapchain: swapchain, options: options, sync: sync, log: log,
                                           factory: factory, scene3D: scene3D)
        self.log = log
        self.stats = stats
        self.sync = sync
        self.composer = composer
        view3D = View3D(input: input3D, scene: scene3D)
        settings = ViewSettings(mode: options.mode)
        settings.mix = options.mix
        settings.colormap = options.colormap
        settings.backend = options.backend
        settings.smoothing = options.smoothing
        settings.view = options.view
        ui = ViewerUIState(showPanel: options.showPanel, sourceText: options.source.description)
        session = try SourceSession(options: options, log: log, cameras: Self.makeCameraCatalog(log: log))
        depth = DepthPipeline(options: options, context: ctx, log: log)
        let (fw, fh) = win.framebufferSize
        try swapchain.recreate(width: fw, height: fh)
        swapchain.needsRecreate = false
        try sync.prepare(imageCount: swapchain.images.count)
        imgui = try ImGuiLayer(window: win, context: ctx, renderPass: swapchain.renderPass,
                               imageCount: max(2, swapchain.images.count), oneShot: { try sync.oneShot($0) })
        capture = ViewerCapture(directory: options.snapshotDir, log: log, composer: composer, scene3D: scene3D)
        capture.recordsRGBD = options.recordRGBD
        export = ViewerExport(options: options, log: log)
        try showPointList()
        session.start()
    }

    deinit {
        session.thermal.stop()
        session.cameras.stop()
        try? sync.finishPresent()
        swapchain.context.waitIdle()
    }

    // MARK: The loop

    func loop() throws {
        AllocationCounter.counting(true)
        defer { AllocationCounter.counting(false) }
        while try runFrame() {}
        capture.stopRecording()
        export.finish()
        try sync.finishPresent()
        try sync.waitForFrame()
        swapchain.context.waitIdle()
        let steadyLine = stats.finish()
        if options.stats, let steadyLine {
            print(steadyLine)
            fflush(nil)
        }
        logUI("exit frames \(session.timeline.framesReceived) shown \(stats.framesShown) dropped \(stats.perSecond.dropped) last \(session.timeline.lastFrameIndex ?? -1)")
    }

    /// One pass of the loop; false when the window is to close. Input, swapchain, the previous
    /// frame's fence, the source, acquire, UI, record, submit, present, then what follows a frame.
    private func runFrame() throws -> Bool {
        stats.beginFrame()
        glfwPollEvents()
        let now = monotonicSeconds()
        handleInput(now: now)
        spinView(now: now)
        if window.shouldClose || stats.exitDue(options, now: now) || StopSignals.pending != nil { return false }
        guard try readySwapchain() else { return true }

        stats.startLaps()
        // A 3D picture made on the CPU is made before waiting for the last frame when that one
        // was such a picture too (`PresentComposer.drawsAhead`): the CPU draws this frame while
        // lavapipe runs the last one's copy and pass and the present thread hands it to X.
        let ahead = composer.drawsAhead(view: view, copyFormat: swapchain.copyFormat)
        if !ahead {
            try sync.waitForFrame()
            stats.lap("gpu wait")
        }
        depth.sync(&settings, session: session)
        if let f = session.poll(stats: &stats.perSecond) { depth.take(f, from: session, alignDepth: settings.alignDepth) }
        pollPointLists()
        updateWorld(now: now)
        stats.lap("source")
        if ahead {
            imgui.newFrame()
            buildUI(now: now)
            stats.lap("ui")
            composer.drawAhead(frame: depth.current, view: view, settings: settings, extent: swapchain.extent, now: now)
            stats.lap("kernels")
        }
        try sync.finishPresent()
        stats.lap("present")
        if ahead {
            try sync.waitForFrame()
            stats.lap("gpu wait")
        }
        composer.present.reloadIfNeeded()
        guard let image = try sync.acquire(from: swapchain) else { return true }
        stats.lap("acquire")
        if !ahead {
            imgui.newFrame()
            buildUI(now: now)
            stats.lap("ui")
        }

        let cb = try sync.beginFrame()
        var shown = composer.process(cb, frame: depth.current, view: view, settings: settings, extent: swapchain.extent,
                                     copyFormat: swapchain.copyFormat, now: now)
        stats.lapKernels(composer.processor.cpuTimes)
        composer.draw(cb, &shown, swapchain: swapchain, image: image, area: imageArea, imgui: imgui)
        try sync.endFrame()
        stats.lap("record")
        // Submitted and presented on the present thread; finished in the next frame (after its
        // picture is made when that is drawn ahead).
        // A point list the GPU draws presents here: its stride controller times each draw from one
        // frame's start to the next, which the thread would shift by a frame (a 20 M-point cloud
        // orbiting then swung between every point and the subset: 4.8 FPS rather than 34).
        let listOnGPU = view == .threeD && view3D.scene.map { $0.pointList != nil && !$0.drawsOnCPU } == true
        try sync.submitAndPresent(image: image, on: swapchain, transfer: shown.touchedByTransfer,
                                  threaded: FramePresenter.threaded && !listOnGPU)
        stats.lap("submit")

        let shownCount = stats.frameShown()
        if shownCount == 3 { logUI("ready") }
        reportFirstFrame()
        // Tests wait for frames to be drawn instead of sleeping (`--log-ui` only).
        log.frame(shownCount)
        if let source = session.source { capture.frameShown(shown, frame: depth.current, source: source, view: view, settings: settings) }
        stats.endFrame {
            ui.statusText = makeStatusText()
            ui.texts.panelStatus = makePanelStatusLines()
            if options.stats {
                print("stats: \(stats.perSecond.line)" + (view3D.scene?.drawnPointsLine.map { " | \($0)" } ?? "")
                      + (deliveryLine.map { " | \($0)" } ?? ""))
                fflush(nil)
            }
        }
        if stats.titleDue(now: now) { updateWindowTitle() }
        return true
    }

    /// Makes the swapchain again when it must (resized, out of date, fullscreen, vsync); false
    /// while there is nothing to draw into (minimized), after waiting a little for events.
    private func readySwapchain() throws -> Bool {
        let (fw, fh) = window.framebufferSize
        if fw == 0 || fh == 0 || window.isIconified {
            // Minimized: nothing to draw into; sleep until something happens.
            glfwWaitEventsTimeout(0.05)
            swapchain.needsRecreate = true
            return false
        }
        guard swapchain.needsRecreate || Int(swapchain.extent.width) != fw || Int(swapchain.extent.height) != fh else { return true }
        try sync.finishPresent()
        try sync.waitForFrame()
        swapchain.context.waitIdle()
        guard try swapchain.recreate(width: fw, height: fh) else { glfwWaitEventsTimeout(0.05); return false }
        try sync.prepare(imageCount: swapchain.images.count)
        imgui.setImageCount(max(2, swapchain.images.count))
        logUI("swapchain \(swapchain.extent.width)x\(swapchain.extent.height) \(swapchain.presentModeName)")
        return true
    }

    // MARK: Sources

    /// Opens the panel's source text in place of the current source; on failure the old one stays.
    func reopenSource() {
        guard session.reopen(String(cBuffer: ui.sourceText)) else { return }
        depth.reset()
        do { try showPointList() } catch { notice("cannot show \(session.name): \(error)", isError: true) }
        notice("opened \(session.name)")
    }

    var playback: PlaybackControl? { session.playback }

    /// The 2D or 3D view (kept in `settings`).
    var view: ViewerOptions.View {
        get { settings.view }
        set { settings.view = newValue }
    }

    func notice(_ s: String, isError: Bool = false, seconds: Double = 6) { log.notice(s, isError: isError, seconds: seconds) }

    func logUI(_ s: String) { log.ui(s) }
}
