import XCTest
@testable import Capture
import DepthKit

/// The stage between a source and the consumers: history resets on seeks, steps back, loops and
/// jumps while paused, not on the next frame or a few dropped frames while playing.
final class DepthSmoothingStageTests: XCTestCase {
    private func frame(_ depth: Float, index: Int) -> FrameSet {
        let d = PixelBuffer(width: 4, height: 4, format: .depthFloat32)
        for y in 0..<4 { for x in 0..<4 { d.row(y, as: Float.self)[x] = depth } }
        return FrameSet(color: PixelBuffer(width: 4, height: 4, format: .rgba8), depth: DepthData(map: d), timestamp: 0, index: index)
    }

    private func value(_ f: FrameSet) -> Float { f.depth!.map.row(1, as: Float.self)[1] }

    private func stage() -> DepthSmoothingStage {
        var s = DepthSmoothingSettings(); s.enabled = true
        return DepthSmoothingStage(smoother: DepthSmoother(settings: s))
    }

    func testNextFrameBlendsASeekResets() throws {
        let blended: Float = 1.0 + 0.4 * (1.02 - 1.0)
        let st = stage()
        _ = try st.apply(frame(1.0, index: 10))
        XCTAssertEqual(value(try st.apply(frame(1.02, index: 11))), blended)          // next frame: history kept

        let seekForward = stage()
        _ = try seekForward.apply(frame(1.0, index: 10))
        XCTAssertEqual(value(try seekForward.apply(frame(1.02, index: 20))), 1.02)    // seek +10: reset

        let back = stage()
        _ = try back.apply(frame(1.0, index: 10))
        XCTAssertEqual(value(try back.apply(frame(1.02, index: 9))), 1.02)            // step back / loop: reset

        let dropped = stage()
        _ = try dropped.apply(frame(1.0, index: 10))
        XCTAssertEqual(value(try dropped.apply(frame(1.02, index: 12))), blended)     // one dropped frame while playing

        let paused = stage()
        _ = try paused.apply(frame(1.0, index: 10), playing: false)
        XCTAssertEqual(value(try paused.apply(frame(1.02, index: 12), playing: false)), 1.02)  // a jump while paused
    }

    func testResetAndSettingsChangeForgetHolesToo() throws {
        let st = stage()
        _ = try st.apply(frame(1.0, index: 0))
        XCTAssertEqual(value(try st.apply(frame(0, index: 1))), 1.0)  // held
        st.reset()                                                     // e.g. a new source
        XCTAssertEqual(value(try st.apply(frame(0, index: 2))), 0)
        _ = try st.apply(frame(1.0, index: 3))
        var s = st.settings; s.alpha = 0.5
        st.settings = s
        XCTAssertEqual(value(try st.apply(frame(1.02, index: 4))), 1.02)
    }

    func testOffPassesFramesThrough() throws {
        let st = DepthSmoothingStage(smoother: DepthSmoother())
        let f = frame(0, index: 0)
        XCTAssertTrue(try st.apply(f).depth!.map === f.depth!.map)
    }
}
