import CPlatform
import Foundation

/// Heap allocations of the calling thread (CPlatform's malloc interposer, `alloc_count.c`) and the
/// process's resident set size: the viewer's steady-state figures (`--stats`, ViewerTests).
enum AllocationCounter {
    /// Starts or stops counting on the calling thread.
    static func counting(_ on: Bool) { dl_alloc_counting(on ? 1 : 0) }
    /// The calling thread's allocations so far (while counting was on), own and driver.
    static var count: UInt64 { dl_alloc_count() }
    /// Of `count`, those the Vulkan driver and loader, GLFW and X11 made (see `alloc_count.c`).
    static var driverCount: UInt64 { dl_alloc_count_driver() }
    /// Both counts at once: (own, driver).
    static var counts: (own: UInt64, driver: UInt64) {
        let d = dl_alloc_count_driver()
        return (dl_alloc_count() &- d, d)
    }

    /// `DEPTHLENS_ALLOC_TRACE=K`: the number of allocations after warm-up to print a backtrace for.
    static let traceLimit: Int = Int(ProcessInfo.processInfo.environment["DEPTHLENS_ALLOC_TRACE"] ?? "") ?? 0
    /// `DEPTHLENS_ALLOC_TRACE_DRIVER=1`: trace the driver's allocations too.
    static let traceDriver = ProcessInfo.processInfo.environment["DEPTHLENS_ALLOC_TRACE_DRIVER"] == "1"
    /// Prints a backtrace (stderr) for each of the calling thread's next `limit` own allocations
    /// (and the driver's with `DEPTHLENS_ALLOC_TRACE_DRIVER=1`).
    static func trace(_ limit: Int) { dl_alloc_trace(Int32(clamping: limit), traceDriver ? 1 : 0) }

    /// Runs `body` without counting its allocations (the once-a-second statistics themselves).
    static func uncounted<R>(_ body: () throws -> R) rethrows -> R {
        counting(false)
        defer { counting(true) }
        return try body()
    }

    /// This thread's own allocations while `body` runs `times` times (given 0…times−1): the
    /// per-frame checks of the unit tests.
    static func ownAllocations(running times: Int, _ body: (Int) throws -> Void) rethrows -> UInt64 {
        counting(true)
        defer { counting(false) }
        let before = count
        for i in 0..<times { try body(i) }
        return count &- before
    }

    /// Resident set size in MiB, from /proc/self/statm (pages), read into a stack buffer.
    static func residentMiB() -> Double {
        let fd = open("/proc/self/statm", O_RDONLY)
        guard fd >= 0 else { return 0 }
        defer { close(fd) }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 128) { buf -> Double in
            let n = read(fd, buf.baseAddress, 127)
            guard n > 0 else { return 0 }
            // "size resident shared text lib data dt": the second field.
            var field = 0, value = 0
            for i in 0..<n {
                let c = buf[i]
                if c == 0x20 { field += 1; if field > 1 { break }; continue }
                if field == 1, c >= 0x30, c <= 0x39 { value = value * 10 + Int(c - 0x30) }
            }
            return Double(value) * Double(sysconf(Int32(_SC_PAGESIZE))) / 1_048_576
        }
    }
}
