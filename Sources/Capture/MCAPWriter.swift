import CPlatform

/// An MCAP writer (https://mcap.dev/spec, major version 0), the counterpart of `MCAPReader`: the
/// magic, a Header (profile, library), Schema and Channel records, then Messages gathered into
/// Chunks (zstd-compressed by default, each with its uncompressed CRC-32) each followed by one
/// MessageIndex record per channel (log time and offset of every message in the uncompressed
/// chunk), DataEnd (the data section's CRC-32), the summary section (Schema, Channel, Statistics
/// and ChunkIndex groups), a SummaryOffset per group, and the Footer with the summary's CRC-32,
/// then the magic again. The writer only makes bytes: `output` receives them in order (a file,
/// memory), so the same code serves files and tests.
public final class MCAPWriter {
    /// Chunk compression.
    public enum Compression: Sendable, Equatable {
        case none
        /// zstd at a level (1…19; 3 is zstd's default).
        case zstd(level: Int32)
        var name: String {
            switch self {
            case .none: return ""
            case .zstd: return "zstd"
            }
        }
    }

    public struct Options: Sendable {
        /// A chunk is closed once its records reach this many bytes (a larger message gets a chunk of its own).
        public var chunkSize = 4 << 20
        public var compression = Compression.zstd(level: 3)
        public init() {}
    }

    /// A record's bytes, built field by field (all little-endian, strings and maps u32-prefixed).
    struct Record {
        var bytes: [UInt8] = []
        mutating func u8(_ v: UInt8) { bytes.append(v) }
        mutating func u16(_ v: UInt16) { withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) } }
        mutating func u32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) } }
        mutating func u64(_ v: UInt64) { withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) } }
        mutating func string(_ s: String) {
            u32(UInt32(s.utf8.count))
            bytes.append(contentsOf: s.utf8)
        }
        mutating func bytes32(_ b: [UInt8]) {
            u32(UInt32(b.count))
            bytes.append(contentsOf: b)
        }
        mutating func stringMap(_ m: [(String, String)]) {
            var inner = Record()
            for (k, v) in m { inner.string(k); inner.string(v) }
            bytes32(inner.bytes)
        }
        /// The record as written: opcode, u64 content length, content.
        func framed(_ op: UInt8) -> [UInt8] {
            var out: [UInt8] = [op]
            out.reserveCapacity(9 + bytes.count)
            withUnsafeBytes(of: UInt64(bytes.count).littleEndian) { out.append(contentsOf: $0) }
            out.append(contentsOf: bytes)
            return out
        }
    }

    struct Schema { var id: UInt16; var name: String; var encoding: String; var data: [UInt8] }
    struct Channel { var id: UInt16; var schemaID: UInt16; var topic: String; var encoding: String; var metadata: [(String, String)] }
    struct ChunkIndex {
        var start: UInt64, end: UInt64, offset: UInt64, length: UInt64
        var messageIndexOffsets: [(UInt16, UInt64)]
        var messageIndexLength: UInt64
        var compressedSize: UInt64, uncompressedSize: UInt64
    }

    public static let magic: [UInt8] = [0x89, 0x4D, 0x43, 0x41, 0x50, 0x30, 0x0D, 0x0A]

    public let options: Options
    private let output: ([UInt8]) throws -> Void
    /// Bytes written so far.
    public private(set) var position: UInt64 = 0
    private var dataCRC: UInt32 = 0
    private var schemas: [Schema] = []
    private var channels: [Channel] = []
    private var chunkIndexes: [ChunkIndex] = []
    private var channelCounts: [UInt16: UInt64] = [:]
    private var messageCount: UInt64 = 0
    private var startTime = UInt64.max, endTime: UInt64 = 0
    private var sequence: [UInt16: UInt32] = [:]
    // The open chunk.
    private var chunk: [UInt8] = []
    private var chunkStart = UInt64.max, chunkEnd: UInt64 = 0
    private var chunkIndex: [UInt16: [(UInt64, UInt64)]] = [:]
    private var finished = false

    /// Writes the magic and the Header record.
    public init(profile: String, library: String, options: Options = Options(), output: @escaping ([UInt8]) throws -> Void) throws {
        self.options = options
        self.output = output
        try emit(Self.magic)
        var h = Record()
        h.string(profile)
        h.string(library)
        try emit(h.framed(0x01))
    }

    private func emit(_ bytes: [UInt8]) throws {
        try output(bytes)
        position += UInt64(bytes.count)
        dataCRC = bytes.withUnsafeBufferPointer { dl_crc32(dataCRC, $0.baseAddress, $0.count) }
    }

    private func schemaRecord(_ s: Schema) -> [UInt8] {
        var r = Record()
        r.u16(s.id); r.string(s.name); r.string(s.encoding); r.bytes32(s.data)
        return r.framed(0x03)
    }

    private func channelRecord(_ c: Channel) -> [UInt8] {
        var r = Record()
        r.u16(c.id); r.u16(c.schemaID); r.string(c.topic); r.string(c.encoding); r.stringMap(c.metadata)
        return r.framed(0x04)
    }

    /// Adds a schema (written at once, outside chunks, and again in the summary); returns its id (from 1).
    public func addSchema(name: String, encoding: String, data: [UInt8]) throws -> UInt16 {
        try closeChunk()
        let s = Schema(id: UInt16(schemas.count + 1), name: name, encoding: encoding, data: data)
        schemas.append(s)
        try emit(schemaRecord(s))
        return s.id
    }

    /// Adds a channel of `schemaID` (written at once and in the summary); returns its id (from 0).
    public func addChannel(schemaID: UInt16, topic: String, messageEncoding: String, metadata: [(String, String)] = []) throws -> UInt16 {
        try closeChunk()
        let c = Channel(id: UInt16(channels.count), schemaID: schemaID, topic: topic, encoding: messageEncoding, metadata: metadata)
        channels.append(c)
        try emit(channelRecord(c))
        return c.id
    }

    /// Adds a message to the open chunk (closing it once it is full). Times in nanoseconds.
    public func addMessage(channel: UInt16, logTime: UInt64, publishTime: UInt64, data: [UInt8]) throws {
        precondition(Int(channel) < channels.count, "MCAPWriter: message on channel \(channel), which was not added")
        let seq = sequence[channel, default: 0]
        sequence[channel] = seq &+ 1
        var head = Record()
        head.u8(0x05)
        head.u64(UInt64(22 + data.count))
        head.u16(channel); head.u32(seq); head.u64(logTime); head.u64(publishTime)
        chunkIndex[channel, default: []].append((logTime, UInt64(chunk.count)))
        chunk.append(contentsOf: head.bytes)
        chunk.append(contentsOf: data)
        chunkStart = min(chunkStart, logTime)
        chunkEnd = max(chunkEnd, logTime)
        startTime = min(startTime, logTime)
        endTime = max(endTime, logTime)
        messageCount += 1
        channelCounts[channel, default: 0] += 1
        if chunk.count >= options.chunkSize { try closeChunk() }
    }

    /// Writes the open chunk (if any) and its message indexes.
    private func closeChunk() throws {
        guard !chunk.isEmpty else { return }
        let crc = chunk.withUnsafeBufferPointer { dl_crc32(0, $0.baseAddress, $0.count) }
        let stored: [UInt8]
        switch options.compression {
        case .none:
            stored = chunk
        case let .zstd(level):
            var out: UnsafeMutablePointer<UInt8>?
            var size = 0
            let code = chunk.withUnsafeBufferPointer { dl_zstd_compress($0.baseAddress, $0.count, level, &out, &size) }
            guard code == 0, let out else {
                throw CaptureError.invalidState("zstd compression failed: \(String(cString: dl_decompress_error(code)))")
            }
            stored = Array(UnsafeBufferPointer(start: out, count: size))
            dl_decompress_free(out)
        }
        var r = Record()
        r.bytes.reserveCapacity(40 + stored.count)
        r.u64(chunkStart); r.u64(chunkEnd); r.u64(UInt64(chunk.count)); r.u32(crc); r.string(options.compression.name)
        r.u64(UInt64(stored.count))
        r.bytes.append(contentsOf: stored)
        let framed = r.framed(0x06)
        let chunkOffset = position
        try emit(framed)
        var offsets: [(UInt16, UInt64)] = []
        let indexStart = position
        for channel in chunkIndex.keys.sorted() {
            var m = Record()
            m.u16(channel)
            var entries = Record()
            for (t, o) in chunkIndex[channel]! { entries.u64(t); entries.u64(o) }
            m.bytes32(entries.bytes)
            offsets.append((channel, position))
            try emit(m.framed(0x07))
        }
        chunkIndexes.append(ChunkIndex(start: chunkStart, end: chunkEnd, offset: chunkOffset, length: UInt64(framed.count),
                                       messageIndexOffsets: offsets, messageIndexLength: position - indexStart,
                                       compressedSize: UInt64(stored.count), uncompressedSize: UInt64(chunk.count)))
        chunk.removeAll(keepingCapacity: true)
        chunkIndex = [:]
        chunkStart = .max
        chunkEnd = 0
    }

    /// Closes the last chunk and writes DataEnd, the summary, the summary offsets and the footer.
    public func finish() throws {
        guard !finished else { return }
        finished = true
        try closeChunk()
        var dataEnd = Record()
        dataEnd.u32(dataCRC)
        try emit(dataEnd.framed(0x0F))

        let summaryStart = position
        var summary: [UInt8] = []
        var groups: [(UInt8, UInt64, UInt64)] = []
        func group(_ op: UInt8, _ records: [[UInt8]]) {
            guard !records.isEmpty else { return }
            let start = summaryStart + UInt64(summary.count)
            for r in records { summary.append(contentsOf: r) }
            groups.append((op, start, summaryStart + UInt64(summary.count) - start))
        }
        group(0x03, schemas.map(schemaRecord))
        group(0x04, channels.map(channelRecord))
        var stats = Record()
        stats.u64(messageCount)
        stats.u16(UInt16(schemas.count))
        stats.u32(UInt32(channels.count))
        stats.u32(0)  // attachments
        stats.u32(0)  // metadata
        stats.u32(UInt32(chunkIndexes.count))
        stats.u64(messageCount == 0 ? 0 : startTime)
        stats.u64(endTime)
        var counts = Record()
        for c in channelCounts.keys.sorted() { counts.u16(c); counts.u64(channelCounts[c]!) }
        stats.bytes32(counts.bytes)
        group(0x0B, [stats.framed(0x0B)])
        group(0x08, chunkIndexes.map { c in
            var r = Record()
            r.u64(c.start); r.u64(c.end); r.u64(c.offset); r.u64(c.length)
            var map = Record()
            for (ch, off) in c.messageIndexOffsets { map.u16(ch); map.u64(off) }
            r.bytes32(map.bytes)
            r.u64(c.messageIndexLength)
            r.string(options.compression.name)
            r.u64(c.compressedSize)
            r.u64(c.uncompressedSize)
            return r.framed(0x08)
        })
        let summaryOffsetStart = summaryStart + UInt64(summary.count)
        for (op, start, length) in groups {
            var r = Record()
            r.u8(op); r.u64(start); r.u64(length)
            summary.append(contentsOf: r.framed(0x0E))
        }
        // The footer: its CRC covers the summary and summary offsets and the footer up to its own CRC field.
        var footer = Record()
        footer.u8(0x02)
        footer.u64(20)  // content length: two u64 and the u32 CRC
        footer.u64(summaryStart)
        footer.u64(summaryOffsetStart)
        var crc = summary.withUnsafeBufferPointer { dl_crc32(0, $0.baseAddress, $0.count) }
        crc = footer.bytes.withUnsafeBufferPointer { dl_crc32(crc, $0.baseAddress, $0.count) }
        footer.u32(crc)
        try emit(summary)
        try emit(footer.bytes + Self.magic)
    }

    /// Messages written so far.
    public var messagesWritten: UInt64 { messageCount }
}
