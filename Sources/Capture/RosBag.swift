import CPlatform
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A ROS1 bag (format 2.0) read directly: bag header, connection and chunk-info records from the
/// index at the end of the file, each chunk's message index (read past the chunk's data, so opening
/// decompresses nothing), and messages on demand, one chunk decompressed at a time (`none`, `lz4`
/// — ROS's roslz4, the LZ4 frame format — and `bz2`), the last one kept.
///
/// Record layout (http://wiki.ros.org/Bags/Format/2.0): `header_len` (u32 LE), header fields (each
/// `field_len` u32 LE + `name=value`), `data_len` (u32 LE), data. Every length is checked against
/// what is left of its container before anything is read or allocated; any inconsistency is a
/// `CaptureError.file(path:problem:)` naming the file and the problem. Nothing here traps on input.
public final class RosBag {
    /// A ROS time: seconds and nanoseconds since the epoch (or since the device clock's origin).
    public struct Time: Hashable, Comparable, Sendable, CustomStringConvertible {
        public var sec: UInt32
        public var nsec: UInt32
        public init(sec: UInt32, nsec: UInt32) { self.sec = sec; self.nsec = nsec }
        public var nanoseconds: UInt64 { UInt64(sec) * 1_000_000_000 + UInt64(nsec) }
        public var seconds: Double { Double(sec) + Double(nsec) * 1e-9 }
        public static func < (a: Time, b: Time) -> Bool { a.nanoseconds < b.nanoseconds }
        public var description: String { String(format: "%u.%09u", sec, nsec) }
    }

    /// A connection: a topic with its message type (the bag's connection record and header).
    public struct Connection: Sendable, Equatable {
        public var id: UInt32
        public var topic: String
        /// "sensor_msgs/Image".
        public var type: String
        public var md5sum: String
        public var messageDefinition: String
        public var callerID: String?
        public var latching: Bool
    }

    /// Where one message lies: its connection, receive time, chunk and offset in the chunk's data.
    public struct MessageRef: Sendable, Equatable {
        public var connection: UInt32
        public var time: Time
        /// Index into `chunks`.
        public var chunk: Int
        /// Byte offset of the message record in the uncompressed chunk data.
        public var offset: Int
    }

    /// One chunk as the index describes it.
    public struct Chunk: Sendable, Equatable {
        /// File offset of the chunk record.
        public var position: UInt64
        public var startTime: Time
        public var endTime: Time
        /// "none", "lz4" or "bz2".
        public var compression: String
        /// Uncompressed size of the chunk data.
        public var size: Int
        /// File offset and length of the (compressed) chunk data.
        var dataOffset: UInt64
        var dataLength: Int
    }

    /// The name errors carry (the file's path, or the name given to an in-memory bag).
    public let path: String
    /// Connections by id, in id order.
    public private(set) var connections: [Connection] = []
    public private(set) var chunks: [Chunk] = []
    /// Every message in the bag, sorted by receive time (file order among equal times).
    public private(set) var messages: [MessageRef] = []

    /// Largest uncompressed chunk accepted (a chunk header may claim any u32 size).
    public static let maxChunkSize = 1 << 30

    private let storage: Storage
    private var connectionIndex: [UInt32: Int] = [:]
    private var cachedChunk: (index: Int, data: [UInt8])?
    /// Chunks found unreadable (index → the line saying why), by reading a message or `checkChunks()`.
    public private(set) var damagedChunks: [Int: String] = [:]
    private var checkedChunks = Set<Int>()

    /// What of the bag could not be read, one line per unreadable chunk ("chunk 3 (lz4 at offset
    /// X): corrupt data; its N messages left out"); complete after `checkChunks()`.
    public var damage: [String] { damagedChunks.sorted { $0.key < $1.key }.map(\.value) }

    /// Decompresses every chunk not yet read (one at a time) and leaves the messages of those that
    /// cannot be read out of `messages`; true when it found a damaged chunk not known before.
    @discardableResult
    public func checkChunks() -> Bool {
        let before = damagedChunks.count
        for i in chunks.indices where !checkedChunks.contains(i) && damagedChunks[i] == nil { _ = try? chunkData(i) }
        guard damagedChunks.count > before else { return false }
        messages = messages.filter { damagedChunks[$0.chunk] == nil }
        return true
    }

    /// Opens the bag at `path` and reads its index. Throws `CaptureError.file`.
    public convenience init(path: String) throws {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw CaptureError.file(path: path, problem: "cannot open: \(errnoMessage(errno)) (\(errnoName(errno)))")
        }
        var st = stat()
        guard fstat(fd, &st) == 0 else {
            let e = errno
            close(fd)
            throw CaptureError.file(path: path, problem: "cannot stat: \(errnoMessage(e))")
        }
        guard (st.st_mode & S_IFMT) == S_IFREG else {
            close(fd)
            throw CaptureError.file(path: path, problem: "not a regular file")
        }
        try self.init(storage: .file(fd: fd, size: UInt64(st.st_size)), name: path)
    }

    /// Reads a bag held in memory (fuzzing, tests); `name` stands for the path in errors.
    public convenience init(bytes: [UInt8], name: String) throws {
        try self.init(storage: .memory(bytes), name: name)
    }

    private init(storage: Storage, name: String) throws {
        self.storage = storage
        self.path = name
        try readIndex()
    }

    deinit {
        if case let .file(fd, _) = storage { close(fd) }
    }

    // MARK: Public queries

    /// The connection with id `id`.
    public func connection(_ id: UInt32) -> Connection? {
        connectionIndex[id].map { connections[$0] }
    }

    /// Messages on `topic`, by receive time.
    public func messages(onTopic topic: String) -> [MessageRef] {
        let ids = Set(connections.filter { $0.topic == topic }.map(\.id))
        return messages.filter { ids.contains($0.connection) }
    }

    /// Topics and their message types, one entry per topic (first connection's type).
    public var topics: [(topic: String, type: String)] {
        var seen = Set<String>()
        var out: [(String, String)] = []
        for c in connections where seen.insert(c.topic).inserted { out.append((c.topic, c.type)) }
        return out.sorted { $0.0 < $1.0 }
    }

    /// The serialized message (ROS1 wire format) `ref` points at. Decompresses its chunk unless it
    /// is the one decompressed last.
    public func data(of ref: MessageRef) throws -> [UInt8] {
        let chunk = try chunkData(ref.chunk)
        var r = ByteReader(bytes: chunk, name: path, what: "message record in chunk \(ref.chunk)")
        guard ref.offset >= 0, ref.offset <= chunk.count else {
            throw fail("message offset \(ref.offset) lies outside chunk \(ref.chunk) (\(chunk.count) bytes)")
        }
        r.at = ref.offset
        let record = try readRecord(&r, what: "message record at offset \(ref.offset) of chunk \(ref.chunk)")
        guard record.op == 0x02 else {
            throw fail("chunk \(ref.chunk) offset \(ref.offset) is not a message record")
        }
        guard let conn = record.u32("conn"), conn == ref.connection else {
            throw fail("message record at offset \(ref.offset) of chunk \(ref.chunk) has the wrong connection")
        }
        return Array(chunk[record.data])
    }

    // MARK: Reading the index

    private func fail(_ problem: String) -> CaptureError { .file(path: path, problem: problem) }

    private static let magic = Array("#ROSBAG V2.0\n".utf8)

    private func readIndex() throws {
        let size = storage.size
        guard size >= UInt64(Self.magic.count) else {
            throw fail(size == 0 ? "empty file, not a ROS bag" : "too short to be a ROS bag (\(size) bytes)")
        }
        let head = try storage.read(at: 0, count: Self.magic.count, name: path)
        guard head == Self.magic else {
            if head.starts(with: Array("#ROSBAG V".utf8)) {
                let v = String(decoding: head.dropFirst(9).prefix { $0 != 0x0A }, as: UTF8.self)
                throw fail("ROS bag version \(v) is not supported (only 2.0)")
            }
            throw fail("not a ROS bag (no '#ROSBAG V2.0' signature)")
        }
        // Bag header record.
        var pos = UInt64(Self.magic.count)
        let header = try fileRecord(at: &pos, what: "bag header")
        guard header.op == 0x03 else { throw fail("the first record is not a bag header (op \(header.op))") }
        guard let indexPos = header.u64("index_pos"), let connCount = header.u32("conn_count"),
              let chunkCount = header.u32("chunk_count") else {
            throw fail("bag header lacks index_pos, conn_count or chunk_count")
        }
        guard indexPos != 0 else {
            throw fail("bag is not indexed (recording not closed?): run 'rosbag reindex' on it")
        }
        guard indexPos >= pos, indexPos <= size else {
            throw fail("index position \(indexPos) lies beyond the end of the file (\(size) bytes): truncated")
        }
        // Connection and chunk-info records, from index_pos to the end of the file.
        var infos: [(position: UInt64, start: Time, end: Time, count: UInt32)] = []
        var p = indexPos
        var seenConns = 0
        while p < size {
            let rec = try fileRecord(at: &p, what: "index record")
            switch rec.op {
            case 0x07:
                let c = try parseConnection(rec)
                if connectionIndex[c.id] == nil {
                    connectionIndex[c.id] = connections.count
                    connections.append(c)
                }
                seenConns += 1
            case 0x06:
                guard let ver = rec.u32("ver"), ver == 1 else { throw fail("chunk info record has an unsupported version") }
                guard let cpos = rec.u64("chunk_pos"), let st = rec.time("start_time"), let en = rec.time("end_time"),
                      let count = rec.u32("count") else {
                    throw fail("chunk info record lacks chunk_pos, start_time, end_time or count")
                }
                guard UInt64(count) * 8 <= UInt64(rec.data.count) else {
                    throw fail("chunk info record counts \(count) connections in \(rec.data.count) bytes")
                }
                infos.append((cpos, st, en, count))
            default:
                throw fail("unexpected record (op \(rec.op)) in the index at offset \(p)")
            }
        }
        guard seenConns == Int(connCount) else {
            throw fail("bag header says \(connCount) connections, the index has \(seenConns): truncated or corrupt")
        }
        guard infos.count == Int(chunkCount) else {
            throw fail("bag header says \(chunkCount) chunks, the index has \(infos.count): truncated or corrupt")
        }
        connections.sort { $0.id < $1.id }
        connectionIndex = Dictionary(uniqueKeysWithValues: connections.enumerated().map { ($1.id, $0) })
        // Each chunk record, then its index data records (one per connection in it).
        var all: [(MessageRef, Int)] = []
        for (i, info) in infos.enumerated() {
            guard info.position >= UInt64(Self.magic.count), info.position < indexPos else {
                throw fail("chunk \(i) position \(info.position) lies outside the data section")
            }
            var cp = info.position
            let rec = try fileRecord(at: &cp, what: "chunk \(i)", readData: false)
            guard rec.op == 0x05 else { throw fail("chunk \(i) at offset \(info.position) is not a chunk record (op \(rec.op))") }
            guard let compression = rec.string("compression"), let usize = rec.u32("size") else {
                throw fail("chunk \(i) lacks its compression or size")
            }
            guard ["none", "lz4", "bz2"].contains(compression) else {
                throw fail("chunk \(i) uses unknown compression '\(compression.prefix(40))' (none, lz4 and bz2 are supported)")
            }
            let dataLen = rec.dataLength
            if compression == "none", Int(usize) != dataLen {
                throw fail("uncompressed chunk \(i) says \(usize) bytes but holds \(dataLen)")
            }
            guard Int(usize) <= Self.maxChunkSize else {
                throw fail("chunk \(i) claims \(usize) uncompressed bytes, more than \(Self.maxChunkSize)")
            }
            if compression == "lz4", UInt64(usize) > UInt64(dataLen) * 256 + 64 {
                throw fail("chunk \(i) claims \(usize) bytes from \(dataLen) lz4 bytes, more than LZ4 can hold")
            }
            chunks.append(Chunk(position: info.position, startTime: info.start, endTime: info.end, compression: compression,
                                size: Int(usize), dataOffset: rec.dataOffset, dataLength: dataLen))
            // Index data records follow the chunk until the next chunk record or the index.
            var ip = cp
            var order = 0
            while ip < indexPos {
                var peek = ip
                let idx = try fileRecord(at: &peek, what: "index data of chunk \(i)", readData: false)
                guard idx.op == 0x04 else { break }
                let full = try fileRecord(at: &ip, what: "index data of chunk \(i)")
                guard let ver = full.u32("ver"), ver == 1 else { throw fail("index data record of chunk \(i) has an unsupported version") }
                guard let conn = full.u32("conn"), let count = full.u32("count") else {
                    throw fail("index data record of chunk \(i) lacks conn or count")
                }
                guard connectionIndex[conn] != nil else {
                    throw fail("index data of chunk \(i) names connection \(conn), which the index does not define")
                }
                guard UInt64(count) * 12 <= UInt64(full.data.count) else {
                    throw fail("index data record of chunk \(i) counts \(count) messages in \(full.data.count) bytes")
                }
                var r = ByteReader(bytes: full.bytes, name: path, what: "index data of chunk \(i)")
                r.at = full.data.lowerBound
                for _ in 0..<Int(count) {
                    let t = Time(sec: try r.u32(), nsec: try r.u32())
                    let off = Int(try r.u32())
                    guard off < Int(usize) else {
                        throw fail("index data of chunk \(i) points at offset \(off), past the chunk's \(usize) bytes")
                    }
                    all.append((MessageRef(connection: conn, time: t, chunk: i, offset: off), order))
                    order += 1
                }
            }
        }
        // By time; equal times keep chunk order, then their offset in the chunk (file order).
        all.sort { a, b in
            if a.0.time != b.0.time { return a.0.time < b.0.time }
            if a.0.chunk != b.0.chunk { return a.0.chunk < b.0.chunk }
            return a.0.offset < b.0.offset
        }
        messages = all.map(\.0)
    }

    private func parseConnection(_ rec: Record) throws -> Connection {
        guard let id = rec.u32("conn"), let topic = rec.string("topic") else {
            throw fail("connection record lacks conn or topic")
        }
        // The data is the connection header: fields in the same field_len-prefixed form.
        let fields = try parseFields(rec.bytes, rec.data, what: "connection header of '\(topic.prefix(80))'")
        func s(_ k: String) -> String? { fields[k].map { String(decoding: rec.bytes[$0], as: UTF8.self) } }
        guard let type = s("type") else { throw fail("connection '\(topic.prefix(80))' has no message type") }
        return Connection(id: id, topic: topic, type: type, md5sum: s("md5sum") ?? "", messageDefinition: s("message_definition") ?? "",
                          callerID: s("callerid"), latching: s("latching") == "1")
    }

    // MARK: Chunks

    private func chunkData(_ index: Int) throws -> [UInt8] {
        if let c = cachedChunk, c.index == index { return c.data }
        guard index >= 0, index < chunks.count else { throw fail("chunk \(index) does not exist") }
        let chunk = chunks[index]
        let raw = try storage.read(at: chunk.dataOffset, count: chunk.dataLength, name: path)
        let out: [UInt8]
        switch chunk.compression {
        case "none":
            out = raw
        case "lz4", "bz2":
            var code: Int32 = 0
            out = [UInt8](unsafeUninitializedCapacity: chunk.size) { buf, initialized in
                raw.withUnsafeBufferPointer { src in
                    guard let s = src.baseAddress, let d = buf.baseAddress else {
                        // Empty input or output: only an empty chunk from empty input is fine.
                        code = (chunk.size == 0 && raw.isEmpty) ? 0 : Int32(DL_DECOMPRESS_TOO_SHORT)
                        return
                    }
                    code = chunk.compression == "lz4"
                        ? dl_lz4_decompress_frame(s, raw.count, d, chunk.size)
                        : dl_bz2_decompress(s, raw.count, d, chunk.size)
                }
                // On failure the array stays empty (and is thrown away): bytes the decoder did not
                // write are never exposed, and a bogus size's pages are never touched.
                initialized = code == 0 ? chunk.size : 0
            }
            guard code == 0 else {
                let problem = "chunk \(index) (\(chunk.compression) at offset \(chunk.position)): \(String(cString: dl_decompress_error(code)))"
                if damagedChunks[index] == nil {
                    let n = messages.reduce(0) { $0 + ($1.chunk == index ? 1 : 0) }
                    damagedChunks[index] = problem + (n > 0 ? "; its \(n) message\(n == 1 ? "" : "s") left out" : "")
                }
                throw fail(problem)
            }
        default:
            throw fail("chunk \(index) uses unknown compression '\(chunk.compression)'")
        }
        checkedChunks.insert(index)
        cachedChunk = (index, out)
        return out
    }

    // MARK: Records

    /// A record's header fields (ranges into `bytes`) and data range.
    struct Record {
        var bytes: [UInt8]
        var fields: [String: Range<Int>]
        var data: Range<Int>
        /// For records read without their data: where it lies in the file and how long it is.
        var dataOffset: UInt64 = 0
        var dataLength: Int = 0

        var op: UInt8 { fields["op"].flatMap { $0.count == 1 ? bytes[$0.lowerBound] : nil } ?? 0xFF }
        func u32(_ k: String) -> UInt32? {
            guard let r = fields[k], r.count == 4 else { return nil }
            return ByteReader.le32(bytes, r.lowerBound)
        }
        func u64(_ k: String) -> UInt64? {
            guard let r = fields[k], r.count == 8 else { return nil }
            return UInt64(ByteReader.le32(bytes, r.lowerBound)) | UInt64(ByteReader.le32(bytes, r.lowerBound + 4)) << 32
        }
        func time(_ k: String) -> Time? {
            guard let r = fields[k], r.count == 8 else { return nil }
            return Time(sec: ByteReader.le32(bytes, r.lowerBound), nsec: ByteReader.le32(bytes, r.lowerBound + 4))
        }
        func string(_ k: String) -> String? { fields[k].map { String(decoding: bytes[$0], as: UTF8.self) } }
    }

    /// Reads the record at file offset `pos` and moves `pos` past it. With `readData` false the
    /// data is skipped (only its offset and length are kept).
    private func fileRecord(at pos: inout UInt64, what: String, readData: Bool = true) throws -> Record {
        let size = storage.size
        guard pos <= size, size - pos >= 4 else {
            throw fail("\(what) at offset \(pos): file ends inside the record header length (truncated)")
        }
        let hl = ByteReader.le32(try storage.read(at: pos, count: 4, name: path), 0)
        guard UInt64(hl) <= size - pos - 4 else {
            throw fail("\(what) at offset \(pos): header of \(hl) bytes runs past the end of the file (truncated)")
        }
        let headerBytes = try storage.read(at: pos + 4, count: Int(hl), name: path)
        let afterHeader = pos + 4 + UInt64(hl)
        guard size - afterHeader >= 4 else {
            throw fail("\(what) at offset \(pos): file ends before the record's data length (truncated)")
        }
        let dl = ByteReader.le32(try storage.read(at: afterHeader, count: 4, name: path), 0)
        let dataOffset = afterHeader + 4
        guard UInt64(dl) <= size - dataOffset else {
            throw fail("\(what) at offset \(pos): data of \(dl) bytes runs past the end of the file (truncated)")
        }
        let fields = try parseFields(headerBytes, 0..<headerBytes.count, what: "\(what) at offset \(pos)")
        var record: Record
        if readData {
            let data = try storage.read(at: dataOffset, count: Int(dl), name: path)
            let all = headerBytes + data
            record = Record(bytes: all, fields: fields, data: headerBytes.count..<all.count)
        } else {
            record = Record(bytes: headerBytes, fields: fields, data: headerBytes.count..<headerBytes.count)
        }
        record.dataOffset = dataOffset
        record.dataLength = Int(dl)
        pos = dataOffset + UInt64(dl)
        return record
    }

    /// Reads a record from an in-memory reader (a message inside a chunk).
    private func readRecord(_ r: inout ByteReader, what: String) throws -> Record {
        let hl = Int(try r.u32())
        guard hl <= r.remaining else { throw fail("\(what): header of \(hl) bytes runs past the end of the chunk") }
        let hStart = r.at
        r.at += hl
        let dl = Int(try r.u32())
        guard dl <= r.remaining else {
            throw fail("\(what): data of \(dl) bytes runs past the end of the chunk (\(r.remaining) left)")
        }
        let fields = try parseFields(r.bytes, hStart..<(hStart + hl), what: what)
        let data = r.at..<(r.at + dl)
        r.at += dl
        return Record(bytes: r.bytes, fields: fields, data: data)
    }

    /// Parses `field_len` + `name=value` fields in `range` of `bytes`.
    private func parseFields(_ bytes: [UInt8], _ range: Range<Int>, what: String) throws -> [String: Range<Int>] {
        var fields: [String: Range<Int>] = [:]
        var at = range.lowerBound
        while at < range.upperBound {
            guard range.upperBound - at >= 4 else { throw fail("\(what): header field length cut off") }
            let len = Int(ByteReader.le32(bytes, at))
            at += 4
            guard len <= range.upperBound - at else { throw fail("\(what): header field of \(len) bytes runs past its header") }
            let field = at..<(at + len)
            guard let eq = bytes[field].firstIndex(of: 0x3D) else { throw fail("\(what): header field without '='") }
            let name = String(decoding: bytes[field.lowerBound..<eq], as: UTF8.self)
            fields[name] = (eq + 1)..<field.upperBound
            at += len
        }
        return fields
    }

    // MARK: Storage

    private enum Storage {
        case file(fd: Int32, size: UInt64)
        case memory([UInt8])

        var size: UInt64 {
            switch self {
            case let .file(_, size): return size
            case let .memory(b): return UInt64(b.count)
            }
        }

        /// `count` bytes at `offset`; the caller has checked they lie inside the file.
        func read(at offset: UInt64, count: Int, name: String) throws -> [UInt8] {
            guard count >= 0, offset <= size, UInt64(count) <= size - offset else {
                throw CaptureError.file(path: name, problem: "read of \(count) bytes at offset \(offset) past the end of the file (truncated)")
            }
            switch self {
            case let .memory(b):
                return Array(b[Int(offset)..<(Int(offset) + count)])
            case let .file(fd, _):
                var failure: Int32 = 0
                var short = false
                let out = [UInt8](unsafeUninitializedCapacity: count) { buf, initialized in
                    var done = 0
                    while done < count {
                        let n = pread(fd, buf.baseAddress! + done, count - done, off_t(offset) + off_t(done))
                        if n < 0 {
                            if errno == EINTR { continue }
                            failure = errno
                            break
                        }
                        if n == 0 { short = true; break }
                        done += n
                    }
                    if done < count, let base = buf.baseAddress { memset(base + done, 0, count - done) }
                    initialized = count
                }
                if failure != 0 { throw CaptureError.file(path: name, problem: "read failed: \(errnoMessage(failure))") }
                if short { throw CaptureError.file(path: name, problem: "file shrank while reading (offset \(offset))") }
                return out
            }
        }
    }
}

/// A bounds-checked little-endian reader over bytes (ROS1 serialization and bag records).
struct ByteReader {
    let bytes: [UInt8]
    var at = 0
    /// For errors: the file and what is being read.
    let name: String
    let what: String

    init(bytes: [UInt8], name: String, what: String) {
        self.bytes = bytes
        self.name = name
        self.what = what
    }

    var remaining: Int { bytes.count - at }

    static func le32(_ b: [UInt8], _ i: Int) -> UInt32 {
        UInt32(b[i]) | UInt32(b[i + 1]) << 8 | UInt32(b[i + 2]) << 16 | UInt32(b[i + 3]) << 24
    }

    func short(_ need: Int) -> CaptureError {
        .file(path: name, problem: "\(what) is shorter than its contents say (needs \(need) more bytes at offset \(at), \(remaining) left)")
    }

    mutating func need(_ n: Int) throws {
        guard n >= 0, n <= remaining else { throw short(n) }
    }

    mutating func u8() throws -> UInt8 {
        try need(1)
        defer { at += 1 }
        return bytes[at]
    }

    mutating func u32() throws -> UInt32 {
        try need(4)
        defer { at += 4 }
        return Self.le32(bytes, at)
    }

    mutating func u64() throws -> UInt64 {
        let lo = UInt64(try u32())
        return lo | UInt64(try u32()) << 32
    }

    mutating func f32() throws -> Float { Float(bitPattern: try u32()) }
    mutating func f64() throws -> Double { Double(bitPattern: try u64()) }

    /// A u32 length followed by that many bytes.
    mutating func lengthPrefixed() throws -> Range<Int> {
        let n = Int(try u32())
        try need(n)
        defer { at += n }
        return at..<(at + n)
    }

    mutating func string() throws -> String {
        String(decoding: bytes[try lengthPrefixed()], as: UTF8.self)
    }

    /// `count` float64s (a fixed-length array).
    mutating func f64s(_ count: Int) throws -> [Double] {
        try need(count * 8)
        return try (0..<count).map { _ in try f64() }
    }

    /// A u32 count followed by that many float64s (a variable-length array).
    mutating func f64Array() throws -> [Double] {
        let n = Int(try u32())
        guard n <= remaining / 8 else { throw short(n * 8) }
        return try f64s(n)
    }
}
