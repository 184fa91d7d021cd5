import XCTest
import Glibc
@testable import Capture
import CaptureTesting
import DepthKit

final class SourcesTests: XCTestCase {
    func testSyntheticSourceDefaultsAndTiming() throws {
        let s = SyntheticSource()
        XCTAssertEqual(s.intrinsics, SyntheticScene.intrinsics(width: 640, height: 480))
        XCTAssertThrowsError(try s.nextFrame(now: 0))
        try s.start()
        let f0 = try XCTUnwrap(try s.nextFrame(now: 100))
        XCTAssertEqual(f0.color.width, 640)
        XCTAssertEqual(f0.color.height, 480)
        XCTAssertEqual(f0.color.format, .rgba8)
        XCTAssertEqual(f0.depth?.map.format, .depthFloat32)
        XCTAssertNil(try s.nextFrame(now: 100.02))
        let f1 = try XCTUnwrap(try s.nextFrame(now: 100 + 1.0 / 30 + 1e-6))
        XCTAssertEqual(f1.index, 1)
        XCTAssertEqual(f1.timestamp, 1.0 / 30, accuracy: 1e-9)
        // Same pixels as the scene rendered at that time.
        let ref = SyntheticScene().render(width: 640, height: 480, time: 1.0 / 30)
        XCTAssertEqual(f1.color.packedBytes(), ref.color.packedBytes())
    }

    func testPairSourceDeliversOnceAndNamesBadFiles() throws {
        let dir = try writeTUMFolder(self, timestamps: [3.0])
        let seq = try TUMSequence(directory: dir)
        let p = PairSource(color: seq.entries[0].colorPath, depth: seq.entries[0].depthPath, depthScale: 5000)
        try p.start()
        let f = try XCTUnwrap(try p.nextFrame(now: 0))
        XCTAssertEqual(f.color.rgba(x: 0, y: 0).2, 200)
        XCTAssertEqual(try XCTUnwrap(f.depth).map.sample(x: 0, y: 0), 1, accuracy: 1e-3)
        XCTAssertNil(try p.nextFrame(now: 1))
        XCTAssertEqual(p.intrinsics, .default(width: 8, height: 6))

        let bad = PairSource(color: dir + "/missing.png", depth: seq.entries[0].depthPath)
        XCTAssertThrowsError(try bad.start()) { error in
            XCTAssertTrue(error is CaptureError)
            XCTAssertTrue("\(error)".hasPrefix(dir + "/missing.png: "), "\(error)")
        }
    }

    func testV4L2SourcePairsDepthAndRecoversFromUnplug() throws {
        let system = ScriptedV4L2System()
        let color = system.addDevice(path: "/dev/video0", formats: [.init(.yuyv, sizes: [(4, 2)], frameRates: [30])])
        let depth = system.addDevice(path: "/dev/video2", formats: [.init(.z16, sizes: [(4, 2)], frameRates: [30])])
        color.frameProvider = { n in .init(payload: [UInt8](repeating: 128, count: 16), timestamp: 5 + Double(n) / 30) }
        // Depth frame 1 comes 25 ms late (more than half an interval): color frame 1 is color-only.
        depth.frameProvider = { n in
            .init(payload: [UInt8](repeating: 0, count: 15) + [0x10], timestamp: 5 + Double(n) / 30 + (n == 1 ? 0.025 : 0.002))
        }
        color.unplugAtFrame = 3
        let s = V4L2Source(colorPath: "/dev/video0", depthPath: "/dev/video2", system: system,
                           colorRequest: .color(width: 4, height: 2), depthRequest: .depth(width: 4, height: 2))
        try s.start()
        XCTAssertEqual(s.intrinsics, .default(width: 4, height: 2))
        depth.readyFrames = 1
        let f0 = try XCTUnwrap(try s.nextFrame(now: 0))
        XCTAssertNotNil(f0.depth)
        XCTAssertEqual(f0.depth?.map.sample(x: 3, y: 1) ?? 0, Float(0x1000) / 1000, accuracy: 1e-4)
        depth.readyFrames = 1
        let f1 = try XCTUnwrap(try s.nextFrame(now: 0.033))
        XCTAssertNil(f1.depth)
        XCTAssertEqual(f1.index, 1)
        _ = try s.nextFrame(now: 0.066)
        XCTAssertThrowsError(try s.nextFrame(now: 0.1)) { error in
            XCTAssertEqual("\(error)", "/dev/video0: camera disconnected (ENODEV)")
        }
        XCTAssertFalse(s.isConnected)
        XCTAssertEqual(system.openDescriptorCount, 0)
        XCTAssertNil(try s.nextFrame(now: 0.5))      // still away: no throw, no frame
        color.replug()
        XCTAssertNil(try s.nextFrame(now: 0.6))      // waits reconnectInterval (1 s) between attempts
        let back = try XCTUnwrap(try s.nextFrame(now: 1.2))
        XCTAssertTrue(s.isConnected)
        XCTAssertEqual(back.index, 3)
        s.stop()
        XCTAssertEqual(system.openDescriptorCount, 0)
        XCTAssertEqual(system.mappedBufferCount, 0)
    }
}
