import XCTest
import Foundation
@testable import Capture
import CaptureTesting
import DepthKit

final class RecorderTests: XCTestCase {
    func testRecordsSyntheticFramesThatTUMSequenceReadsBack() throws {
        let out = try makeTemporaryDirectory(self) + "/rec"
        let summary = try record(source: SyntheticSource(width: 64, height: 48), frames: 3, to: out)
        XCTAssertEqual(summary.framesWritten, 3)
        XCTAssertEqual(summary.framesWithoutDepth, 0)
        for f in ["rgb.txt", "depth.txt", "associations.txt"] {
            XCTAssertTrue(FileManager.default.fileExists(atPath: out + "/" + f), f)
        }
        // The source's own depth units (the synthetic scene's 1000 per meter), as `convert` writes them.
        XCTAssertTrue(FileManager.default.fileExists(atPath: out + "/calibration.json"))
        let seq = try TUMSequence(directory: out, depthScale: 1000)
        XCTAssertEqual(seq.count, 3)
        for i in 0..<3 {
            let t = Double(i) / 30
            let ref = SyntheticScene().render(width: 64, height: 48, time: t)
            let back = try seq.loadFrame(at: i)
            XCTAssertEqual(back.timestamp, t, accuracy: 1e-6)
            XCTAssertEqual(back.color.packedBytes(), ref.color.packedBytes(), "frame \(i) color")
            let d = back.depth.depthFloat32(), r = ref.depth.depthFloat32()
            var checked = 0
            for y in 0..<48 {
                for x in 0..<64 {
                    let a = d.sample(x: x, y: y), b = r.sample(x: x, y: y)
                    XCTAssertEqual(isValidDepth(a), isValidDepth(b), "frame \(i) (\(x),\(y))")
                    if isValidDepth(b) { XCTAssertEqual(a, b, accuracy: 0.5 / 1000 + 1e-6); checked += 1 }
                }
            }
            XCTAssertGreaterThan(checked, 64 * 48 / 2)
        }
    }

    func testRecordingATUMSourceCopiesItAndStopsAtTheEnd() throws {
        let src = try writeTUMFolder(self, timestamps: [1.0, 1.5, 2.0])
        let out = try makeTemporaryDirectory(self) + "/copy"
        let summary = try record(source: TUMSource(directory: src), frames: 10, to: out)
        XCTAssertEqual(summary.framesWritten, 3)
        let seq = try TUMSequence(directory: out)
        XCTAssertEqual(seq.entries.map(\.timestamp), [1.0, 1.5, 2.0])
        XCTAssertEqual(try seq.loadFrame(at: 2).color.rgba(x: 5, y: 5).0, 20)
    }

    func testRecordingALiveCameraWithoutDepth() throws {
        let system = ScriptedV4L2System()
        let cam = system.addDevice(path: "/dev/video0", formats: [.init(.grey, sizes: [(4, 2)])])
        cam.frameProvider = { n in .init(payload: [UInt8](repeating: UInt8(n * 10), count: 8), timestamp: 7 + Double(n)) }
        let out = try makeTemporaryDirectory(self) + "/live"
        let summary = try TUMRecorder.record(source: V4L2Source(colorPath: "/dev/video0", system: system,
                                                                colorRequest: .color(width: 4, height: 2)),
                                             frames: 2, to: out)
        XCTAssertEqual(summary.framesWritten, 2)
        XCTAssertEqual(summary.framesWithoutDepth, 2)
        let seq = try TUMSequence(directory: out)
        // Color-only frames carry all-invalid depth, which DepthIO refuses to load as a pair;
        // the color image itself reads back.
        XCTAssertEqual(try ImageIO.readColor(seq.entries[1].colorPath).rgba(x: 0, y: 0).0, 10)
        XCTAssertEqual(system.openDescriptorCount, 0)
    }
}
