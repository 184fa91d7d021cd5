import XCTest
import Foundation
@testable import DepthKit

final class TUMSequenceTests: XCTestCase {
    /// Writes a depth PNG whose every sample is `meters` at TUM's 5000 units per meter.
    private func writeDepth(_ path: String, meters: Float) throws {
        let b = PixelBuffer(width: 4, height: 3, format: .gray16(depthScale: 0))
        for y in 0..<3 { for x in 0..<4 { b.row(y, as: UInt16.self)[x] = UInt16(meters * 5000) } }
        try ImageIO.write(b, to: path)
    }

    private func makeFolder(_ dir: TempDir) throws {
        try FileManager.default.createDirectory(atPath: dir.file("rgb"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: dir.file("depth"), withIntermediateDirectories: true)
        for (i, t) in ["1.000", "1.100", "1.200"].enumerated() {
            try ImageIO.write(makeBuffer(8, 6, .rgb8, seed: i), to: dir.file("rgb/\(t).png"))
        }
        // 1.000 ↔ 1.010 (10 ms), 1.100 ↔ 1.115 (15 ms), 1.200 has nothing within 20 ms (1.230 is 30 ms away).
        for (t, m) in [("1.010", Float(1)), ("1.115", 2), ("1.230", 3)] { try writeDepth(dir.file("depth/\(t).png"), meters: m) }
        _ = dir.write("rgb.txt", Array("# color images\n# timestamp filename\n1.000 rgb/1.000.png\n1.100 rgb/1.100.png\n\n1.200 rgb/1.200.png\n".utf8))
        _ = dir.write("depth.txt", Array("# depth maps\n1.010 depth/1.010.png\n1.230 depth/1.230.png\n1.115 depth/1.115.png\n".utf8))
    }

    func testAssociatesNearestDepthWithinTwentyMilliseconds() throws {
        let dir = TempDir()
        try makeFolder(dir)
        let seq = try TUMSequence(directory: dir.path)
        XCTAssertEqual(seq.entries.map(\.timestamp), [1.0, 1.1], "1.200 has no depth within 0.02 s and is dropped")
        XCTAssertEqual(seq.entries.map(\.depthTimestamp), [1.01, 1.115])
        XCTAssertEqual(seq.entries[0].colorPath, dir.path + "/rgb/1.000.png")
        XCTAssertTrue(seq.entries[1].depthPath.hasSuffix("depth/1.115.png"))
        let f = try seq.loadFrame(at: 1)
        XCTAssertEqual(f.depth.map.sample(x: 0, y: 0), 2, "TUM depth is 5000 units per meter")
        XCTAssertEqual(f.color.format, .rgba8)
        XCTAssertEqual(f.timestamp, 1.1)
        XCTAssertThrowsError(try seq.loadFrame(at: 2))
    }

    func testAssociationsFileWins() throws {
        let dir = TempDir()
        try makeFolder(dir)
        _ = dir.write("associations.txt", Array("1.200 rgb/1.200.png 1.230 depth/1.230.png\n".utf8))
        let seq = try TUMSequence(directory: dir.path)
        XCTAssertEqual(seq.count, 1)
        XCTAssertEqual(try seq.loadFrame(at: 0).depth.map.sample(x: 3, y: 2), 3)
    }

    func testBadFolders() throws {
        let dir = TempDir()
        XCTAssertFileError(try TUMSequence(directory: dir.file("nope")), "no such directory")
        XCTAssertFileError(try TUMSequence(directory: dir.path), path: dir.path + "/rgb.txt", "no such file")
        _ = dir.write("rgb.txt", Array("1.0 rgb/a.png\n".utf8))
        _ = dir.write("depth.txt", Array("5.0 depth/a.png\n".utf8))
        XCTAssertFileError(try TUMSequence(directory: dir.path), "no color frame has a depth frame within 0.02 s")
        _ = dir.write("depth.txt", Array("abc depth/a.png\n".utf8))
        XCTAssertFileError(try TUMSequence(directory: dir.path), "line 1: bad timestamp")
    }

    func testWriterRoundTrip() throws {
        let dir = TempDir()
        let out = dir.file("rec")
        let w = try TUMWriter(directory: out)
        var frames: [RGBDFrame] = []
        for i in 0..<3 {
            let color = makeBuffer(4, 2, .rgba8, seed: i)
            for y in 0..<2 { for x in 0..<4 { color.row(y, as: UInt8.self)[4 * x + 3] = 255 } }
            let depth = floatMap(4, 2) { x, y in x == 0 && y == 0 ? 0 : Float(i + 1) * 0.5 + Float(x) * 0.0002 }
            let f = RGBDFrame(color: color, depth: DepthData(map: depth), timestamp: 10 + Double(i) / 30)
            frames.append(f)
            try w.append(f)
        }
        try w.finish()
        let seq = try TUMSequence(directory: out)
        XCTAssertEqual(seq.count, 3)
        for i in 0..<3 {
            let f = try seq.loadFrame(at: i)
            XCTAssertEqual(f.timestamp, frames[i].timestamp, accuracy: 1e-6)
            XCTAssertEqual(f.color.packedBytes(), frames[i].color.packedBytes())
            XCTAssertEqual(f.depth.map.sample(x: 0, y: 0), 0)
            for x in 1..<4 { XCTAssertEqual(f.depth.map.sample(x: x, y: 1), frames[i].depth.map.sample(x: x, y: 1), accuracy: 1e-4) }
        }
        // Without associations.txt the timestamps pair up by themselves.
        try FileManager.default.removeItem(atPath: out + "/associations.txt")
        XCTAssertEqual(try TUMSequence(directory: out).count, 3)
    }
}
