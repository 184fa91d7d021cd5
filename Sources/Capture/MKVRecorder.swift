import CMedia
import DepthKit
import Foundation

/// Records RGB-D frames into one Matroska file through libavformat / libavcodec in-process (CMedia's
/// `dl_mkv_writer`): a COLOR track (H.264 by default, FFV1 bgr0 with `lossless`: bit-exact), a
/// DEPTH track in 16-bit FFV1 (lossless: depth comes back bit-exact at `depthUnitsPerMeter`), an
/// IR track when one is given, each frame at its own timestamp (microseconds from the first frame;
/// the first frame's time is the `DEPTHLENS_START_OFFSET_US` tag), the calibration as a
/// `calibration.json` attachment (depthlens' `RGBDCalibration` schema, `depth_scale` = the depth
/// track's units) and tags (`DEPTHLENS_DEPTH_SCALE`, `DEPTHLENS_SOURCE`, `DEVICE_NAME`…).
/// `MKVSource` (`mkv:FILE`) plays it back; ffmpeg, ffprobe, VLC and OpenCV open its tracks.
///
/// Frames are encoded on the recorder's own thread: `append` converts and copies the frame into a
/// queue of at most `queueLimit` frames; a real-time caller (`waitForRoom` false: a camera, the
/// viewer) has a frame dropped and counted when the queue is full, a file source waits. The file
/// is written as `path + ".partial"` and renamed by `finish()`; the container is finished (trailer,
/// index) on every path — after an encoding error or a stop signal what was recorded stays playable.
///
/// `@unchecked Sendable`: `queue`, `closed`, `writerDone`, `finished`, `failure`, the counters,
/// `encodeTotal`/`encodeMax` and `lastMicros` are read and written under `condition`. `writer` (a
/// C pointer) is set before the writer thread starts, used by that thread until it sets
/// `writerDone`, and freed (set nil) by the caller's thread only after it saw `writerDone`.
public final class MKVRecorder: @unchecked Sendable {
    public struct Options: Sendable {
        /// FFV1 (bit-exact) instead of H.264 for the COLOR track.
        public var lossless = false
        /// libx264's constant rate factor (0–51; lower is better and bigger).
        public var crf = 23
        /// libx264's preset.
        public var preset = "veryfast"
        /// Frames the encoder may fall behind before a real-time caller's frames are dropped.
        public var queueLimit = 16
        public init(lossless: Bool = false, crf: Int = 23, preset: String = "veryfast", queueLimit: Int = 16) {
            self.lossless = lossless
            self.crf = crf
            self.preset = preset
            self.queueLimit = queueLimit
        }
    }

    public struct Summary: Sendable, CustomStringConvertible {
        public var path: String
        /// Frames encoded (each a COLOR packet and, when it had depth, a DEPTH packet).
        public var framesWritten: Int
        /// Frames dropped because the queue was full (real-time callers only).
        public var framesDropped: Int
        /// Frames skipped because their timestamp did not follow the previous frame's.
        public var framesSkipped: Int
        public var depthFrames: Int
        public var irFrames: Int
        public var colorCodec: String
        public var colorSize: (width: Int, height: Int)
        public var depthSize: (width: Int, height: Int)?
        public var bytes: Int64
        /// Mean and largest seconds the writer thread spent encoding one frame.
        public var encodeSecondsMean: Double
        public var encodeSecondsMax: Double
        /// An encoding or writing error that ended the recording early (what came before is kept).
        public var problem: String?

        public var description: String {
            var s = "\(framesWritten) frames to \(path) (COLOR \(colorSize.width)x\(colorSize.height) \(colorCodec)"
            if let d = depthSize { s += ", DEPTH \(d.width)x\(d.height) FFV1 16-bit (\(depthFrames) frames)" }
            if irFrames > 0 { s += ", IR \(irFrames) frames" }
            s += ", \(bytes) bytes; encoding \(String(format: "%.1f", encodeSecondsMean * 1000)) ms a frame, at most \(String(format: "%.1f", encodeSecondsMax * 1000)))"
            if framesDropped > 0 { s += "; \(framesDropped) frames DROPPED: the encoder could not keep up" }
            if framesSkipped > 0 { s += "; \(framesSkipped) frames skipped (timestamp not after the previous frame's)" }
            return s
        }
    }

    public let path: String
    public let colorWidth: Int, colorHeight: Int
    public let depthSize: (width: Int, height: Int)?
    public let irSize: (width: Int, height: Int)?
    public let depthUnitsPerMeter: Float
    public let options: Options

    private let partialPath: String
    private var writer: OpaquePointer?
    private let condition = NSCondition()
    private struct Item {
        var color: [UInt8]
        var depth: PixelBuffer?
        var ir: PixelBuffer?
        var pts: Int64
    }
    private var queue: [Item] = []
    private var closed = false
    private var writerDone = false
    private var finished = false
    private var failure: String?
    private var written = 0, dropped = 0, skipped = 0, depthWritten = 0, irWritten = 0
    private var encodeTotal = 0.0, encodeMax = 0.0
    private let firstMicros: Int64
    private var lastMicros: Int64?

    /// Frames encoded so far.
    public var framesWritten: Int { condition.lock(); defer { condition.unlock() }; return written }
    /// Frames dropped because the queue was full.
    public var framesDropped: Int { condition.lock(); defer { condition.unlock() }; return dropped }

    /// Creates `path.partial` and writes the Matroska header.
    /// - Parameters:
    ///   - depthSize: the DEPTH track's size (nil: no DEPTH track).
    ///   - irSize: the IR track's size (nil: none).
    ///   - calibration: written as the `calibration.json` attachment (its `depthScale` is set to
    ///     `depthUnitsPerMeter`); nil writes default intrinsics for the track sizes.
    ///   - startTime: the recording's time zero in seconds (the first frame's timestamp): frames are
    ///     stored from it in microseconds and it is the `DEPTHLENS_START_OFFSET_US` tag, so that
    ///     `MKVSource` gives back the frames' own timestamps. Frames before it are skipped.
    ///   - tags: extra container tags.
    ///   - frameRate: the nominal rate the tracks say (Matroska's DefaultDuration; players and
    ///     ffmpeg take a variable-rate H.264 track's rate from it, else 1000000 fps from the
    ///     microsecond time base); nil, or outside 0.01…10000, says none.
    /// Throws `CaptureError.file` naming the file (an existing file, a missing folder, an encoder
    /// libavcodec lacks, a bad size).
    public init(path: String, colorWidth: Int, colorHeight: Int, depthSize: (width: Int, height: Int)?,
                irSize: (width: Int, height: Int)? = nil, depthUnitsPerMeter: Float = 1000,
                calibration: RGBDCalibration? = nil, startTime: Double = 0, tags: [String: String] = [:],
                frameRate: Double? = nil, options: Options = Options()) throws {
        func bad(_ problem: String) -> CaptureError { .file(path: path, problem: problem) }
        guard depthUnitsPerMeter > 0, depthUnitsPerMeter.isFinite else { throw bad("bad depth scale \(depthUnitsPerMeter)") }
        guard startTime.isFinite, startTime >= 0, startTime < 9e9 else { throw bad("bad start time \(startTime) s") }
        guard (0...51).contains(options.crf) else { throw bad("crf \(options.crf) is outside 0…51") }
        let dir = (path as NSString).deletingLastPathComponent
        var isDir: ObjCBool = false
        if !dir.isEmpty, !(FileManager.default.fileExists(atPath: dir, isDirectory: &isDir) && isDir.boolValue) {
            throw bad("folder \(dir) does not exist")
        }
        if FileManager.default.fileExists(atPath: path) { throw bad("exists; remove it or choose another name") }
        self.path = path
        self.colorWidth = colorWidth
        self.colorHeight = colorHeight
        self.depthSize = depthSize
        self.irSize = irSize
        self.depthUnitsPerMeter = depthUnitsPerMeter
        var options = options
        options.queueLimit = max(1, options.queueLimit)
        self.options = options
        partialPath = path + ".partial"

        var message = [CChar](repeating: 0, count: 512)
        var w: OpaquePointer?
        guard dl_mkv_writer_create(partialPath, &w, &message, message.count) == 0, let w else { throw bad(String(cBuffer: message)) }
        var r = dl_mkv_writer_add_track(w, DL_MKV_COLOR, Int32(clamping: colorWidth), Int32(clamping: colorHeight),
                                        options.lossless ? 1 : 0, Int32(options.crf), options.preset, &message, message.count)
        if r == 0, let d = depthSize {
            r = dl_mkv_writer_add_track(w, DL_MKV_DEPTH, Int32(clamping: d.width), Int32(clamping: d.height), 1, 0, nil, &message, message.count)
        }
        if r == 0, let i = irSize {
            r = dl_mkv_writer_add_track(w, DL_MKV_IR, Int32(clamping: i.width), Int32(clamping: i.height), 1, 0, nil, &message, message.count)
        }
        if r == 0, let fps = frameRate, fps.isFinite, fps >= 0.01, fps <= 10000 {
            r = dl_mkv_writer_set_frame_rate(w, Int32((fps * 1000).rounded()), 1000, &message, message.count)
        }
        var calib = calibration ?? RGBDCalibration.assumed(depthWidth: depthSize?.width ?? colorWidth, depthHeight: depthSize?.height ?? colorHeight,
                                                           colorWidth: colorWidth, colorHeight: colorHeight, depthScale: depthUnitsPerMeter)
        calib.depthScale = depthUnitsPerMeter
        var allTags = tags
        firstMicros = Int64((startTime * 1e6).rounded())
        allTags["DEPTHLENS_START_OFFSET_US"] = String(firstMicros)
        allTags["DEPTHLENS_DEPTH_SCALE"] = depthUnitsPerMeter == depthUnitsPerMeter.rounded() ? String(Int(depthUnitsPerMeter)) : "\(depthUnitsPerMeter)"
        allTags["DEPTHLENS_COLOR_CODEC"] = options.lossless ? "ffv1" : "h264"
        allTags["ENCODER_SETTINGS"] = options.lossless ? "color ffv1 bgr0, depth ffv1 gray16le" : "color libx264 crf \(options.crf) preset \(options.preset), depth ffv1 gray16le"
        for (k, v) in allTags.sorted(by: { $0.key < $1.key }) where r == 0 {
            r = dl_mkv_writer_set_tag(w, k, v, &message, message.count)
        }
        if r == 0 {
            do {
                let json = try calib.encodedJSON()
                r = json.withUnsafeBufferPointer {
                    dl_mkv_writer_add_attachment(w, "calibration.json", "application/json", $0.baseAddress, $0.count, &message, message.count)
                }
            } catch {
                dl_mkv_writer_free(w)
                throw bad("cannot encode the calibration: \(error)")
            }
        }
        if r == 0 { r = dl_mkv_writer_begin(w, &message, message.count) }
        guard r == 0 else {
            let problem = String(cBuffer: message)
            dl_mkv_writer_free(w)
            try? FileManager.default.removeItem(atPath: partialPath)
            throw bad(problem)
        }
        writer = w
        Thread.detachNewThread { [self] in writerLoop() }
    }

    /// A recorder for the frames of `source`, sized by its first frame: the DEPTH track at the
    /// frame's depth size (else the calibration's depth camera), depth at `source.depthUnitsPerMeter`
    /// (else 1000 units per meter), the source's calibration (or `calibration`, the one `--calibration`
    /// or `--intrinsics` gave), name and nominal frame rate in the file.
    public convenience init(path: String, firstFrame: FrameSet, source: FrameSource, calibration: RGBDCalibration? = nil,
                            options: Options = Options()) throws {
        let units = source.depthUnitsPerMeter ?? 1000
        let depth = firstFrame.depth.map { (width: $0.map.width, height: $0.map.height) }
            ?? source.calibration.map { (width: $0.depth.intrinsics.width, height: $0.depth.intrinsics.height) }
        var tags = ["DEPTHLENS_SOURCE": source.name]
        if let name = source.metadata.device?.name { tags["DEVICE_NAME"] = name }
        if let serial = source.metadata.device?.serial { tags["DEVICE_SERIAL"] = serial }
        try self.init(path: path, colorWidth: firstFrame.color.width, colorHeight: firstFrame.color.height, depthSize: depth,
                      depthUnitsPerMeter: units, calibration: calibration ?? source.calibration, startTime: max(0, firstFrame.timestamp),
                      tags: tags, frameRate: source.nominalFrameRate, options: options)
    }

    deinit {
        if let writer {
            // Never finished: keep the container readable, leave it as .partial.
            condition.lock(); closed = true; queue.removeAll(); condition.broadcast()
            while !writerDone { condition.wait() }
            condition.unlock()
            dl_mkv_writer_free(writer)
        }
    }

    /// Queues one frame: its color (any format; converted to rgba8 of the recorder's size), its
    /// depth (meters, at the DEPTH track's size; nil writes no DEPTH packet for this frame), and an
    /// IR image (gray16 at the IR track's size) when there is an IR track. Returns false when the
    /// frame was dropped (queue full, `waitForRoom` false) or skipped (its timestamp does not follow
    /// the previous one's). Throws for a frame of another size or once encoding has failed.
    @discardableResult
    public func append(_ frame: FrameSet, ir: PixelBuffer? = nil, waitForRoom: Bool = false) throws -> Bool {
        func bad(_ problem: String) -> CaptureError { .file(path: path, problem: problem) }
        guard frame.color.width == colorWidth, frame.color.height == colorHeight else {
            throw bad("color size changed from \(colorWidth)x\(colorHeight) to \(frame.color.width)x\(frame.color.height) while recording")
        }
        if let d = frame.depth {
            guard let ds = depthSize else { throw bad("frame has depth but the recording has no DEPTH track") }
            guard d.map.width == ds.width, d.map.height == ds.height else {
                throw bad("depth size changed from \(ds.width)x\(ds.height) to \(d.map.width)x\(d.map.height) while recording")
            }
        }
        if let ir {
            guard let s = irSize else { throw bad("an IR image but the recording has no IR track") }
            guard ir.width == s.width, ir.height == s.height, case .gray16 = ir.format else {
                throw bad("IR image must be gray16 \(s.width)x\(s.height), got \(ir.format) \(ir.width)x\(ir.height)")
            }
        }
        guard frame.timestamp.isFinite else { throw bad("frame \(frame.index) has no finite timestamp") }
        condition.lock()
        if let e = failure { condition.unlock(); throw bad(e) }
        while waitForRoom && queue.count >= options.queueLimit && failure == nil { condition.wait() }
        if let e = failure { condition.unlock(); throw bad(e) }
        let micros = Int64((frame.timestamp * 1e6).rounded())
        if micros < firstMicros || lastMicros.map({ micros <= $0 }) == true { skipped += 1; condition.unlock(); return false }
        if queue.count >= options.queueLimit { dropped += 1; condition.unlock(); return false }
        lastMicros = micros
        let pts = micros - firstMicros
        condition.unlock()
        let color = frame.color.format == .rgba8 ? frame.color.packedBytes() : ImageIO.toRGBA8(frame.color).packedBytes()
        let depth = frame.depth.map { TUMWriter.encodeDepth($0, scale: depthUnitsPerMeter) }
        let irCopy = ir.map { src -> PixelBuffer in
            let c = PixelBuffer(width: src.width, height: src.height, format: src.format)
            for y in 0..<src.height { c.row(y, as: UInt16.self).update(from: src.row(y, as: UInt16.self), count: src.width) }
            return c
        }
        condition.lock()
        queue.append(Item(color: color, depth: depth, ir: irCopy, pts: pts))
        condition.broadcast()
        condition.unlock()
        return true
    }

    private func writerLoop() {
        var message = [CChar](repeating: 0, count: 512)
        while true {
            condition.lock()
            while queue.isEmpty && !closed { condition.wait() }
            if queue.isEmpty || failure != nil {
                writerDone = true
                condition.broadcast()
                condition.unlock()
                return
            }
            let item = queue.removeFirst()
            condition.broadcast()
            condition.unlock()
            guard let w = writer else { continue }
            let t0 = monotonicSeconds()
            var r = item.color.withUnsafeBufferPointer {
                dl_mkv_writer_write_rgba(w, $0.baseAddress, colorWidth * 4, item.pts, &message, message.count)
            }
            if r == 0, let d = item.depth {
                r = dl_mkv_writer_write_gray16(w, DL_MKV_DEPTH, d.baseAddress.assumingMemoryBound(to: UInt16.self), d.bytesPerRow,
                                               item.pts, &message, message.count)
            }
            if r == 0, let i = item.ir {
                r = dl_mkv_writer_write_gray16(w, DL_MKV_IR, i.baseAddress.assumingMemoryBound(to: UInt16.self), i.bytesPerRow,
                                               item.pts, &message, message.count)
            }
            let dt = monotonicSeconds() - t0
            condition.lock()
            if r == 0 {
                written += 1
                if item.depth != nil { depthWritten += 1 }
                if item.ir != nil { irWritten += 1 }
                encodeTotal += dt
                encodeMax = max(encodeMax, dt)
            } else if failure == nil {
                failure = String(cBuffer: message)
                queue.removeAll()
            }
            condition.broadcast()
            condition.unlock()
        }
    }

    /// Encodes what is queued, finishes the container and renames `path.partial` to `path`.
    /// After an encoding error the frames before it are kept and `problem` says what happened.
    /// Throws (removing the partial file) when no frame was recorded; throws (keeping
    /// `path.partial`) when the container could not be finished.
    @discardableResult
    public func finish() throws -> Summary {
        condition.lock()
        if finished { condition.unlock(); throw CaptureError.invalidState("\(path): recording already finished") }
        finished = true
        closed = true
        condition.broadcast()
        while !writerDone { condition.wait() }
        condition.unlock()
        guard let w = writer else { throw CaptureError.invalidState("\(path): recording already finished") }
        var message = [CChar](repeating: 0, count: 512)
        let r = dl_mkv_writer_finish(w, &message, message.count)
        let bytes = dl_mkv_writer_bytes(w)
        dl_mkv_writer_free(w)
        writer = nil
        condition.lock()
        let summary = Summary(path: path, framesWritten: written, framesDropped: dropped, framesSkipped: skipped,
                              depthFrames: depthWritten, irFrames: irWritten,
                              colorCodec: options.lossless ? "FFV1 (lossless)" : "H.264 crf \(options.crf)",
                              colorSize: (colorWidth, colorHeight), depthSize: depthSize,
                              bytes: Int64((try? FileManager.default.attributesOfItem(atPath: partialPath)[.size] as? NSNumber)??.int64Value ?? bytes),
                              encodeSecondsMean: written > 0 ? encodeTotal / Double(written) : 0, encodeSecondsMax: encodeMax,
                              problem: failure)
        condition.unlock()
        guard summary.framesWritten > 0 else {
            try? FileManager.default.removeItem(atPath: partialPath)
            throw CaptureError.file(path: path, problem: failure ?? "no frames were recorded")
        }
        guard r == 0 else {
            throw CaptureError.file(path: path, problem: "\(String(cBuffer: message)) (what was written is in \(partialPath))")
        }
        guard rename(partialPath, path) == 0 else {
            throw CaptureError.file(path: path, problem: "cannot rename \(partialPath): \(String(cString: strerror(errno)))")
        }
        return summary
    }

    /// Stops without keeping the file (an aborted recording).
    public func cancel() {
        condition.lock(); finished = true; closed = true; queue.removeAll(); condition.broadcast()
        while !writerDone { condition.wait() }
        condition.unlock()
        if let w = writer { dl_mkv_writer_free(w); writer = nil }
        try? FileManager.default.removeItem(atPath: partialPath)
    }
}
