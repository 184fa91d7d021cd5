import XCTest
import Foundation
import DepthKit
@testable import Capture
import TestSupport

/// Runs a tool; returns its standard output, failing the test on a non-zero exit.
@discardableResult
func runChecked(_ args: [String], file: StaticString = #filePath, line: UInt = #line) throws -> Data {
    let r = try TestProcess.result(args[0], Array(args.dropFirst()), timeout: 300, file: file, line: line)
    if r.status != 0 {
        XCTFail("\(args.joined(separator: " ")) failed: \(r.stderr.suffix(600))", file: file, line: line)
        throw CaptureError.invalidState("tool failed")
    }
    return r.stdoutData
}

/// Synthetic frames with known content, written as raw files and muxed into Matroska by the
/// ffmpeg CLI in the Azure Kinect layout.
enum MKVFixture {
    static let colorSize = (w: 1280, h: 720)
    static let depthSize = (w: 320, h: 288)

    /// Smooth color (MJPEG keeps it well), different per frame.
    static func color(_ i: Int, _ x: Int, _ y: Int, w: Int = colorSize.w, h: Int = colorSize.h) -> (UInt8, UInt8, UInt8) {
        let r = UInt8(20 + x * 150 / w + (i % 8) * 8)
        let g = UInt8(30 + y * 160 / h + i * 4)
        let b = UInt8(128 + Int(60 * sin(Double(x + y) / 90 + Double(i))))
        return (r, g, b)
    }

    /// Depth in millimeters: a ramp per frame, holes (0) on a diagonal grid, the maximum at (0, 0).
    static func depth(_ i: Int, _ x: Int, _ y: Int) -> UInt16 {
        if x == 0 && y == 0 { return 65535 }
        if (x + 2 * y) % 17 == 0 { return 0 }
        return UInt16(400 + x * 9 + y * 5 + i * 111)
    }

    static func ir(_ i: Int, _ x: Int, _ y: Int) -> UInt16 { UInt16(truncatingIfNeeded: x * y * 7 + i * 1000 + 3) }

    /// Frame i's color as rgb24 bytes (computed once per size).
    static func rgbFrame(_ i: Int, w: Int = colorSize.w, h: Int = colorSize.h) -> [UInt8] {
        let key = "\(i) \(w) \(h)"
        if let f = cache.current[key] { return f }
        var out = [UInt8](repeating: 0, count: w * h * 3)
        for y in 0..<h { for x in 0..<w { let c = color(i, x, y, w: w, h: h); out[(y * w + x) * 3] = c.0; out[(y * w + x) * 3 + 1] = c.1; out[(y * w + x) * 3 + 2] = c.2 } }
        cache.withLock { $0[key] = out }
        return out
    }

    /// Frames made so far, by key (tests of this class run on one thread; the lock keeps it a constant).
    static let cache = LockedValue<[String: [UInt8]]>([:])

    static func rgbRaw(frames: Int, w: Int = colorSize.w, h: Int = colorSize.h) -> [UInt8] {
        (0..<frames).flatMap { rgbFrame($0, w: w, h: h) }
    }

    static func gray16Raw(frames: [Int], w: Int = depthSize.w, h: Int = depthSize.h, bigEndian: Bool = true,
                          _ f: (Int, Int, Int) -> UInt16) -> [UInt8] {
        var out = [UInt8](); out.reserveCapacity(frames.count * w * h * 2)
        for i in frames { for y in 0..<h { for x in 0..<w {
            let v = f(i, x, y)
            out += bigEndian ? [UInt8(v >> 8), UInt8(v & 255)] : [UInt8(v & 255), UInt8(v >> 8)]
        } } }
        return out
    }

    /// A hand-written Azure Kinect calibration.json in the SDK's schema, plausible values (a
    /// 1024×1024 depth calibration, a 4096×3072 color one tilted 6° and 32 mm to the side).
    static let azureCalibration = """
    {"CalibrationInformation":{"Cameras":[
     {"Intrinsics":{"ModelParameterCount":14,"ModelParameters":[0.5049,0.5097,0.4921,0.4921,3.5,2.1,0.11,3.83,3.3,0.6,0,0,-0.00004,0.0001],
       "ModelType":"CALIBRATION_LensDistortionModelBrownConrady"},"Location":"CALIBRATION_CameraLocationD0","Purpose":"CALIBRATION_CameraPurposeDepth",
      "MetricRadius":1.74,"Rt":{"Rotation":[1,0,0,0,1,0,0,0,1],"Translation":[0,0,0]},"SensorHeight":1024,"SensorWidth":1024,"Shutter":"CALIBRATION_ShutterTypeUndefined","ThermalAdjustmentParams":{"Params":[0,0,0,0,0,0,0,0,0,0,0,0]}},
     {"Intrinsics":{"ModelParameterCount":14,"ModelParameters":[0.4998,0.5012,0.4713,0.6284,0.47,-2.7,1.6,0.35,-2.5,1.5,0,0,-0.00026,0.00064],
       "ModelType":"CALIBRATION_LensDistortionModelBrownConrady"},"Location":"CALIBRATION_CameraLocationPV0","Purpose":"CALIBRATION_CameraPurposePhotoVideo",
      "MetricRadius":0,"Rt":{"Rotation":[1,0,0,0,0.9945219,-0.1045285,0,0.1045285,0.9945219],"Translation":[-0.032,-0.002,0.004]},
      "SensorHeight":3072,"SensorWidth":4096,"Shutter":"CALIBRATION_ShutterTypeUndefined","ThermalAdjustmentParams":{"Params":[0,0,0,0,0,0,0,0,0,0,0,0]}}],
     "InertialSensors":[],"Metadata":{"SerialId":"000123456789","FactoryCalDate":"1/1/2020 12:00:00 AM GMT","Version":{"Major":1,"Minor":2}}}}
    """

    struct Options {
        var colorFrames = 6
        /// Depth frame numbers (a missing one leaves its color frame without depth).
        var depthFrames = Array(0..<6)
        var depthOffset = 0.008
        var withIR = true
        var withCalibration = true
        /// K4A layout: raw depth as V_MS/VFW/FOURCC b16g (ffmpeg writes the VFW header, the test
        /// puts the FourCC in); false: ffmpeg's V_UNCOMPRESSED with the b16g FourCC.
        var vfw = true
        var startOffsetNS: Int64 = 1_234_567_000
    }

    static let serial = "000123456789"

    /// Builds the file; returns its path.
    static func make(_ test: XCTestCase, _ o: Options = Options()) throws -> String {
        let dir = try makeTemporaryDirectory(test)
        try Data(rgbRaw(frames: o.colorFrames)).write(to: URL(fileURLWithPath: dir + "/color.rgb"))
        try Data(gray16Raw(frames: o.depthFrames, depth)).write(to: URL(fileURLWithPath: dir + "/depth.raw"))
        try Data(gray16Raw(frames: Array(0..<o.colorFrames), ir)).write(to: URL(fileURLWithPath: dir + "/ir.raw"))
        try Data(azureCalibration.utf8).write(to: URL(fileURLWithPath: dir + "/calibration.json"))
        let (cw, ch) = colorSize, (dw, dh) = depthSize
        var args = ["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-y",
                    "-f", "rawvideo", "-pix_fmt", "rgb24", "-s", "\(cw)x\(ch)", "-r", "30", "-i", dir + "/color.rgb",
                    "-f", "rawvideo", "-pix_fmt", "gray16be", "-s", "\(dw)x\(dh)", "-r", "30", "-i", dir + "/depth.raw"]
        if o.withIR { args += ["-f", "rawvideo", "-pix_fmt", "gray16be", "-s", "\(dw)x\(dh)", "-r", "30", "-i", dir + "/ir.raw"] }
        args += ["-map", "0", "-map", "1"] + (o.withIR ? ["-map", "2"] : [])
        // Depth frame k at (depthFrames[k] / 30 + depthOffset) s, in milliseconds (the encoder's
        // time base would otherwise be 1/30 s and round the offset away).
        let pts = o.depthFrames.enumerated().map { "eq(N\\,\($0.offset))*\($0.element)" }.joined(separator: "+")
        args += ["-filter:v:1", "settb=1/1000,setpts=(\(pts))/30/TB+\(o.depthOffset)/TB", "-fps_mode:v:1", "passthrough",
                 "-enc_time_base:v:1", "1:1000"]
        args += ["-c:v:0", "mjpeg", "-q:v:0", "2", "-pix_fmt:v:0", "yuvj422p",
                 "-c:v:1", "rawvideo", "-pix_fmt:v:1", "gray16be"]
        if o.withIR { args += ["-c:v:2", "rawvideo", "-pix_fmt:v:2", "gray16be"] }
        if o.vfw {
            args += ["-allow_raw_vfw", "1"]
        } else {
            args += ["-tag:v:1", "b16g", "-strict", "unofficial"] + (o.withIR ? ["-tag:v:2", "b16g"] : [])
        }
        args += ["-metadata:s:v:0", "title=COLOR", "-metadata:s:v:1", "title=DEPTH"]
        if o.withIR { args += ["-metadata:s:v:2", "title=IR"] }
        args += ["-metadata:s:v:0", "K4A_COLOR_MODE=MJPG_720P", "-metadata:s:v:1", "K4A_DEPTH_MODE=NFOV_2X2BINNED",
                 "-metadata", "K4A_DEVICE_SERIAL_NUMBER=\(serial)", "-metadata", "K4A_COLOR_FIRMWARE_VERSION=1.6.110",
                 "-metadata", "K4A_DEPTH_FIRMWARE_VERSION=1.6.79", "-metadata", "K4A_START_OFFSET_NS=\(o.startOffsetNS)",
                 "-metadata", "K4A_WIRED_SYNC_MODE=STANDALONE", "-metadata", "K4A_DEPTH_DELAY_NS=0"]
        if o.withCalibration {
            args += ["-attach", dir + "/calibration.json", "-metadata:s:t", "mimetype=application/octet-stream",
                     "-metadata:s:t", "filename=calibration.json"]
        }
        let out = dir + "/rec.mkv"
        try runChecked(args + [out])
        if o.vfw {
            // ffmpeg writes raw video in VFW mode with FourCC 0 and a top-down (negative) height;
            // the Azure Kinect recorder writes the FourCC b16g and a positive height.
            var b = [UInt8](try Data(contentsOf: URL(fileURLWithPath: out)))
            func le32(_ v: Int32) -> [UInt8] { withUnsafeBytes(of: v.littleEndian, Array.init) }
            let ffmpegHeader = le32(40) + le32(Int32(dw)) + le32(Int32(-dh)) + [1, 0, 16, 0] + le32(0)
            let k4aHeader = le32(40) + le32(Int32(dw)) + le32(Int32(dh)) + [1, 0, 16, 0] + Array("b16g".utf8)
            var patched = 0
            var i = 0
            while i + ffmpegHeader.count <= b.count {
                if Array(b[i..<i + ffmpegHeader.count]) == ffmpegHeader {
                    b.replaceSubrange(i..<i + k4aHeader.count, with: k4aHeader)
                    patched += 1
                }
                i += 1
            }
            XCTAssertEqual(patched, o.withIR ? 2 : 1, "BITMAPINFOHEADERs patched")
            try Data(b).write(to: URL(fileURLWithPath: out))
        }
        return out
    }
}

final class MKVSourceTests: XCTestCase {
    /// PSNR and largest channel difference of an rgba8 image against frame `i` of the fixture's color.
    func psnr(_ a: PixelBuffer, frame i: Int) -> (psnr: Double, maxDiff: Int) {
        let e = MKVFixture.rgbFrame(i, w: a.width, h: a.height)
        var se = 0, maxDiff = 0, alpha = true
        e.withUnsafeBufferPointer { e in
            for y in 0..<a.height {
                let row = a.row(y, as: UInt8.self)
                for x in 0..<a.width {
                    for c in 0..<3 {
                        let d = Int(row[4 * x + c]) - Int(e[(y * a.width + x) * 3 + c])
                        se += d * d
                        if abs(d) > maxDiff { maxDiff = abs(d) }
                    }
                    if row[4 * x + 3] != 255 { alpha = false }
                }
            }
        }
        XCTAssertTrue(alpha, "alpha is 255")
        let mse = Double(se) / Double(a.width * a.height * 3)
        return (10 * log10(255 * 255 / max(mse, 1e-9)), maxDiff)
    }

    /// Packet timestamps (seconds) of one stream as ffprobe reads them.
    func probePacketTimes(_ path: String, stream: Int) throws -> [Double] {
        let data = try runChecked(["ffprobe", "-v", "error", "-select_streams", "\(stream)", "-show_entries", "packet=pts_time",
                                "-of", "json", path])
        let o = try JSONSerialization.jsonObject(with: data) as! [String: Any]
        return (o["packets"] as! [[String: Any]]).map { Double($0["pts_time"] as! String)! }
    }

    func checkDepth(_ d: DepthData?, frame i: Int, file: StaticString = #filePath, line: UInt = #line) {
        guard let d else { return XCTFail("frame \(i) has no depth", file: file, line: line) }
        XCTAssertEqual(d.map.format, .depthFloat32, file: file, line: line)
        XCTAssertEqual(d.map.width, MKVFixture.depthSize.w, file: file, line: line)
        var mismatches = 0
        for y in 0..<d.map.height { for x in 0..<d.map.width where d.map.sample(x: x, y: y) != Float(MKVFixture.depth(i, x, y)) / 1000 {
            mismatches += 1
        } }
        XCTAssertEqual(mismatches, 0, "depth of frame \(i) differs from what was written", file: file, line: line)
    }

    func testAzureKinectLayoutDecodesToTheFramesWritten() throws {
        for vfw in [true, false] {
            let path = try MKVFixture.make(self, .init(vfw: vfw))
            let s = MKVSource(path: path)
            XCTAssertEqual(s.name, "mkv:\(path)")
            try s.start()
            XCTAssertEqual(s.warnings, [])
            XCTAssertEqual(s.recording.frameCount, 6)

            // Streams as ffprobe sees them.
            let probe = try JSONSerialization.jsonObject(with: try runChecked(["ffprobe", "-v", "error", "-show_streams", "-of", "json", path])) as! [String: Any]
            let streams = probe["streams"] as! [[String: Any]]
            XCTAssertEqual(streams[1]["codec_tag_string"] as? String, "b16g")
            XCTAssertEqual(streams[1]["pix_fmt"] as? String, "gray16be")
            XCTAssertEqual(streams[0]["codec_name"] as? String, "mjpeg")
            let meta = s.metadata
            XCTAssertEqual(meta.kind, "mkv")
            XCTAssertEqual(meta.streams.map(\.name), ["color", "depth", "ir"])
            for (m, p) in zip(meta.streams, streams) {
                XCTAssertEqual(m.width, p["width"] as? Int)
                XCTAssertEqual(m.height, p["height"] as? Int)
                XCTAssertEqual(m.frames, 6)
                XCTAssertEqual(m.fps ?? 0, 30, accuracy: 0.01)
            }
            XCTAssertEqual(meta.streams[1].encoding, "b16g")
            XCTAssertEqual(meta.device?.name, "Azure Kinect")
            XCTAssertEqual(meta.device?.serial, MKVFixture.serial)
            XCTAssertEqual(meta.device?.firmware, "color 1.6.110, depth 1.6.79")
            XCTAssertEqual(meta.tags["K4A_DEPTH_MODE"], "NFOV_2X2BINNED", "a tag the recorder targets at the depth track")
            XCTAssertEqual(meta.tags["K4A_COLOR_MODE"], "MJPG_720P")
            XCTAssertEqual(meta.tags["K4A_START_OFFSET_NS"], "1234567000")
            XCTAssertEqual(s.nominalFrameRate ?? 0, 30, accuracy: 0.01)

            // Timestamps: ffprobe's packet times + the start offset, at the SDK's microsecond resolution.
            let colorTimes = try probePacketTimes(path, stream: 0)
            XCTAssertEqual(colorTimes.count, 6)
            for (i, t) in colorTimes.enumerated() {
                let micro = (Int64((t * 1e9).rounded()) / 1000 + 1_234_567_000 / 1000)
                XCTAssertEqual(s.frameTimestamps[i], Double(micro) / 1e6, accuracy: 1e-9)
            }
            XCTAssertEqual(meta.durationSeconds ?? 0, colorTimes[5] - colorTimes[0], accuracy: 1e-6)
            // Depth 8 ms after color (within half a frame interval: still paired with its own frame).
            let depthTimes = try probePacketTimes(path, stream: 1)
            for (i, t) in depthTimes.enumerated() { XCTAssertEqual(t, Double(i) / 30 + 0.008, accuracy: 0.0011) }

            // Every frame: depth bit-exact, color close to what went into the MJPEG encoder.
            var worst = Double.infinity, worstDiff = 0
            s.recording.pause()
            for i in 0..<6 {
                if i > 0 { try s.recording.step(by: 1) }
                let f = try XCTUnwrap(try s.nextFrame(now: Double(i) * 10))
                XCTAssertEqual(f.index, i)
                XCTAssertEqual(f.timestamp, s.frameTimestamps[i])
                XCTAssertEqual(f.color.format, .rgba8)
                XCTAssertEqual(f.color.width, 1280); XCTAssertEqual(f.color.height, 720)
                let q = psnr(f.color, frame: i)
                worst = min(worst, q.psnr); worstDiff = max(worstDiff, q.maxDiff)
                // Closer to its own frame than to the neighbor's (frames are told apart).
                let other = psnr(f.color, frame: i == 5 ? 4 : i + 1)
                XCTAssertGreaterThan(q.psnr, other.psnr + 3)
                checkDepth(f.depth, frame: i)
                XCTAssertEqual(f.depth?.intrinsics, s.calibration?.depth.intrinsics)
            }
            XCTAssertGreaterThan(worst, 38, "MJPEG q=2 of a smooth pattern")
            XCTAssertLessThanOrEqual(worstDiff, 24)
            print("mkv (vfw: \(vfw)): color PSNR ≥ \(String(format: "%.1f", worst)) dB, max channel diff \(worstDiff)")
            XCTAssertTrue(s.recording.isFinished)
        }
    }

    func testCalibrationFromTheAttachment() throws {
        let path = try MKVFixture.make(self, .init(colorFrames: 2, depthFrames: [0, 1], withIR: false))
        let s = MKVSource(path: path)
        try s.start()
        let c = try XCTUnwrap(s.calibration)
        XCTAssertEqual(c.origin, "recording")
        XCTAssertEqual(c.depthScale, 1000)
        // Depth, NFOV 2x2 binned (calibration 512×512, crop (96, 90), output 320×288):
        //   cx = 0.5049·512 − 96 − 0.5 = 258.5088 − 96.5 = 162.0088
        //   cy = 0.5097·512 − 90 − 0.5 = 260.9664 − 90.5 = 170.4664
        //   fx = fy = 0.4921·512 = 251.9552
        let d = c.depth.intrinsics
        XCTAssertEqual(d.width, 320); XCTAssertEqual(d.height, 288)
        XCTAssertEqual(d.cx, 162.0088, accuracy: 1e-3); XCTAssertEqual(d.cy, 170.4664, accuracy: 1e-3)
        XCTAssertEqual(d.fx, 251.9552, accuracy: 1e-3); XCTAssertEqual(d.fy, 251.9552, accuracy: 1e-3)
        // Color, 720p (calibration 1280×960, crop (0, 120)):
        //   cx = 0.4998·1280 − 0.5 = 639.744 − 0.5 = 639.244
        //   cy = 0.5012·960 − 120 − 0.5 = 481.152 − 120.5 = 360.652
        //   fx = 0.4713·1280 = 603.264, fy = 0.6284·960 = 603.264
        let k = c.color.intrinsics
        XCTAssertEqual(k.width, 1280); XCTAssertEqual(k.height, 720)
        XCTAssertEqual(k.cx, 639.244, accuracy: 1e-3); XCTAssertEqual(k.cy, 360.652, accuracy: 1e-3)
        XCTAssertEqual(k.fx, 603.264, accuracy: 1e-3); XCTAssertEqual(k.fy, 603.264, accuracy: 1e-3)
        XCTAssertEqual(s.intrinsics, k)
        // OpenCV order k1 k2 p1 p2 k3 k4 k5 k6 from the SDK's cx cy fx fy k1…k6 codx cody p2 p1.
        XCTAssertEqual(c.depth.model, .rationalPolynomial)
        XCTAssertEqual(c.depth.coeffs, [3.5, 2.1, 0.0001, -0.00004, 0.11, 3.83, 3.3, 0.6])
        XCTAssertEqual(c.color.coeffs, [0.47, -2.7, 0.00064, -0.00026, 1.6, 0.35, -2.5, 1.5])
        // Depth Rt is the identity: depth→color is the color camera's Rt, translation in meters.
        XCTAssertEqual(c.depthToColor.rotation, [1, 0, 0, 0, 0.9945219, -0.1045285, 0, 0.1045285, 0.9945219])
        XCTAssertEqual(c.depthToColor.translation, SIMD3<Float>(-0.032, -0.002, 0.004))
        XCTAssertTrue(c.needsAlignment)
        XCTAssertEqual(s.azureKinectCalibration?.color.metricRadius, 1.7, "0 means the SDK's default 1.7")
    }

    func testModeSpecificIntrinsicsAsTheSDKDerivesThem() throws {
        let k = try AzureKinectCalibration.decode(Array(MKVFixture.azureCalibration.utf8), name: "calibration.json")
        typealias M = AzureKinectCalibration.DepthMode
        // (mode, expected cx, cy, fx): calibration size W_cal, crop (x, y):
        //   NFOV unbinned 1024, (192, 180): cx = 0.5049·1024 − 192.5 = 324.5176, cy = 0.5097·1024 − 180.5 = 341.4328, fx = 503.9104
        //   WFOV 2x2 binned 512, (0, 0):     cx = 258.5088 − 0.5 = 258.0088, cy = 260.9664 − 0.5 = 260.4664, fx = 251.9552
        //   WFOV unbinned / passive IR 1024: cx = 517.0176 − 0.5 = 516.5176, cy = 521.9328 − 0.5 = 521.4328, fx = 503.9104
        let expected: [(M, Float, Float, Float, Int, Int)] = [
            (.nfov2x2Binned, 162.0088, 170.4664, 251.9552, 320, 288), (.nfovUnbinned, 324.5176, 341.4328, 503.9104, 640, 576),
            (.wfov2x2Binned, 258.0088, 260.4664, 251.9552, 512, 512), (.wfovUnbinned, 516.5176, 521.4328, 503.9104, 1024, 1024),
            (.passiveIR, 516.5176, 521.4328, 503.9104, 1024, 1024),
        ]
        for (m, cx, cy, fx, w, h) in expected {
            let c = try k.depthCamera(mode: m).intrinsics
            XCTAssertEqual(c.cx, cx, accuracy: 1e-3, "\(m)"); XCTAssertEqual(c.cy, cy, accuracy: 1e-3, "\(m)")
            XCTAssertEqual(c.fx, fx, accuracy: 1e-3, "\(m)"); XCTAssertEqual(c.fy, fx, accuracy: 1e-3, "\(m)")
            XCTAssertEqual(c.width, w); XCTAssertEqual(c.height, h)
            XCTAssertEqual(M(width: w, height: h) == m || m == .passiveIR, true)
        }
        typealias R = AzureKinectCalibration.ColorResolution
        //   1080p 1920×1440, (0, 180): cx = 0.4998·1920 − 0.5 = 959.116, cy = 0.5012·1440 − 180.5 = 541.228, fx = 0.4713·1920 = 904.896, fy = 0.6284·1440 = 904.896
        //   1536p 2048×1536, (0, 0):   cx = 0.4998·2048 − 0.5 = 1023.0904, cy = 0.5012·1536 − 0.5 = 769.3432, fx = 965.2224, fy = 965.2224
        //   3072p 4096×3072, (0, 0):   cx = 2047.1808 − 0.5 = 2046.6808, cy = 1539.6864 − 0.5 = 1539.1864, fx = fy = 1930.4448
        //   2160p 3840×2880, (0, 360): cx = 1919.232 − 0.5 = 1918.732, cy = 1443.456 − 360.5 = 1082.956, fx = fy = 1809.792
        //   1440p 2560×1920, (0, 240): cx = 1279.488 − 0.5 = 1278.988, cy = 962.304 − 240.5 = 721.804, fx = fy = 1206.528
        let colors: [(R, Float, Float, Float, Float)] = [
            (.p720, 639.244, 360.652, 603.264, 603.264), (.p1080, 959.116, 541.228, 904.896, 904.896),
            (.p1536, 1023.0904, 769.3432, 965.2224, 965.2224), (.p3072, 2046.6808, 1539.1864, 1930.4448, 1930.4448),
            (.p2160, 1918.732, 1082.956, 1809.792, 1809.792), (.p1440, 1278.988, 721.804, 1206.528, 1206.528),
        ]
        for (r, cx, cy, fx, fy) in colors {
            let c = try k.colorCamera(resolution: r).intrinsics
            XCTAssertEqual(c.cx, cx, accuracy: 2e-3, "\(r)"); XCTAssertEqual(c.cy, cy, accuracy: 2e-3, "\(r)")
            XCTAssertEqual(c.fx, fx, accuracy: 2e-3, "\(r)"); XCTAssertEqual(c.fy, fy, accuracy: 2e-3, "\(r)")
            XCTAssertEqual(c.width, r.size.width); XCTAssertEqual(c.height, r.size.height)
        }
        // A legacy 16:9 color calibration (4096×2304) is made 4:3 first: cy₄₃ = (cy·2304 + 384)/3072,
        // fy₄₃ = fy·2304/3072. cy = 0.5016 → (1155.6864 + 384)/3072 = 0.5012; fy = 0.8379 → 0.628425.
        // 720p: cy = 0.5012·960 − 120.5 = 360.652, fy = 0.628425·960 = 603.288; cx, fx as before.
        var legacy = k
        legacy.color.sensorHeight = 2304
        legacy.color.parameters[1] = 0.5016
        legacy.color.parameters[3] = 0.8379
        let c = try legacy.colorCamera(resolution: .p720).intrinsics
        XCTAssertEqual(c.cx, 639.244, accuracy: 1e-3); XCTAssertEqual(c.cy, 360.652, accuracy: 1e-3)
        XCTAssertEqual(c.fx, 603.264, accuracy: 1e-3); XCTAssertEqual(c.fy, 603.288, accuracy: 1e-3)
        // Neither 4:3 nor 16:9, and a depth calibration that is not 1024×1024: errors, as in the SDK.
        var odd = k
        odd.color.sensorHeight = 3000
        XCTAssertThrowsError(try odd.colorCamera(resolution: .p720))
        odd.depth.sensorWidth = 640
        XCTAssertThrowsError(try odd.depthCamera(mode: .nfovUnbinned))
    }

    func testDepthToColorComposesBothCamerasRt() throws {
        // Rt maps the reference frame into each camera; depth→color = Rt_color · Rt_depth⁻¹.
        // Depth: rotation 90° about z, translation (0, 0, 0.01); color: identity.
        // Rt_depth⁻¹ = (Rᵀ, −Rᵀt): R = [0,1,0, −1,0,0, 0,0,1], t = (0, 0, −0.01).
        // Check on p = (1, 0, 0): reference = Rᵀ(p − t_d) = Rᵀ(1, 0, −0.01) = (0, −1, −0.01).
        var json = MKVFixture.azureCalibration
        json = json.replacingOccurrences(of: #""Rotation":[1,0,0,0,1,0,0,0,1],"Translation":[0,0,0]"#,
                                         with: #""Rotation":[0,-1,0,1,0,0,0,0,1],"Translation":[0,0,0.01]"#)
        json = json.replacingOccurrences(of: #""Rotation":[1,0,0,0,0.9945219,-0.1045285,0,0.1045285,0.9945219],"Translation":[-0.032,-0.002,0.004]"#,
                                         with: #""Rotation":[1,0,0,0,1,0,0,0,1],"Translation":[0,0,0]"#)
        let k = try AzureKinectCalibration.decode(Array(json.utf8), name: "c.json")
        let e = k.depthToColor
        XCTAssertEqual(e.rotation, [0, 1, 0, -1, 0, 0, 0, 0, 1])
        XCTAssertEqual(e.translation.x, 0, accuracy: 1e-7)
        XCTAssertEqual(e.translation.y, 0, accuracy: 1e-7)
        XCTAssertEqual(e.translation.z, -0.01, accuracy: 1e-7)
        let q = e.apply(SIMD3(1, 0, 0))
        XCTAssertEqual(q.x, 0, accuracy: 1e-7); XCTAssertEqual(q.y, -1, accuracy: 1e-7); XCTAssertEqual(q.z, -0.01, accuracy: 1e-7)
        // Malformed files: one line each.
        XCTAssertThrowsError(try AzureKinectCalibration.decode(Array("[1]".utf8), name: "c.json")) {
            XCTAssertEqual("\($0)", "c.json: calibration is not a JSON object")
        }
        XCTAssertThrowsError(try AzureKinectCalibration.decode(Array("{}".utf8), name: "c.json")) {
            XCTAssertEqual("\($0)", "c.json: calibration has no 'CalibrationInformation' object")
        }
        let noColor = json.replacingOccurrences(of: "CALIBRATION_CameraLocationPV0", with: "CALIBRATION_CameraLocationXX")
        XCTAssertThrowsError(try AzureKinectCalibration.decode(Array(noColor.utf8), name: "c.json")) {
            XCTAssertEqual("\($0)", "c.json: calibration has no camera at CALIBRATION_CameraLocationPV0")
        }
    }

    func testDepthPairsByTimestampAndAMissingDepthFrameLeavesNone() throws {
        // Depth frame 2 is missing (the others at their color frames' times).
        let path = try MKVFixture.make(self, .init(colorFrames: 5, depthFrames: [0, 1, 3, 4], depthOffset: 0, withIR: false))
        let depthTimes = try probePacketTimes(path, stream: 1)
        XCTAssertEqual(depthTimes.count, 4)
        XCTAssertEqual(depthTimes[2], 3.0 / 30, accuracy: 0.0011)
        let s = MKVSource(path: path)
        try s.start()
        for i in 0..<5 {
            let f = try s.frame(i)
            if i == 2 { XCTAssertNil(f.depth) } else { checkDepth(f.depth, frame: i) }
        }
    }

    func testSeekStepAndRandomAccess() throws {
        let path = try MKVFixture.make(self, .init(colorFrames: 8, depthFrames: Array(0..<8), withIR: false))
        let s = MKVSource(path: path)
        try s.start()
        // Random order: every frame decodes to its own content however it is reached.
        for i in [7, 0, 3, 2, 6, 6, 1, 5, 4] {
            let f = try s.frame(i)
            checkDepth(f.depth, frame: i)
            XCTAssertGreaterThan(psnr(f.color, frame: i).psnr, 38)
        }
        try s.recording.seek(toFrame: 5)
        XCTAssertEqual(try s.nextFrame(now: 0)?.index, 5)
        s.recording.pause()
        XCTAssertNil(try s.nextFrame(now: 1))
        try s.recording.step(by: -2)
        let f3 = try XCTUnwrap(try s.nextFrame(now: 2))
        XCTAssertEqual(f3.index, 3)
        checkDepth(f3.depth, frame: 3)
        try s.recording.step(by: 1)
        XCTAssertEqual(try s.nextFrame(now: 3)?.index, 4)
        // By time: frame i is at i/30 s after the first.
        try s.recording.seek(toTime: 0.2)
        XCTAssertEqual(try s.nextFrame(now: 4)?.index, 6)
        try s.recording.seek(toTime: 0.19)
        XCTAssertEqual(try s.nextFrame(now: 5)?.index, 5)
        try s.recording.seek(toTime: 100)
        XCTAssertEqual(try s.nextFrame(now: 6)?.index, 7)
        XCTAssertThrowsError(try s.recording.seek(toFrame: 8))
        // Playback at the recorded rate: 0.1 s later, frame 3 after frame 0.
        try s.recording.seek(toFrame: 0)
        s.recording.resume()
        XCTAssertEqual(try s.nextFrame(now: 10)?.index, 0)
        XCTAssertNil(try s.nextFrame(now: 10.01))
        XCTAssertEqual(try s.nextFrame(now: 10.101)?.index, 3)
    }

    /// Timed playback decodes the next frames on worker threads while the current one is shown
    /// (MJPEG color and b16g depth decode each packet alone): what it delivers is what `frame(_:)`
    /// decodes, byte for byte, across the loop's wrap too; the decoded images come from a pool (a
    /// frame nobody holds any more gives its buffer to a later one); a seek lets the frames begun go.
    func testTimedPlaybackDecodesAheadAndDeliversTheSameFrames() throws {
        let path = try MKVFixture.make(self, .init(colorFrames: 8, depthFrames: [0, 1, 2, 4, 5, 6, 7], withIR: false))
        let s = MKVSource(path: path), reference = MKVSource(path: path)
        try s.start()
        try reference.start()
        s.recording.loop = true
        // Frames 33 or 34 ms apart (Matroska's milliseconds): a poll every 34 ms finds the next one due.
        var now = 100.0
        var played: [Int] = []
        for k in 0..<20 {
            let f = try XCTUnwrap(try s.nextFrame(now: now), "poll \(k) finds a frame due")
            let r = try reference.frame(f.index)
            XCTAssertEqual(f.color.packedBytes(), r.color.packedBytes(), "frame \(f.index): the color decoded ahead is frame(_:)'s")
            XCTAssertEqual(f.depth?.map.packedBytes(), r.depth?.map.packedBytes(), "frame \(f.index): the depth too")
            XCTAssertEqual(f.timestamp, r.timestamp)
            played.append(f.index)
            now += 0.034
        }
        XCTAssertEqual(played, (0..<20).map { $0 % 8 }, "every frame in order, looping")
        XCTAssertNil(try s.frame(3).depth, "frame 3 has no depth (none was recorded for it)")
        XCTAssertGreaterThanOrEqual(s.framesDecodedAhead, 15, "after the first frame and each wrap, frames were decoded ahead")
        XCTAssertLessThanOrEqual(s.pooledImageCount, 2 * 4, "20 frames played through a few pooled buffers per track")
        // A seek: the frames begun after the last one are let go; the sought frame is what comes.
        try s.recording.seek(toFrame: 6)
        let sought = try XCTUnwrap(try s.nextFrame(now: now))
        XCTAssertEqual(sought.index, 6)
        XCTAssertEqual(sought.color.packedBytes(), try reference.frame(6).color.packedBytes())
        // Paused: nothing is decoded ahead (the first step may take a frame begun before the pause).
        s.recording.pause()
        try s.recording.step(by: 1)
        XCTAssertEqual(try s.nextFrame(now: now + 1)?.index, 7)
        let before = s.framesDecodedAhead
        try s.recording.step(by: 1)
        XCTAssertEqual(try s.nextFrame(now: now + 2)?.index, 0)
        try s.recording.step(by: 1)
        XCTAssertEqual(try s.nextFrame(now: now + 3)?.index, 1)
        XCTAssertEqual(s.framesDecodedAhead, before, "steps while paused decode the frame asked for, nothing ahead")
    }

    func testInMemoryOpeningReadsTheSameFrames() throws {
        let path = try MKVFixture.make(self, .init(colorFrames: 2, depthFrames: [0, 1], withIR: false))
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let s = MKVSource(bytes: bytes, name: "memory.mkv")
        try s.start()
        XCTAssertEqual(s.recording.frameCount, 2)
        checkDepth(try s.frame(1).depth, frame: 1)
        XCTAssertNotNil(s.calibration)
    }

    func testWithoutCalibrationPlaysWithDefaultsAndSaysSo() throws {
        let path = try MKVFixture.make(self, .init(colorFrames: 2, depthFrames: [0, 1], withIR: false, withCalibration: false))
        let s = MKVSource(path: path)
        try s.start()
        XCTAssertEqual(s.warnings, ["no calibration.json attachment: default intrinsics"])
        XCTAssertNil(s.calibration)
        XCTAssertEqual(s.intrinsics, .default(width: 1280, height: 720))
        let f = try s.frame(0)
        checkDepth(f.depth, frame: 0)
        XCTAssertEqual(f.depth?.intrinsics, .default(width: 320, height: 288))
    }

    func testBadInputIsOneLineNamingTheFile() throws {
        let dir = try makeTemporaryDirectory(self)
        func failure(_ path: String) -> String {
            let s = MKVSource(path: path)
            do { try s.start() } catch { return "\(error)" }
            return "opened"
        }
        // Not a Matroska file at all.
        try Data("hello, this is not a video\n".utf8).write(to: URL(fileURLWithPath: dir + "/text.mkv"))
        let notMKV = failure(dir + "/text.mkv")
        XCTAssertTrue(notMKV.hasPrefix("\(dir)/text.mkv: not a Matroska file"), notMKV)
        XCTAssertEqual(failure(dir + "/missing.mkv").hasPrefix("\(dir)/missing.mkv: cannot open: No such file or directory"), true)

        // Truncated: the segment declares more bytes than the file holds.
        let good = try MKVFixture.make(self, .init(colorFrames: 3, depthFrames: [0, 1, 2], withIR: false))
        let bytes = try Data(contentsOf: URL(fileURLWithPath: good))
        try bytes.prefix(bytes.count * 6 / 10).write(to: URL(fileURLWithPath: dir + "/cut.mkv"))
        let cut = failure(dir + "/cut.mkv")
        XCTAssertTrue(cut.hasPrefix("\(dir)/cut.mkv: truncated: the Matroska segment ends at byte "), cut)
        XCTAssertTrue(cut.contains("the file has \(bytes.count * 6 / 10) bytes"), cut)
        XCTAssertFalse(cut.contains("\n"))

        // A b16g track whose packets are not width·height·2 bytes: depth 320×280 frames in a track
        // that says 320×288 (PixelHeight patched: EBML id BA, size 82, value 0x0118 → 0x0120).
        let raw = MKVFixture.gray16Raw(frames: [0, 1], w: 320, h: 280, MKVFixture.depth)
        try Data(raw).write(to: URL(fileURLWithPath: dir + "/d.raw"))
        try runChecked(["ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-f", "rawvideo", "-pix_fmt", "gray16be", "-s", "320x280",
                     "-r", "30", "-i", dir + "/d.raw", "-c:v", "rawvideo", "-tag:v", "b16g", "-strict", "unofficial",
                     "-metadata:s:v", "title=DEPTH", dir + "/short.mkv"])
        var m = [UInt8](try Data(contentsOf: URL(fileURLWithPath: dir + "/short.mkv")))
        let height: [UInt8] = [0xBA, 0x82, 0x01, 0x18]
        let at = try XCTUnwrap((0..<(m.count - 4)).first { Array(m[$0..<$0 + 4]) == height })
        m[at + 3] = 0x20
        try Data(m).write(to: URL(fileURLWithPath: dir + "/short.mkv"))
        XCTAssertEqual(failure(dir + "/short.mkv"),
                       "\(dir)/short.mkv: DEPTH track: packet 0 holds 179200 bytes, expected 184320 (320x288 16-bit)")

        // One short packet among good ones (the raw demuxer's last, partial frame, copied as is):
        // the file opens with one warning; that frame (depth is the only image here) is skipped.
        var part = MKVFixture.gray16Raw(frames: [0, 1, 2], MKVFixture.depth)
        part.removeLast(320 * 288)
        try Data(part).write(to: URL(fileURLWithPath: dir + "/part.raw"))
        try runChecked(["ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-f", "rawvideo", "-pix_fmt", "gray16be", "-s", "320x288",
                     "-r", "30", "-i", dir + "/part.raw", "-c:v", "copy", "-tag:v", "b16g", "-strict", "unofficial",
                     "-metadata:s:v", "title=DEPTH", dir + "/part.mkv"])
        let p = MKVSource(path: dir + "/part.mkv")
        try p.start()
        XCTAssertEqual(p.warnings, ["DEPTH track: packet 2 holds 92160 bytes, expected 184320 (320x288 16-bit); 1 of 3 such frames are skipped",
                                    "no calibration.json attachment: default intrinsics"])
        checkDepth(try p.frame(1).depth, frame: 1)
        XCTAssertThrowsError(try p.frame(2)) {
            XCTAssertEqual("\($0)", "\(dir)/part.mkv: frame 2: packet holds 92160 bytes, expected 184320 (320x288 16-bit)")
        }

        // Video, but no COLOR, DEPTH or IR track.
        try runChecked(["ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=64x48:rate=30",
                     "-frames:v", "2", "-c:v", "mjpeg", "-metadata:s:v", "title=CAM", dir + "/other.mkv"])
        XCTAssertEqual(failure(dir + "/other.mkv"), "\(dir)/other.mkv: no COLOR, DEPTH or IR video track (video tracks: 'CAM')")
    }

    func testDepthlensOwnLayoutH264ColorFFV1DepthAndItsCalibration() throws {
        // What depthlens will write: color H.264, depth FFV1 gray16le, titled COLOR/DEPTH, and a
        // calibration.json in depthlens' own schema (depth in units of 1/5000 m here).
        let dir = try makeTemporaryDirectory(self)
        let (w, h) = (320, 240)
        let n = 12
        try Data(MKVFixture.rgbRaw(frames: n, w: w, h: h)).write(to: URL(fileURLWithPath: dir + "/c.rgb"))
        try Data(MKVFixture.gray16Raw(frames: Array(0..<n), w: w, h: h, bigEndian: false, MKVFixture.depth))
            .write(to: URL(fileURLWithPath: dir + "/d.raw"))
        let cal = RGBDCalibration(depth: CameraModel(intrinsics: CameraIntrinsics(fx: 290, fy: 291, cx: 159.5, cy: 119.25, width: w, height: h)),
                                  color: CameraModel(intrinsics: CameraIntrinsics(fx: 300, fy: 300, cx: 160, cy: 120, width: w, height: h),
                                                     model: .brownConrady, coeffs: [0.1, -0.2, 0, 0, 0.05]),
                                  depthToColor: RigidTransform(rotation: [1, 0, 0, 0, 1, 0, 0, 0, 1], translation: SIMD3(0.015, 0, 0)),
                                  depthScale: 5000, origin: "depthlens")
        try Data(try cal.encodedJSON()).write(to: URL(fileURLWithPath: dir + "/calibration.json"))
        let path = dir + "/own.mkv"
        try runChecked(["ffmpeg", "-nostdin", "-loglevel", "error", "-y",
                     "-f", "rawvideo", "-pix_fmt", "rgb24", "-s", "\(w)x\(h)", "-r", "30", "-i", dir + "/c.rgb",
                     "-f", "rawvideo", "-pix_fmt", "gray16le", "-s", "\(w)x\(h)", "-r", "30", "-i", dir + "/d.raw",
                     "-map", "0", "-map", "1", "-c:v:0", "libx264", "-preset", "ultrafast", "-crf", "12", "-g", "5", "-bf", "2",
                     "-pix_fmt:v:0", "yuv420p", "-c:v:1", "ffv1", "-pix_fmt:v:1", "gray16le",
                     "-metadata:s:v:0", "title=COLOR", "-metadata:s:v:1", "title=DEPTH",
                     "-attach", dir + "/calibration.json", "-metadata:s:t", "mimetype=application/json",
                     "-metadata:s:t", "filename=calibration.json", path])
        let s = MKVSource(path: path)
        try s.start()
        XCTAssertEqual(s.warnings, [])
        XCTAssertEqual(s.recording.frameCount, n)
        var c = try XCTUnwrap(s.calibration)
        XCTAssertEqual(c.origin, "recording")
        c.origin = cal.origin
        XCTAssertEqual(c, cal)
        XCTAssertNil(s.metadata.device)
        XCTAssertEqual(s.metadata.streams.map(\.encoding), ["h264", "FFV1"], "FourCC when the track has one")
        func check(_ f: FrameSet, _ i: Int) {
            XCTAssertEqual(f.index, i)
            XCTAssertGreaterThan(psnr(f.color, frame: i).psnr, 30, "frame \(i)")
            let d = f.depth!.map
            var bad = 0
            for y in 0..<h { for x in 0..<w where d.sample(x: x, y: y) != Float(MKVFixture.depth(i, x, y)) / 5000 { bad += 1 } }
            XCTAssertEqual(bad, 0, "FFV1 depth of frame \(i) is lossless")
        }
        // In order, then jumps that need the keyframe before (GOP 5 with B-frames).
        for i in 0..<n { check(try s.frame(i), i) }
        for i in [11, 7, 3, 9, 0, 6] { check(try s.frame(i), i) }
    }

    func testRawColorFormatsNV12YUY2AndBGRA() throws {
        let dir = try makeTemporaryDirectory(self)
        let (w, h) = (64, 48)
        try Data(MKVFixture.rgbRaw(frames: 2, w: w, h: h)).write(to: URL(fileURLWithPath: dir + "/c.rgb"))
        // ffmpeg writes NV12 and YUY2 as V_UNCOMPRESSED with that FourCC; BGRA in VFW mode, where
        // the test puts the FourCC into the BITMAPINFOHEADER as the Azure Kinect recorder does.
        for (pixfmt, fourcc, minPSNR) in [("nv12", "NV12", 30.0), ("yuyv422", "YUY2", 33.0), ("bgra", "BGRA", 99.0)] {
            let path = dir + "/\(fourcc).mkv"
            try runChecked(["ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-f", "rawvideo", "-pix_fmt", "rgb24", "-s", "\(w)x\(h)",
                         "-r", "30", "-i", dir + "/c.rgb", "-c:v", "rawvideo", "-pix_fmt", pixfmt, "-allow_raw_vfw", "1",
                         "-metadata:s:v", "title=COLOR", path])
            if fourcc == "BGRA" {
                var b = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
                func le32(_ v: Int32) -> [UInt8] { withUnsafeBytes(of: v.littleEndian, Array.init) }
                let head = le32(40) + le32(Int32(w)) + le32(Int32(-h))
                let at = try XCTUnwrap((0..<(b.count - 20)).first { Array(b[$0..<$0 + 12]) == head })
                b.replaceSubrange(at + 8..<at + 12, with: le32(Int32(h)))
                b.replaceSubrange(at + 16..<at + 20, with: Array("BGRA".utf8))
                try Data(b).write(to: URL(fileURLWithPath: path))
            }
            let s = MKVSource(path: path)
            try s.start()
            XCTAssertEqual(s.metadata.streams.map(\.encoding), [fourcc])
            XCTAssertEqual(s.warnings, ["no calibration.json attachment: default intrinsics"])
            for i in 0..<2 {
                let f = try s.frame(i)
                XCTAssertNil(f.depth)
                let q = psnr(f.color, frame: i)
                XCTAssertGreaterThan(q.psnr, minPSNR, "\(fourcc) frame \(i)")
                print("mkv \(fourcc): PSNR \(String(format: "%.1f", q.psnr)) dB, max diff \(q.maxDiff)")
            }
        }
    }

    func testA30FPS720pRecordingPlaysInOrderWithoutSeeking() throws {
        // 1280×720 MJPEG color + 640×576 b16g depth and IR, 60 frames (the NFOV unbinned layout).
        let dir = try makeTemporaryDirectory(self)
        let path = dir + "/hd.mkv"
        try runChecked(["ffmpeg", "-nostdin", "-loglevel", "error", "-y",
                     "-f", "lavfi", "-i", "testsrc2=size=1280x720:rate=30:duration=2",
                     "-f", "lavfi", "-i", "testsrc2=size=640x576:rate=30:duration=2",
                     "-f", "lavfi", "-i", "testsrc=size=640x576:rate=30:duration=2",
                     "-map", "0", "-map", "1", "-map", "2", "-c:v:0", "mjpeg", "-q:v:0", "4", "-pix_fmt:v:0", "yuvj422p",
                     "-c:v:1", "rawvideo", "-pix_fmt:v:1", "gray16be", "-c:v:2", "rawvideo", "-pix_fmt:v:2", "gray16be",
                     "-tag:v:1", "b16g", "-tag:v:2", "b16g", "-strict", "unofficial",
                     "-metadata:s:v:0", "title=COLOR", "-metadata:s:v:1", "title=DEPTH", "-metadata:s:v:2", "title=IR",
                     "-metadata:s:v:1", "K4A_DEPTH_MODE=NFOV_UNBINNED", path])
        // The reference: depth of frame 37 as the ffmpeg CLI decodes it (big-endian 16-bit).
        let reference = [UInt8](try runChecked(["ffmpeg", "-nostdin", "-loglevel", "error", "-i", path, "-map", "0:1",
                                             "-vf", "select=eq(n\\,37)", "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "gray16be", "-"]))
        XCTAssertEqual(reference.count, 640 * 576 * 2)
        let s = MKVSource(path: path)
        let t0 = Date()
        try s.start()
        let opened = Date().timeIntervalSince(t0)
        XCTAssertEqual(s.recording.frameCount, 60)
        let t1 = Date()
        for i in 0..<60 {
            let f = try s.frame(i)
            XCTAssertNotNil(f.depth)
            if i == 37, let d = f.depth?.map {
                var bad = 0
                for y in 0..<576 { for x in 0..<640 {
                    let mm = UInt16(reference[(y * 640 + x) * 2]) << 8 | UInt16(reference[(y * 640 + x) * 2 + 1])
                    if d.sample(x: x, y: y) != Float(mm) / 1000 { bad += 1 }
                } }
                XCTAssertEqual(bad, 0, "frame 37's depth equals the ffmpeg CLI's")
            }
        }
        let perFrame = Date().timeIntervalSince(t1) / 60
        XCTAssertEqual(s.seekCount, 1, "one seek back to the start after indexing; then reading in order")
        print(String(format: "mkv 1280x720 MJPEG + 640x576 b16g depth + IR, 60 frames: start (index) %.0f ms, %.1f ms a frame (debug build)",
                     opened * 1000, perFrame * 1000))
    }

    func testInterCodedTracksPlayInOrderWithoutSeekingBack() throws {
        // H.264 with B-frames (decode order differs from presentation order) and frame-threaded
        // decoders hand frames out packets late; FFV1 depth. Reading in order must not seek back to
        // the keyframe for every frame, and must give the frames random access gives.
        let dir = try makeTemporaryDirectory(self)
        let path = dir + "/inter.mkv"
        try runChecked(["ffmpeg", "-nostdin", "-loglevel", "error", "-y",
                     "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30:duration=2",
                     "-f", "lavfi", "-i", "testsrc=size=160x120:rate=30:duration=2",
                     "-map", "0", "-map", "1", "-c:v:0", "libx264", "-bf", "3", "-g", "30", "-pix_fmt:v:0", "yuv420p",
                     "-c:v:1", "ffv1", "-pix_fmt:v:1", "gray16le",
                     "-metadata:s:v:0", "title=COLOR", "-metadata:s:v:1", "title=DEPTH", path])
        let s = MKVSource(path: path)
        try s.start()
        XCTAssertEqual(s.recording.frameCount, 60)
        var inOrder: [FrameSet] = []
        for i in 0..<60 { inOrder.append(try s.frame(i)) }
        XCTAssertEqual(s.seekCount, 1, "one seek back to the start after indexing; then reading in order")
        for i in [0, 7, 31, 59] {
            let alone = MKVSource(path: path)
            try alone.start()
            let f = try alone.frame(i)
            XCTAssertEqual(f.color.packedBytes(), inOrder[i].color.packedBytes(), "color of frame \(i)")
            XCTAssertEqual(f.depth.map { $0.map.packedBytes() }, inOrder[i].depth.map { $0.map.packedBytes() }, "depth of frame \(i)")
            XCTAssertEqual(f.timestamp, inOrder[i].timestamp)
        }
        // Stepping back one frame at a time still gives each frame.
        for i in stride(from: 40, to: 35, by: -1) {
            XCTAssertEqual(try s.frame(i).color.packedBytes(), inOrder[i].color.packedBytes(), "frame \(i) stepping back")
        }
    }

    func testWithoutColorTheIRImageIsShownWithItsDepth() throws {
        // Color off: DEPTH and IR tracks only; the frame's image is the IR (gray16, exact), the
        // calibration is the depth camera's for both.
        let dir = try makeTemporaryDirectory(self)
        try Data(MKVFixture.gray16Raw(frames: [0, 1, 2], MKVFixture.depth)).write(to: URL(fileURLWithPath: dir + "/d.raw"))
        try Data(MKVFixture.gray16Raw(frames: [0, 1, 2], MKVFixture.ir)).write(to: URL(fileURLWithPath: dir + "/ir.raw"))
        try Data(MKVFixture.azureCalibration.utf8).write(to: URL(fileURLWithPath: dir + "/calibration.json"))
        let path = dir + "/noc.mkv"
        try runChecked(["ffmpeg", "-nostdin", "-loglevel", "error", "-y",
                     "-f", "rawvideo", "-pix_fmt", "gray16be", "-s", "320x288", "-r", "30", "-i", dir + "/d.raw",
                     "-f", "rawvideo", "-pix_fmt", "gray16be", "-s", "320x288", "-r", "30", "-i", dir + "/ir.raw",
                     "-map", "0", "-map", "1", "-c:v", "rawvideo", "-tag:v", "b16g", "-strict", "unofficial",
                     "-metadata:s:v:0", "title=DEPTH", "-metadata:s:v:1", "title=IR", "-metadata", "K4A_DEPTH_MODE=NFOV_2X2BINNED",
                     "-attach", dir + "/calibration.json", "-metadata:s:t", "mimetype=application/octet-stream",
                     "-metadata:s:t", "filename=calibration.json", path])
        let s = MKVSource(path: path)
        try s.start()
        XCTAssertEqual(s.warnings, [])
        XCTAssertEqual(s.metadata.streams.map(\.name), ["depth", "ir"])
        let c = try XCTUnwrap(s.calibration)
        XCTAssertEqual(c.color, c.depth)
        XCTAssertEqual(c.depth.intrinsics.cx, 162.0088, accuracy: 1e-3)
        XCTAssertFalse(c.needsAlignment)
        for i in 0..<3 {
            let f = try s.frame(i)
            XCTAssertEqual(f.color.format, .gray16(depthScale: 0))
            var bad = 0
            for y in 0..<288 { for x in 0..<320 where f.color.row(y, as: UInt16.self)[x] != MKVFixture.ir(i, x, y) { bad += 1 } }
            XCTAssertEqual(bad, 0, "IR of frame \(i)")
            checkDepth(f.depth, frame: i)
        }
    }

    func testTheAttachmentTheK4ATagNamesWinsAndABadOneIsAWarning() throws {
        // As the SDK: the attachment the K4A_CALIBRATION_FILE tag targets, else the one named
        // calibration.json. Here a broken calibration.json comes first and a tagged factory.json second.
        let dir = try makeTemporaryDirectory(self)
        try Data(MKVFixture.gray16Raw(frames: [0], MKVFixture.depth)).write(to: URL(fileURLWithPath: dir + "/d.raw"))
        try Data(MKVFixture.azureCalibration.utf8).write(to: URL(fileURLWithPath: dir + "/factory.json"))
        try Data("{ broken".utf8).write(to: URL(fileURLWithPath: dir + "/broken.json"))
        func make(_ name: String, tagged: Bool) throws -> String {
            let path = dir + "/" + name
            var args = ["ffmpeg", "-nostdin", "-loglevel", "error", "-y",
                        "-f", "rawvideo", "-pix_fmt", "gray16be", "-s", "320x288", "-r", "30", "-i", dir + "/d.raw",
                        "-c:v", "rawvideo", "-tag:v", "b16g", "-strict", "unofficial", "-metadata:s:v", "title=DEPTH",
                        "-metadata:s:v", "K4A_DEPTH_MODE=NFOV_2X2BINNED",
                        "-attach", dir + "/broken.json", "-metadata:s:t:0", "mimetype=application/octet-stream",
                        "-metadata:s:t:0", "filename=calibration.json"]
            if tagged {
                args += ["-attach", dir + "/factory.json", "-metadata:s:t:1", "mimetype=application/octet-stream",
                         "-metadata:s:t:1", "filename=factory.json", "-metadata:s:t:1", "K4A_CALIBRATION_FILE=factory.json"]
            }
            try runChecked(args + [path])
            return path
        }
        let tagged = MKVSource(path: try make("tagged.mkv", tagged: true))
        try tagged.start()
        XCTAssertEqual(tagged.warnings, [])
        XCTAssertEqual(try XCTUnwrap(tagged.calibration).depth.intrinsics.cx, 162.0088, accuracy: 1e-3)
        XCTAssertEqual(tagged.metadata.tags["K4A_CALIBRATION_FILE"], "factory.json")

        let broken = MKVSource(path: try make("broken.mkv", tagged: false))
        try broken.start()
        XCTAssertNil(broken.calibration)
        XCTAssertEqual(broken.warnings, ["\(dir)/broken.mkv: attachment calibration.json: not a JSON object: default intrinsics"])
        checkDepth(try broken.frame(0).depth, frame: 0)
    }
}
