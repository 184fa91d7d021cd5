#if canImport(Glibc)
import Glibc
#endif
import CPlatform
import Foundation

/// A change to one entry of a watched directory, as a `DeviceNodeNotifier` saw it (the name is the
/// entry's, relative to the directory).
public enum DeviceNodeChange: Equatable, Sendable {
    case created(String)
    case deleted(String)
    /// The entry's owner or mode changed: udev makes a camera node, then gives it its group and
    /// mode, so a node that could not be opened when it appeared may be openable now.
    case attributesChanged(String)
    /// Changes were lost (the kernel's queue overflowed): the watcher lists the directory again.
    case overflow
}

/// The system side of a directory watch, behind a protocol so tests can drive `DeviceWatcher`
/// with scripted changes (`ScriptedDeviceNotifier` in CaptureTesting). The real one is `InotifyNotifier`.
public protocol DeviceNodeNotifier: AnyObject, Sendable {
    /// Blocks until entries change, then calls `body` once per change, in order. Returns false
    /// (without calling `body`) once `interrupt()` was called or the watch ended for good.
    func waitForChanges(_ body: (DeviceNodeChange) -> Void) -> Bool
    /// Makes a blocked `waitForChanges`, and every later one, return false. Any thread.
    func interrupt()
}

/// `DeviceNodeNotifier` over Linux inotify (CPlatform's `dl_inotify_*`): IN_CREATE, IN_DELETE, IN_ATTRIB
/// (and renames) on one directory. The reader blocks in `poll` on the inotify descriptor and an
/// eventfd that `interrupt()` writes: no timer, no wake-up while nothing happens. The read buffer is
/// allocated once; only entries whose name starts with `namePrefix` become `String`s.
///
/// `@unchecked Sendable`: the read buffer and `endReason` belong to the one thread blocked in
/// `waitForChanges` (the watcher's); other threads only call `interrupt()`, which writes the eventfd.
public final class InotifyNotifier: DeviceNodeNotifier, @unchecked Sendable {
    public let directory: String
    private let fd: Int32
    private let wakeFD: Int32
    private let buffer: UnsafeMutableRawPointer
    private let capacity = 16 * 1024
    private let prefix: ContiguousArray<CChar>
    /// Why the watch ended, when it ended on its own (the directory went away, a read failed).
    public private(set) var endReason: String?

    /// Watches `directory`. Throws `CaptureError.system` when inotify is unavailable (no kernel
    /// support, the per-user watch limit reached, no such directory).
    public init(directory: String, namePrefix: String = "video") throws {
        self.directory = directory
        var f: Int32 = -1, w: Int32 = -1
        let r = dl_inotify_open(directory, &f, &w)
        guard r == 0 else { throw CaptureError.system(device: directory, call: "inotify", errno: -r) }
        fd = f
        wakeFD = w
        buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 8)
        prefix = ContiguousArray(namePrefix.utf8CString.dropLast())
    }

    deinit {
        dl_inotify_close(fd, wakeFD)
        buffer.deallocate()
    }

    public func waitForChanges(_ body: (DeviceNodeChange) -> Void) -> Bool {
        guard endReason == nil else { return false }
        let n = dl_inotify_wait(fd, wakeFD, buffer, capacity)
        if n == 0 { return false }
        if n < 0 {
            endReason = "\(directory): reading inotify events failed: \(errnoMessage(Int32(-n)))"
            return false
        }
        var offset = 0
        while true {
            var change = DL_NODE_OTHER
            var name: UnsafePointer<CChar>?
            let next = dl_inotify_next(buffer, n, offset, &change, &name)
            if next < 0 { break }
            offset = next
            if change == DL_NODE_OVERFLOW { body(.overflow); continue }
            if change == DL_NODE_GONE {
                endReason = "\(directory) is gone"
                return false
            }
            guard let name, change != DL_NODE_OTHER, hasPrefix(name) else { continue }
            let s = String(validatingCString: name) ?? ""
            if change == DL_NODE_CREATED { body(.created(s)) } else if change == DL_NODE_DELETED { body(.deleted(s)) } else { body(.attributesChanged(s)) }
        }
        return true
    }

    private func hasPrefix(_ name: UnsafePointer<CChar>) -> Bool {
        prefix.withUnsafeBufferPointer { strncmp(name, $0.baseAddress!, $0.count) == 0 }
    }

    public func interrupt() { _ = dl_inotify_wake(wakeFD) }
}

/// A camera node that appeared (and can be opened) or went away: a full path ("/dev/video2").
public enum DeviceEvent: Equatable, Sendable {
    case added(String)
    case removed(String)

    public var path: String {
        switch self {
        case .added(let p), .removed(let p): return p
        }
    }
}

/// Something that reports camera nodes as they come and go (`DeviceWatcher`; a scripted one in tests).
public protocol DeviceEvents: AnyObject, Sendable {
    /// Calls `handler` with every node added or removed from now on (on the reporter's thread).
    /// Returns a token for `unsubscribe`.
    func subscribe(_ handler: @escaping @Sendable (DeviceEvent) -> Void) -> Int
    func unsubscribe(_ token: Int)
}

/// Watches a directory (`/dev`) for V4L2 camera nodes (`videoN`) and tells its subscribers when one
/// is added or removed. It runs on its own thread, blocked in the notifier (inotify: in `poll`), so
/// it costs nothing while no device changes.
///
/// udev creates a node before it sets the node's group and mode, so a node that appears may not be
/// openable for a few milliseconds: such a node waits and is reported when an attribute change
/// (IN_ATTRIB) makes it openable (`isReady`). A lost-events overflow lists the directory again.
///
/// `@unchecked Sendable`: `present`, `notReady`, `handlers`, `nextToken` and `stopped` are read
/// and written under `lock`; the rest is immutable after `init` (`thread` is set before it starts).
public final class DeviceWatcher: DeviceEvents, @unchecked Sendable {
    public let directory: String
    private let notifier: DeviceNodeNotifier
    private let isReady: @Sendable (String) -> Bool
    private let lock = NSLock()
    /// Node names reported present (openable), and names that appeared but were not openable yet.
    private var present: Set<String> = []
    private var notReady: Set<String> = []
    private var handlers: [Int: @Sendable (DeviceEvent) -> Void] = [:]
    private var nextToken = 0
    private let finished = DispatchSemaphore(value: 0)
    private var stopped = false
    private var thread: Thread?

    /// Watches `directory` with inotify. Throws when inotify is unavailable; callers then retry on
    /// a timer instead (`ReconnectingSource` without events).
    public convenience init(directory: String = "/dev") throws {
        try self.init(directory: directory, notifier: InotifyNotifier(directory: directory))
    }

    /// - Parameter isReady: whether a node can be opened now (default: read and write access).
    public init(directory: String, notifier: DeviceNodeNotifier, isReady: @escaping @Sendable (String) -> Bool = DeviceWatcher.isOpenable) {
        self.directory = directory
        self.notifier = notifier
        self.isReady = isReady
        // The notifier watches already, so a node made while this lists the directory is not lost.
        present = Set(V4L2Devices.paths(directory: directory).filter(isReady).map { ($0 as NSString).lastPathComponent })
        let t = Thread { [weak self, notifier, finished] in
            while notifier.waitForChanges({ change in self?.handle(change) }) {}
            finished.signal()
        }
        t.name = "depthlens device watcher"
        thread = t
        t.start()
    }

    deinit { notifier.interrupt() }

    /// Read and write access, which opening a camera needs.
    public static func isOpenable(_ path: String) -> Bool { access(path, R_OK | W_OK) == 0 }

    /// The camera nodes present now (full paths, in number order).
    public var nodes: [String] {
        let names = lock.withLock { present }
        return names.sorted { (Int($0.dropFirst(5)) ?? 0) < (Int($1.dropFirst(5)) ?? 0) }
            .map { (directory as NSString).appendingPathComponent($0) }
    }

    public func subscribe(_ handler: @escaping @Sendable (DeviceEvent) -> Void) -> Int {
        lock.withLock {
            nextToken += 1
            handlers[nextToken] = handler
            return nextToken
        }
    }

    public func unsubscribe(_ token: Int) { _ = lock.withLock { handlers.removeValue(forKey: token) } }

    /// Ends the watch and waits for the thread (not from a handler). Once is enough.
    public func stop() {
        let first = lock.withLock { () -> Bool in defer { stopped = true }; return !stopped }
        guard first else { return }
        notifier.interrupt()
        if Thread.current !== thread { finished.wait() }
    }

    // MARK: The watcher's thread

    private static func isCameraNode(_ name: String) -> Bool { name.hasPrefix("video") && Int(name.dropFirst(5)) != nil }

    private func path(_ name: String) -> String { (directory as NSString).appendingPathComponent(name) }

    private func handle(_ change: DeviceNodeChange) {
        switch change {
        case .created(let name):
            guard Self.isCameraNode(name) else { return }
            if isReady(path(name)) { add(name) } else { lock.withLock { _ = notReady.insert(name) } }
        case .attributesChanged(let name):
            guard Self.isCameraNode(name), !lock.withLock({ present.contains(name) }), isReady(path(name)) else { return }
            add(name)
        case .deleted(let name):
            guard Self.isCameraNode(name) else { return }
            let was = lock.withLock { () -> Bool in
                notReady.remove(name)
                return present.remove(name) != nil
            }
            if was { emit(.removed(path(name))) }
        case .overflow:
            let now = Set(V4L2Devices.paths(directory: directory).filter(isReady).map { ($0 as NSString).lastPathComponent })
            let (gone, new) = lock.withLock { () -> (Set<String>, Set<String>) in
                defer { present = now; notReady.subtract(now) }
                return (present.subtracting(now), now.subtracting(present))
            }
            for n in gone.sorted() { emit(.removed(path(n))) }
            for n in new.sorted() { emit(.added(path(n))) }
        }
    }

    private func add(_ name: String) {
        let new = lock.withLock { () -> Bool in
            notReady.remove(name)
            return present.insert(name).inserted
        }
        if new { emit(.added(path(name))) }
    }

    private func emit(_ event: DeviceEvent) {
        let hs = lock.withLock { handlers.sorted { $0.key < $1.key }.map(\.value) }
        for h in hs { h(event) }
    }
}
