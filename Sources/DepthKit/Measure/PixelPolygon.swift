import Foundation

/// A polygon in depth-image pixel coordinates, the way the measurements take a region: pixel
/// (u, v)'s center is the point (u, v) (as `qualityDeproject` deprojects it), so the image covers
/// [−0.5, W − 0.5] × [−0.5, H − 0.5]. A pixel belongs to the polygon when its center is inside by
/// the even–odd rule; the vertices are in order (either direction), the last joined to the first.
public struct PixelPolygon: Sendable, Equatable, CustomStringConvertible {
    public var vertices: [SIMD2<Double>]

    public init(_ vertices: [SIMD2<Double>]) { self.vertices = vertices }

    /// The rectangle that holds exactly the pixels of `roi` (its edges half a pixel outside the centers).
    public init(_ roi: QualityROI) {
        let x0 = Double(roi.x) - 0.5, y0 = Double(roi.y) - 0.5
        let x1 = x0 + Double(roi.width), y1 = y0 + Double(roi.height)
        vertices = [SIMD2(x0, y0), SIMD2(x1, y0), SIMD2(x1, y1), SIMD2(x0, y1)]
    }

    /// Parses "x1,y1,x2,y2,…" (pixels, decimals allowed). At least three points; `option` names the
    /// flag in the one-line error (`DepthKitError.invalidArgument`).
    public init(parsing text: String, option: String = "--area") throws {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
            .map { Double($0.trimmingCharacters(in: .whitespaces)) }
        guard parts.count % 2 == 0, parts.allSatisfy({ $0 != nil && $0!.isFinite }) else {
            throw DepthKitError.invalidArgument("\(option) takes pixel coordinates x1,y1,x2,y2,… (pairs of numbers), got '\(text)'")
        }
        let pts = stride(from: 0, to: parts.count, by: 2).map { SIMD2(parts[$0]!, parts[$0 + 1]!) }
        guard pts.count >= 3 else {
            throw DepthKitError.invalidArgument("\(option) needs at least 3 points (x1,y1,x2,y2,x3,y3,…), got \(pts.count)")
        }
        vertices = pts
    }

    /// The shoelace area in square pixels (positive for either direction).
    public var pixelArea: Double {
        var s = 0.0
        for i in vertices.indices {
            let a = vertices[i], b = vertices[(i + 1) % vertices.count]
            s += a.x * b.y - b.x * a.y
        }
        return abs(s) / 2
    }

    /// Checks the polygon against a `width`×`height` depth image: at least three vertices, every
    /// vertex inside the image, some area. Throws one line naming `option`.
    public func validate(width: Int, height: Int, option: String = "--area") throws {
        guard vertices.count >= 3 else {
            throw DepthKitError.invalidArgument("\(option) needs at least 3 points, got \(vertices.count)")
        }
        for p in vertices where !(p.x >= -0.5 && p.x <= Double(width) - 0.5 && p.y >= -0.5 && p.y <= Double(height) - 0.5) {
            throw DepthKitError.invalidArgument("\(option) point (\(Self.format(p.x)),\(Self.format(p.y))) lies outside the \(width)x\(height) depth image")
        }
        guard pixelArea > 0 else { throw DepthKitError.invalidArgument("\(option) polygon \(self) encloses no area") }
    }

    /// Whether the point is inside (even–odd rule; a point exactly on a left or top edge is inside,
    /// on a right or bottom edge outside, so adjacent polygons share no pixel).
    public func contains(_ p: SIMD2<Double>) -> Bool {
        var inside = false
        for i in vertices.indices {
            let a = vertices[i], b = vertices[(i + 1) % vertices.count]
            guard (a.y > p.y) != (b.y > p.y) else { continue }
            let x = a.x + (p.y - a.y) / (b.y - a.y) * (b.x - a.x)
            if x > p.x { inside.toggle() }
        }
        return inside
    }

    /// The pixels whose centers lie inside, row-major over `width`×`height` (a scanline fill with
    /// the rule of `contains`).
    public func mask(width: Int, height: Int) -> [Bool] {
        var m = [Bool](repeating: false, count: width * height)
        var xs: [Double] = []
        for v in 0..<height {
            let y = Double(v)
            xs.removeAll(keepingCapacity: true)
            for i in vertices.indices {
                let a = vertices[i], b = vertices[(i + 1) % vertices.count]
                guard (a.y > y) != (b.y > y) else { continue }
                xs.append(a.x + (y - a.y) / (b.y - a.y) * (b.x - a.x))
            }
            xs.sort()
            // u is inside when an odd number of crossings lie to its right: xs[2k] ≤ u < xs[2k+1].
            var k = 0
            while k + 1 < xs.count {
                let a = min(max(xs[k], -1), Double(width)), b = min(max(xs[k + 1], -1), Double(width))
                let lo = max(0, Int(a.rounded(.up))), hi = min(width - 1, Int(b.rounded(.up)) - 1)
                if lo <= hi { for u in lo...hi { m[v * width + u] = true } }
                k += 2
            }
        }
        return m
    }

    public var description: String { vertices.map { "\(Self.format($0.x)),\(Self.format($0.y))" }.joined(separator: ",") }

    static func format(_ v: Double) -> String { v == v.rounded() && abs(v) < 1e9 ? String(Int(v)) : String(v) }
}
