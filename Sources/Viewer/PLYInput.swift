import Capture
import DepthKit

/// The window's PLY input (`SourceSession`'s, while a `ply:` source is open): a point list handed
/// once to the 3D scene, or a folder of PLY files played as frames (`PLYSequence`, loading on its
/// own thread), and a PLY the panel asked for, read on a worker (`PLYLoadJob`) while the old
/// source stays.
final class PLYInput {
    private let log: ViewerLog
    /// A PLY point list opened, until the 3D scene takes it (no host copy outlives its upload).
    private var pointList: PLYContents?
    /// A folder of PLY files played as frames (`ply:DIR`); the 3D scene takes each loaded file (`takeSequenceFrame`).
    private(set) var sequence: PLYSequence?
    /// A PLY the panel asked for, read on `loader`; the old source stays until it is done.
    private var loadJob: PLYLoadJob?
    /// Reads the panel's PLY: a newer one replaces a read not started yet (and cancels the one running).
    private let loader = LatestRequestWorker<PLYLoadJob, (job: PLYLoadJob, result: Result<PLYContents, Error>)>(
        name: "depthlens ply load", qualityOfService: .default) { job, _ in (job, job.read()) }
    /// The timeline line of the sequence's frame shown: index, file name, time (made per new frame).
    private(set) var sequenceLine: String?
    /// Whether the progress line of the load now running was printed (`--log-ui`).
    private var saidLoading = false

    init(log: ViewerLog, pointList: PLYContents?, sequence: PLYSequence?) {
        self.log = log
        self.pointList = pointList
        self.sequence = sequence
    }

    deinit {
        loadJob?.control.cancel()
        sequence?.stopLoading()
    }

    /// What is shown now instead: `pointList` or `sequence` (or neither, for a frame source).
    func replace(pointList: PLYContents?, sequence: PLYSequence?) {
        self.sequence?.stopLoading()
        (self.pointList, self.sequence) = (pointList, sequence)
    }

    /// Starts the sequence's loading thread; resets the timeline line.
    func start() {
        sequenceLine = nil
        sequence?.startLoading()
    }

    /// The point list a `ply:` source opened, once: the 3D scene uploads it and lets it go.
    func takePointList() -> PLYContents? {
        defer { pointList = nil }
        return pointList
    }

    /// Reads `spec`'s file on a thread of its own (the window stays responsive, Esc cancels);
    /// `finishLoad` hands it over.
    func load(_ spec: SourceSpec, path: String) {
        loadJob?.control.cancel()
        let job = PLYLoadJob(spec: spec, path: path)
        loadJob = job
        loader.submit(job)
    }

    /// A PLY read by `load` that is done: its contents and spec; a failure or a cancel is a notice
    /// and nil.
    func finishLoad() -> (PLYContents, SourceSpec, path: String)? {
        // An outcome of a read replaced since (cancelled) is dropped.
        guard let job = loadJob, let done = loader.poll(), done.job === job else { return nil }
        let result = done.result
        loadJob = nil
        switch result {
        case .success(let contents):
            return (contents, job.spec, job.path)
        case .failure(let error):
            if job.control.isCancelled { log.notice("load of \(job.path) cancelled") }
            else { log.notice("cannot open \(job.spec): \(error)", isError: true) }
            return nil
        }
    }

    /// Esc during a long PLY load: cancels the panel's load, or a sequence file read for over half a
    /// second (playback pauses); false when no such load runs (Esc then quits).
    func cancelLoad() -> Bool {
        if let job = loadJob { job.control.cancel(); return true }
        return sequence?.cancelLoad(after: 0.5) ?? false
    }

    /// The progress line of a long load (nil when none): the panel's PLY, or a sequence file read
    /// for over half a second. `--log-ui` prints it once when a load begins to show it.
    func loadLine() -> String? {
        var line: String?
        if let job = loadJob {
            let p = job.control.progress
            line = PLYLoadJob.line(job.path, done: p.done, total: p.total)
        } else if let s = sequence?.loadingStatus(after: 0.5) {
            line = PLYLoadJob.line(s.name, done: s.done, total: s.total)
        }
        if let line, !saidLoading { log.ui(line) }
        saidLoading = line != nil
        return line
    }

    /// The sequence's newest loaded file since the last call (nil when none or no sequence); its
    /// warnings (a file that could not be read) become notices.
    func takeSequenceFrame() -> PLYSequenceFrame? {
        guard let sequence else { return nil }
        let (frame, warnings) = sequence.take()
        for w in warnings { log.notice(w, isError: true) }
        if let f = frame {
            let t = f.timestamp - sequence.timestamp(at: 0)
            sequenceLine = "frame \(f.index) of \(sequence.count)   \(f.name)   "
                + String(format: "t %.3f s   %.3f / %.3f s", f.timestamp, t, sequence.durationSeconds)
        }
        return frame
    }
}
