import CDepthKit

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
    withBilinearPointers(cols, rowsAxis) { axes in
        scaleMaskPlane(src, sw, axes, floats: dst, bytes: nil, dw, dh)
    }
}

/// A Float plane of width `sw` scaled bilinearly (tables `axes`) to `dw` × `dh`, into Floats
/// (`floats`, packed rows) or, when `bytes` is given, into its rows as `unorm8`:
/// v = (r0[i0]·(1 − wx) + r0[i1]·wx)·(1 − fy) + (r1[i0]·(1 − wx) + r1[i1]·wx)·fy.
/// Rows in parallel through a C-convention body: nothing allocated per call.
func scaleMaskPlane(_ src: UnsafePointer<Float>, _ sw: Int, _ axes: BilinearPointers,
                    floats: UnsafeMutablePointer<Float>?, bytes: PixelBuffer?, _ dw: Int, _ dh: Int) {
    var job = MaskScaleJob(src: src, sw: sw, dw: dw, axes: axes, floats: floats, bytes: bytes)
    parallelBands(dh, context: &job) { ctx, _, y0, y1 in
        let j = ctx!.assumingMemoryBound(to: MaskScaleJob.self).pointee
        let ci0 = j.axes.x0!, ci1 = j.axes.x1!, cf = j.axes.fx!, ri0 = j.axes.r0!, ri1 = j.axes.r1!, rf = j.axes.fy!
        let src = j.src, sw = j.sw, dw = j.dw
        for y in y0..<y1 {
            let r0 = src + Int(ri0[y]) * sw, r1 = src + Int(ri1[y]) * sw
            let fy = rf[y]
            if let bytes = j.bytes {
                let o = bytes.row(y, as: UInt8.self)
                for x in 0..<dw {
                    let i0 = Int(ci0[x]), i1 = Int(ci1[x]), wx = cf[x]
                    let v = (r0[i0] * (1 - wx) + r0[i1] * wx) * (1 - fy) + (r1[i0] * (1 - wx) + r1[i1] * wx) * fy
                    o[x] = UInt8(truncatingIfNeeded: unorm8Fast(v))
                }
            } else if let floats = j.floats {
                let o = floats + y * dw
                for x in 0..<dw {
                    let i0 = Int(ci0[x]), i1 = Int(ci1[x]), wx = cf[x]
                    o[x] = (r0[i0] * (1 - wx) + r0[i1] * wx) * (1 - fy) + (r1[i0] * (1 - wx) + r1[i1] * wx) * fy
                }
            }
        }
    }
}

private struct MaskScaleJob {
    let src: UnsafePointer<Float>
    let sw, dw: Int
    let axes: BilinearPointers
    let floats: UnsafeMutablePointer<Float>?
    let bytes: PixelBuffer?
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
    /// `floatMask`'s values at the output size, reused across frames (made on its first call).
    private var floatValues: [Float] = []
    /// `renderRGBA8`'s outputs (made on its first call).
    private var rgbaPool: BufferPool?

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
        floatValues = []
        rgbaPool = nil
    }

    public func reset() { state = nil; scratch = []; axes = nil; floatValues = []; rgbaPool = nil }

    public func render(_ buffer: PixelBuffer) throws -> PixelBuffer {
        let s = try state.checked(buffer, kernel: description)
        let out = try s.pool.makeBuffer()
        if case let (cols, rows)? = axes {
            // Scaled: the mask in Float at the depth size, then scaled straight into bytes (no
            // second Float plane), with the tables from `prepare`.
            scratch.withUnsafeMutableBufferPointer { m in
                Self.computeMask(buffer, into: m.baseAddress!, kind: kind, focus: focus, slope: slope, width: width)
                withBilinearPointers(cols, rows) { p in
                    scaleMaskPlane(m.baseAddress!, buffer.width, p, floats: nil, bytes: out, outputWidth, outputHeight)
                }
            }
        } else {
            // Same size: the mask goes straight to bytes, no Float plane.
            Self.computeMask(buffer, floats: nil, bytes: out, kind: kind, focus: focus, slope: slope, width: width)
        }
        out.markModified()
        return out
    }

    /// `render` with the mask as rgba8 (v, v, v, 255): the bytes `ImageIO.toRGBA8(render(depth))`
    /// gives, from a pool of this filter's own (one buffer, made on the first call), so a stream
    /// of frames allocates nothing.
    public func renderRGBA8(_ depth: PixelBuffer) throws -> PixelBuffer {
        let gray = try render(depth)
        let pool: BufferPool
        if let p = rgbaPool { pool = p } else {
            pool = BufferPool(format: FrameFormat(width: outputWidth, height: outputHeight, pixelFormat: .rgba8),
                              outputRetainedBufferCountHint: 1)
            rgbaPool = pool
        }
        let out = try pool.makeBuffer()
        var job = GrayToRGBAJob(gray: gray, out: out)
        parallelBands(outputHeight, context: &job) { ctx, _, y0, y1 in
            let j = ctx!.assumingMemoryBound(to: GrayToRGBAJob.self).pointee
            let w = j.gray.width
            for y in y0..<y1 {
                let g = j.gray.row(y, as: UInt8.self), o = j.out.row(y, as: UInt32.self)
                for x in 0..<w { o[x] = UInt32(littleEndian: UInt32(g[x]) &* 0x01_0101 | 0xFF00_0000) }
            }
        }
        out.markModified()
        return out
    }

    /// The mask as Float at the output size, for the depth effects (no rounding to 8 bits).
    ///
    /// Once `prepare` has seen `depth`'s format, the values go into an array this filter keeps
    /// and hands out again: a caller that lets go of the previous frame's mask before asking for
    /// the next makes nothing per frame. (One that still holds it keeps its values: the array is
    /// copied first, as any Swift array shared by two owners.)
    public func floatMask(_ depth: PixelBuffer) throws -> DepthMask {
        // `prepare` checked the format and the output size of what it was given.
        guard let s = state, depth.frameFormat == s.input else {
            try requireFormat(depth.frameFormat, [.depthFloat32], kernel: description)
            guard outputWidth > 0, outputHeight > 0 else {
                throw RenderError.invalidParameter("\(description): output size \(outputWidth)x\(outputHeight) must be positive")
            }
            return Self.mask(depth: depth, kind: kind, focus: focus, slope: slope, width: width)
                .scaled(toWidth: outputWidth, height: outputHeight)
        }
        let n = outputWidth * outputHeight
        if floatValues.count != n { floatValues = [Float](repeating: 0, count: n) }
        floatValues.withUnsafeMutableBufferPointer { out in
            if case let (cols, rows)? = axes {
                scratch.withUnsafeMutableBufferPointer { m in
                    Self.computeMask(depth, into: m.baseAddress!, kind: kind, focus: focus, slope: slope, width: width)
                    withBilinearPointers(cols, rows) { p in
                        scaleMaskPlane(m.baseAddress!, depth.width, p, floats: out.baseAddress!, bytes: nil,
                                       outputWidth, outputHeight)
                    }
                }
            } else {
                Self.computeMask(depth, into: out.baseAddress!, kind: kind, focus: focus, slope: slope, width: width)
            }
        }
        return DepthMask(width: outputWidth, height: outputHeight, values: floatValues)
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
        computeMask(depth, floats: m, bytes: nil, kind: kind, focus: f, slope: s, width: bw)
    }

    /// Runs the mask over `depth` row by row into `floats` (packed rows at the depth size) or,
    /// when `bytes` is given, into its rows (`unorm8`). Rows in parallel through a C-convention
    /// body: nothing allocated per call.
    static func computeMask(_ depth: PixelBuffer, floats: UnsafeMutablePointer<Float>?, bytes: PixelBuffer?,
                            kind: DepthMaskKind, focus f: Float, slope s: Float, width bw: Float) {
        let stats = validDepthRange(depth)
        let invMax: Float = stats.count > 0 ? 1 / stats.max : 0
        let denom: Float = stats.count > 0 ? 1 / stats.min - invMax : 0
        // dmin == dmax: p = 1 for valid pixels (numerator 0 times 0, plus 1).
        let same = stats.count == 0 || !(denom > 0)
        var job = MaskJob(depth: depth, floats: floats, bytes: bytes, band: kind == .bandpass ? 1 : 0,
                          invMax: invMax, numScale: same ? 0 : 1, div: same ? 1 : denom, pBias: same ? 1 : 0,
                          focus: f, slope: s, halfWidth: bw / 2)
        parallelBands(depth.height, context: &job) { ctx, _, y0, y1 in
            let j = ctx!.assumingMemoryBound(to: MaskJob.self).pointee
            let w = j.depth.width
            for y in y0..<y1 {
                dl_k_depth_mask(j.depth.row(y, as: Float.self), w, j.band, j.invMax, j.numScale, j.div, j.pBias,
                                j.focus, j.slope, j.halfWidth, j.floats.map { $0 + y * w }, j.bytes?.row(y, as: UInt8.self))
            }
        }
    }
}

private struct MaskJob {
    let depth: PixelBuffer
    let floats: UnsafeMutablePointer<Float>?
    let bytes: PixelBuffer?
    let band: Int32
    let invMax, numScale, div, pBias, focus, slope, halfWidth: Float
}

private struct GrayToRGBAJob {
    let gray: PixelBuffer
    let out: PixelBuffer
}
