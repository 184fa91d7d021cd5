/// Fits an image into a window keeping its aspect ratio (bars left/right or top/bottom), and maps
/// window coordinates back to image pixels for the depth readout.
public struct Letterbox: Equatable, Sendable {
    public struct Rect: Equatable, Sendable {
        public var x: Float, y: Float, width: Float, height: Float
        public init(x: Float, y: Float, width: Float, height: Float) {
            self.x = x; self.y = y; self.width = width; self.height = height
        }
    }

    public let imageWidth: Int
    public let imageHeight: Int
    /// Where the image lands in the window, in window pixels.
    public let rect: Rect

    public init(imageWidth: Int, imageHeight: Int, windowWidth: Int, windowHeight: Int) {
        self.imageWidth = imageWidth
        self.imageHeight = imageHeight
        let iw = Float(max(imageWidth, 1)), ih = Float(max(imageHeight, 1))
        let ww = Float(max(windowWidth, 0)), wh = Float(max(windowHeight, 0))
        let scale = min(ww / iw, wh / ih)
        let w = iw * scale, h = ih * scale
        rect = Rect(x: ((ww - w) / 2).rounded(), y: ((wh - h) / 2).rounded(), width: w.rounded(), height: h.rounded())
    }

    /// The image pixel under window point (x, y), or nil on the bars / outside.
    public func imagePixel(windowX x: Double, windowY y: Double) -> (x: Int, y: Int)? {
        guard rect.width > 0, rect.height > 0 else { return nil }
        let u = (Float(x) - rect.x) / rect.width * Float(imageWidth)
        let v = (Float(y) - rect.y) / rect.height * Float(imageHeight)
        guard u >= 0, v >= 0, u < Float(imageWidth), v < Float(imageHeight) else { return nil }
        return (Int(u), Int(v))
    }

    /// The window point at the center of image pixel (x, y).
    public func windowPoint(imageX x: Int, imageY y: Int) -> (x: Float, y: Float) {
        (rect.x + (Float(x) + 0.5) / Float(imageWidth) * rect.width,
         rect.y + (Float(y) + 0.5) / Float(imageHeight) * rect.height)
    }

    /// Maps a pixel of an image of one size to the pixel covering the same spot in another size
    /// (the displayed image to the depth map): nearest, as DESIGN's point cloud samples color.
    public static func rescale(_ p: (x: Int, y: Int), from a: (Int, Int), to b: (Int, Int)) -> (x: Int, y: Int) {
        (min(b.0 - 1, max(0, p.x * b.0 / max(a.0, 1))), min(b.1 - 1, max(0, p.y * b.1 / max(a.1, 1))))
    }
}
