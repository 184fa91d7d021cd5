import DepthKit

/// A V4L2 color camera with an optional depth camera (`v4l2:/dev/videoN[,depth=/dev/videoM]`).
/// Depth is paired to color by nearest timestamp (`FrameSynchronizer`, within half a frame
/// interval; else the frame is color-only).
///
/// After an unplug `nextFrame` throws `CaptureError.disconnected` once, returns nil while the
/// device is away, and tries to reopen every `reconnectInterval` seconds, resuming on its own.
public final class V4L2Source: FrameSource, DepthRateLimiting {
    public let color: V4L2Camera
    public let depth: V4L2Camera?
    public var colorRequest: V4L2Request
    public var depthRequest: V4L2Request
    /// Seconds between reopen attempts after a disconnect.
    public var reconnectInterval = 1.0
    public private(set) var isConnected = false
    public var name: String { "v4l2:\(color.path)" + (depth.map { ",depth=\($0.path)" } ?? "") }
    public var isLive: Bool { true }
    /// The color stream's configured rate once started.
    public var nominalFrameRate: Double? { color.configuration?.fps.flatMap { $0 > 0 ? $0 : nil } }
    public var intrinsics: CameraIntrinsics {
        let c = color.configuration
        return .default(width: c?.width ?? colorRequest.width, height: c?.height ?? colorRequest.height)
    }

    /// Depth frames waiting for their color, each with its own stamp (`FrameSet.depthTimestamp`).
    private var synchronizer = FrameSynchronizer<(depth: DepthData, stamp: Double)>(frameInterval: 1.0 / 30)
    private var depthGate = DepthRateGate()
    private var lastDepth: (depth: DepthData, stamp: Double)?
    /// The depth camera keeps streaming at its configured rate; under a limit only that many matched
    /// depth frames per second (by color timestamp) reach the frames, the others repeat the last one.
    public var depthRateLimit: Double? {
        get { depthGate.limit }
        set { depthGate.limit = newValue; lastDepth = nil }
    }
    private var delivered = 0
    /// The cameras' controls: enumerated, restored and `--ctrl` set each time they open (`V4L2SourceControls`).
    public let controls: V4L2SourceControls
    public var cameraControls: V4L2SourceControls? { controls }
    public var depthRate: DepthRateLimiting? { self }
    /// Control notices (refused values) go where the source's warnings go.
    public var onWarning: ((String) -> Void)? {
        get { controls.onNotice }
        set { controls.onNotice = newValue }
    }
    private var started = false
    private var lastAttempt = -Double.infinity

    /// - Parameter depthScale: Z16 units per meter (`--depth-scale`, default 1000).
    /// - Parameter controls: the controls' state (a camera reopened at another node keeps its own).
    public init(colorPath: String, depthPath: String? = nil, system: V4L2System = LinuxV4L2System(),
                depthScale: Float = 1000, colorRequest: V4L2Request = .color(), depthRequest: V4L2Request = .depth(),
                controls: V4L2SourceControls = V4L2SourceControls()) {
        self.controls = controls
        color = V4L2Camera(path: colorPath, system: system, depthScale: depthScale)
        depth = depthPath.map {
            let d = V4L2Camera(path: $0, system: system, depthScale: depthScale)
            d.y16IsDepth = true
            return d
        }
        self.colorRequest = colorRequest
        self.depthRequest = depthRequest
    }

    /// Opens, configures and starts both cameras. Throws `CaptureError` naming the device.
    public func start() throws {
        started = true
        do {
            try connect()
        } catch {
            disconnectAll()
            throw error
        }
    }

    private func connect() throws {
        try color.open()
        let c = try color.configure(colorRequest)
        if let depth {
            try depth.open()
            try depth.configure(depthRequest)
        }
        try controls.attach([color] + (depth.map { [$0] } ?? []))
        try color.start()
        try depth?.start()
        synchronizer = FrameSynchronizer(frameInterval: 1 / (c.fps ?? colorRequest.fps))
        isConnected = true
    }

    private func disconnectAll() {
        controls.detach()
        color.close()
        depth?.close()
        synchronizer.removeAll()
        lastDepth = nil
        depthGate.reset()
        isConnected = false
    }

    public func stop() {
        started = false
        disconnectAll()
    }

    public func nextFrame(now: Double) throws -> FrameSet? {
        guard started else { throw CaptureError.invalidState("\(name): nextFrame before start()") }
        if !isConnected {
            guard now - lastAttempt >= reconnectInterval else { return nil }
            lastAttempt = now
            do { try connect() } catch {
                disconnectAll()
                return nil
            }
        }
        controls.service(now: now)
        do {
            if let depth {
                var n = 0
                while n < 8, let d = try depth.readFrame() {
                    synchronizer.add((DepthData(map: d.buffer, accuracy: .absolute,
                                                intrinsics: .default(width: d.buffer.width, height: d.buffer.height)), d.timestamp),
                                     timestamp: d.timestamp)
                    n += 1
                }
            }
            guard let c = try color.readFrame() else { return nil }
            var matched = synchronizer.match(timestamp: c.timestamp)
            if depthGate.limit != nil, matched != nil {
                if depthGate.admits(timestamp: c.timestamp) || lastDepth == nil { lastDepth = matched } else { matched = lastDepth }
            }
            let set = FrameSet(color: c.buffer, depth: matched?.depth, timestamp: c.timestamp, index: delivered,
                               depthTimestamp: matched?.stamp)
            delivered += 1
            return set
        } catch let e as CaptureError {
            if case .disconnected = e {
                disconnectAll()
                lastAttempt = now
            }
            throw e
        }
    }
}
