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

/// Reads the PLY files `PLYWriter` writes: `ascii` or `binary_little_endian`, one `vertex`
/// element with exactly `float x y z` and `uchar red green blue` (other elements must be empty).
public enum PLYReader {
    public static func read(_ path: String) throws -> PointCloud {
        let bytes = try FileSupport.readAll(path)
        func bad(_ problem: String) -> DepthKitError { .file(path: path, problem: problem) }
        // Header: lines up to "end_header\n".
        let marker = Array("end_header".utf8)
        guard bytes.count >= 4, bytes[0..<4].elementsEqual(Array("ply\n".utf8)) || bytes[0..<4].elementsEqual(Array("ply\r".utf8)) else {
            throw bad("not a PLY file")
        }
        var end: Int?
        var i = 0
        while i + marker.count <= min(bytes.count, 1 << 16) {
            if bytes[i] == marker[0], bytes[i..<(i + marker.count)].elementsEqual(marker), i == 0 || bytes[i - 1] == 0x0A {
                var j = i + marker.count
                if j < bytes.count, bytes[j] == 0x0D { j += 1 }
                guard j < bytes.count, bytes[j] == 0x0A else { break }
                end = j + 1
                break
            }
            i += 1
        }
        guard let dataStart = end else { throw bad("corrupt PLY header: no end_header line") }
        let headerText = String(decoding: bytes[0..<dataStart], as: UTF8.self)
        var ascii: Bool?
        var vertexCount: Int?
        var properties: [String] = []
        var current: String?
        for raw in headerText.split(whereSeparator: { $0 == "\n" || $0 == "\r" }).dropFirst() {
            let f = raw.split(separator: " ").map(String.init)
            guard let key = f.first else { continue }
            switch key {
            case "comment", "obj_info", "end_header": continue
            case "format":
                guard f.count == 3, f[2] == "1.0" else { throw bad("corrupt PLY header: '\(raw)'") }
                switch f[1] {
                case "ascii": ascii = true
                case "binary_little_endian": ascii = false
                default: throw bad("PLY format \(f[1]) is not supported (ascii or binary_little_endian)")
                }
            case "element":
                guard f.count == 3, let n = Int(f[2]), n >= 0 else { throw bad("corrupt PLY header: '\(raw)'") }
                current = f[1]
                if f[1] == "vertex" { vertexCount = n }
                else if n != 0 { throw bad("PLY element \(f[1]) is not supported (only vertex)") }
            case "property":
                if current == "vertex" { properties.append(f.dropFirst().joined(separator: " ")) }
            default:
                throw bad("corrupt PLY header: '\(raw)'")
            }
        }
        guard let isASCII = ascii else { throw bad("corrupt PLY header: no format line") }
        guard let n = vertexCount else { throw bad("corrupt PLY header: no vertex element") }
        let expected = ["x", "y", "z"].map { "float \($0)" } + ["red", "green", "blue"].map { "uchar \($0)" }
        let normalized = properties.map {
            $0.replacingOccurrences(of: "float32 ", with: "float ").replacingOccurrences(of: "uint8 ", with: "uchar ")
        }
        guard normalized == expected else {
            throw bad("PLY vertex properties must be 'float x y z, uchar red green blue', got '\(properties.joined(separator: ", "))'")
        }
        var positions: [SIMD3<Float>] = [], colors: [SIMD3<UInt8>] = []
        if isASCII {
            let text = String(decoding: bytes[dataStart...], as: UTF8.self)
            var lines = text.split(whereSeparator: { $0 == "\n" || $0 == "\r" }).makeIterator()
            positions.reserveCapacity(min(n, 1 << 24)); colors.reserveCapacity(min(n, 1 << 24))
            for k in 0..<n {
                guard let line = lines.next() else { throw bad("truncated PLY: expected \(n) vertices, found \(k)") }
                let f = line.split(separator: " ")
                guard f.count == 6, let x = Float(f[0]), let y = Float(f[1]), let z = Float(f[2]),
                      let r = UInt8(f[3]), let g = UInt8(f[4]), let b = UInt8(f[5]) else {
                    throw bad("corrupt PLY: vertex \(k) is not 'x y z red green blue'")
                }
                positions.append(SIMD3(x, y, z)); colors.append(SIMD3(r, g, b))
            }
        } else {
            let (need, overflow) = n.multipliedReportingOverflow(by: 15)
            let found = bytes.count - dataStart
            guard !overflow, found >= need else {
                throw bad("truncated PLY: expected \(n) vertices (\(overflow ? "too many" : String(need)) bytes), found \(found) bytes")
            }
            positions.reserveCapacity(n); colors.reserveCapacity(n)
            bytes.withUnsafeBytes { raw in
                let base = raw.baseAddress! + dataStart
                for k in 0..<n {
                    let p = base + 15 * k
                    func f(_ o: Int) -> Float { Float(bitPattern: UInt32(littleEndian: p.loadUnaligned(fromByteOffset: o, as: UInt32.self))) }
                    positions.append(SIMD3(f(0), f(4), f(8)))
                    colors.append(SIMD3(p.load(fromByteOffset: 12, as: UInt8.self), p.load(fromByteOffset: 13, as: UInt8.self),
                                        p.load(fromByteOffset: 14, as: UInt8.self)))
                }
            }
        }
        return PointCloud(positions: positions, colors: colors)
    }
}
