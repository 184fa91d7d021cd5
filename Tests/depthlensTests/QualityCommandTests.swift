import XCTest
import Foundation
import TestSupport

/// `depthlens quality` on the shared RealSense bag against the numpy reference of the Depth
/// Quality Tool's formulas (Tests/Fixtures/depth_quality_reference.py, which reads the bag with
/// `rosbags`), its CSV, and bad input.
final class QualityCommandTests: CLITestCase {
    private var bag: String { Repo.fixture("realsense-d435-640x480.bag") }

    private func reference(roi: [Int], gtMM: Double) throws -> [[String: Any]] {
        let py = try PythonReference.python(importing: ["numpy", "rosbags"])
        let r = try TestProcess.run([py, Repo.fixture("depth_quality_reference.py"), "bag", bag] + roi.map(String.init)
                                    + ["\(gtMM)", "40"], timeout: 300)
        XCTAssertEqual(r.status, 0, r.output)
        let doc = try JSONSerialization.jsonObject(with: Data(r.output.utf8)) as? [String: Any]
        return try XCTUnwrap(doc?["frames"] as? [[String: Any]])
    }

    private func run(_ extra: [String]) throws -> [String: Any] {
        let r = try CLI.run(["quality", "--source", "bag:" + bag, "--json"] + extra)
        XCTAssertEqual(r.status, 0, r.stderr)
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any], r.stdout)
    }

    private func assertAgree(_ frames: [[String: Any]], _ ref: [[String: Any]], relative rel: Double,
                             file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(frames.count, ref.count, "frames", file: file, line: line)
        for (f, r) in zip(frames, ref) {
            XCTAssertEqual(f["valid_pixels"] as? Int, r["valid_pixels"] as? Int, file: file, line: line)
            // Fill rate exact: equal valid pixels (above) over the same ROI; the JSON round trips may move the last bit.
            XCTAssertEqual(f["fill_rate"] as? Double ?? -1, r["fill_rate"] as? Double ?? -2, accuracy: 1e-15, "fill rate", file: file, line: line)
            for key in ["distance_mm", "angle_deg", "plane_rms_mm", "plane_rms_percent", "subpixel_rms_px", "z_accuracy_percent",
                        "temporal_noise_percent"] {
                let a = f[key] as? Double, b = r[key] as? Double
                XCTAssertEqual(a == nil, b == nil, "\(key): \(String(describing: f[key])) vs \(String(describing: r[key]))", file: file, line: line)
                guard let a, let b else { continue }
                let tol = key == "distance_mm" ? 0.1 : rel * max(abs(b), 1e-6)
                XCTAssertEqual(a, b, accuracy: tol, key, file: file, line: line)
            }
        }
    }

    func testSharedBagAgainstNumpyReferenceCPUAndGPU() throws {
        let ref = try reference(roi: [0, 0, 0, 0], gtMM: 600)
        let cpu = try run(["--gt-mm", "600"])
        XCTAssertEqual(cpu["backend"] as? String, "CPU")
        let baseline = try XCTUnwrap(cpu["baseline_mm"] as? Double)
        XCTAssertEqual(baseline, 50.17067, accuracy: 1e-4, "the bag's Stereo Baseline option")
        XCTAssertEqual((cpu["roi"] as? [String: Int]) ?? [:], ["x": 192, "y": 144, "width": 256, "height": 192])
        assertAgree(cpu["frames"] as? [[String: Any]] ?? [], ref, relative: 1e-6)
        // The GPU reductions: the same within float rounding (1 % is the bound; this is far tighter).
        let gpu = try run(["--gt-mm", "600", "--backend", "gpu"])
        XCTAssertEqual(gpu["backend"] as? String, "GPU")
        assertAgree(gpu["frames"] as? [[String: Any]] ?? [], ref, relative: 1e-4)
    }

    func testRectangleROIAndFrameRange() throws {
        let ref = try reference(roi: [100, 50, 300, 200], gtMM: 0)
        let doc = try run(["--roi", "100,50,300,200", "--frames", "1:1"])
        let frames = doc["frames"] as? [[String: Any]] ?? []
        XCTAssertEqual(frames.count, 1)
        XCTAssertEqual(frames.first?["index"] as? Int, 1)
        // One frame: no temporal noise; frame 1's own metrics as the reference's second frame.
        var second = ref[1]
        second["temporal_noise_percent"] = NSNull()
        assertAgree(frames, [second], relative: 1e-6)
        XCTAssertTrue(frames.first?["z_accuracy_percent"] is NSNull)
    }

    func testCSVLikeTheTool() throws {
        let csv = path("metrics.csv")
        let r = try CLI.run(["quality", "--source", "bag:" + bag, "--csv", csv, "--gt-mm", "600"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("summary over 2 frames"), r.stdout)
        let text = try String(contentsOfFile: csv, encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        XCTAssertEqual(lines.first, "Device Info:")
        XCTAssertTrue(lines.contains("Ground-Truth_Distance_mm,600"), text)
        let header = try XCTUnwrap(lines.firstIndex { $0.hasPrefix("Sample Id,Frame #,Timestamp (ms),Fill-Rate %,Z Accuracy %,Plane Fit RMS Error %,Subpixel RMS Error (pixel),Plane Fit RMS Error mm") })
        let rows = lines[(header + 1)...].filter { !$0.isEmpty }
        XCTAssertEqual(rows.count, 2)
        let cells = rows[0].split(separator: ",", omittingEmptySubsequences: false)
        XCTAssertEqual(cells[0], "0")
        XCTAssertEqual(Double(cells[3]) ?? 0, 97.37345, accuracy: 1e-4, "fill rate %")
    }

    func testBadROIIsOneLine() throws {
        for roi in ["2", "abc", "1,2,3", "0,0,0,10"] {
            try assertBadInput(["quality", "--source", "bag:" + bag, "--roi", roi], mentioning: "--roi")
        }
        try assertBadInput(["quality", "--source", "bag:" + bag, "--roi", "600,400,100,100"], mentioning: "outside")
        let csv = path("never.csv")
        try assertBadInput(["quality", "--source", "bag:" + bag, "--roi", "0.0", "--csv", csv], mentioning: "--roi", noFile: csv)
    }

    func testBadSourceIsOneLine() throws {
        let junk = path("junk.bag")
        try Data("not a bag at all".utf8).write(to: URL(fileURLWithPath: junk))
        let csv = path("never.csv")
        try assertBadInput(["quality", "--source", "bag:" + junk, "--csv", csv], mentioning: "junk.bag", noFile: csv)
        try assertBadInput(["quality", "--source", "bag:" + path("missing.bag")], mentioning: "missing.bag")
        try assertBadInput(["quality", "--source", "bag:" + bag, "--gt-mm", "-3"], mentioning: "--gt-mm")
    }

    /// `bench --kernels quality`: the plane-fit reduction row on both backends; distance and
    /// centroid from the GPU's sums within a few micrometers of the CPU's.
    func testBenchRowOnBothBackends() throws {
        let r = try CLI.run(["bench", "--backend", "all", "--sizes", "160x120", "--kernels", "quality", "--iterations", "2", "--json"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let json = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
        let x = try XCTUnwrap((json?["results"] as? [[String: Any]])?.first)
        XCTAssertEqual(x["kernel"] as? String, "quality")
        XCTAssertNotNil(x["cpu_ms"] as? Double)
        XCTAssertNotNil(x["gpu_ms"] as? Double)
        XCTAssertLessThanOrEqual(x["max_abs_diff"] as? Int ?? Int.max, 5, "µm")
    }
}
