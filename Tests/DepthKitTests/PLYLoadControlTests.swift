@testable import DepthKit
import Foundation
import XCTest

/// A PLY load under a `PLYLoadControl`: progress reaches the control, and a cancel from the
/// progress of the first chunk ends the load with "FILE: load cancelled" before the file's end.
final class PLYLoadControlTests: XCTestCase {
    private func file(points: Int) throws -> String {
        let path = NSTemporaryDirectory() + "plyload-\(UUID().uuidString).ply"
        addTeardownBlock { try? FileManager.default.removeItem(atPath: path) }
        let cloud = PointCloud(positions: (0..<points).map { SIMD3(Float($0), 0, 1) },
                               colors: Array(repeating: SIMD3(1, 2, 3), count: points))
        try PLYWriter.write(cloud, to: path)
        return path
    }

    func testProgressAndAWholeLoad() throws {
        let path = try file(points: 1000)
        let control = PLYLoadControl()
        XCTAssertEqual(control.progress.total, 0)
        let c = try PLYReader.load(path, control: control)
        XCTAssertEqual(c.cloud.count, 1000)
        let size = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        XCTAssertEqual(control.progress.done, size)
        XCTAssertEqual(control.progress.total, size)
    }

    func testCancelStopsAtTheNextChunk() throws {
        let path = try file(points: 10_000)   // 150 kB: many 4 kB chunks
        let control = PLYLoadControl()
        var reports: [Int] = []
        XCTAssertThrowsError(try PLYReader.load(path, chunkSize: 4096, progress: { done, _ in
            reports.append(done)
            control.cancel()
        }, isCancelled: { control.isCancelled })) {
            XCTAssertEqual("\($0)", "\(path): load cancelled")
        }
        XCTAssertEqual(reports, [4096], "one chunk read, then it stopped")

        let before = PLYLoadControl()
        before.cancel()
        XCTAssertThrowsError(try PLYReader.load(path, control: before)) { XCTAssertTrue("\($0)".hasSuffix("load cancelled")) }
    }
}
