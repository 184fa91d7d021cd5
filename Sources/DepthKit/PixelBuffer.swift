#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A CPU frame: `height` rows of `bytesPerRow` bytes, in one page-aligned allocation so that a
/// Vulkan device can import it as host memory (`VK_EXT_external_memory_host`) without a copy.
///
/// A buffer is a reference type: its identity (`ObjectIdentifier`) is what the texture cache keys
/// GPU images on, and a `BufferPool` hands the same buffers out again once nobody holds them.
///
/// `@unchecked Sendable`: the size and format are `let`s; the pixels and `generation` belong to
/// one thread at a time, the one holding the buffer to fill it (a source's thread, a kernel's
/// workers on disjoint rows, the GPU readback), which then hands it on through a lock or a
/// semaphore (`SourcePrefetcher`'s queue, `FramePresenter`, a recorder's queue) and does not write
/// it again; readers read only after that handoff. A pool hands a buffer out again only when
/// nobody else holds it (`BufferPool.makeBuffer`).
public final class PixelBuffer: @unchecked Sendable {
    public let width: Int
    public let height: Int
    public let bytesPerRow: Int
    public let format: PixelFormat
    /// Start of the pixel storage (page aligned when this buffer allocated it).
    public var baseAddress: UnsafeMutableRawPointer { storage.pointer }
    /// Size of the allocation in bytes (a multiple of the page size when this buffer allocated it).
    public var allocationSize: Int { storage.size }
    /// The memory itself, as its own object: a GPU that imported these pages keeps `storage`
    /// alive until the import is gone, even after the buffer is released.
    public let storage: PixelStorage

    /// Bumped by writers (`markModified()`), read by caches to know when to upload again.
    public private(set) var generation: UInt64 = 0

    public static let alignment = 4096

    /// Allocates a zero-filled buffer. Rows are packed unless `bytesPerRow` is given.
    ///
    /// For sizes the program chooses (a kernel's output, a pool's frame); it traps when the memory
    /// cannot be had. A size that comes from input (a file's or a message's header) goes through
    /// `make(width:height:format:bytesPerRow:for:)`, which throws instead.
    public convenience init(width: Int, height: Int, format: PixelFormat, bytesPerRow: Int? = nil) {
        precondition(width > 0 && height > 0, "PixelBuffer needs a positive size")
        let rowBytes = bytesPerRow ?? width * format.bytesPerPixel
        precondition(rowBytes >= width * format.bytesPerPixel)
        guard let size = Self.allocationSize(rowBytes: rowBytes, height: height) else {
            fatalError("PixelBuffer: \(width)x\(height) \(format) is too large to address")
        }
        guard let storage = PixelStorage.allocate(size) else {
            fatalError("PixelBuffer: out of memory allocating \(size) bytes")
        }
        self.init(storage: storage, width: width, height: height, bytesPerRow: rowBytes, format: format)
    }

    /// A zero-filled buffer whose size comes from input, or a one-line error naming `name` (the
    /// file, message or topic) when the size is not positive, cannot be addressed, or the memory
    /// cannot be had — never a trap. Large buffers are mapped pages the kernel zeroes as they are
    /// first written (`PixelStorage.allocate`), so a header that claims more rows than its data
    /// holds costs only the rows actually decoded.
    public static func make(width: Int, height: Int, format: PixelFormat, bytesPerRow: Int? = nil,
                            for name: String) throws -> PixelBuffer {
        let (packed, overflow) = width.multipliedReportingOverflow(by: format.bytesPerPixel)
        let rowBytes = bytesPerRow ?? packed
        guard width > 0, height > 0, !overflow, rowBytes >= packed else {
            throw DepthKitError.file(path: name, problem: "image size \(width)x\(height) (\(format)) is not usable")
        }
        guard let size = allocationSize(rowBytes: rowBytes, height: height) else {
            throw DepthKitError.file(path: name, problem: "image size \(width)x\(height) (\(format)) is too large to address")
        }
        guard let storage = PixelStorage.allocate(size) else {
            throw DepthKitError.file(path: name, problem:
                "out of memory for a \(width)x\(height) \(format) image (\(size / 1_048_576) MiB)")
        }
        return PixelBuffer(storage: storage, width: width, height: height, bytesPerRow: rowBytes, format: format)
    }

    /// `rowBytes × height` rounded up to whole pages; nil when it overflows.
    private static func allocationSize(rowBytes: Int, height: Int) -> Int? {
        let (bytes, o1) = rowBytes.multipliedReportingOverflow(by: height)
        let (padded, o2) = bytes.addingReportingOverflow(alignment - 1)
        guard !o1, !o2 else { return nil }
        return padded / alignment * alignment
    }

    private init(storage: PixelStorage, width: Int, height: Int, bytesPerRow: Int, format: PixelFormat) {
        self.width = width
        self.height = height
        self.format = format
        self.bytesPerRow = bytesPerRow
        self.storage = storage
    }

    /// Wraps memory owned elsewhere (a mapped camera buffer); `deallocate` runs on deinit.
    public init(wrapping pointer: UnsafeMutableRawPointer, width: Int, height: Int, bytesPerRow: Int,
                format: PixelFormat, deallocate: ((UnsafeMutableRawPointer) -> Void)?) {
        self.width = width
        self.height = height
        self.bytesPerRow = bytesPerRow
        self.format = format
        self.storage = PixelStorage(pointer: pointer, size: bytesPerRow * height, deallocate: deallocate)
    }

    public var frameFormat: FrameFormat { FrameFormat(width: width, height: height, pixelFormat: format) }
    public var byteCount: Int { bytesPerRow * height }
    public var isPacked: Bool { bytesPerRow == width * format.bytesPerPixel }

    /// Marks the contents as changed (caches re-upload).
    public func markModified() { generation &+= 1 }

    /// Pointer to the first byte of row `y`.
    @inline(__always)
    public func row(_ y: Int) -> UnsafeMutableRawPointer { baseAddress + y * bytesPerRow }

    /// Typed pointer to row `y`.
    @inline(__always)
    public func row<T>(_ y: Int, as type: T.Type) -> UnsafeMutablePointer<T> {
        (baseAddress + y * bytesPerRow).assumingMemoryBound(to: T.self)
    }

    /// Copies pixels (row by row when strides differ) from another buffer of the same size and format.
    public func copy(from other: PixelBuffer) {
        precondition(other.width == width && other.height == height && other.format == format)
        if other.bytesPerRow == bytesPerRow {
            memcpy(baseAddress, other.baseAddress, byteCount)
        } else {
            let n = width * format.bytesPerPixel
            for y in 0..<height { memcpy(row(y), other.row(y), n) }
        }
        markModified()
    }

    /// A packed copy in a new buffer.
    public func clone() -> PixelBuffer {
        let b = PixelBuffer(width: width, height: height, format: format)
        b.copy(from: self)
        return b
    }

    /// The packed pixel bytes (for tests and writers).
    public func packedBytes() -> [UInt8] {
        let n = width * format.bytesPerPixel
        var out = [UInt8](repeating: 0, count: n * height)
        out.withUnsafeMutableBytes { dst in
            for y in 0..<height { memcpy(dst.baseAddress! + y * n, row(y), n) }
        }
        return out
    }

    // MARK: Pixel access (tests, readouts; not for hot loops)

    /// The 4 channels of an 8-bit color pixel as (r, g, b, a), whatever the channel order.
    public func rgba(x: Int, y: Int) -> (UInt8, UInt8, UInt8, UInt8) {
        let p = row(y, as: UInt8.self) + x * format.bytesPerPixel
        switch format {
        case .rgba8: return (p[0], p[1], p[2], p[3])
        case .bgra8: return (p[2], p[1], p[0], p[3])
        case .rgb8: return (p[0], p[1], p[2], 255)
        case .gray8: return (p[0], p[0], p[0], 255)
        case .gray16, .depthFloat16, .depthFloat32, .disparityFloat16, .disparityFloat32: preconditionFailure("rgba(x:y:) on \(format)")
        }
    }

    public func setRGBA(x: Int, y: Int, _ c: (UInt8, UInt8, UInt8, UInt8)) {
        let p = row(y, as: UInt8.self) + x * format.bytesPerPixel
        switch format {
        case .rgba8: p[0] = c.0; p[1] = c.1; p[2] = c.2; p[3] = c.3
        case .bgra8: p[0] = c.2; p[1] = c.1; p[2] = c.0; p[3] = c.3
        case .rgb8: p[0] = c.0; p[1] = c.1; p[2] = c.2
        case .gray8: p[0] = c.0
        case .gray16, .depthFloat16, .depthFloat32, .disparityFloat16, .disparityFloat32: preconditionFailure("setRGBA on \(format)")
        }
    }

    /// The raw sample at (x, y) as a Float: depth/disparity value, 16-bit count, or 8-bit value.
    public func sample(x: Int, y: Int) -> Float {
        switch format {
        case .depthFloat32, .disparityFloat32: return row(y, as: Float.self)[x]
        case .depthFloat16, .disparityFloat16: return Float(row(y, as: Float16.self)[x])
        case .gray16: return Float(row(y, as: UInt16.self)[x])
        case .gray8: return Float(row(y, as: UInt8.self)[x])
        case .bgra8, .rgba8, .rgb8: preconditionFailure("sample(x:y:) on \(format)")
        }
    }

    public func setSample(x: Int, y: Int, _ v: Float) {
        switch format {
        case .depthFloat32, .disparityFloat32: row(y, as: Float.self)[x] = v
        case .depthFloat16, .disparityFloat16: row(y, as: Float16.self)[x] = Float16(v)
        case .gray16: row(y, as: UInt16.self)[x] = UInt16(max(0, min(65535, v.rounded())))
        case .gray8: row(y, as: UInt8.self)[x] = UInt8(max(0, min(255, v.rounded())))
        case .bgra8, .rgba8, .rgb8: preconditionFailure("setSample on \(format)")
        }
    }
}

/// The memory behind a `PixelBuffer`, freed when the last holder lets go.
///
/// `@unchecked Sendable`: every field is a `let` (a raw pointer and its free function, neither
/// Sendable); the bytes they point at follow `PixelBuffer`'s ownership, and `deinit` runs once,
/// when no thread holds the storage.
public final class PixelStorage: @unchecked Sendable {
    public let pointer: UnsafeMutableRawPointer
    public let size: Int
    private let deallocate: ((UnsafeMutableRawPointer) -> Void)?

    init(pointer: UnsafeMutableRawPointer, size: Int, deallocate: ((UnsafeMutableRawPointer) -> Void)?) {
        self.pointer = pointer
        self.size = size
        self.deallocate = deallocate
    }

    /// Allocations of at least this many bytes are anonymous mappings (`mmap`): page aligned, and
    /// zeroed by the kernel page by page as they are first touched, so memory is committed as the
    /// pixels are written (a decoder that fails after a few rows of a picture whose header claims
    /// a gigabyte has cost a few rows), and the whole size is never written with zeros. Smaller
    /// ones come from `posix_memalign` and are zeroed here.
    public static let mappedThreshold = 1 << 20

    /// `size` zero-filled bytes, page aligned (`size` a multiple of `PixelBuffer.alignment`), or
    /// nil when the system has no memory (or address space) for them.
    static func allocate(_ size: Int) -> PixelStorage? {
        precondition(size > 0 && size % PixelBuffer.alignment == 0)
        if size >= mappedThreshold {
            guard let p = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
                  p != UnsafeMutableRawPointer(bitPattern: -1) else { return nil }
            return PixelStorage(pointer: p, size: size, deallocate: { _ = munmap($0, size) })
        }
        var raw: UnsafeMutableRawPointer?
        guard posix_memalign(&raw, PixelBuffer.alignment, size) == 0, let raw else { return nil }
        memset(raw, 0, size)
        return PixelStorage(pointer: raw, size: size, deallocate: { free($0) })
    }

    deinit { deallocate?(pointer) }
}

/// True for a depth (or disparity) value that may reach a kernel as a number:
/// finite and strictly positive. 0, NaN, ±Inf and negatives are invalid.
@inline(__always)
public func isValidDepth(_ d: Float) -> Bool { d > 0 && d < .infinity }
