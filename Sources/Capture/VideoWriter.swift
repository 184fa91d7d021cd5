import CMedia
import DepthKit
import Foundation

/// Writes frames as H.264 in MP4 in-process through libavcodec (CMedia's `dl_mkv_writer`, the
/// encoder behind `record --mkv` and `convert --video`; no `ffmpeg` is run) on a writer thread, so
/// the caller never waits on the encoder. Constant frame rate: frame n at n/`fps` (the time base is
/// 1/fps as an exact fraction: 29.97 → 100/2997).
///
/// Frames are never dropped silently: `append` copies the frame into a queue of at most
/// `queueLimit` frames; when the encoder falls that far behind, the frame is dropped and counted
/// (`framesDropped`), and `finish` reports it. H.264 in yuv420p needs even dimensions: odd
/// widths or heights are padded by one black column or row on the right or bottom (the
/// picture is never scaled). The file appears under its name only when it was finished.
///
/// `@unchecked Sendable`: `queue`, `closed`, `writeError`, `written`, `dropped`, `writerDone` and
/// `held` are read and written under `condition`. `writer` (a C pointer) is set in `init` before
/// the writer thread starts, used by that thread until it sets `writerDone`, and freed (set nil)
/// by the caller's thread (`finish`, `cancel`) only after it saw `writerDone`.
public final class VideoWriter: @unchecked Sendable {
    public struct Summary: Sendable, CustomStringConvertible {
        public var path: String
        public var framesWritten: Int
        public var framesDropped: Int
        public var width: Int
        public var height: Int
        public var fps: Double
        /// Set when an odd size was padded to even ("641x481 padded to 642x482").
        public var padding: String?

        public var description: String {
            "\(framesWritten) frames to \(path) (\(width)x\(height) H.264 at \(formatRate(fps)) fps"
                + (padding.map { ", \($0)" } ?? "") + ")"
                + (framesDropped > 0 ? "; \(framesDropped) frames DROPPED: the encoder could not keep up" : "")
        }
    }

    public let path: String
    public let width: Int
    public let height: Int
    public let fps: Double
    public let queueLimit: Int

    /// The encoded size: `width` × `height` rounded up to even.
    private let paddedWidth: Int, paddedHeight: Int
    private let partialPath: String
    private var writer: OpaquePointer?
    private let condition = NSCondition()
    private var queue: [[UInt8]] = []
    private var closed = false
    private var writeError: String?
    private var written = 0
    private var dropped = 0
    private var writerDone = false
    /// Tests hold the writer thread to play an encoder that falls behind.
    private var held = false

    /// Frames encoded so far.
    public var framesWritten: Int { condition.lock(); defer { condition.unlock() }; return written }
    /// Frames dropped because the queue was full.
    public var framesDropped: Int { condition.lock(); defer { condition.unlock() }; return dropped }
    /// Frames accepted (written or queued).
    public var framesAccepted: Int { condition.lock(); defer { condition.unlock() }; return written + queue.count }

    /// `fps` as the time base num/den of one frame a tick (30 → 1/30, 29.97 → 100/2997).
    static func timeBase(fps: Double) -> (num: Int32, den: Int32) {
        if fps == fps.rounded() { return (1, Int32(fps)) }
        var num = 1000, den = Int((fps * 1000).rounded())
        var (a, b) = (num, den)
        while b != 0 { (a, b) = (b, a % b) }
        num /= a; den /= a
        return (Int32(num), Int32(den))
    }

    /// Opens `path.partial` (an .mp4) for frames of `width`×`height` at `fps` and writes the header.
    /// Throws `CaptureError.file` for a bad size or rate, a missing folder or an unwritable file.
    public init(path: String, width: Int, height: Int, fps: Double, queueLimit: Int = 16) throws {
        func bad(_ problem: String) -> CaptureError { .file(path: path, problem: problem) }
        guard width > 0, height > 0, width <= 16384, height <= 16384 else { throw bad("cannot record a \(width)x\(height) video") }
        guard fps > 0, fps.isFinite, fps <= 1000 else { throw bad("bad frame rate \(fps)") }
        let dir = (path as NSString).deletingLastPathComponent
        var isDir: ObjCBool = false
        if !dir.isEmpty, !(FileManager.default.fileExists(atPath: dir, isDirectory: &isDir) && isDir.boolValue) {
            throw bad("folder \(dir) does not exist")
        }
        self.path = path
        self.width = width
        self.height = height
        self.fps = fps
        self.queueLimit = max(1, queueLimit)
        paddedWidth = width + width % 2
        paddedHeight = height + height % 2
        partialPath = path + ".partial"
        var message = [CChar](repeating: 0, count: 512)
        var w: OpaquePointer?
        guard dl_mkv_writer_create(partialPath, &w, &message, message.count) == 0, let w else { throw bad(String(cBuffer: message)) }
        let tb = Self.timeBase(fps: fps)
        var r = dl_mkv_writer_set_container(w, "mp4", &message, message.count)
        if r == 0 { r = dl_mkv_writer_set_time_base(w, tb.num, tb.den, &message, message.count) }
        if r == 0 {
            r = dl_mkv_writer_add_track(w, DL_MKV_COLOR, Int32(paddedWidth), Int32(paddedHeight), 0, 23, "veryfast", &message, message.count)
        }
        if r == 0 { r = dl_mkv_writer_begin(w, &message, message.count) }
        guard r == 0 else {
            let problem = String(cBuffer: message)
            dl_mkv_writer_free(w)
            unlink(partialPath)
            throw bad(problem)
        }
        writer = w
        Thread.detachNewThread { [self] in writerLoop() }
    }

    deinit {
        if let writer {
            // Never finished: stop the thread, drop the file.
            condition.lock(); closed = true; held = false; queue.removeAll(); condition.broadcast()
            while !writerDone { condition.wait() }
            condition.unlock()
            dl_mkv_writer_free(writer)
            unlink(partialPath)
        }
    }

    /// Holds (or lets go of) the writer thread: frames queue up as behind a slow encoder (tests).
    func holdEncoder(_ hold: Bool) {
        condition.lock(); held = hold; condition.broadcast(); condition.unlock()
    }

    /// Queues one frame (rgba8, bgra8, rgb8 or gray8 of the writer's size).
    /// When the encoder is `queueLimit` frames behind, a real-time caller (`waitForRoom` false: the
    /// viewer, a camera) has the frame dropped and counted, and gets false; a caller that can wait
    /// (recording a file source) waits for room instead.
    /// Throws for a frame of another size, or once encoding has failed.
    @discardableResult
    public func append(_ frame: PixelBuffer, waitForRoom: Bool = false) throws -> Bool {
        guard frame.width == width, frame.height == height else {
            throw CaptureError.file(path: path, problem: "frame size changed from \(width)x\(height) to \(frame.width)x\(frame.height) while recording")
        }
        guard [PixelFormat.rgba8, .bgra8, .rgb8, .gray8].contains(frame.format) else {
            throw CaptureError.file(path: path, problem: "cannot record \(frame.format) frames as video")
        }
        condition.lock()
        if let e = writeError { condition.unlock(); throw CaptureError.file(path: path, problem: e) }
        while waitForRoom && queue.count >= queueLimit && writeError == nil { condition.wait() }
        if let e = writeError { condition.unlock(); throw CaptureError.file(path: path, problem: e) }
        if queue.count >= queueLimit { dropped += 1; condition.unlock(); return false }
        condition.unlock()
        let bytes = paddedRGBA(frame)
        condition.lock()
        queue.append(bytes)
        condition.signal()
        condition.unlock()
        return true
    }

    /// Packed RGBA bytes of a frame at the encoded size: a padding column or row is black.
    private func paddedRGBA(_ frame: PixelBuffer) -> [UInt8] {
        let rgba = frame.format == .rgba8 ? frame.packedBytes() : ImageIO.toRGBA8(frame).packedBytes()
        guard paddedWidth != width || paddedHeight != height else { return rgba }
        var out = [UInt8](repeating: 0, count: paddedWidth * paddedHeight * 4)
        for i in stride(from: 3, to: out.count, by: 4) { out[i] = 255 }
        for y in 0..<height {
            out.replaceSubrange((y * paddedWidth * 4)..<(y * paddedWidth * 4 + width * 4), with: rgba[(y * width * 4)..<((y + 1) * width * 4)])
        }
        return out
    }

    private func writerLoop() {
        var message = [CChar](repeating: 0, count: 512)
        while true {
            condition.lock()
            while (queue.isEmpty || held) && !closed { condition.wait() }
            if queue.isEmpty || writeError != nil {
                writerDone = true
                condition.broadcast()
                condition.unlock()
                return
            }
            let frame = queue.removeFirst()
            let pts = Int64(written)
            condition.broadcast()
            condition.unlock()
            guard let w = writer else { continue }
            let r = frame.withUnsafeBufferPointer {
                dl_mkv_writer_write_rgba(w, $0.baseAddress, paddedWidth * 4, pts, &message, message.count)
            }
            condition.lock()
            if r == 0 { written += 1 } else if writeError == nil {
                writeError = "encoding failed: \(String(cBuffer: message))"
                dropped += queue.count + 1
                queue.removeAll()
            }
            condition.broadcast()
            condition.unlock()
        }
    }

    /// Encodes what is queued, finishes the file and moves it into place.
    /// Throws (and removes the partial file) when encoding failed or no frame was written.
    public func finish() throws -> Summary {
        condition.lock()
        closed = true
        held = false
        condition.broadcast()
        while !writerDone { condition.wait() }
        let (n, d, wErr) = (written, dropped, writeError)
        condition.unlock()
        guard let w = writer else { throw CaptureError.invalidState("\(path): video already finished") }
        var message = [CChar](repeating: 0, count: 512)
        let r = dl_mkv_writer_finish(w, &message, message.count)
        dl_mkv_writer_free(w)
        writer = nil
        guard n > 0, wErr == nil, r == 0 else {
            unlink(partialPath)
            let why = n == 0 ? (wErr ?? "no frames were recorded") : wErr ?? "cannot finish the video: \(String(cBuffer: message))"
            throw CaptureError.file(path: path, problem: why)
        }
        guard rename(partialPath, path) == 0 else {
            let why = String(cString: strerror(errno))
            unlink(partialPath)
            throw CaptureError.file(path: path, problem: "cannot write: \(why)")
        }
        let padded = paddedWidth != width || paddedHeight != height ? "\(width)x\(height) padded to \(paddedWidth)x\(paddedHeight)" : nil
        return Summary(path: path, framesWritten: n, framesDropped: d, width: paddedWidth, height: paddedHeight, fps: fps, padding: padded)
    }

    /// Stops without keeping the file (an aborted recording).
    public func cancel() {
        condition.lock(); closed = true; held = false; queue.removeAll(); condition.broadcast()
        while !writerDone { condition.wait() }
        condition.unlock()
        if let w = writer { dl_mkv_writer_free(w); writer = nil }
        unlink(partialPath)
    }
}
