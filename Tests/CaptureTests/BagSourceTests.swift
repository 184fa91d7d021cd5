import XCTest
import Foundation
import DepthKit
@testable import Capture

/// `bag:` sources against python3-rosbag's decoding of the shared D435 recording and its rewrites.
final class BagSourceTests: XCTestCase {
    let depthTopic = "/device_0/sensor_0/Depth_0/image/data"
    let colorTopic = "/device_0/sensor_1/Color_0/image/data"

    /// Expected frames: depth meters = raw × Depth Units (float32, as librealsense's get_distance),
    /// color = the rgb8 bytes with alpha 255, timestamp = the depth image's header stamp.
    func checkFrames(_ source: BagSource, _ ref: BagReference, file: StaticString = #filePath, line: UInt = #line) throws {
        let images = ref.images
        let depthImages = images.filter { ($0["topic"] as! String) == depthTopic }
        let colorImages = images.filter { ($0["topic"] as! String) == colorTopic }
        XCTAssertEqual(depthImages.count, 2, file: file, line: line)
        XCTAssertEqual(colorImages.count, 1, file: file, line: line)
        let units = Float(ref.options["/device_0/sensor_0/option/Depth Units/value"]!)
        let rgb = try ref.imageData(int(colorImages[0]["index"]))
        XCTAssertEqual(source.recording.frameCount, depthImages.count, file: file, line: line)
        source.recording.pause()
        for (i, d) in depthImages.enumerated() {
            try source.recording.seek(toFrame: i)
            guard let f = try source.nextFrame(now: 100) else { XCTFail("no frame \(i)", file: file, line: line); continue }
            XCTAssertEqual(f.index, i, file: file, line: line)
            XCTAssertEqual(f.timestamp, Double(int(d["stamp_sec"])) + Double(int(d["stamp_nsec"])) * 1e-9, file: file, line: line)
            let raw = try ref.imageData(int(d["index"]))
            guard let depth = f.depth else { XCTFail("frame \(i) has no depth", file: file, line: line); continue }
            XCTAssertEqual(depth.map.format, .depthFloat32)
            XCTAssertEqual(depth.map.width, int(d["width"]))
            XCTAssertEqual(depth.map.height, int(d["height"]))
            var mismatches = 0, valid = 0
            for y in 0..<depth.map.height {
                let row = depth.map.row(y, as: Float.self)
                for x in 0..<depth.map.width {
                    let v = UInt16(raw[y * 1280 + 2 * x]) | UInt16(raw[y * 1280 + 2 * x + 1]) << 8
                    if row[x] != Float(v) * units { mismatches += 1 }
                    if v != 0 { valid += 1 }
                }
            }
            XCTAssertEqual(mismatches, 0, "depth frame \(i)", file: file, line: line)
            XCTAssertGreaterThan(valid, 1000, file: file, line: line)
            // The one color frame pairs with both depth frames.
            XCTAssertEqual(f.color.format, .rgba8)
            var colorMismatches = 0
            for y in 0..<f.color.height {
                let row = f.color.row(y, as: UInt8.self)
                for x in 0..<f.color.width {
                    let s = y * 1920 + 3 * x
                    if row[4 * x] != rgb[s] || row[4 * x + 1] != rgb[s + 1] || row[4 * x + 2] != rgb[s + 2] || row[4 * x + 3] != 255 {
                        colorMismatches += 1
                    }
                }
            }
            XCTAssertEqual(colorMismatches, 0, "color of frame \(i)", file: file, line: line)
        }
    }

    func testFramesCalibrationAndMetadataMatchRosbag() throws {
        let ref = try BagReference(bag: fixtureBag, test: self)
        let source = BagSource(path: fixtureBag)
        XCTAssertEqual(source.name, "bag:\(fixtureBag)")
        try source.start()
        try checkFrames(source, ref)

        // Intrinsics and distortion: K and D of each stream's camera_info.
        let cal = try XCTUnwrap(source.calibration)
        XCTAssertEqual(cal.origin, "recording")
        for (cam, topic) in [(cal.depth, "/device_0/sensor_0/Depth_0/info/camera_info"), (cal.color, "/device_0/sensor_1/Color_0/info/camera_info")] {
            let info = try XCTUnwrap(ref.cameraInfo[topic])
            let k = doubles(info["K"]).map { Float($0) }
            XCTAssertEqual([cam.intrinsics.fx, cam.intrinsics.fy, cam.intrinsics.cx, cam.intrinsics.cy], [k[0], k[4], k[2], k[5]], topic)
            XCTAssertEqual(cam.intrinsics.width, int(info["width"]))
            XCTAssertEqual(cam.intrinsics.height, int(info["height"]))
            XCTAssertEqual(info["distortion_model"] as? String, "Brown Conrady")
            XCTAssertEqual(cam.model, .brownConrady)
            XCTAssertEqual(cam.coeffs, doubles(info["D"]).map { Float($0) })
        }
        XCTAssertEqual(source.intrinsics, cal.color.intrinsics)
        XCTAssertTrue(cal.needsAlignment)

        // Depth units: 0.001 m → 1000 units per meter.
        XCTAssertEqual(Double(try XCTUnwrap(source.depthUnits)), ref.options["/device_0/sensor_0/option/Depth Units/value"]!)
        XCTAssertEqual(cal.depthScale, 1000)

        // Extrinsics: librealsense's tf/0 of each stream is reference → stream; depth is the
        // reference here (identity), so depth→color = T_color ∘ T_depth⁻¹ = T_color. Computed here
        // from the quaternion with the textbook formula, independently of ROSMessage.
        let td = try XCTUnwrap(ref.tf["/device_0/sensor_0/Depth_0/tf/0"]), tc = try XCTUnwrap(ref.tf["/device_0/sensor_1/Color_0/tf/0"])
        XCTAssertEqual(doubles(td["translation"]), [0, 0, 0])
        XCTAssertEqual(doubles(td["rotation"]), [0, 0, 0, 1])
        let q = doubles(tc["rotation"]), t = doubles(tc["translation"])
        let (x, y, z, w) = (q[0], q[1], q[2], q[3])
        let r: [Double] = [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y),
                           2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
                           2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]
        let e = cal.depthToColor
        for i in 0..<9 { XCTAssertEqual(Double(e.rotation[i]), r[i], accuracy: 1e-6, "rotation[\(i)]") }
        XCTAssertEqual(Double(e.translation.x), t[0], accuracy: 1e-7)
        XCTAssertEqual(Double(e.translation.y), t[1], accuracy: 1e-7)
        XCTAssertEqual(Double(e.translation.z), t[2], accuracy: 1e-7)
        // The D435's color camera sits ~14 mm along +x of the depth camera (left imager).
        XCTAssertEqual(Double((e.translation * e.translation).sum().squareRoot()), 0.01433, accuracy: 0.0002)
        XCTAssertGreaterThan(e.translation.x, 0.014)

        // Metadata.
        let m = source.metadata
        XCTAssertEqual(m.kind, "bag")
        XCTAssertEqual(m.device, SourceMetadata.Device(name: ref.deviceInfo["Name"], serial: ref.deviceInfo["Serial Number"],
                                                       firmware: ref.deviceInfo["Firmware Version"]))
        XCTAssertEqual(m.device?.serial, "728612070259")
        XCTAssertEqual(m.streams, [SourceMetadata.Stream(name: "depth", width: 640, height: 480, fps: 6, encoding: "mono16", frames: 2),
                                   SourceMetadata.Stream(name: "color", width: 640, height: 480, fps: 6, encoding: "rgb8", frames: 1)])
        let depthTimes = ref.images.filter { ($0["topic"] as! String) == depthTopic }.map { uint64($0["time_ns"]) }
        XCTAssertEqual(try XCTUnwrap(m.durationSeconds), Double(depthTimes[1] - depthTimes[0]) * 1e-9, accuracy: 1e-9)
        XCTAssertEqual(source.frameTimes.count, 2)
        XCTAssertEqual(source.nominalFrameRate, 6)
        XCTAssertEqual(m.tags["compression"], "lz4")
        XCTAssertEqual(m.tags["realsense_file_version"], "3")
        XCTAssertEqual(source.warnings, [])
    }

    /// The same recording rewritten by python3-rosbag with bz2 and without compression.
    func testRewrittenBagsGiveIdenticalFrames() throws {
        let original = BagSource(path: fixtureBag)
        try original.start()
        for compression in ["bz2", "none"] {
            let dir = try makeTemporaryDirectory(self)
            let path = dir + "/\(compression).bag"
            try runReference(["rewrite", fixtureBag, path, compression])
            let ref = try BagReference(bag: path, test: self)
            let source = BagSource(path: path)
            try source.start()
            XCTAssertEqual(source.metadata.tags["compression"], compression)
            try checkFrames(source, ref)
            XCTAssertEqual(source.calibration, original.calibration)
            XCTAssertEqual(source.metadata.streams, original.metadata.streams)
            XCTAssertEqual(source.metadata.device, original.metadata.device)
        }
    }

    /// Recorded-time playback, pause, step, seek by index and time, loop.
    func testPlaybackFollowsReceiveTimesAndSeeks() throws {
        let source = BagSource(path: fixtureBag)
        XCTAssertThrowsError(try source.nextFrame(now: 0))
        try source.start()
        let gap = source.frameTimes[1]
        XCTAssertEqual(gap, 0.1679332, accuracy: 1e-6)  // 167934700 ns − 1500 ns
        XCTAssertEqual(try source.nextFrame(now: 10)?.index, 0)
        XCTAssertNil(try source.nextFrame(now: 10 + gap / 2))
        XCTAssertEqual(try source.nextFrame(now: 10 + gap + 0.001)?.index, 1)
        XCTAssertTrue(source.recording.isFinished)
        XCTAssertNil(try source.nextFrame(now: 20))
        try source.recording.seek(toFrame: 0)
        XCTAssertEqual(try source.nextFrame(now: 21)?.index, 0)
        source.recording.pause()
        XCTAssertNil(try source.nextFrame(now: 30))
        try source.recording.step(by: 1)
        XCTAssertEqual(try source.nextFrame(now: 31)?.index, 1)
        try source.recording.step(by: -1)
        XCTAssertEqual(try source.nextFrame(now: 32)?.index, 0)
        XCTAssertEqual(try source.recording.seek(toTime: gap - 0.01), 0)
        XCTAssertEqual(try source.nextFrame(now: 33)?.index, 0)
        XCTAssertEqual(try source.recording.seek(toTime: gap), 1)
        XCTAssertEqual(try source.nextFrame(now: 34)?.index, 1)
        XCTAssertEqual(try source.recording.seek(toTime: 99), 1)
        XCTAssertEqual(try source.recording.seek(toTime: -1), 0)
        XCTAssertThrowsError(try source.recording.seek(toFrame: 2))
        source.recording.loop = true
        source.recording.resume()
        XCTAssertEqual(try source.nextFrame(now: 40)?.index, 0)
        XCTAssertEqual(try source.nextFrame(now: 40 + gap)?.index, 1)
        XCTAssertEqual(try source.nextFrame(now: 40 + 2 * gap + 0.01)?.index, 0)
        source.stop()
        XCTAssertNil(source.recording.frameCount)
    }

    /// Depth but no color: depth plays, color is black of the depth size, a warning says so.
    func testDepthOnlyBagPlaysDepthWithBlackColor() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir + "/depth-only.bag"
        try runReference(["rewrite", fixtureBag, path, "lz4", "--drop-topic-regex", "/Color_0/"])
        let source = BagSource(path: path)
        var told: [String] = []
        source.onWarning = { told.append($0) }
        try source.start()
        XCTAssertEqual(source.recording.frameCount, 2)
        XCTAssertEqual(source.metadata.streams.map(\.name), ["depth"])
        XCTAssertEqual(told, source.warnings)
        XCTAssertTrue(source.warnings.contains { $0.contains("no color or infrared stream: color is shown black") }, "\(source.warnings)")
        let f = try XCTUnwrap(try source.nextFrame(now: 0))
        XCTAssertNotNil(f.depth)
        XCTAssertEqual(f.color.width, 640)
        XCTAssertEqual(f.color.height, 480)
        XCTAssertEqual(f.color.rgba(x: 100, y: 100).0, 0)
        XCTAssertEqual(f.color.rgba(x: 100, y: 100).3, 255)
        let cal = try XCTUnwrap(source.calibration)
        XCTAssertEqual(cal.color, cal.depth)
        XCTAssertFalse(cal.needsAlignment)
    }

    /// No sensor_msgs/Image topic at all: one line at start().
    func testNoImageTopicIsOneLineError() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir + "/no-images.bag"
        try runReference(["rewrite", fixtureBag, path, "lz4", "--drop-topic-regex", "/image/data$"])
        let source = BagSource(path: path)
        XCTAssertThrowsError(try source.start()) { error in
            let text = "\(error)"
            XCTAssertTrue(text.hasPrefix("\(path): no image topic (sensor_msgs/Image) in the bag; it has "), text)
            XCTAssertFalse(text.contains("\n"))
        }
        XCTAssertNil(source.recording.frameCount)
    }

    /// Damaged bags fail at start() with one line naming the file: truncated, corrupt lz4, a short message.
    func testDamagedBagsAreOneLineErrorsAtStart() throws {
        let dir = try makeTemporaryDirectory(self)
        let size = try FileManager.default.attributesOfItem(atPath: fixtureBag)[.size] as! Int
        for cut in [100, size / 3, size - 20] {
            let path = try modifiedCopy(fixtureBag, in: dir, name: "cut-\(cut).bag") { $0.removeLast($0.count - cut) }
            XCTAssertThrowsError(try BagSource(path: path).start()) { XCTAssertTrue("\($0)".hasPrefix(path + ": "), "\($0)") }
        }
        let bag = try RosBag(path: fixtureBag)
        let depth = bag.messages(onTopic: depthTopic)[0]
        let chunk = bag.chunks[depth.chunk]
        let lz4 = try modifiedCopy(fixtureBag, in: dir, name: "lz4.bag") { $0[Int(chunk.dataOffset)] ^= 0xFF }
        XCTAssertThrowsError(try BagSource(path: lz4).start()) { error in
            XCTAssertEqual("\(error)", "\(lz4): chunk \(depth.chunk) (lz4 at offset \(chunk.position)): corrupt data")
        }
        let short = dir + "/short.bag"
        try runReference(["short-image", fixtureBag, short])
        XCTAssertThrowsError(try BagSource(path: short).start()) { error in
            XCTAssertTrue("\(error)".hasPrefix("\(short): sensor_msgs/Image message on \(depthTopic) is shorter than its contents say"), "\(error)")
        }
    }

    /// A frame that cannot be decoded mid-run is thrown (one line, also in `warnings`); the next call goes on.
    func testBadFrameMidRunIsReportedAndPassed() throws {
        let dir = try makeTemporaryDirectory(self)
        let none = dir + "/none.bag"
        try runReference(["rewrite", fixtureBag, none, "none"])
        let bag = try RosBag(path: none)
        let second = bag.messages(onTopic: depthTopic)[1]
        // Make the second depth image's data length field lie (uncompressed chunk: patch in place).
        let path = try modifiedCopy(none, in: dir, name: "bad-second.bag") { bytes in
            let recordStart = Int(bag.chunks[second.chunk].dataOffset) + second.offset
            let headerLen = Int(bytes[recordStart]) | Int(bytes[recordStart + 1]) << 8
            let dataStart = recordStart + 4 + headerLen + 4
            let lengthField = dataStart + 40
            XCTAssertEqual(Array(bytes[lengthField..<(lengthField + 4)]), [0x00, 0x60, 0x09, 0x00])  // 614400
            bytes[lengthField + 3] = 0x10
        }
        let source = BagSource(path: path)
        try source.start()
        source.recording.pause()
        XCTAssertEqual(try source.nextFrame(now: 0)?.index, 0)
        try source.recording.step(by: 1)
        XCTAssertThrowsError(try source.nextFrame(now: 1)) { error in
            XCTAssertTrue("\(error)".hasPrefix("\(path): sensor_msgs/Image message on \(depthTopic) is shorter"), "\(error)")
        }
        XCTAssertEqual(source.warnings.count, 1)
        XCTAssertTrue(source.warnings[0].hasPrefix("frame 1: \(path): "))
        try source.recording.step(by: -1)
        XCTAssertEqual(try source.nextFrame(now: 2)?.index, 0)
    }

    /// A bag with plain ROS topics (no librealsense layout): depth and color found by encoding,
    /// camera_info beside each image topic, no extrinsics or depth units (said in `warnings`).
    func testPlainROSTopicsOpen() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir + "/generic.bag"
        try runReference(["generic", fixtureBag, path])
        let ref = try BagReference(bag: path, test: self)
        let source = BagSource(path: path)
        try source.start()
        XCTAssertEqual(source.recording.frameCount, 2)
        XCTAssertEqual(source.metadata.streams.map(\.name), ["depth", "color"])
        XCTAssertEqual(source.metadata.streams.map(\.frames), [2, 1])
        XCTAssertNil(source.metadata.device)
        let cal = try XCTUnwrap(source.calibration)
        let k = doubles(ref.cameraInfo["/camera/depth/camera_info"]!["K"]).map { Float($0) }
        XCTAssertEqual(cal.depth.intrinsics.fx, k[0])
        XCTAssertEqual(cal.depth.intrinsics.cy, k[5])
        XCTAssertEqual(cal.color.intrinsics.fx, Float(doubles(ref.cameraInfo["/camera/color/camera_info"]!["K"])[0]))
        XCTAssertTrue(cal.depthToColor.isIdentity())
        XCTAssertEqual(cal.depthScale, 1000)
        XCTAssertTrue(source.warnings.contains { $0.contains("no librealsense extrinsics") }, "\(source.warnings)")
        XCTAssertTrue(source.warnings.contains { $0.contains("taken as millimeters") }, "\(source.warnings)")
        let f = try XCTUnwrap(try source.nextFrame(now: 0))
        let raw = try ref.imageData(int(ref.images.first { ($0["topic"] as! String) == "/camera/depth/image_rect_raw" }!["index"]))
        let v = UInt16(raw[240 * 1280 + 2 * 320]) | UInt16(raw[240 * 1280 + 2 * 320 + 1]) << 8
        XCTAssertEqual(f.depth?.map.sample(x: 320, y: 240), Float(v) * 0.001)
    }

    /// Distortion model names (librealsense's and ROS's) and depth units.
    func testDistortionNamesAndDepthUnits() throws {
        XCTAssertEqual(BagSource.distortionModel("plumb_bob"), .brownConrady)
        XCTAssertEqual(BagSource.distortionModel("Inverse Brown Conrady"), .inverseBrownConrady)
        XCTAssertEqual(BagSource.distortionModel("equidistant"), .kannalaBrandt4)
        XCTAssertEqual(BagSource.distortionModel("rational_polynomial"), .rationalPolynomial)
        XCTAssertEqual(BagSource.unitsPerMeter(0.001), 1000)
        XCTAssertEqual(BagSource.unitsPerMeter(0.0001), 10000)
        XCTAssertEqual(BagSource.unitsPerMeter(0.0002), 5000)
    }

    /// Every color encoding, with rows padded past their pixels (step > width × bpp), and
    /// big-endian 16UC1 depth: hand-built by python3-rosbag, expected values computed here
    /// (YUYV and UYVY with BT.601 limited-range integer math, as PixelConversion documents).
    func testColorEncodingsAndBigEndianDepth() throws {
        let dir = try makeTemporaryDirectory(self)
        try runReference(["encodings", fixtureBag, dir])
        func clamp(_ v: Int) -> UInt8 { UInt8(max(0, min(255, v))) }
        func yuv(_ y: UInt8, _ u: UInt8, _ v: UInt8) -> [UInt8] {
            let c = 298 * (Int(y) - 16), d = Int(u) - 128, e = Int(v) - 128
            return [clamp((c + 409 * e + 128) >> 8), clamp((c - 100 * d - 208 * e + 128) >> 8), clamp((c + 516 * d + 128) >> 8), 255]
        }
        let w = 6, h = 4
        for (encoding, bpp) in [("rgb8", 3), ("bgr8", 3), ("rgba8", 4), ("bgra8", 4), ("mono8", 1), ("8UC1", 1), ("yuyv", 2), ("yuv422", 2)] {
            let src = [UInt8](try Data(contentsOf: URL(fileURLWithPath: "\(dir)/\(encoding).color")))
            let rawDepth = [UInt8](try Data(contentsOf: URL(fileURLWithPath: "\(dir)/\(encoding).depth")))
            let step = w * bpp + 3
            XCTAssertEqual(src.count, step * h)
            let source = BagSource(path: "\(dir)/\(encoding).bag")
            try source.start()
            let f = try XCTUnwrap(try source.nextFrame(now: 0))
            XCTAssertEqual(source.metadata.streams.map(\.encoding), ["16UC1", encoding])
            for y in 0..<h {
                for x in 0..<w {
                    let s = y * step
                    let expected: [UInt8]
                    switch encoding {
                    case "rgb8": expected = [src[s + 3 * x], src[s + 3 * x + 1], src[s + 3 * x + 2], 255]
                    case "bgr8": expected = [src[s + 3 * x + 2], src[s + 3 * x + 1], src[s + 3 * x], 255]
                    case "rgba8": expected = Array(src[(s + 4 * x)..<(s + 4 * x + 4)])
                    case "bgra8": expected = [src[s + 4 * x + 2], src[s + 4 * x + 1], src[s + 4 * x], src[s + 4 * x + 3]]
                    case "yuyv":
                        let i = s + x / 2 * 4
                        expected = yuv(src[i + (x % 2) * 2], src[i + 1], src[i + 3])
                    case "yuv422":
                        let i = s + x / 2 * 4
                        expected = yuv(src[i + 1 + (x % 2) * 2], src[i], src[i + 2])
                    default: expected = [src[s + x], src[s + x], src[s + x], 255]
                    }
                    let p = f.color.rgba(x: x, y: y)
                    XCTAssertEqual([p.0, p.1, p.2, p.3], expected, "\(encoding) (\(x), \(y))")
                    let v = UInt16(rawDepth[y * 2 * w + 2 * x]) << 8 | UInt16(rawDepth[y * 2 * w + 2 * x + 1])
                    XCTAssertEqual(f.depth?.map.sample(x: x, y: y), Float(v) * 0.001, "\(encoding) depth (\(x), \(y))")
                }
            }
        }
    }
}
