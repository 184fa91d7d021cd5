import CDepthKit

/// Apple's LZFSE compression, decoding only: Record3D's `.r3d` frames store `rgbd/N.depth`
/// (float32 meters) and `rgbd/N.conf` (uint8) as LZFSE streams, and LZFSE has no Debian
/// package. The decoder is C (`Sources/CDepthKit/lzfse.c`, the format as Apple's reference
/// implementation decodes it): a byte loop like CDepthKit's other loops, fast in debug builds
/// too, fuzzed under AddressSanitizer.
///
/// Memory follows the data: the block headers are walked first (nothing allocated), the output
/// is allocated at the size they declare and never more than `maxOutput` (the caller knows the
/// frame: width×height×4 for depth), and every block is decoded inside that buffer with each
/// read and write checked. Bad data is one `DepthKitError.file` naming `name`:
/// "corrupt LZFSE data (block 1 (bvx2) at byte 43210: …)".
public enum LZFSE {
    /// The decoded bytes of the LZFSE stream `bytes` (all of its blocks up to the end-of-stream
    /// block; bytes after it are ignored, as Apple's decoder does). Throws when the stream is
    /// malformed or would decode to more than `maxOutput` bytes.
    public static func decode(_ bytes: some Collection<UInt8>, maxOutput: Int, name: String) throws -> [UInt8] {
        guard maxOutput >= 0 else { throw DepthKitError.invalidArgument("LZFSE.decode: maxOutput \(maxOutput) is negative") }
        if let result = try bytes.withContiguousStorageIfAvailable({ try decode(buffer: $0, maxOutput: maxOutput, name: name) }) {
            return result
        }
        return try Array(bytes).withUnsafeBufferPointer { try decode(buffer: $0, maxOutput: maxOutput, name: name) }
    }

    private static func decode(buffer src: UnsafeBufferPointer<UInt8>, maxOutput: Int, name: String) throws -> [UInt8] {
        var err = [CChar](repeating: 0, count: 256)
        func corrupt(_ what: String) -> DepthKitError { .file(path: name, problem: "corrupt LZFSE data (\(what))") }
        // An empty buffer may have no base address; the C side reads nothing of it.
        let empty: [UInt8] = [0]
        return try empty.withUnsafeBufferPointer { placeholder in
            let base = src.baseAddress ?? placeholder.baseAddress!
            var declared: UInt64 = 0
            guard dl_lzfse_decoded_size(base, src.count, &declared, &err, err.count) == 0 else {
                throw corrupt(String(cBuffer: err))
            }
            guard declared <= UInt64(maxOutput) else {
                throw corrupt("decodes to \(declared) bytes, more than the \(maxOutput) expected")
            }
            let capacity = Int(declared)
            var failure: String?
            let out = [UInt8](unsafeUninitializedCapacity: max(capacity, 1)) { dst, count in
                var written = 0
                if dl_lzfse_decode(base, src.count, dst.baseAddress!, capacity, &written, &err, err.count) == 0 {
                    count = written
                } else {
                    // Uninitialized bytes must not become elements: nothing is kept.
                    count = 0
                    failure = String(cBuffer: err)
                }
            }
            if let failure { throw corrupt(failure) }
            guard out.count == capacity else {
                throw corrupt("decodes to \(out.count) bytes, its headers say \(capacity)")
            }
            return out
        }
    }
}
