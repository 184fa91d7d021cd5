import ArgumentParser
import Capture
import DepthKit
import Foundation

struct MeasureCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "measure",
        abstract: "Area, volume and box dimensions in one depth frame.",
        discussion: """
        --area: the polygon's area on the least-squares plane through its pixels. --volume: the volume
        above (and below) the floor; --box: length × width × height of the object on the floor. The floor
        is the plane through the --floor polygon's pixels, else the frame's dominant plane (RANSAC); the
        region is --roi, else the largest connected cluster above the floor. With none of --area,
        --volume, --box: --volume and --box. docs/QUALITY.md ("Measuring") gives every formula.
        """
    )

    @OptionGroup var input: SourceOptions
    @Option(help: "The frame to measure (0-based).")
    var frame: Int = 0
    @Option(help: ArgumentHelp("A polygon in depth pixels: its area on the plane through its points.", valueName: "x1,y1,x2,y2,…"))
    var area: String?
    @Flag(help: "The volume above (and below) the floor.")
    var volume = false
    @Flag(help: "Length, width and height of the object on the floor.")
    var box = false
    @Option(help: "The region for --volume and --box: x,y,w,h in depth pixels (or a centered fraction, 0.4). Default: the largest cluster above the floor.")
    var roi: String?
    @Option(help: ArgumentHelp("A polygon on the floor (depth pixels); default: the frame's dominant plane by RANSAC.", valueName: "x1,y1,x2,y2,…"))
    var floor: String?
    @Option(name: .customLong("floor-tolerance-mm"), help: "Heights within ± this count as floor (default 3 × the floor's RMS, at least 1 mm).")
    var floorToleranceMM: Double?
    @Option(help: "The RANSAC seed (the same seed, the same floor).")
    var seed: UInt64 = RANSACSettings().seed
    @Flag(help: "Print JSON instead of text.")
    var json = false

    func run() throws {
        guard frame >= 0 else { throw DepthKitError.invalidArgument("--frame must be 0 or more, got \(frame)") }
        if let t = floorToleranceMM, !(t >= 0 && t.isFinite) {
            throw DepthKitError.invalidArgument("--floor-tolerance-mm must be a number ≥ 0, got \(t)")
        }
        let polygon = try area.map { try PixelPolygon(parsing: $0, option: "--area") }
        let floorPolygon = try floor.map { try PixelPolygon(parsing: $0, option: "--floor") }
        let roiSpec = try roi.map(QualityROISpec.init(parsing:))
        let wantVolume = volume || (!box && area == nil), wantBox = box || (!volume && area == nil)

        try input.check()
        let spec = try input.spec(or: nil)
        let camera = try input.calibrationOverride()
        let src = try input.makeSource(spec)
        let name = spec.path ?? spec.description
        let reader = try FrameReader(source: src, first: frame)
        var found: FrameSet?
        while let f = try reader.next() {
            if f.index > frame { break }
            if f.index == frame { found = f; break }
        }
        guard var f = found else { throw DepthKitError.file(path: name, problem: "has no frame \(frame)") }
        // --calibration / --intrinsics: the depth camera every point is unprojected with.
        let calibration = try camera.calibrate(&f, of: src)
        guard let depth = f.depth else { throw DepthKitError.file(path: name, problem: "frame \(frame) has no depth") }
        let map = depth.depthFloat32()
        let k = depth.intrinsics.width == map.width && depth.intrinsics.height == map.height
            ? depth.intrinsics : (calibration?.depth.intrinsics ?? .default(width: map.width, height: map.height))
        try polygon?.validate(width: map.width, height: map.height, option: "--area")
        try floorPolygon?.validate(width: map.width, height: map.height, option: "--floor")
        let region = try roiSpec.map { PixelPolygon(try $0.resolve(width: map.width, height: map.height)) }
        if depth.accuracy == .relative {
            warn("\(name): depth of relative accuracy (phone portrait depth): areas, volumes and sizes are in its arbitrary scale, not meters")
        }
        for w in src.warnings { warn("\(name): \(w)") }

        // Past the checks of what was typed, a failure is the frame's (no valid depth, no plane).
        func measured<T>(_ body: () throws -> T) throws -> T {
            do { return try body() } catch let e as DepthKitError {
                if case .invalidArgument(let why) = e { throw DepthKitError.file(path: name, problem: "frame \(frame): \(why)") }
                throw e
            }
        }
        let settings = MeasureSettings(intrinsics: k, floorTolerance: floorToleranceMM.map { $0 / 1000 },
                                       ransac: RANSACSettings(seed: seed))
        var doc: [String: Any] = ["source": name, "frame": f.index, "timestamp": f.timestamp,
                                  "relative_depth": depth.accuracy == .relative,
                                  "intrinsics": ["fx": k.fx, "fy": k.fy, "cx": k.cx, "cy": k.cy, "width": k.width, "height": k.height]]
        var lines: [String] = []
        if let polygon {
            let a = try measured { try DepthMeasure.area(depth: map, intrinsics: k, polygon: polygon) }
            doc["area_m2"] = a.areaM2
            doc["area"] = ["polygon": polygon.vertices.map { [$0.x, $0.y] }, "plane": Self.json(a.plane), "pixels": a.pixels,
                           "points": a.points, "rms_mm": a.rms * 1000, "corners": a.corners.map { [$0.x, $0.y, $0.z] }]
            lines.append(a.line)
        }
        if wantVolume || wantBox {
            let fl = try measured { try DepthMeasure.floor(depth: map, settings: settings, region: floorPolygon) }
            var floorDoc = Self.json(fl.plane)
            floorDoc["origin"] = fl.origin.rawValue
            floorDoc["points"] = fl.points
            floorDoc["rms_mm"] = fl.rms * 1000
            floorDoc["tolerance_mm"] = fl.tolerance * 1000
            doc["floor"] = floorDoc
            lines.append(fl.line(named: fl.origin == .ransac ? "the dominant plane (RANSAC)" : "the --floor polygon"))
            if wantVolume {
                let v = try measured { try DepthMeasure.volume(depth: map, settings: settings, floor: fl, region: region) }
                doc["volume_m3"] = v.volumeM3
                doc["volume_below_m3"] = v.volumeBelowM3
                doc["volume"] = ["above_pixels": v.abovePixels, "below_pixels": v.belowPixels, "points": v.points,
                                 "region": region.map { $0.description as Any } ?? NSNull()]
                lines.append(v.line + (region.map { ", over --roi \($0)" } ?? ", over the largest clusters"))
            }
            if wantBox {
                let b = try measured { try DepthMeasure.box(depth: map, settings: settings, floor: fl, region: region) }
                doc["length_m"] = b.lengthM
                doc["width_m"] = b.widthM
                doc["height_m"] = b.heightM
                doc["box"] = ["pixels": b.pixels, "corners": b.corners.map { [$0.x, $0.y, $0.z] }]
                lines.append(b.line)
            }
        }
        if json {
            let data = try JSONSerialization.data(withJSONObject: doc, options: [.prettyPrinted, .sortedKeys])
            print(String(decoding: data, as: UTF8.self))
        } else {
            print("\(name), frame \(f.index)")
            for l in lines { print(l) }
        }
    }

    static func json(_ p: FittedPlane) -> [String: Any] {
        ["normal": [p.normal.x, p.normal.y, p.normal.z], "d": p.d]
    }
}
