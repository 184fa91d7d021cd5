import XCTest
import Foundation
@testable import Capture
import DepthKit
import TestSupport

/// `scan:DIR` against folders `Tests/Fixtures/make_scans.py` writes with numpy, Pillow and ffmpeg
/// from the real D435 frames, in each layout's own pose convention; poses, depth, confidence,
/// colors and intrinsics must come back as they went in, and the fused cloud must equal numpy's.
final class ScanSourceTests: XCTestCase {
    /// The fixture folder, made once per test process.
    private static let made = LockedValue<String?>(nil)
    private static let keep = LockedValue<TemporaryFolder?>(nil)

    struct Expected: Decodable {
        struct Pose: Decodable { var R: [[Double]]; var t: [Double] }
        var depth_size: [Int]
        var color_size: [Int]
        var color_intrinsics: [Double]
        var small_intrinsics: [Double]
        var voxel: Double
        var poses: [Pose]
        var timestamps: [String: [Double]]
    }

    func fixtures() throws -> String {
        if let dir = Self.made.withLock({ $0 }) { return dir }
        let py = try PythonReference.python(importing: ["numpy", "PIL", "rosbags"])
        let folder = TemporaryFolder("scans")
        let dir = folder.file("scans")
        let r = try TestProcess.run([py, Repo.fixture("make_scans.py"), Repo.fixture("realsense-d435-640x480.bag"), dir], timeout: 300)
        XCTAssertEqual(r.status, 0, r.output)
        guard r.status == 0 else { throw CaptureError.invalidState("make_scans.py failed") }
        Self.keep.withLock { $0 = folder }
        Self.made.withLock { $0 = dir }
        return dir
    }

    func expected(_ dir: String) throws -> Expected {
        try JSONDecoder().decode(Expected.self, from: Data(contentsOf: URL(fileURLWithPath: dir + "/expected.json")))
    }

    func frames(of source: FrameSource) throws -> [FrameSet] {
        let reader = try FrameReader(source: source)
        var out: [FrameSet] = []
        while let f = try reader.next() { out.append(f) }
        return out
    }

    func floats(_ path: String) throws -> [Float] {
        let d = try Data(contentsOf: URL(fileURLWithPath: path))
        return d.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }

    /// Mean absolute difference of an rgba8 buffer's RGB against packed rgb8 bytes.
    func colorDifference(_ b: PixelBuffer, _ path: String) throws -> Double {
        let ref = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        XCTAssertEqual(ref.count, b.width * b.height * 3)
        var sum = 0.0
        for y in 0..<b.height {
            let row = b.row(y, as: UInt8.self)
            for x in 0..<b.width {
                for c in 0..<3 { sum += abs(Double(row[x * 4 + c]) - Double(ref[(y * b.width + x) * 3 + c])) }
            }
        }
        return sum / Double(ref.count)
    }

    /// Every layout: what the source decodes equals what make_scans.py wrote.
    func testEachLayoutDecodesWhatWentIn() throws {
        let dir = try fixtures()
        let e = try expected(dir)
        let layouts: [(String, ScanLayout, Double)] = [("stray", .strayScanner, 3), ("polycam", .polycam, 6),
                                                        ("arkitscenes", .arkitScenes, 0), ("scanner3d", .threeDScannerApp, 6)]
        for (folder, layout, colorTolerance) in layouts {
            let source = ScanSource(directory: dir + "/" + folder)
            let fs = try frames(of: source)
            XCTAssertEqual(source.layout, layout, folder)
            XCTAssertEqual(fs.count, 3, folder)
            XCTAssertEqual(source.warnings, [], folder)
            let poses = try XCTUnwrap(source.poses, folder)
            let small = folder == "arkitscenes"
            let k = small ? e.small_intrinsics : e.color_intrinsics
            for (i, f) in fs.enumerated() {
                // color: PNG exact, lossless HEVC in yuv444p and JPEG q95 close
                let diff = try colorDifference(f.color, dir + "/expected/" + (small ? "color_small_\(i).rgb" : "color_\(i).rgb"))
                XCTAssertLessThanOrEqual(diff, colorTolerance, "\(folder) frame \(i) color")
                // depth: millimeters / 1000, confidence < 1 dropped, exactly
                let d = try XCTUnwrap(f.depth).map
                XCTAssertEqual([d.width, d.height], e.depth_size)
                let ref = try floats(dir + "/expected/depth_\(i).f32")
                var mismatches = 0
                for y in 0..<d.height { for x in 0..<d.width where d.row(y, as: Float.self)[x] != ref[y * d.width + x] { mismatches += 1 } }
                XCTAssertEqual(mismatches, 0, "\(folder) frame \(i) depth")
                // intrinsics: the color camera's, scaled to the depth
                let dk = try XCTUnwrap(f.depth).intrinsics
                let ck = CameraIntrinsics(fx: Float(k[0]), fy: Float(k[1]), cx: Float(k[2]), cy: Float(k[3]),
                                          width: f.color.width, height: f.color.height)
                let want = ck.scaled(toWidth: d.width, height: d.height)
                XCTAssertEqual(dk.fx, want.fx, accuracy: 1e-3); XCTAssertEqual(dk.fy, want.fy, accuracy: 1e-3)
                XCTAssertEqual(dk.cx, want.cx, accuracy: 1e-3); XCTAssertEqual(dk.cy, want.cy, accuracy: 1e-3)
                if let ts = e.timestamps[folder] { XCTAssertEqual(f.timestamp, ts[i], accuracy: 1e-6, folder) }
                // pose: world from the optical frame, as numpy made it
                let p = try XCTUnwrap(poses.pose(of: f), "\(folder) frame \(i) pose")
                let m = p.matrixRows
                for r in 0..<3 {
                    for c in 0..<3 { XCTAssertEqual(m[r][c], e.poses[i].R[r][c], accuracy: 1e-6, "\(folder) frame \(i) R") }
                    XCTAssertEqual(m[r][3], e.poses[i].t[r], accuracy: 1e-6, "\(folder) frame \(i) t")
                }
            }
            // One world point seen from every frame: its camera coordinates under numpy's poses,
            // taken back to the world by the decoded poses, land on the same point.
            let world = SIMD3<Double>(0.3, -0.7, 2.1)
            for (i, f) in fs.enumerated() {
                let R = e.poses[i].R, t = SIMD3(e.poses[i].t[0], e.poses[i].t[1], e.poses[i].t[2])
                let w = world - t
                let cam = SIMD3(R[0][0] * w.x + R[1][0] * w.y + R[2][0] * w.z,   // Rᵀ (X − t)
                                R[0][1] * w.x + R[1][1] * w.y + R[2][1] * w.z,
                                R[0][2] * w.x + R[1][2] * w.y + R[2][2] * w.z)
                let back = try XCTUnwrap(poses.pose(of: f)).apply(cam)
                XCTAssertEqual(back.x, world.x, accuracy: 1e-6); XCTAssertEqual(back.y, world.y, accuracy: 1e-6)
                XCTAssertEqual(back.z, world.z, accuracy: 1e-6)
            }
        }
    }

    /// min-confidence 0 keeps every pixel, 2 only the high ones (make_scans.py's map has each
    /// level in regions: mostly high, a medium disc, a low disc and bottom band).
    func testConfidenceThreshold() throws {
        let dir = try fixtures()
        let confidence = try ImageIO.read(dir + "/arkitscenes/confidence/41069025_6997.771.png")
        XCTAssertEqual(confidence.format, .gray8)
        var levels = [0, 0, 0]
        for y in 0..<confidence.height { for x in 0..<confidence.width { levels[Int(min(confidence.row(y, as: UInt8.self)[x], 2))] += 1 } }
        XCTAssertTrue(levels.allSatisfy { $0 > 100 }, "every level in the map: \(levels)")
        for level in 0...2 {
            let spec = try SourceSpec(parsing: "scan:\(dir)/arkitscenes,min-confidence=\(level)")
            XCTAssertEqual(spec, .scan(directory: dir + "/arkitscenes", minConfidence: level))
            let f = try XCTUnwrap(try frames(of: try spec.makeSource()).first)
            let d = try XCTUnwrap(f.depth).map
            let raw = try ImageIO.read(dir + "/arkitscenes/lowres_depth/41069025_6997.771.png")
            for y in 0..<d.height {
                for x in 0..<d.width {
                    let mm = raw.row(y, as: UInt16.self)[x]
                    let want: Float = Int(confidence.row(y, as: UInt8.self)[x]) >= level ? Float(mm) / 1000 : 0
                    if d.row(y, as: Float.self)[x] != want { XCTFail("level \(level) (\(x),\(y))"); return }
                }
            }
        }
        XCTAssertThrowsError(try SourceSpec(parsing: "scan:\(dir),min-confidence=3"))
        XCTAssertThrowsError(try SourceSpec(parsing: "scan:\(dir),frames=3"))
    }

    /// convert writes groundtruth.txt; tum: reads it back with the same pose per frame.
    func testConvertGroundTruthRoundTrip() throws {
        let dir = try fixtures()
        let e = try expected(dir)
        let out = TemporaryFolder("scan-convert")
        for folder in ["stray", "scanner3d"] {
            let target = out.file(folder)
            try DatasetExporter.prepare(directory: target, overwrite: false)
            let exporter = DatasetExporter(source: ScanSource(directory: dir + "/" + folder), directory: target)
            let summary = try exporter.run(shouldStop: { nil })
            XCTAssertEqual(summary.framesWritten, 3)
            let text = try String(contentsOfFile: target + "/groundtruth.txt", encoding: .utf8)
            XCTAssertEqual(text.split(separator: "\n").filter { !$0.hasPrefix("#") }.count, 3, text)
            let tum = TUMSource(directory: target)
            let fs = try frames(of: tum)
            XCTAssertEqual(fs.count, 3)
            let poses = try XCTUnwrap(tum.poses)
            for (i, f) in fs.enumerated() {
                let m = try XCTUnwrap(poses.pose(of: f), "\(folder) frame \(i)").matrixRows
                for r in 0..<3 {
                    for c in 0..<3 { XCTAssertEqual(m[r][c], e.poses[i].R[r][c], accuracy: 1e-6) }
                    XCTAssertEqual(m[r][3], e.poses[i].t[r], accuracy: 1e-6)
                }
            }
        }
    }

    /// The fused cloud equals numpy's transform + voxel average of the same frames.
    func testFusedCloudMatchesNumpy() throws {
        let dir = try fixtures()
        let e = try expected(dir)
        let (cloud, summary) = try CloudFuser(source: ScanSource(directory: dir + "/arkitscenes"), voxelSize: e.voxel).run(shouldStop: { nil })
        XCTAssertEqual(summary.framesFused, 3)
        XCTAssertEqual(summary.framesWithoutPose, 0)
        let lines = try String(contentsOfFile: dir + "/fused_reference.txt", encoding: .utf8).split(separator: "\n")
        var ref: [SIMD3<Int>: (SIMD3<Double>, SIMD3<Int>)] = [:]
        for l in lines {
            let v = l.split(separator: " ").map { Double($0)! }
            ref[SIMD3(Int(v[0]), Int(v[1]), Int(v[2]))] = (SIMD3(v[3], v[4], v[5]), SIMD3(Int(v[6]), Int(v[7]), Int(v[8])))
        }
        XCTAssertGreaterThan(ref.count, 1000)
        // A point on a voxel face may fall either side in float arithmetic: allow 0.5 % of cells.
        var matched = 0, positionOff = 0, colorOff = 0
        for i in 0..<cloud.count {
            let p = cloud.positions[i]
            let key = SIMD3(Int((Double(p.x) / e.voxel).rounded(.down)), Int((Double(p.y) / e.voxel).rounded(.down)),
                            Int((Double(p.z) / e.voxel).rounded(.down)))
            guard let (rp, rc) = ref[key] else { continue }
            matched += 1
            let d = SIMD3(Double(p.x), Double(p.y), Double(p.z)) - rp
            if (d * d).sum().squareRoot() > 1e-5 { positionOff += 1 }
            let c = SIMD3(Int(cloud.colors[i].x), Int(cloud.colors[i].y), Int(cloud.colors[i].z))
            if abs(c.x - rc.x) > 1 || abs(c.y - rc.y) > 1 || abs(c.z - rc.z) > 1 { colorOff += 1 }
        }
        let slack = ref.count / 200
        XCTAssertLessThanOrEqual(abs(cloud.count - ref.count), slack, "cells: depthlens \(cloud.count), numpy \(ref.count)")
        XCTAssertGreaterThanOrEqual(matched, ref.count - slack)
        XCTAssertLessThanOrEqual(positionOff, slack)
        XCTAssertLessThanOrEqual(colorOff, slack)
    }

    /// A stop (the signal's number from `shouldStop`) ends the fusion before the next frame.
    func testFusionStops() throws {
        let dir = try fixtures()
        var polls = 0
        let (cloud, summary) = try CloudFuser(source: ScanSource(directory: dir + "/arkitscenes"), voxelSize: 0.05)
            .run(shouldStop: { polls += 1; return polls > 1 ? 2 : nil })
        XCTAssertEqual(summary.stoppedBy, 2)
        XCTAssertEqual(summary.framesFused, 1)
        XCTAssertGreaterThan(cloud.count, 0)
    }

    /// A scan without odometry.csv plays without poses and says so once.
    func testMissingPosesSaidOnce() throws {
        let dir = try fixtures()
        let source = ScanSource(directory: dir + "/stray_nopose")
        let fs = try frames(of: source)
        XCTAssertEqual(fs.count, 3)
        XCTAssertNil(source.poses)
        XCTAssertEqual(source.warnings.count, 1, "\(source.warnings)")
        XCTAssertTrue(source.warnings.first?.contains("no frame has a pose") == true, "\(source.warnings)")
        XCTAssertThrowsError(try CloudFuser(source: ScanSource(directory: dir + "/stray_nopose")).run(shouldStop: { nil })) {
            XCTAssertEqual("\($0)".split(separator: "\n").count, 1)
        }
    }

    /// A truncated odometry line is one error line naming the file and the line.
    func testTruncatedOdometryIsOneLine() throws {
        let dir = try fixtures()
        XCTAssertThrowsError(try ScanSource(directory: dir + "/stray_truncated").start()) {
            let text = "\($0)"
            XCTAssertEqual(text.split(separator: "\n").count, 1, text)
            XCTAssertTrue(text.contains("odometry.csv") && text.contains("line 3"), text)
        }
        XCTAssertThrowsError(try ScanSource(directory: dir + "/expected").start()) {
            XCTAssertTrue("\($0)".contains("is not a scan folder"), "\($0)")
        }
    }

    /// Conventions: ARKit's camera (y up, looking along −z) becomes the optical frame by a half
    /// turn about x; world-to-camera inverts.
    func testPoseConventions() throws {
        let id = [[1.0, 0, 0], [0, 1, 0], [0, 0, 1]]
        let ar = try XCTUnwrap(CameraPose(rotationRows: id, translation: SIMD3(1, 2, 3), axes: .arkit, direction: .worldFromCamera))
        // The optical frame's +z (forward) is ARKit's −z in the world; its +y (down) is −y.
        let fwd = ar.apply(SIMD3(0, 0, 1)) - ar.translation, down = ar.apply(SIMD3(0, 1, 0)) - ar.translation
        XCTAssertEqual(fwd.z, -1, accuracy: 1e-12); XCTAssertEqual(down.y, -1, accuracy: 1e-12)
        let w2c = try XCTUnwrap(CameraPose(rotationRows: id, translation: SIMD3(1, 2, 3), axes: .opencv, direction: .cameraFromWorld))
        XCTAssertEqual(w2c.translation, SIMD3(-1, -2, -3))
        XCTAssertNil(CameraPose(rotationRows: [[2, 0, 0], [0, 1, 0], [0, 0, 1]], translation: .zero, axes: .opencv, direction: .worldFromCamera))
        // TUM lookup: exact, interpolated between close samples, nearest within 20 ms, else none.
        let a = CameraPose(rotation: .identity, translation: .zero), b = CameraPose(rotation: .identity, translation: SIMD3(1, 0, 0))
        let track = PoseTrack(samples: [.init(timestamp: 10, pose: a), .init(timestamp: 10.05, pose: b), .init(timestamp: 20, pose: a)])
        XCTAssertEqual(track.pose(at: 10.025)?.translation.x ?? -1, 0.5, accuracy: 1e-9)
        XCTAssertEqual(track.pose(at: 20.01)?.translation.x, 0)
        XCTAssertNil(track.pose(at: 15))
    }
}
