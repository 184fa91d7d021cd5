/// The one error type of depthlens' file and argument handling: its description is the single
/// line a user sees, naming the file (or argument) and the problem.
public enum DepthKitError: Error, CustomStringConvertible, Equatable {
    /// A problem with a file: missing, empty, truncated, corrupt, wrong size, all-invalid depth…
    case file(path: String, problem: String)
    /// A bad value on the command line or in an API call.
    case invalidArgument(String)

    public var description: String {
        switch self {
        case let .file(path, problem): return "\(path): \(problem)"
        case let .invalidArgument(s): return s
        }
    }
}

public extension String {
    /// The text of a NUL-terminated C character buffer (an error message a C call filled in), up to
    /// its first NUL or its end.
    init(cBuffer buffer: [CChar]) {
        let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        self.init(decoding: bytes, as: UTF8.self)
    }
}
