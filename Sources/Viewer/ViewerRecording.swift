import Capture
import DepthKit
import Foundation
import GPUKit

/// A video being recorded from the window (Ctrl+R): the filtered 2D view, one video frame per
/// processed frame, read back from the GPU only while recording.
final class ViewerVideoRecording {
    let writer: VideoWriter
    /// The processed output last written (`PresentComposer.processedKey`), so a re-presented frame is not written twice.
    var lastKey: PresentComposer.ProcessedKey?

    init(writer: VideoWriter) { self.writer = writer }
}

/// What the window writes into `--snapshot-dir`: snapshots (S, after the frame that was asked
/// for), videos (Ctrl+R) and the current frame's point cloud as PLY (P). Reads the picture back
/// through the composer.
final class ViewerCapture {
    private let directory: String
    private let log: ViewerLog
    private let composer: PresentComposer
    /// The 3D view's pictures (a 3D snapshot is its render).
    private let scene3D: Scene3D?
    /// S was pressed: the next presented frame is written.
    var snapshotRequested = false
    /// The video being recorded; nil when not recording.
    private(set) var video: ViewerVideoRecording?
    /// Ctrl+R records RGB-D (color + depth, lossless depth, calibration inside) as Matroska
    /// instead of the filtered view as H.264 (the panel's choice).
    var recordsRGBD = false
    /// The RGB-D recording in progress and the timestamp of the last frame written.
    private var rgbd: (recorder: MKVRecorder, last: Double)?

    init(directory: String, log: ViewerLog, composer: PresentComposer, scene3D: Scene3D?) {
        self.directory = directory
        self.log = log
        self.composer = composer
        self.scene3D = scene3D
    }

    var isRecording: Bool { video != nil || rgbd != nil }

    /// Ctrl+R: starts recording into the snapshot folder at the source's frame rate, or stops and says what was written.
    func toggleRecording(view: ViewerOptions.View, frame: FrameSet?, source: FrameSource, calibration: RGBDCalibration?) {
        if isRecording { stopRecording(); return }
        if recordsRGBD { startRGBD(frame: frame, source: source, calibration: calibration); return }
        guard view == .twoD, let out = composer.lastOutput else {
            log.notice(view == .twoD ? "record: no frame yet" : "record: recording covers the 2D view (Tab)", isError: true)
            return
        }
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let name = Snapshot.name(frame: frame?.index ?? 0) + ".mp4"
            let path = (directory as NSString).appendingPathComponent(name)
            let writer = try VideoWriter(path: path, width: out.width, height: out.height, fps: nominalFrameRate(of: source))
            video = ViewerVideoRecording(writer: writer)
            log.notice("recording \(path) (Ctrl+R stops)")
            log.ui("record start \(path)")
        } catch {
            log.notice("record: \(error)", isError: true)
        }
    }

    /// Finishes the video (the encoder writes what is queued), and reports frames and drops.
    func stopRecording() {
        if let r = rgbd {
            rgbd = nil
            do {
                let s = try r.recorder.finish()
                log.notice("recorded \(s)", isError: s.framesDropped > 0, seconds: 10)
                log.ui("rgbd: \(s.path) frames \(s.framesWritten) dropped \(s.framesDropped)")
            } catch {
                log.notice("record: \(error)", isError: true)
                log.ui("rgbd failed: \(error)")
            }
        }
        guard let rec = video else { return }
        video = nil
        do {
            let s = try rec.writer.finish()
            log.notice("recorded \(s)", isError: s.framesDropped > 0, seconds: 10)
            log.ui("video: \(s.path) frames \(s.framesWritten) dropped \(s.framesDropped)")
        } catch {
            log.notice("record: \(error)", isError: true)
            log.ui("video failed: \(error)")
        }
    }

    /// Starts an RGB-D Matroska recording of the source's frames as they come (depth as shown:
    /// aligned to color when the viewer aligns it, with the calibration that then holds).
    private func startRGBD(frame: FrameSet?, source: FrameSource, calibration: RGBDCalibration?) {
        guard let frame else { log.notice("record: no frame yet", isError: true); return }
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let path = (directory as NSString).appendingPathComponent(Snapshot.name(frame: frame.index) + ".mkv")
            let recorder = try MKVRecorder(
                path: path, colorWidth: frame.color.width, colorHeight: frame.color.height,
                depthSize: frame.depth.map { ($0.map.width, $0.map.height) }, depthUnitsPerMeter: source.depthUnitsPerMeter ?? 1000,
                calibration: calibration, startTime: frame.timestamp, tags: ["DEPTHLENS_SOURCE": source.name],
                frameRate: source.nominalFrameRate)
            _ = try recorder.append(frame, waitForRoom: !source.isLive)
            rgbd = (recorder, frame.timestamp)
            log.notice("recording RGB-D \(path) (Ctrl+R stops)")
            log.ui("record start \(path)")
        } catch {
            log.notice("record: \(error)", isError: true)
        }
    }

    /// After the frame is submitted: the video frame (when recording) and the snapshot (when asked for).
    func frameShown(_ shown: PresentComposer.Frame, frame: FrameSet?, source: FrameSource, view: ViewerOptions.View,
                    settings: ViewSettings) {
        recordVideoFrame(output: shown.output, frame: frame, settings: settings)
        if let r = rgbd, let frame, frame.timestamp > r.last {
            rgbd?.last = frame.timestamp
            do { _ = try r.recorder.append(frame, waitForRoom: !source.isLive) } catch {
                log.notice("record: \(error)", isError: true)
                stopRecording()
            }
        }
        if snapshotRequested {
            snapshotRequested = false
            // In 3D the picture is the point-cloud render (there is no 2D output this frame).
            takeSnapshot(output: shown.drew3D ? nil : shown.output, texture3D: shown.drew3D ? scene3D?.output : nil,
                         frame: frame, source: source, mode: view == .threeD ? "3d" : settings.mode.name, settings: settings)
        }
    }

    /// Reads the processed output back and queues it for the encoder when it is new. A change of
    /// output size (another mode) ends the recording.
    private func recordVideoFrame(output: FrameProcessor.Output?, frame: FrameSet?, settings: ViewSettings) {
        guard let rec = video, let output, let frame, let key = composer.processedKey, key != rec.lastKey else { return }
        rec.lastKey = key
        guard output.width == rec.writer.width, output.height == rec.writer.height else {
            log.notice("record: the view changed size to \(output.width)x\(output.height); recording stopped", isError: true)
            stopRecording()
            return
        }
        do {
            if let image = try composer.readBack(output: output, texture3D: nil, frame: frame, settings: settings) {
                try rec.writer.append(image)
            }
        } catch {
            log.notice("record: \(error)", isError: true)
            stopRecording()
        }
    }

    /// Writes the snapshot files: the 2D output (`output`), or in 3D the point-cloud render (`texture3D`).
    private func takeSnapshot(output: FrameProcessor.Output?, texture3D: GPUTexture?, frame: FrameSet?, source: FrameSource,
                              mode: String, settings: ViewSettings) {
        guard let frame, output != nil || texture3D != nil || scene3D?.picture != nil else { log.notice("snapshot: no frame yet", isError: true); return }
        do {
            let filtered = try composer.readBack(output: output, texture3D: texture3D, frame: frame, settings: settings)
            guard let filtered else { return }
            let name = Snapshot.name(frame: frame.index)
            let files = try Snapshot.write(name: name, directory: directory, filtered: filtered,
                                           color: frame.color, depth: frame.depth, intrinsics: frame.depth?.intrinsics ?? source.intrinsics,
                                           mode: mode, timestamp: frame.timestamp, frame: frame.index, source: source.name)
            log.notice("snapshot: \(files.count) files as \(directory)/\(name)_*")
            if log.logsUI { print("snapshot: \((directory as NSString).appendingPathComponent(name))"); fflush(nil) }
        } catch {
            log.notice("snapshot failed: \(error)", isError: true)
        }
    }

    /// P: the current frame's point cloud as PLY into the snapshot folder.
    func exportPLY(frame: FrameSet?) {
        guard let frame, let depth = frame.depth else { log.notice("export: no depth in this frame", isError: true); return }
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let cloud = PointCloud.unproject(depth: depth, color: frame.color)
            let path = (directory as NSString).appendingPathComponent(Snapshot.name(frame: frame.index) + ".ply")
            try PLYWriter.write(cloud, to: path)
            log.notice("exported \(cloud.count) points to \(path)")
            if log.logsUI { print("ply: \(path)"); fflush(nil) }
        } catch {
            log.notice("export failed: \(error)", isError: true)
        }
    }

    /// Status-line part while recording ("REC 120 frames, 0 dropped").
    var recordingStatus: String? {
        video.map { "REC \($0.writer.framesAccepted) frames, \($0.writer.framesDropped) dropped" }
    }
}
