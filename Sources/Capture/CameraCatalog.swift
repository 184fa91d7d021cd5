import Foundation

/// The cameras present, as the viewer's source list shows them: one group per device (the nodes
/// that share bus info; a node alone when the driver gives none), and in it one entry per node
/// that can be opened as a color camera, plus "color + depth" when the device also has a depth
/// (Z16) node. Built from `V4L2Devices.list`; nodes that cannot be opened or are not capture nodes
/// (a webcam's metadata node) get no entry.
public struct CameraMenu: Equatable, Sendable {
    public struct Entry: Equatable, Sendable {
        /// What the list shows ("/dev/video0  YUYV, MJPG").
        public var label: String
        /// The `--source` string it opens ("v4l2:/dev/video0", "v4l2:/dev/video4,depth=/dev/video2").
        public var source: String
    }
    public struct Group: Equatable, Sendable {
        /// The device: card name, and bus info when known, else the node ("HD Webcam C525 (usb-0000:00:14.0-1)").
        public var title: String
        public var entries: [Entry]
    }
    public var groups: [Group]

    public init(groups: [Group] = []) { self.groups = groups }

    public init(devices: [V4L2DeviceInfo]) {
        var order: [String] = []
        var byKey: [String: [V4L2DeviceInfo]] = [:]
        for d in devices {
            let key = d.busInfo.isEmpty ? "path:" + d.path : "bus:" + d.busInfo
            if byKey[key] == nil { order.append(key) }
            byKey[key, default: []].append(d)
        }
        let colorFormats: Set<String> = ["YUYV", "MJPG", "RGB3", "BGR3", "GREY", "Y16"]
        groups = order.compactMap { key in
            let nodes = byKey[key]!.filter { $0.error == nil }
            func supported(_ d: V4L2DeviceInfo) -> [String] { d.formats.filter(\.supported).map(\.fourcc) }
            let color = nodes.filter { supported($0).contains { colorFormats.contains($0) } }
            let depth = nodes.filter { supported($0).contains("Z16") }
            var entries = color.map { Entry(label: "\($0.path)  " + supported($0).joined(separator: ", "), source: "v4l2:\($0.path)") }
            if let c = color.first(where: { n in !depth.contains { $0.path == n.path } }) ?? color.first,
               let d = depth.first(where: { $0.path != c.path }) {
                entries.append(Entry(label: "\(c.path) + depth \(d.path)", source: "v4l2:\(c.path),depth=\(d.path)"))
            }
            guard !entries.isEmpty, let first = nodes.first else { return nil }
            let place = first.busInfo.isEmpty ? first.path : first.busInfo
            return Group(title: first.card.isEmpty ? place : "\(first.card) (\(place))", entries: entries)
        }
    }
}

/// The cameras present now (`menu`), listed again whenever a camera node is added or removed
/// (`DeviceEvents`: the inotify watcher), on the reporter's thread, and by `refresh()`. The render
/// loop reads `menu` and `generation` under a short lock and never waits for a listing.
public final class CameraCatalog {
    /// The watcher this catalog started (`init(directory:)`), nil when inotify was unavailable.
    public let watcher: DeviceWatcher?
    /// Why there is no watcher ("…: inotify failed: …"), if there is none.
    public let watchProblem: String?
    public let events: DeviceEvents?
    private let directory: String
    private let system: V4L2System
    private let lock = NSLock()
    private let listLock = NSLock()
    private var current = CameraMenu()
    private var changes = 0
    private var token: Int?

    /// Watches `directory` with a `DeviceWatcher` (inotify); without inotify the list only changes
    /// on `refresh()`.
    public convenience init(directory: String = "/dev", system: V4L2System = LinuxV4L2System()) {
        do {
            let w = try DeviceWatcher(directory: directory)
            self.init(directory: directory, events: w, system: system, watcher: w, problem: nil)
        } catch {
            self.init(directory: directory, events: nil, system: system, watcher: nil, problem: "\(error)")
        }
    }

    /// Lists the cameras of `directory` through `system`, again on each of `events`' reports.
    public convenience init(directory: String, events: DeviceEvents?, system: V4L2System) {
        self.init(directory: directory, events: events, system: system, watcher: nil, problem: nil)
    }

    private init(directory: String, events: DeviceEvents?, system: V4L2System, watcher: DeviceWatcher?, problem: String?) {
        self.directory = directory
        self.events = events
        self.system = system
        self.watcher = watcher
        watchProblem = problem
        refresh()
        token = events?.subscribe { [weak self] _ in self?.refresh() }
    }

    deinit { stop() }

    /// Stops listening (and the watcher this catalog started).
    public func stop() {
        if let token { events?.unsubscribe(token) }
        token = nil
        watcher?.stop()
    }

    /// The cameras as last listed.
    public var menu: CameraMenu { lock.withLock { current } }
    /// Counts listings that changed the menu.
    public var generation: Int { lock.withLock { changes } }

    /// Lists the cameras now (on the caller's thread).
    public func refresh() {
        listLock.withLock {
            let m = CameraMenu(devices: V4L2Devices.list(paths: V4L2Devices.paths(directory: directory), system: system))
            lock.withLock {
                if m != current { current = m; changes += 1 }
            }
        }
    }
}
