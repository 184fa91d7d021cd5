import CSQLite
import Foundation

/// One rosbag2 SQLite storage file (`.db3`), through Debian's libsqlite3, opened read-only and
/// immutable (nothing written beside it: `uri(_:)`), with the schema untrusted and values bounded
/// (`harden()`).
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
    /// A `NAME.db3-wal` beside the file holding changes (a recorder killed, or still writing):
    /// `immutable=1` reads the database file as it is, without them — said, not hidden.
    private(set) var damage: [String] = []

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

    /// The most bytes one value (a message's `data`, a topic's name) may have: SQLite's
    /// `SQLITE_LIMIT_LENGTH` on this connection, so that a value the database computes (a generated
    /// column `zeroblob(1e9)`) is an error, not a gigabyte row. 256 MiB is 8 times a 4K RGBA image
    /// (33 MB) and 4 times a 2-million-point cloud of 32-byte points: no real message comes near it.
    static let maxValueLength: Int32 = 256 << 20

    /// The `file:` URI of `path` (made absolute) for `sqlite3_open_v2`: every byte but unreserved
    /// characters and `/` percent-encoded (a `?`, `#` or `%` in a name stays part of the name), and
    /// `immutable=1`: SQLite takes the file as it is, with no lock, no `-shm` and no `-wal` — nothing
    /// is written beside the recording, and a recording on read-only media opens.
    static func uri(_ path: String) -> String {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        var out = "file://"
        for b in absolute.utf8 {
            switch b {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "/"):
                out.unicodeScalars.append(Unicode.Scalar(b))
            default:
                out += "%" + String(b >> 4, radix: 16, uppercase: true) + String(b & 15, radix: 16, uppercase: true)
            }
        }
        return out + "?immutable=1"
    }

    private func open() throws {
        if let image {
            guard sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil) == SQLITE_OK else {
                throw fail("cannot open an in-memory SQLite database: \(lastError)")
            }
            try harden()
            let bytes = UnsafeMutablePointer(mutating: image.raw.bindMemory(to: UInt8.self).baseAddress)
            let n = Int64(image.raw.count)
            guard sqlite3_deserialize(db, "main", bytes, n, n, UInt32(SQLITE_DESERIALIZE_READONLY)) == SQLITE_OK else {
                throw fail("decompressed database image is not a SQLite database: \(lastError)")
            }
        } else {
            guard sqlite3_open_v2(Self.uri(path), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nil) == SQLITE_OK else {
                throw fail("cannot open as SQLite: \(lastError)")
            }
            try harden()
            var st = stat()
            // A WAL header is 32 bytes; anything past it is frames that may not be in the file yet.
            if stat(path + "-wal", &st) == 0, st.st_size > 32 {
                damage.append("\((path as NSString).lastPathComponent)-wal beside it holds \(st.st_size) bytes of changes that may not be "
                              + "in the database yet (a recording cut short or still being written): they are not read")
            }
        }
    }

    /// A recording is data, not code: the schema may not call functions with side effects
    /// (`trusted_schema=OFF`), the connection cannot be used to corrupt the file
    /// (`SQLITE_DBCONFIG_DEFENSIVE`), and no value is longer than `maxValueLength`.
    private func harden() throws {
        guard dl_sqlite3_db_config_int(db, SQLITE_DBCONFIG_DEFENSIVE, 1, nil) == SQLITE_OK else {
            throw fail("cannot turn on SQLite's defensive mode: \(lastError)")
        }
        sqlite3_limit(db, SQLITE_LIMIT_LENGTH, Self.maxValueLength)
        guard sqlite3_exec(db, "PRAGMA trusted_schema=OFF", nil, nil, nil) == SQLITE_OK else {
            throw fail("cannot set PRAGMA trusted_schema=OFF: \(lastError)")
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
        var virtual = Set<String>()
        try query("SELECT name, sql FROM sqlite_master WHERE type='table'", what: "listing its tables") { st in
            let name = Self.text(st, 0)
            tables.insert(name)
            if Self.text(st, 1).uppercased().hasPrefix("CREATE VIRTUAL") { virtual.insert(name) }
        }
        guard tables.contains("topics"), tables.contains("messages") else {
            let missing = ["topics", "messages"].filter { !tables.contains($0) }.joined(separator: " and ")
            throw fail("SQLite database without rosbag2's \(missing) table\(missing.contains(" and ") ? "s" : ""): not a rosbag2 recording")
        }
        // The tables read hold stored rows: a virtual table or a generated column computes its
        // values (as large as the schema says) instead of reading them from the file.
        for table in ["topics", "messages", "message_definitions"] where tables.contains(table) {
            if virtual.contains(table) { throw fail("rosbag2's \(table) table is a virtual table: not a rosbag2 recording") }
            var generated: [String] = []
            // `table` is one of the three names above, never text from the file.
            try query("SELECT name, hidden FROM pragma_table_xinfo('\(table)')", what: "reading the \(table) table's columns") { st in
                // hidden: 0 a plain column, 1 a virtual table's hidden one, 2 and 3 generated.
                if sqlite3_column_int(st, 1) >= 2 { generated.append(Self.text(st, 0)) }
            }
            if let c = generated.first {
                throw fail("rosbag2's \(table).\(c) is a generated column, not stored data: not a rosbag2 recording")
            }
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
