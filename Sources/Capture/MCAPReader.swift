import CPlatform
import DepthKit
import Foundation

/// An MCAP file (https://mcap.dev/spec, major version 0) read from its bytes: a file mapped
/// read-only, or memory. No I/O happens in here; every length field is checked against what is
/// left of its record or section before anything is read or allocated.
///
/// Layout: magic `89 4D 43 41 50 30 0D 0A`, Header record, data section (Schema, Channel, Message,
/// Chunk + its MessageIndex records, Attachment, Metadata, DataEnd…), optional summary section
/// (Schema, Channel, ChunkIndex, Statistics, AttachmentIndex…) and summary-offset section, Footer,
/// magic. A record is `opcode u8, length u64 LE, content`; unknown opcodes are skipped.
///
/// Opening uses the summary: its Schema and Channel records, each ChunkIndex, the chunk's record
/// header (for its compression and data range) and the chunk's MessageIndex records (log time and
/// offset of every message in the uncompressed chunk) — no chunk is decompressed. A file without a
/// usable summary (a recording cut short, a summary without chunk indexes, indexes that disagree
/// with the Statistics record) is scanned once instead, every chunk decompressed, up to its last
/// whole record. Messages are read on demand, one chunk decompressed at a time (`zstd`, `lz4` —
/// the LZ4 frame format — or none), the last one kept.
///
/// **Bounds.** A chunk is decompressed into exactly the size its header declares (at most
/// `maxChunkSize`; where it declares over 64 MiB, no more than the memory available —
/// `MemoryBudget` — nor 1024 times its compressed size), more or less data being an error found
/// as it is decoded. A chunk holds at most
/// its uncompressed bytes / 31 messages (the smallest Message record), and the whole index at most
/// `indexLimit` messages.
///
/// **Damage.** A chunk that cannot be read (corrupt, failing its CRC, over the budget) is left
/// out and said in `damage`, one line each, with how many messages it held when the summary
/// says; a file cut short is read up to its last whole record and said there too. A scan meets
/// every chunk at opening; a file opened from its summary meets a bad chunk when it is read, or
/// in `checkChunks()`, which reads each chunk once.
final class MCAPReader: ROS2Storage {
    static let magic: [UInt8] = [0x89, 0x4D, 0x43, 0x41, 0x50, 0x30, 0x0D, 0x0A]
    /// Largest uncompressed chunk accepted (a chunk header may claim any u64 size).
    static let maxChunkSize = 1 << 30
    /// The fewest bytes a Message record takes (opcode, length, channel, sequence, two times).
    static let smallestMessageRecord = 9 + 22
    /// Most messages indexed per file: what the memory available allows at ~128 bytes a message
    /// (the index, the per-topic lists, their sorting), at least a million.
    static var indexLimit: Int { max(1 << 20, (MemoryBudget.available() ?? (8 << 30)) / 128) }

    struct Schema {
        var id: UInt16
        var name: String
        var encoding: String
        var data: [UInt8]
    }

    struct Channel {
        var id: UInt16
        var schemaID: UInt16
        var topic: String
        var messageEncoding: String
    }

    struct Chunk {
        /// File offset of the Chunk record.
        var recordOffset: Int
        var compression: String
        /// Where the compressed records lie in the file.
        var data: Range<Int>
        var uncompressedSize: Int
        var uncompressedCRC: UInt32
    }

    struct Message {
        var channel: UInt16
        var logTime: UInt64
        var chunk: Int32
        var offset: Int64
    }

    let name: String
    let identifier = "mcap"
    private let bytes: ROS2Bytes
    private let fileIndex: Int32
    private(set) var schemas: [UInt16: Schema] = [:]
    private(set) var channels: [UInt16: Channel] = [:]
    private(set) var chunks: [Chunk] = []
    private(set) var messages: [Message] = []
    private(set) var notices: [String] = []
    /// Chunks that could not be read (index → the line saying why), and those read whole once.
    private(set) var damagedChunks: [Int: String] = [:]
    private var checkedChunks = Set<Int>()
    /// Chunk records a scan could not even list (an unknown compression, a size over `maxChunkSize`):
    /// file offset → the line saying why.
    private var unlistedChunks: [Int: String] = [:]
    /// "recording cut short at byte B of ≥ C…" when the file ends before its data does.
    private(set) var cutShort: String?
    /// The summary section's indexes were used (no chunk was decompressed at opening).
    private(set) var usedSummary = false
    private(set) var topics: [ROS2Topic] = []
    private(set) var refs: [String: [ROS2MessageRef]] = [:]
    private var cachedChunk: (index: Int, data: [UInt8])?

    init(bytes: ROS2Bytes, name: String, fileIndex: Int32) throws {
        self.bytes = bytes
        self.name = name
        self.fileIndex = fileIndex
        try readIndex()
        buildTopics()
    }

    /// What of the file could not be read: the cut, then each unreadable chunk in file order.
    var damage: [String] {
        let bad = damagedChunks.map { (chunks[$0.key].recordOffset, $0.value) } + unlistedChunks.map { ($0.key, $0.value) }
        return (cutShort.map { [$0] } ?? []) + bad.sorted { $0.0 < $1.0 }.map(\.1)
    }

    /// Reads every chunk not yet read (one at a time; the last one stays cached), so that
    /// `damage` lists every unreadable one and `isUnreadable` knows them. Returns whether any
    /// chunk was found damaged by this call.
    @discardableResult
    func checkChunks() -> Bool {
        let before = damagedChunks.count
        for i in chunks.indices where !checkedChunks.contains(i) && damagedChunks[i] == nil {
            _ = try? chunkData(i)
        }
        return damagedChunks.count > before
    }

    /// The message lies in a chunk found unreadable.
    func isUnreadable(_ ref: ROS2MessageRef) -> Bool {
        ref.chunk >= 0 && damagedChunks[Int(ref.chunk)] != nil
    }

    /// Messages indexed in chunk `index` (from the summary's indexes; counted when a chunk is found bad).
    private func messageCount(inChunk index: Int) -> Int {
        messages.reduce(0) { $0 + ($1.chunk == Int32(index) ? 1 : 0) }
    }

    private func fail(_ problem: String) -> CaptureError { .file(path: name, problem: problem) }

    // MARK: Records

    /// A record: its opcode, the offset of the record, and its content's range.
    struct Record {
        var op: UInt8
        var offset: Int
        var content: Range<Int>
        var end: Int { content.upperBound }
    }

    /// The record at `at` in `buf`, if it fits whole before `end`; nil when it is cut off.
    static func record(in buf: UnsafeRawBufferPointer, at: Int, end: Int) -> Record? {
        guard at >= 0, end <= buf.count, at <= end, end - at >= 9 else { return nil }
        let op = buf[at]
        let len = Cursor.le64(buf, at + 1)
        guard len <= UInt64(end - at - 9) else { return nil }
        return Record(op: op, offset: at, content: (at + 9)..<(at + 9 + Int(len)))
    }

    /// A bounds-checked little-endian reader over part of a buffer.
    struct Cursor {
        let buf: UnsafeRawBufferPointer
        var at: Int
        let end: Int
        let name: String
        let what: String

        init(_ buf: UnsafeRawBufferPointer, _ range: Range<Int>, name: String, what: String) {
            self.buf = buf
            at = range.lowerBound
            end = range.upperBound
            self.name = name
            self.what = what
        }

        var remaining: Int { end - at }

        static func le64(_ b: UnsafeRawBufferPointer, _ i: Int) -> UInt64 {
            UInt64(littleEndian: b.loadUnaligned(fromByteOffset: i, as: UInt64.self))
        }

        func short(_ n: Int) -> CaptureError {
            .file(path: name, problem: "\(what) is shorter than its fields say (needs \(n) bytes at offset \(at), \(remaining) left)")
        }

        mutating func need(_ n: Int) throws {
            guard n >= 0, n <= remaining else { throw short(n) }
        }

        mutating func u8() throws -> UInt8 {
            try need(1)
            defer { at += 1 }
            return buf[at]
        }

        mutating func u16() throws -> UInt16 {
            try need(2)
            defer { at += 2 }
            return UInt16(littleEndian: buf.loadUnaligned(fromByteOffset: at, as: UInt16.self))
        }

        mutating func u32() throws -> UInt32 {
            try need(4)
            defer { at += 4 }
            return UInt32(littleEndian: buf.loadUnaligned(fromByteOffset: at, as: UInt32.self))
        }

        mutating func u64() throws -> UInt64 {
            try need(8)
            defer { at += 8 }
            return Self.le64(buf, at)
        }

        /// `count` bytes from here, as a range of the buffer.
        mutating func range(_ count: UInt64) throws -> Range<Int> {
            guard count <= UInt64(remaining) else { throw short(count > UInt64(Int.max) ? Int.max : Int(count)) }
            defer { at += Int(count) }
            return at..<(at + Int(count))
        }

        /// A u32 length then that many bytes (strings, byte arrays, maps).
        mutating func prefixed32() throws -> Range<Int> { try range(UInt64(try u32())) }

        mutating func string() throws -> String {
            let r = try prefixed32()
            return String(decoding: UnsafeRawBufferPointer(rebasing: buf[r]), as: UTF8.self)
        }
    }

    // MARK: Record contents

    private func parseSchema(_ buf: UnsafeRawBufferPointer, _ rec: Record) throws -> Schema {
        var c = Cursor(buf, rec.content, name: name, what: "Schema record at offset \(rec.offset)")
        let id = try c.u16()
        let sname = try c.string()
        let encoding = try c.string()
        let data = try c.prefixed32()
        return Schema(id: id, name: sname, encoding: encoding, data: Array(UnsafeRawBufferPointer(rebasing: buf[data])))
    }

    private func parseChannel(_ buf: UnsafeRawBufferPointer, _ rec: Record) throws -> Channel {
        var c = Cursor(buf, rec.content, name: name, what: "Channel record at offset \(rec.offset)")
        let id = try c.u16()
        let schema = try c.u16()
        let topic = try c.string()
        let encoding = try c.string()
        _ = try c.prefixed32()  // metadata map (rosbag2: offered_qos_profiles)
        return Channel(id: id, schemaID: schema, topic: topic, messageEncoding: encoding)
    }

    /// A Message record's channel, log time and data range.
    private func parseMessage(_ buf: UnsafeRawBufferPointer, _ rec: Record, where place: String) throws
        -> (channel: UInt16, logTime: UInt64, data: Range<Int>) {
        var c = Cursor(buf, rec.content, name: name, what: "Message record at offset \(rec.offset) \(place)")
        let channel = try c.u16()
        _ = try c.u32()  // sequence
        let logTime = try c.u64()
        _ = try c.u64()  // publish_time
        return (channel, logTime, c.at..<c.end)
    }

    /// A Chunk record's header: everything but the records themselves (their range in the file).
    private func parseChunk(_ buf: UnsafeRawBufferPointer, _ rec: Record) throws -> Chunk {
        var c = Cursor(buf, rec.content, name: name, what: "Chunk record at offset \(rec.offset)")
        _ = try c.u64()  // message_start_time
        _ = try c.u64()  // message_end_time
        let usize = try c.u64()
        let crc = try c.u32()
        let compression = try c.string()
        let data = try c.range(try c.u64())
        guard ["", "zstd", "lz4"].contains(compression) else {
            throw fail("chunk at offset \(rec.offset) uses compression '\(compression.prefix(40))' (zstd, lz4 and none are supported)")
        }
        guard usize <= UInt64(Self.maxChunkSize) else {
            throw fail("chunk at offset \(rec.offset) claims \(usize) uncompressed bytes, more than \(Self.maxChunkSize)")
        }
        if compression.isEmpty, Int(usize) != data.count {
            throw fail("uncompressed chunk at offset \(rec.offset) says \(usize) bytes but holds \(data.count)")
        }
        return Chunk(recordOffset: rec.offset, compression: compression, data: data, uncompressedSize: Int(usize), uncompressedCRC: crc)
    }

    // MARK: Opening

    private func readIndex() throws {
        let buf = bytes.raw
        guard buf.count >= Self.magic.count, Array(buf.prefix(8)) == Self.magic else {
            if buf.count >= 6, Array(buf.prefix(5)) == Array(Self.magic.prefix(5)) {
                throw fail("MCAP major version '\(UnicodeScalar(buf[5]))' is not supported (only 0)")
            }
            throw fail(buf.isEmpty ? "empty file, not an MCAP file" : "not an MCAP file (no MCAP magic)")
        }
        guard let header = Self.record(in: buf, at: 8, end: buf.count) else {
            throw fail("file ends inside its Header record (\(buf.count) bytes): truncated")
        }
        guard header.op == 0x01 else { throw fail("the first record is not a Header (opcode \(header.op))") }
        do {
            if try readSummary(after: header.end) {
                usedSummary = true
                return
            }
        } catch let e as CaptureError {
            notices.append("\(e.description); scanned the file instead")
        }
        schemas = [:]
        channels = [:]
        chunks = []
        messages = []
        cachedChunk = nil
        damagedChunks = [:]
        checkedChunks = []
        unlistedChunks = [:]
        try scan(from: header.end)
    }

    /// Reads the summary section's indexes. False when the file has no usable summary (then it
    /// is scanned); throws on a summary that is present but inconsistent (also scanned, with a notice).
    private func readSummary(after dataStart: Int) throws -> Bool {
        let buf = bytes.raw
        let size = buf.count
        let footerAt = size - 8 - 29
        guard footerAt >= dataStart, Array(buf[(size - 8)...]) == Self.magic else {
            return false  // no footer: cut short, most likely (the scan says so when its data does not end)
        }
        guard let footer = Self.record(in: buf, at: footerAt, end: size - 8), footer.op == 0x02, footer.content.count == 20 else {
            throw fail("no Footer record before the closing magic")
        }
        var f = Cursor(buf, footer.content, name: name, what: "Footer record")
        let summaryStart = try f.u64()
        let summaryOffsetStart = try f.u64()
        let summaryCRC = try f.u32()
        guard summaryStart != 0 else { return false }  // a valid file without a summary: scan it
        guard summaryStart >= UInt64(dataStart), summaryStart <= UInt64(footerAt),
              summaryOffsetStart == 0 || (summaryOffsetStart >= summaryStart && summaryOffsetStart <= UInt64(footerAt)) else {
            throw fail("footer's summary offsets (\(summaryStart), \(summaryOffsetStart)) lie outside the file")
        }
        let start = Int(summaryStart)
        let end = summaryOffsetStart != 0 ? Int(summaryOffsetStart) : footerAt
        if summaryCRC != 0 {
            // From the summary's start through the footer's summary_offset_start field.
            let span = UnsafeRawBufferPointer(rebasing: buf[start..<(footerAt + 9 + 16)]).bindMemory(to: UInt8.self)
            let crc = dl_crc32(0, span.baseAddress, span.count)
            guard crc == summaryCRC else { throw fail("summary section fails its CRC check (corrupt)") }
        }
        var indexes: [(start: Int, length: UInt64, offsets: [(UInt16, Int)])] = []
        var statisticsCount: UInt64?
        var at = start
        while at < end {
            guard let rec = Self.record(in: buf, at: at, end: end) else {
                throw fail("summary record at offset \(at) runs past the summary section")
            }
            switch rec.op {
            case 0x03, 0x04:
                try keepDefinition(buf, rec)
            case 0x08:
                var c = Cursor(buf, rec.content, name: name, what: "ChunkIndex record at offset \(rec.offset)")
                _ = try c.u64()  // message_start_time
                _ = try c.u64()  // message_end_time
                let chunkStart = try c.u64()
                let chunkLength = try c.u64()
                let map = try c.prefixed32()
                guard map.count % 10 == 0 else { throw fail("ChunkIndex at offset \(rec.offset): message index offsets map of \(map.count) bytes") }
                var m = Cursor(buf, map, name: name, what: "ChunkIndex message index offsets")
                var offsets: [(UInt16, Int)] = []
                while m.remaining > 0 {
                    let ch = try m.u16()
                    let off = try m.u64()
                    guard off >= UInt64(dataStart), off < summaryStart else {
                        throw fail("ChunkIndex at offset \(rec.offset) points at a message index outside the data section")
                    }
                    offsets.append((ch, Int(off)))
                }
                guard chunkStart >= UInt64(dataStart), chunkStart < summaryStart, chunkLength <= summaryStart - chunkStart else {
                    throw fail("ChunkIndex at offset \(rec.offset) points at a chunk outside the data section")
                }
                indexes.append((Int(chunkStart), chunkLength, offsets))
            case 0x0B:
                var c = Cursor(buf, rec.content, name: name, what: "Statistics record")
                statisticsCount = try c.u64()
            default:
                break  // AttachmentIndex, MetadataIndex, unknown records
            }
            at = rec.end
        }
        if indexes.isEmpty, statisticsCount.map({ $0 > 0 }) ?? true {
            // No chunk indexes: messages outside chunks (or an index-less writer). Scan.
            return false
        }
        indexes.sort { $0.start < $1.start }
        let indexLimit = Self.indexLimit
        var list: [(Message, Int)] = []
        for (i, idx) in indexes.enumerated() {
            guard let rec = Self.record(in: buf, at: idx.start, end: Int(summaryStart)), rec.op == 0x06,
                  UInt64(rec.end - rec.offset) == idx.length else {
                throw fail("ChunkIndex points at offset \(idx.start), which holds no chunk of the length it says")
            }
            let chunk = try parseChunk(buf, rec)
            chunks.append(chunk)
            for (channel, off) in idx.offsets {
                guard let mi = Self.record(in: buf, at: off, end: Int(summaryStart)), mi.op == 0x07 else {
                    throw fail("ChunkIndex points at offset \(off), which holds no MessageIndex record")
                }
                var c = Cursor(buf, mi.content, name: name, what: "MessageIndex record at offset \(off)")
                guard try c.u16() == channel else { throw fail("MessageIndex at offset \(off) is for another channel than its ChunkIndex says") }
                guard channels[channel] != nil else { throw fail("MessageIndex at offset \(off) names channel \(channel), which the summary does not define") }
                let entries = try c.prefixed32()
                guard entries.count % 16 == 0 else { throw fail("MessageIndex at offset \(off) has \(entries.count) bytes of entries, not a multiple of 16") }
                guard entries.count / 16 <= max(1, chunk.uncompressedSize / Self.smallestMessageRecord) else {
                    throw fail("MessageIndex at offset \(off) lists \(entries.count / 16) messages, more than its chunk's "
                               + "\(chunk.uncompressedSize) bytes can hold")
                }
                guard list.count + entries.count / 16 <= indexLimit else {
                    throw fail("the summary indexes more than \(indexLimit) messages, more than the memory available allows")
                }
                var e = Cursor(buf, entries, name: name, what: "MessageIndex entries at offset \(off)")
                while e.remaining > 0 {
                    let t = try e.u64()
                    let o = try e.u64()
                    guard o < UInt64(chunk.uncompressedSize) else {
                        throw fail("MessageIndex at offset \(off) points at offset \(o), past its chunk's \(chunk.uncompressedSize) bytes")
                    }
                    list.append((Message(channel: channel, logTime: t, chunk: Int32(i), offset: Int64(o)), list.count))
                }
            }
        }
        if let n = statisticsCount, n != UInt64(list.count) {
            throw fail("summary indexes \(list.count) messages, its Statistics record counts \(n)")
        }
        messages = list.map(\.0)
        return true
    }

    /// Reads the data section record by record from `start` (chunks decompressed), stopping at
    /// DataEnd, the Footer, or the first record cut off by the end of the file (said in `cutShort`,
    /// as a data section that just stops is). A chunk that cannot be read is left out and said in
    /// `damagedChunks`; the scan goes on with the next record.
    private func scan(from start: Int) throws {
        let buf = bytes.raw
        let indexLimit = Self.indexLimit
        var at = start
        var ended = false
        scanning: while at < buf.count {
            guard let rec = Self.record(in: buf, at: at, end: buf.count) else {
                // How long the record says it is (its length field, when the file still holds it).
                var claimed = ""
                if buf.count - at >= 9 {
                    let len = Cursor.le64(buf, at + 1)
                    if len <= UInt64(Int.max - at - 9) { claimed = " of ≥ \(at + 9 + Int(len))" }
                }
                cutShort = "recording cut short at byte \(buf.count)\(claimed) (the record at offset \(at) does not end "
                    + "in the file): read up to the last whole record"
                ended = true
                break
            }
            switch rec.op {
            case 0x02, 0x0F:
                ended = true
                break scanning  // Footer, DataEnd: the data section ends
            case 0x03, 0x04, 0x05:
                try index(buf, rec, chunk: -1, offset: rec.offset, message: "message at offset \(rec.offset)", place: "in the file",
                          indexLimit: indexLimit)
            case 0x06:
                let chunk: Chunk
                do { chunk = try parseChunk(buf, rec) } catch let e as CaptureError {
                    unlistedChunks[rec.offset] = Self.problem(of: e)
                    at = rec.end
                    continue scanning
                }
                let index = chunks.count
                chunks.append(chunk)
                let kept = messages.count
                do {
                    try scanChunk(index, indexLimit: indexLimit)
                } catch let e as CaptureError {
                    // What the chunk held is left out; the line says why (the file's name is said once, by the caller).
                    messages.removeSubrange(kept...)
                    if damagedChunks[index] == nil { damagedChunks[index] = Self.problem(of: e) }
                    cachedChunk = nil
                }
            default:
                break  // MessageIndex, Attachment, Metadata, unknown records
            }
            at = rec.end
        }
        if !ended {
            cutShort = "recording cut short at byte \(buf.count) (its data section does not end: no DataEnd or Footer record): "
                + "read up to the last whole record"
        }
    }

    /// The records of chunk `index` (decompressed): its schemas, channels and messages indexed.
    private func scanChunk(_ index: Int, indexLimit: Int) throws {
        let chunk = chunks[index]
        let data = try chunkData(index)
        try data.withUnsafeBytes { inner in
            var p = 0
            while p < inner.count {
                guard let r = Self.record(in: inner, at: p, end: inner.count) else {
                    throw fail("chunk at offset \(chunk.recordOffset): record at offset \(p) runs past the chunk's end")
                }
                try self.index(inner, r, chunk: Int32(index), offset: p, message: "message in the chunk at offset \(chunk.recordOffset)",
                               place: "of the chunk at offset \(chunk.recordOffset)", indexLimit: indexLimit)
                p = r.end
            }
        }
    }

    /// Keeps a Schema (op 0x03) or Channel (op 0x04) record, wherever it stands (summary, data
    /// section, chunk).
    private func keepDefinition(_ buf: UnsafeRawBufferPointer, _ r: Record) throws {
        if r.op == 0x03 {
            let s = try parseSchema(buf, r)
            schemas[s.id] = s
        } else {
            let c = try parseChannel(buf, r)
            channels[c.id] = c
        }
    }

    /// Indexes one record of the data section or of a chunk (`chunk` -1: the file itself; `offset`
    /// where the record starts in `buf`): a Schema or Channel is kept, a Message listed — its
    /// channel defined before it and the index within `indexLimit`; other records are left.
    private func index(_ buf: UnsafeRawBufferPointer, _ r: Record, chunk: Int32, offset: Int, message: String, place: String,
                       indexLimit: Int) throws {
        switch r.op {
        case 0x03, 0x04:
            try keepDefinition(buf, r)
        case 0x05:
            let m = try parseMessage(buf, r, where: place)
            guard channels[m.channel] != nil else {
                throw fail("\(message) names channel \(m.channel), which no earlier Channel record defines")
            }
            guard messages.count < indexLimit else {
                throw fail("holds more than \(indexLimit) messages, more than the memory available allows indexing")
            }
            messages.append(Message(channel: m.channel, logTime: m.logTime, chunk: chunk, offset: Int64(offset)))
        default:
            break
        }
    }

    /// A reader error's problem, without the file's name in front (`damage` lines are said with the file named once).
    static func problem(of error: CaptureError) -> String {
        if case let .file(_, problem) = error { return problem }
        return error.description
    }

    private func buildTopics() {
        var byTopic: [String: [(Message, Int)]] = [:]
        var firstChannel: [String: Channel] = [:]
        for c in channels.values.sorted(by: { $0.id < $1.id }) where firstChannel[c.topic] == nil {
            firstChannel[c.topic] = c
            byTopic[c.topic] = []
        }
        for (i, m) in messages.enumerated() {
            guard let c = channels[m.channel] else { continue }
            byTopic[c.topic, default: []].append((m, i))
        }
        for (topic, list) in byTopic {
            let sorted = list.sorted { a, b in a.0.logTime != b.0.logTime ? a.0.logTime < b.0.logTime : a.1 < b.1 }
            refs[topic] = sorted.map {
                ROS2MessageRef(logTime: Int64(truncatingIfNeeded: $0.0.logTime), file: fileIndex, chunk: $0.0.chunk, position: $0.0.offset)
            }
        }
        topics = firstChannel.values.map { c in
            let schema = schemas[c.schemaID]
            let definition = schema.flatMap { $0.encoding == "ros2msg" ? String(decoding: $0.data, as: UTF8.self) : nil }
            return ROS2Topic(name: c.topic, type: schema?.name ?? "", serializationFormat: c.messageEncoding,
                             messageCount: byTopic[c.topic]?.count ?? 0, messageDefinition: definition)
        }.sorted { $0.name < $1.name }
    }

    // MARK: Messages

    /// Chunk `index`'s records, decompressed (the last one cached). A chunk that cannot be read is
    /// marked damaged (its line in `damage`, with the messages the summary indexed in it) and throws.
    private func chunkData(_ index: Int) throws -> [UInt8] {
        if let c = cachedChunk, c.index == index { return c.data }
        guard index >= 0, index < chunks.count else { throw fail("chunk \(index) does not exist") }
        let chunk = chunks[index]
        let kind = chunk.compression.isEmpty ? "uncompressed" : chunk.compression
        func damaged(_ problem: String) -> CaptureError {
            if damagedChunks[index] == nil {
                let n = usedSummary ? messageCount(inChunk: index) : 0
                damagedChunks[index] = "chunk at offset \(chunk.recordOffset) (\(kind)): \(problem)"
                    + (n > 0 ? "; its \(n) message\(n == 1 ? "" : "s") left out" : "")
            }
            return fail("chunk at offset \(chunk.recordOffset) (\(kind)): \(problem)")
        }
        if let problem = damagedChunks[index] { throw fail(problem) }
        // The declared size is what the decoder fills, no more; above 64 MiB it must also fit in
        // the memory available (the pages are committed as the data is decoded, but a chunk
        // decoded whole must fit).
        if chunk.uncompressedSize > 64 << 20, let available = MemoryBudget.available(), chunk.uncompressedSize > available {
            throw damaged("declares \(chunk.uncompressedSize) uncompressed bytes, more than the memory available "
                          + "(\(MemoryBudget.describe(available)))")
        }
        // Nor, above 64 MiB, over `undeclaredRatio` (1024) times its compressed bytes: recorded data
        // does not compress so far; a decompression bomb does.
        if chunk.uncompressedSize > 64 << 20, !chunk.compression.isEmpty,
           chunk.uncompressedSize / ROS2Compression.undeclaredRatio > chunk.data.count {
            throw damaged("declares \(chunk.uncompressedSize) uncompressed bytes from \(chunk.data.count), more than "
                          + "\(ROS2Compression.undeclaredRatio) times: refused as a decompression bomb")
        }
        let (out, code) = ROS2Compression.chunk(UnsafeRawBufferPointer(rebasing: bytes.raw[chunk.data]), compression: chunk.compression,
                                                size: chunk.uncompressedSize)
        guard code == 0 else { throw damaged(String(cString: dl_decompress_error(code))) }
        if chunk.uncompressedCRC != 0 {
            let crc = out.withUnsafeBufferPointer { dl_crc32(0, $0.baseAddress, $0.count) }
            guard crc == chunk.uncompressedCRC else { throw damaged("fails its CRC check (corrupt)") }
        }
        checkedChunks.insert(index)
        cachedChunk = (index, out)
        return out
    }

    /// A message's first bytes; in an uncompressed chunk read where the file holds them (no copy of
    /// the chunk, no CRC: `storedData` checks the chunk when the message itself is read).
    func storedPrefix(of ref: ROS2MessageRef, count: Int) throws -> [UInt8] {
        guard ref.chunk >= 0, Int(ref.chunk) < chunks.count, chunks[Int(ref.chunk)].compression.isEmpty else {
            return Array(try storedData(of: ref).prefix(count))
        }
        let chunk = chunks[Int(ref.chunk)]
        let inner = UnsafeRawBufferPointer(rebasing: bytes.raw[chunk.data])
        guard ref.position >= 0, ref.position < Int64(inner.count),
              let rec = Self.record(in: inner, at: Int(ref.position), end: inner.count), rec.op == 0x05 else {
            throw fail("no Message record at offset \(ref.position) of the chunk at offset \(chunk.recordOffset)")
        }
        let m = try parseMessage(inner, rec, where: "of the chunk at offset \(chunk.recordOffset)")
        return Array(UnsafeRawBufferPointer(rebasing: inner[m.data]).prefix(count))
    }

    func storedData(of ref: ROS2MessageRef) throws -> [UInt8] {
        if ref.chunk < 0 {
            let buf = bytes.raw
            guard ref.position >= 0, ref.position < Int64(buf.count),
                  let rec = Self.record(in: buf, at: Int(ref.position), end: buf.count), rec.op == 0x05 else {
                throw fail("no Message record at offset \(ref.position)")
            }
            let m = try parseMessage(buf, rec, where: "in the file")
            return Array(UnsafeRawBufferPointer(rebasing: buf[m.data]))
        }
        let data = try chunkData(Int(ref.chunk))
        let chunk = chunks[Int(ref.chunk)]
        return try data.withUnsafeBytes { inner in
            guard ref.position >= 0, ref.position < Int64(inner.count),
                  let rec = Self.record(in: inner, at: Int(ref.position), end: inner.count), rec.op == 0x05 else {
                throw fail("no Message record at offset \(ref.position) of the chunk at offset \(chunk.recordOffset)")
            }
            let m = try parseMessage(inner, rec, where: "of the chunk at offset \(chunk.recordOffset)")
            return Array(UnsafeRawBufferPointer(rebasing: inner[m.data]))
        }
    }
}
