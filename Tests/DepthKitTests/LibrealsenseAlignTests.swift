import XCTest
import Foundation
import TestSupport
@testable import DepthKit

/// DepthAligner against librealsense itself: pyrealsense2 (PyPI, in the reference venv under .build/pyref,
/// made here when missing) plays the D435 test recording headless, aligns its first depth frame
/// to color with `rs.align(rs.stream.color)` and writes the raw depth, the aligned depth and the
/// intrinsics and extrinsics it used (scripts/rs-align-reference.py). depthlens aligns the same
/// depth with the same calibration; every pixel must match. Never skipped: no Python, no network
/// for the first install, or no recording is a failure.
final class LibrealsenseAlignTests: XCTestCase {
    private static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    private func run(_ args: [String], timeout: TimeInterval) throws -> (Int32, String) {
        let r = try TestProcess.run(args, timeout: timeout)
        return (r.status, r.output)
    }

    private func python() throws -> String { try PythonReference.python(importing: ["pyrealsense2", "numpy"]) }

    private func recording() throws -> String {
        // The repository's copy (tests never read ../shared: a clone without it must pass).
        let candidates: [String?] = [ProcessInfo.processInfo.environment["DEPTHLENS_D435_BAG"],
                          Self.root.appendingPathComponent("Tests/Fixtures/realsense-d435-640x480.bag").path]
        guard let bag = candidates.compactMap({ $0 }).first(where: { FileManager.default.fileExists(atPath: $0) }) else {
            XCTFail("no D435 recording in \(candidates.compactMap { $0 })")
            throw CocoaError(.fileNoSuchFile)
        }
        return bag
    }

    func testMatchesLibrealsenseAlign() throws {
        let py = try python()
        let bag = try recording()
        let tmp = TempDir()
        let script = Self.root.appendingPathComponent("scripts/rs-align-reference.py").path
        let (status, log) = try run([py, script, bag, tmp.path], timeout: 120)
        XCTAssertEqual(status, 0, log)
        guard status == 0 else { return }

        let info = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: tmp.file("info.json")))) as? [String: Any])
        func camera(_ key: String) throws -> CameraIntrinsics {
            let o = try XCTUnwrap(info[key] as? [String: Any])
            func f(_ k: String) throws -> Float { Float(try XCTUnwrap(o[k] as? Double)) }
            return CameraIntrinsics(fx: try f("fx"), fy: try f("fy"), cx: try f("ppx"), cy: try f("ppy"),
                                    width: try XCTUnwrap(o["width"] as? Int), height: try XCTUnwrap(o["height"] as? Int))
        }
        let d = try camera("depth"), c = try camera("color")
        let ext = try XCTUnwrap(info["extrinsics"] as? [String: Any])
        let colMajor = try XCTUnwrap(ext["rotation_column_major"] as? [Double]).map(Float.init)
        let t = try XCTUnwrap(ext["translation"] as? [Double]).map(Float.init)
        // rs2_extrinsics stores the rotation column-major; RigidTransform is row-major.
        let rotation = (0..<9).map { colMajor[($0 % 3) * 3 + $0 / 3] }
        let units = Float(try XCTUnwrap(info["depth_units"] as? Double))
        XCTAssertEqual(units, 0.001)
        // librealsense's own numbers for this recording: a D435, color 14.3 mm along +x from depth.
        XCTAssertEqual(d.fx, 390.43146, accuracy: 1e-3)
        XCTAssertEqual(c.fx, 613.20367, accuracy: 1e-3)
        XCTAssertEqual(t[0], 0.0143113, accuracy: 1e-6)

        let raw = try [UInt16](contentsOf: tmp.file("depth.u16"), count: d.width * d.height)
        let aligned = try [UInt16](contentsOf: tmp.file("aligned.u16"), count: c.width * c.height)
        // librealsense's depth in meters: units · value, as its align computes it.
        let depth = PixelBuffer(width: d.width, height: d.height, format: .depthFloat32)
        for y in 0..<d.height { for x in 0..<d.width { depth.row(y, as: Float.self)[x] = units * Float(raw[y * d.width + x]) } }
        let cal = RGBDCalibration(depth: CameraModel(intrinsics: d), color: CameraModel(intrinsics: c),
                                  depthToColor: RigidTransform(rotation: rotation, translation: SIMD3(t[0], t[1], t[2])),
                                  depthScale: 1 / units, origin: "pyrealsense2")
        XCTAssertTrue(DepthAligner.usesBothCorners(depth: d, color: c), "depth has fewer pixels per degree than color")
        let out = try DepthAligner().align(depth: depth, calibration: cal)

        var differ = 0, written = 0
        for y in 0..<c.height {
            for x in 0..<c.width {
                let z = out.row(y, as: Float.self)[x]
                let u = UInt16((z / units).rounded())
                XCTAssertEqual(units * Float(u), z, "aligned values are depth values")
                if u != aligned[y * c.width + x] { differ += 1 }
                if u != 0 { written += 1 }
            }
        }
        print("rs.align reference: \(differ) of \(c.width * c.height) pixels differ; \(written) written")
        XCTAssertGreaterThan(written, c.width * c.height * 9 / 10)
        XCTAssertEqual(differ, 0, "pixels that differ from librealsense's rs.align")
    }
}

private extension Array where Element == UInt16 {
    /// `count` little-endian 16-bit values from a file.
    init(contentsOf path: String, count: Int) throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        guard data.count == count * 2 else { throw CocoaError(.fileReadCorruptFile) }
        self = data.withUnsafeBytes { b in (0..<count).map { UInt16(littleEndian: b.loadUnaligned(fromByteOffset: $0 * 2, as: UInt16.self)) } }
    }
}
