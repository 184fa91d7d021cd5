import DepthKit
import Foundation
import XCTest
import TestSupport
import CVulkan
@testable import Viewer

/// The window's pure parts: letterbox mapping, the key table, snapshot files, stats.
final class ViewerPartsTests: XCTestCase {
    func testLetterboxKeepsAspectAndMapsBack() {
        let wide = Letterbox(imageWidth: 640, imageHeight: 480, windowWidth: 1280, windowHeight: 720)
        XCTAssertEqual(wide.rect, .init(x: 160, y: 0, width: 960, height: 720))
        let tall = Letterbox(imageWidth: 640, imageHeight: 480, windowWidth: 640, windowHeight: 800)
        XCTAssertEqual(tall.rect, .init(x: 0, y: 160, width: 640, height: 480))
        XCTAssertNil(wide.imagePixel(windowX: 100, windowY: 300), "on the bar")
        XCTAssertNil(wide.imagePixel(windowX: 1121, windowY: 300), "on the right bar")
        XCTAssertEqual(wide.imagePixel(windowX: 160, windowY: 0)?.x, 0)
        XCTAssertEqual(wide.imagePixel(windowX: 1119.9, windowY: 719.9)?.y, 479)
        for (u, v) in [(0, 0), (639, 479), (166, 345), (320, 240)] {
            let p = wide.windowPoint(imageX: u, imageY: v)
            let back = wide.imagePixel(windowX: Double(p.x), windowY: Double(p.y))
            XCTAssertEqual(back?.x, u); XCTAssertEqual(back?.y, v)
        }
        let zero = Letterbox(imageWidth: 640, imageHeight: 480, windowWidth: 0, windowHeight: 0)
        XCTAssertNil(zero.imagePixel(windowX: 0, windowY: 0), "a minimized window maps nothing")
        let q = Letterbox.rescale((1279, 719), from: (1280, 720), to: (640, 480))
        XCTAssertEqual(q.x, 639); XCTAssertEqual(q.y, 479)
    }

    func testKeyTableDrivesInputOverlayAndREADME() throws {
        // Every mode with a number key is reachable by it, in PreviewMode.all order.
        for (i, m) in PreviewMode.all.enumerated() where m.numberKey != nil {
            XCTAssertEqual(KeyBindings.action(key: 48 + Int32(i + 1), shift: false, in3D: false), .mode(i), m.name)
        }
        // No key is bound twice for the same view.
        var seen = Set<String>()
        for b in KeyBindings.all {
            for k in b.keys { XCTAssertTrue(seen.insert("\(k)-\(b.shift)-\(b.ctrl)").inserted, "key \(k) bound twice") }
        }
        XCTAssertEqual(KeyBindings.action(key: 32, shift: false, in3D: false), .togglePause)  // space
        XCTAssertEqual(KeyBindings.action(key: 256, shift: false, in3D: false), .quit)        // Esc
        XCTAssertEqual(KeyBindings.action(key: 47, shift: true, in3D: false), .toggleHelp)    // ?
        XCTAssertNil(KeyBindings.action(key: 47, shift: false, in3D: false), "/ alone is not ?")
        XCTAssertEqual(KeyBindings.action(key: 262, shift: false, in3D: false), .stepForward)  // →
        XCTAssertEqual(KeyBindings.action(key: 262, shift: false, in3D: true), .orbitRight)
        XCTAssertEqual(KeyBindings.action(key: 82, shift: false, ctrl: true, in3D: false), .toggleRecord)  // Ctrl+R
        XCTAssertNil(KeyBindings.action(key: 82, shift: false, in3D: false), "R alone does not record")
        XCTAssertEqual(KeyBindings.action(key: 83, shift: false, ctrl: true, in3D: false), .snapshot, "Ctrl+S is still S")
        XCTAssertEqual(KeyBindings.overlayLines.count, KeyBindings.all.count + KeyBindings.mouse.count)
        for required in ["S", "Tab", "F", "V", "C", "B", "F1 / H", "?", "Esc / Q", "Space"] {
            XCTAssertTrue(KeyBindings.all.contains { $0.label == required }, required)
        }
        // docs/VIEWER.md's key table is exactly this table, row for row.
        XCTAssertEqual(DocSection.text("keys", in: "docs/VIEWER.md"), KeyBindings.markdown,
                       "docs/VIEWER.md's key table is `depthlens view --keys`")
    }

    func testSnapshotWritesFilesThatReadBack() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("snap-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let frame = SyntheticScene().render(width: 64, height: 48)
        let files = try Snapshot.write(name: "t", directory: dir, filtered: frame.color, color: frame.color,
                                       depth: frame.depth, intrinsics: frame.depth.intrinsics, mode: "jet",
                                       timestamp: 1.5, frame: 7, source: "synthetic")
        XCTAssertEqual(files.map { ($0 as NSString).lastPathComponent }, ["t_filtered.png", "t_color.png", "t_depth.png", "t.json"])
        let depth = try DepthIO.readDepth(dir + "/t_depth.png", depthScale: 1000).depthFloat32()
        let truth = frame.depth.depthFloat32()
        for (x, y) in [(5, 5), (20, 35), (50, 40)] {
            XCTAssertEqual(depth.row(y, as: Float.self)[x], (truth.row(y, as: Float.self)[x] * 1000).rounded() / 1000, accuracy: 1e-6)
        }
        let meta = try JSONDecoder().decode(Snapshot.Metadata.self, from: Data(contentsOf: URL(fileURLWithPath: dir + "/t.json")))
        XCTAssertEqual(meta.depth_units, "mm")
        XCTAssertEqual(meta.depth_scale, 1000)
        XCTAssertEqual(meta.intrinsics.width, 64)
        XCTAssertEqual(meta.intrinsics.fx, frame.depth.intrinsics.fx)
        XCTAssertEqual(meta.mode, "jet")
        XCTAssertEqual(meta.frame, 7)
        // DepthKit's checked reader (process --snapshot, info) takes what the viewer writes.
        let checked = try SnapshotMetadata.read(dir + "/t.json")
        XCTAssertEqual(checked, meta)
        XCTAssertEqual(checked.colorFile, "t_color.png")
        XCTAssertEqual(checked.depthFile, "t_depth.png")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.contains("tmp") }
        XCTAssertEqual(leftovers, [])
    }

    func testMillimetersRoundAndDropInvalid() {
        let d = PixelBuffer(width: 4, height: 1, format: .depthFloat32)
        let row = d.row(0, as: Float.self)
        row[0] = 0.7344; row[1] = .nan; row[2] = -1; row[3] = 70
        let mm = Snapshot.millimeters(d)
        XCTAssertEqual(Array(UnsafeBufferPointer(start: mm.row(0, as: UInt16.self), count: 4)), [734, 0, 0, 0])
    }

    func testStatsAverageOverASecond() {
        var s = FrameStats(now: 0)
        for i in 1...10 {
            s.add(stage: "source", ms: 2)
            s.add(gpu: "jet", ms: 1.5)
            s.add(allocations: UInt64(i % 2), driver: 4)
            s.add(stage: "ui", allocations: 3, driver: 1)
            XCTAssertEqual(s.frameDone(now: Double(i) * 0.1 + 0.0001), i == 10)
        }
        XCTAssertEqual(s.fps, 10, accuracy: 0.01)
        XCTAssertEqual(s.stageMs.first { $0.0 == "source" }?.1 ?? 0, 2, accuracy: 1e-9)
        XCTAssertEqual(s.gpuMs.first?.1 ?? 0, 1.5, accuracy: 1e-9)
        XCTAssertTrue(s.line.hasPrefix("fps 10.0"), s.line)
        XCTAssertEqual(s.allocsPerFrame, 0.5, accuracy: 1e-9)
        XCTAssertEqual(s.allocsWorstFrame, 1)
        XCTAssertEqual(s.stageAllocs.first { $0.0 == "ui" }?.1 ?? 0, 3, accuracy: 1e-9)
        XCTAssertEqual(s.driverAllocsPerFrame, 4, accuracy: 1e-9)
        XCTAssertEqual(s.stageDriverAllocs.first { $0.0 == "ui" }?.1 ?? 0, 1, accuracy: 1e-9)
        XCTAssertTrue(s.line.contains("allocs/frame own 0.50 (max 1), driver 4.00 (max 4)"), s.line)
        XCTAssertGreaterThan(s.rssMiB, 1, "RSS read from /proc/self/statm")
    }

    func testAllocationCounterCountsOnlyWhileOnAndOnlyThisThread() {
        final class Box { var v = 0 }
        AllocationCounter.counting(true)
        let before = AllocationCounter.count
        var boxes: [Box] = []
        for _ in 0..<10 { boxes.append(Box()) }
        let counted = AllocationCounter.count - before
        AllocationCounter.counting(false)
        XCTAssertGreaterThanOrEqual(counted, 10, "ten objects on the heap are counted")
        let off = AllocationCounter.count
        for _ in 0..<10 { boxes.append(Box()) }
        XCTAssertEqual(AllocationCounter.count, off, "nothing is counted while off")
        AllocationCounter.counting(true)
        let t = Thread { for _ in 0..<1000 { _ = Box() } }
        let mine = AllocationCounter.count
        t.start()
        let deadline = Date().addingTimeInterval(30)
        while !t.isFinished && Date() < deadline { usleep(1000) }
        XCTAssertTrue(t.isFinished, "the other thread finished within 30 s")
        AllocationCounter.counting(false)
        XCTAssertLessThan(AllocationCounter.count - mine, 1000, "another thread's allocations are not this thread's")
        XCTAssertEqual(boxes.count, 20)
    }

    /// Own or driver: a Swift object made here is depthlens' own allocation; what the Vulkan loader
    /// allocates while enumerating its extensions (libvulkan reads its manifests) is the driver's.
    func testAllocationCounterTellsOwnFromDriver() {
        final class Box { var v = 0 }
        AllocationCounter.counting(true)
        let start = AllocationCounter.counts
        var boxes: [Box] = []
        for _ in 0..<10 { boxes.append(Box()) }
        let afterOwn = AllocationCounter.counts
        var n: UInt32 = 0
        _ = vkEnumerateInstanceExtensionProperties(nil, &n, nil)
        let afterDriver = AllocationCounter.counts
        AllocationCounter.counting(false)
        XCTAssertGreaterThanOrEqual(afterOwn.own - start.own, 10, "ten Swift objects are own allocations")
        XCTAssertEqual(afterOwn.driver, start.driver, "no driver allocation while only Swift code ran")
        XCTAssertGreaterThan(afterDriver.driver, afterOwn.driver, "the Vulkan loader's allocations are the driver's")
        XCTAssertEqual(afterDriver.own, afterOwn.own, "and not own")
        XCTAssertGreaterThan(n, 0)
        XCTAssertEqual(boxes.count, 10)
    }

    func testViewerDefaultsToAutoBackend() {
        XCTAssertEqual(ViewerOptions().backend, .auto)
    }

    func testViewerOptionsBackendNames() throws {
        XCTAssertEqual(try ViewerBackend.named("AUTO"), .auto)
        XCTAssertThrowsError(try ViewerBackend.named("tpu"))
        XCTAssertEqual(ViewerBackend.gpu.next, .cpu)
        XCTAssertTrue(ViewerError.noDisplay("DISPLAY is not set").description.contains("depthlens process"))
    }
}
