import Capture
import DepthKit
import Foundation
import GPUKit
import TestSupport
import XCTest
@testable import Viewer

/// Issue 26, the viewer's parts for phone photos and scans: relative depth said in the readouts,
/// a photo's portrait matte as the mask of the depth-mask and portrait modes (against the matte
/// Pillow decodes from the file), and the 3D view's world coordinates, camera path and
/// accumulated cloud (against the scan's poses and `export-ply --fuse`'s `CloudFuser`).
final class PhoneViewTests: XCTestCase {
    private var folder: TemporaryFolder!

    override func setUp() { folder = TemporaryFolder("phone-view-tests") }
    override func tearDown() { folder = nil }

    private func raw(_ path: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))) }

    // MARK: Relative depth

    /// A portrait photo's relative depth: the readout says its numbers are not meters; metric
    /// depth's readout does not.
    func testRelativeDepthReadoutSaysSo() throws {
        let map = PixelBuffer(width: 4, height: 2, format: .depthFloat32)
        map.setSample(x: 1, y: 1, 0.5)
        let k = CameraIntrinsics(fx: 2, fy: 2, cx: 1, cy: 0, width: 4, height: 2)
        let relative = try XCTUnwrap(DepthReadout(depth: DepthData(map: map, accuracy: .relative, intrinsics: k), x: 1, y: 1))
        XCTAssertEqual(relative.text, "(1, 1)  500 mm  x 0.000 y 0.250 z 0.500 m  (relative depth, not meters)")
        let metric = try XCTUnwrap(DepthReadout(depth: DepthData(map: map, accuracy: .absolute, intrinsics: k), x: 1, y: 1))
        XCTAssertEqual(metric.text, "(1, 1)  500 mm  x 0.000 y 0.250 z 0.500 m")
        let none = try XCTUnwrap(DepthReadout(depth: DepthData(map: map, accuracy: .relative, intrinsics: k), x: 0, y: 0))
        XCTAssertEqual(none.text, "(0, 0)  no depth")
        // The status line's note, right after the frame rate.
        XCTAssertEqual(ViewerTexts.depthNote(DepthData(map: map, accuracy: .relative)), "  | relative depth: near/far only, not meters")
        XCTAssertEqual(ViewerTexts.depthNote(DepthData(map: map)), "")
        XCTAssertEqual(ViewerTexts.depthNote(nil), "")
    }

    // MARK: Mattes

    /// An iPhone portrait JPEG with a portrait effects matte (Tests/Fixtures/photo_reference.py:
    /// 160×120 color, an 80×60 matte): the frame carries the matte, the mask mode shows it scaled
    /// to the color image (bilinear at pixel centers, computed here from Pillow's decode of the
    /// matte), and portrait and the effects take it as their mask instead of the depth's.
    func testPhotoMatteIsTheMask() throws {
        let python = try PythonReference.python(importing: ["numpy", "PIL"])
        let path = folder.file("iphone.jpg"), out = folder.file("iphone")
        let r = try TestProcess.run([python, Repo.fixture("photo_reference.py"), "iphone-jpeg", path, out], timeout: 300)
        XCTAssertEqual(r.status, 0, r.output)
        guard r.status == 0 else { return }
        let source = PhotoSource(path: path)
        try source.start()
        let frame = try XCTUnwrap(try source.nextFrame(now: 0))
        let matte = try XCTUnwrap(frame.matte, "the portrait effects matte rides with the frame")
        XCTAssertEqual([matte.width, matte.height], [80, 60])
        let ref = try raw(out + "/matte.u8")
        XCTAssertEqual(ref.count, 80 * 60)

        // The reference mask at the color size: bilinear between Pillow's matte pixels.
        let w = frame.color.width, h = frame.color.height
        XCTAssertEqual([w, h], [160, 120])
        func refAt(_ x: Int, _ y: Int) -> Float {
            func axis(_ i: Int, _ n: Int, _ m: Int) -> (Int, Int, Float) {
                let s = max(0, (Float(i) + 0.5) * Float(m) / Float(n) - 0.5)
                let i0 = min(Int(s), m - 1)
                return (i0, min(i0 + 1, m - 1), s - Float(i0))
            }
            let (x0, x1, fx) = axis(x, w, 80), (y0, y1, fy) = axis(y, h, 60)
            func p(_ u: Int, _ v: Int) -> Float { Float(ref[v * 80 + u]) }
            return ((p(x0, y0) * (1 - fx) + p(x1, y0) * fx) * (1 - fy) + (p(x0, y1) * (1 - fx) + p(x1, y1) * fx) * fy)
        }

        let context = try GPUContext()
        let processor = FrameProcessor(factory: try GPUFilterFactory(context: context))
        let color = ImageIO.toRGBA8(frame.color)
        let depth = try XCTUnwrap(frame.depth).depthFloat32()
        let mask = try processor.cpuEffect(stage: .mask, color: color, depth: depth, focus: 0.5, matte: matte)
        XCTAssertEqual([mask.width, mask.height], [w, h])
        var worst: Float = 0
        for y in 0..<h {
            let row = mask.row(y, as: UInt8.self)
            for x in 0..<w {
                // JPEG decoders may differ by 1 (PhotoSourceTests), the rounding by ½.
                worst = max(worst, abs(Float(row[4 * x]) - refAt(x, y)))
                XCTAssertEqual(row[4 * x], row[4 * x + 1]); XCTAssertEqual(row[4 * x], row[4 * x + 2])
            }
        }
        XCTAssertLessThanOrEqual(worst, 1.5, "mask mode vs the matte's pixels")

        // Portrait (a blur outside the subject) and green screen take the matte as their mask:
        // they equal the effect renderer given the reference matte, not the depth mask's result.
        for (stage, kind) in [(PreviewMode.Stage.portrait, DepthEffectKind.blur), (.effect(.greenscreen), .greenscreen)] {
            let got = try processor.cpuEffect(stage: stage, color: color, depth: depth, focus: 0.5, matte: matte)
            let renderer = DepthEffectRenderer(kind: kind)
            try renderer.prepare(image: color.frameFormat, outputRetainedBufferCountHint: 1)
            let want = try renderer.render(image: color, mask: DepthMask(width: 80, height: 60, values: ref.map { Float($0) / 255 }))
            let fromDepth = try processor.cpuEffect(stage: stage, color: color, depth: depth, focus: 0.5)
            var off = 0, differsFromDepth = 0
            for y in 0..<h {
                let g = got.row(y, as: UInt8.self), e = want.row(y, as: UInt8.self), d = fromDepth.row(y, as: UInt8.self)
                for i in 0..<(w * 4) {
                    if abs(Int(g[i]) - Int(e[i])) > 3 { off += 1 }
                    if g[i] != d[i] { differsFromDepth += 1 }
                }
            }
            XCTAssertEqual(off, 0, "\(kind): with the matte as its mask")
            XCTAssertGreaterThan(differsFromDepth, 0, "\(kind): not the depth mask's picture")
        }
    }

    /// The subject matte of a photo: the portrait effects matte when there is one, else the
    /// maximum of the person's semantic mattes (the sky left out).
    func testSubjectMattePrefersThePortraitMatte() {
        func gray(_ v: [UInt8]) -> PixelBuffer {
            let b = PixelBuffer(width: v.count, height: 1, format: .gray8)
            for (i, x) in v.enumerated() { b.row(0, as: UInt8.self)[i] = x }
            return b
        }
        let portrait = gray([1, 2, 3]), skin = gray([200, 0, 10]), hair = gray([0, 90, 20]), sky = gray([255, 255, 255])
        XCTAssertTrue(PhotoSource.subjectMatte([("urn:com:apple:photo:2019:aux:semanticskinmatte", skin),
                                                ("urn:com:apple:photo:2018:aux:portraiteffectsmatte", portrait)]) === portrait)
        let union = PhotoSource.subjectMatte([("urn:com:apple:photo:2019:aux:semanticskinmatte", skin),
                                              ("urn:com:apple:photo:2019:aux:semantichairmatte", hair),
                                              ("urn:com:apple:photo:2023:aux:semanticskymatte", sky)])
        XCTAssertEqual((0..<3).map { union?.row(0, as: UInt8.self)[$0] }, [200, 90, 20])
        XCTAssertNil(PhotoSource.subjectMatte([("urn:com:apple:photo:2023:aux:semanticskymatte", sky)]))
        XCTAssertNil(PhotoSource.subjectMatte([]))
    }

    // MARK: World coordinates

    /// The scan folders make_scans.py writes (three frames with known poses).
    private func scans() throws -> String? {
        let py = try PythonReference.python(importing: ["numpy", "PIL", "rosbags"])
        let dir = folder.file("scans")
        let r = try TestProcess.run([py, Repo.fixture("make_scans.py"), Repo.fixture("realsense-d435-640x480.bag"), dir], timeout: 300)
        XCTAssertEqual(r.status, 0, r.output)
        return r.status == 0 ? dir : nil
    }

    private func frames(_ source: FrameSource) throws -> [FrameSet] {
        let reader = try FrameReader(source: source)
        var out: [FrameSet] = []
        while let f = try reader.next() { out.append(f) }
        return out
    }

    /// W on a scan: the camera path is the scan's camera positions; world shows the frame's points
    /// moved by its pose; accumulate shows the same cells as `export-ply --fuse` (CloudFuser, the
    /// same voxel); back to the camera frame lets the point list go.
    func testWorldPathAndAccumulatedCloud() throws {
        guard let dir = try scans() else { return }
        let e = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir + "/expected.json"))) as? [String: Any]
        let poses = try XCTUnwrap(e?["poses"] as? [[String: Any]])
        let source = ScanSource(directory: dir + "/arkitscenes")
        let fs = try frames(source)
        XCTAssertEqual(fs.count, 3)

        let context = try GPUContext()
        let scene = try XCTUnwrap(Scene3D.make(context: context, factory: try GPUFilterFactory(context: context), input: Scene3DInput()))
        let world = SceneWorld()
        // Camera frame (the default): nothing is made.
        try world.update(fs[0], source: source, generation: 1, calibration: source.calibration, scene: scene, now: 0, playing: false)
        XCTAssertNil(scene.pointList)
        XCTAssertEqual(world.path.count, 3)
        for (i, p) in poses.enumerated() {
            let t = try XCTUnwrap(p["t"] as? [Double])
            for c in 0..<3 { XCTAssertEqual(Double(world.path[i][c]), t[c], accuracy: 1e-6, "path point \(i)") }
        }

        // World: frame 1's points, each moved by its pose (R p + t of numpy's pose).
        world.set(.world)
        try world.update(fs[1], source: source, generation: 1, calibration: source.calibration, scene: scene, now: 0, playing: false)
        let list = try XCTUnwrap(scene.pointList)
        XCTAssertTrue(world.ownsPointList)
        let camera = PointCloud.unproject(depth: try XCTUnwrap(fs[1].depth), color: ImageIO.toEightBit(fs[1].color))
        XCTAssertEqual(list.positions.count, camera.count)
        let rows = try XCTUnwrap(poses[1]["R"] as? [[Double]]), t = try XCTUnwrap(poses[1]["t"] as? [Double])
        var worst = 0.0
        for i in Swift.stride(from: 0, to: camera.count, by: 37) {
            let p = camera.positions[i]
            for r in 0..<3 {
                let w = rows[r][0] * Double(p.x) + rows[r][1] * Double(p.y) + rows[r][2] * Double(p.z) + t[r]
                worst = max(worst, abs(w - Double(list.positions[i][r])))
            }
        }
        XCTAssertLessThan(worst, 1e-5, "world point vs R·p + t")
        XCTAssertEqual(world.line, "world: frame 1, camera path of 3 poses")

        // Accumulate: every frame shown once into the grid, the same cells as CloudFuser's.
        world.set(.accumulate)
        for (i, f) in fs.enumerated() {
            try world.update(f, source: source, generation: 1, calibration: source.calibration, scene: scene, now: Double(i), playing: false)
        }
        try world.update(fs[2], source: source, generation: 1, calibration: source.calibration, scene: scene, now: 9, playing: false)   // shown again: not added twice
        let fused = try CloudFuser(source: ScanSource(directory: dir + "/arkitscenes"), voxelSize: world.voxelSize).run(shouldStop: { nil })
        let shown = try XCTUnwrap(scene.pointList)
        XCTAssertEqual(shown.positions.count, fused.cloud.count)
        func key(_ p: SIMD3<Float>) -> SIMD3<Int32> { SIMD3<Int32>(SIMD3<Double>(p) / world.voxelSize, rounding: .down) }
        let mine = Set(shown.positions.map(key)), theirs = Set(fused.cloud.positions.map(key))
        XCTAssertGreaterThan(Double(mine.intersection(theirs).count), 0.995 * Double(theirs.count), "the same cells as export-ply --fuse")
        XCTAssertEqual(world.line?.hasPrefix("accumulated: \(shown.positions.count) cells of 2 cm from 3 frames"), true, world.line ?? "")

        // Back to the camera frame: the world's list goes, a PLY's would stay.
        world.set(.camera)
        try world.update(fs[2], source: source, generation: 1, calibration: source.calibration, scene: scene, now: 10, playing: false)
        XCTAssertNil(scene.pointList)
        XCTAssertFalse(world.ownsPointList)
    }

    /// A source without poses: world mode says so and shows nothing of its own.
    func testWorldWithoutPosesSaysSo() throws {
        let context = try GPUContext()
        let scene = try XCTUnwrap(Scene3D.make(context: context, factory: try GPUFilterFactory(context: context), input: Scene3DInput()))
        let source = SyntheticSource(width: 64, height: 48)
        try source.start()
        defer { source.stop() }
        let f = try XCTUnwrap(try source.nextFrame(now: 0))
        let world = SceneWorld()
        world.set(.world)
        try world.update(f, source: source, generation: 1, calibration: nil, scene: scene, now: 0, playing: false)
        XCTAssertNil(scene.pointList)
        XCTAssertEqual(world.line?.contains("no camera poses"), true, world.line ?? "")
    }
}
