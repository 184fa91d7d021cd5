import DepthKit
import Foundation

/// What `ffprobe` reads from a video file: the check that a recording holds every frame
/// (the tests count frames with it).
public struct VideoProbe: Equatable, Sendable {
    public var codec: String
    public var pixelFormat: String
    public var width: Int
    public var height: Int
    /// Frame rate as ffprobe prints it ("30/1", "2997/100").
    public var rate: String
    /// Frames decoded (`-count_frames`).
    public var frames: Int

    /// Decodes every frame of the first video stream of `path` with ffprobe.
    /// Throws `CaptureError.file` when ffprobe is missing or cannot read the file.
    public static func read(_ path: String) throws -> VideoProbe {
        guard let exe = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
            .map({ "\($0)/ffprobe" }).first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw CaptureError.file(path: path, problem: "ffprobe not found: install ffmpeg")
        }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: exe)
        p.arguments = ["-v", "error", "-count_frames", "-select_streams", "v:0",
                       "-show_entries", "stream=nb_read_frames,width,height,r_frame_rate,codec_name,pix_fmt", "-of", "default=nw=1", path]
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let errText = Locked("")
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let text = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            errText.withLock { $0 = text }
            done.signal()
        }
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        done.wait()
        p.waitUntilExit()
        var kv: [String: String] = [:]
        for l in text.split(separator: "\n") {
            let parts = l.split(separator: "=", maxSplits: 1).map(String.init)
            if parts.count == 2 { kv[parts[0]] = parts[1] }
        }
        guard p.terminationStatus == 0, let frames = Int(kv["nb_read_frames"] ?? ""), let w = Int(kv["width"] ?? ""),
              let h = Int(kv["height"] ?? "") else {
            let why = errText.current.split(separator: "\n").first.map(String.init) ?? "no video stream"
            throw CaptureError.file(path: path, problem: "ffprobe: \(why)")
        }
        return VideoProbe(codec: kv["codec_name"] ?? "", pixelFormat: kv["pix_fmt"] ?? "", width: w, height: h,
                          rate: kv["r_frame_rate"] ?? "", frames: frames)
    }
}
