import Capture
import DepthKit
import Foundation
import TestSupport
import XCTest
@testable import Viewer

/// A PLY the panel asks for is read on `PLYInput`'s worker: `finishLoad` hands it over once it is
/// read, and a load replaced by a newer one before it was handed over leaves no trace (no notice,
/// its outcome dropped), while a failed load is a notice.
final class PLYInputLoadTests: XCTestCase {
    /// The test's own folder, removed with it.
    let folder = TemporaryFolder("PLYInputLoadTests")

    /// Calls `finishLoad` until it hands something over or the load ended without (20 s at most).
    func finish(_ input: PLYInput, log: ViewerLog) -> (PLYContents, SourceSpec, path: String)? {
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            if let done = input.finishLoad() { return done }
            if !log.notices.isEmpty { return nil }
            Thread.sleep(forTimeInterval: 0.005)
        }
        return nil
    }

    func write(_ name: String, points: Int) throws -> String {
        let path = folder.file(name)
        let positions = (0..<points).map { SIMD3<Float>(Float($0), 0, 2) }
        try PLYWriter.write(PointCloud(positions: positions, colors: positions.map { _ in SIMD3(255, 0, 0) }), to: path)
        return path
    }

    func testALoadIsHandedOverOnce() throws {
        let path = try write("a.ply", points: 3)
        let log = ViewerLog(logsUI: false)
        let input = PLYInput(log: log, pointList: nil, sequence: nil)
        input.load(.ply(path: path), path: path)
        let done = try XCTUnwrap(finish(input, log: log))
        XCTAssertEqual(done.0.cloud.positions.count, 3)
        XCTAssertEqual(done.path, path)
        XCTAssertNil(input.finishLoad(), "once")
        XCTAssertTrue(log.notices.isEmpty)
    }

    func testAReplacedLoadLeavesNoTraceAndAFailedOneIsANotice() throws {
        let good = try write("b.ply", points: 5)
        let missing = folder.file("missing.ply")
        let log = ViewerLog(logsUI: false)
        let input = PLYInput(log: log, pointList: nil, sequence: nil)
        input.load(.ply(path: missing), path: missing)
        input.load(.ply(path: good), path: good)
        let done = try XCTUnwrap(finish(input, log: log))
        XCTAssertEqual(done.0.cloud.positions.count, 5)
        XCTAssertEqual(done.path, good)
        XCTAssertTrue(log.notices.isEmpty, "the replaced load says nothing: \(log.notices.map(\.text))")

        input.load(.ply(path: missing), path: missing)
        XCTAssertNil(finish(input, log: log))
        XCTAssertEqual(log.notices.count, 1)
        XCTAssertTrue(log.notices.first?.text.hasPrefix("cannot open ") ?? false, "\(log.notices.map(\.text))")
    }
}
