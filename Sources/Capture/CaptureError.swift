#if canImport(Glibc)
import Glibc
#endif
import DepthKit

/// The one error type of the Capture target. Its `description` is the single line the viewer
/// shows (it keeps running) and the CLI prints, always naming the device, file or argument.
public enum CaptureError: Error, CustomStringConvertible, Equatable {
    /// The device went away mid-run (ENODEV/EIO on DQBUF, or poll reported an error).
    /// The camera has already closed itself and can be opened again.
    case disconnected(device: String, errno: Int32)
    /// A system call on a device failed: `call` is the ioctl or function name.
    case system(device: String, call: String, errno: Int32)
    /// The device works but cannot do what depthlens needs (no capture, no streaming, no format).
    case unsupported(device: String, problem: String)
    /// A frame file is missing, corrupt or has the wrong size.
    case file(path: String, problem: String)
    /// A malformed `--source` string or a bad option value.
    case invalidSource(String)
    /// `nextFrame` before `start()`, or a playback call out of range.
    case invalidState(String)

    public var description: String {
        switch self {
        case let .disconnected(device, e):
            return "\(device): camera disconnected (\(errnoName(e)))"
        case let .system(device, call, e):
            return "\(device): \(call) failed: \(errnoMessage(e)) (\(errnoName(e)))"
        case let .unsupported(device, problem):
            return "\(device): \(problem)"
        case let .file(path, problem):
            return "\(path): \(problem)"
        case let .invalidSource(s), let .invalidState(s):
            return s
        }
    }

    /// Wraps DepthKit's file errors (same one-line form) and anything else by its description.
    static func wrapping(_ error: Error, path: String) -> CaptureError {
        if let e = error as? CaptureError { return e }
        if let e = error as? DepthKitError {
            switch e {
            case let .file(p, problem): return .file(path: p, problem: problem)
            case let .invalidArgument(s): return .file(path: path, problem: s)
            }
        }
        return .file(path: path, problem: "\(error)")
    }
}

/// The symbolic name of an errno value ("ENODEV"), for one-line messages.
public func errnoName(_ e: Int32) -> String {
    switch e {
    case EPERM: return "EPERM"
    case ENOENT: return "ENOENT"
    case EINTR: return "EINTR"
    case EIO: return "EIO"
    case ENXIO: return "ENXIO"
    case EBADF: return "EBADF"
    case EAGAIN: return "EAGAIN"
    case ENOMEM: return "ENOMEM"
    case EACCES: return "EACCES"
    case EFAULT: return "EFAULT"
    case EBUSY: return "EBUSY"
    case ENODEV: return "ENODEV"
    case EINVAL: return "EINVAL"
    case ENOTTY: return "ENOTTY"
    case ENOSPC: return "ENOSPC"
    case EPIPE: return "EPIPE"
    case ETIMEDOUT: return "ETIMEDOUT"
    default: return "errno \(e)"
    }
}

/// `strerror(e)` as a Swift string.
public func errnoMessage(_ e: Int32) -> String {
    guard let s = strerror(e) else { return "errno \(e)" }
    return String(cString: s)
}
