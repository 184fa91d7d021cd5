/// Reads depth maps into the program's one form: meters as `depthFloat32`, invalid samples 0.
public enum DepthIO {
    /// Units per meter of 16-bit depth when none is given (RealSense/Kinect millimeters).
    public static let defaultDepthScale: Float = 1000

    /// The scale to use for `depthScale`, or `.invalidArgument` for zero, negative, NaN or infinite.
    public static func validatedScale(_ depthScale: Float?) throws -> Float {
        guard let s = depthScale else { return defaultDepthScale }
        guard s > 0, s.isFinite else {
            throw DepthKitError.invalidArgument("--depth-scale must be a positive number, got \(s)")
        }
        return s
    }

    /// Reads a depth map as meters.
    ///
    /// 16-bit PNG/PGM counts are divided by `depthScale` (units per meter; 1000 when nil);
    /// a gray PFM is taken as meters. 8-bit images are rejected. Non-finite and negative samples
    /// become 0 (invalid); a map with no valid sample throws.
    public static func readDepth(_ path: String, depthScale: Float? = nil, pgmLittleEndian: Bool = false) throws -> DepthData {
        let scale = try validatedScale(depthScale)
        let raw = try ImageIO.read(path, pgmLittleEndian: pgmLittleEndian)
        let out: PixelBuffer
        switch raw.format {
        case .gray16:
            out = try PixelBuffer.make(width: raw.width, height: raw.height, format: .depthFloat32, for: path)
            parallelRows(raw.height) { rows in
                for y in rows {
                    let s = raw.row(y, as: UInt16.self), d = out.row(y, as: Float.self)
                    for x in 0..<raw.width { d[x] = Float(s[x]) / scale } // divide: 5000/5000 is exactly 1
                }
            }
        case .depthFloat32:
            out = raw
            canonicalize(out)
        case .gray8, .rgba8, .rgb8, .bgra8:
            throw DepthKitError.file(path: path, problem:
                "8-bit image is not a depth map (depth is a 16-bit PNG/PGM or a PFM)")
        case .depthFloat16, .disparityFloat16, .disparityFloat32:
            throw DepthKitError.file(path: path, problem: "\(raw.format) image is not a depth map")
        }
        let depth = DepthData(map: out, accuracy: .absolute)
        try requireValidSamples(depth, path: path)
        return depth
    }

    /// Reads a Middlebury disparity PFM (pixels; invalid marked +Inf) as depth in meters:
    /// `Z = focal·baseline / (d + doffs)`.
    ///
    /// - Parameters:
    ///   - focal: focal length in pixels.
    ///   - baseline: camera baseline. The depth comes out in the unit of the baseline, so give it in
    ///     meters (Middlebury's calib.txt gives millimeters: divide by 1000).
    ///   - doffs: x-difference of the principal points in pixels (Middlebury's `doffs`).
    ///   - disparityScale: for 8-bit disparity PNGs (Middlebury `disp0GT`-style): disparity in pixels
    ///     is the 8-bit value divided by this; 0 is invalid. Nil reads a PFM.
    public static func readDisparityAsDepth(_ path: String, focal: Float, baseline: Float, doffs: Float,
                                            disparityScale: Float? = nil) throws -> DepthData {
        guard focal > 0, focal.isFinite else { throw DepthKitError.invalidArgument("--focal must be a positive number, got \(focal)") }
        guard baseline > 0, baseline.isFinite else {
            throw DepthKitError.invalidArgument("--baseline must be a positive number, got \(baseline)")
        }
        guard doffs.isFinite else { throw DepthKitError.invalidArgument("--doffs must be a finite number, got \(doffs)") }
        if let s = disparityScale, !(s > 0 && s.isFinite) {
            throw DepthKitError.invalidArgument("--disparity-scale must be a positive number, got \(s)")
        }
        var raw = try ImageIO.read(path)
        if raw.format == .gray8 {
            guard let s = disparityScale else {
                throw DepthKitError.file(path: path, problem: "8-bit disparity needs --disparity-scale (8-bit value per pixel of disparity)")
            }
            raw = try eightBitDisparity(raw, scale: s, path: path)
        } else if disparityScale != nil {
            throw DepthKitError.file(path: path, problem: "--disparity-scale is for 8-bit disparity PNGs, got a \(raw.format) image")
        }
        guard raw.format == .depthFloat32 else {
            throw DepthKitError.file(path: path, problem: "disparity must be a gray PFM or an 8-bit gray PNG, got a \(raw.format) image")
        }
        let depth = DepthData.fromPixelDisparity(raw, focal: focal, baseline: baseline, doffs: doffs)
        try requireValidSamples(depth, path: path)
        return depth
    }

    /// 8-bit disparity (Middlebury `disp0GT`-style PNG) → disparity in pixels: value / scale;
    /// 0 (unknown) becomes +Inf, which `fromPixelDisparity` makes invalid whatever `doffs` is.
    static func eightBitDisparity(_ raw: PixelBuffer, scale: Float, path: String) throws -> PixelBuffer {
        let out = try PixelBuffer.make(width: raw.width, height: raw.height, format: .depthFloat32, for: path)
        for y in 0..<raw.height {
            let s = raw.row(y, as: UInt8.self), d = out.row(y, as: Float.self)
            for x in 0..<raw.width { d[x] = s[x] == 0 ? .infinity : Float(s[x]) / scale }
        }
        return out
    }

    /// Reads a gray PFM of inverse depth (1/m) as depth in meters: `Z = 1/v`; v ≤ 0 or non-finite
    /// is invalid.
    public static func readInverseDepth(_ path: String) throws -> DepthData {
        let raw = try ImageIO.read(path)
        guard raw.format == .depthFloat32 else {
            throw DepthKitError.file(path: path, problem: "inverse depth must be a gray PFM (1/m), got a \(raw.format) image")
        }
        let inverse = try PixelBuffer.make(width: raw.width, height: raw.height, format: .disparityFloat32, for: path)
        for y in 0..<raw.height { inverse.row(y).copyMemory(from: raw.row(y), byteCount: raw.width * 4) }
        let depth = DepthData(map: inverse, accuracy: .absolute).converting(to: .depthFloat32)
        try requireValidSamples(depth, path: path)
        return depth
    }

    /// Sets every invalid sample (0, NaN, ±Inf, negative) of a Float32 map to 0.
    public static func canonicalize(_ map: PixelBuffer) {
        precondition(map.format == .depthFloat32 || map.format == .disparityFloat32)
        parallelRows(map.height) { rows in
            for y in rows {
                let r = map.row(y, as: Float.self)
                for x in 0..<map.width where !isValidDepth(r[x]) { r[x] = 0 }
            }
        }
        map.markModified()
    }

    static func requireValidSamples(_ depth: DepthData, path: String) throws {
        if depth.depthStatistics().validCount == 0 {
            throw DepthKitError.file(path: path, problem: "depth has no valid samples (all zero, NaN, infinite or negative)")
        }
    }
}
