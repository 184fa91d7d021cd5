import CShim

/// Which depth mask of the "video depth maps" effects.
public enum DepthMaskKind: String, Hashable, Sendable, CaseIterable {
    /// m = clamp(0.5 + s·(p − f)): near (p above the focus) is kept.
    case highpass
    /// m = clamp(0.5 + s·(w/2 − |p − f|)): a slab of width w around the focus is kept.
    case bandpass
}

/// A mask of values in [0, 1], row-major, at some image size; what the depth effects mix by.
public struct DepthMask: Equatable, Sendable {
    public let width: Int
    public let height: Int
    public var values: [Float]

    public init(width: Int, height: Int, values: [Float]) {
        precondition(width > 0 && height > 0 && values.count == width * height, "DepthMask: \(values.count) values for \(width)x\(height)")
        self.width = width; self.height = height; self.values = values
    }

    /// A gray8 buffer (the `DepthMaskFilter` output) read back as m = v/255.
    public init(gray8 buffer: PixelBuffer) {
        precondition(buffer.format == .gray8, "DepthMask(gray8:) on \(buffer.format)")
        var v = [Float](repeating: 0, count: buffer.width * buffer.height)
        for y in 0..<buffer.height {
            let r = buffer.row(y, as: UInt8.self)
            for x in 0..<buffer.width { v[y * buffer.width + x] = Float(r[x]) / 255 }
        }
        self.init(width: buffer.width, height: buffer.height, values: v)
    }

    public subscript(x: Int, y: Int) -> Float { values[y * width + x] }

    /// This mask at another size, bilinear with clamp to edge at the target's pixel centers
    /// (the fragment mixer's rule).
    public func scaled(toWidth w: Int, height h: Int) -> DepthMask {
        if w == width && h == height { return self }
        var out = [Float](repeating: 0, count: w * h)
        values.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { dst in
                scaleBilinear(src.baseAddress!, width, height, dst.baseAddress!, w, h)
            }
        }
        return DepthMask(width: w, height: h, values: out)
    }
}

/// Bilinear scaling of a Float plane (clamp to edge, sampling at target pixel centers).
func scaleBilinear(_ src: UnsafePointer<Float>, _ sw: Int, _ sh: Int, _ dst: UnsafeMutablePointer<Float>, _ dw: Int, _ dh: Int) {
    let cols = BilinearAxis(source: sw, target: dw), rowsAxis = BilinearAxis(source: sh, target: dh)
    cols.i0.withUnsafeBufferPointer { x0 in
    cols.i1.withUnsafeBufferPointer { x1 in
    cols.f.withUnsafeBufferPointer { fx in
        parallelRows(dh) { rows in
            for y in rows {
                let r0 = src + Int(rowsAxis.i0[y]) * sw, r1 = src + Int(rowsAxis.i1[y]) * sw
                let fy = rowsAxis.f[y], o = dst + y * dw
                for x in 0..<dw {
                    let i0 = Int(x0[x]), i1 = Int(x1[x]), wx = fx[x]
                    let top = r0[i0] * (1 - wx) + r0[i1] * wx
                    let bottom = r1[i0] * (1 - wx) + r1[i1] * wx
                    o[x] = top * (1 - fy) + bottom * fy
                }
            }
        }
    }}}
}

/// The depth masks of the "video depth maps" effects: depthFloat32 in, a gray8 mask out at
/// the color image's size (`outputWidth` × `outputHeight`).
///
/// p = clamp((1/d − 1/dmax)/(1/dmin − 1/dmax)) is the frame's normalized disparity, with dmin
/// and dmax its valid minimum and maximum (p = 1 for every valid pixel when dmin == dmax).
/// High-pass m = clamp(0.5 + s·(p − f)); band-pass m = clamp(0.5 + s·(w/2 − |p − f|)); invalid
/// depth gives m = 0. The mask is computed at the depth size in Float, scaled bilinearly (clamp
/// to edge, at output pixel centers) to the output size, and stored with `unorm8`.
public final class DepthMaskFilter: FilterRenderer {
    public let kind: DepthMaskKind
    public let focus: Float
    /// 4 is soft, 100 sharp.
    public let slope: Float
    /// Band-pass slab width in normalized disparity.
    public let width: Float
    public let outputWidth: Int
    public let outputHeight: Int
    public var description: String { kind.rawValue }

    public static let softSlope: Float = 4
    public static let sharpSlope: Float = 100

    private var state: PreparedState?
    /// The mask at the depth size when it is scaled to the output, reused across frames.
    private var scratch: [Float] = []
    /// Bilinear tables from the depth size to the output size (nil when the sizes match).
    private var axes: (cols: BilinearAxis, rows: BilinearAxis)?

    public init(kind: DepthMaskKind, focus: Float, slope: Float = DepthMaskFilter.softSlope, width: Float = 0.1,
                outputWidth: Int, outputHeight: Int) {
        self.kind = kind; self.focus = focus; self.slope = slope; self.width = width
        self.outputWidth = outputWidth; self.outputHeight = outputHeight
    }

    public var inputFormat: FrameFormat? { state?.input }
    public var outputFormat: FrameFormat? { state?.output }

    public func prepare(input: FrameFormat, outputRetainedBufferCountHint: Int) throws {
        try requireFormat(input, [.depthFloat32], kernel: description)
        guard outputWidth > 0, outputHeight > 0 else {
            throw RenderError.invalidParameter("\(description): output size \(outputWidth)x\(outputHeight) must be positive")
        }
        guard focus.isFinite, slope.isFinite, width.isFinite else {
            throw RenderError.invalidParameter("\(description): focus, slope and width must be finite")
        }
        state = try PreparedState(input: input,
                                  output: FrameFormat(width: outputWidth, height: outputHeight, pixelFormat: .gray8),
                                  hint: outputRetainedBufferCountHint)
        axes = input.width == outputWidth && input.height == outputHeight ? nil
            : (BilinearAxis(source: input.width, target: outputWidth), BilinearAxis(source: input.height, target: outputHeight))
        // Only a mask that is scaled needs the Float plane at the depth size.
        scratch = axes == nil ? [] : [Float](repeating: 0, count: input.width * input.height)
    }

    public func reset() { state = nil; scratch = []; axes = nil }

    public func render(_ buffer: PixelBuffer) throws -> PixelBuffer {
        let s = try state.checked(buffer, kernel: description)
        let out = try s.pool.makeBuffer()
        let ow = outputWidth, oh = outputHeight, dw = buffer.width, dh = buffer.height
        scratch.withUnsafeMutableBufferPointer { m in
            if dw == ow && dh == oh {
                // Same size: the mask goes straight to bytes, no Float plane.
                Self.computeMask(buffer, kind: kind, focus: focus, slope: slope, width: width) { y in
                    (nil, out.row(y, as: UInt8.self))
                }
            } else {
                Self.computeMask(buffer, into: m.baseAddress!, kind: kind, focus: focus, slope: slope, width: width)
                // Scale straight into bytes: same sampling as `scaleBilinear`, no second Float plane.
                // Tables from `prepare` (plain loops below: LLVM vectorizes them itself).
                let (cols, rowsAxis) = axes ?? (BilinearAxis(source: dw, target: ow), BilinearAxis(source: dh, target: oh))
                let src = UnsafePointer(m.baseAddress!)
                cols.i0.withUnsafeBufferPointer { ci0 in
                cols.i1.withUnsafeBufferPointer { ci1 in
                cols.f.withUnsafeBufferPointer { cf in
                parallelRows(oh) { rows in
                    for y in rows {
                        let r0 = src + Int(rowsAxis.i0[y]) * dw, r1 = src + Int(rowsAxis.i1[y]) * dw
                        let fy = rowsAxis.f[y], o = out.row(y, as: UInt8.self)
                        for x in 0..<ow {
                            let i0 = Int(ci0[x]), i1 = Int(ci1[x]), wx = cf[x]
                            let v = (r0[i0] * (1 - wx) + r0[i1] * wx) * (1 - fy) + (r1[i0] * (1 - wx) + r1[i1] * wx) * fy
                            o[x] = UInt8(truncatingIfNeeded: unorm8Fast(v))
                        }
                    }
                }
                }}}
            }
        }
        out.markModified()
        return out
    }

    /// The mask as Float at the output size, for the depth effects (no rounding to 8 bits).
    public func floatMask(_ depth: PixelBuffer) throws -> DepthMask {
        try requireFormat(depth.frameFormat, [.depthFloat32], kernel: description)
        guard outputWidth > 0, outputHeight > 0 else {
            throw RenderError.invalidParameter("\(description): output size \(outputWidth)x\(outputHeight) must be positive")
        }
        return Self.mask(depth: depth, kind: kind, focus: focus, slope: slope, width: width)
            .scaled(toWidth: outputWidth, height: outputHeight)
    }

    /// The mask as Float at the depth map's own size.
    public static func mask(depth: PixelBuffer, kind: DepthMaskKind, focus: Float, slope: Float = softSlope,
                            width: Float = 0.1) -> DepthMask {
        precondition(depth.format == .depthFloat32, "DepthMaskFilter.mask on \(depth.format)")
        var v = [Float](repeating: 0, count: depth.width * depth.height)
        v.withUnsafeMutableBufferPointer { computeMask(depth, into: $0.baseAddress!, kind: kind, focus: focus, slope: slope, width: width) }
        return DepthMask(width: depth.width, height: depth.height, values: v)
    }

    static func computeMask(_ depth: PixelBuffer, into m: UnsafeMutablePointer<Float>, kind: DepthMaskKind,
                            focus f: Float, slope s: Float, width bw: Float) {
        let w = depth.width
        computeMask(depth, kind: kind, focus: f, slope: s, width: bw) { y in (m + y * w, nil) }
    }

    /// Runs the mask over `depth` row by row into what `target(y)` names for row y: a Float row
    /// or an 8-bit row (`unorm8`).
    static func computeMask(_ depth: PixelBuffer, kind: DepthMaskKind, focus f: Float, slope s: Float, width bw: Float,
                            target: (Int) -> (UnsafeMutablePointer<Float>?, UnsafeMutablePointer<UInt8>?)) {
        let stats = validDepthRange(depth)
        let w = depth.width
        let invMax: Float = stats.count > 0 ? 1 / stats.max : 0
        let denom: Float = stats.count > 0 ? 1 / stats.min - invMax : 0
        // dmin == dmax: p = 1 for valid pixels (numerator 0 times 0, plus 1).
        let same = stats.count == 0 || !(denom > 0)
        let numScale: Float = same ? 0 : 1, pBias: Float = same ? 1 : 0, div: Float = same ? 1 : denom
        let band: Int32 = kind == .bandpass ? 1 : 0
        let hb = bw / 2
        parallelRows(depth.height) { rows in
            for y in rows {
                let r = depth.row(y, as: Float.self)
                let (fo, bo) = target(y)
                dl_k_depth_mask(r, w, band, invMax, numScale, div, pBias, f, s, hb, fo, bo)
            }
        }
    }
}
