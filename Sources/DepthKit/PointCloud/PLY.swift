import Foundation

/// Writes point clouds as PLY: one `vertex` element with `float x y z` and `uchar red green blue`,
/// `binary_little_endian` by default or `ascii`. The write is atomic.
public enum PLYWriter {
    public static func write(_ cloud: PointCloud, to path: String, ascii: Bool = false) throws {
        try FileSupport.atomicWrite(encode(cloud, ascii: ascii), to: path)
    }

    public static func encode(_ cloud: PointCloud, ascii: Bool = false) -> [UInt8] {
        let header = """
        ply
        format \(ascii ? "ascii" : "binary_little_endian") 1.0
        comment written by depthlens
        element vertex \(cloud.count)
        property float x
        property float y
        property float z
        property uchar red
        property uchar green
        property uchar blue
        end_header

        """
        var out = Array(header.utf8)
        if ascii {
            var text = ""
            text.reserveCapacity(cloud.count * 32)
            for (p, c) in zip(cloud.positions, cloud.colors) {
                // Swift prints the shortest decimal that reads back as the same Float.
                text += "\(p.x) \(p.y) \(p.z) \(c.x) \(c.y) \(c.z)\n"
            }
            out += Array(text.utf8)
        } else {
            out.reserveCapacity(out.count + cloud.count * 15)
            for (p, c) in zip(cloud.positions, cloud.colors) {
                for f in [p.x, p.y, p.z] {
                    let b = f.bitPattern.littleEndian
                    out.append(UInt8(b & 0xFF)); out.append(UInt8((b >> 8) & 0xFF))
                    out.append(UInt8((b >> 16) & 0xFF)); out.append(UInt8(b >> 24))
                }
                out.append(c.x); out.append(c.y); out.append(c.z)
            }
        }
        return out
    }
}

/// What `PLYReader.load` found in a file: the finite points, whether the file had colors (without,
/// `cloud.colors` is white and a viewer colors by height), how many vertices were skipped for
/// non-finite coordinates, the normals and alpha when the file has them (one per point of `cloud`),
/// and the header as read.
public struct PLYContents: Sendable {
    public var cloud: PointCloud
    public var hasColor: Bool
    public var nonFiniteSkipped: Int
    /// Per point, from `nx ny nz` (or `normal_x normal_y normal_z`) as written; nil without them.
    public var normals: [SIMD3<Float>]?
    /// Per point, 0…255: `alpha` converted like a color component, or a 3D Gaussian Splatting file's
    /// `opacity` as sigmoid(opacity)·255 rounded; nil without either.
    public var alphas: [UInt8]?
    /// The file's format, elements and properties, and which properties gave color, alpha and
    /// normals (nil for contents made by hand).
    public var header: PLYHeader?

    public init(cloud: PointCloud, hasColor: Bool, nonFiniteSkipped: Int,
                normals: [SIMD3<Float>]? = nil, alphas: [UInt8]? = nil, header: PLYHeader? = nil) {
        precondition(normals == nil || normals!.count == cloud.count, "one normal a point")
        precondition(alphas == nil || alphas!.count == cloud.count, "one alpha a point")
        self.cloud = cloud
        self.hasColor = hasColor
        self.nonFiniteSkipped = nonFiniteSkipped
        self.normals = normals
        self.alphas = alphas
        self.header = header
    }

    /// Point `i`'s color and alpha packed as `GPUPointCloud(renderer:count:point:)` takes them:
    /// r | g<<8 | b<<16 | a<<24, alpha 255 without `alphas`.
    @inline(__always)
    public func rgba8(at i: Int) -> UInt32 {
        let c = cloud.colors[i]
        return UInt32(c.x) | UInt32(c.y) << 8 | UInt32(c.z) << 16 | UInt32(alphas?[i] ?? 255) << 24
    }

    /// Smallest and largest x, y and z of the points; nil for an empty cloud.
    public var bounds: (min: SIMD3<Float>, max: SIMD3<Float>)? {
        guard var lo = cloud.positions.first else { return nil }
        var hi = lo
        for p in cloud.positions { lo = pointwiseMin(lo, p); hi = pointwiseMax(hi, p) }
        return (lo, hi)
    }
}

/// A PLY header as read: its format and elements, and what the reader took color, alpha and
/// normals from.
public struct PLYHeader: Equatable, Sendable {
    /// `ascii`, `binary_little_endian` or `binary_big_endian`.
    public var format: String
    public var elements: [PLYElement]
    /// The header's lines end in a bare CR (else LF or CRLF).
    public var bareCRLineEnds: Bool
    /// The three properties color came from (`red green blue`, `r g b`, `diffuse_*`, or 3DGS's
    /// `f_dc_0 f_dc_1 f_dc_2`); empty without color.
    public var colorProperties: [String]
    /// Color is 3DGS's SH DC term: 0.5 + 0.28209479·f_dc, clamped.
    public var colorFromSphericalHarmonics: Bool
    public var alphaProperty: String?
    /// Alpha is 3DGS's `opacity`, a logit: alpha = sigmoid(opacity).
    public var alphaIsLogit: Bool
    /// `nx ny nz` or `normal_x normal_y normal_z`; empty without normals.
    public var normalProperties: [String]

    public init(format: String, elements: [PLYElement], bareCRLineEnds: Bool = false, colorProperties: [String] = [],
                colorFromSphericalHarmonics: Bool = false, alphaProperty: String? = nil, alphaIsLogit: Bool = false,
                normalProperties: [String] = []) {
        self.format = format
        self.elements = elements
        self.bareCRLineEnds = bareCRLineEnds
        self.colorProperties = colorProperties
        self.colorFromSphericalHarmonics = colorFromSphericalHarmonics
        self.alphaProperty = alphaProperty
        self.alphaIsLogit = alphaIsLogit
        self.normalProperties = normalProperties
    }
}

public struct PLYElement: Equatable, Sendable {
    public var name: String
    public var count: Int
    public var properties: [PLYProperty]
    public init(name: String, count: Int, properties: [PLYProperty]) {
        self.name = name
        self.count = count
        self.properties = properties
    }
}

/// One property as the header declares it, its type names spelled as in the file.
public struct PLYProperty: Equatable, Sendable, CustomStringConvertible {
    public var name: String
    /// The scalar type, or for a list property the item type.
    public var type: String
    /// The type of a list property's item count; nil for a scalar property.
    public var listCountType: String?
    public init(name: String, type: String, listCountType: String? = nil) {
        self.name = name
        self.type = type
        self.listCountType = listCountType
    }
    /// As in the header: `float x`, `list uchar int vertex_indices`.
    public var description: String {
        listCountType.map { "list \($0) \(type) \(name)" } ?? "\(type) \(name)"
    }
}
