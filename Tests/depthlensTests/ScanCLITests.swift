import XCTest
import Foundation
import Capture
import DepthKit
import TestSupport

/// `scan:DIR` through the commands: `info` says the source has poses, `export-ply --fuse` writes
/// the fused cloud, `convert` writes groundtruth.txt that `tum:` reads; bad scans are one line.
final class ScanCLITests: CLITestCase {
    private func scans() throws -> String {
        let py = try PythonReference.python(importing: ["numpy", "PIL", "rosbags"])
        let out = path("scans")
        let r = try TestProcess.run([py, Repo.fixture("make_scans.py"), Repo.fixture("realsense-d435-640x480.bag"), out], timeout: 300)
        XCTAssertEqual(r.status, 0, r.output)
        return out
    }

    func testInfoFuseAndConvert() throws {
        let s = try scans()
        var r = try CLI.run(["info", "--source", "scan:\(s)/polycam"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("poses: 3 camera poses from keyframes/cameras"), r.stdout)
        XCTAssertTrue(r.stdout.contains("Polycam"), r.stdout)

        let ply = path("fused.ply")
        r = try CLI.run(["export-ply", "--source", "scan:\(s)/arkitscenes", "--fuse", "--voxel", "0.05", "--out", ply])
        XCTAssertEqual(r.status, 0, r.stderr)
        let cloud = try PLYReader.read(ply)
        let reference = try String(contentsOfFile: s + "/fused_reference.txt", encoding: .utf8).split(separator: "\n").count
        XCTAssertLessThanOrEqual(abs(cloud.count - reference), reference / 200, "depthlens \(cloud.count) points, numpy \(reference)")
        XCTAssertTrue(r.stdout.contains("in 3 frames"), r.stdout)

        let conv = path("conv")
        r = try CLI.run(["convert", "--source", "scan:\(s)/stray", "--out", conv])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: conv + "/groundtruth.txt"))
        r = try CLI.run(["info", "--source", "tum:\(conv)"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("poses: 3 camera poses from groundtruth.txt"), r.stdout)
    }

    func testBadScansAreOneLine() throws {
        let s = try scans()
        try assertBadInput(["info", "--source", "scan:\(s)/stray_truncated"], mentioning: "odometry.csv")
        try assertBadInput(["export-ply", "--source", "scan:\(s)/stray_nopose", "--fuse", "--out", path("none.ply")],
                           mentioning: "has no camera poses", noFile: path("none.ply"))
        try assertBadInput(["export-ply", "--source", "scan:\(s)/expected", "--fuse", "--out", path("none2.ply")],
                           mentioning: "is not a scan folder", noFile: path("none2.ply"))
        try assertBadInput(["export-ply", "--source", "scan:\(s)/stray", "--fuse", "--voxel", "0", "--out", path("none3.ply")],
                           mentioning: "--voxel", noFile: path("none3.ply"))
        try assertBadInput(["export-ply", "--source", "scan:\(s)/stray", "--voxel", "0.1", "--out", path("none4.ply")],
                           mentioning: "--voxel goes with --fuse", noFile: path("none4.ply"))
    }
}
