import XCTest
import Capture

/// Every frame of a recorded source in playback order: paused, sought to each index in turn.
func playbackFrames(_ s: FrameSource) throws -> [FrameSet] {
    let p = try XCTUnwrap(s.playback, "\(s.name) plays back")
    p.pause()
    return try (0..<(p.frameCount ?? 0)).map { i in
        try p.seek(toFrame: i)
        return try XCTUnwrap(try s.nextFrame(now: Double(i)))
    }
}
