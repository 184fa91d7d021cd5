import DepthKit
import Foundation

/// One unit an export lists at once: the images of one frame (a color/depth pair of a source read
/// frame by frame) or one frame of one stream, where each goes, and its PLY.
struct ExportUnit: Sendable {
    /// The calibration of the frame's images (before alignment).
    var calibration: RGBDCalibration
    /// The color image's size (depth is aligned to it with `--align color`).
    var colorSize: (Int, Int)
    /// A color/depth pair, listed in associations.txt as given.
    var paired: Bool
    /// The other image of the pair when it was listed before (a frame repeating it): paired with, not written again.
    var pairedWith: TUMWriter.Written?
    var color: (PixelBuffer, TUMWriter.Written)?
    var depth: (DepthData, TUMWriter.Written)?
    var ir: (PixelBuffer, TUMWriter.Written)?
    /// `ply/T.ply` from this depth (aligned like the depth written) with these colors.
    var ply: (path: String, color: PixelBuffer?, depth: DepthData?)?
    /// The frame's `groundtruth.txt` line (a source with poses), kept once the unit is listed.
    var pose: String?
    /// A frame read but not decoded yet: the worker decodes it into `color`, `ir` or `depth`.
    var pending: PendingFrame?

    init(calibration: RGBDCalibration, colorSize: (Int, Int), paired: Bool) {
        self.calibration = calibration; self.colorSize = colorSize; self.paired = paired
    }

    var kinds: [StreamKind] {
        (color != nil ? [StreamKind.color] : []) + (depth != nil ? [.depth] : []) + (ir != nil ? [.ir] : [])
    }
}

/// A frame of a recording's stream read but not decoded (`RecordedStreams.payload`), and where it goes.
struct PendingFrame: Sendable {
    var payload: StreamPayload
    /// Its file (the stream it is written as, its stamp and reserved name).
    var written: TUMWriter.Written
    /// The resolved depth intrinsics (`--intrinsics`, `--calibration`), set on a depth frame (scaled to its size).
    var depthIntrinsics: CameraIntrinsics
    /// "STREAM frame N", for the line that says the frame was skipped.
    var label: String
}

/// A frame that could not be decoded: skipped, and said.
struct SkippedFrame: Sendable {
    var label: String
    var error: CaptureError
    var warning: String { "\(label) skipped: \(error)" }
}

/// What a worker made of a unit: the files, complete on disk.
struct ExportDone: Sendable {
    var written: [TUMWriter.Written]
    var paired: Bool
    var kinds: [StreamKind]
    /// Relative paths of every file written (the PLY too), to delete when it cannot be listed.
    var files: [String]
    var wrotePLY: Bool
    var pose: String?
    /// Set when the unit's frame could not be decoded (nothing was written).
    var skipped: SkippedFrame?
    /// The pair's other image, listed before (`ExportUnit.pairedWith`).
    var pairedWith: TUMWriter.Written?
}

/// The export's worker threads: each takes the next unit, decodes its frame when it was read but
/// not decoded (`PendingFrame`), aligns its depth (`--align color`, a `DepthAlignmentStage` per
/// thread: its buffers are pooled), encodes and writes its PNGs and PLY atomically, and leaves the
/// result under the unit's number for `result(_:)`.
///
/// `@unchecked Sendable`: every mutable property (`queue`, `results`, `closed`, `threads`) is read
/// and written only with `condition` locked.
final class ExportPipeline: @unchecked Sendable {
    let workers: Int
    let mode: AlignMode
    let depthScale: Float
    let directory: String
    private let condition = NSCondition()
    private var queue: [(number: Int, unit: ExportUnit)] = []
    private var results: [Int: Result<ExportDone, Error>] = [:]
    private var closed = false
    private var threads = 0

    init(workers: Int, mode: AlignMode, depthScale: Float, directory: String) {
        self.workers = max(1, workers); self.mode = mode; self.depthScale = depthScale; self.directory = directory
    }

    /// Queues unit `number` (numbers count up from 0 without gaps); starts the threads on first use.
    func enqueue(_ number: Int, _ unit: ExportUnit) {
        condition.lock()
        queue.append((number, unit))
        let start = threads == 0 ? workers : 0
        threads += start
        condition.signal()
        condition.unlock()
        for _ in 0..<start {
            let t = Thread { [self] in work() }
            t.name = "convert-worker"
            t.start()
        }
    }

    /// Waits for unit `number` and takes its result.
    func result(_ number: Int) -> Result<ExportDone, Error> {
        condition.lock()
        defer { condition.unlock() }
        while results[number] == nil { condition.wait() }
        return results.removeValue(forKey: number)!
    }

    /// Lets the threads end once the queue is empty, and waits for them.
    func close() {
        condition.lock()
        closed = true
        condition.broadcast()
        while threads > 0 { condition.wait() }
        condition.unlock()
    }

    private func work() {
        let stage = DepthAlignmentStage(mode: mode)
        condition.lock()
        while true {
            if queue.isEmpty {
                if closed { break }
                condition.wait()
                continue
            }
            let job = queue.removeFirst()
            condition.unlock()
            let r = Result { try perform(job.unit, stage: stage) }
            condition.lock()
            results[job.number] = r
            condition.broadcast()
        }
        threads -= 1
        condition.broadcast()
        condition.unlock()
    }

    private func perform(_ unit: ExportUnit, stage: DepthAlignmentStage) throws -> ExportDone {
        var u = unit
        if let p = u.pending {
            // Decoded as the calling thread decodes a frame without payload (DatasetExporter.runByStream).
            let decoded: StreamFrame
            do { decoded = try p.payload.decode() } catch let error as CaptureError {
                return ExportDone(written: [], paired: false, kinds: [], files: [], wrotePLY: false, pose: nil,
                                  skipped: SkippedFrame(label: p.label, error: error))
            }
            switch decoded {
            case let .image(image):
                if p.written.stream == .ir { u.ir = (image, p.written) } else { u.color = (image, p.written) }
            case var .depth(depth):
                let k = p.depthIntrinsics
                depth.intrinsics = k.width == depth.map.width && k.height == depth.map.height
                    ? k : k.scaled(toWidth: depth.map.width, height: depth.map.height)
                u.depth = (depth, p.written)
            }
        }
        var files: [String] = []
        var written: [TUMWriter.Written] = []
        do {
            if let (image, w) = u.color {
                try TUMWriter.writeImage(image, to: directory + "/" + w.path)
                files.append(w.path); written.append(w)
            }
            if let (image, w) = u.ir {
                try TUMWriter.writeImage(Self.gray(image), keepGray16: true, to: directory + "/" + w.path)
                files.append(w.path); written.append(w)
            }
            var wrotePLY = false
            if let raw = u.depth?.0 ?? u.ply?.depth {
                let (depth, calibration) = try stage.align(raw, colorWidth: u.colorSize.0, colorHeight: u.colorSize.1, calibration: u.calibration)
                if let w = u.depth?.1 {
                    try TUMWriter.writeDepth(depth, scale: depthScale, to: directory + "/" + w.path)
                    files.append(w.path); written.append(w)
                }
                if let ply = u.ply {
                    let cloud = calibration.needsAlignment && ply.color != nil
                        ? PointCloud.unproject(depth: depth, color: ply.color!, calibration: calibration)
                        : PointCloud.unproject(depth: depth, color: ply.color)
                    try FileManager.default.createDirectory(atPath: directory + "/ply", withIntermediateDirectories: true)
                    try PLYWriter.write(cloud, to: directory + "/" + ply.path)
                    files.append(ply.path)
                    wrotePLY = true
                }
            }
            return ExportDone(written: written, paired: u.paired, kinds: u.kinds, files: files, wrotePLY: wrotePLY, pose: u.pose,
                              pairedWith: u.pairedWith)
        } catch {
            for f in files { unlink(directory + "/" + f) }   // no half unit left behind
            throw CaptureError.wrapping(error, path: directory)
        }
    }

    /// An IR image as gray: gray8 and gray16 as they are, rgba8 (a gray image expanded) by its red channel.
    static func gray(_ image: PixelBuffer) -> PixelBuffer {
        guard image.format == .rgba8 else { return image }
        let out = PixelBuffer(width: image.width, height: image.height, format: .gray8)
        for y in 0..<image.height {
            let s = image.row(y, as: UInt8.self), d = out.row(y, as: UInt8.self)
            for x in 0..<image.width { d[x] = s[4 * x] }
        }
        out.markModified()
        return out
    }
}

/// Hands units to an `ExportPipeline` and lists their results in the order they were given, at
/// most `capacity` units decoded and not yet listed (the producer waits for the oldest beyond that).
final class OrderedListing {
    let writer: TUMWriter
    let pipeline: ExportPipeline
    let capacity: Int
    private var submitted = 0
    private var delivered = 0
    private var failure: Error?
    private(set) var listed = 0
    private(set) var plyWritten = 0
    private(set) var images: [StreamKind: Int] = [:]
    /// Each listed unit's `groundtruth.txt` line (nil: no pose), in the order `TUMWriter` lists them.
    private(set) var poseLines: [String?] = []
    /// Frames a worker could not decode, in order.
    private(set) var skipped: [SkippedFrame] = []

    init(writer: TUMWriter, pipeline: ExportPipeline, capacity: Int) {
        self.writer = writer; self.pipeline = pipeline; self.capacity = max(1, capacity)
    }

    /// Queues a unit; lists finished ones while too many are in flight. Throws a worker's error.
    func submit(_ unit: ExportUnit, onListed: (Int) -> Void) throws {
        pipeline.enqueue(submitted, unit)
        submitted += 1
        while submitted - delivered >= capacity { try deliverOne(onListed) }
    }

    /// Lists every unit still in flight. Throws the first worker's error.
    func finish(onListed: (Int) -> Void) throws {
        while delivered < submitted { try deliverOne(onListed) }
    }

    /// After an error: waits for the units in flight; those after a failed one are deleted (they
    /// cannot be listed in order), the others listed.
    func drain() {
        while delivered < submitted {
            let r = pipeline.result(delivered)
            delivered += 1
            guard case let .success(done) = r else { continue }
            if failure == nil {
                _ = try? list(done)   // a listing that fails is undone by TUMWriter.finish
            } else {
                for f in done.files { unlink(writer.directory + "/" + f) }
            }
        }
    }

    private func deliverOne(_ onListed: (Int) -> Void) throws {
        let r = pipeline.result(delivered)
        delivered += 1
        switch r {
        case let .success(done):
            do { try list(done) } catch {
                failure = error
                throw CaptureError.wrapping(error, path: writer.directory)
            }
            onListed(listed)
        case let .failure(error):
            failure = error
            throw error
        }
    }

    private func list(_ done: ExportDone) throws {
        if let s = done.skipped {
            skipped.append(s)
            return
        }
        guard !done.written.isEmpty else {
            // A PLY of a depth frame not written itself (--ply without depth in --what).
            if done.wrotePLY { plyWritten += 1; listed += 1 }
            return
        }
        try writer.list(done.written, paired: done.paired, with: done.pairedWith)
        poseLines.append(done.pose)
        listed += 1
        if done.wrotePLY { plyWritten += 1 }
        for k in done.kinds { images[k, default: 0] += 1 }
    }
}
