import CSQLite
import Foundation

/// One rosbag2 SQLite storage file (`.db3`), through Debian's libsqlite3, opened read-only.
///
/// rosbag2's tables: `topics` (id, name, type, serialization_format, offered_qos_profiles
/// [, type_description_hash]), `messages` (id, topic_id, timestamp, data) with the `timestamp`
/// index, and — from schema version 4 (Iron) on — `schema` and `message_definitions`
/// (topic_type, encoding, encoded_message_definition). Opening lists the messages with one
/// `SELECT id, topic_id, timestamp FROM messages ORDER BY timestamp, id` (a walk of the timestamp
/// index; no blob is read); `storedData(of:)` reads one blob by row id.
final class Rosbag2SQLite: ROS2Storage {
    let path: String
    let identifier = "sqlite3"
    private(set) var topics: [ROS2Topic] = []
    private(set) var refs: [String: [ROS2MessageRef]] = [:]
    private(set) var notices: [String] = []

    private var db: OpaquePointer?
    private var blobStatement: OpaquePointer?
    /// The decompressed image of a per-file-compressed database (`sqlite3_deserialize` reads it in place).
    private let image: ROS2Bytes?

    /// Opens `path` (or, with `image`, the database image decompressed from it). `fileIndex` goes
    /// into every ref.
    init(path: String, fileIndex: Int32, image: ROS2Bytes?) throws {
        self.path = path
        self.image = image
        do {
            try open()
            try readIndex(fileIndex: fileIndex)
        } catch {
            closeDatabase()
            throw error
        }
    }

    deinit { closeDatabase() }

    private func closeDatabase() {
        sqlite3_finalize(blobStatement)
        blobStatement = nil
        sqlite3_close_v2(db)
        db = nil
    }

    private func fail(_ problem: String) -> CaptureError { .file(path: path, problem: problem) }

    private var lastError: String {
        db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
    }

    private func open() throws {
        if let image {
            guard sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil) == SQLITE_OK else {
                throw fail("cannot open an in-memory SQLite database: \(lastError)")
            }
            let bytes = UnsafeMutablePointer(mutating: image.raw.bindMemory(to: UInt8.self).baseAddress)
            let n = Int64(image.raw.count)
            guard sqlite3_deserialize(db, "main", bytes, n, n, UInt32(SQLITE_DESERIALIZE_READONLY)) == SQLITE_OK else {
                throw fail("decompressed database image is not a SQLite database: \(lastError)")
            }
        } else {
            guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, nil) == SQLITE_OK else {
                throw fail("cannot open as SQLite: \(lastError)")
            }
        }
    }

    /// Runs `sql` with `bind` applied and calls `row` for each result row.
    private func query(_ sql: String, what: String, bind: (OpaquePointer) -> Void = { _ in },
                       row: (OpaquePointer) throws -> Void) throws {
        var st: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &st, nil) == SQLITE_OK, let st else {
            throw fail(problem(what))
        }
        defer { sqlite3_finalize(st) }
        bind(st)
        while true {
            let rc = sqlite3_step(st)
            if rc == SQLITE_ROW { try row(st); continue }
            if rc == SQLITE_DONE { return }
            throw fail(problem(what))
        }
    }

    /// SQLite's complaint, worded for a user ("file is not a database" → not a SQLite database).
    private func problem(_ what: String) -> String {
        let code = db.map { sqlite3_errcode($0) } ?? SQLITE_NOMEM
        if code == SQLITE_NOTADB { return "not a SQLite database (\(lastError)): not a rosbag2 .db3" }
        if code == SQLITE_CORRUPT { return "SQLite database is corrupt (\(lastError)) while \(what)" }
        return "\(what): \(lastError)"
    }

    private static func text(_ st: OpaquePointer, _ col: Int32) -> String {
        guard let p = sqlite3_column_text(st, col) else { return "" }
        return String(cString: p)
    }

    private func readIndex(fileIndex: Int32) throws {
        var tables = Set<String>()
        try query("SELECT name FROM sqlite_master WHERE type='table'", what: "listing its tables") { st in
            tables.insert(Self.text(st, 0))
        }
        guard tables.contains("topics"), tables.contains("messages") else {
            let missing = ["topics", "messages"].filter { !tables.contains($0) }.joined(separator: " and ")
            throw fail("SQLite database without rosbag2's \(missing) table\(missing.contains(" and ") ? "s" : ""): not a rosbag2 recording")
        }
        // ros2msg definitions by type (schema version 4 on).
        var definitions: [String: String] = [:]
        if tables.contains("message_definitions") {
            try query("SELECT topic_type, encoding, encoded_message_definition FROM message_definitions ORDER BY id",
                      what: "reading the message_definitions table") { st in
                let type = Self.text(st, 0)
                if Self.text(st, 1) == "ros2msg", definitions[type] == nil { definitions[type] = Self.text(st, 2) }
            }
        }
        var rows: [(id: Int64, name: String, type: String, format: String)] = []
        try query("SELECT id, name, type, serialization_format FROM topics ORDER BY id", what: "reading the topics table") { st in
            rows.append((sqlite3_column_int64(st, 0), Self.text(st, 1), Self.text(st, 2), Self.text(st, 3)))
        }
        // One pass over the timestamp index for every topic (a `WHERE topic_id=?` query per topic
        // would walk the whole index once per topic); rows are read without their blobs.
        var nameOf: [Int64: String] = [:]
        var byName: [String: ROS2Topic] = [:]
        for r in rows {
            nameOf[r.id] = r.name
            if byName[r.name] == nil {
                // The same name under two ids (a type change) is one topic, its messages merged.
                byName[r.name] = ROS2Topic(name: r.name, type: r.type, serializationFormat: r.format,
                                           messageCount: 0, messageDefinition: definitions[r.type])
                refs[r.name] = []
            }
        }
        var orphans = 0
        try query("SELECT id, topic_id, timestamp FROM messages ORDER BY timestamp, id", what: "listing the messages") { st in
            guard let name = nameOf[sqlite3_column_int64(st, 1)] else { orphans += 1; return }
            refs[name, default: []].append(ROS2MessageRef(logTime: sqlite3_column_int64(st, 2), file: fileIndex, chunk: -1,
                                                          position: sqlite3_column_int64(st, 0)))
        }
        if orphans > 0 { notices.append("\(path): \(orphans) messages name a topic id the topics table lacks (skipped)") }
        for (name, list) in refs { byName[name]?.messageCount = list.count }
        topics = byName.values.sorted { $0.name < $1.name }
        guard sqlite3_prepare_v2(db, "SELECT data FROM messages WHERE id=?", -1, &blobStatement, nil) == SQLITE_OK else {
            throw fail(problem("preparing to read messages"))
        }
    }

    func storedData(of ref: ROS2MessageRef) throws -> [UInt8] {
        guard let st = blobStatement else { throw fail("database is closed") }
        defer {
            sqlite3_reset(st)
            sqlite3_clear_bindings(st)
        }
        sqlite3_bind_int64(st, 1, ref.position)
        let rc = sqlite3_step(st)
        guard rc == SQLITE_ROW else {
            if rc == SQLITE_DONE { throw fail("message row \(ref.position) does not exist") }
            throw fail(problem("reading message row \(ref.position)"))
        }
        let n = Int(sqlite3_column_bytes(st, 0))
        guard n > 0, let p = sqlite3_column_blob(st, 0) else { return [] }
        return Array(UnsafeRawBufferPointer(start: p, count: n))
    }
}
