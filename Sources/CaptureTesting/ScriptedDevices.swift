import Capture
import Foundation

/// A `DeviceNodeNotifier` that plays the kernel's inotify: tests `post` changes, and the watcher's
/// thread, blocked in `waitForChanges`, receives them in order.
///
/// `@unchecked Sendable`: `queue` and `interrupted` are read and written under `lock`.
public final class ScriptedDeviceNotifier: DeviceNodeNotifier, @unchecked Sendable {
    private let lock = NSLock()
    private let ready = DispatchSemaphore(value: 0)
    private var queue: [[DeviceNodeChange]] = []
    private var interrupted = false

    public init() {}

    /// Delivers `changes` as one read's worth of events.
    public func post(_ changes: DeviceNodeChange...) {
        lock.withLock { queue.append(changes) }
        ready.signal()
    }

    public func waitForChanges(_ body: (DeviceNodeChange) -> Void) -> Bool {
        ready.wait()
        guard let batch = lock.withLock({ () -> [DeviceNodeChange]? in
            interrupted || queue.isEmpty ? nil : queue.removeFirst()
        }) else {
            ready.signal()   // every later wait returns false too
            return false
        }
        for c in batch { body(c) }
        return true
    }

    public func interrupt() {
        lock.withLock { interrupted = true }
        ready.signal()
    }
}

/// `DeviceEvents` a test posts by hand: each `post` calls the subscribers at once, on the test's
/// thread (what the watcher would report from its own).
///
/// `@unchecked Sendable`: `handlers` and `nextToken` are read and written under `lock`.
public final class ScriptedDeviceEvents: DeviceEvents, @unchecked Sendable {
    private let lock = NSLock()
    private var handlers: [Int: @Sendable (DeviceEvent) -> Void] = [:]
    private var nextToken = 0

    public init() {}

    /// Subscribers now.
    public var subscriberCount: Int { lock.withLock { handlers.count } }

    public func post(_ event: DeviceEvent) {
        let hs = lock.withLock { handlers.sorted(by: { $0.key < $1.key }).map(\.value) }
        for h in hs { h(event) }
    }

    public func subscribe(_ handler: @escaping @Sendable (DeviceEvent) -> Void) -> Int {
        lock.withLock {
            nextToken += 1
            handlers[nextToken] = handler
            return nextToken
        }
    }

    public func unsubscribe(_ token: Int) { lock.withLock { handlers[token] = nil } }
}
