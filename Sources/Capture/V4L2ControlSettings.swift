#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// `--ctrl NAME=VALUE`: a control by its `v4l2-ctl` name and a value (a number, a menu item's
/// index or name, on/off).
public struct V4L2ControlAssignment: Equatable, Sendable, CustomStringConvertible {
    public var name: String
    public var value: String

    public init(name: String, value: String) { self.name = name; self.value = value }

    public init(parsing text: String) throws {
        guard let eq = text.firstIndex(of: "=") else {
            throw CaptureError.invalidSource("--ctrl '\(text)': expected NAME=VALUE (e.g. exposure_auto=1; `depthlens devices` lists the names)")
        }
        let name = text[..<eq].trimmingCharacters(in: .whitespaces)
        let value = text[text.index(after: eq)...].trimmingCharacters(in: .whitespaces)
        guard !name.isEmpty, !value.isEmpty else {
            throw CaptureError.invalidSource("--ctrl '\(text)': expected NAME=VALUE with both parts")
        }
        self.name = name
        self.value = value
    }

    public var description: String { "\(name)=\(value)" }
}

/// Saved control values, one small JSON file per camera (by bus info and card name) in
/// `$XDG_CONFIG_HOME/depthlens/cameras/` (else `~/.config/depthlens/cameras/`).
public struct V4L2ControlStore: Equatable, Sendable {
    public var directory: String

    public init(directory: String) { self.directory = directory }

    /// The user's folder from the environment; nil when neither XDG_CONFIG_HOME nor HOME is set.
    public static func user(environment: [String: String] = ProcessInfo.processInfo.environment) -> V4L2ControlStore? {
        if let x = environment["XDG_CONFIG_HOME"], x.hasPrefix("/") {
            return V4L2ControlStore(directory: x + "/depthlens/cameras")
        }
        guard let home = environment["HOME"], !home.isEmpty else { return nil }
        return V4L2ControlStore(directory: home + "/.config/depthlens/cameras")
    }

    /// The file of the camera with `key` ("usb-0000:00:14.0-1 HD Webcam" → usb-0000_00_14.0-1_HD_Webcam.json).
    public func path(for key: String) -> String {
        var name = ""
        for c in key.unicodeScalars {
            let keep = c.isASCII && (c.properties.isAlphabetic || ("0"..."9").contains(c) || c == "." || c == "-")
            if keep { name.unicodeScalars.append(c) } else if !name.hasSuffix("_") { name.append("_") }
        }
        if name.isEmpty || name == "_" { name = "camera" }
        return directory + "/" + name + ".json"
    }

    struct File: Codable {
        var busInfo: String
        var card: String
        var controls: [String: Int64]
        enum CodingKeys: String, CodingKey { case busInfo = "bus_info", card, controls }
    }

    /// The saved values of `key` (empty when there is no file). Throws, naming the file, when it cannot be read.
    public func load(key: String) throws -> [String: Int64] {
        let p = path(for: key)
        guard FileManager.default.fileExists(atPath: p) else { return [:] }
        do {
            return try JSONDecoder().decode(File.self, from: Data(contentsOf: URL(fileURLWithPath: p))).controls
        } catch {
            throw CaptureError.invalidSource("\(p): not a depthlens camera settings file (\(error.localizedDescription)); remove it to start over")
        }
    }

    /// Saves `values` for the camera (the file is removed when there are none).
    public func save(key: String, busInfo: String, card: String, values: [String: Int64]) throws {
        let p = path(for: key)
        if values.isEmpty {
            if FileManager.default.fileExists(atPath: p) { try FileManager.default.removeItem(atPath: p) }
            return
        }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let enc = JSONEncoder()
        enc.outputFormatting = [.prettyPrinted, .sortedKeys]
        try enc.encode(File(busInfo: busInfo, card: card, controls: values)).write(to: URL(fileURLWithPath: p), options: .atomic)
    }
}

/// What a V4L2 source does with its cameras' controls each time it opens them.
public struct V4L2ControlOptions: Equatable, Sendable {
    /// `--ctrl` values, written after the saved ones (and saved themselves).
    public var assignments: [V4L2ControlAssignment] = []
    /// Write the saved values on open (`--no-restore` turns it off).
    public var restore = true
    /// Where values are saved; nil: not saved.
    public var store: V4L2ControlStore? = .user()

    public init(assignments: [V4L2ControlAssignment] = [], restore: Bool = true, store: V4L2ControlStore? = .user()) {
        self.assignments = assignments; self.restore = restore; self.store = store
    }
}

/// The controls of a `V4L2Source`'s open cameras. The source's own thread (`attach` on open,
/// `service` before each frame) makes every ioctl; the panel reads a published copy (`snapshot`)
/// and posts commands (`post`), both under a small lock, so neither thread waits for the other's ioctls.
///
/// `@unchecked Sendable`: `published`, `publishedLayout`, `publishedValues`, `pending`, `notices`
/// and `noticeHandler` are read and written under `lock`; `devices`, `userValues`,
/// `sessionValues`, `dirty` and the timers belong to the source's thread (`attach`, `service`);
/// `options` and `volatileInterval` are set before the source opens.
public final class V4L2SourceControls: @unchecked Sendable {
    /// One camera's controls as the panel shows them.
    public struct DeviceTable: Sendable {
        public var path: String
        public var card: String
        public var controls: [V4L2Control]
        /// Class id → section title ("User Controls", "Camera Controls").
        public var sections: [UInt32: String]
    }
    public enum Command: Sendable {
        case set(device: Int, name: String, value: Int64)
        case reset(device: Int)
    }

    public var options = V4L2ControlOptions()
    /// Seconds between reads of the volatile controls.
    public var volatileInterval = 0.5

    private let lock = NSLock()
    // Under `lock`:
    private var published: [DeviceTable] = []
    private var publishedLayout = 0
    private var publishedValues = 0
    private var pending: [Command] = []
    private var notices: [String] = []
    private var noticeHandler: ((String) -> Void)?
    // The source's thread only:
    private var devices: [V4L2ControlDevice] = []
    /// Values the user set (saved ones, `--ctrl`, the panel) per camera key; what is saved.
    private var userValues: [String: [String: Int64]] = [:]
    /// The part of `userValues` set in this run (written again when a camera comes back, even with `--no-restore`).
    private var sessionValues: [String: [String: Int64]] = [:]
    private var dirty = Set<String>()
    private var lastVolatile = -Double.infinity
    private var lastSave = -Double.infinity
    private var saidSaveProblem = false

    public init() {}

    /// Where notices go (refused values, files that cannot be read); those from before it was set are delivered now.
    public var onNotice: ((String) -> Void)? {
        get { lock.withLock { noticeHandler } }
        set {
            let backlog: [String] = lock.withLock {
                noticeHandler = newValue
                guard newValue != nil else { return [] }
                defer { notices.removeAll() }
                return notices
            }
            for n in backlog { newValue?(n) }
        }
    }

    private func notice(_ text: String) {
        let handler: ((String) -> Void)? = lock.withLock {
            if noticeHandler == nil { notices.append(text) }
            return noticeHandler
        }
        handler?(text)
    }

    // MARK: Panel side (any thread)

    /// The tables of the open cameras; `layout` changes when a control appears, goes, or changes
    /// its flags, range or menu (labels are rebuilt then), `values` with any change.
    public func snapshot() -> (devices: [DeviceTable], layout: Int, values: Int) {
        lock.withLock { (published, publishedLayout, publishedValues) }
    }

    /// A command the source's thread runs before its next frame.
    public func post(_ c: Command) { lock.withLock { pending.append(c) } }

    // MARK: Source side

    /// The open cameras' controls (the source's thread).
    public var openDevices: [V4L2ControlDevice] { devices }

    /// Called by the source once its cameras are open: enumerates their controls, writes the
    /// saved values (unless `options.restore` is off), then the `--ctrl` values. Throws for a
    /// `--ctrl` no camera has, or a value its control cannot take.
    public func attach(_ cameras: [V4L2Camera]) throws {
        devices = try cameras.map { try V4L2ControlDevice(camera: $0) }
        var perDevice = [[String: Int64]](repeating: [:], count: devices.count)
        for a in options.assignments {
            var found = false
            for (i, d) in devices.enumerated() {
                guard let c = d[a.name] else { continue }
                perDevice[i][a.name] = try c.parseValue(a.value)
                found = true
            }
            if !found {
                let names = devices.flatMap { $0.controls.filter(\.isWritable).map(\.name) }
                let paths = cameras.map(\.path).joined(separator: ", ")
                throw CaptureError.invalidSource("--ctrl \(a): \(paths) has no control '\(a.name)'"
                    + (names.isEmpty ? " (it has no controls)" : " (controls: \(names.joined(separator: ", ")))"))
            }
        }
        for (i, d) in devices.enumerated() {
            if userValues[d.key] == nil {
                // First open in this run: the saved file.
                var saved: [String: Int64] = [:]
                if let store = options.store {
                    do { saved = try store.load(key: d.key) } catch { notice("\(error)") }
                }
                userValues[d.key] = saved
                if options.restore {
                    report(d.apply(saved.filter { d[$0.key] != nil }), device: d, remember: false)
                }
            } else {
                // Opened again (a camera plugged back in): what was set in this run, saved or not.
                let values = (options.restore ? userValues[d.key] ?? [:] : [:]).merging(sessionValues[d.key] ?? [:]) { $1 }
                report(d.apply(values.filter { d[$0.key] != nil }), device: d, remember: false)
            }
            if !perDevice[i].isEmpty {
                report(d.apply(perDevice[i]), device: d, remember: true)
            }
        }
        saveDirty(force: true)
        publish(layoutChanged: true)
    }

    /// The cameras closed (stop, unplug): saves what is unsaved and empties the tables.
    public func detach() {
        saveDirty(force: true)
        devices = []
        publish(layoutChanged: true)
    }

    /// Runs the panel's commands and re-reads the volatile controls every `volatileInterval`
    /// seconds; called by the source before each frame. Nothing is allocated when there is nothing to do.
    public func service(now: Double) {
        guard !devices.isEmpty else { return }
        var commands: [Command] = []
        lock.withLock { if !pending.isEmpty { swap(&commands, &pending) } }
        var changed = false
        var layoutBefore: [UInt32] = []
        if !commands.isEmpty {
            layoutBefore = flagsSignature()
            for (k, c) in commands.enumerated() {
                switch c {
                case let .set(i, name, value):
                    // A slider dragged over several frames: only its last value is written.
                    let superseded = commands[(k + 1)...].contains {
                        if case let .set(j, later, _) = $0 { return j == i && later == name }
                        return false
                    }
                    guard devices.indices.contains(i), !superseded else { continue }
                    // The panel shows the kept value: only a refusal is a notice, not a value put on the step.
                    var o = devices[i].set(name, value)
                    if o.succeeded { o.sent = o.requested }
                    report([o], device: devices[i], remember: true)
                case let .reset(i):
                    guard devices.indices.contains(i) else { continue }
                    let d = devices[i]
                    report(d.resetToDefaults(), device: d, remember: false)
                    userValues[d.key] = [:]
                    sessionValues[d.key] = [:]
                    dirty.insert(d.key)
                }
            }
            changed = true
        }
        if now - lastVolatile >= volatileInterval {
            lastVolatile = now
            for d in devices where d.refreshVolatile() { changed = true }
        }
        if changed { publish(layoutChanged: !commands.isEmpty && flagsSignature() != layoutBefore) }
        if !dirty.isEmpty && now - lastSave >= 0.5 {
            lastSave = now
            saveDirty(force: true)
        }
    }

    private func flagsSignature() -> [UInt32] { devices.flatMap { $0.controls.map(\.flags) } }

    private func report(_ outcomes: [V4L2ControlOutcome], device d: V4L2ControlDevice, remember: Bool) {
        for o in outcomes {
            if let n = o.notice { notice(n) }
            if remember, o.errno == nil, o.problem == nil, let kept = o.kept, let c = d[o.control], !c.isVolatile, c.kind != .button {
                userValues[d.key, default: [:]][o.control] = kept
                sessionValues[d.key, default: [:]][o.control] = kept
                dirty.insert(d.key)
            }
        }
    }

    private func saveDirty(force: Bool) {
        guard let store = options.store else { dirty.removeAll(); return }
        for d in devices where dirty.contains(d.key) {
            do {
                try store.save(key: d.key, busInfo: d.busInfo, card: d.card, values: userValues[d.key] ?? [:])
            } catch where !saidSaveProblem {
                saidSaveProblem = true
                notice("cannot save the camera settings of \(d.path) in \(store.directory): \(error.localizedDescription)")
            } catch {}
        }
        dirty.removeAll()
    }

    private func publish(layoutChanged: Bool) {
        let tables = devices.map { d in
            DeviceTable(path: d.path, card: d.card, controls: d.controls,
                        sections: Dictionary(uniqueKeysWithValues: Set(d.controls.map(\.classID)).map { ($0, d.sectionTitle($0)) }))
        }
        lock.withLock {
            published = tables
            if layoutChanged { publishedLayout += 1 }
            publishedValues += 1
        }
    }
}
