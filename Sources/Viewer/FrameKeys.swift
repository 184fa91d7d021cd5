import DepthKit
import Foundation

// What `FrameProcessor`'s caches and labels are made from: compared each frame, formatted only
// when they change (no allocation per frame).

/// What a frame's label is made from: "jet blend 0.50 (GPU)".
struct OutputLabelParts: Equatable {
    var name: String
    var blend: Float?
    var gpu: Bool

    var text: String {
        name + (blend.map { " blend " + String(format: "%.2f", $0) } ?? "") + (gpu ? " (GPU)" : " (CPU)")
    }
}

/// What `--backend auto`'s key for a kernel and its sizes is made from (`FrameProcessor.autoKey`).
struct AutoKeyParts: Equatable {
    var stage: PreviewMode.Stage
    var rosyMatrix: Bool, blend: Bool
    var colormap: String, mode: String
    var colorWidth: Int, colorHeight: Int, depthWidth: Int, depthHeight: Int
}

/// What a CPU depth-mask result was made from (`FrameProcessor`'s one-entry cache): compared,
/// never formatted into a string.
struct CPUEffectKey: Equatable {
    var color: ObjectIdentifier, colorGeneration: UInt64
    var depth: ObjectIdentifier, depthGeneration: UInt64
    var mode: String, focus: Float
    /// The frame's subject matte, when it has one (the mask then).
    var matte: ObjectIdentifier?
}

/// What the CPU colormap filter's cache key is made from ("colormap-jet-…").
struct CPUColormapKeyParts: Equatable {
    var name: String
    var range: DepthRange
}
