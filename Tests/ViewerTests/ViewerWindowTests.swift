import TestSupport
import DepthKit
import Foundation
import XCTest

/// The viewer in a real window: Xvfb, driven with xdotool, captured with `import -window root`,
/// asserted on pixels. The scene is DepthKit's synthetic frame written as a `pair:` source, so
/// the box is at exactly 1 m (red in JET: near) and the wall at 3 m (blue: far).
final class ViewerWindowTests: WindowTestCase {
    /// Synthetic box and wall pixels of a 640×480 frame.
    let boxPixel = (x: Int(0.26 * 640), y: Int(0.72 * 480))
    let wallPixel = (x: 300, y: 100)

    func testJETBlendReadoutAndResize() throws {
        let x = try XServer.start()
        defer { x.stop() }
        let pair = try PairFiles(directory: dir)
        let v = try ViewerRun(x: x, args: ["--source", pair.source, "--mode", "jet", "--mix", "1",
                                           "--log-readout", "--log-ui", "--size", "1280x720"])
        defer { if v.process.isRunning { v.process.terminate() } }
        try v.waitForLine("ui: ready")
        let mixLine = try v.waitForLine("layout: mix ")
        try v.waitForFrames(3)

        // The panel is docked at the right (360 px): 640×480 letterboxed into the 920×720 left of it,
        // scale 1.4375 (920×690), 15 px bars above and below.
        let box = Letterboxed(x: 0, y: 15, scale: 1.4375)
        let (bx, by) = box.point(boxPixel.x, boxPixel.y)
        let (wx, wy) = box.point(wallPixel.x, wallPixel.y)
        var shot = try x.screenshot(saveAs: path("jet.png")) { $0.mean(bx, by).x > 100 && $0.mean(wx, wy).z > 100 }
        keep(path("jet.png"), as: "jet")
        let near = shot.mean(bx, by), far = shot.mean(wx, wy)
        XCTAssertGreaterThan(near.x, 100, "box (1 m, nearest) is red in JET: \(near)")
        XCTAssertLessThan(near.z, 60, "box: \(near)")
        XCTAssertGreaterThan(far.z, 100, "wall (3 m, farthest) is blue in JET: \(far)")
        XCTAssertLessThan(far.x, 60, "wall: \(far)")
        XCTAssertLessThan(shot.mean(700, 6, radius: 2).wrappedSum(), 80, "letterbox bar above the picture is dark")
        XCTAssertNotEqual(shot.mean(1100, 360), shot.mean(box.point(600, 240).0, box.point(600, 240).1), "the panel is beside the picture")

        // Readout: clicks on the box and on the wall print their known depths.
        var n = v.lines.count
        try v.click(bx, by)
        let r1 = try v.waitForLine("readout:", after: n)
        XCTAssertTrue(r1.contains("(\(boxPixel.x), \(boxPixel.y))"), r1)
        XCTAssertTrue(r1.contains("1.000 m"), "box is 1 m away: \(r1)")
        n = v.lines.count
        try v.click(wx, wy)
        let r2 = try v.waitForLine("readout:", after: n)
        XCTAssertTrue(r2.contains("3.000 m"), "wall is 3 m away: \(r2)")
        XCTAssertTrue(r2.contains("z 3.000 m"), r2)

        // Blend slider: dragged to 0 shows the color image, to 1 the JET image.
        let parts = mixLine.split(separator: " ").compactMap { Double($0) }
        XCTAssertEqual(parts.count, 4, mixLine)
        let (sx, sy, sw, sh) = (Int(parts[0]), Int(parts[1]), Int(parts[2]), Int(parts[3]))
        try v.drag(from: sx + sw / 2, sy + sh / 2, to: sx - 40, sy + sh / 2)
        try v.waitForLine("ui: mix 0.000", after: 0, timeout: 5)
        x.xdotoolMoveAway()
        let c = SyntheticScene.boxColor
        func isColor(_ p: SIMD3<Int>) -> Bool { abs(p.x - Int(c.x)) + abs(p.y - Int(c.y)) + abs(p.z - Int(c.z)) < 30 }
        shot = try x.screenshot(saveAs: path("mix0.png")) { isColor($0.mean(bx, by)) }
        keep(path("mix0.png"), as: "mix0")
        let colorBox = shot.mean(bx, by)
        XCTAssertLessThan(abs(colorBox.x - Int(c.x)) + abs(colorBox.y - Int(c.y)) + abs(colorBox.z - Int(c.z)), 30,
                          "mix 0 shows the color image: box \(colorBox) vs \(c)")
        try v.drag(from: sx + sw / 2, sy + sh / 2, to: sx + sw + 40, sy + sh / 2)
        try v.waitForLine("ui: mix 1.000", after: 0, timeout: 5)
        x.xdotoolMoveAway()
        shot = try x.screenshot(saveAs: path("mix1.png")) { $0.mean(bx, by) == near }
        XCTAssertEqual(shot.mean(bx, by), near, "mix 1 shows JET again")

        // F1 hides the panel: the picture takes the whole window (scale 1.5, 160 px bars left and
        // right) and the readout follows it; F1 again brings the panel and the smaller picture back.
        n = v.lines.count
        try v.key("F1")
        let full = Letterboxed(x: 160, y: 0, scale: 1.5)
        let (fbx, fby) = full.point(boxPixel.x, boxPixel.y), (fwx, fwy) = full.point(wallPixel.x, wallPixel.y)
        shot = try x.screenshot(saveAs: path("nopanel.png")) { $0.mean(fbx, fby).x > 100 && $0.mean(80, 360).wrappedSum() < 80 }
        keep(path("nopanel.png"), as: "nopanel")
        XCTAssertGreaterThan(shot.mean(fbx, fby).x, 100, "box red where the full-window letterbox puts it")
        XCTAssertLessThan(shot.mean(80, 360).wrappedSum(), 80, "letterbox bar left of the picture is dark")
        try v.click(fwx, fwy)
        let r3 = try v.waitForLine("readout:", after: n)
        XCTAssertTrue(r3.contains("(\(wallPixel.x), \(wallPixel.y))") && r3.contains("3.000 m"), "wall, panel hidden: \(r3)")
        n = v.lines.count
        try v.key("F1")
        try v.waitForFrames(3)
        try v.click(bx, by)
        let r4 = try v.waitForLine("readout:", after: n)
        XCTAssertTrue(r4.contains("(\(boxPixel.x), \(boxPixel.y))") && r4.contains("1.000 m"), "box, panel shown again: \(r4)")

        // Resize: 800×600 less the 360 px panel leaves 440×600: scale 0.6875 (440×330), 135 px bars.
        let wid = try v.windowID()
        n = v.lines.count
        try x.xdotool(["windowsize", wid, "800", "600"])
        try v.waitForLine("ui: swapchain 800x600", after: n, timeout: 10)
        let small = Letterboxed(x: 0, y: 135, scale: 0.6875)
        let (rbx, rby) = small.point(boxPixel.x, boxPixel.y)
        let (rwx, rwy) = small.point(wallPixel.x, wallPixel.y)
        shot = try x.screenshot(saveAs: path("resized.png")) { $0.mean(rbx, rby).x > 100 && $0.mean(rwx, rwy).z > 100 }
        keep(path("resized.png"), as: "resized")
        XCTAssertGreaterThan(shot.mean(rbx, rby).x, 100, "box still red after resize")
        XCTAssertGreaterThan(shot.mean(rwx, rwy).z, 100, "wall still blue after resize")
        XCTAssertTrue(v.process.isRunning)
        v.quit()
    }

    func testModeKeysSnapshotAndProcessRoundTrip() throws {
        let x = try XServer.start()
        defer { x.stop() }
        let pair = try PairFiles(directory: dir)
        let snaps = path("snaps")
        let v = try ViewerRun(x: x, args: ["--source", pair.source, "--no-panel", "--log-ui", "--snapshot-dir", snaps,
                                           "--size", "640x480"])
        defer { if v.process.isRunning { v.process.terminate() } }
        try v.waitForLine("ui: ready")
        let (bx, by) = boxPixel, (wx, wy) = wallPixel
        let c = SyntheticScene.boxColor

        /// Presses `key`, waits for the mode change and for the picture `ready` describes.
        func show(_ key: String, _ mode: String, until ready: @escaping (PixelBuffer) -> Bool = { _ in true }) throws -> PixelBuffer {
            let n = v.lines.count
            try v.key(key)
            try v.waitForLine("ui: mode \(mode)", after: n, timeout: 5)
            try v.waitForFrames(2)
            let shot = try x.screenshot(saveAs: path("\(mode).png"), until: ready)
            keep(path("\(mode).png"), as: "mode-\(mode)")
            return shot
        }
        var shot = try show("3", "grayscale") { $0.mean(bx, by).x < 30 && $0.mean(wx, wy).x > 225 }
        XCTAssertLessThan(shot.mean(bx, by).x, 30, "grayscale: nearest (box) is black")
        XCTAssertGreaterThan(shot.mean(wx, wy).x, 225, "grayscale: farthest (wall) is white")
        shot = try show("2", "rosy") { $0.mean(bx, by).y < 5 }
        let rosy = shot.mean(bx, by)
        XCTAssertLessThan(rosy.y, 5, "rosy drops green: \(rosy)")
        XCTAssertLessThan(abs(rosy.x - Int(c.x)), 6, "rosy keeps red: \(rosy)")
        shot = try show("1", "original") { abs($0.mean(bx, by).y - Int(c.y)) < 6 }
        let orig = shot.mean(bx, by)
        XCTAssertLessThan(abs(orig.y - Int(c.y)), 6, "original keeps green: \(orig)")
        shot = try show("5", "mask") { $0.mean(bx, by) != $0.mean(wx, wy) }
        XCTAssertNotEqual(shot.mean(bx, by), shot.mean(wx, wy), "the mask separates near from far")

        // JET without the blend, snapshot, and the files read back by `depthlens process`.
        _ = try show("4", "jet")
        try v.key("m")
        try v.waitForFrames(3)
        let n = v.lines.count
        try v.key("s")
        let line = try v.waitForLine("snapshot:", after: n, timeout: 10)
        let base = String(line.dropFirst("snapshot: ".count))
        for suffix in ["_filtered.png", "_color.png", "_depth.png", ".json"] {
            XCTAssertTrue(FileManager.default.fileExists(atPath: base + suffix), base + suffix)
        }
        v.quit()

        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: base + ".json"))) as! [String: Any]
        let k = json["intrinsics"] as! [String: Any]
        XCTAssertEqual(k["width"] as? Int, 640)
        XCTAssertEqual(k["height"] as? Int, 480)
        XCTAssertEqual((k["fx"] as? Double) ?? 0, 525, accuracy: 0.01)
        XCTAssertEqual(json["depth_units"] as? String, "mm")
        XCTAssertEqual(json["depth_scale"] as? Double, 1000)
        XCTAssertEqual(json["mode"] as? String, "jet")
        let depth = try ImageIO.read(base + "_depth.png")
        XCTAssertEqual(depth.format, .gray16(depthScale: depth.format == .gray16(depthScale: 1000) ? 1000 : 0) , "16-bit depth")
        XCTAssertEqual(depth.row(by, as: UInt16.self)[bx], 1000, "box at 1000 mm")
        XCTAssertEqual(depth.row(wy, as: UInt16.self)[wx], 3000, "wall at 3000 mm")
        let color = try ImageIO.readColor(base + "_color.png")
        XCTAssertEqual(color.rgb(bx, by), SIMD3(Int(c.x), Int(c.y), Int(c.z)))

        let again = path("again.png")
        let (status, _, err) = try runTool(Repo.depthlens, ["process", "--color", base + "_color.png", "--depth", base + "_depth.png",
                                                                  "--depth-scale", "1000", "--filter", "jet", "--out", again])
        XCTAssertEqual(status, 0, err)
        let a = try ImageIO.readColor(again), b = try ImageIO.readColor(base + "_filtered.png")
        XCTAssertEqual(a.width, b.width)
        XCTAssertEqual(a.height, b.height)
        var total = 0, worst = 0
        for y in 0..<a.height {
            for x in 0..<a.width {
                let d = a.rgb(x, y) &- b.rgb(x, y)
                let m = max(abs(d.x), abs(d.y), abs(d.z))
                total += m; worst = max(worst, m)
            }
        }
        XCTAssertLessThanOrEqual(worst, 1, "the snapshot's filtered image is what `process` computes from its color and depth (1 LSB)")
        XCTAssertLessThan(Double(total) / Double(a.width * a.height), 0.05)
    }

    func testMinimizeTinyResizeAndBrokenShaderKeepRunning() throws {
        let x = try XServer.start()
        defer { x.stop() }
        let pair = try PairFiles(directory: dir)
        // A private copy of the shaders so the test can break one.
        let shaders = dir.appendingPathComponent("Shaders")
        let (_, _, _) = try runTool("/bin/cp", ["-r", ShaderPaths.repositoryShaders, shaders.path])
        let v = try ViewerRun(x: x, args: ["--source", pair.source, "--mode", "jet", "--mix", "1", "--no-panel",
                                           "--log-ui", "--watch-shaders", "--size", "640x480"],
                              extraEnv: ["DEPTHLENS_SHADERS": shaders.path])
        defer { if v.process.isRunning { v.process.terminate() } }
        try v.waitForLine("ui: ready")
        let wid = try v.windowID()
        try x.xdotool(["windowunmap", "--sync", wid])
        v.hold(0.5)   // unmapped for a while: the loop must keep running without a visible window
        try x.xdotool(["windowmap", "--sync", wid])
        // No window manager gives focus back after a remap; Esc at the end needs it.
        try x.xdotool(["windowfocus", "--sync", wid])
        try x.xdotool(["windowsize", "--sync", wid, "1", "1"])
        v.hold(0.5)   // a 1x1 (near zero) window for a while: the loop must keep running
        var n = v.lines.count
        try x.xdotool(["windowsize", "--sync", wid, "640", "480"])
        try v.waitForLine("ui: swapchain 640x480", after: n, timeout: 10)
        XCTAssertTrue(v.process.isRunning, "survives unmap, map and a 1×1 window")

        // A present.frag that does not compile: the old pipeline keeps drawing, the error is shown.
        n = v.lines.count
        let frag = shaders.appendingPathComponent("present.frag")
        try "#version 450\nvoid main() { this is not GLSL }\n".write(to: frag, atomically: true, encoding: .utf8)
        let err = try v.waitForLine("ui: shader error:", after: n, timeout: 10)
        XCTAssertTrue(err.contains("present.frag"), err)
        let shot = try x.screenshot(saveAs: path("broken-shader.png")) { $0.mean(boxPixel.x, boxPixel.y).x > 100 }
        keep(path("broken-shader.png"), as: "broken-shader")
        XCTAssertGreaterThan(shot.mean(boxPixel.x, boxPixel.y).x, 100, "the old pipeline still draws JET")
        v.quit()
    }

    func testNoDisplayIsOneClearLine() throws {
        for env in [["DISPLAY": ""], ["DISPLAY": ":189"]] {
            let (status, out, err) = try runTool(Repo.depthlens, ["view", "--exit-after", "1"], env: env,
                                                 removing: ["WAYLAND_DISPLAY"])
            XCTAssertNotEqual(status, 0, "\(env)")
            let lines = err.split(separator: "\n")
            XCTAssertEqual(lines.count, 1, "one line: \(err)")
            XCTAssertTrue(err.hasPrefix("depthlens: no display"), err)
            XCTAssertTrue(err.contains("depthlens process") && err.contains("export-ply") && err.contains("render3d"), err)
            XCTAssertEqual(out, "")
        }
    }
}

/// Image pixel → window pixel for an image drawn at (x, y) scaled by `scale`.
struct Letterboxed {
    let x: Int, y: Int
    let scale: Double
    func point(_ px: Int, _ py: Int) -> (Int, Int) {
        (x + Int((Double(px) + 0.5) * scale), y + Int((Double(py) + 0.5) * scale))
    }
}

enum ShaderPaths {
    /// <repo>/Shaders, from this file's path.
    static var repositoryShaders: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Shaders").path
    }
}

extension XServer {
    /// Parks the pointer in a corner so the hover readout does not cover the pixels under test.
    func xdotoolMoveAway() { _ = try? xdotool(["mousemove", "1279", "799"]) }
}

/// The 3D view in a window: a drag changes the picture, a double-click brings it back exactly,
/// two clicks measure the distance between the box and the wall.
final class Viewer3DWindowTests: WindowTestCase {
    func testOrbitDragResetAndMeasure() throws {
        let x = try XServer.start()
        defer { x.stop() }
        let pair = try PairFiles(directory: dir)
        let v = try ViewerRun(x: x, args: ["--source", pair.source, "--view", "3d", "--no-panel", "--log-ui",
                                           "--size", "640x480"])
        defer { if v.process.isRunning { v.process.terminate() } }
        try v.waitForLine("ui: ready")
        try v.waitForFrames(5)
        // Overlay text sits at the top and bottom; compare the middle of the window.
        func middle(_ name: String, until ready: ([SIMD3<Int>]) -> Bool = { _ in true }) throws -> [SIMD3<Int>] {
            try bandShot(x, name, prefix: "3d", top: 80, bottom: 440, width: 640, until: ready)
        }
        // The home view, once two screenshots in a row agree (the first frames have been drawn).
        var previous: [SIMD3<Int>] = []
        let home = try middle("home") { px in defer { previous = px }; return px == previous }
        var n = v.lines.count
        try v.drag(from: 320, 240, to: 440, 270)
        let turned = try middle("orbited") { px in zip(home, px).filter { $0 != $1 }.count > home.count / 4 }
        let changed = zip(home, turned).filter { $0 != $1 }.count
        XCTAssertGreaterThan(changed, home.count / 4, "an orbit drag changes the picture")
        XCTAssertFalse(v.lines[n...].contains { $0.hasPrefix("pick:") }, "a drag is not a click")

        n = v.lines.count
        try x.xdotool(["mousemove", "320", "240"])
        try x.xdotool(["click", "--repeat", "2", "--delay", "60", "1"])
        try v.waitForLine("reset", after: n, timeout: 5)
        let back = try middle("reset") { $0 == home }
        XCTAssertEqual(zip(home, back).filter { $0 != $1 }.count, 0, "double-click restores the home view pixel for pixel")

        // Home view = the depth camera: the box pixel (1 m) and a wall pixel (3 m), 2 s apart.
        n = v.lines.count
        let box = (u: 166, v: 345), wall = (u: 300, v: 100)
        try v.click(box.u, box.v)
        _ = try v.waitForLine("pick:", after: n, timeout: 5)
        v.hold(0.6)   // past the double-click time, so the next click is a second pick
        try v.click(wall.u, wall.v)
        let line = try v.waitForLine("distance:", after: n, timeout: 5)
        let k = CameraIntrinsics.default(width: 640, height: 480)
        let a = k.unproject(u: Float(box.u), v: Float(box.v), depth: 1), b = k.unproject(u: Float(wall.u), v: Float(wall.v), depth: 3)
        let truth = ((a - b) * (a - b)).sum().squareRoot() * 1000
        let mm = Float(line.split(separator: " ")[1]) ?? -1
        XCTAssertEqual(mm, truth, accuracy: 25, "\(line) vs \(truth) mm")
        v.quit()
    }
}
