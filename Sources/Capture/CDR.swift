/// A reader of CDR, the serialization of ROS 2 messages (OMG XCDR1 "plain CDR", what rmw writes and
/// rosbag2 stores): a 4-byte encapsulation header (`00 01` little-endian, `00 00` big-endian, then
/// two option bytes), then the fields in order. Each primitive is aligned to its own size (at most
/// 8), counted from the end of the header. Plain XCDR2 (`00 07` little-endian, `00 06` big-endian,
/// which some DDS writers send) aligns to at most 4 bytes and is otherwise read the same. A string is a uint32 length that counts its terminating
/// NUL, then the bytes; a sequence a uint32 count, then the elements; a fixed array only the elements.
///
/// A function over bytes (STYLE.md 13): every length is checked against what is left before anything
/// is read or allocated, and a message shorter than its fields is a `CaptureError.file` naming the
/// file and `what` (the type and topic), never a crash.
public struct CDRReader {
    public let bytes: [UInt8]
    /// The offset of the next read in `bytes` (the header included).
    public private(set) var at: Int
    public let isLittleEndian: Bool
    /// The largest alignment: 8 for XCDR1, 4 for XCDR2.
    let maxAlign: Int
    /// For errors: the file, and what is read ("sensor_msgs/msg/Image message on /camera/depth").
    let name: String
    let what: String

    /// The size of the encapsulation header; alignment counts from its end.
    static let headerSize = 4

    /// Reads the encapsulation header. Throws for a message shorter than it or one in another
    /// representation (parameter lists, XCDR2), which ROS 2 does not write for its messages.
    public init(bytes: [UInt8], name: String, what: String) throws {
        self.bytes = bytes
        self.name = name
        self.what = what
        at = Self.headerSize
        guard bytes.count >= Self.headerSize else {
            throw CaptureError.file(path: name, problem: "\(what) of \(bytes.count) bytes is shorter than the 4-byte CDR header")
        }
        switch (bytes[0], bytes[1]) {
        case (0, 1): isLittleEndian = true; maxAlign = 8
        case (0, 0): isLittleEndian = false; maxAlign = 8
        case (0, 7): isLittleEndian = true; maxAlign = 4
        case (0, 6): isLittleEndian = false; maxAlign = 4
        case let (a, b):
            throw CaptureError.file(path: name, problem: "\(what) has CDR encapsulation 0x\(hex(a))\(hex(b)); "
                                    + "only plain CDR (0x0000 big-endian, 0x0001 little-endian) and plain XCDR2 (0x0006, 0x0007) are read")
        }
    }

    public var remaining: Int { bytes.count - at }

    func short(_ need: Int) -> CaptureError {
        .file(path: name, problem: "\(what) is shorter than its fields (needs \(need) more bytes at offset \(at), \(remaining) left)")
    }

    mutating func need(_ n: Int) throws {
        guard n >= 0, n <= remaining else { throw short(n) }
    }

    /// Skips padding so that the next field of `size` bytes starts at a multiple of `size` from the
    /// header's end. Padding past the end is not an error by itself; the read after it is.
    mutating func align(_ size: Int) {
        let size = min(size, maxAlign)
        let offset = at - Self.headerSize
        let padded = (offset + size - 1) / size * size
        at = min(Self.headerSize + padded, bytes.count)
    }

    /// `n` bytes, aligned to `n`, as an unsigned integer in the message's byte order.
    private mutating func word(_ n: Int) throws -> UInt64 {
        align(n)
        try need(n)
        defer { at += n }
        var v: UInt64 = 0
        if isLittleEndian {
            for i in (0..<n).reversed() { v = v << 8 | UInt64(bytes[at + i]) }
        } else {
            for i in 0..<n { v = v << 8 | UInt64(bytes[at + i]) }
        }
        return v
    }

    public mutating func u8() throws -> UInt8 {
        try need(1)
        defer { at += 1 }
        return bytes[at]
    }
    public mutating func bool() throws -> Bool { try u8() != 0 }
    public mutating func u16() throws -> UInt16 { UInt16(truncatingIfNeeded: try word(2)) }
    public mutating func u32() throws -> UInt32 { UInt32(truncatingIfNeeded: try word(4)) }
    public mutating func i32() throws -> Int32 { Int32(bitPattern: try u32()) }
    public mutating func u64() throws -> UInt64 { try word(8) }
    public mutating func i64() throws -> Int64 { Int64(bitPattern: try u64()) }
    public mutating func f32() throws -> Float { Float(bitPattern: try u32()) }
    public mutating func f64() throws -> Double { Double(bitPattern: try u64()) }

    /// A string: uint32 length (with the NUL), the bytes, the NUL. A length of 0 (some writers'
    /// empty string) is taken as "". Bytes are UTF-8 (invalid sequences replaced).
    public mutating func string() throws -> String {
        let n = Int(try u32())
        try need(n)
        defer { at += n }
        var end = at + n
        while end > at, bytes[end - 1] == 0 { end -= 1 }
        return String(decoding: bytes[at..<end], as: UTF8.self)
    }

    /// A sequence's count, checked against what is left for elements of at least `elementSize`
    /// bytes each (so a lying count cannot make the caller allocate more than the message holds).
    public mutating func count(elementSize: Int) throws -> Int {
        let n = Int(try u32())
        if elementSize > 0 {
            let (bytesNeeded, overflow) = n.multipliedReportingOverflow(by: elementSize)
            // Alignment padding before the first element is at most 7 bytes.
            guard !overflow, bytesNeeded <= remaining else { throw short(overflow ? Int.max : bytesNeeded) }
        } else {
            guard n <= remaining else { throw short(n) }
        }
        return n
    }

    /// A `uint8[]` sequence: its range in `bytes`.
    public mutating func byteSequence() throws -> Range<Int> {
        let n = Int(try u32())
        try need(n)
        defer { at += n }
        return at..<(at + n)
    }

    /// `count` float64s (a fixed-length array).
    public mutating func f64s(_ count: Int) throws -> [Double] {
        align(8)
        try need(count * 8)
        return try (0..<count).map { _ in try f64() }
    }

    /// A `float64[]` sequence.
    public mutating func f64Sequence() throws -> [Double] {
        let n = try count(elementSize: 8)
        align(8)
        return try f64s(n)
    }
}

private func hex(_ b: UInt8) -> String { (b < 16 ? "0" : "") + String(b, radix: 16) }

/// The writer of the same CDR: little-endian plain CDR (XCDR1, encapsulation `00 01 00 00`), what
/// ROS 2's rmw writes and rosbag2 stores; each primitive aligned to its size from the header's end.
/// `CDRReader` reads back everything it writes.
public struct CDRWriter {
    public private(set) var bytes: [UInt8] = [0, 1, 0, 0]

    /// `capacity`: the bytes the message will take after its header (one allocation for an image).
    public init(reserving capacity: Int = 256) { bytes.reserveCapacity(capacity + CDRReader.headerSize) }

    public mutating func align(_ size: Int) {
        while (bytes.count - CDRReader.headerSize) % size != 0 { bytes.append(0) }
    }
    public mutating func u8(_ v: UInt8) { bytes.append(v) }
    public mutating func bool(_ v: Bool) { bytes.append(v ? 1 : 0) }
    public mutating func u32(_ v: UInt32) {
        align(4)
        withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) }
    }
    public mutating func i32(_ v: Int32) { u32(UInt32(bitPattern: v)) }
    public mutating func f32(_ v: Float) { u32(v.bitPattern) }
    public mutating func f64(_ v: Double) {
        align(8)
        withUnsafeBytes(of: v.bitPattern.littleEndian) { bytes.append(contentsOf: $0) }
    }
    /// `values` as a fixed-length array (no count).
    public mutating func f64s(_ values: [Double]) { for v in values { f64(v) } }
    /// A `float64[]` sequence.
    public mutating func f64Sequence(_ values: [Double]) {
        u32(UInt32(values.count))
        f64s(values)
    }
    /// A string: uint32 length counting the NUL, the UTF-8 bytes, the NUL.
    public mutating func string(_ s: String) {
        let utf8 = Array(s.utf8)
        u32(UInt32(utf8.count + 1))
        bytes.append(contentsOf: utf8)
        bytes.append(0)
    }
    /// A `uint8[]` sequence of `count` bytes that `fill` writes in place (pixels converted straight
    /// into the message).
    public mutating func byteSequence(count: Int, _ fill: (UnsafeMutableRawBufferPointer) -> Void) {
        u32(UInt32(count))
        let start = bytes.count
        bytes.append(contentsOf: repeatElement(0, count: count))
        bytes.withUnsafeMutableBytes { fill(UnsafeMutableRawBufferPointer(rebasing: $0[start..<(start + count)])) }
    }
    /// A `uint8[]` sequence.
    public mutating func byteSequence(_ data: some Collection<UInt8>) {
        u32(UInt32(data.count))
        bytes.append(contentsOf: data)
    }
}
