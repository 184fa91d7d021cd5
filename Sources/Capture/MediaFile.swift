import CMedia
import DepthKit

/// A container opened through libavformat (CMedia's `dl_media`), closed when released.
/// Errors are `CaptureError.file` naming `name` (the file, or "mkv:<memory>").
final class MediaFile {
    let handle: OpaquePointer
    let name: String
    let streams: [dl_media_stream_info]

    struct Packet {
        var stream: Int32
        var keyframe: Bool
        /// In the stream's time base; nil when unknown.
        var pts: Int64?
        var ptsNS: Int64?
        /// Byte offset in the file; nil when unknown.
        var position: Int64?
        var data: UnsafePointer<UInt8>?
        var size: Int
        var bytes: [UInt8] { data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [] }
    }

    private var message = [CChar](repeating: 0, count: 512)

    private init(handle: OpaquePointer, name: String) {
        self.handle = handle
        self.name = name
        var s: [dl_media_stream_info] = []
        for i in 0..<dl_media_stream_count(handle) {
            var info = dl_media_stream_info()
            if dl_media_stream_info_get(handle, i, &info) == 0 { s.append(info) }
        }
        streams = s
    }

    deinit { dl_media_close(handle) }

    /// Opens a file with the demuxer `format` ("matroska", "mov" for MP4): the kind of container
    /// the source expects, never a probe over every demuxer (an `rgb.mp4` that is really an HLS
    /// playlist would open the files or URLs it names). Nothing the file names is opened
    /// (`dl_media_open_file`).
    static func open(path: String, format: String) throws -> MediaFile {
        var h: OpaquePointer?
        var message = [CChar](repeating: 0, count: 512)
        let r = dl_media_open_file(path, format, &h, &message, message.count)
        guard r == 0, let h else { throw CaptureError.file(path: path, problem: String(cBuffer: message)) }
        return MediaFile(handle: h, name: path)
    }

    /// Opens bytes in memory (through a custom AVIOContext) with the demuxer `format`; nothing else
    /// is opened.
    static func open(bytes: [UInt8], name: String, format: String) throws -> MediaFile {
        var h: OpaquePointer?
        var message = [CChar](repeating: 0, count: 512)
        let r = bytes.withUnsafeBufferPointer { dl_media_open_memory($0.baseAddress, $0.count, format, &h, &message, message.count) }
        guard r == 0, let h else { throw CaptureError.file(path: name, problem: String(cBuffer: message)) }
        return MediaFile(handle: h, name: name)
    }

    private func fail(_ what: String? = nil) -> CaptureError {
        let m = String(cBuffer: message)
        return .file(path: name, problem: what.map { "\($0): \(m)" } ?? m)
    }

    var durationMicroseconds: Int64? {
        let d = dl_media_duration_us(handle)
        return d == Int64.min ? nil : d
    }

    /// Tags of the container (`stream` -1) or of a stream.
    func tags(stream: Int32) -> [(key: String, value: String)] {
        var out: [(String, String)] = []
        for i in 0..<dl_media_tag_count(handle, stream) {
            var k: UnsafePointer<CChar>?, v: UnsafePointer<CChar>?
            if dl_media_tag_at(handle, stream, i, &k, &v) == 0, let k, let v {
                out.append((String(cString: k), String(cString: v)))
            }
        }
        return out
    }

    func attachment(stream: Int32) -> [UInt8] {
        var p: UnsafePointer<UInt8>?
        var n = 0
        guard dl_media_attachment_data(handle, stream, &p, &n) == 0, let p else { return [] }
        return Array(UnsafeBufferPointer(start: p, count: n))
    }

    /// The next packet, or nil at the end. The data is valid until the next call.
    func readPacket() throws -> Packet? {
        var p = dl_media_packet()
        let r = dl_media_read_packet(handle, &p, &message, message.count)
        if r == DL_MEDIA_EOF { return nil }
        guard r == 0 else { throw fail() }
        return Packet(stream: p.stream, keyframe: p.keyframe != 0, pts: p.pts == Int64.min ? nil : p.pts,
                      ptsNS: p.pts_ns == Int64.min ? nil : p.pts_ns, position: p.position < 0 ? nil : p.position,
                      data: p.data, size: p.size)
    }

    /// Seeks to a keyframe of `stream` at or before `timestamp` (the stream's time base).
    func seek(stream: Int32, timestamp: Int64) throws {
        guard dl_media_seek(handle, stream, timestamp, &message, message.count) == 0 else { throw fail() }
    }

    func openDecoder(stream: Int32) throws {
        guard dl_media_decoder_open(handle, stream, &message, message.count) == 0 else { throw fail() }
    }

    /// Sends a packet; returns false when the decoder must first give frames back (EAGAIN).
    func send(stream: Int32, bytes: UnsafeRawBufferPointer, pts: Int64?, keyframe: Bool) throws -> Bool {
        let r = dl_media_send_packet(handle, stream, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count,
                                     pts ?? Int64.min, keyframe ? 1 : 0, &message, message.count)
        if r == DL_MEDIA_AGAIN { return false }
        if r == DL_MEDIA_EOF { return true }
        guard r == 0 else { throw fail() }
        return true
    }

    func sendEOF(stream: Int32) throws {
        let r = dl_media_send_eof(handle, stream, &message, message.count)
        guard r == 0 || r == DL_MEDIA_EOF || r == DL_MEDIA_AGAIN else { throw fail() }
    }

    enum Received { case frame(pts: Int64?, width: Int, height: Int), again, end }

    func receive(stream: Int32) throws -> Received {
        var pts: Int64 = 0
        var w: Int32 = 0, h: Int32 = 0
        let r = dl_media_receive_frame(handle, stream, &pts, &w, &h, &message, message.count)
        if r == DL_MEDIA_AGAIN { return .again }
        if r == DL_MEDIA_EOF { return .end }
        guard r == 0 else { throw fail() }
        return .frame(pts: pts == Int64.min ? nil : pts, width: Int(w), height: Int(h))
    }

    /// Converts the frame `receive` holds into `dst` (rgba8 or gray16 of the frame's size).
    func convert(stream: Int32, into dst: PixelBuffer) throws {
        let r = dl_media_convert_frame(handle, stream, Self.outputFormat(dst), dst.baseAddress.assumingMemoryBound(to: UInt8.self),
                                       dst.bytesPerRow, Int32(dst.width), Int32(dst.height), &message, message.count)
        guard r == 0 else { throw fail() }
        dst.markModified()
    }

    func flushDecoder(stream: Int32) { dl_media_decoder_flush(handle, stream) }

    /// CMedia's output format for a buffer: rgba8 or 16-bit gray.
    static func outputFormat(_ dst: PixelBuffer) -> Int32 {
        switch dst.format {
        case .rgba8: return DL_MEDIA_RGBA8
        case .gray16: return DL_MEDIA_GRAY16
        case .bgra8, .rgb8, .gray8, .depthFloat16, .depthFloat32, .disparityFloat16, .disparityFloat32:
            preconditionFailure("convert into \(dst.format)")
        }
    }

    /// A copy of `stream`'s decoding parameters, for decoders apart from the file (`FrameDecoders`).
    func streamParameters(stream: Int32) throws -> StreamParameters {
        var p: OpaquePointer?
        guard dl_media_stream_params(handle, stream, &p, &message, message.count) == 0, let p else { throw fail() }
        return StreamParameters(p)
    }
}

/// One packet's way through a decoder, as `MKVSource` decodes a frame: the file's own decoder of a
/// stream (`MediaFile`, read in order) or one apart from the file (`FrameDecoder`, any thread).
protocol PacketDecoding {
    func openDecoder() throws
    func flush()
    /// False when the decoder must first give frames back (EAGAIN).
    func send(_ bytes: UnsafeRawBufferPointer, pts: Int64?, keyframe: Bool) throws -> Bool
    func sendEOF() throws
    func receive() throws -> MediaFile.Received
    /// The frame `receive` holds into `dst` (rgba8 or gray16 of the frame's size).
    func convert(into dst: PixelBuffer) throws
}

/// A stream's decoding parameters copied out of a `MediaFile` (`dl_stream_params`).
/// `@unchecked Sendable`: immutable once made (decoders only read it); freed when released.
final class StreamParameters: @unchecked Sendable {
    let handle: OpaquePointer
    init(_ handle: OpaquePointer) { self.handle = handle }
    deinit { dl_stream_params_free(handle) }
}

/// A decoder of one stream's packets apart from its file (`dl_frame_decoder`): the same codec
/// context, conversion, return codes and messages as the file's own decoder. Errors are
/// `CaptureError.file` naming `name`.
/// `@unchecked Sendable`: used by one thread at a time — `FrameDecoders` hands it to one caller and
/// takes it back under its lock; `message` is written only by that caller.
final class FrameDecoder: PacketDecoding, @unchecked Sendable {
    let handle: OpaquePointer
    let name: String
    private var message = [CChar](repeating: 0, count: 512)

    init(_ parameters: StreamParameters, name: String) throws {
        var h: OpaquePointer?
        var message = [CChar](repeating: 0, count: 512)
        guard dl_frame_decoder_open(parameters.handle, &h, &message, message.count) == 0, let h else {
            throw CaptureError.file(path: name, problem: String(cBuffer: message))
        }
        handle = h
        self.name = name
    }

    deinit { dl_frame_decoder_close(handle) }

    private func fail() -> CaptureError { .file(path: name, problem: String(cBuffer: message)) }

    func openDecoder() throws {}

    func flush() { dl_frame_flush(handle) }

    func send(_ bytes: UnsafeRawBufferPointer, pts: Int64?, keyframe: Bool) throws -> Bool {
        let r = dl_frame_send_packet(handle, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count, pts ?? Int64.min,
                                     keyframe ? 1 : 0, &message, message.count)
        if r == DL_MEDIA_AGAIN { return false }
        if r == DL_MEDIA_EOF { return true }
        guard r == 0 else { throw fail() }
        return true
    }

    func sendEOF() throws {
        let r = dl_frame_send_eof(handle, &message, message.count)
        guard r == 0 || r == DL_MEDIA_EOF || r == DL_MEDIA_AGAIN else { throw fail() }
    }

    func receive() throws -> MediaFile.Received {
        var pts: Int64 = 0
        var w: Int32 = 0, h: Int32 = 0
        let r = dl_frame_receive(handle, &pts, &w, &h, &message, message.count)
        if r == DL_MEDIA_AGAIN { return .again }
        if r == DL_MEDIA_EOF { return .end }
        guard r == 0 else { throw fail() }
        return .frame(pts: pts == Int64.min ? nil : pts, width: Int(w), height: Int(h))
    }

    func convert(into dst: PixelBuffer) throws {
        let r = dl_frame_convert(handle, MediaFile.outputFormat(dst), dst.baseAddress.assumingMemoryBound(to: UInt8.self),
                                 dst.bytesPerRow, Int32(dst.width), Int32(dst.height), &message, message.count)
        guard r == 0 else { throw fail() }
        dst.markModified()
    }
}

/// Decoders of one stream's packets for several threads at once (`convert`'s workers decoding an
/// intra-only track): a caller takes an idle decoder (or a new one), decodes, and gives it back.
final class FrameDecoders: Sendable {
    let parameters: StreamParameters
    let name: String
    private let idle = Locked<[FrameDecoder]>([])

    init(_ parameters: StreamParameters, name: String) {
        self.parameters = parameters
        self.name = name
    }

    func with<T>(_ body: (FrameDecoder) throws -> T) throws -> T {
        let d = try idle.withLock { $0.popLast() } ?? FrameDecoder(parameters, name: name)
        defer { idle.withLock { $0.append(d) } }
        return try body(d)
    }
}

extension dl_media_stream_info {
    private static func string<T>(_ tuple: T) -> String {
        withUnsafeBytes(of: tuple) { raw in
            let bytes = raw.prefix { $0 != 0 }
            return String(decoding: bytes, as: UTF8.self)
        }
    }
    var titleString: String { Self.string(title) }
    var codecNameString: String { Self.string(codec_name) }
    var pixelFormatNameString: String { Self.string(pixel_format_name) }
    var filenameString: String { Self.string(filename) }
    var mimetypeString: String { Self.string(mimetype) }
    /// The FourCC as text when it is four printable characters ("MJPG", "b16g"), else nil.
    var fourCC: String? {
        guard codec_tag != 0 else { return nil }
        let b = (0..<4).map { UInt8(truncatingIfNeeded: codec_tag >> (8 * $0)) }
        guard b.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { return nil }
        return String(decoding: b, as: UTF8.self)
    }
}
