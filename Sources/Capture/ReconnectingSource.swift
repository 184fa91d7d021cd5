import DepthKit
import Foundation

/// Who a V4L2 camera node is, to know it again when it is plugged back in (the kernel may give it
/// another `/dev/videoN`): its bus info, card name and pixel formats; by path and card name when the
/// driver gives no bus info. The nodes of one device (a RealSense's depth, IR and color) share bus
/// info and card name and differ in their formats.
public struct V4L2DeviceIdentity: Equatable, Sendable, CustomStringConvertible {
    public var path: String
    public var card: String
    public var busInfo: String
    /// Four-character codes the node offers, sorted.
    public var formats: [String]

    public init(path: String, card: String, busInfo: String, formats: [String]) {
        self.path = path
        self.card = card
        self.busInfo = busInfo
        self.formats = formats.sorted()
    }

    /// The identity of a node `V4L2Devices.list` could open and enumerate; nil for one it could not.
    public init?(_ info: V4L2DeviceInfo) {
        guard info.error == nil else { return nil }
        self.init(path: info.path, card: info.card, busInfo: info.busInfo, formats: info.formats.map(\.fourcc))
    }

    /// Opens `path` through `system`, reads its identity and closes it again (nil: not an openable capture node).
    public static func read(path: String, system: V4L2System) -> V4L2DeviceIdentity? {
        V4L2Devices.list(paths: [path], system: system).first.flatMap(V4L2DeviceIdentity.init)
    }

    /// The same camera node: same bus info, card and formats; without bus info (on either side),
    /// the same path and card.
    public func isSameNode(as other: V4L2DeviceIdentity) -> Bool {
        if !busInfo.isEmpty && !other.busInfo.isEmpty {
            return busInfo == other.busInfo && card == other.card && formats == other.formats
        }
        return path == other.path && card == other.card
    }

    /// "/dev/video2 (HD Webcam C525)".
    public var description: String { card.isEmpty ? path : "\(path) (\(card))" }
}

/// A V4L2 camera that survives being unplugged: it wraps a `V4L2Source` and owns the wait-and-resume
/// state, so the viewer only shows it.
///
/// When the camera goes away (ENODEV/EIO from the driver, or the watcher reporting its node
/// removed), `nextFrame` stops the camera and returns nil — nothing is thrown, so there is no error
/// per frame — and `state` becomes `.waiting`. A node that then appears (`DeviceEvents`: the inotify
/// watcher) is opened once to read its identity; when every node of the lost camera is back (same
/// bus info, card name and formats, or the same path when there is no bus info), the camera is
/// opened again with the same requests (format, size, rate; depth scale; depth rate limit; the same `V4L2SourceControls`, which writes the controls again on open) through
/// the normal open path, at whatever `/dev/videoN` it now has, and frames resume (their indices
/// continue). A different camera appearing changes nothing. Without `events` (inotify unavailable),
/// the nodes of `candidatePaths()` are checked every `retryInterval` seconds instead.
///
/// `nextFrame`, `start` and `stop` are called from one thread (the viewer's source thread); `state`,
/// `stateChanges` and `source` may be read from any.
///
/// `@unchecked Sendable`: the device watcher's thread calls `note` only; what it shares with the
/// frame thread (`current`, `currentState`, `changes`, `resumedText`, `added`, `openNodeRemoved`)
/// is read and written under `lock`. Everything else belongs to the thread that calls `start`,
/// `nextFrame` and `stop`.
public final class ReconnectingSource: FrameSource, DepthRateLimiting, CameraReconnection, @unchecked Sendable {
    public enum State: Equatable, Sendable {
        case streaming
        /// The camera went away and this waits for it; `camera` names it ("/dev/video2 (HD Webcam)").
        case waiting(camera: String)
    }

    public let events: DeviceEvents?
    /// Seconds between checks without `events`, and between retries of a node that appeared but
    /// could not be opened yet.
    public var retryInterval = 1.0
    /// The nodes to check without `events` (default: the `video*` nodes beside the camera's).
    public var candidatePaths: () -> [String]
    /// Times a node that appeared but could not be opened is retried (one `retryInterval` apart).
    public var openRetries = 5

    private let system: V4L2System
    private let lock = NSLock()
    private var current: V4L2Source
    private var currentState = State.streaming
    private var changes = 0
    private var resumedText: String?
    private var added: [String] = []
    private var openNodeRemoved = false
    private var token: Int?
    private var onWarningHandler: ((String) -> Void)?

    // The source thread's own state.
    private var waiting = false
    private var colorIdentity: V4L2DeviceIdentity
    private var depthIdentity: V4L2DeviceIdentity?
    private var matchedColor: String?
    private var matchedDepth: String?
    private var retries: [String: Int] = [:]
    private var lastAttempt = -Double.infinity
    private var delivered = 0

    /// - Parameter events: reports camera nodes coming and going (the viewer's `DeviceWatcher`); nil
    ///   checks on a timer.
    public init(_ source: V4L2Source, events: DeviceEvents?) {
        current = source
        system = source.color.system
        self.events = events
        colorIdentity = V4L2DeviceIdentity(path: source.color.path, card: "", busInfo: "", formats: [])
        depthIdentity = source.depth.map { V4L2DeviceIdentity(path: $0.path, card: "", busInfo: "", formats: []) }
        let directory = (source.color.path as NSString).deletingLastPathComponent
        candidatePaths = { V4L2Devices.paths(directory: directory) }
    }

    deinit { if let token { events?.unsubscribe(token) } }

    /// The camera open now (another object after it came back at another path).
    public var source: V4L2Source { lock.withLock { current } }
    /// Streaming, or waiting for the camera to come back.
    public var state: State { lock.withLock { currentState } }
    /// Counts state changes: a reader compares it with the last it saw (no allocation per frame).
    public var stateChanges: Int { lock.withLock { changes } }
    /// After a resume: what came back ("/dev/video4 (HD Webcam): 640x480 YUYV at 30 fps").
    public var resumedDescription: String? { lock.withLock { resumedText } }

    // MARK: FrameSource

    public var name: String { source.name }
    public var intrinsics: CameraIntrinsics { source.intrinsics }
    public var isLive: Bool { true }
    public var calibration: RGBDCalibration? { source.calibration }
    public var metadata: SourceMetadata { source.metadata }
    public var warnings: [String] { source.warnings }
    public var onWarning: ((String) -> Void)? {
        get { onWarningHandler }
        set { onWarningHandler = newValue; source.onWarning = newValue }
    }
    public var nominalFrameRate: Double? { source.nominalFrameRate }
    public var depthUnitsPerMeter: Float? { source.depthUnitsPerMeter }
    public var depthRateLimit: Double? {
        get { source.depthRateLimit }
        set { source.depthRateLimit = newValue }
    }
    public var depthRate: DepthRateLimiting? { self }
    /// The camera's controls: one object for the camera wherever it comes back.
    public var cameraControls: V4L2SourceControls? { source.controls }
    public var reconnection: CameraReconnection? { self }

    public func start() throws {
        let s = source
        try s.start()
        s.reconnectInterval = .infinity   // this wrapper reconnects, by identity
        colorIdentity = V4L2DeviceIdentity.read(path: s.color.path, system: system)
            ?? V4L2DeviceIdentity(path: s.color.path, card: s.color.card, busInfo: s.color.busInfo, formats: [])
        depthIdentity = s.depth.map { d in
            V4L2DeviceIdentity.read(path: d.path, system: system)
                ?? V4L2DeviceIdentity(path: d.path, card: d.card, busInfo: d.busInfo, formats: [])
        }
        waiting = false
        if token == nil, let events {
            token = events.subscribe { [weak self] in self?.note($0) }
        }
        lock.withLock { currentState = .streaming }
    }

    public func stop() {
        if let token { events?.unsubscribe(token) }
        token = nil
        source.stop()
        waiting = false
    }

    public func nextFrame(now: Double) throws -> FrameSet? {
        if !waiting, lock.withLock({ () -> Bool in defer { openNodeRemoved = false }; return openNodeRemoved }) {
            enterWaiting(now: now)
        }
        if waiting {
            guard resume(now: now) else { return nil }
        }
        let s = source
        do {
            guard var f = try s.nextFrame(now: now) else { return nil }
            f.index = delivered
            delivered += 1
            return f
        } catch let e as CaptureError {
            guard case .disconnected = e else { throw e }
            enterWaiting(now: now)
            return nil
        }
    }

    // MARK: Waiting and resuming

    /// From the watcher's thread.
    private func note(_ event: DeviceEvent) {
        lock.withLock {
            switch event {
            case .added(let p):
                added.append(p)
            case .removed(let p):
                if p == current.color.path || p == current.depth?.path { openNodeRemoved = true }
                added.removeAll { $0 == p }
            }
        }
    }

    private func enterWaiting(now: Double) {
        source.stop()
        waiting = true
        matchedColor = nil
        matchedDepth = nil
        retries = [:]
        lastAttempt = now
        let text = colorIdentity.description
        lock.withLock {
            currentState = .waiting(camera: text)
            changes += 1
        }
    }

    /// Checks the nodes that appeared (or, without events, every node once a `retryInterval`);
    /// true when the camera is streaming again.
    private func resume(now: Double) -> Bool {
        var candidates: [String] = []
        if events != nil {
            lock.withLock { if !added.isEmpty { swap(&candidates, &added) } }
            if !retries.isEmpty, now - lastAttempt >= retryInterval {
                lastAttempt = now
                candidates += retries.keys.sorted().filter { !candidates.contains($0) }
            }
        } else if now - lastAttempt >= retryInterval {
            lastAttempt = now
            candidates = candidatePaths()
        }
        guard !candidates.isEmpty else { return false }
        for path in candidates {
            guard let id = V4L2DeviceIdentity.read(path: path, system: system) else {
                // Not openable yet (udev still setting it up, the driver still binding): try again later.
                if events != nil {
                    let n = (retries[path] ?? 0) + 1
                    retries[path] = n <= openRetries ? n : nil
                }
                continue
            }
            retries[path] = nil
            if id.isSameNode(as: colorIdentity) {
                matchedColor = path
            } else if let d = depthIdentity, id.isSameNode(as: d) {
                matchedDepth = path
            }
        }
        guard let colorPath = matchedColor, depthIdentity == nil || matchedDepth != nil else { return false }
        let old = source
        let next = colorPath == old.color.path && matchedDepth == old.depth?.path
            ? old
            : V4L2Source(colorPath: colorPath, depthPath: matchedDepth, system: system, depthScale: old.color.depthScale,
                         colorRequest: old.colorRequest, depthRequest: old.depthRequest, controls: old.controls)
        if next !== old {
            for (new, was) in [(next.color, old.color)] + (next.depth.flatMap { n in old.depth.map { (n, $0) } }.map { [$0] } ?? []) {
                new.y16IsDepth = was.y16IsDepth
                new.grayOutput = was.grayOutput
                new.bufferCount = was.bufferCount
            }
        }
        next.depthRateLimit = old.depthRateLimit
        next.onWarning = onWarningHandler
        do {
            try next.start()
        } catch {
            // Back but not ready (busy, still binding): look again at these nodes after retryInterval.
            next.stop()
            retries[colorPath] = retries[colorPath] ?? 1
            if let d = matchedDepth { retries[d] = retries[d] ?? 1 }
            matchedColor = nil
            matchedDepth = nil
            lastAttempt = now
            return false
        }
        next.reconnectInterval = .infinity
        colorIdentity.path = colorPath
        if let d = matchedDepth { depthIdentity?.path = d }
        waiting = false
        retries = [:]
        var text = colorIdentity.description
        if let c = next.color.configuration { text += ": \(c.width)x\(c.height) \(c.fourcc)" + (c.fps.map { " at \(formatRate($0)) fps" } ?? "") }
        lock.withLock {
            current = next
            currentState = .streaming
            resumedText = text
            changes += 1
            added.removeAll()
            openNodeRemoved = false
        }
        return true
    }
}
