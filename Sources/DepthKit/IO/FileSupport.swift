#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reading whole files with errors a user can act on, and writing files atomically.
///
/// Every writer in depthlens goes through `atomicWrite`: the bytes land in a temporary file in
/// the destination's directory and are renamed into place, so a failed write leaves neither a
/// partial file nor the temporary behind (and an existing file stays as it was).
public enum FileSupport {
    /// The whole file. Missing, unreadable, directory and empty files throw `.file`.
    public static func readAll(_ path: String) throws -> [UInt8] {
        try read(path, limit: nil)
    }

    /// The first `count` bytes (fewer if the file is shorter, never zero: empty files throw).
    public static func readPrefix(_ path: String, count: Int) throws -> [UInt8] {
        try read(path, limit: count)
    }

    private static func read(_ path: String, limit: Int?) throws -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw openError(path, errno) }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw DepthKitError.file(path: path, problem: describe(errno)) }
        if (st.st_mode & S_IFMT) == S_IFDIR {
            throw DepthKitError.file(path: path, problem: "is a directory, not a file")
        }
        let size = Int(st.st_size)
        let wanted = limit.map { min($0, size) } ?? size
        if size == 0 { throw DepthKitError.file(path: path, problem: "file is empty") }
        var bytes = [UInt8](repeating: 0, count: wanted)
        var done = 0
        while done < wanted {
            let n = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + done, wanted - done) }
            if n < 0 {
                if errno == EINTR { continue }
                throw DepthKitError.file(path: path, problem: "read failed: \(describe(errno))")
            }
            if n == 0 { break }
            done += n
        }
        if done < wanted { bytes.removeLast(wanted - done) }
        return bytes
    }

    static func openError(_ path: String, _ code: Int32) -> DepthKitError {
        switch code {
        case ENOENT: return .file(path: path, problem: "no such file")
        case EACCES: return .file(path: path, problem: "permission denied")
        case EISDIR: return .file(path: path, problem: "is a directory, not a file")
        default: return .file(path: path, problem: describe(code))
        }
    }

    static func describe(_ code: Int32) -> String { String(cString: strerror(code)) }

    /// The directory part of `path` ("." when it has none).
    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let dir = String(path[..<slash])
        return dir.isEmpty ? "/" : dir
    }

    static func fileName(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return path }
        return String(path[path.index(after: slash)...])
    }

    /// True when `path` names an existing directory.
    public static func isDirectory(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR
    }

    /// Runs `body` with a temporary path next to `path`, then renames the temporary onto `path`.
    /// If `body` throws (or the rename fails) the temporary is removed and `path` is untouched.
    /// Errors thrown by `body` should name `path`, not the temporary.
    public static func atomicWrite(to path: String, _ body: (_ temporaryPath: String) throws -> Void) throws {
        let dir = directory(of: path)
        guard isDirectory(dir) else {
            throw DepthKitError.file(path: path, problem: "no such directory \(dir)")
        }
        let name = fileName(of: path)
        guard !name.isEmpty else { throw DepthKitError.file(path: path, problem: "is a directory, not a file") }
        let temp = (dir == "/" ? "" : dir) + "/.\(name).tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        do {
            try body(temp)
        } catch {
            unlink(temp)
            throw error
        }
        if rename(temp, path) != 0 {
            let code = errno
            unlink(temp)
            throw DepthKitError.file(path: path, problem: code == EISDIR ? "is a directory, not a file"
                                     : "cannot write: \(describe(code))")
        }
    }

    /// Writes `bytes` to `path` atomically (see `atomicWrite(to:_:)`).
    public static func atomicWrite(_ bytes: [UInt8], to path: String) throws {
        try atomicWrite(to: path) { temp in
            try writeAll(bytes, toTemporary: temp, reportingAs: path)
        }
    }

    static func writeAll(_ bytes: [UInt8], toTemporary temp: String, reportingAs path: String) throws {
        let fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o666)
        guard fd >= 0 else { throw DepthKitError.file(path: path, problem: "cannot write: \(describe(errno))") }
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + done, bytes.count - done) }
            if n < 0 {
                if errno == EINTR { continue }
                let code = errno
                close(fd)
                throw DepthKitError.file(path: path, problem: "write failed: \(describe(code))")
            }
            done += n
        }
        if close(fd) != 0 {
            throw DepthKitError.file(path: path, problem: "write failed: \(describe(errno))")
        }
    }
}

/// A folder whose own files an input may name — a TUM list's images, a scan's frames, a
/// snapshot's PNGs — and nothing else: a name that is absolute or has a `..` component is refused
/// as it is read, and so is a file inside the folder that is a link leading out of it (its real
/// path, links resolved, must lie under the folder's real path). A data set cannot make depthlens
/// read any other file on the host.
public struct ConfinedFolder: Sendable {
    /// The folder as given (made absolute): paths handed out are under it, as the user named it.
    public let path: String
    /// Its real path (links resolved), which every file's real path must start with.
    public let realPath: String

    /// `path` must name an existing folder (`.file(path:)` "no such folder" otherwise).
    public init(_ path: String) throws {
        var p = path.hasPrefix("/") ? path : FileSupport.currentDirectory + "/" + path
        while p.count > 1 && p.hasSuffix("/") { p.removeLast() }
        guard let real = FileSupport.realPath(p) else { throw DepthKitError.file(path: path, problem: "no such folder") }
        self.path = p
        realPath = real
    }

    /// The path of `name`, a path relative to the folder as `listedIn` (the list file, or the file
    /// naming it) gives it at `entry` ("line 3"), after `check(_:namedIn:entry:)`. Throws one line
    /// naming `listedIn`, the entry and the name when `name` is empty, absolute or has a `..`.
    public func resolve(_ name: String, namedIn listedIn: String, entry: String) throws -> String {
        let parts = name.split(separator: "/", omittingEmptySubsequences: false)
        if name.isEmpty || name.hasPrefix("/") || parts.contains("..") || name.contains("\0") {
            throw DepthKitError.file(path: listedIn, problem:
                "\(entry): '\(Self.shown(name))' is not a path inside \(path) (absolute paths and '..' are refused)")
        }
        let full = path == "/" ? "/" + name : path + "/" + name
        try check(full, namedIn: listedIn, entry: entry)
        return full
    }

    /// Throws when `file` (a path under the folder) exists and its real path lies outside the
    /// folder: a link leading out. A file that does not exist passes (reading it says so).
    public func check(_ file: String, namedIn listedIn: String? = nil, entry: String? = nil) throws {
        guard let real = FileSupport.realPath(file) else { return }
        if realPath == "/" || real == realPath || real.hasPrefix(realPath + "/") { return }
        let problem = "is a link to \(Self.shown(real)), outside the folder \(path): not read"
        if let listedIn {
            throw DepthKitError.file(path: listedIn, problem: "\(entry.map { $0 + ": " } ?? "")\(Self.shown(file)) \(problem)")
        }
        throw DepthKitError.file(path: file, problem: problem)
    }

    /// A name as it goes into a one-line message: control characters escaped, at most 200 characters.
    static func shown(_ s: String) -> String {
        var out = ""
        for c in s.unicodeScalars.prefix(200) {
            if c.value < 0x20 || c.value == 0x7F { out += "\\u{\(String(c.value, radix: 16))}" } else { out.unicodeScalars.append(c) }
        }
        return s.unicodeScalars.count > 200 ? out + "…" : out
    }
}

extension FileSupport {
    /// `path` with every link resolved (realpath(3)); nil when it does not exist.
    public static func realPath(_ path: String) -> String? {
        guard let p = realpath(path, nil) else { return nil }
        defer { free(p) }
        return String(cString: p)
    }

    /// The process's working directory ("/" when it cannot be read).
    static var currentDirectory: String {
        guard let p = getcwd(nil, 0) else { return "/" }
        defer { free(p) }
        return String(cString: p)
    }
}
