import DepthKit

/// One entry of the viewer's mode list. The list is data: a new filter is a new entry here and a
/// stage the frame pipeline knows, with no change to the window code (keys, panel and `--mode`
/// are all derived from `PreviewMode.all`).
public struct PreviewMode: Hashable, Sendable {
    public enum Stage: Hashable, Sendable {
        /// The color image as it comes.
        case original
        /// rosyEffect on the GPU (`rosyEffect.comp`), or the color-matrix way.
        case rosy
        /// depthToGrayscale.
        case grayscale
        /// Depth through a colormap (JET by default), blended with the color by the mix slider.
        case colormap
        /// The depth mask (video depth maps) as gray.
        case mask
        /// A depth-masked effect on the color image.
        case effect(DepthEffectKind)
        /// Background blurred by depth, the subject kept sharp (blur effect with a sharp high-pass mask).
        case portrait
    }

    /// The `--mode` name.
    public let name: String
    /// What the panel shows.
    public let title: String
    public let stage: Stage

    public static let all: [PreviewMode] = [
        PreviewMode(name: "original", title: "Original", stage: .original),
        PreviewMode(name: "rosy", title: "Rosy", stage: .rosy),
        PreviewMode(name: "grayscale", title: "Depth grayscale", stage: .grayscale),
        PreviewMode(name: "jet", title: "Depth colormap blend", stage: .colormap),
        PreviewMode(name: "mask", title: "Depth mask", stage: .mask),
        PreviewMode(name: "comic", title: "Comic background", stage: .effect(.comic)),
        PreviewMode(name: "greenscreen", title: "Green screen", stage: .effect(.greenscreen)),
        PreviewMode(name: "blur", title: "Dream blur", stage: .effect(.blur)),
        PreviewMode(name: "portrait", title: "Portrait", stage: .portrait),
    ]

    public static func named(_ name: String) throws -> PreviewMode {
        guard let m = all.first(where: { $0.name == name.lowercased() }) else {
            throw DepthKitError.invalidArgument(
                "unknown mode '\(name)' (expected one of: \(all.map(\.name).joined(separator: ", ")))")
        }
        return m
    }

    /// The number key that selects this mode (1…9), if it has one.
    public var numberKey: Int? {
        guard let i = PreviewMode.all.firstIndex(of: self), i < 9 else { return nil }
        return i + 1
    }

    /// True when the mode reads depth.
    public var needsDepth: Bool { stage != .original && stage != .rosy }
}
