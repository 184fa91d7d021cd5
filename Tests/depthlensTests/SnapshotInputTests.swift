import XCTest
import Foundation
import DepthKit

/// The viewer snapshot's NAME.json as an input: `SnapshotMetadata` reads what `Snapshot.write`
/// writes, `process`/`export-ply --snapshot` equal the same files given by hand, `info` describes
/// it, and bad JSON is one line, exit 1, no output.
final class SnapshotInputTests: CLITestCase {
    /// NAME_filtered.png, NAME_color.png, NAME_depth.png (16-bit at `scale` units/m) and NAME.json,
    /// as the viewer's Snapshot.write lays them out (the JSON through the same encoder).
    @discardableResult
    func writeSnapshot(name: String = "snap", scale: Float = 1000, intrinsics: CameraIntrinsics? = nil,
                       files: [String]? = nil) throws -> (json: String, color: String, depth: String, meta: SnapshotMetadata) {
        let f = SyntheticScene().render(width: 64, height: 48, time: 0)
        let c = path(name + "_color.png"), d = path(name + "_depth.png")
        try ImageIO.write(f.color, to: path(name + "_filtered.png"))
        try ImageIO.write(f.color, to: c)
        let units = PixelBuffer(width: 64, height: 48, format: .gray16(depthScale: scale))
        let dm = f.depth.depthFloat32()
        for y in 0..<48 { for x in 0..<64 { units.setSample(x: x, y: y, (dm.sample(x: x, y: y) * scale).rounded()) } }
        try ImageIO.write(units, to: d)
        let meta = SnapshotMetadata(intrinsics: intrinsics ?? f.depth.intrinsics, depthScale: scale, mode: "portrait",
                                    timestamp: 12.25, frame: 3, source: "synthetic",
                                    files: files ?? [name + "_filtered.png", name + "_color.png", name + "_depth.png"])
        let json = path(name + ".json")
        try FileSupport.atomicWrite(try meta.encoded(), to: json)
        return (json, c, d, meta)
    }

    func testWrittenSnapshotReadsBack() throws {
        let s = try writeSnapshot()
        let back = try SnapshotMetadata.read(s.json)
        XCTAssertEqual(back, s.meta)
        XCTAssertEqual(back.colorFile, "snap_color.png")
        XCTAssertEqual(back.depthFile, "snap_depth.png")
        XCTAssertEqual(back.filteredFile, "snap_filtered.png")
        XCTAssertEqual(back.depth_units, "mm")
        // The keys exactly as the viewer has always written them.
        let text = String(decoding: try FileSupport.readAll(s.json), as: UTF8.self)
        for key in ["\"intrinsics\"", "\"fx\"", "\"cy\"", "\"width\"", "\"depth_scale\"", "\"depth_units\"", "\"mode\"",
                    "\"timestamp\"", "\"frame\"", "\"source\"", "\"files\""] {
            XCTAssertTrue(text.contains(key), "\(key) in \(text)")
        }
    }

    func testProcessSnapshotEqualsColorAndDepth() throws {
        let s = try writeSnapshot(scale: 5000)
        for filter in ["jet", "portrait", "depth"] {
            let a = path("a_\(filter).png"), b = path("b_\(filter).png")
            let r1 = try CLI.run(["process", "--snapshot", s.json, "--filter", filter, "--out", a])
            XCTAssertEqual(r1.status, 0, r1.stderr)
            let r2 = try CLI.run(["process", "--color", s.color, "--depth", s.depth, "--depth-scale", "5000",
                                  "--filter", filter, "--out", b])
            XCTAssertEqual(r2.status, 0, r2.stderr)
            XCTAssertEqual(try FileSupport.readAll(a), try FileSupport.readAll(b), filter)
        }
    }

    func testSnapshotIntrinsicsAreUsed() throws {
        let k = CameraIntrinsics(fx: 40, fy: 44, cx: 30, cy: 20, width: 64, height: 48)
        let s = try writeSnapshot(intrinsics: k)
        let a = path("a.ply"), b = path("b.ply"), c = path("c.ply")
        XCTAssertEqual(try CLI.run(["export-ply", "--snapshot", s.json, "--out", a]).status, 0)
        XCTAssertEqual(try CLI.run(["export-ply", "--color", s.color, "--depth", s.depth, "--intrinsics", "40,44,30,20", "--out", b]).status, 0)
        XCTAssertEqual(try CLI.run(["export-ply", "--color", s.color, "--depth", s.depth, "--out", c]).status, 0)
        XCTAssertEqual(try FileSupport.readAll(a), try FileSupport.readAll(b))
        XCTAssertNotEqual(try FileSupport.readAll(a), try FileSupport.readAll(c))
    }

    func testInfoDescribesSnapshot() throws {
        let s = try writeSnapshot()
        let r = try CLI.run(["info", s.json])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("depthlens snapshot, frame 3 of synthetic, mode portrait"), r.stdout)
        XCTAssertTrue(r.stdout.contains("depth 64x48"), r.stdout)
        XCTAssertTrue(r.stdout.contains("snap_depth.png"), r.stdout)
    }

    /// One line naming `mentioning`, exit status 1, no output file.
    func assertRejected(_ json: String, mentioning: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let out = path("out.png")
        let args = ["process", "--snapshot", json, "--filter", "jet", "--out", out]
        try assertBadInput(args, mentioning: mentioning, noFile: out, file: file, line: line)
        XCTAssertEqual(try CLI.run(args).status, 1, file: file, line: line)
        let info = try CLI.run(["info", json])
        XCTAssertEqual(info.status, 1, file: file, line: line)
        XCTAssertEqual(info.stderrLines.count, 1, info.stderr, file: file, line: line)
    }

    /// The written snapshot's JSON with `edit` applied to its text.
    func editedJSON(_ edit: (String) -> String) throws -> String {
        let s = try writeSnapshot()
        let text = String(decoding: try FileSupport.readAll(s.json), as: UTF8.self)
        let edited = edit(text)
        XCTAssertNotEqual(edited, text, "the edit changed nothing")
        let p = path("bad.json")
        try FileSupport.atomicWrite(Array(edited.utf8), to: p)
        return p
    }

    func testNotJSON() throws {
        try writeSnapshot()
        try FileSupport.atomicWrite(Array("\u{89}PNG not json {".utf8), to: path("bad.json"))
        try assertRejected(path("bad.json"), mentioning: "bad.json: not snapshot JSON: not valid JSON")
        try FileSupport.atomicWrite([], to: path("empty.json"))
        try assertRejected(path("empty.json"), mentioning: "empty.json")
        try FileSupport.atomicWrite(Array("[1, 2]".utf8), to: path("list.json"))
        try assertRejected(path("list.json"), mentioning: "list.json")
    }

    func testMissingFile() throws {
        try assertRejected(path("nope.json"), mentioning: "nope.json")
    }

    func testMissingKeys() throws {
        try assertRejected(try editedJSON { $0.replacingOccurrences(of: "\"fx\"", with: "\"f\"") },
                           mentioning: "missing key 'intrinsics.fx'")
        try assertRejected(try editedJSON { $0.replacingOccurrences(of: "\"depth_scale\"", with: "\"scale\"") },
                           mentioning: "missing key 'depth_scale'")
    }

    func testBadNumbers() throws {
        let cases: [(String, String, String)] = [
            ("\"fx\" : 52.5", "\"fx\" : 0", "fx and fy must be positive"),
            ("\"fy\" : 52.5", "\"fy\" : -3", "fx and fy must be positive"),
            ("\"fx\" : 52.5", "\"fx\" : 1e400", "a number that does not fit its field"),
            ("\"fx\" : 52.5", "\"fx\" : \"52\"", "'intrinsics.fx' is not a number"),
            ("\"width\" : 64", "\"width\" : 0", "width and height must be"),
            ("\"width\" : 64", "\"width\" : 6.5", "a number that does not fit its field"),
            ("\"depth_scale\" : 1000", "\"depth_scale\" : -1000", "depth_scale must be a positive number"),
            ("\"depth_scale\" : 1000", "\"depth_scale\" : null", "'depth_scale' is null"),
        ]
        for (from, to, message) in cases {
            try assertRejected(try editedJSON { $0.replacingOccurrences(of: from, with: to) }, mentioning: "bad.json: ")
            let r = try CLI.run(["info", path("bad.json")])
            XCTAssertTrue(r.stderr.contains(message), "\(to): \(r.stderr)")
        }
    }

    func testFileNamesStayInTheFolder() throws {
        try assertRejected(try editedJSON { $0.replacingOccurrences(of: "\"snap_color.png\"", with: "\"..\\/etc\\/passwd\"") },
                           mentioning: "plain file names")
        try assertRejected(try editedJSON { $0.replacingOccurrences(of: "\"snap_color.png\"", with: "\"\"") },
                           mentioning: "plain file names")
    }

    func testMissingReferencedFile() throws {
        let s = try writeSnapshot()
        try FileManager.default.removeItem(atPath: s.depth)
        try assertRejected(s.json, mentioning: "snap_depth.png")
    }

    func testIntrinsicsForAnotherSize() throws {
        let s = try writeSnapshot(intrinsics: CameraIntrinsics(fx: 40, fy: 40, cx: 30, cy: 20, width: 640, height: 480))
        let out = path("o.png")
        try assertBadInput(["process", "--snapshot", s.json, "--filter", "jet", "--out", out],
                           mentioning: "intrinsics are for 640x480 but snap_depth.png is 64x48", noFile: out)
    }

    func testSnapshotExcludesFileOptions() throws {
        let s = try writeSnapshot()
        let out = path("o.png")
        try assertBadInput(["process", "--snapshot", s.json, "--color", s.color, "--filter", "jet", "--out", out],
                           mentioning: "drop --color", noFile: out)
    }
}
