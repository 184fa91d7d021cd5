import TestSupport
import DepthKit
import Foundation
import XCTest

/// `view --source ply:DIR`: a folder of PLY files plays as frames in the 3D view. Paused, `.` and
/// `,` step through the files in name order (numbers as numbers); each file shows, the picture comes
/// back exactly when stepping back (the home view stays the first file's), and a file that cannot be
/// read is a notice naming it while the previous picture stays.
final class ViewerPLYSequenceWindowTests: WindowTestCase {
    /// A square of 160×160 points in the plane z = 2 (the same bounds in every file), one color;
    /// file `shape` 1 leaves out the top half, 2 the left half, so the files differ in shape too.
    private func square(_ color: SIMD3<UInt8>, shape: Int) -> PointCloud {
        var positions: [SIMD3<Float>] = [], colors: [SIMD3<UInt8>] = []
        for j in 0..<160 {
            for i in 0..<160 {
                let corner = (i == 0 || i == 159) && (j == 0 || j == 159)
                if !corner && ((shape == 1 && j < 80) || (shape == 2 && i < 80)) { continue }
                positions.append(SIMD3(Float(i) / 159 - 0.5, Float(j) / 159 - 0.5, 2))
                colors.append(color)
            }
        }
        return PointCloud(positions: positions, colors: colors)
    }

    func testStepsThroughTheFilesAndBack() throws {
        let x = try XServer.start()
        defer { x.stop() }
        let dir = path("seq")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try PLYWriter.write(square(SIMD3(255, 0, 0), shape: 0), to: dir + "/frame_1.ply")
        try PLYWriter.write(square(SIMD3(0, 255, 0), shape: 1), to: dir + "/frame_2.ply")
        try PLYWriter.write(square(SIMD3(0, 0, 255), shape: 2), to: dir + "/frame_10.ply")
        try Data("ply\nformat binary_little_endian 1.0\nelement vertex 9\n".utf8).write(to: URL(fileURLWithPath: dir + "/frame_11.ply"))

        let v = try ViewerRun(x: x, args: ["--source", "ply:\(dir)", "--paused", "--no-panel", "--log-ui", "--size", "640x480"])
        defer { if v.process.isRunning { v.process.terminate() } }
        try v.waitForLine("ui: ply sequence 4 files")
        try v.waitForLine("ui: ply frame 0 frame_1.ply")
        try v.waitForLine("ui: ready")
        try v.waitForFrames(5)
        func middle(_ name: String, until ready: ([SIMD3<Int>]) -> Bool = { _ in true }) throws -> [SIMD3<Int>] {
            try bandShot(x, name, prefix: "plyseq", top: 120, bottom: 360, width: 640, until: ready)
        }
        // The notice (above the status line; the bad file's long path may take more than one
        // row) and the overlay text stay outside rows 120..<360.
        /// Pixels whose strongest channel is `c` (0 red, 1 green, 2 blue) by a clear margin.
        func count(_ px: [SIMD3<Int>], _ c: Int) -> Int {
            px.filter { p in p[c] > 150 && (0..<3).allSatisfy { $0 == c || p[$0] < 100 } }.count
        }
        func differ(_ a: [SIMD3<Int>], _ b: [SIMD3<Int>]) -> Int { zip(a, b).filter { $0 != $1 }.count }
        var previous: [SIMD3<Int>] = []
        let red = try middle("0-red") { px in defer { previous = px }; return px == previous }
        XCTAssertGreaterThan(count(red, 0), 2000, "the first file (red) shows")
        XCTAssertEqual(count(red, 1) + count(red, 2), 0)

        func step(_ key: String, to index: Int, _ name: String) throws {
            let n = v.lines.count
            try v.key(key)
            try v.waitForLine("ui: ply frame \(index) \(name)", after: n, timeout: 10)
            try v.waitForFrames(3)
        }
        try step("period", to: 1, "frame_2.ply")
        let green = try middle("1-green") { count($0, 1) > 500 }
        XCTAssertEqual(count(green, 0), 0, "the red file is gone")
        XCTAssertLessThan(count(green, 1), count(red, 0) * 3 / 4, "the green file has half the points")

        try step("period", to: 2, "frame_10.ply")   // frame_10 after frame_2: numbers compared as numbers
        let blue = try middle("2-blue") { count($0, 2) > 500 }
        XCTAssertEqual(count(blue, 1), 0)

        // The bad file: a notice names it and the blue picture stays.
        var n = v.lines.count
        try v.key("period")
        let note = try v.waitForLine("notice:", after: n, timeout: 10)
        XCTAssertTrue(note.contains("frame_11.ply"), note)
        try v.waitForFrames(3)
        XCTAssertEqual(differ(try middle("3-bad"), blue), 0, "the previous frame stays")

        // Back: the same pictures, pixel for pixel (the home view did not move).
        n = v.lines.count
        try v.key("comma")
        try v.waitForLine("ui: ply frame 2 frame_10.ply", after: n, timeout: 10)
        try step("comma", to: 1, "frame_2.ply")
        XCTAssertEqual(differ(try middle("4-green-again") { $0 == green }, green), 0, "stepping back shows the green file again")
        try step("comma", to: 0, "frame_1.ply")
        XCTAssertEqual(differ(try middle("5-red-again") { $0 == red }, red), 0, "and the red one")
        XCTAssertTrue(v.lines.contains { $0.hasPrefix("ui: ply frame 1") && $0.contains("(buffer reused)") },
                      "a smaller file refills the point buffer in place")
        v.quit()
    }
}

/// Esc during a long read of a sequence file cancels it: a progress line shows while it reads, the
/// notice says it was cancelled, the window goes on drawing the previous file, and Esc then quits.
final class ViewerPLYLoadCancelWindowTests: WindowTestCase {
    func testEscCancelsALongLoad() throws {
        let x = try XServer.start()
        defer { x.stop() }
        let dir = path("seq")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try PLYWriter.write(PointCloud(positions: [SIMD3(-0.5, -0.5, 2), SIMD3(0.5, 0.5, 2)], colors: [SIMD3(255, 0, 0), SIMD3(255, 0, 0)]),
                            to: dir + "/a_1.ply")
        // 6,000,000 binary points (90 MB): seconds to read in a debug build.
        let n = 6_000_000
        var big = Data("ply\nformat binary_little_endian 1.0\nelement vertex \(n)\nproperty float x\nproperty float y\nproperty float z\nproperty uchar red\nproperty uchar green\nproperty uchar blue\nend_header\n".utf8)
        var rec = [UInt8](repeating: 0, count: 15)
        withUnsafeBytes(of: Float(0).bitPattern.littleEndian) { rec.replaceSubrange(0..<4, with: $0) }
        withUnsafeBytes(of: Float(0).bitPattern.littleEndian) { rec.replaceSubrange(4..<8, with: $0) }
        withUnsafeBytes(of: Float(2).bitPattern.littleEndian) { rec.replaceSubrange(8..<12, with: $0) }
        rec[12] = 0; rec[13] = 255; rec[14] = 0
        var body = Data(rec)
        while body.count < 15 * n { body.append(body.prefix(min(body.count, 15 * n - body.count))) }
        big.append(body)
        try big.write(to: URL(fileURLWithPath: dir + "/a_2.ply"))

        let v = try ViewerRun(x: x, args: ["--source", "ply:\(dir)", "--paused", "--log-ui", "--size", "640x480"])
        defer { if v.process.isRunning { v.process.terminate() } }
        try v.waitForLine("ui: ply frame 0 a_1.ply")
        try v.waitForLine("ui: ready")
        var n0 = v.lines.count
        try v.key("period")
        let progress = try v.waitForLine("ui: loading a_2.ply:", after: n0, timeout: 20)
        XCTAssertTrue(progress.hasSuffix("(Esc cancels)"), progress)
        n0 = v.lines.count
        try v.key("Escape")
        let note = try v.waitForLine("notice: load of", after: n0, timeout: 20)
        XCTAssertTrue(note.hasSuffix("a_2.ply cancelled"), note)
        try v.waitForFrames(10)
        XCTAssertTrue(v.process.isRunning, "Esc during the load did not quit")
        XCTAssertFalse(v.lines[n0...].contains { $0.hasPrefix("ui: ply frame 1") }, "the cancelled file is not shown")
        v.quit()
    }
}
