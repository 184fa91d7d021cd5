import Foundation

/// The cameras present, as the viewer's source list shows them: one group per camera as
/// `V4L2Devices.groups` makes them for `devices` (the nodes that share bus info; a node alone when
/// the driver gives none), each with the entry that opens the camera — its color (else infrared)
/// node with its depth node. Cameras depthlens cannot show (only metadata or unsupported nodes, or
/// nodes that cannot be opened) get no group.
public struct CameraMenu: Equatable, Sendable {
    public struct Entry: Equatable, Sendable {
        /// What the list shows ("/dev/video4 + depth /dev/video2").
        public var label: String
        /// The `--source` string it opens ("v4l2:/dev/video4,depth=/dev/video2").
        public var source: String
    }
    public struct Group: Equatable, Sendable {
        /// The camera: card name and bus info, else the node ("HD Webcam C525 (usb-0000:00:14.0-1)").
        public var title: String
        public var entries: [Entry]
    }
    public var groups: [Group]

    public init(groups: [Group] = []) { self.groups = groups }

    public init(devices: [V4L2DeviceInfo]) {
        groups = V4L2Devices.groups(devices).compactMap { g in
            guard let source = g.source, let first = g.nodes.first else { return nil }
            let spec = source.dropFirst("v4l2:".count)
            let label = spec.replacingOccurrences(of: ",depth=", with: " + depth ")
            let place = g.busInfo.isEmpty ? first.path : g.busInfo
            return Group(title: g.card.isEmpty ? place : "\(g.card) (\(place))",
                         entries: [Entry(label: label, source: source)])
        }
    }
}

/// The cameras present now (`menu`), listed again whenever a camera node is added or removed
/// (`DeviceEvents`: the inotify watcher), on the reporter's thread, and by `refresh()`. The render
/// loop reads `menu` and `generation` under a short lock and never waits for a listing.
///
/// `@unchecked Sendable`: the watcher's thread calls `refresh`; listings are serialized by
/// `listLock` (the V4L2 system is used only inside it) and the menu is read and written under
/// `lock`. `token` is set in `init` and cleared by `stop` on the owner's thread.
public final class CameraCatalog: @unchecked Sendable {
    /// The watcher this catalog started (`init(directory:)`), nil when inotify was unavailable.
    public let watcher: DeviceWatcher?
    /// Why there is no watcher ("…: inotify failed: …"), if there is none.
    public let watchProblem: String?
    public let events: DeviceEvents?
    /// The DDS image topics on ROS_DOMAIN_ID's domain, listed only when asked (`dds.listen()`).
    public let dds = DDSTopicCatalog()
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
