import CVulkan
import Foundation

/// Small conversions between Swift and Vulkan's C types.
public enum Vk {
    /// `VK_MAKE_API_VERSION(0, major, minor, patch)` (a C macro Swift cannot import).
    static func version(_ major: UInt32, _ minor: UInt32, _ patch: UInt32 = 0) -> UInt32 {
        (major << 22) | (minor << 12) | patch
    }

    static func versionString(_ v: UInt32) -> String {
        "\(v >> 22 & 0x7F).\(v >> 12 & 0x3FF).\(v & 0xFFF)"
    }

    /// A fixed-size C `char` array (imported as a tuple) as a String.
    static func string<T>(_ tuple: T) -> String {
        withUnsafeBytes(of: tuple) { raw in
            let bytes = raw.prefix { $0 != 0 }
            return String(decoding: bytes, as: UTF8.self)
        }
    }

    /// Calls `body` with a C array of C strings that lives for the call.
    static func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>?) throws -> R) rethrows -> R {
        let owned = strings.map { strdup($0) }
        defer { owned.forEach { free($0) } }
        let ptrs: [UnsafePointer<CChar>?] = owned.map { UnsafePointer($0) }
        return try ptrs.withUnsafeBufferPointer { try body($0.baseAddress) }
    }

    /// The usual two-call enumeration (`count`, then fill).
    public static func enumerate<T>(_ zero: T, _ call: (UnsafeMutablePointer<UInt32>, UnsafeMutablePointer<T>?) -> VkResult,
                             name: String) throws -> [T] {
        var count: UInt32 = 0
        try vkCheck(call(&count, nil), name)
        var items = [T](repeating: zero, count: Int(count))
        if count > 0 {
            _ = try items.withUnsafeMutableBufferPointer { try vkCheck(call(&count, $0.baseAddress), name) }
        }
        return Array(items.prefix(Int(count)))
    }

    public static func flags<T: RawRepresentable>(_ bits: T...) -> UInt32 where T.RawValue == UInt32 {
        bits.reduce(0) { $0 | $1.rawValue }
    }
}

/// Milliseconds between two `DispatchTime`s.
func milliseconds(since start: DispatchTime) -> Double {
    Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e6
}
