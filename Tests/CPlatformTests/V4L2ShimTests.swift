import XCTest
import CPlatform

/// The function-like macros CPlatform turns into constants for Swift.
final class V4L2ShimTests: XCTestCase {
    func testVIDIOCNumbersAreExported() {
        XCTAssertNotEqual(DL_VIDIOC_QUERYCAP, 0)
        XCTAssertNotEqual(DL_VIDIOC_DQBUF, DL_VIDIOC_QBUF)
        XCTAssertEqual(DL_V4L2_PIX_FMT_Z16, 0x2036315A) // 'Z16 '
    }
}
