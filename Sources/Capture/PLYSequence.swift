import DepthKit
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One loaded file of a `PLYSequence`: the points and where they stand on the timeline.
public struct PLYSequenceFrame: Sendable {
    public var contents: PLYContents
    /// 0-based position in the sorted file list.
    public var index: Int
    /// The file's name (no folder).
    public var name: String
    /// Seconds: the file name's timestamp, else index / fps.
    public var timestamp: Double
}

/// `--source ply:DIR` or `ply:DIR/GLOB`: a folder of PLY files played as frames of a timeline.
///
/// - Files: the folder's regular files ending in `.ply` (any case), or those whose name matches the
///   glob (`fnmatch`, the last path component only), sorted by name with runs of digits compared as
///   numbers (`frame_2.ply` before `frame_10.ply`; `naturalOrder`).
/// - Timestamps: when every file name holds a decimal number with a fractional part (as `convert
///   --ply` writes `ply/T.ply`, e.g. `1305031102.175304.ply`) and those numbers increase strictly in
///   the sorted order, that number is the file's time in seconds and playback follows it; otherwise
///   (`frame_0001.ply`) file i is at i / fps, fps `--fps` or 10 (`defaultFPS`).
/// - Playback (`recording`: pause, step, seek, loop, rate) is the `RecordingPlayback` the frame
///   sources hold, under this sequence's lock (its loading thread reads the clock). `nextCloud(now:)` loads the file due (synchronously); `startLoading()` runs
///   it on a thread of its own that also reads the next file ahead, and `take()` hands the newest
///   loaded frame to the render loop without waiting.
/// - A file that cannot be read is skipped with a warning naming it (once per file): in timed
///   playback the previous frame stays and playback goes on to the next file's time; a step or
///   seek onto it goes on to the next readable file in its direction.
///
/// `@unchecked Sendable`: `recording`'s clock, `active`, `warned`, `pendingWarnings`,
/// `warningLog`, `generation`, `slot`, `shownIndex` and `running` are read and written under
/// `lock`; `ahead` belongs to the thread that loads (the loading thread once `startLoading` ran,
/// else the caller of `nextCloud`); `loader` is set and `thread` written only by the owner, before
/// `startLoading` and after `stopLoading`.
public final class PLYSequence: @unchecked Sendable {
    public struct Entry: Sendable, Equatable {
        public let path: String
        public let name: String
        /// The number in the name (seconds) when the sequence is timed by names.
        public let nameTime: Double?
    }

    public static let defaultFPS = 10.0

    public let directory: String
    public let pattern: String?
    public let entries: [Entry]
    /// True when the timestamps come from the file names.
    public let timedByNames: Bool
    /// "ply:DIR" or "ply:DIR/PATTERN".
    public let name: String

    /// Loads a file under a control (progress, cancel); `PLYReader.load` unless a test gives another.
    /// Set before `startLoading()`.
    public var loader: @Sendable (String, PLYLoadControl) throws -> PLYContents = { try PLYReader.load($0, control: $1) }
    /// The file being read now: its index, control and when it began (`loadingStatus`, `cancelLoad`).
    private var active: (index: Int, control: PLYLoadControl, since: Double)?

    private let lock = NSLock()   // the recording's clock and settings, warnings, the slot, generation
    /// Pause, step, seek, loop and rate, under `lock`; a step or seek drops the frame loaded for
    /// the old position, and `currentIndex` is the frame `take` handed out (or a move's target).
    public private(set) lazy var recording = RecordingPlayback(
        name: name, count: entries.count, timestamps: timedByNames ? entries.map { $0.nameTime! } : [],
        defaultFPS: Self.defaultFPS,
        guarded: .init(lock: lock, moved: { [unowned self] in moved() },
                       shownIndex: { [unowned self] in lock.withLock { shownIndex } }))
    private var warned: Set<Int> = []
    private var pendingWarnings: [String] = []
    private var warningLog: [String] = []
    /// One line per file that could not be read, oldest first.
    public var warnings: [String] { lock.withLock { warningLog } }
    /// Bumped by every step and seek: a load begun before it is stale.
    private var generation = 0
    /// The newest loaded frame, waiting for `take()`.
    private var slot: PLYSequenceFrame?
    private var shownIndex = 0
    /// A file read ahead (`prefetch`), owned by the loading thread.
    private var ahead: (index: Int, result: Result<PLYContents, Error>)?
    private var thread: Thread?
    private var running = false
    private let finished = DispatchSemaphore(value: 0)

    /// Lists the folder. Throws a one-line `CaptureError.file` for a missing folder, or one with no PLY file.
    public init(directory: String, pattern: String? = nil) throws {
        self.directory = directory
        self.pattern = pattern
        name = "ply:" + (pattern.map { (directory as NSString).appendingPathComponent($0) } ?? directory)
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDir) else {
            throw CaptureError.file(path: directory, problem: "no such folder")
        }
        guard isDir.boolValue else { throw CaptureError.file(path: directory, problem: "is not a folder") }
        let names: [String]
        do { names = try FileManager.default.contentsOfDirectory(atPath: directory) } catch {
            throw CaptureError.file(path: directory, problem: "cannot list the folder")
        }
        let picked = names.filter { n in
            if let pattern { return fnmatch(pattern, n, 0) == 0 }
            return n.lowercased().hasSuffix(".ply")
        }.filter { n in
            var st = stat()
            return stat((directory as NSString).appendingPathComponent(n), &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG
        }.sorted(by: Self.naturalOrder)
        guard !picked.isEmpty else {
            throw CaptureError.file(path: directory, problem: pattern.map { "no file matches '\($0)'" } ?? "no .ply files in the folder")
        }
        let times = picked.map(Self.timestamp(inName:))
        var timed = times.allSatisfy { $0 != nil }
        if timed { timed = zip(times.dropFirst(), times).allSatisfy { $0! > $1! } }
        timedByNames = timed
        entries = zip(picked, times).map {
            Entry(path: (directory as NSString).appendingPathComponent($0), name: $0, nameTime: timed ? $1 : nil)
        }
        _ = recording   // made here, before any thread can ask for it
    }

    deinit { stopLoading() }

    public var count: Int { entries.count }

    // MARK: Names and times

    /// Name order with runs of ASCII digits compared as numbers ("frame_2" < "frame_10"); equal
    /// numbers with more leading zeros first, then plain byte order, so the order is total.
    public static func naturalOrder(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        func isDigit(_ c: UInt8) -> Bool { c >= 48 && c <= 57 }
        var i = 0, j = 0
        while i < x.count && j < y.count {
            if isDigit(x[i]) && isDigit(y[j]) {
                let si = i, sj = j
                while i < x.count && isDigit(x[i]) { i += 1 }
                while j < y.count && isDigit(y[j]) { j += 1 }
                // Compare the runs as numbers: strip leading zeros, then length, then digits.
                var ti = si, tj = sj
                while ti < i - 1 && x[ti] == 48 { ti += 1 }
                while tj < j - 1 && y[tj] == 48 { tj += 1 }
                if i - ti != j - tj { return i - ti < j - tj }
                for k in 0..<(i - ti) where x[ti + k] != y[tj + k] { return x[ti + k] < y[tj + k] }
                if i - si != j - sj { return i - si > j - sj }
            } else {
                if x[i] != y[j] { return x[i] < y[j] }
                i += 1; j += 1
            }
        }
        if x.count - i != y.count - j { return x.count - i < y.count - j }
        return a.utf8.lexicographicallyPrecedes(b.utf8)
    }

    /// The last decimal number with a fractional part in a file name without its extension
    /// ("1305031102.175304.ply" → 1305031102.175304, "t_0.25.ply" → 0.25), nil when there is none
    /// ("frame_0001.ply": a frame number, not a time).
    public static func timestamp(inName name: String) -> Double? {
        var stem = Substring(name)
        if let dot = stem.lastIndex(of: "."), stem[stem.index(after: dot)...].contains(where: { !$0.isNumber }) {
            stem = stem[..<dot]
        }
        let chars = Array(stem)
        var end = chars.count
        while end > 0 {
            // The last digit run, and the one before it when a single '.' joins them.
            while end > 0 && !chars[end - 1].isASCIIDigit { end -= 1 }
            guard end > 0 else { return nil }
            var start = end
            while start > 0 && chars[start - 1].isASCIIDigit { start -= 1 }
            if start >= 2 && chars[start - 1] == "." && chars[start - 2].isASCIIDigit {
                var s = start - 1
                while s > 0 && chars[s - 1].isASCIIDigit { s -= 1 }
                return Double(String(chars[s..<end]))
            }
            end = start
        }
        return nil
    }

    /// File `i`'s time in seconds: its name's number, else i / fps.
    public func timestamp(at i: Int) -> Double {
        if let t = entries[i].nameTime { return t }
        return Double(i) / (lock.withLock { recording.fpsLocked } ?? Self.defaultFPS)
    }

    /// Seconds from the first file to the last.
    public var durationSeconds: Double { timestamp(at: count - 1) - timestamp(at: 0) }

    // MARK: Loading

    /// The frame due at `now`, loaded (nil when none is due, or when the file due cannot be read:
    /// see the type's notes). Safe from any one thread at a time beside the playback calls.
    public func nextCloud(now: Double) -> PLYSequenceFrame? {
        guard let (first, explicit, started) = lock.withLock({ () -> (Int, Bool, Int)? in
            guard let d = recording.clock.due(now: now) else { return nil }
            return (d.index, d.explicit, generation)
        }) else { return nil }
        var i = first, tries = 0
        while true {
            let (result, cancelled) = loadAhead(i)
            let next = lock.withLock { () -> Result<PLYSequenceFrame?, Retry> in
                // A step or seek while it loaded: its own target is next.
                guard started == generation else { return .success(nil) }
                if cancelled {
                    // Not shown, not a bad file (`cancelLoad` said so): the clock stays on the frame shown, paused.
                    shownIndex = max(recording.clock.current, 0)
                    return .success(nil)
                }
                switch result {
                case .success(let contents):
                    recording.clock.delivered(i, now: now, explicit: explicit)
                    return .success(PLYSequenceFrame(contents: contents, index: i, name: entries[i].name,
                                                     timestamp: timestampLocked(i)))
                case .failure(let error):
                    warnLocked(i, error)
                    tries += 1
                    if explicit, tries < count, let j = recording.clock.neighbor(of: i, direction: recording.clock.direction) {
                        return .failure(Retry(index: j))
                    }
                    recording.clock.delivered(i, now: now, explicit: explicit)
                    return .success(nil)
                }
            }
            switch next {
            case .success(let frame): return frame
            case .failure(let retry): i = retry.index
            }
        }
    }

    /// An explicit move landed on an unreadable file: go on to `index`.
    private struct Retry: Error { let index: Int }

    /// Reads the file after the current one (in the playing direction) ahead of time, when not done
    /// yet, while playing (paused, a step reads the file it asks for).
    public func prefetch() {
        guard let next = lock.withLock({ () -> Int? in
            guard recording.clock.current >= 0, recording.clock.pending == nil, !recording.clock.paused else { return nil }
            return recording.clock.neighbor(of: recording.clock.current, direction: recording.clock.direction)
        }), ahead?.index != next else { return }
        let (r, cancelled) = read(next)
        if !cancelled { ahead = (next, r) }
    }

    /// Reads file `i` under a fresh control, visible to `loadingStatus` and `cancelLoad` meanwhile;
    /// `cancelled` when `cancelLoad` stopped it.
    private func read(_ i: Int) -> (Result<PLYContents, Error>, cancelled: Bool) {
        let control = PLYLoadControl()
        lock.withLock { active = (i, control, monotonicSeconds()) }
        let r = Result { try loader(entries[i].path, control) }
        lock.withLock { active = nil }
        return (r, control.isCancelled)
    }

    /// The file being read when it has been read for at least `after` seconds: its name, bytes
    /// read and size (the viewer's progress line for a long load).
    public func loadingStatus(after: Double) -> (name: String, done: Int, total: Int)? {
        lock.withLock {
            guard let a = active, monotonicSeconds() - a.since >= after else { return nil }
            let p = a.control.progress
            return (entries[a.index].name, p.done, p.total)
        }
    }

    /// Cancels the read of a file that has gone on for at least `after` seconds and pauses
    /// playback (the next file would start at once); false when no such read is going on. The
    /// cancelled file is not shown and not counted as bad: a step or play reads it again.
    public func cancelLoad(after: Double) -> Bool {
        lock.withLock {
            guard let a = active, monotonicSeconds() - a.since >= after else { return false }
            a.control.cancel()
            recording.clock.paused = true
            if recording.clock.pending == a.index { recording.clock.pending = nil }
            shownIndex = max(recording.clock.current, 0)
            pendingWarnings.append("load of \(entries[a.index].path) cancelled")
            return true
        }
    }

    /// File `i`'s contents: the one read ahead when it is that file, else read now.
    private func loadAhead(_ i: Int) -> (Result<PLYContents, Error>, cancelled: Bool) {
        if let a = ahead, a.index == i {
            ahead = nil
            return (a.result, false)
        }
        return read(i)
    }

    private func timestampLocked(_ i: Int) -> Double {
        entries[i].nameTime ?? Double(i) / (recording.fpsLocked ?? Self.defaultFPS)
    }

    private func warnLocked(_ i: Int, _ error: Error) {
        guard warned.insert(i).inserted else { return }
        let message = "\(CaptureError.wrapping(error, path: entries[i].path)) (frame \(i) skipped)"
        warningLog.append(message)
        pendingWarnings.append(message)
    }

    // MARK: The loading thread

    /// Loads on a thread of its own: the file due when it is due, and the next one ahead.
    public func startLoading() {
        let go = lock.withLock { () -> Bool in
            guard !running else { return false }
            running = true
            return true
        }
        guard go else { return }
        let t = Thread { [weak self] in self?.run() }
        t.name = "depthlens ply sequence"
        thread = t
        t.start()
    }

    /// Stops the thread (waits for the file it is reading).
    public func stopLoading() {
        let was = lock.withLock { () -> Bool in defer { running = false }; return running && thread != nil }
        if was { finished.wait() }
        thread = nil
    }

    private func run() {
        defer { finished.signal() }
        while lock.withLock({ running }) {
            if let f = nextCloud(now: monotonicSeconds()) {
                lock.withLock { slot = f }
                continue
            }
            prefetch()
            usleep(1000)
        }
    }

    /// The newest loaded frame since the last call (nil when none), and the warnings since then.
    public func take() -> (frame: PLYSequenceFrame?, warnings: [String]) {
        lock.withLock {
            let f = slot
            slot = nil
            if let f { shownIndex = f.index }
            var w: [String] = []
            if !pendingWarnings.isEmpty { swap(&w, &pendingWarnings) }
            return (f, w)
        }
    }

    /// What a step or seek does besides moving the clock (under the lock): a load begun before it is stale.
    private func moved() {
        generation += 1
        slot = nil
        shownIndex = recording.clock.pending ?? shownIndex
    }
}

private extension Character {
    var isASCIIDigit: Bool { asciiValue.map { $0 >= 48 && $0 <= 57 } ?? false }
}
