import DepthKit
import Foundation

/// What the viewer shows for the pixel under the cursor: its depth and 3D position.
public struct DepthReadout: Equatable, Sendable {
    public let x: Int
    public let y: Int
    /// Meters, nil when the pixel has no valid depth.
    public let depth: Float?
    public let position: SIMD3<Float>?

    /// Reads pixel (x, y) of a depthFloat32 map; nil outside the map.
    public init?(depth map: DepthData, x: Int, y: Int) {
        let d = map.depthFloat32()
        guard x >= 0, y >= 0, x < d.width, y < d.height else { return nil }
        self.x = x; self.y = y
        let z = d.row(y, as: Float.self)[x]
        if isValidDepth(z) {
            depth = z
            position = map.intrinsics.unproject(u: Float(x), v: Float(y), depth: z)
        } else {
            depth = nil
            position = nil
        }
    }

    /// "(320, 240)  1.234 m  x -0.012 y 0.034 z 1.234 m"; millimeters under 1 m, meters above.
    public var text: String {
        guard let z = depth, let p = position else { return "(\(x), \(y))  no depth" }
        return "(\(x), \(y))  \(DepthReadout.format(z))  x \(String(format: "%.3f", p.x)) y \(String(format: "%.3f", p.y)) z \(String(format: "%.3f", p.z)) m"
    }

    /// Depth for people: "734 mm" under 1 m, "1.234 m" from 1 m on.
    public static func format(_ meters: Float) -> String {
        meters < 1 ? String(format: "%.0f mm", meters * 1000) : String(format: "%.3f m", meters)
    }
}
