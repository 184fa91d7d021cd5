import Capture
import DepthKit
import Foundation

/// The window's side of the Quality section (`QualityPanel`): the section in the panel, its ROI
/// drawn on the 2D image and dragged there, and Save CSV (J).
extension ViewerApp {
    /// The section and, while it is open, this frame's metrics (`--log-readout` prints each row as `quality:`).
    func buildQualitySection() {
        let q = ui.quality
        guard q.build(logLayout: options.logUI, save: { saveQualityCSV() }) else { return }
        let log: ((String) -> Void)? = options.logReadout ? { print($0); fflush(nil) } : nil
        // The depth camera's own pixels (before alignment to color), as `depthlens quality` reads them.
        q.update(frame: depth.unaligned, calibration: depth.recordedCalibration, baselineMeters: session.source?.stereoBaselineMeters,
                 sourceGeneration: session.generation, log: log)
    }

    /// The metrics run (and the ROI is drawn and dragged) while the section is open in the shown panel.
    var qualityActive: Bool { ui.showPanel && ui.quality.isOpen }

    /// The depth pixel under a window point of the 2D image, nil on the bars.
    func depthPixel(atWindowX x: Double, y: Double) -> (x: Int, y: Int)? {
        guard let out = composer.lastOutput, let d = depth.unaligned?.depth,
              let p = imageBox(out).imagePixel(windowX: x, windowY: y) else { return nil }
        return Letterbox.rescale(p, from: (out.width, out.height), to: (d.map.width, d.map.height))
    }

    /// A left button on the 2D image while the section is open: a drag (more than 3 px) sets the ROI rectangle.
    func qualityMouse(pressed: Bool, x: Double, y: Double) {
        if pressed {
            ui.quality.dragStart = qualityActive ? depthPixel(atWindowX: x, y: y).map { (pixel: $0, x: x, y: y) } : nil
        } else if let s = ui.quality.dragStart {
            ui.quality.dragStart = nil
            guard qualityActive, abs(x - s.x) + abs(y - s.y) > 3, let end = depthPixel(atWindowX: x, y: y) else { return }
            ui.quality.setROI(from: s.pixel, to: end)
            logUI("quality roi \(ui.quality.roi)")
        }
    }

    /// The ROI on the 2D image (green), and the rectangle being dragged (yellow).
    func drawQualityROI() {
        guard view == .twoD, qualityActive, let out = composer.lastOutput, let d = depth.unaligned?.depth else { return }
        let box = imageBox(out), mw = Float(d.map.width), mh = Float(d.map.height)
        func wx(_ u: Int) -> Float { box.rect.x + Float(u) / mw * box.rect.width }
        func wy(_ v: Int) -> Float { box.rect.y + Float(v) / mh * box.rect.height }
        if let r = ui.quality.shownROI ?? (try? ui.quality.roi.resolve(width: d.map.width, height: d.map.height)) {
            UI.rect(wx(r.x), wy(r.y), wx(r.x + r.width), wy(r.y + r.height))
        }
        if let s = ui.quality.dragStart, let c = depthPixel(atWindowX: window.cursor.x, y: window.cursor.y) {
            UI.rect(wx(min(s.pixel.x, c.x)), wy(min(s.pixel.y, c.y)), wx(max(s.pixel.x, c.x) + 1), wy(max(s.pixel.y, c.y) + 1),
                    color: [1, 1, 0.3])
        }
    }

    /// W and the section's button: the rows as `quality --csv` writes them, into --snapshot-dir.
    func saveQualityCSV() {
        let n = ui.quality.rows.count
        guard let text = ui.quality.csv(metadata: session.source?.metadata ?? SourceMetadata(kind: session.name)) else {
            notice("quality: no rows to write yet (Y opens the Quality section)")
            return
        }
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.dateFormat = "yyyyMMdd-HHmmss-SSS"
        let path = (options.snapshotDir as NSString).appendingPathComponent("quality-\(f.string(from: Date())).csv")
        do {
            try FileManager.default.createDirectory(atPath: options.snapshotDir, withIntermediateDirectories: true)
            try FileSupport.atomicWrite(Array(text.utf8), to: path)
            notice("quality: wrote \(n) row\(n == 1 ? "" : "s") to \(path)")
        } catch {
            notice("quality: cannot write \(path): \(error)", isError: true)
        }
    }
}
