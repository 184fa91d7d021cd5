import ArgumentParser
import Capture
import DepthKit
import Foundation

/// `--source` is typed: ArgumentParser parses it with `SourceSpec(parsing:)`, so a bad spec is its
/// one-line error naming the option, before the command runs. Capture does not link
/// swift-argument-parser, so the conformance lives here.
extension SourceSpec: ExpressibleByArgument {
    public init?(argument: String) {
        guard let spec = try? SourceSpec(parsing: argument) else { return nil }
        self = spec
    }

    /// The `transform:` of every `--source` option: the same parse, with its one-line reason.
    static func argument(_ text: String) throws -> SourceSpec { try SourceSpec(parsing: text) }
}

/// The options of every command that reads frames (view, info, convert, record, process,
/// export-ply, render3d, quality, measure, publish, subscribe): where the frames come from and how
/// to read them — `--source`, `--depth-scale`, the camera (`--calibration` or `--intrinsics`, with
/// `--extrinsics-units`) and `--max-image` for network images. Each option is declared once here,
/// so every command spells and checks it the same way; `RGBDInputOptions` adds the shorthands
/// (`--color/--depth`, `--synthetic`, `--snapshot`) of the commands that read one frame.
struct SourceOptions: ParsableArguments {
    @Option(help: ArgumentHelp(SourceSpec.help, valueName: "source"), transform: SourceSpec.argument)
    var source: SourceSpec?
    @Option(help: "Units per meter of the source's 16-bit depth (TUM 5000, RealSense/Kinect 1000; default 1000). Recordings, snapshots and photos bring their own.")
    var depthScale: Float?
    @Option(help: "A calibration file (calibration.json, OpenCV YAML/XML, ROS camera_info YAML; recognized by content) or color=FILE,depth=FILE[,extrinsics=FILE], each camera its own, used instead of what the source recorded. calibration.json is the schema `info --json` prints.")
    var calibration: String?
    @Option(help: "Units of an OpenCV stereo file's T given as --calibration …,extrinsics=FILE: mm or m (OpenCV writes the board's units).")
    var extrinsicsUnits: String?
    @Option(help: "Depth camera intrinsics fx,fy,cx,cy in pixels of the depth image, instead of what the source recorded (default: 525·W/640, image center).")
    var intrinsics: String?
    @Option(help: ArgumentHelp("Largest network image taken (a dds: source; the same as its max-image=): a sample whose header claims more is dropped before decoding and counted. Default 8192x8192, never above the topic's camera_info size.", valueName: "WxH"))
    var maxImage: String?

    /// `--source`, else `fallback` (view, record and publish: the synthetic scene), with
    /// `--max-image` applied; without either, `--source` is missing (one line).
    func spec(or fallback: SourceSpec?) throws -> SourceSpec {
        guard let spec = source ?? fallback else { throw DepthKitError.invalidArgument("--source is required (\(SourceSpec.usage))") }
        return try applyingMaxImage(to: spec)
    }

    /// `spec` with `--max-image` as its `max-image=`: network images only; given both ways, one must go.
    func applyingMaxImage(to spec: SourceSpec) throws -> SourceSpec {
        guard let maxImage else { return spec }
        guard case var .dds(topics) = spec else {
            throw DepthKitError.invalidArgument("--max-image applies to network images (a dds: source), not '\(spec)'")
        }
        guard topics.maxImage == nil else { throw DepthKitError.invalidArgument("--max-image and the source's max-image= both given; drop one") }
        do { topics.maxImage = try DDSImageLimit.parse(maxImage) } catch let CaptureError.invalidSource(why) {
            throw DepthKitError.invalidArgument("--max-image: \(why)")
        }
        return .dds(topics)
    }

    /// The numbers and files of these options, checked before anything opens: one line each.
    func check() throws {
        if depthScale != nil { _ = try DepthIO.validatedScale(depthScale) }
        if let maxImage {
            do { _ = try DDSImageLimit.parse(maxImage) } catch let CaptureError.invalidSource(why) {
                throw DepthKitError.invalidArgument("--max-image: \(why)")
            }
        }
    }

    /// `--calibration` / `--intrinsics` / `--extrinsics-units`, read (empty when none is given).
    func calibrationOverride() throws -> CalibrationOverride {
        try CalibrationOverride(calibrationFile: calibration, intrinsics: intrinsics, extrinsicsUnits: extrinsicsUnits)
    }

    /// The source `spec` names (not started), at `--depth-scale`.
    func makeSource(_ spec: SourceSpec, cameraControls: V4L2ControlOptions? = nil) throws -> FrameSource {
        try spec.makeSource(depthScale: depthScale, cameraControls: cameraControls)
    }
}
