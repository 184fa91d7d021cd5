import DepthKit

/// A photo's subject matte (`FrameSet.matte`: the portrait effects matte, else the union of the
/// semantic mattes of a person; `PhotoSource.subjectMatte`) as the mask of the depth-mask and
/// portrait modes, in place of the mask thresholded from depth: m = v/255 (255 the subject, kept
/// as the near side of a depth mask is), scaled bilinearly to the color image as depth masks are
/// (`DepthMask.scaled`: clamp to edge, pixel centers).
enum MatteMask {
    /// The matte's values for the effects (`DepthEffectRenderer` scales them to the image).
    static func values(_ matte: PixelBuffer) -> DepthMask { DepthMask(gray8: matte) }

    /// The mask mode's picture: gray m·255 (rounded) at `width`×`height`, opaque, as
    /// `DepthMaskFilter.renderRGBA8` draws a depth mask.
    static func picture(_ matte: PixelBuffer, width: Int, height: Int) -> PixelBuffer {
        let m = values(matte).scaled(toWidth: width, height: height)
        let out = PixelBuffer(width: width, height: height, format: .rgba8)
        for y in 0..<height {
            let o = out.row(y, as: UInt32.self)
            for x in 0..<width {
                let g = UInt32((min(max(m[x, y], 0), 1) * 255).rounded())
                o[x] = UInt32(littleEndian: g &* 0x01_0101 | 0xFF00_0000)
            }
        }
        out.markModified()
        return out
    }
}
