import TestSupport
import DepthKit
import Foundation
import XCTest

/// The viewer left running: synthetic frames, and a TUM folder looping, with a CPU effect on.
/// RSS (VmRSS from /proc/PID/status, sampled from outside every 0.1 s) must not grow by more
/// than 2 MiB from the middle of the run to its end, no validation message may appear, and every
/// source frame is either shown or counted as dropped.
///
/// `DEPTHLENS_SOAK_FRAMES` sets the frame count (default 2000; the full soak is 10000),
/// `DEPTHLENS_SOAK_ARGS` adds viewer arguments after the test's own, so they win (e.g. `--smooth`,
/// `--mode jet` for the GPU path, `--fps 30` to play at the source's rate instead of 240 fps (the top of `--fps`), where
/// frames the viewer cannot show in time are skipped and counted as dropped), `DEPTHLENS_SOAK_SIZE` the frame size
/// (default 160x120). Figures are printed as `soak: …` lines.
final class SoakTests: WindowTestCase {
    var frames: Int { ProcessInfo.processInfo.environment["DEPTHLENS_SOAK_FRAMES"].flatMap { Int($0) } ?? 2000 }
    var extraArgs: [String] {
        (ProcessInfo.processInfo.environment["DEPTHLENS_SOAK_ARGS"] ?? "").split(separator: " ").map(String.init)
    }
    var size: (Int, Int) {
        let p = (ProcessInfo.processInfo.environment["DEPTHLENS_SOAK_SIZE"] ?? "160x120").split(separator: "x").compactMap { Int($0) }
        return p.count == 2 ? (p[0], p[1]) : (160, 120)
    }

    /// VmRSS of a process in KiB.
    static func rssKiB(_ pid: Int32) -> Int? {
        guard let s = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = s.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }) else { return nil }
        return Int(line.split(separator: " ").dropFirst().first ?? "")
    }

    struct Figures { var frames, shown, dropped, last: Int; var rssStart, rssEnd, growth: Int; var seconds: Double }

    /// Runs the viewer until it has taken `frames` frames, sampling its RSS; returns the figures.
    func soak(_ name: String, args: [String]) throws -> Figures {
        let x = try XServer.start()
        defer { x.stop() }
        let v = try ViewerRun(x: x, args: args + ["--log-ui", "--no-panel", "--no-vsync", "--size", "480x360",
                                                  "--exit-after-frames", "\(frames)"] + extraArgs)
        defer { if v.process.isRunning { v.process.terminate() } }
        let t0 = Date()
        var samples: [(t: Double, kib: Int)] = []
        // A guard against a hung viewer, not a speed check: a frame a second is far slower than any build.
        let deadline = Date().addingTimeInterval(60 + Double(frames))
        while v.process.isRunning {
            if Date() > deadline {
                XCTFail("\(name): the viewer did not finish \(frames) frames; stdout: \(v.lines.suffix(3))")
                v.process.terminate()
                break
            }
            if let k = Self.rssKiB(v.process.processIdentifier) { samples.append((Date().timeIntervalSince(t0), k)) }
            usleep(100_000)
        }
        v.process.waitUntilExit()
        let seconds = Date().timeIntervalSince(t0)
        XCTAssertEqual(v.process.terminationStatus, 0, "\(name): exit status; stderr: \(v.stderr)")
        XCTAssertFalse(v.stderr.contains("vulkan validation"), "\(name): validation messages:\n\(v.stderr)")
        let exit = try v.waitForLine("ui: exit ", timeout: 1)
        // "ui: exit frames N shown M dropped D last L"
        let w = exit.split(separator: " ").map(String.init)
        func value(_ key: String) -> Int { w.firstIndex(of: key).flatMap { Int(w[$0 + 1]) } ?? -1 }
        // The median of 40–60% of the run against the median of its last 20% (the first 40% is
        // warm-up: shader pipelines, buffer pools, glibc arenas, the first loop of a TUM folder).
        let end = samples.last?.t ?? 0
        func median(_ from: Double, _ to: Double) -> Int {
            let v = samples.filter { $0.t >= end * from && $0.t <= end * to }.map(\.kib).sorted()
            return v.isEmpty ? 0 : v[v.count / 2]
        }
        let mid = median(0.4, 0.6), late = median(0.8, 1)
        let f = Figures(frames: value("frames"), shown: value("shown"), dropped: value("dropped"), last: value("last"),
                        rssStart: mid, rssEnd: late, growth: late - mid, seconds: seconds)
        print(String(format: "soak: %@ frames %d shown %d dropped %d in %.1f s; RSS %.1f MiB -> %.1f MiB (growth %+.2f MiB, %d samples)",
                     name, f.frames, f.shown, f.dropped, seconds, Double(mid) / 1024, Double(late) / 1024, Double(f.growth) / 1024,
                     samples.count))
        XCTAssertGreaterThanOrEqual(samples.count, 8, "\(name): too few RSS samples for a verdict")
        XCTAssertEqual(f.shown, frames, "\(name): \(exit)")
        XCTAssertLessThanOrEqual(f.growth, 2048, "\(name): RSS grew by \(f.growth) KiB")
        return f
    }

    func testSyntheticSoak() throws {
        let (w, h) = size
        let f = try soak("synthetic", args: ["--source", "synthetic:\(w)x\(h)", "--mode", "comic", "--fps", "240"])
        // Every source frame from 0 to the last is either shown or counted as dropped: none vanish.
        XCTAssertEqual(f.frames + f.dropped, f.last + 1, "dropped-frame accounting")
    }

    func testTUMLoopSoak() throws {
        let (w, h) = size
        let seq = path("seq")
        let writer = try TUMWriter(directory: seq)
        let scene = SyntheticScene()
        for i in 0..<20 {
            let f = scene.render(width: w, height: h, time: Double(i) / 10)
            try writer.append(RGBDFrame(color: f.color, depth: f.depth, timestamp: 1000 + Double(i) / 30))
        }
        try writer.finish()
        let f = try soak("tum-loop", args: ["--source", "tum:" + seq, "--loop", "--mode", "comic", "--fps", "240"])
        XCTAssertGreaterThan(f.last, -1)
    }
}
