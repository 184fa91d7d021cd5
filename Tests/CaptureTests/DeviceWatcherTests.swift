import XCTest
import TestSupport
import Foundation
import Glibc
@testable import Capture
import CaptureTesting

/// Collects a watcher's events (they arrive on its thread) and waits for them with a deadline.
private final class EventLog: Sendable {
    private let events = LockedValue<[DeviceEvent]>([])

    @Sendable func append(_ e: DeviceEvent) { events.withLock { $0.append(e) } }
    var all: [DeviceEvent] { events.current }

    /// Waits until `count` events arrived (10 s at most) and returns them all.
    func wait(for count: Int) -> [DeviceEvent] {
        let deadline = Date().addingTimeInterval(10)
        while all.count < count && Date() < deadline { usleep(2000) }
        return all
    }
}

final class DeviceWatcherTests: XCTestCase {
    /// Readiness by the owner's read and write bits, as `access` would answer for a user who is not
    /// root (the tests may run as root, for whom `access` always succeeds).
    @Sendable private static func ownerCanReadWrite(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && st.st_mode & 0o600 == 0o600
    }

    private func touch(_ path: String, mode: Int) {
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: mode]))
    }

    func testRealInotifyReportsNodesInATemporaryDirectory() throws {
        let dir = try makeTemporaryDirectory(self)
        touch(dir + "/video0", mode: 0o660)
        touch(dir + "/media0", mode: 0o660)
        let watcher = DeviceWatcher(directory: dir, notifier: try InotifyNotifier(directory: dir),
                                    isReady: Self.ownerCanReadWrite)
        defer { watcher.stop() }
        XCTAssertEqual(watcher.nodes, [dir + "/video0"])
        let log = EventLog()
        _ = watcher.subscribe(log.append)

        // Made the way udev does: the node first, with no access yet (created with mode 0 in one
        // call), then its mode (IN_ATTRIB). Events come in order, so when video8 (made openable)
        // is reported, video7's creation was seen and held back.
        let fd = open(dir + "/video7", O_CREAT | O_WRONLY, 0)
        XCTAssertGreaterThanOrEqual(fd, 0)
        close(fd)
        touch(dir + "/notes.txt", mode: 0o660)
        touch(dir + "/video", mode: 0o660)
        touch(dir + "/video8", mode: 0o660)
        XCTAssertEqual(log.wait(for: 1), [.added(dir + "/video8")])
        XCTAssertEqual(chmod(dir + "/video7", 0o660), 0)
        XCTAssertEqual(log.wait(for: 2), [.added(dir + "/video8"), .added(dir + "/video7")])
        XCTAssertEqual(watcher.nodes, [dir + "/video0", dir + "/video7", dir + "/video8"])

        try FileManager.default.removeItem(atPath: dir + "/video0")
        XCTAssertEqual(log.wait(for: 3).last, .removed(dir + "/video0"))
        // Renamed in and out count as made and removed.
        touch(dir + "/staging", mode: 0o660)
        XCTAssertEqual(rename(dir + "/staging", dir + "/video12"), 0)
        XCTAssertEqual(rename(dir + "/video7", dir + "/old"), 0)
        try FileManager.default.removeItem(atPath: dir + "/video8")
        XCTAssertEqual(log.wait(for: 6).suffix(3), [.added(dir + "/video12"), .removed(dir + "/video7"), .removed(dir + "/video8")])
        XCTAssertEqual(watcher.nodes, [dir + "/video12"])

        watcher.stop()
        touch(dir + "/video3", mode: 0o660)
        usleep(50_000)
        XCTAssertEqual(log.all.count, 6, "nothing after stop")
    }

    func testInotifyOnAMissingDirectoryIsAnError() {
        XCTAssertThrowsError(try InotifyNotifier(directory: "/nonexistent-depthlens-dir")) { error in
            XCTAssertTrue("\(error)".hasPrefix("/nonexistent-depthlens-dir: inotify failed"), "\(error)")
        }
    }

    func testScriptedChangesWaitForANodeToBecomeOpenable() throws {
        let dir = try makeTemporaryDirectory(self)
        let notifier = ScriptedDeviceNotifier()
        let ready = LockedValue<Set<String>>([])
        let watcher = DeviceWatcher(directory: dir, notifier: notifier,
                                    isReady: { p in ready.withLock { $0.contains(p) } })
        defer { watcher.stop() }
        XCTAssertEqual(watcher.nodes, [])
        let log = EventLog(), second = EventLog()
        _ = watcher.subscribe(log.append)
        let token = watcher.subscribe(second.append)

        notifier.post(.created("video2"), .created("v4l-subdev0"), .attributesChanged("video2"))   // not openable yet
        ready.withLock { _ = $0.insert(dir + "/video2") }
        notifier.post(.attributesChanged("video2"))
        XCTAssertEqual(log.wait(for: 1), [.added(dir + "/video2")])
        notifier.post(.attributesChanged("video2"), .created("video2"))   // known already: nothing new
        watcher.unsubscribe(token)
        notifier.post(.deleted("video2"), .deleted("video9"))
        XCTAssertEqual(log.wait(for: 2), [.added(dir + "/video2"), .removed(dir + "/video2")])
        XCTAssertEqual(second.all, [.added(dir + "/video2")])

        // Lost events: the directory is listed again and compared.
        for n in ["video1", "video4"] {
            touch(dir + "/" + n, mode: 0o660)
            ready.withLock { _ = $0.insert(dir + "/" + n) }
        }
        notifier.post(.overflow)
        XCTAssertEqual(log.wait(for: 4), [.added(dir + "/video2"), .removed(dir + "/video2"),
                                          .added(dir + "/video1"), .added(dir + "/video4")])
        XCTAssertEqual(watcher.nodes, [dir + "/video1", dir + "/video4"])
    }
}
