import XCTest
import Foundation
import TestSupport

/// `photo:FILE` through the commands: `info --json` (kind, streams, both cameras, accuracy),
/// `export-ply` at the photo's geometry with the relative-depth warning, and bad photos as one
/// line. The decoding itself is checked against pillow-heif in CaptureTests/PhotoSourceTests.
final class PhotoCLITests: CLITestCase {
    private let heic = Repo.fixture("iphone-portrait-pug.heic")

    func testInfoJSONDescribesTheSharedPhoto() throws {
        let r = try CLI.run(["info", "--json", "photo:\(heic)"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let o = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(o["kind"] as? String, "photo")
        XCTAssertEqual(o["accuracy"] as? String, "relative")
        let streams = try XCTUnwrap(o["streams"] as? [[String: Any]])
        XCTAssertEqual(streams.map { $0["name"] as? String }, ["color", "depth"])
        XCTAssertEqual(streams[1]["width"] as? Int, 768)
        let k = try XCTUnwrap(o["intrinsics"] as? [String: [String: Any]])
        XCTAssertEqual(k["color"]?["width"] as? Int, 4032)
        XCTAssertEqual(try XCTUnwrap(k["color"]?["fx"] as? Double), 3032.594, accuracy: 1e-3)
        XCTAssertEqual(try XCTUnwrap(k["depth"]?["fx"] as? Double), 3032.594 * 768 / 4032, accuracy: 1e-3)
        let tags = try XCTUnwrap(o["tags"] as? [String: String])
        XCTAssertEqual(tags["container"], "HEIF (iPhone depth)")
        XCTAssertNotNil(tags["lens_LensDistortionCoefficients"])
        let text = try CLI.run(["info", "photo:\(heic)"])
        XCTAssertTrue(text.stdout.contains("depth accuracy: relative"), text.stdout)
    }

    func testExportPLYWarnsThatTheDepthIsRelative() throws {
        let out = path("pug.ply")
        let r = try CLI.run(["export-ply", "--source", "photo:\(heic)", "--out", out])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("relative (not metric)"), r.stderr)
        let header = String(decoding: try Data(contentsOf: URL(fileURLWithPath: out)).prefix(200), as: UTF8.self)
        XCTAssertTrue(header.contains("element vertex "), header)
    }

    func testBadPhotosAreOneLine() throws {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: heic))
        try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: path("half.heic")))
        try assertBadInput(["export-ply", "--source", "photo:\(path("half.heic"))", "--out", path("o.ply")],
                           mentioning: "half.heic", noFile: path("o.ply"))
        try Data("not a photo".utf8).write(to: URL(fileURLWithPath: path("x.jpg")))
        try assertBadInput(["info", "photo:\(path("x.jpg"))"], mentioning: "x.jpg")
    }
}
