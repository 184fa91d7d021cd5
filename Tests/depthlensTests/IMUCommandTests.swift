import XCTest
import Foundation
import TestSupport

/// `info` lists a recording's IMU streams and rates; `convert` writes imu.csv beside the frames.
/// The recordings are Tests/Fixtures/imu_reference.py's (written by PyPI's rosbags), and the
/// expected samples what rosbags reads back from them.
final class IMUCommandTests: CLITestCase {
    func fixtures() throws -> (dir: String, reference: [String: Any]) {
        let python = try PythonReference.python(importing: ["rosbags", "numpy"])
        let out = path("fixtures")
        let r = try TestProcess.run([python, Repo.fixture("imu_reference.py"), "make", out], timeout: 300)
        XCTAssertEqual(r.status, 0, r.output)
        let ref = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out + "/reference.json"))) as! [String: Any]
        return (out, ref)
    }

    /// rosbags' messages of `topic`: stamps in seconds and the vector `field`.
    func samples(_ ref: [String: Any], _ key: String, topic: String, field: String) -> [(t: Double, v: [Double])] {
        (ref[key] as! [[String: Any]]).filter { $0["topic"] as? String == topic }.map { m in
            (Double((m["sec"] as! NSNumber).intValue) + Double((m["nanosec"] as! NSNumber).intValue) * 1e-9,
             (m[field] as! [String]).map { Double($0)! })
        }
    }

    func testInfoListsTheIMUStreamsAndRates() throws {
        let (dir, _) = try fixtures()
        let source = "bag:\(dir)/rs.bag"
        let info = try CLI.run(["info", "--source", source])
        XCTAssertEqual(info.status, 0, info.stderr)
        for line in ["imu accelerometer: /device_0/sensor_2/Accel_0/imu/data, 63 samples @ ",
                     "imu gyroscope: /device_0/sensor_2/Gyro_0/imu/data, 200 samples @ ", " Hz (m/s^2)", " Hz (rad/s)"] {
            XCTAssertTrue(info.stdout.contains(line), "\(line) in:\n\(info.stdout)")
        }
        let json = try CLI.run(["info", "--json", "--source", source])
        XCTAssertEqual(json.status, 0, json.stderr)
        let o = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as! [String: Any]
        let imu = try XCTUnwrap(o["imu"] as? [[String: Any]])
        XCTAssertEqual(imu.map { $0["kind"] as? String }, ["accelerometer", "gyroscope"])
        XCTAssertEqual(imu.map { $0["samples"] as? Int }, [63, 200])
        XCTAssertEqual(imu.map { $0["unit"] as? String }, ["m/s^2", "rad/s"])
        XCTAssertEqual(imu[1]["rate_hz"] as? Double ?? 0, 200, accuracy: 10)

        // Without IMU: null.
        let plain = try CLI.run(["info", "--json", "--source", "bag:\(Repo.fixture("realsense-d435-640x480.bag"))"])
        let p = try JSONSerialization.jsonObject(with: Data(plain.stdout.utf8)) as! [String: Any]
        XCTAssertTrue(p["imu"] is NSNull, "\(String(describing: p["imu"]))")
    }

    /// imu.csv: a row per gyroscope sample inside the accelerometer's time span, the gyroscope as
    /// rosbags reads it and the accelerometer linearly interpolated at the row's stamp.
    func testConvertWritesImuCsv() throws {
        let (dir, ref) = try fixtures()
        let out = path("out")
        let conv = try CLI.run(["convert", "--source", "bag:\(dir)/rs.bag", "--out", out])
        XCTAssertEqual(conv.status, 0, conv.stderr)
        let accel = samples(ref, "rs.bag", topic: "/device_0/sensor_2/Accel_0/imu/data", field: "linear_acceleration")
        let gyro = samples(ref, "rs.bag", topic: "/device_0/sensor_2/Gyro_0/imu/data", field: "angular_velocity")
        let expected = gyro.filter { $0.t >= accel.first!.t && $0.t <= accel.last!.t }
        XCTAssertTrue(conv.stdout.contains("imu.csv (\(expected.count) IMU rows)"), conv.stdout)
        let lines = try String(contentsOfFile: out + "/imu.csv", encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        XCTAssertEqual(lines.first, "timestamp [s],ax [m/s^2],ay [m/s^2],az [m/s^2],gx [rad/s],gy [rad/s],gz [rad/s]")
        let rows = lines.dropFirst().filter { !$0.isEmpty }.map { $0.split(separator: ",").map { Double($0)! } }
        XCTAssertEqual(rows.count, expected.count)
        for (row, g) in zip(rows, expected) {
            XCTAssertEqual(row[0], g.t, accuracy: 6e-7)   // 6 decimals
            XCTAssertEqual(Array(row[4...6]), g.v)
            let j = accel.firstIndex { $0.t >= g.t }!
            let a: [Double]
            if accel[j].t == g.t {
                a = accel[j].v
            } else {
                let (p, q) = (accel[j - 1], accel[j])
                a = (0..<3).map { p.v[$0] + (q.v[$0] - p.v[$0]) * ((g.t - p.t) / (q.t - p.t)) }
            }
            for k in 0..<3 { XCTAssertEqual(row[1 + k], a[k], accuracy: 1e-12) }
        }
    }

    /// A truncated Imu message: one line naming the bag, exit 1, nothing written.
    func testConvertOfABadIMUStreamIsOneLine() throws {
        let (dir, _) = try fixtures()
        let out = path("bad-out")
        try assertBadInput(["convert", "--source", "bag:\(dir)/truncated.bag", "--out", out], mentioning: "\(dir)/truncated.bag")
        XCTAssertFalse(FileManager.default.fileExists(atPath: out + "/imu.csv"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: out + "/depth.txt"))
        try assertBadInput(["info", "--source", "bag:\(dir)/nan.bag"], mentioning: "angular_velocity is not finite")
    }
}
