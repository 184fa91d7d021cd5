import DepthKit
import Foundation

/// The calibration a consumer uses for a source's frames: `--calibration FILE` or
/// `--intrinsics fx,fy,cx,cy` when given (on every command), else what the source recorded
/// (`FrameSource.calibration`), else DESIGN's defaults for the frame's sizes — and `origin` says
/// which, for the viewer's status line and `info`.
public struct CalibrationOverride: Sendable, Equatable {
    /// From `--calibration FILE` (depthlens' calibration.json schema).
    public var calibration: RGBDCalibration?
    /// From `--intrinsics fx,fy,cx,cy`: the depth camera's, in pixels of the depth image.
    public var depthIntrinsics: (fx: Float, fy: Float, cx: Float, cy: Float)? {
        get { intrinsicsValues.map { ($0[0], $0[1], $0[2], $0[3]) } }
        set { intrinsicsValues = newValue.map { [$0.fx, $0.fy, $0.cx, $0.cy] } }
    }
    private var intrinsicsValues: [Float]?

    public init() {}

    /// Parses the options; errors are one line naming the file or the option.
    public init(calibrationFile: String?, intrinsics: String?) throws {
        if let calibrationFile { calibration = try RGBDCalibration.read(calibrationFile) }
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

    public var isEmpty: Bool { calibration == nil && intrinsicsValues == nil }

    /// The calibration for `frame` of `source`.
    public func resolve(for source: FrameSource, frame: FrameSet) -> RGBDCalibration {
        resolve(recorded: source.calibration, depthUnits: source.depthUnitsPerMeter, color: frame.color, depth: frame.depth)
    }

    /// The calibration for a color image and its depth, given what the input recorded (nil: nothing).
    public func resolve(recorded: RGBDCalibration?, depthUnits: Float?, color: PixelBuffer, depth: DepthData?) -> RGBDCalibration {
        let colorSize = (color.width, color.height)
        let depthSize = depth.map { ($0.map.width, $0.map.height) } ?? colorSize
        let units = depthUnits ?? DepthIO.defaultDepthScale
        if var c = calibration {
            c.depth = c.depth.scaled(toWidth: depthSize.0, height: depthSize.1)
            c.color = c.color.scaled(toWidth: colorSize.0, height: colorSize.1)
            return c
        }
        var base = recorded ?? RGBDCalibration(
            depth: CameraModel(intrinsics: depth?.intrinsics ?? .default(width: depthSize.0, height: depthSize.1)),
            color: .default(width: colorSize.0, height: colorSize.1), depthScale: units,
            origin: "default intrinsics (fx = fy = 525·W/640, image center)")
        if let v = intrinsicsValues {
            let k = CameraIntrinsics(fx: v[0], fy: v[1], cx: v[2], cy: v[3], width: depthSize.0, height: depthSize.1)
            base.depth = CameraModel(intrinsics: k)
            // One camera unless the source says otherwise: the color camera is the same one scaled.
            if recorded == nil { base.color = CameraModel(intrinsics: k.scaled(toWidth: colorSize.0, height: colorSize.1)) }
            base.origin = "--intrinsics"
        }
        return base
    }

    /// Puts the resolved depth intrinsics on the frame's depth (readout, 3D, PLY use them).
    public func apply(_ calibration: RGBDCalibration, to frame: inout FrameSet) {
        guard let d = frame.depth else { return }
        frame.depth?.intrinsics = calibration.depth.intrinsics.width == d.map.width && calibration.depth.intrinsics.height == d.map.height
            ? calibration.depth.intrinsics
            : calibration.depth.intrinsics.scaled(toWidth: d.map.width, height: d.map.height)
    }

    public static func == (a: CalibrationOverride, b: CalibrationOverride) -> Bool {
        a.calibration == b.calibration && a.intrinsicsValues == b.intrinsicsValues
    }
}
