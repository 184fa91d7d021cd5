import DepthKit
import Foundation

/// The calibration a consumer uses for a source's frames: `--calibration` or
/// `--intrinsics fx,fy,cx,cy` when given (on every command), else what the source recorded
/// (`FrameSource.calibration`), else DESIGN's defaults for the frame's sizes — and `origin` says
/// which, for the viewer's status line and `info`.
///
/// `--calibration FILE` takes a depthlens `calibration.json` (both cameras, extrinsics, depth
/// scale), or one camera's OpenCV YAML/XML or ROS `camera_info` YAML (then depth and color are that
/// one camera); `--calibration color=FILE,depth=FILE[,extrinsics=FILE]` gives each camera its own
/// file (either may be left out: that camera stays as recorded or assumed) and the depth→color
/// extrinsics (a calibration.json's, or an OpenCV stereo file's `R` and `T` with
/// `--extrinsics-units mm|m`). Files are recognized by content (`CalibrationFile`). Intrinsics
/// for another size of the same aspect ratio are scaled to the stream's (`CameraIntrinsics.scaled`);
/// another aspect ratio is an error naming the file.
public struct CalibrationOverride: Sendable, Equatable {
    /// From `--calibration FILE` with a calibration.json.
    public var calibration: RGBDCalibration?
    /// From an OpenCV or ROS file: the depth and the color camera (the same one for a plain
    /// `--calibration FILE`), and the depth→color extrinsics (identity for a plain single-camera file).
    public var depthCamera: CameraModel?
    public var colorCamera: CameraModel?
    public var extrinsics: RigidTransform?
    /// The files the cameras came from (a size mismatch names them) and the origin line.
    private var depthFile = "", colorFile = "", fileOrigin = ""
    /// From `--intrinsics fx,fy,cx,cy`: the depth camera's, in pixels of the depth image.
    public var depthIntrinsics: (fx: Float, fy: Float, cx: Float, cy: Float)? {
        get { intrinsicsValues.map { ($0[0], $0[1], $0[2], $0[3]) } }
        set { intrinsicsValues = newValue.map { [$0.fx, $0.fy, $0.cx, $0.cy] } }
    }
    private var intrinsicsValues: [Float]?

    public init() {}

    /// Parses the options; errors are one line naming the file or the option.
    /// - Parameter extrinsicsUnits: `--extrinsics-units mm|m`, the units of an OpenCV stereo file's `T`.
    public init(calibrationFile: String?, intrinsics: String?, extrinsicsUnits: String? = nil) throws {
        if let spec = calibrationFile {
            if let parts = try Self.keyedFiles(spec) {
                try readKeyed(parts, extrinsicsUnits: extrinsicsUnits)
            } else {
                if extrinsicsUnits != nil {
                    throw DepthKitError.invalidArgument("--extrinsics-units goes with --calibration …,extrinsics=FILE (an OpenCV stereo file's T)")
                }
                let file = try CalibrationFile.read(spec)
                if let c = file.rgbd {
                    calibration = c
                    depthFile = spec; colorFile = spec
                } else if let cam = file.camera {
                    depthCamera = cam; colorCamera = cam; extrinsics = .identity
                    depthFile = spec; colorFile = spec; fileOrigin = file.label
                } else {
                    throw DepthKitError.file(path: spec, problem: "holds stereo R and T only: give it as --calibration color=FILE,depth=FILE,extrinsics=\(spec)")
                }
            }
        } else if extrinsicsUnits != nil {
            throw DepthKitError.invalidArgument("--extrinsics-units goes with --calibration …,extrinsics=FILE (an OpenCV stereo file's T)")
        }
        if let intrinsics {
            guard calibrationFile == nil else {
                throw DepthKitError.invalidArgument("--intrinsics and --calibration both give the depth camera; give one")
            }
            guard let k = CameraIntrinsics.parse(intrinsics, width: 1, height: 1) else {
                throw DepthKitError.invalidArgument("--intrinsics must be fx,fy,cx,cy with positive focal lengths, got '\(intrinsics)'")
            }
            depthIntrinsics = (k.fx, k.fy, k.cx, k.cy)
        }
    }

    /// `color=A,depth=B,extrinsics=C` → its pairs; nil when `spec` is a plain file name.
    static func keyedFiles(_ spec: String) throws -> [(String, String)]? {
        let keys = ["color", "depth", "extrinsics"]
        var pairs: [(String, String)] = []
        for part in spec.split(separator: ",", omittingEmptySubsequences: false) {
            guard let eq = part.firstIndex(of: "="), keys.contains(String(part[..<eq])) else {
                if pairs.isEmpty && !keys.contains(where: { spec.hasPrefix($0 + "=") }) { return nil }
                throw DepthKitError.invalidArgument("--calibration takes FILE or color=FILE,depth=FILE[,extrinsics=FILE], got '\(spec)'")
            }
            let key = String(part[..<eq]), value = String(part[part.index(after: eq)...])
            guard !value.isEmpty else { throw DepthKitError.invalidArgument("--calibration \(key)= needs a file") }
            guard !pairs.contains(where: { $0.0 == key }) else { throw DepthKitError.invalidArgument("--calibration names \(key)= twice") }
            pairs.append((key, value))
        }
        return pairs
    }

    private mutating func readKeyed(_ parts: [(String, String)], extrinsicsUnits: String?) throws {
        var origins: [String] = []
        var unitsUsed = false
        for (key, path) in parts {
            let file = try CalibrationFile.read(path)
            switch key {
            case "color", "depth":
                guard let cam = key == "color" ? (file.rgbd?.color ?? file.camera) : (file.rgbd?.depth ?? file.camera) else {
                    throw DepthKitError.file(path: path, problem: "has no camera_matrix (a stereo R and T file goes in extrinsics=)")
                }
                if key == "color" { colorCamera = cam; colorFile = path } else { depthCamera = cam; depthFile = path }
            default:
                if let c = file.rgbd {
                    guard extrinsicsUnits == nil else {
                        throw DepthKitError.invalidArgument("--extrinsics-units is for an OpenCV stereo file's T; \(path) is a calibration.json, whose translation is in meters")
                    }
                    extrinsics = c.depthToColor
                } else if let s = file.stereo {
                    guard let units = extrinsicsUnits else {
                        throw DepthKitError.file(path: path, problem: "OpenCV's T is in the units the calibration board was measured in: give --extrinsics-units mm or m")
                    }
                    guard units == "mm" || units == "m" else {
                        throw DepthKitError.invalidArgument("--extrinsics-units must be mm or m, got '\(units)'")
                    }
                    unitsUsed = true
                    extrinsics = RigidTransform(rotation: s.rotation, translation: units == "mm" ? s.translation * 0.001 : s.translation)
                } else {
                    throw DepthKitError.file(path: path, problem: "has no extrinsics (a calibration.json's depth_to_color, or an OpenCV stereo file's R and T)")
                }
            }
            origins.append("\(key) \(file.label)")
        }
        if extrinsicsUnits != nil && !unitsUsed {
            throw DepthKitError.invalidArgument("--extrinsics-units goes with --calibration …,extrinsics=FILE (an OpenCV stereo file's T)")
        }
        fileOrigin = origins.joined(separator: ", ")
    }

    public var isEmpty: Bool {
        calibration == nil && intrinsicsValues == nil && depthCamera == nil && colorCamera == nil && extrinsics == nil
    }

    /// The calibration for `frame` of `source`. Throws when a file's intrinsics are for another aspect ratio.
    public func resolve(for source: FrameSource, frame: FrameSet) throws -> RGBDCalibration {
        try resolve(recorded: source.calibration, depthUnits: source.depthUnitsPerMeter, color: frame.color, depth: frame.depth)
    }

    /// The calibration for a color image and its depth, given what the input recorded (nil: nothing).
    public func resolve(recorded: RGBDCalibration?, depthUnits: Float?, color: PixelBuffer, depth: DepthData?) throws -> RGBDCalibration {
        try resolve(recorded: recorded, depthUnits: depthUnits, colorSize: (color.width, color.height),
                    depthSize: depth.map { ($0.map.width, $0.map.height) }, depthIntrinsics: depth?.intrinsics)
    }

    /// The calibration for color and depth images of these sizes (depth nil: none), given what the
    /// input recorded (nil: nothing) and the depth's own intrinsics when it carries them.
    public func resolve(recorded: RGBDCalibration?, depthUnits: Float?, colorSize: (Int, Int), depthSize depthGiven: (Int, Int)?,
                        depthIntrinsics: CameraIntrinsics?) throws -> RGBDCalibration {
        let depthSize = depthGiven ?? colorSize
        let units = depthUnits ?? DepthIO.defaultDepthScale
        if var c = calibration {
            c.depth = try Self.fit(c.depth, depthSize.0, depthSize.1, file: depthFile, stream: "depth")
            c.color = try Self.fit(c.color, colorSize.0, colorSize.1, file: colorFile, stream: "color")
            return c
        }
        var base = recorded ?? RGBDCalibration(
            depth: CameraModel(intrinsics: depthIntrinsics ?? .default(width: depthSize.0, height: depthSize.1)),
            color: .default(width: colorSize.0, height: colorSize.1), depthScale: units,
            origin: "default intrinsics (fx = fy = 525·W/640, image center)")
        if depthCamera != nil || colorCamera != nil || extrinsics != nil {
            if let d = depthCamera { base.depth = try Self.fit(d, depthSize.0, depthSize.1, file: depthFile, stream: "depth") }
            if let c = colorCamera { base.color = try Self.fit(c, colorSize.0, colorSize.1, file: colorFile, stream: "color") }
            if let e = extrinsics { base.depthToColor = e }
            base.origin = fileOrigin
            return base
        }
        if let v = intrinsicsValues {
            let k = CameraIntrinsics(fx: v[0], fy: v[1], cx: v[2], cy: v[3], width: depthSize.0, height: depthSize.1)
            base.depth = CameraModel(intrinsics: k)
            // One camera unless the source says otherwise: the color camera is the same one scaled.
            if recorded == nil { base.color = CameraModel(intrinsics: k.scaled(toWidth: colorSize.0, height: colorSize.1)) }
            base.origin = "--intrinsics"
        }
        return base
    }

    /// `model` at the stream's size: the same size as is, the same aspect ratio scaled
    /// (fx, cx with the width, fy, cy with the height, pixel centers kept: cx' = (cx + ½)·s − ½),
    /// another aspect ratio an error naming the file.
    static func fit(_ model: CameraModel, _ w: Int, _ h: Int, file: String, stream: String) throws -> CameraModel {
        let k = model.intrinsics
        if k.width == w && k.height == h { return model }
        guard k.width * h == w * k.height else {
            throw DepthKitError.file(path: file, problem: "intrinsics for \(k.width)x\(k.height) do not fit the \(w)x\(h) \(stream) stream (another aspect ratio; only a scaled size can use them)")
        }
        return model.scaled(toWidth: w, height: h)
    }

    /// Puts the resolved depth intrinsics on the frame's depth (readout, 3D, PLY use them).
    public func apply(_ calibration: RGBDCalibration, to frame: inout FrameSet) {
        guard let d = frame.depth else { return }
        frame.depth?.intrinsics = calibration.depth.intrinsics.width == d.map.width && calibration.depth.intrinsics.height == d.map.height
            ? calibration.depth.intrinsics
            : calibration.depth.intrinsics.scaled(toWidth: d.map.width, height: d.map.height)
    }

    public static func == (a: CalibrationOverride, b: CalibrationOverride) -> Bool {
        a.calibration == b.calibration && a.intrinsicsValues == b.intrinsicsValues && a.depthCamera == b.depthCamera
            && a.colorCamera == b.colorCamera && a.extrinsics == b.extrinsics && a.fileOrigin == b.fileOrigin
    }
}

extension CalibrationOverride {
    /// The one way every command applies `--calibration` / `--intrinsics` to a frame it read (what
    /// export-ply has done since they exist): the calibration resolved over what the source recorded
    /// (`recorded`, nil: nothing; then DESIGN's defaults for the frame's sizes), and the frame's depth
    /// given its depth camera's intrinsics (what unprojection, planes and areas use).
    public func calibrate(_ frame: inout FrameSet, recorded: RGBDCalibration?, depthUnits: Float?) throws -> RGBDCalibration {
        let calibration = try resolve(recorded: recorded, depthUnits: depthUnits, color: frame.color, depth: frame.depth)
        apply(calibration, to: &frame)
        return calibration
    }

    /// `calibrate` for a frame of `source`; with neither option given, the frame as read and what
    /// the source recorded (nil when it recorded nothing), so commands without them behave as before.
    public func calibrate(_ frame: inout FrameSet, of source: FrameSource) throws -> RGBDCalibration? {
        guard !isEmpty else { return source.calibration }
        return try calibrate(&frame, recorded: source.calibration, depthUnits: source.depthUnitsPerMeter)
    }
}
