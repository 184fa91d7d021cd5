import DepthKit
import Foundation

/// Writes frames as H.264 in MP4 through an `ffmpeg` child process: raw RGBA frames go to its
/// standard input from a writer thread, so the caller never waits on the encoder.
///
/// Frames are never dropped silently: `append` copies the frame into a queue of at most
/// `queueLimit` frames; when ffmpeg falls that far behind, the frame is dropped and counted
/// (`framesDropped`), and `finish` reports it. H.264 in yuv420p needs even dimensions: odd
/// widths or heights are padded by one black column or row on the right or bottom (the
/// picture is never scaled). The file appears under its name only when ffmpeg succeeded.
///
/// `@unchecked Sendable`: `queue`, `closed`, `writeError`, `written`, `dropped`, `writerDone` and
/// `stderrData` are read and written under `condition`; the writer thread otherwise uses only
/// `let`s (`stdinFD`); `process` and `stdinHandle` (not Sendable) belong to the caller's thread
/// (`init`, `finish`, `cancel`, `deinit`).
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
                + (framesDropped > 0 ? "; \(framesDropped) frames DROPPED: ffmpeg could not keep up" : "")
        }
    }

    public let path: String
    public let width: Int
    public let height: Int
    public let fps: Double
    public let queueLimit: Int

    private let process = Process()
    private let stdinFD: Int32
    private let stdinHandle: FileHandle
    private let partialPath: String
    private let condition = NSCondition()
    private var queue: [[UInt8]] = []
    private var closed = false
    private var writeError: String?
    private var written = 0
    private var dropped = 0
    private var writerDone = false
    private var stderrData = Data()
    private let stderrDone = DispatchSemaphore(value: 0)

    /// Frames handed to ffmpeg so far.
    public var framesWritten: Int { condition.lock(); defer { condition.unlock() }; return written }
    /// Frames dropped because the queue was full.
    public var framesDropped: Int { condition.lock(); defer { condition.unlock() }; return dropped }
    /// Frames accepted (written or queued).
    public var framesAccepted: Int { condition.lock(); defer { condition.unlock() }; return written + queue.count }

    /// The ffmpeg child's process id.
    public var ffmpegPID: Int32 { process.processIdentifier }

    /// `ffmpeg` on PATH (or `DEPTHLENS_FFMPEG`); nil when there is none.
    public static func findFFmpeg() -> String? {
        if let p = ProcessInfo.processInfo.environment["DEPTHLENS_FFMPEG"], !p.isEmpty {
            return FileManager.default.isExecutableFile(atPath: p) ? p : nil
        }
        return executable(named: "ffmpeg")
    }

    /// The first executable `name` in PATH's folders.
    static func executable(named name: String) -> String? {
        (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
            .map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    public static let missingFFmpeg = "ffmpeg not found: install it to record video (Debian/Ubuntu: apt-get install ffmpeg; ./scripts/run installs it)"

    /// Starts ffmpeg writing `path` (an .mp4) for frames of `width`×`height` at `fps`.
    /// Throws `CaptureError.file` for a missing ffmpeg, a bad size or rate, or an unwritable folder.
    public init(path: String, width: Int, height: Int, fps: Double, queueLimit: Int = 16) throws {
        guard width > 0, height > 0, width <= 16384, height <= 16384 else {
            throw CaptureError.file(path: path, problem: "cannot record a \(width)x\(height) video")
        }
        guard fps > 0, fps.isFinite, fps <= 1000 else { throw CaptureError.file(path: path, problem: "bad frame rate \(fps)") }
        guard let ffmpeg = Self.findFFmpeg() else { throw CaptureError.file(path: path, problem: Self.missingFFmpeg) }
        let dir = (path as NSString).deletingLastPathComponent
        var isDir: ObjCBool = false
        if !dir.isEmpty, !(FileManager.default.fileExists(atPath: dir, isDirectory: &isDir) && isDir.boolValue) {
            throw CaptureError.file(path: path, problem: "folder \(dir) does not exist")
        }
        self.path = path
        self.width = width
        self.height = height
        self.fps = fps
        self.queueLimit = max(1, queueLimit)
        partialPath = path + ".partial"
        guard FileManager.default.createFile(atPath: partialPath, contents: nil) else {
            throw CaptureError.file(path: path, problem: "cannot write: \(String(cString: strerror(errno)))")
        }
        // Rate as a fraction ffmpeg reads exactly (29.97 → 29970/1000).
        let rate = fps == fps.rounded() ? "\(Int(fps))" : "\(Int((fps * 1000).rounded()))/1000"
        process.executableURL = URL(fileURLWithPath: ffmpeg)
        process.arguments = ["-nostdin", "-hide_banner", "-loglevel", "error", "-y",
                             "-f", "rawvideo", "-pix_fmt", "rgba", "-s", "\(width)x\(height)", "-framerate", rate, "-i", "pipe:0",
                             "-vf", "pad=ceil(iw/2)*2:ceil(ih/2)*2", "-c:v", "libx264", "-preset", "veryfast",
                             "-pix_fmt", "yuv420p", "-r", rate, "-f", "mp4", "-movflags", "+faststart", partialPath]
        let input = Pipe(), errors = Pipe()
        process.standardInput = input
        process.standardOutput = FileHandle.nullDevice
        process.standardError = errors
        // A dead ffmpeg must give EPIPE on write, not kill us.
        signal(SIGPIPE, SIG_IGN)
        do { try process.run() } catch {
            try? FileManager.default.removeItem(atPath: partialPath)
            throw CaptureError.file(path: path, problem: "cannot start \(ffmpeg): \(error)")
        }
        stdinHandle = input.fileHandleForWriting
        stdinFD = stdinHandle.fileDescriptor
        let errHandle = errors.fileHandleForReading
        Thread.detachNewThread { [self] in
            let d = errHandle.readDataToEndOfFile()
            condition.lock(); stderrData = d; condition.unlock()
            stderrDone.signal()
        }
        Thread.detachNewThread { [self] in writerLoop() }
    }

    deinit {
        if process.isRunning { process.terminate() }
    }

    /// Queues one frame (rgba8, bgra8, rgb8 or gray8 of the writer's size).
    /// When ffmpeg is `queueLimit` frames behind, a real-time caller (`waitForRoom` false: the
    /// viewer, a camera) has the frame dropped and counted, and gets false; a caller that can wait
    /// (recording a file source) waits for room instead.
    /// Throws for a frame of another size, or once ffmpeg has failed.
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
        let bytes = Self.rgbaBytes(frame)
        condition.lock()
        queue.append(bytes)
        condition.signal()
        condition.unlock()
        return true
    }

    /// Packed RGBA bytes of a frame.
    static func rgbaBytes(_ frame: PixelBuffer) -> [UInt8] {
        frame.format == .rgba8 ? frame.packedBytes() : ImageIO.toRGBA8(frame).packedBytes()
    }

    private func writerLoop() {
        while true {
            condition.lock()
            while queue.isEmpty && !closed { condition.wait() }
            if queue.isEmpty && closed { writerDone = true; condition.broadcast(); condition.unlock(); return }
            let frame = queue.removeFirst()
            condition.broadcast()
            condition.unlock()
            let ok = frame.withUnsafeBytes { raw -> Bool in
                var off = 0
                while off < raw.count {
                    let n = Glibc.write(stdinFD, raw.baseAddress! + off, raw.count - off)
                    if n < 0 { if errno == EINTR { continue }; return false }
                    off += n
                }
                return true
            }
            condition.lock()
            if ok { written += 1 } else if writeError == nil {
                writeError = "ffmpeg stopped taking frames (\(String(cString: strerror(errno))))"
                dropped += queue.count + 1
                queue.removeAll()
            }
            condition.broadcast()
            condition.unlock()
        }
    }

    /// Writes what is queued, closes ffmpeg's input, waits for it and moves the file into place.
    /// Throws (and removes the partial file) when ffmpeg failed or no frame was written.
    public func finish() throws -> Summary {
        condition.lock()
        closed = true
        condition.broadcast()
        while !writerDone { condition.wait() }
        condition.unlock()
        try? stdinHandle.close()
        process.waitUntilExit()
        stderrDone.wait()
        condition.lock()
        let errText = String(decoding: stderrData, as: UTF8.self).split(separator: "\n").last.map(String.init)
        let (n, d, wErr) = (written, dropped, writeError)
        condition.unlock()
        guard process.terminationStatus == 0, n > 0 else {
            try? FileManager.default.removeItem(atPath: partialPath)
            let why = n == 0 ? "no frames were recorded"
                : "ffmpeg failed (status \(process.terminationStatus)): \(errText ?? wErr ?? "no message")"
            throw CaptureError.file(path: path, problem: why)
        }
        guard rename(partialPath, path) == 0 else {
            try? FileManager.default.removeItem(atPath: partialPath)
            throw CaptureError.file(path: path, problem: "cannot write: \(String(cString: strerror(errno)))")
        }
        let padded = width % 2 != 0 || height % 2 != 0
            ? "\(width)x\(height) padded to \(width + width % 2)x\(height + height % 2)" : nil
        return Summary(path: path, framesWritten: n, framesDropped: d, width: width + width % 2, height: height + height % 2,
                       fps: fps, padding: padded)
    }

    /// Stops ffmpeg without keeping the file (an aborted recording).
    public func cancel() {
        condition.lock(); closed = true; queue.removeAll(); condition.broadcast(); condition.unlock()
        if process.isRunning { process.terminate() }
        try? stdinHandle.close()
        process.waitUntilExit()
        try? FileManager.default.removeItem(atPath: partialPath)
    }
}
