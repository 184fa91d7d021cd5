import CDepthKit
import DepthKit

/// The network attack of issue 33: a real 64x48 color JPEG (libjpeg through `dl_jpeg_encode`), and
/// the same bytes with its frame header (SOF0) claiming `side`×`side` — a few hundred bytes that a
/// decoder of old answered by allocating and zero-filling side² rgba8 pixels.
public enum JPEGBomb {
    public static func make(claiming side: Int = 16384) throws -> (good: [UInt8], bomb: [UInt8]) {
        let (w, h) = (64, 48)
        var px = [UInt8](repeating: 0, count: w * h * 4)
        for i in 0..<(w * h) { px[4 * i] = UInt8(i % 251); px[4 * i + 1] = UInt8(i / w * 5); px[4 * i + 2] = 90; px[4 * i + 3] = 255 }
        var out: UnsafeMutablePointer<UInt8>?
        var size = 0
        var err = [CChar](repeating: 0, count: 256)
        let rc = px.withUnsafeBufferPointer { dl_jpeg_encode($0.baseAddress, UInt32(w), UInt32(h), 4, w * 4, 80, &out, &size, &err, err.count) }
        guard rc == 0, let out else { throw DepthKitError.invalidArgument("dl_jpeg_encode failed") }
        defer { dl_jpeg_free(out) }
        let good = Array(UnsafeBufferPointer(start: out, count: size))
        var bomb = good
        guard let sof = (2..<(bomb.count - 9)).first(where: { bomb[$0] == 0xFF && bomb[$0 + 1] == 0xC0 }) else {
            throw DepthKitError.invalidArgument("no SOF0 in the encoded JPEG")
        }
        // SOF0: length (2), precision (1), height (2), width (2), big-endian.
        bomb[sof + 5] = UInt8(side >> 8); bomb[sof + 6] = UInt8(side & 255)
        bomb[sof + 7] = UInt8(side >> 8); bomb[sof + 8] = UInt8(side & 255)
        return (good, bomb)
    }
}
