import DepthKit
import Foundation
import GPUKit

extension BenchKernel {
    /// `align`: depth aligned to color (librealsense's `align` to color) with the D435-like
    /// calibration. The size is the color image's; the depth is 848×480 scaled with it (848×480
    /// into 1280×720 at `--sizes 1280x720`), the synthetic scene's depth at that size. The copy
    /// column copies the bytes the kernel writes (a color-sized depth image). CPU: DepthAligner
    /// into a reused buffer; GPU: GPUDepthAligner end to end (copy in, fill, dispatch, copy out).
    static let align = BenchKernel(name: "align", input: { frame in
        // Written, so the copy reads real pages (an untouched buffer reads the kernel's zero page).
        let b = PixelBuffer(width: frame.color.width, height: frame.color.height, format: .depthFloat32)
        for y in 0..<b.height { let r = b.row(y, as: Float.self); for x in 0..<b.width { r[x] = 1.5 } }
        return b
    }) { factory, frame in
        let cw = frame.color.width, ch = frame.color.height
        let dw = max(1, (cw * 848 + 640) / 1280), dh = max(1, (ch * 480 + 360) / 720)
        let depth = SyntheticScene().render(width: dw, height: dh, time: 0).depth.depthFloat32()
        let calibration = RGBDCalibration.d435Like(depthWidth: dw, depthHeight: dh, colorWidth: cw, colorHeight: ch)
        if let gpu = factory as? GPUFilterFactory {
            let aligner = try GPUDepthAligner(context: gpu.context, library: gpu.library)
            return Prepared(renderer: aligner) { try aligner.align(depth: depth, calibration: calibration) }
        }
        let aligner = DepthAligner()
        let out = PixelBuffer(width: cw, height: ch, format: .depthFloat32)
        return Prepared(renderer: aligner) {
            try aligner.align(depth: depth, calibration: calibration, into: out)
            return out
        }
    }
}

extension GPUDepthAligner: DispatchTimed { var lastDispatchMs: Double? { lastTiming?.dispatchMs } }
