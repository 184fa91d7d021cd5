import XCTest
import DepthKit
@testable import GPUKit

/// The GPU depth masks and effects (depthMask.comp, comicEffect.comp, greenscreenEffect.comp,
/// blurEffect.comp + summedArea.comp) against DepthKit's `DepthMaskFilter` / `DepthEffectFilter`
/// under the validation layer: masks within 1/255, effects within 1 LSB, on seeded random inputs,
/// odd sizes, masks at another size than the color, invalid depth, the synthetic scene and the
/// shipped sensor-like frame.
final class DepthEffectAgreementTests: GPUTestCase {
    /// (color size, depth size): equal, depth smaller, depth larger, 1×1, odd, 1080p from VGA depth.
    static let sizes: [((Int, Int), (Int, Int))] = [
        ((1, 1), (1, 1)), ((17, 13), (17, 13)), ((17, 13), (9, 7)), ((31, 23), (64, 48)), ((1, 5), (3, 2)),
        ((1921, 1081), (640, 480)),
    ]
    static let masks: [DepthMaskSpec] = [
        DepthMaskSpec(kind: .highpass, focus: 0.5), DepthMaskSpec(kind: .highpass, focus: 0.2, slope: 100),
        DepthMaskSpec(kind: .bandpass, focus: 0.6), DepthMaskSpec(kind: .bandpass, focus: 0.35, slope: 100, width: 0.2),
        .portrait(focus: 0.7),
    ]

    func compareMask(_ spec: DepthMaskSpec, depth: PixelBuffer, width: Int, height: Int, _ gpu: GPUFilterFactory,
                     file: StaticString = #filePath, line: UInt = #line) throws {
        let c = try CPUFilterFactory().makeMask(spec, outputWidth: width, outputHeight: height)
        let g = try gpu.makeMask(spec, outputWidth: width, outputHeight: height)
        try c.prepare(input: depth.frameFormat, outputRetainedBufferCountHint: 1)
        try g.prepare(input: depth.frameFormat, outputRetainedBufferCountHint: 1)
        let a = try c.render(depth), b = try g.render(depth)
        XCTAssertEqual(b.frameFormat, FrameFormat(width: width, height: height, pixelFormat: .gray8), file: file, line: line)
        XCTAssertLessThanOrEqual(maxDifference(a, b), 1, "\(spec) \(depth.width)x\(depth.height) → \(width)x\(height)", file: file, line: line)
    }

    func compareEffect(_ kind: DepthEffectKind, _ spec: DepthMaskSpec, color: PixelBuffer, depth: PixelBuffer,
                       background: PixelBuffer? = nil, _ gpu: GPUFilterFactory,
                       file: StaticString = #filePath, line: UInt = #line) throws {
        let c = try CPUFilterFactory().makeEffect(kind, mask: spec), g = try gpu.makeEffect(kind, mask: spec)
        c.background = background; g.background = background
        try c.prepare(input: color.frameFormat, secondInput: depth.frameFormat, outputRetainedBufferCountHint: 1)
        try g.prepare(input: color.frameFormat, secondInput: depth.frameFormat, outputRetainedBufferCountHint: 1)
        let a = try c.render(color, depth), b = try g.render(color, depth)
        XCTAssertEqual(a.frameFormat, b.frameFormat, file: file, line: line)
        let what = "\(kind) \(spec) \(color.frameFormat) depth \(depth.width)x\(depth.height) background \(background.map { "\($0.width)x\($0.height)" } ?? "none")"
        XCTAssertLessThanOrEqual(maxDifference(a, b), 1, what, file: file, line: line)
    }

    func testMasksOnRandomDepth() throws {
        let gpu = try GPUFilterFactory(context: context)
        for ((cw, ch), (dw, dh)) in Self.sizes {
            let d = Inputs.depth(dw, dh, seed: UInt64(dw &* 31 &+ dh))
            for spec in Self.masks { try compareMask(spec, depth: d, width: cw, height: ch, gpu) }
        }
    }

    func testMasksOnDegenerateDepth() throws {
        let gpu = try GPUFilterFactory(context: context)
        // One depth everywhere (p = 1), one NaN; and no valid depth at all (mask 0 everywhere).
        let flat = PixelBuffer(width: 5, height: 3, format: .depthFloat32)
        for y in 0..<3 { for x in 0..<5 { flat.row(y, as: Float.self)[x] = 2 } }
        flat.row(1, as: Float.self)[2] = .nan
        let invalid = PixelBuffer(width: 4, height: 4, format: .depthFloat32)
        for y in 0..<4 { for x in 0..<4 { invalid.row(y, as: Float.self)[x] = [0, .nan, -.infinity, -2][(x + y) % 4] } }
        for d in [flat, invalid] {
            for spec in Self.masks {
                try compareMask(spec, depth: d, width: d.width, height: d.height, gpu)
                try compareMask(spec, depth: d, width: 11, height: 7, gpu)
                try compareEffect(.blur, spec, color: Inputs.color(11, 7, seed: 3), depth: d, gpu)
            }
        }
    }

    func testEffectsOnRandomInputs() throws {
        let gpu = try GPUFilterFactory(context: context)
        for ((cw, ch), (dw, dh)) in Self.sizes {
            let d = Inputs.depth(dw, dh, seed: UInt64(dw &+ 7 &* dh))
            let big = cw * ch > 1_000_000  // 1080p: one format and one mask (the debug-built CPU reference is slow)
            for format in big ? [PixelFormat.bgra8] : [.rgba8, .bgra8] {
                let color = Inputs.color(cw, ch, format, seed: UInt64(cw &* 5 &+ ch))
                for kind in DepthEffectKind.allCases {
                    for spec in big ? [Self.masks[4]] : [Self.masks[0], Self.masks[3], Self.masks[4]] {
                        try compareEffect(kind, spec, color: color, depth: d, gpu)
                    }
                }
                // Backgrounds smaller and larger than the image.
                for (bw, bh) in [(7, 5), (cw * 2 + 1, ch + 3)] {
                    try compareEffect(.greenscreen, Self.masks[0], color: color, depth: d,
                                      background: Inputs.color(bw, bh, format, seed: UInt64(bw)), gpu)
                }
            }
        }
    }

    func testSyntheticScene() throws {
        let gpu = try GPUFilterFactory(context: context)
        let scene = SyntheticScene()
        for ((cw, ch), (dw, dh)) in [((160, 120), (160, 120)), ((640, 480), (320, 240)), ((1280, 720), (848, 480))] {
            let color = scene.render(width: cw, height: ch, time: 0.5).color
            let depth = scene.render(width: dw, height: dh, time: 0.5).depth.map
            for spec in Self.masks {
                try compareMask(spec, depth: depth, width: cw, height: ch, gpu)
            }
            for kind in DepthEffectKind.allCases {
                for spec in [DepthMaskSpec(focus: 0.5), .portrait(focus: 0.5)] {
                    try compareEffect(kind, spec, color: color, depth: depth, gpu)
                }
            }
        }
    }

    /// Tests/Fixtures/sensor-frame (made by scripts/make-sensor-frame.py): 128×96 color with noise
    /// and vignetting, 80×60 16-bit depth with sensor noise, edge shadows and holes.
    func testSensorFrame() throws {
        let gpu = try GPUFilterFactory(context: context)
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/sensor-frame")
        let color = ImageIO.toRGBA8(try ImageIO.readColor(folder.appendingPathComponent("color.png").path))
        let depth = try DepthIO.readDepth(folder.appendingPathComponent("depth.png").path, depthScale: 1000).depthFloat32()
        XCTAssertEqual(color.width, 128)
        XCTAssertEqual(depth.width, 80)
        var holes = 0
        for y in 0..<depth.height { for x in 0..<depth.width where !(depth.row(y, as: Float.self)[x] > 0) { holes += 1 } }
        XCTAssertGreaterThan(holes, 100, "the frame has sensor holes")
        for spec in Self.masks {
            try compareMask(spec, depth: depth, width: color.width, height: color.height, gpu)
            try compareMask(spec, depth: depth, width: depth.width, height: depth.height, gpu)
        }
        for focus: Float in [0.2, 0.5, 0.8] {
            for kind in DepthEffectKind.allCases {
                for spec in [DepthMaskSpec(focus: focus), .portrait(focus: focus)] {
                    try compareEffect(kind, spec, color: color, depth: depth, gpu)
                }
            }
            try compareEffect(.greenscreen, DepthMaskSpec(focus: focus), color: color, depth: depth,
                              background: SyntheticScene().render(width: 200, height: 150, time: 2).color, gpu)
        }
    }

    /// The result must not be a copy of the input or all one color: the effects do something.
    func testEffectsChangeTheImage() throws {
        let gpu = try GPUFilterFactory(context: context)
        let f = SyntheticScene().render(width: 160, height: 120, time: 0)
        for kind in DepthEffectKind.allCases {
            let g = try gpu.makeEffect(kind, mask: DepthMaskSpec(focus: 0.5))
            try g.prepare(input: f.color.frameFormat, secondInput: f.depth.map.frameFormat, outputRetainedBufferCountHint: 1)
            let out = try g.render(f.color, f.depth.map)
            XCTAssertGreaterThan(maxDifference(out, f.color), 20, "\(kind) changed nothing")
            XCTAssertEqual(out.frameFormat, f.color.frameFormat)
        }
    }

    func testRejectsBadInputs() throws {
        let gpu = try GPUFilterFactory(context: context)
        let g = try gpu.makeEffect(.comic, mask: DepthMaskSpec(focus: 0.5))
        let color = Inputs.color(8, 8), depth = Inputs.depth(8, 8)
        XCTAssertThrowsError(try g.prepare(input: depth.frameFormat, secondInput: depth.frameFormat, outputRetainedBufferCountHint: 1))
        XCTAssertThrowsError(try g.prepare(input: color.frameFormat, secondInput: color.frameFormat, outputRetainedBufferCountHint: 1))
        XCTAssertThrowsError(try g.render(color, depth)) // not prepared
        let nanFocus = try gpu.makeEffect(.blur, mask: DepthMaskSpec(focus: .nan))
        XCTAssertThrowsError(try nanFocus.prepare(input: color.frameFormat, secondInput: depth.frameFormat, outputRetainedBufferCountHint: 1))
        let green = try gpu.makeEffect(.greenscreen, mask: DepthMaskSpec(focus: 0.5))
        try green.prepare(input: color.frameFormat, secondInput: depth.frameFormat, outputRetainedBufferCountHint: 1)
        green.background = Inputs.color(4, 4, .bgra8)
        XCTAssertThrowsError(try green.render(color, depth))
        let mask = try gpu.makeMask(DepthMaskSpec(focus: 0.5), outputWidth: 0, outputHeight: 4)
        XCTAssertThrowsError(try mask.prepare(input: depth.frameFormat, outputRetainedBufferCountHint: 1))
    }
}
