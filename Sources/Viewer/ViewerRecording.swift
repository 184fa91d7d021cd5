import Capture
import DepthKit
import Foundation

/// A video being recorded from the window (Ctrl+R): the filtered 2D view, one video frame per
/// processed frame, read back from the GPU only while recording.
final class ViewerVideoRecording {
    let writer: VideoWriter
    /// The processed output last written (`ViewerApp.processedKey`), so a re-presented frame is not written twice.
    var lastKey: ViewerApp.ProcessedKey?

    init(writer: VideoWriter) { self.writer = writer }
}

extension ViewerApp {
    /// Ctrl+R: starts recording into `--snapshot-dir` at the source's frame rate, or stops and says what was written.
    func toggleRecording() {
        if videoRecording != nil { stopRecording(); return }
        guard view == .twoD, let out = lastOutput else {
            notice(view == .twoD ? "record: no frame yet" : "record: recording covers the 2D view (Tab)", isError: true)
            return
        }
        do {
            try FileManager.default.createDirectory(atPath: options.snapshotDir, withIntermediateDirectories: true)
            let name = Snapshot.name(frame: current?.index ?? 0) + ".mp4"
            let path = (options.snapshotDir as NSString).appendingPathComponent(name)
            let writer = try VideoWriter(path: path, width: out.width, height: out.height, fps: nominalFrameRate(of: source))
            videoRecording = ViewerVideoRecording(writer: writer)
            notice("recording \(path) (Ctrl+R stops)")
            logUI("record start \(path)")
        } catch {
            notice("record: \(error)", isError: true)
        }
    }

    /// Finishes the video (ffmpeg writes what is queued), and reports frames and drops.
    func stopRecording() {
        guard let rec = videoRecording else { return }
        videoRecording = nil
        do {
            let s = try rec.writer.finish()
            notice("recorded \(s)", isError: s.framesDropped > 0, seconds: 10)
            logUI("video: \(s.path) frames \(s.framesWritten) dropped \(s.framesDropped)")
        } catch {
            notice("record: \(error)", isError: true)
            logUI("video failed: \(error)")
        }
    }

    /// After the frame is submitted: reads the processed output back and queues it for ffmpeg
    /// when it is new. A change of output size (another mode) ends the recording.
    func recordVideoFrame(output: FrameProcessor.Output?) {
        guard let rec = videoRecording, let output, let frame = current, let key = processedKey, key != rec.lastKey else { return }
        rec.lastKey = key
        guard output.width == rec.writer.width, output.height == rec.writer.height else {
            notice("record: the view changed size to \(output.width)x\(output.height); recording stopped", isError: true)
            stopRecording()
            return
        }
        do {
            if let image = try readBackView(output: output, texture3D: nil, frame: frame) { try rec.writer.append(image) }
        } catch {
            notice("record: \(error)", isError: true)
            stopRecording()
        }
    }

    /// Status-line part while recording ("REC 120 frames, 0 dropped").
    var recordingStatus: String? {
        videoRecording.map { "REC \($0.writer.framesAccepted) frames, \($0.writer.framesDropped) dropped" }
    }
}
