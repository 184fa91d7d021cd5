import Capture
import CDepthKit
import DepthKit
import Foundation
import TestSupport
import XCTest

/// A hostile DDS peer on this machine (issue 33): the JPEG bomb. The publisher is this test
/// process's own Cyclone participant (`DDSParticipant`, the loopback interface only, multicast off,
/// 127.0.0.1 the one peer: `DDSTests.loopbackOnly`), bounded to 100 good frames; `depthlens
/// subscribe` is the child whose peak memory (VmHWM) is measured.
final class DDSAttackTests: XCTestCase {
    override func setUp() {
        super.setUp()
        setenv("CYCLONEDDS_URI", DDSTests.loopbackOnly, 1)
    }

    /// A domain of this process's own, apart from DDSTests' (which use n up to about 20).
    var domain: Int { 100 + (Int(getpid()) * 7 + 61) % 100 }

    /// VmHWM of a running process in kB (0 once it is gone).
    static func peakKB(_ pid: Int32) -> Int {
        guard let s = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = s.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }) else { return 0 }
        return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0
    }

    /// Five oversize JPEGs after each good 64x48 frame, 20 good frames a second: the subscriber's
    /// memory stays bounded (the bombs are dropped on their header, never decoded), at least 80 %
    /// of the good frames arrive, every bomb heard is counted and said once.
    func testJPEGBombIsDroppedOnItsHeaderAndGoodFramesKeepFlowing() throws {
        let (good, bomb) = try JPEGBomb.make()
        XCTAssertEqual(try ImageHeader.read(bomb, name: "bomb"), ImageHeader.Info(kind: .jpeg, width: 16384, height: 16384))
        let topic = "/attack/color/image_raw/compressed"
        let d = domain
        let child = try CLI.start(["subscribe", "--source", "dds:\(topic),domain=\(d)", "--seconds", "60", "--idle", "3", "--json"])
        defer { child.stop() }
        var peak = 0
        var sent = 0
        do {
            let p = try DDSParticipant(domain: d, interface: "lo")
            defer { p.close() }
            let w = try p.writer(ros: topic, type: ROS2DDS.TypeName.compressedImage, qos: .sensorWriter)
            // Until the subscriber's reader is matched (bounded), then 100 good frames at 20 a second.
            let matchDeadline = Date().addingTimeInterval(60)
            while p.matchedReaders(w) == 0, child.isRunning, Date() < matchDeadline { Thread.sleep(forTimeInterval: 0.02) }
            XCTAssertGreaterThan(p.matchedReaders(w), 0, "the subscriber's reader never matched: \(child.stderrSoFar)")
            Thread.sleep(forTimeInterval: 0.3)   // the reader's side of the match
            let t0 = Date()
            for i in 0..<100 where child.isRunning {
                let header = ROS2Message.Header(stamp: ROS2Message.Time(sec: 1000 + Int32(i / 20), nanosec: UInt32(i % 20) * 50_000_000), frameID: "cam")
                try p.write(w, ROS2Message.encodeCompressedImage(header: header, format: "jpeg", data: good), topic: topic)
                sent += 1
                for _ in 0..<5 { try p.write(w, ROS2Message.encodeCompressedImage(header: header, format: "jpeg", data: bomb), topic: topic) }
                peak = max(peak, Self.peakKB(child.pid))
                let next = t0.addingTimeInterval(Double(i + 1) * 0.05)
                while Date() < next { peak = max(peak, Self.peakKB(child.pid)); Thread.sleep(forTimeInterval: 0.005) }
            }
        }
        // The publisher is gone; the subscriber stops 3 s after its last frame.
        while child.isRunning { peak = max(peak, Self.peakKB(child.pid)); Thread.sleep(forTimeInterval: 0.01) }
        let r = child.wait(timeout: 60)
        XCTAssertEqual(r.status, 0, r.stderr)
        let report = try XCTUnwrap(try JSONSerialization.jsonObject(with: r.stdoutData) as? [String: Any], r.stdout)
        let frames = report["frames"] as? Int ?? -1
        let oversize = report["oversize_samples"] as? Int ?? -1
        print("JPEG bomb: \(sent) good frames sent (each with 5 bombs of \(bomb.count) bytes), \(frames) received, "
              + "\(oversize) over the limit, subscribe's peak RSS \(peak / 1024) MB")
        XCTAssertEqual(sent, 100)
        XCTAssertGreaterThanOrEqual(Double(frames), 0.8 * Double(sent), "good frames received of \(sent): \(r.stdout)")
        XCTAssertGreaterThanOrEqual(Double(oversize), 0.8 * 5 * Double(sent), r.stdout)
        XCTAssertLessThanOrEqual(oversize, 5 * sent)
        XCTAssertEqual(report["dropped"] as? [String: Int], [:], "no bomb decoded and failed: \(r.stdout)")
        XCTAssertGreaterThan(peak, 0)
        XCTAssertLessThan(peak, 300 * 1024, "subscribe's peak RSS \(peak / 1024) MB (a decoded bomb is 1 GiB)")
        let notices = r.stderrLines.filter { $0.contains("over the 8192x8192 limit") }
        XCTAssertEqual(notices.count, 1, r.stderr)
        XCTAssertTrue(notices.first?.contains("dds:\(topic): JPEG of 16384x16384") ?? false, r.stderr)
    }
}
