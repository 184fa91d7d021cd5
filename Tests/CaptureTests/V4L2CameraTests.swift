import XCTest
import Glibc
@testable import Capture
import CaptureTesting
import DepthKit

/// V4L2Camera against ScriptedV4L2System, which plays the kernel.
final class V4L2CameraTests: XCTestCase {
    var system: ScriptedV4L2System!
    var color: ScriptedV4L2System.Device!

    override func setUp() {
        system = ScriptedV4L2System()
        color = system.addDevice(path: "/dev/video0", formats: [
            .init(.yuyv, name: "YUYV 4:2:2", sizes: [(640, 480), (1280, 720)], frameRates: [30, 15]),
            .init(.mjpeg, name: "Motion-JPEG", sizes: [(640, 480), (1280, 720), (1920, 1080)], frameRates: [30]),
        ])
    }

    func openCamera(_ path: String = "/dev/video0", _ request: V4L2Request = .color(), scale: Float = 1000) throws -> V4L2Camera {
        let cam = V4L2Camera(path: path, system: system, depthScale: scale)
        try cam.open()
        try cam.configure(request)
        try cam.start()
        return cam
    }

    func testEnumeratesFormatsSizesAndRates() throws {
        let cam = V4L2Camera(path: "/dev/video0", system: system)
        try cam.open()
        XCTAssertEqual(cam.card, "Scripted Camera")
        let formats = try cam.formats()
        XCTAssertEqual(formats.map(\.fourcc), [.yuyv, .mjpeg])
        XCTAssertEqual(formats[0].name, "YUYV 4:2:2")
        XCTAssertFalse(formats[0].isCompressed)
        XCTAssertTrue(formats[1].isCompressed)
        XCTAssertEqual(formats[0].sizes, [V4L2FrameSize(width: 640, height: 480, frameRates: [30, 15]),
                                          V4L2FrameSize(width: 1280, height: 720, frameRates: [30, 15])])
        XCTAssertEqual(formats[1].sizes.map(\.width), [640, 1280, 1920])
        XCTAssertEqual(formats[1].sizes[2].frameRates, [30])
        XCTAssertEqual(V4L2FourCC.yuyv.description, "YUYV")
        XCTAssertEqual(V4L2FourCC.z16.description, "Z16")
    }

    func testNegotiatesNearestSizeWhenRequestedSizeIsUnsupported() throws {
        let cam = V4L2Camera(path: "/dev/video0", system: system)
        try cam.open()
        let config = try cam.configure(.color(width: 800, height: 600, fps: 30))
        XCTAssertEqual(config.fourcc, .yuyv)
        XCTAssertEqual(config.width, 640)
        XCTAssertEqual(config.height, 480)
        XCTAssertEqual(config.bytesPerLine, 1280)
        XCTAssertEqual(color.width, 640)
        // 1920x1080 exists only as MJPEG: the exact size wins over the YUYV preference.
        let hd = try cam.configure(.color(width: 1920, height: 1080, fps: 30))
        XCTAssertEqual(hd.fourcc, .mjpeg)
        XCTAssertEqual(hd.width, 1920)
        XCTAssertEqual(color.fourcc, .mjpeg)
    }

    func testDeviceWithoutUsableFormatIsAClearError() throws {
        system.addDevice(path: "/dev/video5", formats: [.init(V4L2FourCC(0x3436_3248) /* H264 */, sizes: [(320, 240)])])
        let cam = V4L2Camera(path: "/dev/video5", system: system)
        try cam.open()
        XCTAssertThrowsError(try cam.configure(.color())) { error in
            let s = "\(error)"
            XCTAssertTrue(s.hasPrefix("/dev/video5: no usable pixel format"), s)
            XCTAssertTrue(s.contains("H264"), s)
        }
    }

    func testFrameRateIsSetWithSParmAndReported() throws {
        let cam = V4L2Camera(path: "/dev/video0", system: system)
        try cam.open()
        let config = try cam.configure(.color(width: 640, height: 480, fps: 15))
        XCTAssertEqual(config.fps, 15)
        XCTAssertEqual(try cam.currentFrameRate(), 15)
        XCTAssertEqual(color.timePerFrame.numerator, 1)
        XCTAssertEqual(color.timePerFrame.denominator, 15)
        XCTAssertTrue(system.calls.contains("VIDIOC_S_PARM"))
        // 24 fps is not offered: the nearest (30) is chosen.
        XCTAssertEqual(try cam.configure(.color(width: 640, height: 480, fps: 24)).fps, 30)
    }

    func testStreamsWithFourMappedBuffersAndReleasesThemOnClose() throws {
        let cam = try openCamera()
        XCTAssertEqual(system.mappedBufferCount, 4)
        XCTAssertEqual(system.calls.filter { $0 == "mmap" }.count, 4)
        XCTAssertNotNil(try cam.readFrame())
        cam.stop()
        XCTAssertEqual(system.mappedBufferCount, 0)
        cam.close()
        XCTAssertEqual(system.openDescriptorCount, 0)
    }

    /// YUYV bytes and the RGBA values computed by hand with the documented integer formula.
    func testYUYVConvertsKnownPixels() throws {
        let dev = system.addDevice(path: "/dev/video3", formats: [.init(.yuyv, sizes: [(4, 2)])])
        // Row 0: (Y0=120, U=140, Y1=16, V=110), (Y0=235, U=128, Y1=126, V=128)
        // Row 1: (Y0=81, U=90, Y1=16, V=240), (Y0=255, U=255, Y1=0, V=0)
        let row0: [UInt8] = [120, 140, 16, 110, 235, 128, 126, 128]
        let row1: [UInt8] = [81, 90, 16, 240, 255, 255, 0, 0]
        dev.frameProvider = { n in .init(payload: row0 + row1, timestamp: 10 + Double(n) / 30) }
        let cam = try openCamera("/dev/video3", .color(width: 4, height: 2))
        let frame = try XCTUnwrap(try cam.readFrame())
        let b = frame.buffer
        XCTAssertEqual(b.format, .rgba8)
        func px(_ x: Int, _ y: Int) -> [UInt8] { let p = b.rgba(x: x, y: y); return [p.0, p.1, p.2, p.3] }
        // C=104 D=12 E=-18: R=(30992-7362+128)>>8=92, G=(30992-1200+3744+128)>>8=131, B=(30992+6192+128)>>8=145
        XCTAssertEqual(px(0, 0), [92, 131, 145, 255])
        // C=0 with the same chroma: R=-7234>>8 → 0, G=2672>>8=10, B=6320>>8=24
        XCTAssertEqual(px(1, 0), [0, 10, 24, 255])
        // Y=235 neutral: (298·219+128)>>8 = 255; Y=126 neutral: (298·110+128)>>8 = 128
        XCTAssertEqual(px(2, 0), [255, 255, 255, 255])
        XCTAssertEqual(px(3, 0), [128, 128, 128, 255])
        // C=65 D=-38 E=112: R=65306>>8=255, G=2>>8=0, B=-110>>8 → 0 (pure red)
        XCTAssertEqual(px(0, 1), [255, 0, 0, 255])
        // C=0 D=-38 E=112: R=45936>>8=179, G=(3800-23296+128)>>8 → 0, B=(-19608+128)>>8 → 0
        XCTAssertEqual(px(1, 1), [179, 0, 0, 255])
        // Y=255 D=127 E=-128: R=(71222-52352+128)>>8=74, G=(71222-12700+26624+128)>>8=255, B=255
        XCTAssertEqual(px(2, 1), [74, 255, 255, 255])
        // Y=0 → C=-16: R=(-4768-52352+128)>>8 → 0, G=(-4768-12700+26624+128)>>8=36, B=(-4768+65532+128)>>8=237
        XCTAssertEqual(px(3, 1), [0, 36, 237, 255])
        XCTAssertEqual(frame.timestamp, 10, accuracy: 1e-6)
        XCTAssertEqual(frame.sequence, 0)
    }

    func testRGB24BGR24AndGreyConvertToRGBA() throws {
        for (fourcc, payload, expected) in [
            (V4L2FourCC.rgb24, [UInt8]([10, 20, 30, 40, 50, 60]), [[10, 20, 30, 255], [40, 50, 60, 255]]),
            (V4L2FourCC.bgr24, [UInt8]([10, 20, 30, 40, 50, 60]), [[30, 20, 10, 255], [60, 50, 40, 255]]),
            (V4L2FourCC.grey, [UInt8]([7, 250]), [[7, 7, 7, 255], [250, 250, 250, 255]]),
        ] as [(V4L2FourCC, [UInt8], [[UInt8]])] {
            let path = "/dev/video-\(fourcc)"
            let dev = system.addDevice(path: path, formats: [.init(fourcc, sizes: [(2, 1)])])
            dev.frameProvider = { _ in .init(payload: payload, timestamp: 0) }
            let cam = try openCamera(path, V4L2Request(width: 2, height: 1, fps: 30, formats: [fourcc]))
            let b = try XCTUnwrap(try cam.readFrame()).buffer
            for x in 0..<2 {
                let p = b.rgba(x: x, y: 0)
                XCTAssertEqual([p.0, p.1, p.2, p.3], expected[x], "\(fourcc) pixel \(x)")
            }
        }
    }

    func testZ16BecomesMetersWithScaleAndZeroStaysInvalid() throws {
        let depth = system.addDevice(path: "/dev/video2", formats: [.init(.z16, sizes: [(4, 1)], frameRates: [30])])
        let values: [UInt16] = [1500, 0, 5000, 65535]
        depth.frameProvider = { _ in .init(payload: values.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }, timestamp: 1) }
        for (scale, expected) in [(Float(1000), [Float(1.5), 0, 5, 65.535]), (5000, [0.3, 0, 1, 13.107])] {
            let cam = try openCamera("/dev/video2", .depth(width: 4, height: 1), scale: scale)
            XCTAssertEqual(cam.configuration?.fourcc, .z16)
            let b = try XCTUnwrap(try cam.readFrame()).buffer
            XCTAssertEqual(b.format, .depthFloat32)
            for x in 0..<4 { XCTAssertEqual(b.sample(x: x, y: 0), expected[x], accuracy: 1e-5, "scale \(scale) x \(x)") }
            XCTAssertFalse(isValidDepth(b.sample(x: 1, y: 0)))
            cam.close()
        }
    }

    func testY16BecomesGray16() throws {
        let ir = system.addDevice(path: "/dev/video4", formats: [.init(.y16, sizes: [(2, 1)])])
        ir.frameProvider = { _ in .init(payload: [0x34, 0x12, 0xFF, 0xFF], timestamp: 0) }
        let cam = V4L2Camera(path: "/dev/video4", system: system)
        cam.grayOutput = .gray16
        try cam.open()
        try cam.configure(V4L2Request(width: 2, height: 1, formats: [.y16]))
        try cam.start()
        let b = try XCTUnwrap(try cam.readFrame()).buffer
        XCTAssertEqual(b.format, .gray16(depthScale: 0))
        XCTAssertEqual(b.row(0, as: UInt16.self)[0], 0x1234)
        XCTAssertEqual(b.row(0, as: UInt16.self)[1], 0xFFFF)
    }

    func testEAGAINMeansNoFrameYet() throws {
        color.readyFrames = 0
        let cam = try openCamera()
        XCTAssertNil(try cam.readFrame())
        XCTAssertNil(try cam.waitForFrame(timeout: 0))
        color.readyFrames = 1
        let f = try XCTUnwrap(try cam.readFrame())
        XCTAssertEqual(f.sequence, 0)
        XCTAssertNil(try cam.readFrame())
        XCTAssertTrue(cam.isStreaming)
    }

    func testUnplugAtFrame3ThrowsDisconnectedAndCleansUp() throws {
        color.unplugAtFrame = 3
        let cam = try openCamera()
        for i in 0..<3 { XCTAssertEqual(try XCTUnwrap(try cam.readFrame()).sequence, i) }
        XCTAssertThrowsError(try cam.readFrame()) { error in
            XCTAssertEqual(error as? CaptureError, .disconnected(device: "/dev/video0", errno: ENODEV))
            XCTAssertEqual("\(error)", "/dev/video0: camera disconnected (ENODEV)")
        }
        XCTAssertFalse(cam.isOpen)
        XCTAssertFalse(cam.isStreaming)
        XCTAssertEqual(system.mappedBufferCount, 0)
        XCTAssertEqual(system.openDescriptorCount, 0)
        // Further reads are an error, not a crash.
        XCTAssertThrowsError(try cam.readFrame())
    }

    func testPollErrorIsADisconnect() throws {
        color.unplugAtFrame = 1
        color.unplugErrno = EIO
        let cam = try openCamera()
        XCTAssertNotNil(try cam.waitForFrame(timeout: 0.01))
        XCTAssertThrowsError(try cam.waitForFrame(timeout: 0.01)) { error in
            guard case .disconnected(let path, _)? = error as? CaptureError else { return XCTFail("\(error)") }
            XCTAssertEqual(path, "/dev/video0")
        }
        XCTAssertEqual(system.openDescriptorCount, 0)
    }

    func testReopensAfterUnplug() throws {
        color.unplugAtFrame = 2
        let cam = try openCamera()
        _ = try cam.readFrame(); _ = try cam.readFrame()
        XCTAssertThrowsError(try cam.readFrame())
        XCTAssertThrowsError(try cam.open()) { error in
            XCTAssertEqual("\(error)", "/dev/video0: open failed: No such file or directory (ENOENT)")
        }
        color.replug()
        try cam.open()
        try cam.configure(.color())
        try cam.start()
        XCTAssertEqual(try XCTUnwrap(try cam.readFrame()).sequence, 0)
        XCTAssertEqual(system.mappedBufferCount, 4)
    }
}
