import CMedia
import DepthKit
import Foundation

/// What each frame of a colorized video shows (`convert --video … --what`, the viewer's Export).
public enum VideoContent: String, CaseIterable, Sendable {
    /// The depth through the colormap, at the depth size.
    case depth
    /// The color image as recorded.
    case color
    /// The color image, and beside it on the right the colorized depth at the color size.
    case sideBySide = "side-by-side"
    /// The color image blended with the colorized depth by `mix` (the view's colormap mode).
    case blend

    public static func named(_ s: String) throws -> VideoContent {
        guard let c = VideoContent(rawValue: s.lowercased()) else {
            throw CaptureError.invalidSource("--what for a video is one of \(allCases.map(\.rawValue).joined(separator: ", ")), got '\(s)'")
        }
        return c
    }

    /// Color and depth as playback pairs them (else one stream on its own clock).
    public var pairsStreams: Bool {
        switch self {
        case .sideBySide, .blend: return true
        case .depth, .color: return false
        }
    }
}

/// How depth is colored in a video: as the view colors it (colormap, range, blend factor).
public struct VideoLook: Sendable, Equatable {
    public var colormap: Colormap
    public var range: DepthRange
    /// Blend: 0 = color, 1 = colored depth.
    public var mix: Float

    public init(colormap: Colormap = .jet, range: DepthRange = .defaultEqualized, mix: Float = 0.5) {
        self.colormap = colormap; self.range = range; self.mix = mix
    }

    /// `equalized` (histogram-equalized, the view's default) or `MIN:MAX` meters (a fixed range).
    public static func parseRange(_ text: String) throws -> DepthRange {
        if text.lowercased() == "equalized" { return .defaultEqualized }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let lo = Float(parts[0]), let hi = Float(parts[1]), lo.isFinite, hi.isFinite, lo >= 0, hi > lo else {
            throw CaptureError.invalidSource("--range is 'equalized' or MIN:MAX meters with 0 ≤ MIN < MAX, got '\(text)'")
        }
        return .fixed(min: lo, max: hi)
    }

    /// The range as `--range` takes it ("equalized", "0.5:4").
    public var rangeText: String {
        switch range {
        case .equalized: return "equalized"
        case let .fixed(lo, hi): return "\(lo):\(hi)"
        }
    }
}

/// What a video export wrote.
public struct VideoExportSummary: Sendable {
    public var path: String
    public var framesWritten = 0
    /// Frames left out because their stamp did not follow the previous frame's.
    public var framesSkipped = 0
    public var width = 0, height = 0
    /// "H.264" or "FFV1 (lossless)".
    public var codec = ""
    /// Seconds from the first frame's stamp to the last's.
    public var seconds = 0.0
    /// The recording's stream written on its own clock (`RecordedStreams`); false: playback's frames.
    public var perStream = false
    /// Set when a stop signal or a cancel (0) ended the export early: the file holds the frames written.
    public var stoppedBy: Int32?
    /// False when no file was made (stopped before the first frame).
    public var written = false
    public var warnings: [String] = []
}

/// Writes a recording as an ordinary video — H.264 (libx264) in MP4 or Matroska, or FFV1 (bit-exact
/// RGB) in Matroska with `lossless` — of its depth through a colormap, its color, both side by side,
/// or blended, colored as the view colors them (`look`: `DepthColormapFilter` and `ImageMixer`, the
/// CPU references of the view's kernels). Encoding goes through CMedia's `dl_mkv_writer`
/// (libavcodec in-process, the writer behind `record --mkv`).
///
/// **Timestamps.** Each frame's pts is its own stamp, in microseconds from the first frame's (the
/// first stamp is the `DEPTHLENS_START_OFFSET_US` tag, as in `record --mkv` files): variable frame
/// rate, as recorded. `depth` and `color` of a recording that offers `RecordedStreams` write every
/// frame of that stream once under its own stamp; `side-by-side` and `blend` (and sources without
/// streams) write playback's frames — color and depth as playback pairs them — under the frame's
/// stamp, depth aligned to the color camera when the cameras differ (as the view does). A frame
/// whose stamp does not follow the previous one's is left out and counted.
///
/// **Files.** Written under a temporary name beside `path` and renamed once complete; an error
/// leaves no file. A stop signal or a cancel finishes the video with the frames written.
public final class VideoExporter {
    public let source: FrameSource
    public let path: String
    public var selection = ExportSelection()
    public var content: VideoContent = .depth
    public var look = VideoLook()
    /// FFV1 (bit-exact RGB; Matroska only) instead of H.264.
    public var lossless = false
    /// libx264's constant rate factor.
    public var crf = 23
    public var calibrationOverride = CalibrationOverride()

    public init(source: FrameSource, path: String) {
        self.source = source
        self.path = path
    }

    /// The container a file name asks for: "mp4" (.mp4) or "matroska" (.mkv); nil for others.
    public static func container(of path: String) -> String? {
        let p = path.lowercased()
        return p.hasSuffix(".mp4") ? "mp4" : p.hasSuffix(".mkv") ? "matroska" : nil
    }

    /// Refuses a name that is not .mp4 or .mkv, FFV1 in MP4, a folder, or a file that exists
    /// unless `overwrite`.
    public static func prepare(path: String, overwrite: Bool, lossless: Bool) throws {
        guard let container = container(of: path) else {
            throw CaptureError.file(path: path, problem: "a video must end in .mp4 or .mkv")
        }
        if lossless && container == "mp4" {
            throw CaptureError.file(path: path, problem: "lossless video (FFV1) needs Matroska: name it .mkv")
        }
        if FileManager.default.fileExists(atPath: path) {
            guard overwrite, !FileSupport.isDirectory(path) else {
                throw CaptureError.file(path: path, problem: FileSupport.isDirectory(path) ? "is a folder" : "exists (--overwrite to replace it)")
            }
        }
    }

    /// Runs the export. `shouldStop` is polled before each frame: the signal to report, 0 for a
    /// plain cancel, nil to go on. `progress` follows each frame written.
    public func run(shouldStop: () -> Int32? = { StopSignals.pending },
                    progress: (ExportProgress) -> Void = { _ in }) throws -> VideoExportSummary {
        var summary = VideoExportSummary(path: path)
        summary.codec = lossless ? "FFV1 (lossless)" : "H.264"
        var file: VideoFile?
        do {
            try write(&file, summary: &summary, shouldStop: shouldStop, progress: progress)
            if let file {
                try file.finish()
                summary.written = true
            }
        } catch {
            file?.abort()
            throw CaptureError.wrapping(error, path: path)
        }
        if summary.framesSkipped > 0 {
            summary.warnings.append("\(summary.framesSkipped) frames left out: their stamp does not follow the previous frame's")
        }
        summary.warnings = source.warnings + summary.warnings
        return summary
    }

    private func write(_ file: inout VideoFile?, summary: inout VideoExportSummary, shouldStop: () -> Int32?,
                       progress: (ExportProgress) -> Void) throws {
        let painter = VideoPainter(content: content, look: look)
        let start = monotonicSeconds()
        var firstStamp: Double?
        var written = 0
        /// The nominal rate the file says (players' and ffmpeg's default rate for the VFR track).
        var rate = source.nominalFrameRate
        // One picture at its stamp: opens the file at the first, encodes in order.
        func add(_ picture: PixelBuffer, at stamp: Double, total: Int?) throws {
            let micros = Int64((stamp * 1e6).rounded())
            if file == nil {
                guard let container = Self.container(of: path) else { throw CaptureError.file(path: path, problem: "a video must end in .mp4 or .mkv") }
                file = try VideoFile(path: path, container: container, width: picture.width, height: picture.height,
                                     lossless: lossless, crf: crf, startMicros: micros, frameRate: rate,
                                     tags: ["DEPTHLENS_SOURCE": source.name, "DEPTHLENS_CONTENT": content.rawValue,
                                            "DEPTHLENS_COLORMAP": content == .color ? "none" : "\(look.colormap.rawValue) \(look.rangeText)"])
                summary.width = picture.width
                summary.height = picture.height
                firstStamp = stamp
            }
            guard let file else { return }
            guard picture.width == file.width, picture.height == file.height else {
                throw CaptureError.file(path: source.name, problem: String(format: "the frame at %.6f s is %dx%d, the video is %dx%d",
                                                                           stamp, picture.width, picture.height, file.width, file.height))
            }
            if try file.write(picture, micros: micros) {
                written += 1
                summary.seconds = stamp - (firstStamp ?? stamp)
            } else {
                summary.framesSkipped += 1
            }
            summary.framesWritten = written
            progress(ExportProgress(written: written + summary.framesSkipped, total: total, seconds: monotonicSeconds() - start))
        }

        if !content.pairsStreams, !source.isLive, let rec = source.recordedStreams {
            // One stream on its own clock: every frame of it once, under its own stamp.
            summary.perStream = true
            try source.start()
            defer { source.stop() }
            let streams = try rec.streams()
            func first(_ kind: StreamKind) -> Int? { streams.firstIndex { $0.kind == kind } }
            let index = content == .depth ? first(.depth) : first(.color) ?? first(.ir)
            guard let index else {
                throw CaptureError.file(path: source.name, problem: "has no \(content == .depth ? "depth" : "color") stream to write")
            }
            let times = streams[index].timestamps
            rate = Self.medianRate(times) ?? rate
            let playback = selection.frames == nil ? [] : try rec.playbackTimestamps()
            let picked = selection.picked(times, playback: playback)
            var firstDecodeError: CaptureError?
            for i in picked {
                if let s = shouldStop() { summary.stoppedBy = s; break }
                let picture: PixelBuffer
                do {
                    switch try rec.decodeFrame(i, ofStream: index) {
                    case let .image(b): picture = try painter.colorPicture(b)
                    case let .depth(d): picture = try painter.depthPicture(d)
                    }
                } catch let error as CaptureError {
                    // A frame that cannot be read is skipped and said; the others are written.
                    summary.warnings.append("\(streams[index].name) frame \(i) skipped: \(error)")
                    firstDecodeError = firstDecodeError ?? error
                    continue
                }
                try add(picture, at: times[i], total: picked.count)
            }
            if written == 0, summary.stoppedBy == nil, let firstDecodeError { throw firstDecodeError }
        } else {
            // Playback's frames, color and depth as it pairs them.
            let reader = try FrameReader(source: source, first: selection.frames?.lowerBound ?? 0)
            let total = selection.count(frameCount: source.playback?.frameCount)
            let alignment = DepthAlignmentStage(mode: .auto)
            var selected = 0
            while true {
                if let s = shouldStop() { summary.stoppedBy = s; break }
                guard let raw = try reader.next() else { break }
                let verdict = selection.verdict(index: raw.index, timestamp: raw.timestamp, selected: &selected)
                if verdict == .stop { break }
                if verdict == .skip { continue }
                let picture: PixelBuffer
                switch content {
                case .color:
                    picture = try painter.colorPicture(raw.color)
                case .depth:
                    guard let d = raw.depth else { continue }
                    picture = try painter.depthPicture(d)
                case .sideBySide, .blend:
                    var frame = raw
                    let calibration = try calibrationOverride.resolve(for: source, frame: raw)
                    calibrationOverride.apply(calibration, to: &frame)
                    (frame, _) = try alignment.apply(frame, calibration: calibration)
                    picture = try painter.pairPicture(color: frame.color, depth: frame.depth)
                }
                try add(picture, at: raw.timestamp, total: total)
            }
        }
        if file == nil, summary.stoppedBy == nil {
            throw CaptureError.file(path: source.name, problem: content == .depth ? "no depth frame to write" : "no frame to write")
        }
    }
}

extension VideoExporter {
    /// Frames a second from the median interval of `times` (nil for fewer than two distinct stamps).
    static func medianRate(_ times: [Double]) -> Double? {
        let gaps = zip(times.dropFirst(), times).map { $0 - $1 }.filter { $0 > 0 }.sorted()
        guard !gaps.isEmpty else { return nil }
        return 1 / gaps[gaps.count / 2]
    }
}

/// Makes each video frame (rgba8) from a source's images, colored as the view colors them. The
/// kernels and buffers are kept while sizes hold.
final class VideoPainter {
    let content: VideoContent
    let look: VideoLook
    private let colormap: DepthColormapFilter
    private var colormapInput: FrameFormat?
    private let mixer: ImageMixer
    private var mixerInputs: (FrameFormat, FrameFormat)?
    private let scaler = ImageScaler()

    init(content: VideoContent, look: VideoLook) {
        self.content = content
        self.look = look
        colormap = DepthColormapFilter(colormap: look.colormap, range: look.range)
        mixer = ImageMixer(mixFactor: look.mix)
    }

    /// A color image as rgba8 (gray and 16-bit images as the view shows them).
    func colorPicture(_ b: PixelBuffer) throws -> PixelBuffer {
        switch b.format {
        case .rgba8: return b
        case .bgra8, .rgb8, .gray8: return ImageIO.toRGBA8(b)
        case .gray16, .depthFloat16, .depthFloat32, .disparityFloat16, .disparityFloat32: return ImageIO.toRGBA8(ImageIO.toEightBit(b))
        }
    }

    /// Depth in meters through the colormap (rgba8, the depth's size).
    func depthPicture(_ d: DepthData) throws -> PixelBuffer {
        let meters = d.depthFloat32()
        if colormapInput != meters.frameFormat {
            try colormap.prepare(input: meters.frameFormat, outputRetainedBufferCountHint: 2)
            colormapInput = meters.frameFormat
        }
        return try colormap.render(meters)
    }

    /// Side by side or blended: color, and depth colorized (all black without depth).
    func pairPicture(color raw: PixelBuffer, depth: DepthData?) throws -> PixelBuffer {
        let color = try colorPicture(raw)
        let mapped = try depthPicture(depth ?? DepthData(map: PixelBuffer(width: color.width, height: color.height, format: .depthFloat32)))
        switch content {
        case .blend:
            if mixerInputs.map({ $0.0 != color.frameFormat || $0.1 != mapped.frameFormat }) ?? true {
                try mixer.prepare(input: color.frameFormat, secondInput: mapped.frameFormat, outputRetainedBufferCountHint: 2)
                mixerInputs = (color.frameFormat, mapped.frameFormat)
            }
            return try mixer.render(color, mapped)
        case .sideBySide, .depth, .color:
            let w = color.width, h = color.height
            let out = PixelBuffer(width: 2 * w, height: h, format: .rgba8)
            let right: PixelBuffer
            if mapped.width == w && mapped.height == h {
                right = mapped
            } else {
                right = PixelBuffer(width: w, height: h, format: .rgba8)
                try scaler.scale(mapped, into: right)
            }
            for y in 0..<h {
                let d = out.row(y, as: UInt32.self)
                d.update(from: color.row(y, as: UInt32.self), count: w)
                (d + w).update(from: right.row(y, as: UInt32.self), count: w)
            }
            out.markModified()
            return out
        }
    }
}

/// One video track of rgba8 frames written through CMedia's `dl_mkv_writer` (H.264, or FFV1 with
/// `lossless`) into MP4 or Matroska, under a temporary name beside `path` that `finish` renames
/// onto `path` and `abort` (or deinit without `finish`) removes. Frames are given in order, each at
/// its stamp in microseconds; `startMicros` is time zero (the `DEPTHLENS_START_OFFSET_US` tag).
/// Used from one thread.
final class VideoFile {
    let path: String
    let width: Int, height: Int
    private let temp: String
    private var writer: OpaquePointer?
    private let startMicros: Int64
    private var lastMicros: Int64?
    private var done = false

    init(path: String, container: String, width: Int, height: Int, lossless: Bool, crf: Int, startMicros: Int64,
         frameRate: Double?, tags: [String: String]) throws {
        func bad(_ problem: String) -> CaptureError { .file(path: path, problem: problem) }
        self.path = path
        self.width = width
        self.height = height
        self.startMicros = startMicros
        let slash = path.lastIndex(of: "/")
        let dir = slash.map { String(path[..<$0]) } ?? "."
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        guard FileSupport.isDirectory(dir.isEmpty ? "/" : dir) else { throw bad("no such folder \(dir)") }
        temp = (slash == nil ? "" : dir + "/") + ".\(name).tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        var message = [CChar](repeating: 0, count: 512)
        var w: OpaquePointer?
        guard dl_mkv_writer_create(temp, &w, &message, message.count) == 0, let w else { throw bad(String(cBuffer: message)) }
        var r = dl_mkv_writer_set_container(w, container, &message, message.count)
        if r == 0, let fps = frameRate, fps.isFinite, fps >= 0.01, fps <= 10000 {
            // In thousandths: 29.97 → 29970/1000.
            r = dl_mkv_writer_set_frame_rate(w, Int32((fps * 1000).rounded()), 1000, &message, message.count)
        }
        if r == 0 {
            r = dl_mkv_writer_add_track(w, DL_MKV_COLOR, Int32(clamping: width), Int32(clamping: height), lossless ? 1 : 0,
                                        Int32(clamping: crf), "veryfast", &message, message.count)
        }
        var all = tags
        all["DEPTHLENS_START_OFFSET_US"] = String(startMicros)
        all["ENCODER_SETTINGS"] = lossless ? "ffv1 bgr0" : "libx264 crf \(crf) preset veryfast"
        for (k, v) in all.sorted(by: { $0.key < $1.key }) where r == 0 {
            r = dl_mkv_writer_set_tag(w, k, v, &message, message.count)
        }
        if r == 0 { r = dl_mkv_writer_begin(w, &message, message.count) }
        guard r == 0 else {
            let problem = String(cBuffer: message)
            dl_mkv_writer_free(w)
            unlink(temp)
            throw bad(problem)
        }
        writer = w
    }

    deinit { abort() }

    /// Encodes one rgba8 frame of the file's size at `micros`; false (nothing written) when it does
    /// not follow the previous frame's or comes before time zero.
    func write(_ b: PixelBuffer, micros: Int64) throws -> Bool {
        guard let w = writer else { throw CaptureError.file(path: path, problem: "the video is not open") }
        guard b.format == .rgba8, b.width == width, b.height == height else {
            throw CaptureError.file(path: path, problem: "a \(b.format) \(b.width)x\(b.height) frame in a \(width)x\(height) rgba8 video")
        }
        if micros < startMicros || lastMicros.map({ micros <= $0 }) == true { return false }
        var message = [CChar](repeating: 0, count: 512)
        let r = dl_mkv_writer_write_rgba(w, b.baseAddress.assumingMemoryBound(to: UInt8.self), b.bytesPerRow, micros - startMicros,
                                         &message, message.count)
        guard r == 0 else { throw CaptureError.file(path: path, problem: String(cBuffer: message)) }
        lastMicros = micros
        return true
    }

    /// Drains the encoder, finishes the container and renames it onto `path`.
    func finish() throws {
        guard !done, let w = writer else { return }
        var message = [CChar](repeating: 0, count: 512)
        let r = dl_mkv_writer_finish(w, &message, message.count)
        dl_mkv_writer_free(w)
        writer = nil
        guard r == 0 else {
            abort()
            throw CaptureError.file(path: path, problem: String(cBuffer: message))
        }
        guard rename(temp, path) == 0 else {
            let why = String(cString: strerror(errno))
            abort()
            throw CaptureError.file(path: path, problem: "cannot write: \(why)")
        }
        done = true
    }

    /// Removes the temporary file (nothing is left at `path`).
    func abort() {
        guard !done else { return }
        done = true
        if let w = writer { dl_mkv_writer_free(w); writer = nil }
        unlink(temp)
    }
}
