#if canImport(Glibc)
import Glibc
#endif
import CPlatform

/// Every system call the V4L2 camera makes, behind one protocol, so the camera code runs against
/// the real kernel (`LinuxV4L2System`) or against a scripted one in tests (`ScriptedV4L2System`),
/// the way swift-nio's `SyscallAbstractionLayer` does.
///
/// Calls return what the C call returns (-1 on failure); `errno` is the error of the last failed call.
public protocol V4L2System: AnyObject {
    /// `v4l2_open(path, flags)`.
    func open(_ path: String, flags: Int32) -> Int32
    /// `v4l2_close(fd)`.
    func close(_ fd: Int32) -> Int32
    /// `v4l2_ioctl(fd, request, argument)`, `argument` pointing at the request's struct.
    func ioctl(_ fd: Int32, _ request: UInt, _ argument: UnsafeMutableRawPointer) -> Int32
    /// `v4l2_mmap(NULL, length, PROT_READ|PROT_WRITE, MAP_SHARED, fd, offset)`; nil for MAP_FAILED.
    func mmap(length: Int, fd: Int32, offset: Int64) -> UnsafeMutableRawPointer?
    /// `v4l2_munmap(address, length)`.
    func munmap(_ address: UnsafeMutableRawPointer, length: Int) -> Int32
    /// `poll` on one descriptor: returns >0 when `revents` is set, 0 on timeout, -1 on error.
    func poll(_ fd: Int32, events: Int16, timeoutMilliseconds: Int32, revents: inout Int16) -> Int32
    /// The errno of the last failed call.
    var errno: Int32 { get }
}

extension V4L2System {
    /// Typed `ioctl`: passes a pointer to `value`.
    @inline(__always)
    func ioctl<T>(_ fd: Int32, _ request: UInt, _ value: inout T) -> Int32 {
        withUnsafeMutableBytes(of: &value) { ioctl(fd, request, $0.baseAddress!) }
    }
}

/// The real kernel through libv4l2 (CPlatform wraps its variadic calls). errno is captured right after
/// each call so nothing in between can overwrite it.
public final class LinuxV4L2System: V4L2System {
    public private(set) var errno: Int32 = 0

    public init() {}

    @inline(__always)
    private func record(_ r: Int32) -> Int32 {
        if r < 0 { errno = Glibc.errno }
        return r
    }

    public func open(_ path: String, flags: Int32) -> Int32 { record(dl_v4l2_open(path, flags)) }
    public func close(_ fd: Int32) -> Int32 { record(dl_v4l2_close(fd)) }
    public func ioctl(_ fd: Int32, _ request: UInt, _ argument: UnsafeMutableRawPointer) -> Int32 {
        record(dl_v4l2_ioctl(fd, request, argument))
    }
    public func mmap(length: Int, fd: Int32, offset: Int64) -> UnsafeMutableRawPointer? {
        let p = dl_v4l2_mmap(nil, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, offset)
        if p == nil || p == UnsafeMutableRawPointer(bitPattern: -1) {
            errno = Glibc.errno
            return nil
        }
        return p
    }
    public func munmap(_ address: UnsafeMutableRawPointer, length: Int) -> Int32 {
        record(dl_v4l2_munmap(address, length))
    }
    public func poll(_ fd: Int32, events: Int16, timeoutMilliseconds: Int32, revents: inout Int16) -> Int32 {
        var p = pollfd(fd: fd, events: events, revents: 0)
        var r: Int32
        repeat { r = Glibc.poll(&p, 1, timeoutMilliseconds) } while r < 0 && Glibc.errno == EINTR
        if r < 0 { errno = Glibc.errno }
        revents = p.revents
        return r
    }
}
