import Foundation
import XCTest

/// The render loop in steady state, in a real window: with `--stats` and `--exit-after-frames`, the
/// viewer prints its heap allocations per frame (the loop thread's, counted by CShim's malloc
/// interposer) and its resident set size from the end of warm-up (200 frames) to the last frame.
final class ViewerSteadyStateTests: WindowTestCase {
    struct Steady {
        let frames: Int, allocsPerFrame: Double, worstFrame: Int, framesWithOwn: Int, driverPerFrame: Double, rssStart: Double, rssEnd: Double
        init?(_ line: String) {
            func number(after key: String) -> Double? {
                guard let r = line.range(of: key) else { return nil }
                return Double(line[r.upperBound...].prefix { $0.isNumber || $0 == "." })
            }
            guard line.hasPrefix("steady state: frames"), let f = number(after: "frames "), let a = number(after: "own allocations/frame "),
                  let w = number(after: "(worst frame "), let k = number(after: "frames with any "),
                  let d = number(after: "driver allocations/frame "),
                  let s = number(after: "rss "), let e = number(after: "-> ") else { return nil }
            frames = Int(f); allocsPerFrame = a; worstFrame = Int(w); framesWithOwn = Int(k); driverPerFrame = d; rssStart = s; rssEnd = e
        }
    }

    /// One 600-frame run with upload and kernels every frame (`--reprocess`): after warm-up the
    /// resident set grows by at most 2 MiB and depthlens' own code allocates nothing in any frame
    /// (the driver's allocations — lavapipe, the Vulkan loader, GLFW, X11 — are counted apart and
    /// reported).
    private func assertSteady(_ extra: [String], file: StaticString = #filePath, line: UInt = #line) throws {
        let x = try XServer.start()
        defer { x.stop() }
        let v = try ViewerRun(x: x, args: ["--source", "synthetic:1280x720,640x480", "--no-vsync", "--stats", "--reprocess",
                                           "--size", "640x480", "--exit-after-frames", "600"] + extra)
        defer { if v.process.isRunning { v.process.terminate() } }
        let text = try v.waitForLine("steady state:", timeout: 300)
        guard let s = Steady(text) else { return XCTFail("cannot read \(text)", file: file, line: line) }
        XCTAssertEqual(s.frames, 600, text, file: file, line: line)
        XCTAssertLessThanOrEqual(s.rssEnd - s.rssStart, 2, "RSS flat after warm-up: \(text)", file: file, line: line)
        // Zero is the optimized build's property (`swift test -c release`); a debug build's
        // unoptimized Swift allocates (array literals, unspecialized generics) and is only reported.
        // Measured with release builds: 0 in every frame on the cpu, auto, gpu and 3D runs. The
        // tolerance is for what timing can still cause once: the source's buffer pool growing
        // after warm-up (the new buffer gets its texture) or an ImGui draw list growing its vector.
        if text.hasSuffix("optimized build") {
            XCTAssertLessThanOrEqual(s.framesWithOwn, 2, "no own allocation after warm-up: \(text)", file: file, line: line)
            XCTAssertLessThan(s.allocsPerFrame, 1, "no own allocation after warm-up: \(text)", file: file, line: line)
        } else {
            XCTAssertTrue(text.hasSuffix("debug build"), text, file: file, line: line)
        }
        XCTAssertGreaterThan(s.driverPerFrame, 0, "the driver's allocations are counted apart: \(text)", file: file, line: line)
        let perSecond = v.lines.filter { $0.hasPrefix("stats: ") }
        XCTAssertTrue(perSecond.allSatisfy { $0.contains("allocs/frame own ") && $0.contains("driver allocs by stage: ") },
                      "\(perSecond.last ?? "")", file: file, line: line)
        print(text)
        print(perSecond.last ?? "")
    }

    func testSteadyStateNoPanelJet() throws {
        try assertSteady(["--mode", "jet", "--no-panel"])
    }

    func testSteadyStatePanelShownGPU() throws {
        try assertSteady(["--mode", "jet", "--backend", "gpu"])
    }

    /// The 3D view: its overlay lines and the renderer's camera are rebuilt only when they change,
    /// push constants and descriptor sets are held inline, and the thermal zones are read on
    /// their own thread.
    func testSteadyState3D() throws {
        try assertSteady(["--view", "3d", "--no-panel"])
    }
}
