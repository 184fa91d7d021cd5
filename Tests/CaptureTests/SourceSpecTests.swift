import XCTest
@testable import Capture
import DepthKit

final class SourceSpecTests: XCTestCase {
    func testValidStrings() throws {
        XCTAssertEqual(try SourceSpec(parsing: "synthetic"), .synthetic)
        XCTAssertEqual(try SourceSpec(parsing: "tum:/data/fr1_desk"), .tum(directory: "/data/fr1_desk"))
        XCTAssertEqual(try SourceSpec(parsing: "pair:a.png,b.png"), .pair(color: "a.png", depth: "b.png"))
        XCTAssertEqual(try SourceSpec(parsing: "v4l2:/dev/video0"), .v4l2(color: "/dev/video0", depth: nil))
        XCTAssertEqual(try SourceSpec(parsing: "v4l2:/dev/video0,depth=/dev/video2"),
                       .v4l2(color: "/dev/video0", depth: "/dev/video2"))
        XCTAssertEqual(try SourceSpec(parsing: "v4l2:/dev/video0,depth=/dev/video2").description,
                       "v4l2:/dev/video0,depth=/dev/video2")
    }

    func testMalformedStrings() {
        let cases: [(String, String)] = [
            ("", "empty"),
            ("webcam", "unknown source 'webcam'"),
            ("kinect:/dev/video0", "unknown source kind 'kinect'"),
            ("tum:", "missing directory"),
            ("pair:a.png", "expected pair:COLOR,DEPTH"),
            ("pair:,b.png", "expected pair:COLOR,DEPTH"),
            ("v4l2:", "missing device"),
            ("v4l2:video0", "not a path under /dev/"),
            ("v4l2:/dev/video0,fps=30", "unknown option 'fps=30'"),
            ("v4l2:/dev/video0,depth=video2", "depth device 'video2'"),
            ("v4l2:/dev/video0,depth=/dev/video0", "same device"),
            ("synthetic:640x480", "takes no argument"),
        ]
        for (text, expected) in cases {
            XCTAssertThrowsError(try SourceSpec(parsing: text), text) { error in
                let s = "\(error)"
                XCTAssertTrue(s.hasPrefix("--source '\(text)': "), s)
                XCTAssertTrue(s.contains(expected), "\(text) → \(s)")
                XCTAssertFalse(s.contains("\n"))
            }
        }
    }

    func testMakesSourcesWithDepthScale() throws {
        XCTAssertTrue(try makeFrameSource("synthetic") is SyntheticSource)
        let tum = try XCTUnwrap(try makeFrameSource("tum:/x") as? TUMSource)
        XCTAssertEqual(tum.depthScale, 5000)
        XCTAssertEqual((try makeFrameSource("tum:/x", depthScale: 1000) as? TUMSource)?.depthScale, 1000)
        let system = ScriptedV4L2System()
        let v = try XCTUnwrap(try makeFrameSource("v4l2:/dev/video0,depth=/dev/video1", depthScale: 4000, system: system) as? V4L2Source)
        XCTAssertEqual(v.depth?.depthScale, 4000)
        XCTAssertEqual(v.color.depthScale, 4000)
        XCTAssertEqual(v.name, "v4l2:/dev/video0,depth=/dev/video1")
        XCTAssertThrowsError(try makeFrameSource("synthetic", depthScale: 0)) {
            XCTAssertEqual("\($0)", "--depth-scale must be a positive number, got 0.0")
        }
    }
}
