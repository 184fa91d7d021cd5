import XCTest
import Glibc
import CPlatform
import Capture
import CaptureTesting

/// The scripted kernel answers the way a V4L2 driver does: the capture tests built on it are only
/// as good as these answers.
final class ScriptedV4L2SystemTests: XCTestCase {
    func testAnswersLikeADriver() throws {
        let system = ScriptedV4L2System()
        let device = system.addDevice(path: "/dev/video7", formats: [
            .init(.yuyv, sizes: [(640, 480), (1280, 720)], frameRates: [30, 15]),
        ])
        device.card = "Test Cam"
        XCTAssertEqual(system.open("/dev/video9", flags: O_RDWR), -1, "an absent node")
        XCTAssertEqual(system.errno, ENOENT)

        let fd = system.open("/dev/video7", flags: O_RDWR)
        XCTAssertGreaterThanOrEqual(fd, 0)
        var cap = v4l2_capability()
        XCTAssertEqual(withUnsafeMutableBytes(of: &cap) { system.ioctl(fd, DL_VIDIOC_QUERYCAP, $0.baseAddress!) }, 0)
        XCTAssertEqual(stringFromCTuple(cap.card), "Test Cam")

        // ENUM_FMT lists the one format, then EINVAL ends the list (as drivers end enumerations).
        var desc = v4l2_fmtdesc()
        desc.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        XCTAssertEqual(withUnsafeMutableBytes(of: &desc) { system.ioctl(fd, DL_VIDIOC_ENUM_FMT, $0.baseAddress!) }, 0)
        XCTAssertEqual(desc.pixelformat, V4L2FourCC.yuyv.rawValue)
        desc.index = 1
        XCTAssertEqual(withUnsafeMutableBytes(of: &desc) { system.ioctl(fd, DL_VIDIOC_ENUM_FMT, $0.baseAddress!) }, -1)
        XCTAssertEqual(system.errno, EINVAL)

        // S_FMT adjusts a size it does not have to one it has, instead of failing.
        var fmt = v4l2_format()
        fmt.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        fmt.fmt.pix.width = 1000
        fmt.fmt.pix.height = 700
        fmt.fmt.pix.pixelformat = V4L2FourCC.yuyv.rawValue
        XCTAssertEqual(withUnsafeMutableBytes(of: &fmt) { system.ioctl(fd, DL_VIDIOC_S_FMT, $0.baseAddress!) }, 0)
        XCTAssertTrue([(640, 480), (1280, 720)].contains { $0.0 == Int(fmt.fmt.pix.width) && $0.1 == Int(fmt.fmt.pix.height) },
                      "adjusted to \(fmt.fmt.pix.width)x\(fmt.fmt.pix.height)")
        XCTAssertEqual(Int(fmt.fmt.pix.bytesperline), Int(fmt.fmt.pix.width) * 2, "YUYV is 2 bytes a pixel")

        // An unplugged device answers ENODEV, as the kernel does after a USB disconnect.
        device.unplug()
        XCTAssertEqual(withUnsafeMutableBytes(of: &cap) { system.ioctl(fd, DL_VIDIOC_QUERYCAP, $0.baseAddress!) }, -1)
        XCTAssertEqual(system.errno, ENODEV)
        XCTAssertEqual(system.close(fd), 0)
        XCTAssertEqual(system.openDescriptorCount, 0)
    }
}
