import XCTest
@testable import Capture
import CaptureTesting
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
            ("synthetic:640", "expected synthetic:COLORWxH[,DEPTHWxH]"),
            ("synthetic:0x480", "expected synthetic:COLORWxH[,DEPTHWxH]"),
            ("synthetic:640x480,320x240,1x1", "expected synthetic:COLORWxH[,DEPTHWxH]"),
            ("ply:", "missing file"),
            ("snapshot:", "missing NAME.json"),
            ("scan:", "missing directory"),
            ("scan:/data/room,min-confidence=5", "expected min-confidence=0, 1 or 2"),
            ("scan:/data/room,fps=5", "unknown option 'fps=5'"),
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

    /// Every kind in the table parses from its own syntax and prints back the same string; the
    /// usage text lists every kind; adding a kind without a table row fails here.
    func testEveryKindInTheTableParsesAndPrintsBack() throws {
        let examples: [String: String] = [
            "synthetic": "synthetic:1280x720,640x480", "tum": "tum:/data/fr1", "pair": "pair:c.png,d.png",
            "v4l2": "v4l2:/dev/video0,depth=/dev/video2", "snapshot": "snapshot:shot.json", "ply": "ply:cloud.ply",
            "bag": "bag:rec.bag", "mkv": "mkv:rec.mkv", "photo": "photo:IMG_0001.HEIC",
            "dds": "dds:/camera/color/image_raw,depth=/camera/depth/image_rect_raw,domain=3",
            "ros2": "ros2:rec,a.mcap,depth=/cam/depth/image_raw,color=/cam/color/image_raw",
            "scan": "scan:/data/room,min-confidence=2",
        ]
        XCTAssertEqual(Set(SourceSpec.kinds.map(\.name)), Set(examples.keys), "a kind without an example here")
        for kind in SourceSpec.kinds {
            let text = try XCTUnwrap(examples[kind.name])
            let spec = try SourceSpec(parsing: text)
            XCTAssertEqual(spec.kind.name, kind.name)
            XCTAssertEqual(spec.description, text)
            XCTAssertTrue(SourceSpec.usage.contains(kind.syntax))
            XCTAssertTrue(SourceSpec.markdownTable.contains("| `\(kind.syntax)` |"))
        }
        XCTAssertEqual(try SourceSpec(parsing: "synthetic:320x240"), .synthetic(color: PixelSize(320, 240), depth: PixelSize(320, 240)))
        XCTAssertEqual(try SourceSpec(parsing: "synthetic:640x480"), .synthetic)
        XCTAssertEqual(SourceSpec.synthetic.description, "synthetic")
    }

    func testSizedSyntheticSourcesHaveTheirSizes() throws {
        let same = try SourceSpec(parsing: "synthetic:320x240").makeSource()
        XCTAssertEqual(same.name, "synthetic:320x240")
        let sized = try SourceSpec(parsing: "synthetic:320x240,160x120").makeSource()
        XCTAssertEqual(sized.name, "synthetic:320x240,160x120")
        let f = try FrameReader.frame(0, of: sized)
        XCTAssertEqual(f.color.width, 320)
        XCTAssertEqual(f.depth?.map.width, 160)
        let cal = try XCTUnwrap(sized.calibration)
        XCTAssertEqual(cal.depth.intrinsics.width, 160)
        XCTAssertEqual(cal.color.intrinsics.width, 320)
        XCTAssertFalse(cal.needsAlignment, "the same scene camera at two sizes needs no alignment")
    }

    func testPLYHasNoFrames() {
        XCTAssertThrowsError(try SourceSpec(parsing: "ply:cloud.ply").makeSource()) { XCTAssertTrue("\($0)".contains("no color or depth frames")) }
    }

    func testMakesSourcesWithDepthScale() throws {
        XCTAssertTrue(try SourceSpec(parsing: "synthetic").makeSource() is SyntheticSource)
        let tum = try XCTUnwrap(try SourceSpec(parsing: "tum:/x").makeSource() as? TUMSource)
        XCTAssertNil(tum.requestedDepthScale)
        XCTAssertEqual(tum.depthScale, 5000)
        XCTAssertEqual((try SourceSpec(parsing: "tum:/x").makeSource(depthScale: 1000) as? TUMSource)?.depthScale, 1000)
        let system = ScriptedV4L2System()
        let v = try XCTUnwrap(try SourceSpec(parsing: "v4l2:/dev/video0,depth=/dev/video1").makeSource(depthScale: 4000, system: system) as? V4L2Source)
        XCTAssertEqual(v.depth?.depthScale, 4000)
        XCTAssertEqual(v.color.depthScale, 4000)
        XCTAssertEqual(v.name, "v4l2:/dev/video0,depth=/dev/video1")
        XCTAssertThrowsError(try SourceSpec(parsing: "synthetic").makeSource(depthScale: 0)) {
            XCTAssertEqual("\($0)", "--depth-scale must be a positive number, got 0.0")
        }
    }
}
