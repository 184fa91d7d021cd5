import TestSupport
import Capture
import DepthKit
import Foundation
import GPUKit
import XCTest
@testable import Viewer

/// The 3D view's CPU picture of a depth frame is not drawn again while nothing it is made from
/// changed (`Scene3D.renderOnCPU(reuse:)`, used unless `view --reprocess`), and is drawn again
/// as soon as the frame, the camera or a setting changes. A reused picture equals what drawing
/// it again gives.
final class CPUPictureReuseTests: XCTestCase {
    private func bytes(_ b: PixelBuffer) -> [UInt8] {
        (0..<b.height).flatMap { y in Array(UnsafeBufferPointer(start: b.row(y, as: UInt8.self), count: b.width * 4)) }
    }

    func testStillViewReusesThePictureAndAnyChangeDrawsAgain() throws {
        setenv("DEPTHLENS_VALIDATION", "1", 1)
        let context = try GPUContext()
        let factory = try GPUFilterFactory(context: context)
        let scene = try XCTUnwrap(Scene3D.make(context: context, factory: factory, input: Scene3DInput()))
        scene.drawing = .cpu
        let source = SyntheticSource(width: 160, height: 120)
        try source.start()
        defer { source.stop() }
        let first = try XCTUnwrap(try source.nextFrame(now: 0))
        let second = try XCTUnwrap(try source.nextFrame(now: 0.5))

        let p = try scene.renderOnCPU(frame: first, width: 200, height: 150, reuse: true)
        let drawn = p.generation, picture = bytes(p)
        XCTAssertTrue(picture.contains { $0 != picture[0] }, "the cloud is drawn, not only the background")

        // Same frame, camera, size and settings: nothing drawn (the buffer was not written).
        let again = try scene.renderOnCPU(frame: first, width: 200, height: 150, reuse: true)
        XCTAssertTrue(again === p)
        XCTAssertEqual(again.generation, drawn, "a still view is not drawn again")

        // Without reuse (`--reprocess`) it is drawn again, and gives the same picture.
        let redrawn = try scene.renderOnCPU(frame: first, width: 200, height: 150, reuse: false)
        XCTAssertGreaterThan(redrawn.generation, drawn, "--reprocess draws every frame")
        XCTAssertEqual(bytes(redrawn), picture, "the reused picture is what drawing again gives")

        // The camera moved: drawn again, and the picture changes.
        var g = redrawn.generation
        scene.perform(.orbitLeft)
        let orbited = try scene.renderOnCPU(frame: first, width: 200, height: 150, reuse: true)
        XCTAssertGreaterThan(orbited.generation, g, "a moved camera draws again")
        XCTAssertNotEqual(bytes(orbited), picture)

        // A setting changed (color by depth): drawn again.
        g = orbited.generation
        let orbitedBytes = bytes(orbited)
        scene.renderer.colorBy = .depth
        let recolored = try scene.renderOnCPU(frame: first, width: 200, height: 150, reuse: true)
        XCTAssertGreaterThan(recolored.generation, g, "a new color-by draws again")
        XCTAssertNotEqual(bytes(recolored), orbitedBytes)

        // A new frame from the source: drawn again.
        g = recolored.generation
        let next = try scene.renderOnCPU(frame: second, width: 200, height: 150, reuse: true)
        XCTAssertGreaterThan(next.generation, g, "a new frame draws again")

        // Another window size: a new picture.
        let resized = try scene.renderOnCPU(frame: second, width: 100, height: 80, reuse: true)
        XCTAssertEqual(resized.width, 100)
        XCTAssertEqual(resized.height, 80)
        XCTAssertEqual(context.validation?.errorAndWarningCount ?? 0, 0, "\(context.validation?.messages ?? [])")
    }
}
