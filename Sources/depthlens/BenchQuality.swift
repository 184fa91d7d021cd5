import DepthKit
import Foundation
import GPUKit

extension BenchKernel {
    /// `quality`: the depth-quality plane-fit reductions (count and centroid, then the centered
    /// second moments) over the tool's default 40 % ROI of the synthetic depth. CPU:
    /// CPUPlaneMoments; GPU: GPUPlaneMoments end to end (ROI upload, 2 dispatches, partials read
    /// back and added). The compared output is the fitted plane's distance and the centroid's z
    /// as a 2×1 depth map, so "max diff" is in micrometers.
    static let quality = BenchKernel(name: "quality", input: { $0.depth.map }) { factory, frame in
        let depth = frame.depth.depthFloat32()
        let k = CameraIntrinsics.default(width: depth.width, height: depth.height)
        let roi = QualityROI.centered(fraction: 0.4, width: depth.width, height: depth.height)
        let backend: PlaneMomentsBackend
        if let gpu = factory as? GPUFilterFactory {
            backend = try GPUPlaneMoments(context: gpu.context, library: gpu.library)
        } else {
            backend = CPUPlaneMoments()
        }
        let out = PixelBuffer(width: 2, height: 1, format: .depthFloat32)
        return Prepared(renderer: backend) {
            let m = try backend.moments(depth: depth, intrinsics: k, roi: roi)
            let row = out.row(0, as: Float.self)
            row[0] = Float(FittedPlane.fit(m).map { -$0.d } ?? 0)
            row[1] = m.centroid.z
            return out
        }
    }
}

extension GPUPlaneMoments: DispatchTimed { var lastDispatchMs: Double? { lastTiming?.dispatchMs } }
