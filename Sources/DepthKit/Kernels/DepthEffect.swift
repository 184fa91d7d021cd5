import Foundation

/// The "video depth maps" effects: out = mix(effect(image), image, m) per channel, with m the
/// depth mask at the image size (m = 1 keeps the image, m = 0 shows the effect).
public enum DepthEffectKind: String, Hashable, Sendable, CaseIterable {
    /// effect = the image posterized to 4 levels a channel, black where the luma has an edge.
    case comic
    /// effect = the background image scaled to the image size, or solid green (0, 255, 0, 255).
    case greenscreen
    /// effect = the image box-blurred with radius R·(1 − m), R = 10 px.
    case blur
}

public enum DepthEffect {
    /// Blur radius at m = 0, in pixels.
    public static let blurRadius: Float = 10
    /// Comic edges: squared Sobel magnitude of 8-bit luma above this is an edge (128² ⇒ a
    /// magnitude of 128 in 0…255 luma units, 0.5 in normalized units).
    public static let comicEdgeThresholdSquared: Int32 = 128 * 128

    /// Applies `kind` to `image` (rgba8 or bgra8) with `mask`; the result is a new buffer in the
    /// image's format and size.
    ///
    /// - `mask` is scaled bilinearly to the image size when its size differs.
    /// - `background` (greenscreen only) must have the image's pixel format; it is scaled
    ///   bilinearly (clamp to edge, at pixel centers) to the image size. nil means solid green.
    ///
    /// Effect values are not rounded before the mix: out = round(effect·(1 − m) + image·m).
    /// Alpha goes through the same mix; comic and blur keep the image's alpha in the effect.
    ///
    /// comic, exactly: each of R, G, B becomes round(c·3/255)·85 (levels 0, 85, 170, 255), the
    /// effect's alpha is the image's. Luma is L = (77R + 150G + 29B + 128) >> 8. With L read
    /// clamp-to-edge, gx = [L(x+1,y−1) + 2L(x+1,y) + L(x+1,y+1)] − [same at x−1], gy likewise
    /// with y±1; where gx² + gy² > `comicEdgeThresholdSquared` the effect's R, G, B are 0.
    ///
    /// blur, exactly: r = ⌊10·(1 − m) + 0.5⌋ (nearest, ties up); the effect is the mean of each channel over
    /// the box [x − r, x + r] × [y − r, y + r] intersected with the image (the box shrinks at
    /// borders), from a summed-area table per channel so each pixel is O(1).
    public static func apply(kind: DepthEffectKind, image: PixelBuffer, mask: DepthMask,
                             background: PixelBuffer? = nil) throws -> PixelBuffer {
        let r = DepthEffectRenderer(kind: kind)
        try r.prepare(image: image.frameFormat, maskWidth: mask.width, maskHeight: mask.height,
                      background: background?.frameFormat, outputRetainedBufferCountHint: 1)
        return try r.render(image: image, mask: mask, background: background)
    }

    // MARK: comic

    /// comic's posterized level of each 8-bit value: round(c·3/255)·85.
    static let comicLevels: [Float] = (0..<256).map { Float(($0 * 3 + 127) / 255 * 85) }

    // Each pass below runs its rows through a C-convention body of a context struct
    // (`parallelBands(_:context:_:)`): nothing is allocated per frame.

    static func comic(_ img: PixelBuffer, _ m: UnsafePointer<Float>, _ out: PixelBuffer, luma L: UnsafeMutablePointer<UInt8>) {
        comicLevels.withUnsafeBufferPointer { lv in
            var job = EffectJob(img: img, out: out, mask: m, plane: UnsafeMutableRawPointer(L),
                                levels: lv.baseAddress!, axes: nil, background: nil)
            parallelBands(img.height, context: &job) { ctx, _, y0, y1 in
                let j = ctx!.assumingMemoryBound(to: EffectJob.self).pointee
                let img = j.img, w = img.width, L = j.plane!.assumingMemoryBound(to: UInt8.self)
                let bgr = img.format == .bgra8
                let ri = bgr ? 2 : 0, bi = bgr ? 0 : 2
                for y in y0..<y1 {
                    let p = img.row(y, as: UInt8.self), o = L + y * w
                    for x in 0..<w {
                        let r = UInt32(p[4 * x + ri]), g = UInt32(p[4 * x + 1]), b = UInt32(p[4 * x + bi])
                        o[x] = UInt8(truncatingIfNeeded: (77 * r + 150 * g + 29 * b + 128) >> 8)
                    }
                }
            }
            parallelBands(img.height, context: &job) { ctx, _, y0, y1 in
                let j = ctx!.assumingMemoryBound(to: EffectJob.self).pointee
                let img = j.img, out = j.out, m = j.mask, post = j.levels!
                let w = img.width, h = img.height, L = j.plane!.assumingMemoryBound(to: UInt8.self)
                let threshold = DepthEffect.comicEdgeThresholdSquared
                for y in y0..<y1 {
                    let ym = L + max(y - 1, 0) * w, y0 = L + y * w, yp = L + min(y + 1, h - 1) * w
                    let p4 = img.row(y, as: SIMD4<UInt8>.self), o4 = out.row(y, as: SIMD4<UInt8>.self), mr = m + y * w
                    for x in 0..<w {
                        let xm = max(x - 1, 0), xp = min(x + 1, w - 1)
                        // |gx|, |gy| ≤ 1020: wrapping ops never wrap, and skip the overflow checks.
                        let gx = (Int32(ym[xp]) &+ 2 &* Int32(y0[xp]) &+ Int32(yp[xp]))
                            &- (Int32(ym[xm]) &+ 2 &* Int32(y0[xm]) &+ Int32(yp[xm]))
                        let gy = (Int32(yp[xm]) &+ 2 &* Int32(yp[x]) &+ Int32(yp[xp]))
                            &- (Int32(ym[xm]) &+ 2 &* Int32(ym[x]) &+ Int32(ym[xp]))
                        let keep: Float = gx &* gx &+ gy &* gy > threshold ? 0 : 1
                        let mv = mr[x], e = 1 - mv
                        // Channels 0–2 as one SIMD4 (lane 3 computed and dropped: alpha is copied).
                        let px = p4[x]
                        let lv = F4(post[Int(px.x)], post[Int(px.y)], post[Int(px.z)], 0)
                        var b = bytes(lv * keep * e + floats(px) * mv + 0.5)
                        b.w = px.w
                        o4[x] = b
                    }
                }
            }
        }
    }

    // MARK: green screen

    static func solidGreen(_ img: PixelBuffer, _ m: UnsafePointer<Float>, _ out: PixelBuffer) {
        var job = EffectJob(img: img, out: out, mask: m, plane: nil, levels: nil, axes: nil, background: nil)
        parallelBands(img.height, context: &job) { ctx, _, y0, y1 in
            let j = ctx!.assumingMemoryBound(to: EffectJob.self).pointee
            let img = j.img, out = j.out, m = j.mask, w = img.width
            // (0, 255, 0, 255) in either byte order: G is byte 1 and A byte 3 in both.
            let green = SIMD4<Float>(0, 255, 0, 255)
            for y in y0..<y1 {
                let p = img.row(y, as: SIMD4<UInt8>.self), o = out.row(y, as: SIMD4<UInt8>.self), mr = m + y * w
                for x in 0..<w {
                    let mv = mr[x]
                    let v = green * (1 - mv) + floats(p[x]) * mv + 0.5
                    o[x] = bytes(v)
                }
            }
        }
    }

    static func greenscreen(_ img: PixelBuffer, _ m: UnsafePointer<Float>, _ bg: PixelBuffer,
                            _ out: PixelBuffer, _ cols: BilinearAxis, _ rowsAxis: BilinearAxis) {
        withBilinearPointers(cols, rowsAxis) { axes in
            var job = EffectJob(img: img, out: out, mask: m, plane: nil, levels: nil, axes: axes, background: bg)
            parallelBands(img.height, context: &job) { ctx, _, y0, y1 in
                let j = ctx!.assumingMemoryBound(to: EffectJob.self).pointee
                let img = j.img, out = j.out, m = j.mask, bg = j.background!, w = img.width
                let ci0 = j.axes!.x0!, ci1 = j.axes!.x1!, cf = j.axes!.fx!
                let ri0 = j.axes!.r0!, ri1 = j.axes!.r1!, rf = j.axes!.fy!
                for y in y0..<y1 {
                    let r0 = bg.row(Int(ri0[y]), as: SIMD4<UInt8>.self)
                    let r1 = bg.row(Int(ri1[y]), as: SIMD4<UInt8>.self)
                    let fy = rf[y]
                    let p = img.row(y, as: SIMD4<UInt8>.self), o = out.row(y, as: SIMD4<UInt8>.self), mr = m + y * w
                    for x in 0..<w {
                        let i0 = Int(ci0[x]), i1 = Int(ci1[x]), wx = cf[x]
                        let top = floats(r0[i0]) * (1 - wx) + floats(r0[i1]) * wx
                        let bottom = floats(r1[i0]) * (1 - wx) + floats(r1[i1]) * wx
                        let e = top * (1 - fy) + bottom * fy
                        let mv = mr[x]
                        let v = e * (1 - mv) + floats(p[x]) * mv + 0.5
                        o[x] = bytes(v)
                    }
                }
            }
        }
    }

    // MARK: blur

    static func blur(_ img: PixelBuffer, _ m: UnsafePointer<Float>, _ out: PixelBuffer,
                     sat: UnsafeMutablePointer<SIMD4<UInt32>>) {
        let w = img.width, h = img.height
        let sw = w + 1
        // Summed-area table (`sat`: (w + 1)·(h + 1) entries), 4 channels interleaved:
        // S[y][x] = sum over rows < y, columns < x.
        // UInt32 with wrapping arithmetic: box sums (≤ 21²·255) are exact even if totals wrap.
        sat.initialize(repeating: .zero, count: sw)
        var job = EffectJob(img: img, out: out, mask: m, plane: UnsafeMutableRawPointer(sat), levels: nil,
                            axes: nil, background: nil)
        parallelBands(h, context: &job) { ctx, _, y0, y1 in
            let j = ctx!.assumingMemoryBound(to: EffectJob.self).pointee
            let img = j.img, w = img.width, sw = w + 1, sat = j.plane!.assumingMemoryBound(to: SIMD4<UInt32>.self)
            for y in y0..<y1 {
                let p = img.row(y, as: SIMD4<UInt8>.self), s = sat + (y + 1) * sw
                var acc = SIMD4<UInt32>.zero
                s[0] = .zero
                for x in 0..<w {
                    acc &+= SIMD4<UInt32>(truncatingIfNeeded: p[x])
                    s[x + 1] = acc
                }
            }
        }
        // Columns: add each row's prefix to the next, in column bands.
        parallelBands(sw, minimumRowsPerBand: 64, context: &job) { ctx, _, x0, x1 in
            let j = ctx!.assumingMemoryBound(to: EffectJob.self).pointee
            let h = j.img.height, sw = j.img.width + 1, sat = j.plane!.assumingMemoryBound(to: SIMD4<UInt32>.self)
            for y in 1..<h {
                let prev = sat + y * sw, cur = sat + (y + 1) * sw
                for x in x0..<x1 { cur[x] &+= prev[x] }
            }
        }
        parallelBands(h, context: &job) { ctx, _, y0, y1 in
            let j = ctx!.assumingMemoryBound(to: EffectJob.self).pointee
            let img = j.img, out = j.out, m = j.mask, w = img.width, h = img.height, sw = w + 1
            let sat = j.plane!.assumingMemoryBound(to: SIMD4<UInt32>.self)
            let R = DepthEffect.blurRadius
            for y in y0..<y1 {
                let p = img.row(y, as: SIMD4<UInt8>.self), o = out.row(y, as: SIMD4<UInt8>.self), mr = m + y * w
                for x in 0..<w {
                    let mv = mr[x]
                    let r = Int(floorU32(R * (1 - mv) + 0.5))
                    let x0 = max(x - r, 0), x1 = min(x + r, w - 1) + 1
                    let y0 = max(y - r, 0), y1 = min(y + r, h - 1) + 1
                    let sum = sat[y1 * sw + x1] &- sat[y0 * sw + x1] &- sat[y1 * sw + x0] &+ sat[y0 * sw + x0]
                    let count = Float((x1 - x0) * (y1 - y0))
                    let e = SIMD4(Float(sum.x), Float(sum.y), Float(sum.z), Float(sum.w)) / count
                    let v = e * (1 - mv) + floats(p[x]) * mv + 0.5
                    o[x] = bytes(v)
                }
            }
        }
    }
}

/// The values one effect pass reads (`DepthEffect`'s kernels): the image, the output, the mask
/// at the image size, and what the pass needs besides (comic's luma plane or blur's summed-area
/// table, comic's levels, greenscreen's background and its sampling tables).
private struct EffectJob {
    let img: PixelBuffer
    let out: PixelBuffer
    let mask: UnsafePointer<Float>
    let plane: UnsafeMutableRawPointer?
    let levels: UnsafePointer<Float>?
    let axes: BilinearPointers?
    let background: PixelBuffer?
}

/// `DepthEffect.apply` for a stream of frames: everything a frame needs (the mask at the image
/// size, comic's luma plane, blur's summed-area table, the bilinear tables for the mask and the
/// background, the output pool) is allocated in `prepare` and reused, so `render` allocates
/// nothing in steady state. Outputs come from a pool of `outputRetainedBufferCountHint` buffers.
/// Same results as `DepthEffect.apply`, which runs one of these.
public final class DepthEffectRenderer {
    public let kind: DepthEffectKind
    public var description: String { kind.rawValue }

    private var state: PreparedState?
    private var maskPlane: UnsafeMutablePointer<Float>?
    private var luma: UnsafeMutablePointer<UInt8>?
    private var sat: UnsafeMutablePointer<SIMD4<UInt32>>?
    /// Bilinear tables from a source size to the image size, kept for the last size seen.
    private var maskAxes = BilinearAxesCache()
    private var backgroundAxes = BilinearAxesCache()

    public init(kind: DepthEffectKind) { self.kind = kind }

    deinit { free() }

    public var inputFormat: FrameFormat? { state?.input }
    public var outputFormat: FrameFormat? { state?.output }

    /// Prepares for images of `image`'s format (rgba8 or bgra8). The mask and background sizes
    /// are optional hints: their sampling tables are built now, or on the first frame of a size.
    public func prepare(image: FrameFormat, maskWidth: Int? = nil, maskHeight: Int? = nil,
                        background: FrameFormat? = nil, outputRetainedBufferCountHint: Int) throws {
        guard image.pixelFormat == .rgba8 || image.pixelFormat == .bgra8, image.width > 0, image.height > 0 else {
            throw RenderError.formatMismatch(kernel: kind.rawValue, expected: "rgba8 or bgra8", got: image)
        }
        free()
        state = nil
        let w = image.width, h = image.height
        state = try PreparedState(input: image, output: image, hint: outputRetainedBufferCountHint)
        maskPlane = .allocate(capacity: w * h)
        switch kind {
        case .comic: luma = .allocate(capacity: w * h)
        case .blur:
            sat = .allocate(capacity: (w + 1) * (h + 1))
            sat!.initialize(repeating: .zero, count: (w + 1) * (h + 1))
        case .greenscreen: break
        }
        if let mw = maskWidth, let mh = maskHeight, mw > 0, mh > 0 { _ = maskAxes.axes(from: mw, mh, to: w, h) }
        if kind == .greenscreen, let b = background { _ = backgroundAxes.axes(from: b.width, b.height, to: w, h) }
    }

    public func reset() { free(); state = nil }

    private func free() {
        maskPlane?.deallocate(); luma?.deallocate(); sat?.deallocate()
        maskPlane = nil; luma = nil; sat = nil; maskAxes = BilinearAxesCache(); backgroundAxes = BilinearAxesCache()
    }

    /// Applies the effect to `image` with `mask` (any size; scaled bilinearly to the image size,
    /// values clamped to [0, 1], NaN as 0) and, for greenscreen, `background` (nil: solid green).
    public func render(image: PixelBuffer, mask: DepthMask, background: PixelBuffer? = nil) throws -> PixelBuffer {
        try mask.values.withUnsafeBufferPointer { v in
            try render(image: image, mask: v.baseAddress!, maskWidth: mask.width, maskHeight: mask.height,
                       background: background)
        }
    }

    /// `render(image:mask:background:)` with the mask as a plane of `maskWidth` × `maskHeight`
    /// values (packed rows), read during the call only.
    func render(image: PixelBuffer, mask: UnsafePointer<Float>, maskWidth: Int, maskHeight: Int,
                background: PixelBuffer?) throws -> PixelBuffer {
        guard image.format == .rgba8 || image.format == .bgra8 else {
            throw RenderError.formatMismatch(kernel: kind.rawValue, expected: "rgba8 or bgra8", got: image.frameFormat)
        }
        let s = try state.checked(image, kernel: kind.rawValue)
        if kind == .greenscreen, let background, background.format != image.format {
            throw RenderError.formatMismatch(kernel: kind.rawValue, expected: "background in \(image.format)",
                                             got: background.frameFormat)
        }
        guard let m = maskPlane else { throw RenderError.notPrepared(kind.rawValue) }
        let out = try s.pool.makeBuffer()
        let w = image.width, h = image.height
        fillMask(mask, maskWidth, maskHeight, into: m, w, h)
        let mp = UnsafePointer(m)
        switch kind {
        case .comic: DepthEffect.comic(image, mp, out, luma: luma!)
        case .blur: DepthEffect.blur(image, mp, out, sat: sat!)
        case .greenscreen:
            if let background {
                let (cols, rows) = backgroundAxes.axes(from: background.width, background.height, to: w, h)
                DepthEffect.greenscreen(image, mp, background, out, cols, rows)
            } else {
                DepthEffect.solidGreen(image, mp, out)
            }
        }
        out.markModified()
        return out
    }

    /// The mask (`mw` × `mh` values, packed rows) at the image size, clamped: v > 0 ? min(v, 1) : 0
    /// (NaN → 0). Nothing allocated per call
    /// once the sampling tables for these sizes exist.
    private func fillMask(_ src: UnsafePointer<Float>, _ mw: Int, _ mh: Int, into o: UnsafeMutablePointer<Float>,
                          _ w: Int, _ h: Int) {
        if mw == w && mh == h {
            var job = MaskFillJob(src: src, sw: w, dst: o, w: w, axes: nil)
            parallelBands(w * h, minimumRowsPerBand: 1 << 16, context: &job) { ctx, _, lo, hi in
                let j = ctx!.assumingMemoryBound(to: MaskFillJob.self).pointee
                let src = j.src, o = j.dst
                var i = lo
                while i + 4 <= hi {
                    let v = load4(src + i)
                    store4(minV(v, F4(repeating: 1)).replacing(with: 0, where: .!(v .> 0)), o + i)
                    i += 4
                }
                while i < hi { let v = src[i]; o[i] = v > 0 ? min(v, 1) : 0; i += 1 }
            }
            return
        }
        let (cols, rowsAxis) = maskAxes.axes(from: mw, mh, to: w, h)
        withBilinearPointers(cols, rowsAxis) { p in
            var job = MaskFillJob(src: src, sw: mw, dst: o, w: w, axes: p)
            parallelBands(h, context: &job) { ctx, _, y0, y1 in
                let j = ctx!.assumingMemoryBound(to: MaskFillJob.self).pointee
                let p = j.axes!, src = j.src, sw = j.sw, w = j.w
                let x0 = p.x0!, x1 = p.x1!, fx = p.fx!, r0i = p.r0!, r1i = p.r1!, fyp = p.fy!
                for y in y0..<y1 {
                    let r0 = src + Int(r0i[y]) * sw, r1 = src + Int(r1i[y]) * sw
                    let fy = fyp[y], row = j.dst + y * w
                    for x in 0..<w {
                        let i0 = Int(x0[x]), i1 = Int(x1[x]), wx = fx[x]
                        let top = r0[i0] * (1 - wx) + r0[i1] * wx
                        let bottom = r1[i0] * (1 - wx) + r1[i1] * wx
                        let v = top * (1 - fy) + bottom * fy
                        row[x] = v > 0 ? min(v, 1) : 0
                    }
                }
            }
        }
    }
}

/// What `DepthEffectRenderer.fillMask`'s bands read: the source plane (width `sw`), the target
/// (width `w`) and, when scaling, the sampling tables.
private struct MaskFillJob {
    let src: UnsafePointer<Float>
    let sw: Int
    let dst: UnsafeMutablePointer<Float>
    let w: Int
    let axes: BilinearPointers?
}
