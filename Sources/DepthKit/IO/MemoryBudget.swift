#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How much memory a large load may still take, asked before allocating so that a load which
/// cannot fit says so instead of being killed half-way (or driving the machine into swap).
public enum MemoryBudget {
    /// Bytes available: the kernel's `MemAvailable` (/proc/meminfo), lowered to what the process's
    /// cgroup still allows (`memory.max − memory.current`, cgroup v2) where it has a limit; nil
    /// when neither can be read. `DEPTHLENS_MEMORY_AVAILABLE` (bytes) overrides both — for users
    /// who want a lower cap, and for tests.
    public static func available() -> Int? {
        if let text = getenv("DEPTHLENS_MEMORY_AVAILABLE").map({ String(cString: $0) }), let n = Int(text), n >= 0 {
            return n
        }
        var best: Int?
        if let info = kernelFile("/proc/meminfo"), let kb = field("MemAvailable:", in: info) {
            best = kb * 1024
        }
        if let max = number(in: "/sys/fs/cgroup/memory.max"), let used = number(in: "/sys/fs/cgroup/memory.current") {
            let left = Swift.max(0, max - used)
            best = best.map { Swift.min($0, left) } ?? left
        }
        return best
    }

    /// "1.23 GiB" / "456 MiB", for messages.
    public static func describe(_ bytes: Int) -> String {
        let mib = (bytes + 524_288) / 1_048_576
        guard mib >= 1024 else { return "\(mib) MiB" }
        let centi = (bytes / 1024 * 100 + 524_288) / 1_048_576   // GiB × 100, rounded
        return "\(centi / 100).\(centi % 100 < 10 ? "0" : "")\(centi % 100) GiB"
    }

    /// The number after `key` on its line of /proc/meminfo.
    static func field(_ key: String, in bytes: [UInt8]) -> Int? {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix(key) }) else { return nil }
        return line.dropFirst(key.count).split(separator: " ").first.flatMap { Int($0) }
    }

    /// A kernel text file (procfs and sysfs report a size of 0, so `FileSupport.readAll`, which
    /// reads as many bytes as the size says, reads nothing of them): read to its end, 64 KiB at most.
    static func kernelFile(_ path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 65_536)
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + done, $0.count - done) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            done += n
        }
        return done > 0 ? Array(bytes[..<done]) : nil
    }

    /// A file holding one integer ("max" — no limit — gives nil).
    private static func number(in path: String) -> Int? {
        guard let bytes = kernelFile(path) else { return nil }
        return Int(String(decoding: bytes, as: UTF8.self).filter { $0 != " " && $0 != "\n" })
    }
}
