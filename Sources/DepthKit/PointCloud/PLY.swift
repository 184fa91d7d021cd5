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
/// `cloud.colors` is white and a viewer colors by height), and how many vertices were skipped for
/// non-finite coordinates.
public struct PLYContents: Sendable {
    public var cloud: PointCloud
    public var hasColor: Bool
    public var nonFiniteSkipped: Int
    public init(cloud: PointCloud, hasColor: Bool, nonFiniteSkipped: Int) {
        self.cloud = cloud
        self.hasColor = hasColor
        self.nonFiniteSkipped = nonFiniteSkipped
    }
}
