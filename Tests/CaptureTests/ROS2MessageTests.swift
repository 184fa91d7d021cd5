import XCTest
import Foundation
import DepthKit
import TestSupport
@testable import Capture

/// The CDR decoder and the ROS 2 messages against messages serialized by PyPI's `rosbags`
/// (Tests/Fixtures/ros2_messages_reference.py: both byte orders; compressedDepth PNG and RVL
/// payloads made as image_transport's compressed_depth_image_transport makes them).
final class ROS2MessageTests: XCTestCase {
    struct Case {
        let name: String, type: String, topic: String
        let bytes: [UInt8]
        let expected: [String: Any]
    }

    /// The reference's vectors (made by each test that needs them: about a second).
    func cases() throws -> [Case] {
        let python = try PythonReference.python(importing: ["rosbags", "numpy", "PIL"])
        let folder = TemporaryFolder("ros2-messages")
        let out = folder.file("vectors.json")
        let r = try TestProcess.run([python, Repo.fixture("ros2_messages_reference.py"), out], timeout: 300)
        XCTAssertEqual(r.status, 0, r.output)
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out))) as! [String: Any]
        let list = (json["cases"] as! [[String: Any]]).map { c in
            Case(name: c["name"] as! String, type: c["type"] as! String, topic: c["topic"] as! String,
                 bytes: hexBytes(c["hex"] as! String), expected: c["expected"] as! [String: Any])
        }
        XCTAssertGreaterThan(list.count, 40)
        return list
    }

    func cases(_ type: String) throws -> [Case] {
        let c = try cases().filter { $0.type == type }
        XCTAssertFalse(c.isEmpty, "no \(type) vectors")
        return c
    }

    func checkHeader(_ h: ROS2Message.Header, _ e: Any?, _ name: String) {
        let e = e as! [String: Any]
        XCTAssertEqual(Int(h.stamp.sec), e["sec"] as? Int, name)
        XCTAssertEqual(Int(h.stamp.nanosec), e["nanosec"] as? Int, name)
        XCTAssertEqual(h.frameID, e["frame_id"] as? String, name)
    }

    func testHeaderLessEncapsulations() throws {
        XCTAssertThrowsError(try CDRReader(bytes: [0, 1], name: "f.db3", what: "x on /t"))
        XCTAssertThrowsError(try CDRReader(bytes: [0, 3, 0, 0, 1, 2, 3, 4], name: "f.db3", what: "x on /t")) { e in
            XCTAssertTrue("\(e)".contains("encapsulation 0x0003"), "\(e)")
        }
        // Alignment counts from the header's end: a u8 then a u32 puts the u32 at offset 4 + 4.
        var r = try CDRReader(bytes: [0, 1, 0, 0, 7, 0xAA, 0xAA, 0xAA, 1, 2, 3, 4, 0, 0, 0, 0, 0, 0, 0xF0, 0x3F], name: "f", what: "w")
        XCTAssertEqual(try r.u8(), 7)
        XCTAssertEqual(try r.u32(), 0x0403_0201)
        XCTAssertEqual(try r.f64(), 1.0)
        var b = try CDRReader(bytes: [0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 2, 0x41, 0], name: "f", what: "w")
        XCTAssertEqual(try b.u32(), 5)
        XCTAssertEqual(try b.string(), "A")
    }

    func testImages() throws {
        for c in try cases("sensor_msgs/msg/Image") {
            let image = try ROS2Message.image(c.bytes, file: "rec.db3", topic: c.topic)
            let e = c.expected
            checkHeader(image.header, e["header"], c.name)
            XCTAssertEqual(image.width, e["width"] as? Int, c.name)
            XCTAssertEqual(image.height, e["height"] as? Int, c.name)
            XCTAssertEqual(image.encoding, e["encoding"] as? String, c.name)
            XCTAssertEqual(image.isBigEndian, (e["is_bigendian"] as? Int) == 1, c.name)
            XCTAssertEqual(image.step, e["step"] as? Int, c.name)
            let data = hexBytes(e["data"] as! String)
            XCTAssertEqual(Array(image.data), data, c.name)
            try ROSImageDecoding.check(image, file: "rec.db3", topic: c.topic)
            // Pixel conversion: one pixel per image checked against its bytes.
            let (x, y) = (image.width - 1, image.height - 1), o = y * image.step
            switch image.encoding {
            case "16UC1", "mono16":
                let d = ROSImageDecoding.depthMeters(image, units: 0.001)
                let raw = UInt16(data[o + 2 * x]) | UInt16(data[o + 2 * x + 1]) << 8
                XCTAssertEqual(d.row(y, as: Float.self)[x], Float(raw) * 0.001, c.name)
            case "32FC1":
                let d = ROSImageDecoding.depthMeters(image, units: 0.001)
                let bits = (0..<4).reduce(UInt32(0)) { $0 << 8 | UInt32(data[o + 4 * x + $1]) }  // big-endian image
                let v = Float(bitPattern: bits)
                XCTAssertEqual(d.row(y, as: Float.self)[x], v > 0 && v.isFinite ? v : 0, c.name)
            case "rgb8", "bgr8":
                let rgba = ROSImageDecoding.rgba(image)
                defer { withExtendedLifetime(rgba) {} }  // px points into it
                let px = rgba.row(y, as: UInt8.self)
                let s = Array(data[(o + 3 * x)..<(o + 3 * x + 3)])
                XCTAssertEqual([px[4 * x], px[4 * x + 1], px[4 * x + 2], px[4 * x + 3]],
                               image.encoding == "rgb8" ? s + [255] : s.reversed() + [255], c.name)
            case "rgba8", "bgra8":
                let rgba = ROSImageDecoding.rgba(image)
                defer { withExtendedLifetime(rgba) {} }  // px points into it
                let px = rgba.row(y, as: UInt8.self)
                let s = Array(data[(o + 4 * x)..<(o + 4 * x + 4)])
                XCTAssertEqual([px[4 * x], px[4 * x + 1], px[4 * x + 2], px[4 * x + 3]],
                               image.encoding == "rgba8" ? s : [s[2], s[1], s[0], s[3]], c.name)
            case "mono8":
                let rgba = ROSImageDecoding.rgba(image)
                defer { withExtendedLifetime(rgba) {} }  // px points into it
                let px = rgba.row(y, as: UInt8.self)
                XCTAssertEqual([px[4 * x], px[4 * x + 3]], [data[o + x], 255], c.name)
            case "yuyv", "yuv422":
                // The same bytes through PixelConversion directly (UYVY for yuv422).
                let ref = PixelBuffer(width: image.width, height: image.height, format: .rgba8)
                data.withUnsafeBytes { raw in
                    if image.encoding == "yuyv" {
                        PixelConversion.yuyvToRGBA(raw.baseAddress!, bytesPerLine: image.step, into: ref)
                    } else {
                        PixelConversion.uyvyToRGBA(raw.baseAddress!, bytesPerLine: image.step, into: ref)
                    }
                }
                let got = ROSImageDecoding.rgba(image)
                for yy in 0..<image.height {
                    XCTAssertEqual(Array(UnsafeBufferPointer(start: got.row(yy, as: UInt8.self), count: 4 * image.width)),
                                   Array(UnsafeBufferPointer(start: ref.row(yy, as: UInt8.self), count: 4 * image.width)), c.name)
                }
            default:
                XCTFail("unexpected encoding \(image.encoding)")
            }
        }
    }

    func testCameraInfo() throws {
        for c in try cases("sensor_msgs/msg/CameraInfo") {
            let info = try ROS2Message.cameraInfo(c.bytes, file: "rec.db3", topic: c.topic)
            let e = c.expected
            checkHeader(info.header, e["header"], c.name)
            XCTAssertEqual(info.width, e["width"] as? Int, c.name)
            XCTAssertEqual(info.height, e["height"] as? Int, c.name)
            XCTAssertEqual(info.distortionModel, e["distortion_model"] as? String, c.name)
            XCTAssertEqual(info.D, e["d"] as? [Double], c.name)
            XCTAssertEqual(info.K, e["k"] as? [Double], c.name)
            XCTAssertEqual(info.R, e["r"] as? [Double], c.name)
            XCTAssertEqual(info.P, e["p"] as? [Double], c.name)
            XCTAssertEqual(Int(info.binningX), e["binning_x"] as? Int, c.name)
            XCTAssertEqual(Int(info.binningY), e["binning_y"] as? Int, c.name)
            let roi = e["roi"] as! [Any]
            XCTAssertEqual([info.roi.xOffset, info.roi.yOffset, info.roi.height, info.roi.width].map { Int($0) },
                           roi.prefix(4).map { $0 as! Int }, c.name)
            XCTAssertEqual(info.roi.doRectify, roi[4] as? Bool, c.name)
            let cam = ROSImageDecoding.cameraModel(K: info.K, D: info.D, distortionModel: info.distortionModel, width: info.width,
                                                   height: info.height, streamWidth: 1280, streamHeight: 960)
            if info.K[0] > 0 {
                // 640x480 info on a 1280x960 stream: scaled by 2.
                XCTAssertEqual(cam?.intrinsics.fx, Float(info.K[0] * 2), c.name)
                XCTAssertEqual(cam?.model, .brownConrady, c.name)
            } else {
                XCTAssertNil(cam, "an all-zero K is no camera (\(c.name))")
            }
        }
    }

    func testTransformsImuStrings() throws {
        for c in try cases("tf2_msgs/msg/TFMessage") {
            let tfs = try ROS2Message.tfMessage(c.bytes, file: "rec.db3", topic: c.topic)
            let e = c.expected["transforms"] as! [[String: Any]]
            XCTAssertEqual(tfs.count, e.count, c.name)
            for (t, x) in zip(tfs, e) {
                checkHeader(t.header, x["header"], c.name)
                XCTAssertEqual(t.childFrameID, x["child"] as? String, c.name)
                let tr = x["t"] as! [Double], q = x["q"] as! [Double]
                XCTAssertEqual(t.transform.translation, SIMD3(tr[0], tr[1], tr[2]), c.name)
                XCTAssertEqual(t.transform.rotation, SIMD4(q[0], q[1], q[2], q[3]), c.name)
            }
        }
        for c in try cases("sensor_msgs/msg/Imu") {
            let imu = try ROS2Message.imu(c.bytes, file: "rec.db3", topic: c.topic)
            let e = c.expected
            checkHeader(imu.header, e["header"], c.name)
            let o = e["orientation"] as! [Double], w = e["angular_velocity"] as! [Double], a = e["linear_acceleration"] as! [Double]
            XCTAssertEqual(imu.orientation, SIMD4(o[0], o[1], o[2], o[3]), c.name)
            XCTAssertEqual(imu.angularVelocity, SIMD3(w[0], w[1], w[2]), c.name)
            XCTAssertEqual(imu.linearAcceleration, SIMD3(a[0], a[1], a[2]), c.name)
            XCTAssertEqual(imu.orientationCovariance, e["orientation_covariance"] as? [Double], c.name)
            XCTAssertEqual(imu.angularVelocityCovariance, e["angular_velocity_covariance"] as? [Double], c.name)
            XCTAssertEqual(imu.linearAccelerationCovariance, e["linear_acceleration_covariance"] as? [Double], c.name)
        }
        for c in try cases("std_msgs/msg/String") {
            XCTAssertEqual(try ROS2Message.string(c.bytes, file: "rec.db3", topic: c.topic), c.expected["data"] as? String, c.name)
        }
        for c in try cases("std_msgs/msg/UInt32") {
            XCTAssertEqual(Int(try ROS2Message.uint32(c.bytes, file: "rec.db3", topic: c.topic)), c.expected["data"] as? Int, c.name)
        }
        let kv = ROS2Message.keyValues("Frame Counter=12;Time Of Arrival=1712345678901; Depth Units = 0.001000;bad;=x;a=b=c;")
        XCTAssertEqual(kv, ["Frame Counter": "12", "Time Of Arrival": "1712345678901", "Depth Units": "0.001000", "a": "b=c"])
        XCTAssertEqual(ROS2Message.keyValues("rotation=1,0,0,0,1,0,0,0,1;translation=0.015,0,0")["translation"], "0.015,0,0")
    }

    func testCompressedColor() throws {
        for c in try cases("sensor_msgs/msg/CompressedImage") where !(c.expected["format"] as! String).contains("compressedDepth") {
            let m = try ROS2Message.compressedImage(c.bytes, file: "rec.db3", topic: c.topic)
            checkHeader(m.header, c.expected["header"], c.name)
            XCTAssertEqual(m.format, c.expected["format"] as? String, c.name)
            XCTAssertEqual(Array(m.data), hexBytes(c.expected["data"] as! String), c.name)
            let px = try ROSImageDecoding.compressedColor(m.data, format: m.format, file: "rec.db3", topic: c.topic)
            XCTAssertEqual(px.width, c.expected["width"] as? Int, c.name)
            XCTAssertEqual(px.height, c.expected["height"] as? Int, c.name)
            let want = hexBytes(c.expected["rgba"] as! String)
            var got: [UInt8] = []
            for y in 0..<px.height { got += UnsafeBufferPointer(start: px.row(y, as: UInt8.self), count: 4 * px.width) }
            // PNG exactly; JPEG as Pillow's libjpeg decodes it, within 2 levels (IDCT variants).
            let tolerance = (c.expected["lossy"] as? Bool) == true ? 2 : 0
            let worst = zip(got, want).map { abs(Int($0) - Int($1)) }.max() ?? 0
            XCTAssertEqual(got.count, want.count, c.name)
            XCTAssertLessThanOrEqual(worst, tolerance, c.name)
        }
    }

    func testCompressedDepth() throws {
        var seen: Set<String> = []
        for c in try cases("sensor_msgs/msg/CompressedImage") where (c.expected["format"] as! String).contains("compressedDepth") {
            let m = try ROS2Message.compressedImage(c.bytes, file: "rec.db3", topic: c.topic)
            XCTAssertTrue(CompressedDepth.isCompressedDepth(m.format))
            let image = try CompressedDepth.decode(m.data, format: m.format, file: "rec.db3", topic: c.topic)
            seen.insert("\(image.format.encoding) \(image.format.codec)")
            XCTAssertEqual(image.width, c.expected["width"] as? Int, c.name)
            XCTAssertEqual(image.height, c.expected["height"] as? Int, c.name)
            XCTAssertEqual(image.values.map { Int($0) }, c.expected["values"] as? [Int], c.name)
            XCTAssertEqual(Double(image.depthQuantA), c.expected["quant_a"] as? Double, c.name)
            XCTAssertEqual(Double(image.depthQuantB), c.expected["quant_b"] as? Double, c.name)
            let meters = image.meters(units: 0.001)
            var got: [Float] = []
            for y in 0..<meters.height { got += UnsafeBufferPointer(start: meters.row(y, as: Float.self), count: meters.width) }
            XCTAssertEqual(got, (c.expected["meters"] as! [Double]).map { Float($0) }, c.name)
            if let source = c.expected["source_meters"] as? [Double] {
                // The quantization error of inverse depth: about d² / A (≈1 % at 10 m with the defaults).
                for (g, s) in zip(got, source) where s > 0 {
                    XCTAssertLessThanOrEqual(abs(Double(g) - s), s * s / Double(image.depthQuantA) * 1.01 + 1e-6, c.name)
                }
            }
        }
        XCTAssertEqual(seen, ["16UC1 png", "16UC1 rvl", "32FC1 png", "32FC1 rvl"])
    }

    // MARK: Bad input

    func testShortMessagesAreOneLineErrorsNamingTheTopic() throws {
        for c in try cases() {
            // Every prefix that cuts a field: some cuts leave a shorter but valid message (a
            // trailing optional field), so only "no crash" and, when it throws, the line's form.
            for n in Swift.stride(from: 0, to: c.bytes.count, by: max(1, c.bytes.count / 40)) {
                let cut = Array(c.bytes.prefix(n))
                do {
                    try decode(c.type, cut, topic: c.topic)
                } catch let e as CaptureError {
                    let line = "\(e)"
                    XCTAssertFalse(line.contains("\n"), line)
                    XCTAssertTrue(line.hasPrefix("rec.db3: "), line)
                    XCTAssertTrue(line.contains(c.topic), "\(c.name) cut at \(n): \(line)")
                }
            }
        }
        let image = try cases("sensor_msgs/msg/Image")[0]
        XCTAssertThrowsError(try ROS2Message.image(Array(image.bytes.dropLast(3)), file: "rec.db3", topic: image.topic)) { e in
            XCTAssertTrue("\(e)".contains("shorter than its fields") && "\(e)".contains(image.topic), "\(e)")
        }
    }

    func decode(_ type: String, _ bytes: [UInt8], topic: String) throws {
        switch type {
        case "sensor_msgs/msg/Image": _ = try ROS2Message.image(bytes, file: "rec.db3", topic: topic)
        case "sensor_msgs/msg/CameraInfo": _ = try ROS2Message.cameraInfo(bytes, file: "rec.db3", topic: topic)
        case "tf2_msgs/msg/TFMessage": _ = try ROS2Message.tfMessage(bytes, file: "rec.db3", topic: topic)
        case "sensor_msgs/msg/Imu": _ = try ROS2Message.imu(bytes, file: "rec.db3", topic: topic)
        case "std_msgs/msg/String": _ = try ROS2Message.string(bytes, file: "rec.db3", topic: topic)
        case "std_msgs/msg/UInt32": _ = try ROS2Message.uint32(bytes, file: "rec.db3", topic: topic)
        case "sensor_msgs/msg/CompressedImage":
            let m = try ROS2Message.compressedImage(bytes, file: "rec.db3", topic: topic)
            if CompressedDepth.isCompressedDepth(m.format) {
                _ = try CompressedDepth.decode(m.data, format: m.format, file: "rec.db3", topic: topic)
            } else {
                _ = try ROSImageDecoding.compressedColor(m.data, format: m.format, file: "rec.db3", topic: topic)
            }
        default: XCTFail("no decoder for \(type)")
        }
    }

    /// A CDR Image with the given fields (little-endian), written here to make lying messages.
    func imageMessage(encoding: String, width: UInt32, height: UInt32, step: UInt32, dataCount: Int) -> [UInt8] {
        var b: [UInt8] = [0, 1, 0, 0]
        func u32(_ v: UInt32) { while (b.count - 4) % 4 != 0 { b.append(0) }; b += withUnsafeBytes(of: v.littleEndian, Array.init) }
        func str(_ s: String) { u32(UInt32(s.utf8.count + 1)); b += Array(s.utf8) + [0] }
        u32(1); u32(2); str("f"); u32(height); u32(width); str(encoding); b.append(0); u32(step)
        u32(UInt32(dataCount)); b += [UInt8](repeating: 7, count: dataCount)
        return b
    }

    func testBadImages() throws {
        let over = imageMessage(encoding: "16UC1", width: 4, height: 3, step: 8, dataCount: 23)
        XCTAssertThrowsError(try ROS2Message.image(over, file: "rec.db3", topic: "/d")) { e in
            XCTAssertEqual("\(e)", "rec.db3: sensor_msgs/msg/Image on /d holds 23 bytes, its step 8 × height 3 needs more")
        }
        let huge = imageMessage(encoding: "16UC1", width: 4, height: 0x8000_0000, step: 0x8000_0000, dataCount: 4)
        XCTAssertThrowsError(try ROS2Message.image(huge, file: "rec.db3", topic: "/d"))
        let odd = try ROS2Message.image(imageMessage(encoding: "bayer_rggb8", width: 2, height: 2, step: 2, dataCount: 4),
                                        file: "rec.db3", topic: "/cam")
        XCTAssertThrowsError(try ROSImageDecoding.check(odd, file: "rec.db3", topic: "/cam")) { e in
            XCTAssertEqual("\(e)", "rec.db3: unsupported encoding bayer_rggb8 on topic /cam")
        }
        let narrow = try ROS2Message.image(imageMessage(encoding: "rgb8", width: 4, height: 2, step: 6, dataCount: 12),
                                           file: "rec.db3", topic: "/c")
        XCTAssertThrowsError(try ROSImageDecoding.check(narrow, file: "rec.db3", topic: "/c"))
        let wide = try ROS2Message.image(imageMessage(encoding: "mono8", width: 70000, height: 1, step: 70000, dataCount: 70000),
                                         file: "rec.db3", topic: "/c")
        XCTAssertThrowsError(try ROSImageDecoding.check(wide, file: "rec.db3", topic: "/c"))
    }

    func testNaNCameraInfoGivesNoCamera() {
        let nan = Double.nan
        for k in [[nan, 0, 320, 0, 600, 240, 0, 0, 1], [600, 0, 320, 0, .infinity, 240, 0, 0, 1], [600, 0, nan, 0, 600, 240, 0, 0, 1],
                  [-600, 0, 320, 0, 600, 240, 0, 0, 1], [600, 0, 320, 0, 600]] {
            XCTAssertNil(ROSImageDecoding.cameraModel(K: k, D: [], distortionModel: "plumb_bob", width: 640, height: 480,
                                                      streamWidth: 640, streamHeight: 480), "\(k)")
        }
        XCTAssertNil(ROSImageDecoding.cameraModel(K: [600, 0, 320, 0, 600, 240, 0, 0, 1], D: [0.1, nan], distortionModel: "plumb_bob",
                                                  width: 640, height: 480, streamWidth: 640, streamHeight: 480))
    }

    func testBadCompressedDepth() throws {
        let c = try cases("sensor_msgs/msg/CompressedImage").first { $0.name == "cdepth16_rvl" }!
        let m = try ROS2Message.compressedImage(c.bytes, file: "rec.db3", topic: c.topic)
        // The RVL code cut short, a size too large for the code, a lying size.
        XCTAssertThrowsError(try CompressedDepth.decode(m.data.dropLast(8), format: m.format, file: "rec.db3", topic: c.topic)) { e in
            XCTAssertTrue("\(e)".contains("corrupt RVL data") && "\(e)".contains(c.topic), "\(e)")
        }
        var big = Array(m.data)
        big[12] = 0xFF; big[13] = 0xFF; big[14] = 0; big[15] = 0  // cols 65535
        XCTAssertThrowsError(try CompressedDepth.decode(big[...], format: m.format, file: "rec.db3", topic: c.topic))
        big[12] = 0; big[13] = 0; big[14] = 1; big[15] = 0  // cols 65536 × rows 7: over nothing, but the code ends
        XCTAssertThrowsError(try CompressedDepth.decode(big[...], format: m.format, file: "rec.db3", topic: c.topic))
        XCTAssertThrowsError(try CompressedDepth.decode(m.data.prefix(12), format: m.format, file: "rec.db3", topic: c.topic))
        XCTAssertThrowsError(try CompressedDepth.decode(m.data, format: "16UC1; compressedDepth zip", file: "rec.db3", topic: c.topic)) { e in
            XCTAssertEqual("\(e)", "rec.db3: unsupported compressedDepth format '16UC1; compressedDepth zip' on topic \(c.topic)")
        }
        XCTAssertThrowsError(try CompressedDepth.decode(m.data, format: "8UC3; compressedDepth rvl", file: "rec.db3", topic: c.topic))
        // A PNG payload that is corrupt, and an 8-bit PNG where 16-bit depth belongs.
        let png = try ROS2Message.compressedImage(try cases().first { $0.name == "cdepth16_png" }!.bytes, file: "rec.db3", topic: "/d")
        var corrupt = Array(png.data)
        for i in stride(from: 40, to: corrupt.count - 12, by: 7) { corrupt[i] ^= 0x5A }
        XCTAssertThrowsError(try CompressedDepth.decode(corrupt[...], format: png.format, file: "rec.db3", topic: "/d")) { e in
            XCTAssertTrue("\(e)".hasPrefix("rec.db3: compressedDepth image"), "\(e)")
        }
        let color = try ROS2Message.compressedImage(try cases().first { $0.name == "compressed_gray_png" }!.bytes, file: "rec.db3", topic: "/d")
        XCTAssertThrowsError(try CompressedDepth.decode(ArraySlice([UInt8](repeating: 0, count: 12) + color.data), format: png.format,
                                                        file: "rec.db3", topic: "/d")) { e in
            XCTAssertTrue("\(e)".contains("not 16-bit gray"), "\(e)")
        }
        XCTAssertThrowsError(try ROSImageDecoding.compressedColor([1, 2, 3, 4, 5, 6, 7, 8, 9], format: "jpeg", file: "rec.db3", topic: "/c")) { e in
            XCTAssertTrue("\(e)".contains("neither PNG nor JPEG") && "\(e)".contains("/c"), "\(e)")
        }
    }
}

func hexBytes(_ s: String) -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(s.utf8.count / 2)
    var it = s.utf8.makeIterator()
    func nibble(_ c: UInt8) -> UInt8 { c <= 57 ? c - 48 : (c | 0x20) - 87 }
    while let a = it.next(), let b = it.next() { out.append(nibble(a) << 4 | nibble(b)) }
    return out
}
