import DepthKit

/// A parsed `--source` string: `synthetic | tum:DIR | pair:COLOR,DEPTH | v4l2:/dev/videoN[,depth=/dev/videoM]`.
public enum SourceSpec: Equatable, Sendable, CustomStringConvertible {
    case synthetic
    case tum(directory: String)
    case pair(color: String, depth: String)
    case v4l2(color: String, depth: String?)

    static let usage = "expected synthetic, tum:DIR, pair:COLOR,DEPTH or v4l2:/dev/videoN[,depth=/dev/videoM]"

    /// Parses a `--source` value. Throws `CaptureError.invalidSource` with a one-line reason.
    public init(parsing text: String) throws {
        let s = text.trimmingSpaces()
        func bad(_ why: String) -> CaptureError { .invalidSource("--source '\(text)': \(why)") }
        if s == "synthetic" { self = .synthetic; return }
        guard let colon = s.firstIndex(of: ":") else {
            throw bad(s.isEmpty ? "empty (\(Self.usage))" : "unknown source '\(s)' (\(Self.usage))")
        }
        let kind = String(s[..<colon]), rest = String(s[s.index(after: colon)...])
        switch kind {
        case "tum":
            guard !rest.isEmpty else { throw bad("missing directory after 'tum:'") }
            self = .tum(directory: rest)
        case "pair":
            let parts = rest.split(separator: ",", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
                throw bad("expected pair:COLOR,DEPTH (two files separated by a comma)")
            }
            self = .pair(color: parts[0], depth: parts[1])
        case "v4l2":
            let parts = rest.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            guard let device = parts.first, !device.isEmpty else { throw bad("missing device after 'v4l2:' (e.g. v4l2:/dev/video0)") }
            guard device.hasPrefix("/dev/") else { throw bad("device '\(device)' is not a path under /dev/") }
            var depth: String?
            for option in parts.dropFirst() {
                guard option.hasPrefix("depth=") else {
                    throw bad("unknown option '\(option)' (expected depth=/dev/videoM)")
                }
                guard depth == nil else { throw bad("depth= given twice") }
                let d = String(option.dropFirst("depth=".count))
                guard d.hasPrefix("/dev/") else { throw bad("depth device '\(d)' is not a path under /dev/") }
                guard d != device else { throw bad("color and depth are the same device \(d)") }
                depth = d
            }
            self = .v4l2(color: device, depth: depth)
        case "synthetic":
            throw bad("synthetic takes no argument")
        default:
            throw bad("unknown source kind '\(kind)' (\(Self.usage))")
        }
    }

    public var description: String {
        switch self {
        case .synthetic: return "synthetic"
        case let .tum(d): return "tum:\(d)"
        case let .pair(c, d): return "pair:\(c),\(d)"
        case let .v4l2(c, d): return "v4l2:\(c)" + (d.map { ",depth=\($0)" } ?? "")
        }
    }

    /// The source this spec names (not started). `depthScale` (`--depth-scale`, units per meter)
    /// defaults per source: TUM 5000, pair and V4L2 1000.
    public func makeSource(depthScale: Float? = nil, system: V4L2System? = nil) throws -> FrameSource {
        if let s = depthScale, !(s > 0 && s.isFinite) {
            throw CaptureError.invalidSource("--depth-scale must be a positive number, got \(s)")
        }
        switch self {
        case .synthetic: return SyntheticSource()
        case let .tum(d): return TUMSource(directory: d, depthScale: depthScale ?? TUMSequence.depthScale)
        case let .pair(c, d): return PairSource(color: c, depth: d, depthScale: depthScale)
        case let .v4l2(c, d):
            return V4L2Source(colorPath: c, depthPath: d, system: system ?? LinuxV4L2System(),
                              depthScale: depthScale ?? DepthIO.defaultDepthScale)
        }
    }
}

/// Parses `--source` and builds the source: the CLI's one call.
public func makeFrameSource(_ source: String, depthScale: Float? = nil, system: V4L2System? = nil) throws -> FrameSource {
    try SourceSpec(parsing: source).makeSource(depthScale: depthScale, system: system)
}

private extension String {
    func trimmingSpaces() -> String {
        var s = Substring(self)
        while s.first == " " { s.removeFirst() }
        while s.last == " " { s.removeLast() }
        return String(s)
    }
}
