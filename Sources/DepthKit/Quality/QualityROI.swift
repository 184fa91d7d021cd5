import Foundation

/// The depth pixels the quality metrics look at: columns [x, x + width) × rows [y, y + height).
public struct QualityROI: Hashable, Sendable, CustomStringConvertible {
    public var x: Int
    public var y: Int
    public var width: Int
    public var height: Int

    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x; self.y = y; self.width = width; self.height = height
    }

    /// Pixels in the region (the fill rate's denominator).
    public var area: Int { width * height }

    /// The Depth Quality Tool's centered region: `int(W·(0.5 − 0.5·p))` to `int(W·(0.5 + 0.5·p))`
    /// (end exclusive), the same for H, in float arithmetic as `depth-quality-model.cpp` does.
    public static func centered(fraction p: Float, width w: Int, height h: Int) -> QualityROI {
        let x0 = Int(Float(w) * (0.5 - 0.5 * p)), x1 = Int(Float(w) * (0.5 + 0.5 * p))
        let y0 = Int(Float(h) * (0.5 - 0.5 * p)), y1 = Int(Float(h) * (0.5 + 0.5 * p))
        return QualityROI(x: x0, y: y0, width: x1 - x0, height: y1 - y0)
    }

    public var description: String { "\(x),\(y),\(width),\(height)" }
}

/// `--roi` as given, before the image size is known: a centered fraction or a rectangle.
public enum QualityROISpec: Hashable, Sendable, CustomStringConvertible {
    /// The centered fraction of width and height (the tool offers 0.8, 0.6, 0.4, 0.2; default 0.4).
    case centered(Float)
    case rect(QualityROI)

    public static let `default` = QualityROISpec.centered(0.4)

    /// Parses "0.4", "40%" or "x,y,w,h" (pixels). Throws `DepthKitError.invalidArgument` naming `--roi`.
    public init(parsing text: String) throws {
        let t = text.trimmingCharacters(in: .whitespaces)
        let parts = t.split(separator: ",", omittingEmptySubsequences: false)
        if parts.count == 4 {
            let v = parts.map { Int($0.trimmingCharacters(in: .whitespaces)) }
            guard let x = v[0], let y = v[1], let w = v[2], let h = v[3], x >= 0, y >= 0, w > 0, h > 0 else {
                throw DepthKitError.invalidArgument("--roi x,y,w,h takes whole pixels with x, y ≥ 0 and w, h > 0, got '\(text)'")
            }
            self = .rect(QualityROI(x: x, y: y, width: w, height: h))
            return
        }
        guard parts.count == 1 else {
            throw DepthKitError.invalidArgument("--roi is a fraction (0.4), a percentage (40%) or x,y,w,h, got '\(text)'")
        }
        let percent = t.hasSuffix("%")
        guard let v = Float(percent ? String(t.dropLast()) : t), v.isFinite else {
            throw DepthKitError.invalidArgument("--roi is a fraction (0.4), a percentage (40%) or x,y,w,h, got '\(text)'")
        }
        let p = percent ? v / 100 : v
        guard p > 0, p <= 1 else {
            throw DepthKitError.invalidArgument("--roi fraction must be in (0, 1] (percentages in (0, 100]), got '\(text)'")
        }
        self = .centered(p)
    }

    /// The region in an image of `width`×`height`; a rectangle reaching outside it, or a fraction
    /// too small to hold a pixel, is an error.
    public func resolve(width: Int, height: Int) throws -> QualityROI {
        switch self {
        case .centered(let p):
            let r = QualityROI.centered(fraction: p, width: width, height: height)
            guard r.width > 0, r.height > 0 else {
                throw DepthKitError.invalidArgument("--roi \(p) of \(width)x\(height) holds no pixel")
            }
            return r
        case .rect(let r):
            guard r.x + r.width <= width, r.y + r.height <= height else {
                throw DepthKitError.invalidArgument("--roi \(r) reaches outside the \(width)x\(height) depth image")
            }
            return r
        }
    }

    public var description: String {
        switch self {
        case .centered(let p): return "\(p)"
        case .rect(let r): return r.description
        }
    }
}
