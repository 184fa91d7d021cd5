import XCTest
import Foundation
@testable import Capture
import TestSupport

/// IMU samples of each source kind against independent readers: Tests/Fixtures/imu_reference.py
/// writes the bags and the rosbag2 folder with PyPI's `rosbags` and reads them back with it, and
/// packs Azure Kinect samples with Python's struct; the mkv holding them is written here (a small
/// Matroska writer: the Azure Kinect recorder's layout, samples laced into block groups) and
/// ffprobe's demuxing of it is checked against the samples packed.
final class IMUTests: XCTestCase {
    /// The fixtures, made once for the class.
    static let made = LockedValue<String?>(nil)

    func fixtures() throws -> String {
        if let dir = Self.made.current { return dir }
        let python = try PythonReference.python(importing: ["rosbags", "numpy"])
        let dir = NSTemporaryDirectory() + "imu-fixtures-\(getpid())"
        let r = try TestProcess.run([python, Repo.fixture("imu_reference.py"), "make", dir], timeout: 300)
        guard r.status == 0 else {
            XCTFail("imu_reference.py make failed: \(r.output)")
            throw CaptureError.invalidState("imu_reference.py failed")
        }
        Self.made.withLock { $0 = dir }
        return dir
    }

    override class func tearDown() {
        if let dir = made.current { try? FileManager.default.removeItem(atPath: dir) }
        super.tearDown()
    }

    func reference() throws -> [String: Any] {
        let data = try Data(contentsOf: URL(fileURLWithPath: try fixtures() + "/reference.json"))
        return try JSONSerialization.jsonObject(with: data) as! [String: Any]
    }

    /// What rosbags read: per topic, the stamps (seconds, as a ROS time is turned into them) and vectors.
    struct RosbagsIMU {
        var stamps: [Double] = []
        var accel: [SIMD3<Double>] = []
        var gyro: [SIMD3<Double>] = []
    }

    func rosbags(_ key: String) throws -> [String: RosbagsIMU] {
        var out: [String: RosbagsIMU] = [:]
        for m in try reference()[key] as! [[String: Any]] {
            let topic = m["topic"] as! String
            func v(_ k: String) -> SIMD3<Double> { let a = (m[k] as! [String]).map { Double($0)! }; return SIMD3(a[0], a[1], a[2]) }
            out[topic, default: RosbagsIMU()].stamps.append(Double(int(m["sec"])) + Double(int(m["nanosec"])) * 1e-9)
            out[topic, default: RosbagsIMU()].accel.append(v("linear_acceleration"))
            out[topic, default: RosbagsIMU()].gyro.append(v("angular_velocity"))
        }
        return out
    }

    static let accelTopic = "/device_0/sensor_2/Accel_0/imu/data"
    static let gyroTopic = "/device_0/sensor_2/Gyro_0/imu/data"

    func checkLibrealsense(_ imu: IMUSamples, _ ref: [String: RosbagsIMU], file: StaticString = #filePath, line: UInt = #line) {
        guard let a = imu.accelerometer, let g = imu.gyroscope, let ra = ref[Self.accelTopic], let rg = ref[Self.gyroTopic] else {
            return XCTFail("accelerometer and gyroscope expected: \(imu.streams.map(\.name))", file: file, line: line)
        }
        XCTAssertEqual(a.name, Self.accelTopic, file: file, line: line)
        XCTAssertEqual(g.name, Self.gyroTopic, file: file, line: line)
        XCTAssertEqual(a.count, 63, file: file, line: line)
        XCTAssertEqual(g.count, 200, file: file, line: line)
        XCTAssertEqual(a.timestamps, ra.stamps, file: file, line: line)
        XCTAssertEqual(a.values, ra.accel, file: file, line: line)
        XCTAssertEqual(g.timestamps, rg.stamps, file: file, line: line)
        XCTAssertEqual(g.values, rg.gyro, file: file, line: line)
        // ~63 Hz and ~200 Hz (no stream info in the fixture: from the median interval).
        XCTAssert((55...70).contains(a.rate ?? 0), "accelerometer rate \(String(describing: a.rate))", file: file, line: line)
        XCTAssert((190...210).contains(g.rate ?? 0), "gyroscope rate \(String(describing: g.rate))", file: file, line: line)
    }

    // MARK: ROS 1 and ROS 2

    func testBagLibrealsenseAccelAndGyroEqualWhatRosbagsReads() throws {
        let bag = BagSource(path: try fixtures() + "/rs.bag")
        try bag.start()
        defer { bag.stop() }
        let imu = try XCTUnwrap(bag.imu, "the bag has Accel and Gyro topics")
        checkLibrealsense(try imu.imuSamples(), try rosbags("rs.bag"))
    }

    func testGenericImuTopicGivesBothSensors() throws {
        let bag = BagSource(path: try fixtures() + "/generic.bag")
        try bag.start()
        defer { bag.stop() }
        let imu = try XCTUnwrap(bag.imu).imuSamples()
        let ref = try XCTUnwrap(try rosbags("generic.bag")["/imu/data"])
        XCTAssertEqual(imu.accelerometer?.name, "/imu/data")
        XCTAssertEqual(imu.gyroscope?.name, "/imu/data")
        XCTAssertEqual(imu.accelerometer?.timestamps, ref.stamps)
        XCTAssertEqual(imu.accelerometer?.values, ref.accel)
        XCTAssertEqual(imu.gyroscope?.timestamps, ref.stamps)
        XCTAssertEqual(imu.gyroscope?.values, ref.gyro)
        // One topic with both: imu.csv rows are its messages as recorded.
        let rows = imu.rows()
        XCTAssertEqual(rows.map(\.timestamp), ref.stamps)
        XCTAssertEqual(rows.compactMap(\.accelerometer), ref.accel)
        XCTAssertEqual(rows.compactMap(\.gyroscope), ref.gyro)
    }

    func testROS2LibrealsenseLayoutEqualsWhatRosbagsReads() throws {
        let src = ROS2Source(path: try fixtures() + "/rs-db3")
        try src.start()
        defer { src.stop() }
        checkLibrealsense(try XCTUnwrap(src.imu).imuSamples(), try rosbags("rs-db3"))
    }

    func testTheSharedD435BagHasNoIMU() throws {
        let bag = BagSource(path: Repo.fixture("realsense-d435-640x480.bag"))
        try bag.start()
        defer { bag.stop() }
        XCTAssertNil(bag.imu)
    }

    /// A cut-short Imu message and a NaN are one line naming the bag, the topic and the message.
    func testTruncatedMessageAndNaNAreOneLineErrors() throws {
        for (name, expect) in [("truncated.bag", "sensor_msgs/Imu message on \(Self.accelTopic)"),
                               ("nan.bag", "\(Self.gyroTopic) message 7: angular_velocity is not finite")] {
            let path = try fixtures() + "/" + name
            let bag = BagSource(path: path)
            try bag.start()   // the frames are fine
            defer { bag.stop() }
            let imu = try XCTUnwrap(bag.imu)
            XCTAssertThrowsError(try imu.imuSamples(), name) { error in
                let text = "\(error)"
                XCTAssertFalse(text.contains("\n"), text)
                XCTAssert(text.hasPrefix(path + ": "), text)
                XCTAssert(text.contains(expect), text)
            }
        }
    }

    // MARK: Azure Kinect mkv

    /// The Azure Kinect recorder's layout in a small Matroska file: a DEPTH track (V_MS/VFW/FOURCC
    /// b16g, 4×2) and an IMU track (S_K4A/IMU, subtitle type) whose samples are laced (fixed-size
    /// lacing) `perBlock` to a block group, one block a cluster; TimestampScale 1 µs, times from the
    /// first IMU sample.
    static func k4aMKV(imu raw: [UInt8], perBlock: Int = 10) -> [UInt8] {
        func vintSize(_ n: Int) -> [UInt8] { [0x01] + (0..<7).reversed().map { UInt8(truncatingIfNeeded: UInt64(n) >> (8 * UInt64($0))) } }
        func idBytes(_ id: UInt32) -> [UInt8] {
            let n = id > 0xFFFFFF ? 4 : id > 0xFFFF ? 3 : id > 0xFF ? 2 : 1
            return (0..<n).reversed().map { UInt8(truncatingIfNeeded: id >> (8 * UInt32($0))) }
        }
        func el(_ id: UInt32, _ body: [UInt8]) -> [UInt8] { idBytes(id) + vintSize(body.count) + body }
        func uint(_ id: UInt32, _ v: UInt64) -> [UInt8] { el(id, (0..<8).reversed().map { UInt8(truncatingIfNeeded: v >> (8 * UInt64($0))) }) }
        func str(_ id: UInt32, _ s: String) -> [UInt8] { el(id, Array(s.utf8)) }
        func le32(_ v: UInt32) -> [UInt8] { withUnsafeBytes(of: v.littleEndian, Array.init) }
        func le64(_ b: [UInt8], _ at: Int) -> UInt64 { (0..<8).reduce(0) { $0 | UInt64(b[at + $1]) << (8 * UInt64($1)) } }

        let header = el(0x1A45DFA3, uint(0x4286, 1) + uint(0x42F7, 1) + uint(0x42F2, 4) + uint(0x42F3, 8)
                        + str(0x4282, "matroska") + uint(0x4287, 4) + uint(0x4285, 2))
        let info = el(0x1549A966, uint(0x2AD7B1, 1000) + str(0x4D80, "depthlens IMUTests") + str(0x5741, "depthlens IMUTests"))
        let bih = le32(40) + le32(4) + le32(2) + [1, 0, 16, 0] + Array("b16g".utf8) + le32(16) + le32(0) + le32(0) + le32(0) + le32(0)
        let depthTrack = el(0xAE, uint(0xD7, 1) + uint(0x73C5, 101) + uint(0x83, 1) + str(0x536E, "DEPTH") + str(0x86, "V_MS/VFW/FOURCC")
                            + el(0x63A2, bih) + el(0xE0, uint(0xB0, 4) + uint(0xBA, 2)))
        let imuTrack = el(0xAE, uint(0xD7, 2) + uint(0x73C5, 102) + uint(0x83, 0x11) + str(0x536E, "IMU") + str(0x86, "S_K4A/IMU")
                          + uint(0x9C, 1))
        let tracks = el(0x1654AE6B, depthTrack + imuTrack)

        // Blocks by time: (µs from the first sample, bytes).
        let start = le64(raw, 0)
        var blocks: [(time: UInt64, bytes: [UInt8])] = []
        let samples = raw.count / 40
        var s = 0
        while s < samples {
            let n = min(perBlock, samples - s)
            let t = (le64(raw, s * 40) - start) / 1000
            let lace = [0x82, 0, 0, 0x04, UInt8(n - 1)] + Array(raw[(s * 40)..<((s + n) * 40)])   // track 2, tc 0, fixed lacing
            blocks.append((t, el(0xA0, el(0xA1, lace) + uint(0x9B, UInt64(n) * 625))))
            s += n
        }
        for i in 0..<3 {
            let t = UInt64(i) * 33_333
            let pixels = (0..<8).flatMap { k -> [UInt8] in let v = UInt16(1000 + 10 * k + i); return [UInt8(v >> 8), UInt8(v & 255)] }
            blocks.append((t, el(0xA3, [0x81, 0, 0, 0x80] + pixels)))   // track 1, tc 0, keyframe
        }
        blocks.sort { $0.time < $1.time }
        let clusters = blocks.flatMap { el(0x1F43B675, uint(0xE7, $0.time) + $0.bytes) }
        return header + el(0x18538067, info + tracks + clusters)
    }

    /// ffprobe's hex dump (`-show_data`) of a packet back to bytes.
    static func bytes(ofHexDump dump: String) -> [UInt8] {
        var out: [UInt8] = []
        for line in dump.split(separator: "\n") {
            guard let colon = line.range(of: ": ") else { continue }
            let hex = line[colon.upperBound...].prefix(39).filter { $0.isHexDigit }
            var i = hex.startIndex
            while i < hex.endIndex, let j = hex.index(i, offsetBy: 2, limitedBy: hex.endIndex) {
                out.append(UInt8(hex[i..<j], radix: 16)!)
                i = j
            }
        }
        return out
    }

    func testAzureKinectIMUTrackEqualsTheSamplesPacked() throws {
        let dir = try fixtures()
        let raw = [UInt8](try Data(contentsOf: URL(fileURLWithPath: dir + "/k4a-imu.bin")))
        XCTAssertEqual(raw.count, 120 * 40)
        let out = try makeTemporaryDirectory(self) + "/imu.mkv"
        try Data(Self.k4aMKV(imu: raw)).write(to: URL(fileURLWithPath: out))

        // ffprobe demuxes the IMU track into one 40-byte packet per sample, the bytes packed.
        // (-v quiet: ffprobe says "Unsupported codec" for S_K4A/IMU, and the output is one stream.)
        let r = try TestProcess.run(["ffprobe", "-v", "quiet", "-select_streams", "1", "-show_entries", "packet=size,data",
                                     "-show_data", "-of", "json", out], timeout: 60)
        XCTAssertEqual(r.status, 0, r.output)
        let json = try JSONSerialization.jsonObject(with: Data(r.output.utf8)) as! [String: Any]
        let packets = json["packets"] as! [[String: Any]]
        XCTAssertEqual(packets.count, 120)
        XCTAssert(packets.allSatisfy { Int($0["size"] as! String) == 40 }, "every packet one sample")
        XCTAssertEqual(packets.flatMap { Self.bytes(ofHexDump: $0["data"] as! String) }, raw)

        let src = MKVSource(path: out)
        try src.start()
        defer { src.stop() }
        XCTAssertEqual(src.frameTimestamps.count, 3, "the DEPTH track plays")
        let imu = try XCTUnwrap(src.imu, "the IMU track is found").imuSamples()
        let ref = try reference()["k4a"] as! [[String: Any]]
        func v(_ a: Any?) -> SIMD3<Double> { let d = (a as! [String]).map { Double($0)! }; return SIMD3(d[0], d[1], d[2]) }
        // The SDK's stamps: whole microseconds of the device clock.
        XCTAssertEqual(imu.accelerometer?.timestamps, ref.map { Double(uint64($0["acc_ns"]) / 1000) / 1e6 })
        XCTAssertEqual(imu.accelerometer?.values, ref.map { v($0["acc"]) })
        XCTAssertEqual(imu.gyroscope?.timestamps, ref.map { Double(uint64($0["gyro_ns"]) / 1000) / 1e6 })
        XCTAssertEqual(imu.gyroscope?.values, ref.map { v($0["gyro"]) })
        XCTAssertEqual(imu.accelerometer?.name, "IMU")
        XCTAssert((1500...1700).contains(imu.accelerometer?.rate ?? 0), "~1.6 kHz: \(String(describing: imu.accelerometer?.rate))")
    }

    func testAzureKinectBadPacketsAreOneLine() {
        var sample = [UInt8](repeating: 0, count: 40)
        XCTAssertThrowsError(try MKVSource.imuSamples([Array(sample.prefix(33))], track: "IMU", path: "rec.mkv")) {
            XCTAssertEqual("\($0)", "rec.mkv: IMU track: packet 0 holds 33 bytes, not whole 40-byte IMU samples")
        }
        withUnsafeBytes(of: Float.nan.bitPattern.littleEndian) { sample.replaceSubrange(12..<16, with: $0) }
        XCTAssertThrowsError(try MKVSource.imuSamples([sample], track: "IMU", path: "rec.mkv")) {
            XCTAssert("\($0)".hasPrefix("rec.mkv: IMU packet 0 sample 0: the accelerometer is not finite"), "\($0)")
        }
    }

    // MARK: Stray Scanner

    func testStrayScannerIMUcsv() throws {
        let path = try fixtures() + "/stray-imu.csv"
        let imu = try ScanFormats.strayIMU([UInt8](try Data(contentsOf: URL(fileURLWithPath: path))), path: path)
        // The file, read here by splitting its lines: g scaled to m/s² (its median |a| is about 1).
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").dropFirst()
        let rows = lines.map { $0.split(separator: ",").map { Double($0.trimmingCharacters(in: .whitespaces))! } }
        XCTAssertEqual(rows.count, 30)
        XCTAssertEqual(imu.accelerometer?.timestamps, rows.map { $0[0] })
        XCTAssertEqual(imu.gyroscope?.timestamps, rows.map { $0[0] })
        XCTAssertEqual(imu.accelerometer?.values, rows.map { SIMD3($0[1], $0[2], $0[3]) * 9.80665 })
        XCTAssertEqual(imu.gyroscope?.values, rows.map { SIMD3($0[4], $0[5], $0[6]) })
        XCTAssertEqual(imu.accelerometer?.rate, 100)

        // m/s² already (older versions): kept.
        let metric = "timestamp, a_x, a_y, a_z, alpha_x, alpha_y, alpha_z\n1.0, 0.1, -9.8, 0.2, 0, 0, 0\n"
        XCTAssertEqual(try ScanFormats.strayIMU(Array(metric.utf8), path: "imu.csv").accelerometer?.values, [SIMD3(0.1, -9.8, 0.2)])

        // Bad input: one line naming the file and the line.
        for (text, expect) in [("timestamp, a_x\n1.0, nan, 0, 0, 0, 0, 0\n", "imu.csv: line 2: 'nan' is not a number"),
                               ("timestamp, a_x\n1.0, 0, 0\n", "imu.csv: line 2: expected 'timestamp, a_x, a_y, a_z, alpha_x, alpha_y, alpha_z', got 3 fields")] {
            XCTAssertThrowsError(try ScanFormats.strayIMU(Array(text.utf8), path: "imu.csv")) { XCTAssertEqual("\($0)", expect) }
        }
    }

    /// A Stray Scanner folder with imu.csv offers it through `FrameSource.imu`; one without, none.
    func testScanSourceOffersImuCsv() throws {
        let dir = try makeTemporaryDirectory(self)
        try runChecked(["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i", "color=c=gray:s=16x16:d=0.1:r=30",
                     "-c:v", "mpeg4", dir + "/rgb.mp4"])
        try FileManager.default.createDirectory(atPath: dir + "/depth", withIntermediateDirectories: true)
        try "timestamp, frame, x, y, z, qx, qy, qz, qw\n51234.5, 0, 0, 0, 0, 0, 0, 0, 1\n".write(toFile: dir + "/odometry.csv", atomically: true, encoding: .utf8)
        let scan = ScanSource(directory: dir)
        try scan.start()
        XCTAssertNil(scan.imu)
        scan.stop()
        try FileManager.default.copyItem(atPath: try fixtures() + "/stray-imu.csv", toPath: dir + "/imu.csv")
        try scan.start()
        defer { scan.stop() }
        let imu = try XCTUnwrap(scan.imu).imuSamples()
        XCTAssertEqual(imu.accelerometer?.count, 30)
        XCTAssertEqual(imu.gyroscope?.name, "imu.csv")
    }

    // MARK: imu.csv rows

    func testRowsInterpolateTheAccelerometerAtGyroscopeStamps() {
        let a = IMUStream(kind: .accelerometer, name: "a", timestamps: [1, 2, 3], values: [SIMD3(0, 0, 10), SIMD3(2, 0, 10), SIMD3(2, 4, 10)])
        let g = IMUStream(kind: .gyroscope, name: "g", timestamps: [0.5, 1, 1.25, 2.5, 3, 3.5], values: (0..<6).map { SIMD3(Double($0), 0, 0) })
        let rows = IMUSamples(accelerometer: a, gyroscope: g).rows()
        // Before the first and after the last accelerometer sample: no row.
        XCTAssertEqual(rows.map(\.timestamp), [1, 1.25, 2.5, 3])
        XCTAssertEqual(rows.map(\.accelerometer), [SIMD3(0, 0, 10), SIMD3(0.5, 0, 10), SIMD3(2, 2, 10), SIMD3(2, 4, 10)])
        XCTAssertEqual(rows.map(\.gyroscope), [SIMD3(1, 0, 0), SIMD3(2, 0, 0), SIMD3(3, 0, 0), SIMD3(4, 0, 0)])
        let csv = IMUSamples(accelerometer: a, gyroscope: g).csv(within: 1.1...2.6)
        XCTAssertEqual(csv, IMUSamples.csvHeader + "\n1.250000,0.5,0.0,10.0,2.0,0.0,0.0\n2.500000,2.0,2.0,10.0,3.0,0.0,0.0\n")
        XCTAssertEqual(IMUSamples(gyroscope: g).csv(within: 0...0.6), IMUSamples.csvHeader + "\n0.500000,,,,0.0,0.0,0.0\n")
        // Unsorted stamps are sorted with their values.
        let u = IMUStream(kind: .gyroscope, name: "u", timestamps: [2, 1], values: [SIMD3(2, 2, 2), SIMD3(1, 1, 1)])
        XCTAssertEqual(u.timestamps, [1, 2])
        XCTAssertEqual(u.values, [SIMD3(1, 1, 1), SIMD3(2, 2, 2)])
    }
}
