import DepthKit
import Foundation

/// The filters `depthlens process --filter` knows, and what each one reads.
enum ProcessFilter: String, CaseIterable {
    case rosy, grayscale, jet, turbo, viridis, mix, highpass, bandpass, comic, greenscreen, blur

    static func named(_ s: String) throws -> ProcessFilter {
        guard let f = ProcessFilter(rawValue: s.lowercased()) else {
            let names = allCases.map(\.rawValue).joined(separator: ", ")
            throw DepthKitError.invalidArgument("unknown filter '\(s)' (expected one of: \(names))")
        }
        return f
    }

    var needsDepth: Bool { self != .rosy }
    var needsColor: Bool { ![.grayscale, .jet, .turbo, .viridis].contains(self) }
    /// Filters that have a GPU port; the rest always run on the CPU.
    var hasGPUPort: Bool { [.rosy, .grayscale, .jet, .turbo, .viridis, .mix].contains(self) }
}

/// Parameters of one `process` run, checked.
struct ProcessParameters {
    var mix: Float = 0.5
    var min: Float?
    var max: Float?
    var equalize = true
    var focus: Float = 0.5
    var sharp = false
    var background: PixelBuffer?

    func check() throws {
        try requireFinite(mix, "--mix", in: 0...1)
        try requireFinite(focus, "--focus", in: 0...1)
        try requireFinite(min, "--min")
        try requireFinite(max, "--max")
        if let lo = min, lo < 0 { throw DepthKitError.invalidArgument("--min must not be negative, got \(lo)") }
        if let lo = min, let hi = max, !(hi > lo) {
            throw DepthKitError.invalidArgument("--max (\(hi)) must be greater than --min (\(lo))")
        }
    }

    /// The colormap range these parameters ask for.
    func depthRange(for depth: PixelBuffer) -> DepthRange {
        if equalize {
            return .equalized(minDepth: min ?? 0, maxDepth: max ?? 16, binsPerMeter: 1000)
        }
        let stats = DepthData(map: depth).depthStatistics()
        return .fixed(min: min ?? stats.min, max: max ?? stats.max)
    }
}

/// Runs one filter on one frame with a backend's factory.
func runFilter(_ filter: ProcessFilter, frame: LoadedFrame, parameters p: ProcessParameters,
               factory: FilterFactory) throws -> PixelBuffer {
    let depth = frame.depth?.depthFloat32()
    func render(_ spec: FilterSpec, _ input: PixelBuffer) throws -> PixelBuffer {
        let r = try factory.makeFilter(spec)
        try r.prepare(input: input.frameFormat, outputRetainedBufferCountHint: 1)
        return try r.render(input)
    }
    switch filter {
    case .rosy:
        return try render(.rosy, frame.color)
    case .grayscale:
        let range: Float? = (p.min != nil && p.max != nil) ? p.max! - p.min! : nil
        return try render(.grayscale(offset: p.min, range: range), depth!)
    case .jet, .turbo, .viridis:
        let map = Colormap(rawValue: filter.rawValue)!
        return try render(.colormap(map, p.depthRange(for: depth!)), depth!)
    case .mix:
        let jet = try render(.colormap(.jet, p.depthRange(for: depth!)), depth!)
        let mixer = try factory.makeMixer(mixFactor: p.mix)
        try mixer.prepare(input: frame.color.frameFormat, secondInput: jet.frameFormat, outputRetainedBufferCountHint: 1)
        return try mixer.render(frame.color, jet)
    case .highpass, .bandpass:
        let mask = DepthMaskFilter(kind: filter == .highpass ? DepthMaskKind.highpass : .bandpass, focus: p.focus,
                                   slope: p.sharp ? 100 : 4, width: 0.1,
                                   outputWidth: frame.color.width, outputHeight: frame.color.height)
        try mask.prepare(input: depth!.frameFormat, outputRetainedBufferCountHint: 1)
        return try mask.render(depth!)
    case .comic, .greenscreen, .blur:
        let mask = DepthMaskFilter(kind: .highpass, focus: p.focus, slope: p.sharp ? 100 : 4, width: 0.1,
                                   outputWidth: frame.color.width, outputHeight: frame.color.height)
        try mask.prepare(input: depth!.frameFormat, outputRetainedBufferCountHint: 1)
        let m = try mask.floatMask(depth!)
        let kind: DepthEffectKind = filter == .comic ? .comic : filter == .greenscreen ? .greenscreen : .blur
        return try DepthEffect.apply(kind: kind, image: frame.color, mask: m, background: p.background)
    }
}
