import CPlatform
import DepthKit
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One topic of a ROS 2 recording.
public struct ROS2Topic: Sendable, Equatable {
    /// "/camera/camera/color/image_raw".
    public var name: String
    /// "sensor_msgs/msg/Image".
    public var type: String
    /// "cdr".
    public var serializationFormat: String
    public var messageCount: Int
    /// The `ros2msg` schema text, when the file carries it (rosbag2's `message_definitions` table,
    /// an MCAP Schema record with encoding `ros2msg`); nil otherwise (also for `ros2idl` schemas).
    public var messageDefinition: String?

    public init(name: String, type: String, serializationFormat: String, messageCount: Int, messageDefinition: String?) {
        self.name = name
        self.type = type
        self.serializationFormat = serializationFormat
        self.messageCount = messageCount
        self.messageDefinition = messageDefinition
    }
}

/// Where one message is; cheap to hold for every message of a recording (24 bytes).
public struct ROS2MessageRef: Sendable, Equatable {
    /// Nanoseconds, as recorded (rosbag2's `timestamp` column, MCAP's `log_time`).
    public var logTime: Int64
    /// Index of the storage file in the recording (a split rosbag2 has several).
    var file: Int32
    /// MCAP: index of the chunk in the file's chunk list, or -1 for a message record outside
    /// any chunk. SQLite: -1.
    var chunk: Int32
    /// SQLite: the row id in `messages`. MCAP: offset of the Message record in the chunk's
    /// uncompressed records (or in the file, for a message outside chunks).
    var position: Int64
}

/// One storage file of a recording: a rosbag2 SQLite database or an MCAP file.
protocol ROS2Storage: AnyObject {
    /// "sqlite3" or "mcap".
    var identifier: String { get }
    /// The file's topics (sorted by name), with their message counts in this file.
    var topics: [ROS2Topic] { get }
    /// Per topic, its messages sorted by log time (file order among equal times); refs carry the
    /// file index given at opening.
    var refs: [String: [ROS2MessageRef]] { get }
    /// What the reader noticed and worked around (a summary it could not use).
    var notices: [String] { get }
    /// What of the file could not be read, one line each (a file cut short, an unreadable chunk).
    var damage: [String] { get }
    /// Reads every part of the file not read at opening (MCAP: each chunk once), so that `damage`
    /// is complete; true when it found something new.
    func checkChunks() -> Bool
    /// The message lies in a part of the file found unreadable.
    func isUnreadable(_ ref: ROS2MessageRef) -> Bool
    /// The stored bytes of a message (possibly still compressed per message by rosbag2).
    func storedData(of ref: ROS2MessageRef) throws -> [UInt8]
    /// The first `count` (or fewer) stored bytes of a message, read as cheaply as the storage
    /// allows (for its header: listing stamps must not read every frame whole).
    func storedPrefix(of ref: ROS2MessageRef, count: Int) throws -> [UInt8]
}

extension ROS2Storage {
    func storedPrefix(of ref: ROS2MessageRef, count: Int) throws -> [UInt8] { Array(try storedData(of: ref).prefix(count)) }
    /// A storage read whole at opening (SQLite: its index is its table).
    var damage: [String] { [] }
    func checkChunks() -> Bool { false }
    func isUnreadable(_ ref: ROS2MessageRef) -> Bool { false }
}

/// A ROS 2 recording: a rosbag2 folder (`metadata.yaml` + storage files, possibly split into
/// several), a bare `.db3` (SQLite), a bare `.mcap`, or a per-file-compressed `.db3.zstd` /
/// `.mcap.zstd`. Opening reads only indexes (SQLite's `timestamp` index; MCAP's summary section,
/// or one scan of a file without it); `data(of:)` reads one message.
///
/// Compression: rosbag2's per-file mode (the storage file is one zstd stream, decompressed into
/// memory once at opening), its per-message mode (each message's data a zstd frame), and
/// librealsense's own per-message zstd without any metadata: a message whose data starts with the
/// zstd magic (28 B5 2F FD) or the LZ4 frame magic (04 22 4D 18) is decompressed — no CDR message
/// starts with either (its first two bytes are the encapsulation kind, 00 00 or 00 01).
///
/// Not thread-safe: one owner at a time (it keeps SQLite statements and the last MCAP chunk).
public final class ROS2Recording {
    /// The path given at opening.
    public let path: String
    /// The storage files, in recording order.
    public let files: [String]
    /// What was noticed while opening (an MCAP summary that could not be used), then `damage`;
    /// empty for a sound recording.
    public var notices: [String] { openingNotices + damage }
    private var openingNotices: [String] = []

    /// What of the recording could not be read, one line each: a file cut short ("recording cut
    /// short at byte B of ≥ C…", read up to its last whole record), a chunk that does not
    /// decompress or fails its CRC ("chunk at offset X (zstd): corrupt data; its N messages left
    /// out"). Complete after `checkChunks()`; before it, what opening met (a file without a
    /// summary is scanned whole at opening, one with a summary is not). Each line names the
    /// storage file when the recording has several.
    public var damage: [String] {
        storages.enumerated().flatMap { i, s in
            s.damage.map { storages.count > 1 ? "\((files[i] as NSString).lastPathComponent): \($0)" : $0 }
        }
    }

    private let storages: [any ROS2Storage]
    private var merged: [ROS2Topic]
    private var refsByTopic: [String: [ROS2MessageRef]]
    /// rosbag2's metadata says every message is compressed (`compression_mode: message`).
    private let perMessageCompression: String?

    /// Largest decompressed message or storage file accepted (a zstd frame may claim any size).
    public static let maxMessageSize = 1 << 30

    /// Opens the recording at `path`. Throws `CaptureError.file(path:problem:)` (one line) on
    /// anything that is not a readable ROS 2 recording.
    public init(path: String) throws {
        self.path = path
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir) else {
            throw CaptureError.file(path: path, problem: "no such file or folder")
        }
        var folder: String?
        if isDir.boolValue {
            folder = path
        } else if (path as NSString).lastPathComponent == "metadata.yaml" {
            folder = (path as NSString).deletingLastPathComponent
            if folder == "" { folder = "." }
        }
        var files: [String]
        var metadata: Rosbag2Metadata?
        if let folder {
            let metaPath = (folder as NSString).appendingPathComponent("metadata.yaml")
            if FileManager.default.fileExists(atPath: metaPath) {
                let m = try Rosbag2Metadata.read(metaPath)
                metadata = m
                files = m.relativeFilePaths.map { (folder as NSString).appendingPathComponent($0) }
                for f in files where !FileManager.default.fileExists(atPath: f) {
                    throw CaptureError.file(path: metaPath, problem: "lists storage file '\((f as NSString).lastPathComponent)', which is missing")
                }
                if files.isEmpty {
                    files = Self.storageFiles(in: folder)
                }
            } else {
                files = Self.storageFiles(in: folder)
            }
            guard !files.isEmpty else {
                throw CaptureError.file(path: path, problem: "folder holds no metadata.yaml and no .db3 or .mcap file: not a rosbag2 recording")
            }
        } else {
            files = [path]
        }
        if let m = metadata {
            switch m.compressionFormat {
            case "", "zstd", "lz4": break
            default:
                throw CaptureError.file(path: path, problem: "compression format '\(m.compressionFormat.prefix(40))' is not supported (zstd and lz4 are)")
            }
            switch m.compressionMode.lowercased() {
            case "", "none", "file", "message", "storage": break
            default:
                throw CaptureError.file(path: path, problem: "compression mode '\(m.compressionMode.prefix(40))' is not supported")
            }
        }
        perMessageCompression = metadata.flatMap { $0.compressionMode.lowercased() == "message" ? $0.compressionFormat : nil }
        self.files = files
        var storages: [any ROS2Storage] = []
        for (i, f) in files.enumerated() {
            storages.append(try Self.openStorage(f, index: Int32(i)))
        }
        self.storages = storages
        // Topics merged by name over the files (counts summed, the first file's type and schema).
        var byName: [String: ROS2Topic] = [:]
        var refs: [String: [ROS2MessageRef]] = [:]
        var notes: [String] = []
        for s in storages {
            for t in s.topics {
                if var m = byName[t.name] {
                    m.messageCount += t.messageCount
                    if m.messageDefinition == nil { m.messageDefinition = t.messageDefinition }
                    byName[t.name] = m
                } else {
                    byName[t.name] = t
                }
            }
            for (name, list) in s.refs { refs[name, default: []].append(contentsOf: list) }
            notes += s.notices
        }
        if storages.count > 1 {
            // Each file's list is sorted; a stable sort keeps file order among equal times.
            for (name, list) in refs {
                refs[name] = list.enumerated().sorted { a, b in
                    a.element.logTime != b.element.logTime ? a.element.logTime < b.element.logTime : a.offset < b.offset
                }.map(\.element)
            }
        }
        merged = byName.values.sorted { $0.name < $1.name }
        refsByTopic = refs
        openingNotices = notes
    }

    /// Reads an MCAP file held in memory (fuzzing, tests); `name` stands for the path in errors.
    public init(mcap bytes: [UInt8], name: String) throws {
        path = name
        files = [name]
        perMessageCompression = nil
        let reader = try MCAPReader(bytes: ROS2Bytes(copying: bytes), name: name, fileIndex: 0)
        storages = [reader]
        merged = reader.topics
        refsByTopic = reader.refs
        openingNotices = reader.notices
    }

    /// Reads every part of the recording opening did not (each MCAP chunk once, one at a time) and
    /// leaves the messages of unreadable ones out of `topics` and `messages(onTopic:)`; `damage`
    /// then lists everything missing. True when it found damage opening had not.
    @discardableResult
    public func checkChunks() -> Bool {
        var found = false
        for s in storages where s.checkChunks() { found = true }
        guard found else { return false }
        var counts: [String: Int] = [:]
        for (name, list) in refsByTopic {
            let kept = list.filter { !storages[Int($0.file)].isUnreadable($0) }
            refsByTopic[name] = kept
            counts[name] = kept.count
        }
        merged = merged.map { t in
            var t = t
            t.messageCount = counts[t.name] ?? t.messageCount
            return t
        }
        return true
    }

    /// "sqlite3" or "mcap" (the first storage file's).
    public var storage: String { storages.first?.identifier ?? "sqlite3" }

    /// Every topic, sorted by name.
    public var topics: [ROS2Topic] { merged }

    /// The messages on topic `name`, sorted by log time (from the indexes; no payload is read).
    public func messages(onTopic name: String) -> [ROS2MessageRef] {
        refsByTopic[name] ?? []
    }

    /// The serialized (CDR) bytes of the message `ref` points at, decompressed (per-message zstd
    /// or LZ4 frames, recognized by their magic).
    public func data(of ref: ROS2MessageRef) throws -> [UInt8] {
        guard ref.file >= 0, Int(ref.file) < storages.count else {
            throw CaptureError.file(path: path, problem: "message reference names storage file \(ref.file), which the recording does not have")
        }
        let file = files[Int(ref.file)]
        let stored = try storages[Int(ref.file)].storedData(of: ref)
        if stored.starts(with: ROS2Compression.zstdMagic) {
            return try ROS2Compression.zstd(stored, name: file, what: "message at \(ref.logTime) ns")
        }
        if stored.starts(with: ROS2Compression.lz4Magic) {
            return try ROS2Compression.lz4(stored, name: file, what: "message at \(ref.logTime) ns")
        }
        if let format = perMessageCompression, !format.isEmpty {
            throw CaptureError.file(path: file, problem: "metadata.yaml says every message is \(format)-compressed, but the message at \(ref.logTime) ns is not")
        }
        return stored
    }

    /// The header stamp of the message `ref` points at, in seconds, read from the first bytes of
    /// its data where they are stored plainly (an uncompressed MCAP chunk is read in place, without
    /// copying or checking the chunk: the frame's own read does that); from the whole message where
    /// it is compressed, or its header is longer than the bytes read.
    public func headerStamp(of ref: ROS2MessageRef, topic: String, type: String) throws -> Double {
        if ref.file >= 0, Int(ref.file) < storages.count, perMessageCompression?.isEmpty ?? true {
            let head = try storages[Int(ref.file)].storedPrefix(of: ref, count: 512)
            if !head.starts(with: ROS2Compression.zstdMagic), !head.starts(with: ROS2Compression.lz4Magic),
               let h = try? ROS2Message.header(head, file: path, topic: topic, type: type) {
                return h.stamp.seconds
            }
        }
        return try ROS2Message.header(try data(of: ref), file: path, topic: topic, type: type).stamp.seconds
    }

    // MARK: Opening

    /// The storage files of a folder without metadata.yaml: `.db3`, `.mcap` and their `.zstd`
    /// forms, in rosbag2's split order (`NAME_0`, `NAME_1`, … `NAME_10` by number).
    static func storageFiles(in folder: String) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        let storage = names.filter { n in
            [".db3", ".mcap", ".db3.zstd", ".mcap.zstd"].contains { n.hasSuffix($0) }
        }
        return storage.sorted { a, b in
            a.compare(b, options: [.numeric]) == .orderedAscending
        }.map { (folder as NSString).appendingPathComponent($0) }
    }

    private static let sqliteMagic = Array("SQLite format 3\0".utf8)

    /// Opens one storage file, recognized by its first bytes (SQLite, MCAP, or a zstd stream
    /// holding either).
    private static func openStorage(_ file: String, index: Int32) throws -> any ROS2Storage {
        let bytes = try ROS2Bytes(mapping: file)
        let head = Array(bytes.raw.prefix(16))
        if head.starts(with: sqliteMagic) {
            return try Rosbag2SQLite(path: file, fileIndex: index, image: nil)
        }
        if head.starts(with: MCAPReader.magic) {
            return try MCAPReader(bytes: bytes, name: file, fileIndex: index)
        }
        if head.starts(with: ROS2Compression.zstdMagic) || head.starts(with: ROS2Compression.lz4Magic) {
            // rosbag2's per-file compression: the whole storage file is one compressed stream.
            let inner = head.starts(with: ROS2Compression.zstdMagic)
                ? try ROS2Compression.zstdFile(bytes, name: file)
                : try ROS2Compression.lz4File(bytes, name: file)
            let innerHead = Array(inner.raw.prefix(16))
            if innerHead.starts(with: sqliteMagic) {
                return try Rosbag2SQLite(path: file, fileIndex: index, image: inner)
            }
            if innerHead.starts(with: MCAPReader.magic) {
                return try MCAPReader(bytes: inner, name: file, fileIndex: index)
            }
            throw CaptureError.file(path: file, problem: "decompressed storage file is neither a SQLite database nor an MCAP file")
        }
        if bytes.raw.isEmpty {
            throw CaptureError.file(path: file, problem: "empty file, not a ROS 2 recording")
        }
        if file.hasSuffix(".db3") || file.hasSuffix(".db3.zstd") {
            throw CaptureError.file(path: file, problem: "not a SQLite database (no 'SQLite format 3' header): not a rosbag2 .db3")
        }
        if file.hasSuffix(".mcap") || file.hasSuffix(".mcap.zstd") {
            throw CaptureError.file(path: file, problem: "not an MCAP file (no MCAP magic)")
        }
        throw CaptureError.file(path: file, problem: "not a ROS 2 recording (neither a SQLite database nor an MCAP file)")
    }
}

// MARK: - Bytes

/// Bytes a reader parses: a file mapped read-only, or a buffer it owns. The region lives as long
/// as this object; parsers see it as an `UnsafeRawBufferPointer` and check every length against it.
final class ROS2Bytes {
    let raw: UnsafeRawBufferPointer
    private let release: Release

    private enum Release {
        case none
        case unmap
        case deallocate
        case free
    }

    /// Maps `path` read-only. A file that shrinks while mapped would fault on access; recordings
    /// are not written while read.
    init(mapping path: String) throws {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw CaptureError.file(path: path, problem: "cannot open: \(errnoMessage(errno)) (\(errnoName(errno)))")
        }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else {
            throw CaptureError.file(path: path, problem: "cannot stat: \(errnoMessage(errno))")
        }
        guard (st.st_mode & S_IFMT) == S_IFREG else {
            throw CaptureError.file(path: path, problem: "not a regular file")
        }
        let size = Int(st.st_size)
        if size == 0 {
            raw = UnsafeRawBufferPointer(start: nil, count: 0)
            release = .none
            return
        }
        guard let p = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0), p != MAP_FAILED else {
            throw CaptureError.file(path: path, problem: "cannot map: \(errnoMessage(errno))")
        }
        raw = UnsafeRawBufferPointer(start: p, count: size)
        release = .unmap
    }

    /// A private copy of `bytes`.
    init(copying bytes: [UInt8]) {
        let p = UnsafeMutableRawBufferPointer.allocate(byteCount: max(bytes.count, 1), alignment: 16)
        bytes.withUnsafeBytes { src in
            if let s = src.baseAddress, let d = p.baseAddress { memcpy(d, s, bytes.count) }
        }
        raw = UnsafeRawBufferPointer(start: p.baseAddress, count: bytes.count)
        release = .deallocate
    }

    /// Adopts a buffer from a `dl_…_alloc` decompressor (freed with `dl_decompress_free`).
    init(adopting p: UnsafeMutablePointer<UInt8>, count: Int) {
        raw = UnsafeRawBufferPointer(start: p, count: count)
        release = .free
    }

    deinit {
        switch release {
        case .none: break
        case .unmap: munmap(UnsafeMutableRawPointer(mutating: raw.baseAddress), raw.count)
        case .deallocate: raw.baseAddress.map { UnsafeMutableRawPointer(mutating: $0).deallocate() }
        case .free: raw.baseAddress.map { dl_decompress_free(UnsafeMutablePointer(mutating: $0.assumingMemoryBound(to: UInt8.self))) }
        }
    }
}

// MARK: - Compression

/// rosbag2's and MCAP's compressors, through CPlatform's libzstd and liblz4 (frame format) decoders.
enum ROS2Compression {
    static let zstdMagic: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD]
    static let lz4Magic: [UInt8] = [0x04, 0x22, 0x4D, 0x18]

    /// A zstd stream of unknown decompressed size (a rosbag2 message).
    static func zstd(_ data: [UInt8], name: String, what: String) throws -> [UInt8] {
        try unknownSize(data, name: name, what: "\(what) (zstd)", dl_zstd_decompress_alloc)
    }

    /// An LZ4 frame of unknown decompressed size.
    static func lz4(_ data: [UInt8], name: String, what: String) throws -> [UInt8] {
        try unknownSize(data, name: name, what: "\(what) (lz4)", dl_lz4_decompress_frame_alloc)
    }

    private typealias AllocDecoder = (UnsafePointer<UInt8>?, Int, Int, UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?,
                                      UnsafeMutablePointer<Int>?) -> Int32

    private static func unknownSize(_ data: [UInt8], name: String, what: String, _ decode: AllocDecoder) throws -> [UInt8] {
        var out: UnsafeMutablePointer<UInt8>?
        var count = 0
        // At most 1 GiB, no more than the memory available, and over 64 MiB no more than 1024 times
        // its own size (the buffer grows with the data up to the first of these).
        let (ratio, overflow) = data.count.multipliedReportingOverflow(by: undeclaredRatio)
        let limit = min(ROS2Recording.maxMessageSize, MemoryBudget.available() ?? ROS2Recording.maxMessageSize,
                        max(64 << 20, overflow ? Int.max : ratio))
        let code = data.withUnsafeBufferPointer { decode($0.baseAddress, $0.count, limit, &out, &count) }
        guard code == 0, let out else {
            throw CaptureError.file(path: name, problem: "\(what): \(String(cString: dl_decompress_error(code)))")
        }
        defer { dl_decompress_free(out) }
        return Array(UnsafeBufferPointer(start: out, count: count))
    }

    /// Largest decompressed storage file accepted: the memory available now (`MemoryBudget`: the
    /// kernel's MemAvailable, the cgroup's limit, or `DEPTHLENS_MEMORY_AVAILABLE`), never more than
    /// half the machine's memory. A whole-file stream inflates in memory (SQLite and the MCAP reader
    /// want the storage file whole), so this is where a zstd bomb stops.
    static var maxFileSize: Int {
        let half = Int(min(UInt64(Int.max), ProcessInfo.processInfo.physicalMemory / 2))
        return MemoryBudget.available().map { min($0, half) } ?? half
    }

    /// A whole storage file compressed per file (rosbag2 `compression_mode: file`).
    /// How many times its own size a whole-file stream (or an MCAP chunk over 64 MiB) may inflate to.
    static let undeclaredRatio = 1024

    static func zstdFile(_ bytes: ROS2Bytes, name: String) throws -> ROS2Bytes {
        try file(bytes, name: name, format: "zstd")
    }

    static func lz4File(_ bytes: ROS2Bytes, name: String) throws -> ROS2Bytes {
        try file(bytes, name: name, format: "lz4")
    }

    /// Inflates a whole storage file into memory, bounded by what its frames declare (zstd: when
    /// every frame declares its content size, more is an error found as it is decoded, and a
    /// declaration over the memory available is refused before anything is allocated) and by
    /// `limit` (`maxFileSize`): a stream without declarations is decoded into a buffer that grows
    /// with the data, up to the limit. Declared or not, the output is at most `undeclaredRatio`
    /// times the stream's own size (at least 64 MiB) — recordings compress a few times, a zstd
    /// bomb tens of thousands. Each failure is one line naming the file.
    static func file(_ bytes: ROS2Bytes, name: String, format: String, limit: Int = maxFileSize) throws -> ROS2Bytes {
        let src = bytes.raw.bindMemory(to: UInt8.self)
        var declared: UInt64 = 0
        let sized = format == "zstd" && dl_zstd_declared_size(src.baseAddress, src.count, &declared) == 1
        func fail(_ problem: String) -> CaptureError {
            .file(path: name, problem: "\(format)-compressed storage file: \(problem)")
        }
        let (ratioCap, overflow) = src.count.multipliedReportingOverflow(by: undeclaredRatio)
        let byRatio = max(64 << 20, overflow ? Int.max : ratioCap)
        if sized, declared > UInt64(limit) {
            throw fail("its frames declare \(declared) bytes uncompressed, more than the memory available "
                       + "(\(MemoryBudget.describe(limit)); DEPTHLENS_MEMORY_AVAILABLE sets it)")
        }
        if sized, declared > UInt64(byRatio) {
            throw fail("its frames declare \(declared) bytes uncompressed, more than \(undeclaredRatio) times its \(src.count) bytes: "
                       + "refused as a decompression bomb")
        }
        let cap = min(limit, byRatio)
        var out: UnsafeMutablePointer<UInt8>?
        var count = 0
        let code = format == "zstd" ? dl_zstd_decompress_alloc(src.baseAddress, src.count, cap, &out, &count)
                                    : dl_lz4_decompress_frame_alloc(src.baseAddress, src.count, cap, &out, &count)
        guard code == 0, let out else {
            switch Int(code) {
            case Int(DL_DECOMPRESS_OVER_LIMIT) where byRatio < limit:
                throw fail("it inflates past \(MemoryBudget.describe(cap)) (\(undeclaredRatio) times its \(src.count) bytes) "
                           + "without declaring its size: refused as a decompression bomb")
            case Int(DL_DECOMPRESS_OVER_LIMIT):
                throw fail("it inflates past \(MemoryBudget.describe(limit)), the memory available (stopped there; "
                           + "DEPTHLENS_MEMORY_AVAILABLE sets it)")
            case Int(DL_DECOMPRESS_TOO_LONG):
                throw fail("it decompresses to more than the \(declared) bytes its frames declare (corrupt)")
            case Int(DL_DECOMPRESS_TOO_SHORT):
                throw fail(sized ? "it ends before the \(declared) bytes its frames declare (cut short)" : "it ends mid-stream (cut short)")
            default:
                throw fail(String(cString: dl_decompress_error(code)))
            }
        }
        return ROS2Bytes(adopting: out, count: count)
    }

    /// A chunk of known uncompressed size (MCAP): `none`, `zstd` or `lz4`.
    static func chunk(_ src: UnsafeRawBufferPointer, compression: String, size: Int) -> (data: [UInt8], code: Int32) {
        if compression.isEmpty {
            return (Array(src.bindMemory(to: UInt8.self)), src.count == size ? 0 : Int32(DL_DECOMPRESS_TOO_SHORT))
        }
        var code: Int32 = 0
        let out = [UInt8](unsafeUninitializedCapacity: size) { buf, initialized in
            let s = src.bindMemory(to: UInt8.self)
            guard let sp = s.baseAddress, let d = buf.baseAddress else {
                code = (size == 0 && src.isEmpty) ? 0 : Int32(DL_DECOMPRESS_TOO_SHORT)
                initialized = 0
                return
            }
            code = compression == "zstd" ? dl_zstd_decompress(sp, s.count, d, size) : dl_lz4_decompress_frame(sp, s.count, d, size)
            // On failure the array stays empty: bytes the decoder did not write are never exposed.
            initialized = code == 0 ? size : 0
        }
        return (out, code)
    }
}

// MARK: - metadata.yaml

/// The fields of rosbag2's `metadata.yaml` the reader needs, from a small parser of the block
/// YAML rosbag2 (yaml-cpp) and rosbags (ruamel) write: keys directly under
/// `rosbag2_bagfile_information`, scalars plain or quoted, `relative_file_paths` a block or flow list.
struct Rosbag2Metadata: Equatable {
    var storageIdentifier: String = ""
    var relativeFilePaths: [String] = []
    var compressionFormat: String = ""
    var compressionMode: String = ""

    /// The most bytes a metadata.yaml may hold: rosbag2 writes a few KB (a topic a few hundred bytes).
    static let maxBytes = 4 << 20

    static func read(_ path: String) throws -> Rosbag2Metadata {
        // FileSupport, not FileManager.contents: a bounded read with a one-line error (an empty
        // file, a folder), and FileManager leaked its buffer on an empty file (the rosbag2meta fuzz target).
        let bytes: [UInt8]
        do { bytes = try FileSupport.readPrefix(path, count: maxBytes + 1) } catch { throw CaptureError.wrapping(error, path: path) }
        guard bytes.count <= maxBytes else {
            throw CaptureError.file(path: path, problem: "is over \(maxBytes >> 20) MiB: not a rosbag2 metadata.yaml")
        }
        return try parse(String(decoding: bytes, as: UTF8.self), path: path)
    }

    static func parse(_ text: String, path: String) throws -> Rosbag2Metadata {
        let lines = text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).map(String.init)
        func indent(_ l: String) -> Int { l.prefix { $0 == " " }.count }
        func content(_ l: String) -> Substring {
            let t = l.drop { $0 == " " }
            return t.hasPrefix("#") ? "" : t
        }
        guard let top = lines.firstIndex(where: { $0.hasPrefix("rosbag2_bagfile_information:") }) else {
            throw CaptureError.file(path: path, problem: "no 'rosbag2_bagfile_information' section: not a rosbag2 metadata.yaml")
        }
        var m = Rosbag2Metadata()
        var keyIndent: Int?
        var i = top + 1
        while i < lines.count {
            let line = lines[i]
            let c = content(line)
            i += 1
            if c.isEmpty { continue }
            let ind = indent(line)
            if ind == 0 { break }  // the next top-level key
            if keyIndent == nil { keyIndent = ind }
            guard ind == keyIndent, !c.hasPrefix("-"), let colon = c.firstIndex(of: ":") else { continue }
            let key = String(c[c.startIndex..<colon])
            let value = c[c.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            switch key {
            case "storage_identifier": m.storageIdentifier = unquote(value)
            case "compression_format": m.compressionFormat = unquote(value)
            case "compression_mode": m.compressionMode = unquote(value)
            case "relative_file_paths":
                if value.hasPrefix("[") {
                    guard value.hasSuffix("]") else {
                        throw CaptureError.file(path: path, problem: "relative_file_paths: unterminated list")
                    }
                    m.relativeFilePaths = value.dropFirst().dropLast().split(separator: ",")
                        .map { unquote($0.trimmingCharacters(in: .whitespaces)) }.filter { !$0.isEmpty }
                } else {
                    // Block list: `- NAME` lines, indented at or below the key.
                    while i < lines.count {
                        let l = lines[i]
                        let lc = content(l)
                        if lc.isEmpty { i += 1; continue }
                        guard indent(l) >= ind, lc.hasPrefix("-") else { break }
                        m.relativeFilePaths.append(unquote(lc.dropFirst().trimmingCharacters(in: .whitespaces)))
                        i += 1
                    }
                }
            default: break
            }
        }
        for f in m.relativeFilePaths where f.isEmpty || f.hasPrefix("/") || f.split(separator: "/").contains("..") {
            throw CaptureError.file(path: path, problem: "relative_file_paths entry '\(f.prefix(80))' is not a file inside the folder")
        }
        return m
    }

    /// A plain, 'single-quoted' or "double-quoted" scalar (a trailing comment dropped from plain ones).
    static func unquote(_ s: String) -> String {
        if s.count >= 2, let f = s.first, f == "'" || f == "\"", s.last == f {
            let inner = String(s.dropFirst().dropLast())
            return f == "'" ? inner.replacingOccurrences(of: "''", with: "'") : inner
        }
        if let hash = s.range(of: " #") { return String(s[..<hash.lowerBound]).trimmingCharacters(in: .whitespaces) }
        return s
    }
}
