/// One number's valid values, shared by the command line and the viewer: the CLI rejects a value
/// outside them in one line (`check`), the viewer's panel controls and keys clamp to them (`clamp`).
public struct ParameterRange: Sendable, Equatable {
    /// The command-line option it belongs to (named in messages), e.g. "--mix".
    public let option: String
    public let range: ClosedRange<Float>

    public init(_ option: String, _ range: ClosedRange<Float>) {
        self.option = option
        self.range = range
    }

    public var lowerBound: Float { range.lowerBound }
    public var upperBound: Float { range.upperBound }

    /// The nearest valid value; NaN (a typed "nan") becomes the lower bound.
    public func clamp(_ v: Float) -> Float {
        v.isNaN ? range.lowerBound : Swift.min(Swift.max(v, range.lowerBound), range.upperBound)
    }

    /// Throws `DepthKitError.invalidArgument` ("--mix must be in 0…1, got 4") unless `v` is nil or
    /// a finite value in range.
    public func check(_ v: Float?) throws {
        guard let v else { return }
        guard v.isFinite else { throw DepthKitError.invalidArgument("\(option) must be a finite number, got \(v)") }
        guard range.contains(v) else {
            throw DepthKitError.invalidArgument("\(option) must be in \(format(range.lowerBound))…\(format(range.upperBound)), got \(v)")
        }
    }

    public func check(_ v: Double?) throws {
        guard let v else { return }
        guard v.isFinite else { throw DepthKitError.invalidArgument("\(option) must be a finite number, got \(v)") }
        try check(Float(v))
    }

    private func format(_ x: Float) -> String { x == x.rounded() ? String(Int(x)) : "\(x)" }
}

/// The limits of every tunable number, in one place: `depthlens process`/`view`/`render3d` check
/// their options against these and the viewer's panel and keys clamp to the same ranges.
public enum Limits {
    /// Blend of the colormap mode: 0 = color, 1 = colored depth.
    public static let mix = ParameterRange("--mix", 0...1)
    /// Focus of the depth masks and effects: 0 far … 1 near (normalized disparity).
    public static let focus = ParameterRange("--focus", 0...1)
    /// Fixed colormap range ends in meters (16 m is also where the equalized histogram stops).
    public static let depthMin = ParameterRange("--min", 0...(16 - depthRangeGap))
    public static let depthMax = ParameterRange("--max", depthRangeGap...16)
    /// The smallest `max − min` of a fixed colormap range, in meters.
    public static let depthRangeGap: Float = 0.01
    /// Playback rate in frames per second.
    public static let fps = ParameterRange("--fps", 0.5...240)
    /// Point diameter of the 3D view in pixels (the device may allow less).
    public static let pointSize = ParameterRange("--point-size", 1...64)
    /// Depth smoothing (`DepthSmoothingSettings`): temporal weight of the new depth, the step that
    /// restarts a pixel (share of its depth), frames a hole keeps its value, spatial fill radius.
    public static let smoothAlpha = ParameterRange("--smooth-alpha", 0.01...1)
    public static let smoothThreshold = ParameterRange("--smooth-threshold", 0.001...0.5)
    public static let holeFrames = ParameterRange("--hole-frames", 1...60)
    public static let fillRadius = ParameterRange("--fill-radius", 1...4)

    /// A fixed colormap range after one end was edited: both ends in their limits and
    /// `max − min ≥ depthRangeGap`, the edited end kept and the other one moved.
    public static func orderedDepthRange(min lo: Float, max hi: Float, editedMax: Bool) -> (min: Float, max: Float) {
        var lo = depthMin.clamp(lo), hi = depthMax.clamp(hi)
        if hi - lo < depthRangeGap {
            if editedMax { lo = Swift.max(depthMin.lowerBound, hi - depthRangeGap) } else { hi = Swift.min(depthMax.upperBound, lo + depthRangeGap) }
        }
        return (lo, hi)
    }
}
