import CPlatform
import DepthKit
import Foundation

/// What the viewer shows for the pixel under the cursor: its depth and 3D position.
public struct DepthReadout: Equatable, Sendable {
    public let x: Int
    public let y: Int
    /// Meters, nil when the pixel has no valid depth.
    public let depth: Float?
    public let position: SIMD3<Float>?
    /// The depth is relative (a portrait photo's: near/far only, not meters); the text says so.
    public let relative: Bool

    /// Reads pixel (x, y) of a depthFloat32 map; nil outside the map.
    public init?(depth map: DepthData, x: Int, y: Int) {
        let d = map.depthFloat32()
        guard x >= 0, y >= 0, x < d.width, y < d.height else { return nil }
        self.x = x; self.y = y
        relative = map.accuracy == .relative
        let z = d.row(y, as: Float.self)[x]
        if isValidDepth(z) {
            depth = z
            position = map.intrinsics.unproject(u: Float(x), v: Float(y), depth: z)
        } else {
            depth = nil
            position = nil
        }
    }

    /// "(320, 240)  1.234 m  x -0.012 y 0.034 z 1.234 m"; millimeters under 1 m, meters above;
    /// relative depth adds "  (relative depth, not meters)".
    public var text: String { withText(prefix: "") { String(cString: $0) } }

    /// The text, after `prefix`, as a C string formatted on the stack: the overlay draws it every
    /// frame without allocating (`text` is the same characters as a String).
    func withText<R>(prefix: StaticString, _ body: (UnsafePointer<CChar>) throws -> R) rethrows -> R {
        try withUnsafeTemporaryAllocation(of: CChar.self, capacity: 160) { buf in
            let p = position ?? .zero
            withCString(prefix) { pre in
                _ = dl_format_readout(buf.baseAddress, buf.count, pre, x, y, depth == nil || position == nil ? 0 : 1,
                                      depth ?? 0, p.x, p.y, p.z, relative ? 1 : 0)
            }
            return try body(buf.baseAddress!)
        }
    }

    /// Depth for people: "734 mm" under 1 m, "1.234 m" from 1 m on.
    public static func format(_ meters: Float) -> String {
        meters < 1 ? String(format: "%.0f mm", meters * 1000) : String(format: "%.3f m", meters)
    }
}

/// `s` as a NUL-terminated C string on the stack (a `StaticString` need not end in NUL), for the
/// readouts' C formatters: nothing allocated.
func withCString<R>(_ s: StaticString, _ body: (UnsafePointer<CChar>) -> R) -> R {
    s.withUTF8Buffer { utf8 in
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: utf8.count + 1) { c in
            for (i, b) in utf8.enumerated() { c[i] = CChar(bitPattern: b) }
            c[utf8.count] = 0
            return body(c.baseAddress!)
        }
    }
}
