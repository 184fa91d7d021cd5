import XCTest
import Glibc
@testable import Capture
import CaptureTesting
import DepthKit

/// Every format a UVC depth camera streams, through the scripted V4L2 layer: a device offering the
/// format, configure, capture, and every pixel against values computed by hand from the documented
/// formulas (YUV: the YUYV path's BT.601 8.8 fixed point; gray: the top 8 bits, or bit replication
/// to 16 bits; Y12I: librealsense's pixel layout).
final class V4L2FormatTests: XCTestCase {
    var system: ScriptedV4L2System!

    override func setUp() { system = ScriptedV4L2System() }

    /// One frame of `payload` from a device offering only `fourcc` at `width`×`height`.
    func capture(_ fourcc: V4L2FourCC, _ width: Int, _ height: Int, _ payload: [UInt8],
                 gray: V4L2Camera.GrayOutput = .rgba8, y16IsDepth: Bool = false, scale: Float = 1000) throws -> PixelBuffer {
        let path = "/dev/video-\(fourcc)-\(gray)-\(y16IsDepth)"
        let dev = system.addDevice(path: path, formats: [.init(fourcc, sizes: [(width, height)])])
        dev.frameProvider = { _ in .init(payload: payload, timestamp: 1) }
        let cam = V4L2Camera(path: path, system: system, depthScale: scale)
        cam.grayOutput = gray
        cam.y16IsDepth = y16IsDepth
        try cam.open()
        let config = try cam.configure(V4L2Request(width: width, height: height, fps: 30,
                                                   formats: y16IsDepth ? V4L2FourCC.depthPreference : V4L2FourCC.colorPreference))
        XCTAssertEqual(config.fourcc, fourcc)
        try cam.start()
        defer { cam.close() }
        return try XCTUnwrap(try cam.readFrame()).buffer
    }

    func pixels(_ b: PixelBuffer) -> [[UInt8]] {
        XCTAssertEqual(b.format, .rgba8)
        var out: [[UInt8]] = []
        for y in 0..<b.height { for x in 0..<b.width { let p = b.rgba(x: x, y: y); out.append([p.0, p.1, p.2, p.3]) } }
        return out
    }

    func words(_ b: PixelBuffer) -> [UInt16] {
        var out: [UInt16] = []
        for y in 0..<b.height { for x in 0..<b.width { out.append(b.row(y, as: UInt16.self)[x]) } }
        return out
    }

    func le16(_ v: [UInt16]) -> [UInt8] { v.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] } }
    func gray(_ v: [UInt8]) -> [[UInt8]] { v.map { [$0, $0, $0, 255] } }

    /// The YUYV test's Y, U, V values (V4L2CameraTests.testYUYVConvertsKnownPixels) as UYVY: the
    /// same pixels, computed there by hand.
    func testUYVYEqualsYUYVOfTheSameData() throws {
        let yuyv: [UInt8] = [120, 140, 16, 110, 235, 128, 126, 128, 81, 90, 16, 240, 255, 255, 0, 0]
        var uyvy = yuyv
        for i in stride(from: 0, to: uyvy.count, by: 2) { uyvy.swapAt(i, i + 1) }  // Y0 U Y1 V → U Y0 V Y1
        let expected: [[UInt8]] = [[92, 131, 145, 255], [0, 10, 24, 255], [255, 255, 255, 255], [128, 128, 128, 255],
                                   [255, 0, 0, 255], [179, 0, 0, 255], [74, 255, 255, 255], [0, 36, 237, 255]]
        XCTAssertEqual(pixels(try capture(.uyvy, 4, 2, uyvy)), expected)
        XCTAssertEqual(pixels(try capture(.yuyv, 4, 2, yuyv)), expected)
    }

    func testNV12SharesEachChromaPairOverATwoByTwoBlock() throws {
        // Luma rows [120, 16, 235, 126] and [235, 120, 16, 81]; one chroma row (U V) (U V): (140, 110), (128, 128).
        let payload: [UInt8] = [120, 16, 235, 126, 235, 120, 16, 81, 140, 110, 128, 128]
        XCTAssertEqual(pixels(try capture(.nv12, 4, 2, payload)), [
            // D=12 E=-18 (as YUYV): Y=120 → (92, 131, 145); Y=16 → (0, 10, 24)
            [92, 131, 145, 255], [0, 10, 24, 255],
            // neutral chroma: Y=235 → (298·219+128)>>8 = 255; Y=126 → (298·110+128)>>8 = 128
            [255, 255, 255, 255], [128, 128, 128, 255],
            // Y=235, D=12 E=-18: R=(65262−7362+128)>>8=226, G=(65262−1200+3744+128)>>8=265→255, B=(65262+6192+128)>>8=279→255
            [226, 255, 255, 255], [92, 131, 145, 255],
            // neutral: Y=16 → 128>>8 = 0; Y=81 → (298·65+128)>>8 = 19498>>8 = 76
            [0, 0, 0, 255], [76, 76, 76, 255],
        ])
    }

    func testY8IShowsTheLeftImage() throws {
        // (left, right) pairs.
        XCTAssertEqual(pixels(try capture(.y8i, 3, 1, [10, 200, 0, 255, 255, 1])), gray([10, 0, 255]))
    }

    func testGreyIsIR() throws {
        XCTAssertEqual(pixels(try capture(.grey, 3, 1, [0, 77, 255])), gray([0, 77, 255]))
    }

    func testY10AndY12ToEightBitsAndSixteen() throws {
        // Y10: 0x0000, 0x03FF, 0x0201, 0xFC04 (high bits ignored → 4).
        let y10 = le16([0x0000, 0x03FF, 0x0201, 0xFC04])
        XCTAssertEqual(pixels(try capture(.y10, 4, 1, y10)), gray([0, 255, 128, 1]))  // 513 >> 2 = 128
        // v << 6 | v >> 4: 0; 65472|63 = 65535; 32832|32 = 32864; 256|0 = 256
        XCTAssertEqual(words(try capture(.y10, 4, 1, y10, gray: .gray16)), [0, 65535, 32864, 256])
        // Y12: 0x0FFF, 0x0800, 0x0123, 0xF00F (→ 15).
        let y12 = le16([0x0FFF, 0x0800, 0x0123, 0xF00F])
        XCTAssertEqual(pixels(try capture(.y12, 4, 1, y12)), gray([255, 128, 18, 0]))
        // v << 4 | v >> 8: 65520|15 = 65535; 32768|8 = 32776; 4656|1 = 4657; 240|0 = 240
        let b = try capture(.y12, 4, 1, y12, gray: .gray16)
        XCTAssertEqual(b.format, .gray16(depthScale: 0))
        XCTAssertEqual(words(b), [65535, 32776, 4657, 240])
    }

    func testY12IShowsTheLeftImageInLibrealsenseLayout() throws {
        // Pixel pairs b0 b1 b2: left = b2 << 4 | b1 >> 4 (10 significant bits, clamped to 1023),
        // right = (b1 & 15) << 8 | b0 — each right half differs from its left, so the wrong half fails.
        let payload: [UInt8] = [
            0xA5, 0xF5, 0x3F,  // left 0x3FF = 1023, right 0x5A5
            0xFF, 0x0F, 0x20,  // left 0x200 = 512, right 0xFFF
            0x00, 0x30, 0x12,  // left 0x123 = 291, right 0
            0x00, 0xC0, 0xAB,  // left 0xABC → 1023, right 0
        ]
        XCTAssertEqual(pixels(try capture(.y12i, 4, 1, payload)), gray([255, 128, 72, 255]))
        // left << 6 | left >> 4: 65535; 32768|32 = 32800; 18624|18 = 18642; 65535
        XCTAssertEqual(words(try capture(.y12i, 4, 1, payload, gray: .gray16)), [65535, 32800, 18642, 65535])
    }

    func testY16IsGrayOnAColorNodeAndDepthOnTheDepthNode() throws {
        let payload = le16([0x1234, 0xFFFF, 1500, 0])
        XCTAssertEqual(pixels(try capture(.y16, 4, 1, payload)), gray([0x12, 0xFF, 5, 0]))  // 1500 >> 8 = 5
        for (scale, expected) in [(Float(1000), [Float(4.66), 65.535, 1.5, 0]), (5000, [0.932, 13.107, 0.3, 0])] {
            let d = try capture(.y16, 4, 1, payload, y16IsDepth: true, scale: scale)
            XCTAssertEqual(d.format, .depthFloat32)
            for x in 0..<4 { XCTAssertEqual(d.sample(x: x, y: 0), expected[x], accuracy: 1e-5, "scale \(scale) x \(x)") }
        }
    }

    /// `v4l2:COLOR,depth=DEPTH` with a UYVY color node and a Y16 depth node: the depth node's Y16
    /// is depth in meters at `--depth-scale`.
    func testSourceReadsY16DepthNodeAsMeters() throws {
        let c = system.addDevice(path: "/dev/video0", formats: [.init(.uyvy, sizes: [(2, 1)])])
        let d = system.addDevice(path: "/dev/video1", formats: [.init(.y16, sizes: [(2, 1)])])
        c.frameProvider = { n in .init(payload: [128, 235, 128, 126], timestamp: Double(n) / 30) }
        d.frameProvider = { n in .init(payload: self.le16([2500, 0]), timestamp: Double(n) / 30) }
        let source = V4L2Source(colorPath: "/dev/video0", depthPath: "/dev/video1", system: system, depthScale: 5000,
                                colorRequest: .color(width: 2, height: 1), depthRequest: .depth(width: 2, height: 1))
        try source.start()
        defer { source.stop() }
        d.readyFrames = 1
        let f = try XCTUnwrap(try source.nextFrame(now: 0))
        XCTAssertEqual(pixels(f.color), [[255, 255, 255, 255], [128, 128, 128, 255]])
        let depth = try XCTUnwrap(f.depth)
        XCTAssertEqual(depth.map.format, .depthFloat32)
        XCTAssertEqual(depth.map.sample(x: 0, y: 0), 0.5, accuracy: 1e-6)
        XCTAssertEqual(depth.map.sample(x: 1, y: 0), 0)
    }

    func testShortNV12FrameIsAClearError() throws {
        let dev = system.addDevice(path: "/dev/video7", formats: [.init(.nv12, sizes: [(4, 2)])])
        dev.frameProvider = { _ in .init(payload: [UInt8](repeating: 0, count: 8), timestamp: 0) }  // luma only
        let cam = V4L2Camera(path: "/dev/video7", system: system)
        try cam.open()
        try cam.configure(V4L2Request(width: 4, height: 2, formats: [.nv12]))
        try cam.start()
        XCTAssertThrowsError(try cam.readFrame()) { error in
            XCTAssertTrue("\(error)".hasPrefix("/dev/video7: short frame: 8 bytes, expected 12"), "\(error)")
        }
    }

    // MARK: A RealSense D435: four nodes, one camera

    func testD435NodesAreOneCameraInDevices() throws {
        let nodes = system.addRealSenseD435()
        let webcam = system.addDevice(path: "/dev/video4", formats: [.init(.mjpeg, sizes: [(1280, 720)])])
        webcam.busInfo = "usb-0000:00:14.0-2"
        webcam.card = "HD Webcam"
        let list = V4L2Devices.list(paths: (0...5).map { "/dev/video\($0)" }, system: system)
        XCTAssertEqual(list.map(\.node), ["depth", "metadata", "infrared", "color", "color", "unavailable"])
        XCTAssertNil(list[1].error, "a metadata node is listed as such, not as a failure")
        XCTAssertEqual(list[2].formats.map(\.fourcc), ["GREY", "Y8I", "Y12I"])
        XCTAssertTrue(list[2].formats.allSatisfy(\.supported))
        let groups = V4L2Devices.groups(list)
        XCTAssertEqual(groups.count, 3)
        XCTAssertEqual(groups[0].busInfo, nodes[0].busInfo)
        XCTAssertEqual(groups[0].nodes.map(\.path), ["/dev/video0", "/dev/video1", "/dev/video2", "/dev/video3"])
        XCTAssertEqual(groups[0].card, "Intel(R) RealSense(TM) Depth Ca")
        XCTAssertEqual(groups[0].source, "v4l2:/dev/video3,depth=/dev/video0")
        XCTAssertEqual(groups[1].nodes.map(\.path), ["/dev/video4"])
        XCTAssertEqual(groups[1].source, "v4l2:/dev/video4")
        XCTAssertEqual(groups[2].nodes.map(\.path), ["/dev/video5"])
        XCTAssertNil(groups[2].source)
        XCTAssertEqual(system.openDescriptorCount, 0)

        let text = groups[0].description
        XCTAssertTrue(text.hasPrefix("Intel(R) RealSense(TM) Depth Ca (uvcvideo) at usb-0000:00:14.0-1: 4 nodes, --source v4l2:/dev/video3,depth=/dev/video0\n"), text)
        XCTAssertTrue(text.contains("\n  /dev/video1: Intel(R) RealSense(TM) Depth Ca (uvcvideo) metadata node (no video capture)"), text)
        XCTAssertTrue(text.contains("\n  /dev/video0: Intel(R) RealSense(TM) Depth Ca (uvcvideo), depth\n      Z16 (16-bit Depth)"), text)

        let json = try JSONSerialization.jsonObject(with: try JSONEncoder().encode(groups)) as? [[String: Any]]
        let d435 = try XCTUnwrap(json?.first)
        XCTAssertEqual(d435["busInfo"] as? String, "usb-0000:00:14.0-1")
        XCTAssertEqual(d435["source"] as? String, "v4l2:/dev/video3,depth=/dev/video0")
        let jsonNodes = try XCTUnwrap(d435["nodes"] as? [[String: Any]])
        XCTAssertEqual(jsonNodes.compactMap { $0["node"] as? String }, ["depth", "metadata", "infrared", "color"])
    }

    func testD435MetadataNodeRefusesToStreamAndIRNodeStreamsGreyAndY8I() throws {
        system.addRealSenseD435()
        let meta = V4L2Camera(path: "/dev/video1", system: system)
        XCTAssertThrowsError(try meta.open()) { error in
            XCTAssertEqual("\(error)", "/dev/video1: a metadata node, not a video capture device (Intel(R) RealSense(TM) Depth Ca)")
        }
        XCTAssertTrue(meta.isMetadataNode)
        // The IR node at 640x480: GREY is preferred; Y8I when asked for.
        let ir = system.device("/dev/video2")!
        ir.frameProvider = { _ in .init(payload: (0..<(640 * 480 * 2)).map { UInt8(truncatingIfNeeded: $0 * 7) }, timestamp: 0) }
        for (formats, fourcc) in [(V4L2FourCC.colorPreference, V4L2FourCC.grey), ([.y8i], .y8i)] {
            let cam = V4L2Camera(path: "/dev/video2", system: system)
            try cam.open()
            XCTAssertEqual(try cam.configure(V4L2Request(width: 640, height: 480, fps: 30, formats: formats)).fourcc, fourcc)
            try cam.start()
            let b = try XCTUnwrap(try cam.readFrame()).buffer
            let stride = fourcc == .y8i ? 2 : 1
            var bad = 0
            for y in 0..<480 { for x in 0..<640 {
                let v = UInt8(truncatingIfNeeded: (y * 640 + x) * stride * 7)
                let p = b.rgba(x: x, y: y)
                if [p.0, p.1, p.2, p.3] != [v, v, v, 255] { bad += 1 }
            } }
            XCTAssertEqual(bad, 0, "\(fourcc)")
            cam.close()
        }
    }

    /// The depth and color nodes of the D435 model together, as the group's `--source` opens them.
    func testD435StreamsColorWithDepth() throws {
        let nodes = system.addRealSenseD435()
        nodes[0].frameProvider = { n in .init(payload: self.le16([UInt16](repeating: 1234, count: 640 * 480)), timestamp: Double(n) / 30) }
        let source = V4L2Source(colorPath: "/dev/video3", depthPath: "/dev/video0", system: system,
                                colorRequest: .color(width: 640, height: 480), depthRequest: .depth(width: 640, height: 480))
        try source.start()
        defer { source.stop() }
        XCTAssertEqual(source.color.configuration?.fourcc, .yuyv)
        XCTAssertEqual(source.depth?.configuration?.fourcc, .z16)
        nodes[0].readyFrames = 1
        let f = try XCTUnwrap(try source.nextFrame(now: 0))
        XCTAssertEqual(f.depth?.map.sample(x: 639, y: 479) ?? 0, 1.234, accuracy: 1e-6)
    }
}
