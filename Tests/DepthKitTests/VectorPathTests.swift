import XCTest
@testable import DepthKit

/// Every CPU kernel on every instruction-set path this machine can run (`CPUVectorPath`): the
/// paths give the same bytes, and those bytes are the scalar formulas of docs/design/kernels.md.
final class VectorPathTests: XCTestCase {
    private var saved = CPUVectorPath.active
    override func setUp() { saved = CPUVectorPath.active }
    override func tearDown() { CPUVectorPath.active = saved }

    /// Odd sizes (vector tails), NaN, ±infinity, zero and negative depths, and depths outside the ranges.
    private func depth(_ w: Int, _ h: Int, seed: UInt64) -> PixelBuffer {
        var s = seed
        var d = [Float]()
        for i in 0..<(w * h) {
            s ^= s << 13; s ^= s >> 7; s ^= s << 17
            switch i % 13 {
            case 0: d.append(.nan)
            case 5: d.append(i % 2 == 0 ? .infinity : -.infinity)
            case 7: d.append(i % 3 == 0 ? 0 : -1)
            case 9: d.append(20 + Float(s % 100))
            default: d.append(0.2 + Float(s % 100_000) / 12_000)
            }
        }
        return makeDepth(w, h, d)
    }

    private func kernels() -> [(String, FilterRenderer)] {
        var k: [(String, FilterRenderer)] = [
            ("rosy", RosyFilter()),
            ("matrix", ColorMatrixFilter(matrix: ColorMatrix(r: [0.9, 0.3, -0.2, 0.1], g: [0.1, 1.2, 0.05, 0],
                                                             b: [-0.4, 0.2, 1.1, 0], a: [0, 0, 0.5, 0.5],
                                                             bias: [0.05, -0.1, 0.2, 0.3]))),
            ("grayscale", DepthToGrayscaleFilter()),
            ("grayscale-fixed", DepthToGrayscaleFilter(offset: 0.5, range: 3)),
            ("highpass", DepthMaskFilter(kind: .highpass, focus: 0.4, outputWidth: 37, outputHeight: 23)),
            ("bandpass", DepthMaskFilter(kind: .bandpass, focus: 0.6, slope: 100, outputWidth: 37, outputHeight: 23)),
        ]
        for map in Colormap.allCases {
            k.append(("\(map)-equalized", DepthColormapFilter(colormap: map)))
            k.append(("\(map)-fixed", DepthColormapFilter(colormap: map, range: .fixed(min: 0.5, max: 6))))
        }
        return k
    }

    private func outputs() throws -> [String: [UInt8]] {
        let d = depth(37, 23, seed: 42), c = randomColor(37, 23), c2 = randomColor(37, 23, seed: 7)
        var out: [String: [UInt8]] = [:]
        for (name, k) in kernels() {
            out[name] = try renderOnce(k, k is RosyFilter || k is ColorMatrixFilter ? c : d).packedBytes()
        }
        let mix = ImageMixer(mixFactor: 0.37)
        try mix.prepare(input: c.frameFormat, secondInput: c2.frameFormat, outputRetainedBufferCountHint: 1)
        out["mix"] = try mix.render(c, c2).packedBytes()
        let small = randomColor(13, 9, seed: 11)
        let scaled = ImageMixer(mixFactor: 0.37)
        try scaled.prepare(input: c.frameFormat, secondInput: small.frameFormat, outputRetainedBufferCountHint: 1)
        out["mix-scaled"] = try scaled.render(c, small).packedBytes()
        return out
    }

    func testTheWidestPathRunsByDefault() {
        let available = CPUVectorPath.available
        XCTAssertEqual(available.first, .baseline)
        XCTAssertEqual(available.last, CPUVectorPath.best)
        // Each path needs the ones before it (AVX-512 implies AVX2).
        XCTAssertEqual(available, Array(CPUVectorPath.allCases.prefix(available.count)))
        CPUVectorPath.active = .avx512
        XCTAssertEqual(CPUVectorPath.active, available.contains(.avx512) ? .avx512 : .baseline)
    }

    /// Arbitrary bit patterns (every NaN payload, denormals, huge values) and ordinary depths, in
    /// rows long enough for the 512-bit loops and their tails: grayscale (per-frame and given
    /// range, and a zero range) and the fixed-range colormaps are DESIGN's scalar formulas on
    /// every path.
    func testEveryPathMatchesTheFormulasOnArbitraryBits() throws {
        let w = 203, h = 9
        var s: UInt64 = 0x9E37_79B9_7F4A_7C15
        let depths: [Float] = (0..<(w * h)).map { i in
            s ^= s << 13; s ^= s >> 7; s ^= s << 17
            return i % 3 == 0 ? Float(bitPattern: UInt32(truncatingIfNeeded: s)) : 0.3 + Float(s % 90_000) / 10_000
        }
        let d = makeDepth(w, h, depths)
        let valid = depths.filter { $0 > 0 && $0 < .infinity }
        let lo = valid.min()!, hi = valid.max()!
        func gray(_ v: Float, off: Float, range: Float) -> [UInt8] {
            guard v > 0 && v < .infinity else { return [0, 0, 0, 255] }
            let g = range > 0 ? unorm8((v - off) / range) : 0
            return [g, g, g, 255]
        }
        for path in CPUVectorPath.available {
            CPUVectorPath.active = path
            for (filter, off, range) in [(DepthToGrayscaleFilter(), lo, hi - lo),
                                         (DepthToGrayscaleFilter(offset: 0.7, range: 2.5), 0.7, 2.5),
                                         (DepthToGrayscaleFilter(offset: 1, range: 0), 1, 0)] {
                let out = try renderOnce(filter, d).packedBytes()
                for (i, v) in depths.enumerated() where Array(out[(4 * i)..<(4 * i + 4)]) != gray(v, off: off, range: range) {
                    XCTFail("grayscale offset \(off) range \(range) pixel \(i) d=\(v) (bits \(v.bitPattern)) on \(path)")
                    break
                }
            }
            for map in Colormap.allCases {
                let out = try renderOnce(DepthColormapFilter(colormap: map, range: .fixed(min: 0.5, max: 6)), d).packedBytes()
                for (i, v) in depths.enumerated() {
                    let col = map.color(1 - clamp01((v - 0.5) / 5.5))
                    let e: [UInt8] = v > 0 && v < .infinity ? [unorm8(col.x), unorm8(col.y), unorm8(col.z), 255] : [0, 0, 0, 255]
                    if Array(out[(4 * i)..<(4 * i + 4)]) != e {
                        XCTFail("\(map) pixel \(i) d=\(v) (bits \(v.bitPattern)) on \(path)")
                        break
                    }
                }
            }
        }
    }

    func testEveryPathGivesTheSameBytes() throws {
        XCTAssertTrue(CPUVectorPath.available.contains(.baseline))
        CPUVectorPath.active = .baseline
        XCTAssertEqual(CPUVectorPath.active, .baseline)
        let reference = try outputs()
        for path in CPUVectorPath.available where path != .baseline {
            CPUVectorPath.active = path
            XCTAssertEqual(CPUVectorPath.active, path)
            let got = try outputs()
            for (name, bytes) in reference { XCTAssertEqual(got[name], bytes, "\(name) on \(path)") }
        }
    }

    private func checkScaledMix(_ aw: Int, _ ah: Int, _ bw: Int, _ bh: Int, path: CPUVectorPath) throws {
        let c = randomColor(aw, ah, seed: 5), colorA = c.packedBytes()
        let small = randomColor(bw, bh, seed: 11), smallBytes = small.packedBytes()
        let scaled = ImageMixer(mixFactor: 0.37)
        try scaled.prepare(input: c.frameFormat, secondInput: small.frameFormat, outputRetainedBufferCountHint: 1)
        let scaledOut = try scaled.render(c, small).packedBytes()
        let cols = BilinearAxis(source: bw, target: aw), rowsAxis = BilinearAxis(source: bh, target: ah)
        for y in 0..<ah {
            for x in 0..<aw {
                for ch in 0..<4 {
                    func t(_ xx: Int32, _ yy: Int32) -> Float { Float(smallBytes[(Int(yy) * bw + Int(xx)) * 4 + ch]) }
                    let wx = cols.f[x], fy = rowsAxis.f[y]
                    let top = t(cols.i0[x], rowsAxis.i0[y]) * (1 - wx) + t(cols.i1[x], rowsAxis.i0[y]) * wx
                    let bottom = t(cols.i0[x], rowsAxis.i1[y]) * (1 - wx) + t(cols.i1[x], rowsAxis.i1[y]) * wx
                    let bv = top * (1 - fy) + bottom * fy
                    let i = (y * aw + x) * 4 + ch
                    let v: Float = Float(colorA[i]) * (1 - 0.37) + bv * 0.37 + 0.5
                    if scaledOut[i] != UInt8(v) {
                        XCTFail("scaled mix \(aw)x\(ah) from \(bw)x\(bh): byte \(i) is \(scaledOut[i]), expected \(UInt8(v)) on \(path)")
                        return
                    }
                }
            }
        }
    }

    func testEveryPathMatchesTheScalarFormulas() throws {
        let d = depth(37, 23, seed: 9), c = randomColor(37, 23), c2 = randomColor(37, 23, seed: 3)
        let depths = (0..<23).flatMap { y in (0..<37).map { d.row(y, as: Float.self)[$0] } }
        let colorA = c.packedBytes(), colorB = c2.packedBytes()
        for path in CPUVectorPath.available {
            CPUVectorPath.active = path
            // Fixed-range colormaps: t = 1 − clamp01((d − min)/(max − min)), invalid → black.
            for map in Colormap.allCases {
                let out = try renderOnce(DepthColormapFilter(colormap: map, range: .fixed(min: 0.5, max: 6)), d).packedBytes()
                for (i, v) in depths.enumerated() {
                    let col = map.color(1 - clamp01((v - 0.5) / 5.5))
                    let e: [UInt8] = v > 0 && v < .infinity ? [unorm8(col.x), unorm8(col.y), unorm8(col.z), 255] : [0, 0, 0, 255]
                    XCTAssertEqual(Array(out[(4 * i)..<(4 * i + 4)]), e, "\(map) pixel \(i) d=\(v) on \(path)")
                }
            }
            // Equalized: t = 1 − cdf(bin(d)); with the 16-bit bin plane (16,000 bins) and without
            // it (80,000 bins: too many for 16 bits).
            for perMeter in [1000, 5000] {
                let out = try renderOnce(DepthColormapFilter(colormap: .turbo, range: .equalized(minDepth: 0, maxDepth: 16,
                                                                                              binsPerMeter: perMeter)), d).packedBytes()
                XCTAssertEqual(out, equalizedReference(depths, binsPerMeter: perMeter), "\(perMeter) bins a meter on \(path)")
            }
            // Mix: floor(a·(1 − f) + b·f + 0.5).
            let mix = ImageMixer(mixFactor: 0.37)
            try mix.prepare(input: c.frameFormat, secondInput: c2.frameFormat, outputRetainedBufferCountHint: 1)
            let mixed = try mix.render(c, c2).packedBytes()
            for i in 0..<colorA.count {
                let f: Float = 0.37, a = Float(colorA[i]), b = Float(colorB[i])
                let v: Float = a * (1 - f) + b * f + 0.5
                XCTAssertEqual(mixed[i], UInt8(v), "mix byte \(i) on \(path)")
            }
            // Mix with b at another size: b bilinear (clamp to edge) at a's pixel centers, in float,
            // then floor(a·(1 − f) + b·f + 0.5). Up and down, one band and several (rows of b
            // shared by consecutive output rows, and rows skipped).
            for (aw, ah, bw, bh) in [(37, 23, 13, 9), (50, 70, 23, 31), (41, 66, 97, 130), (8, 40, 8, 3)] {
                try checkScaledMix(aw, ah, bw, bh, path: path)
            }
            // Color matrix: unorm8(bias + M·p), p = byte/255.
            let m = ColorMatrix(r: [0.9, 0.3, -0.2, 0.1], g: [0.1, 1.2, 0.05, 0], b: [-0.4, 0.2, 1.1, 0], a: [0, 0, 0.5, 0.5],
                                bias: [0.05, -0.1, 0.2, 0.3])
            let out = try renderOnce(ColorMatrixFilter(matrix: m), c).packedBytes()
            for px in 0..<(colorA.count / 4) {
                let inv: Float = 1 / 255
                let p: [Float] = (0..<4).map { Float(colorA[4 * px + $0]) * inv }
                for (ch, row) in [m.r, m.g, m.b, m.a].enumerated() {
                    var v: Float = m.bias[ch]
                    v += row.x * p[0]
                    v += row.y * p[1]
                    v += row.z * p[2]
                    v += row.w * p[3]
                    XCTAssertEqual(out[4 * px + ch], unorm8(v), "matrix pixel \(px) channel \(ch) on \(path)")
                }
            }
        }
    }

    /// The equalized colormap of docs/design/kernels.md (Turbo, range [0, 16] m), pixel by pixel, as rgba bytes.
    private func equalizedReference(_ depths: [Float], binsPerMeter: Int) -> [UInt8] {
        let nbins = 16 * binsPerMeter
        let bin = { (d: Float) in min(max(Int(max(d * Float(binsPerMeter), 0)), 0), nbins - 1) }
        let valid = depths.filter { $0 > 0 && $0 < .infinity }
        var counts = [Int](repeating: 0, count: nbins)
        for d in valid { counts[bin(d)] += 1 }
        var cumulative = counts
        for b in 1..<nbins { cumulative[b] += cumulative[b - 1] }
        return depths.flatMap { d -> [UInt8] in
            guard d > 0 && d < .infinity else { return [0, 0, 0, 255] }
            let c = Colormap.turbo.color(1 - Float(cumulative[bin(d)]) / Float(valid.count))
            return [unorm8(c.x), unorm8(c.y), unorm8(c.z), 255]
        }
    }
}
