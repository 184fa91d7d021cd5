import DepthKit
import Foundation

/// The filters `depthlens process --filter` knows, and what each one reads.
enum ProcessFilter: String, CaseIterable {
    case rosy, grayscale, jet, turbo, viridis, mix, highpass, bandpass, comic, greenscreen, blur, portrait
    /// The (possibly smoothed) depth as a 16-bit PNG at the input's scale.
    case depth

    static func named(_ s: String) throws -> ProcessFilter {
        guard let f = ProcessFilter(rawValue: s.lowercased()) else {
            let names = allCases.map(\.rawValue).joined(separator: ", ")
            throw DepthKitError.invalidArgument("unknown filter '\(s)' (expected one of: \(names))")
        }
        return f
    }

    var needsDepth: Bool { self != .rosy }
    var needsColor: Bool { ![.grayscale, .jet, .turbo, .viridis, .depth].contains(self) }
    /// Reads depth at color pixels (blends, masks, effects): depth is aligned to color first when
    /// the cameras differ.
    var combinesDepthAndColor: Bool {
        switch self {
        case .mix, .highpass, .bandpass, .comic, .greenscreen, .blur, .portrait: return true
        case .rosy, .grayscale, .jet, .turbo, .viridis, .depth: return false
        }
    }
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
    /// Units per meter of `--filter depth`'s 16-bit output: the input's scale.
    var depthScale: Float = DepthIO.defaultDepthScale

    func check() throws {
        try Limits.mix.check(mix)
        try Limits.focus.check(focus)
        try Limits.depthMin.check(min)
        try Limits.depthMax.check(max)
        if let lo = min, let hi = max, !(hi > lo) {
            throw DepthKitError.invalidArgument("--max (\(hi)) must be greater than --min (\(lo))")
        }
    }

    /// The depth mask these parameters ask for (slope 100 with --sharp, else 4; band width 0.1).
    func mask(_ kind: DepthMaskKind) -> DepthMaskSpec {
        DepthMaskSpec(kind: kind, focus: focus, slope: sharp ? DepthMaskFilter.sharpSlope : DepthMaskFilter.softSlope, width: 0.1)
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
        let mask = try factory.makeMask(p.mask(filter == .highpass ? .highpass : .bandpass),
                                        outputWidth: frame.color.width, outputHeight: frame.color.height)
        try mask.prepare(input: depth!.frameFormat, outputRetainedBufferCountHint: 1)
        return try mask.render(depth!)
    case .comic, .greenscreen, .blur, .portrait:
        // portrait is the viewer's mode: blur under a sharp high-pass mask, whatever --sharp says.
        let kind: DepthEffectKind = filter == .comic ? .comic : filter == .greenscreen ? .greenscreen : .blur
        let effect = try factory.makeEffect(kind, mask: filter == .portrait ? .portrait(focus: p.focus) : p.mask(.highpass))
        effect.background = kind == .greenscreen ? p.background : nil
        let color = frame.color.format == .rgba8 || frame.color.format == .bgra8 ? frame.color : ImageIO.toRGBA8(frame.color)
        try effect.prepare(input: color.frameFormat, secondInput: depth!.frameFormat, outputRetainedBufferCountHint: 1)
        return try effect.render(color, depth!)
    case .depth:
        return TUMWriter.encodeDepth(frame.depth!, scale: p.depthScale)
    }
}
