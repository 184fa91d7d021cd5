import CDepthKit
import CVulkan
import DepthKit
import Foundation

/// The depth-quality plane-fit reductions on the GPU (depthPlaneMoments.comp), the port of
/// DepthKit's `CPUPlaneMoments`: the ROI's depth goes up in a host-visible storage buffer, pass 0
/// sums count and points, the host adds the per-invocation partials in Double and rounds the
/// centroid to Float as the CPU does, pass 1 sums the centered second moments. Two synchronous
/// submits per frame (the second needs the first's centroid).
///
/// Agreement with the CPU: the same Float deprojection and products (`precise`), summed in Float
/// within an invocation (at most DL_REDUCE_ROWS × ⌈w/DL_REDUCE_SIZE⌉ terms) where the CPU sums
/// all in Double: counts equal, sums within float rounding (≈1e-6 relative; GLSL's division may
/// be a few ULP off).
public final class GPUPlaneMoments: PlaneMomentsBackend {
    public let backendName = "GPU"
    /// Upload + both passes + readback of the last `moments`, and the GPU time of the dispatches.
    public private(set) var lastTiming: GPUTiming?

    let context: GPUContext
    private let stream: CommandStream
    private let layout: DescriptorSetLayout
    private let kernel: ComputeKernel
    private var resources: Resources?

    /// Buffers for one ROI size and their descriptor sets.
    private final class Resources {
        let width: Int, height: Int, slots: Int
        let input: GPUBuffer, partials: GPUBuffer
        let inputSet: VkDescriptorSet, partialsSet: VkDescriptorSet
        private let descriptorPool: DescriptorPool

        init(context: GPUContext, layout: DescriptorSetLayout, width: Int, height: Int) throws {
            self.width = width; self.height = height
            let bands = (height + Int(DL_REDUCE_ROWS) - 1) / Int(DL_REDUCE_ROWS)
            slots = bands * Int(DL_REDUCE_SIZE)
            let storage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT.rawValue
            input = try GPUBuffer(context: context, size: width * height * 4, usage: storage, hostVisible: true)
            partials = try GPUBuffer(context: context, size: slots * 8 * 4, usage: storage, hostVisible: true)
            let dp = try DescriptorPool(context: context, maxSets: 2, sizes: [(VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 2)])
            inputSet = try dp.allocate(layout)
            DescriptorWrite.buffer(context.device, set: inputSet, binding: 0, buffer: input)
            partialsSet = try dp.allocate(layout)
            DescriptorWrite.buffer(context.device, set: partialsSet, binding: 0, buffer: partials)
            descriptorPool = dp
        }
    }

    public init(context: GPUContext? = nil, library: ShaderLibrary? = nil) throws {
        let ctx = try context ?? GPUContext.shared()
        let lib = try library ?? ShaderLibrary.shared()
        self.context = ctx
        stream = try CommandStream(context: ctx)
        layout = try DescriptorSetLayout(context: ctx, bindings: [(VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, VK_SHADER_STAGE_COMPUTE_BIT.rawValue)])
        kernel = try ComputeKernel(context: ctx, library: lib, name: "depthPlaneMoments.comp", setLayouts: [layout, layout],
                                   pushConstantSize: 48, localSize: (Int(DL_REDUCE_SIZE), 1))
    }

    public func moments(depth: PixelBuffer, intrinsics k: CameraIntrinsics, roi: QualityROI) throws -> PlaneMoments {
        guard depth.format == .depthFloat32 else {
            throw RenderError.formatMismatch(kernel: "planeMoments", expected: "depthFloat32", got: depth.frameFormat)
        }
        guard roi.x >= 0, roi.y >= 0, roi.width > 0, roi.height > 0,
              roi.x + roi.width <= depth.width, roi.y + roi.height <= depth.height else {
            throw RenderError.invalidParameter("planeMoments: ROI \(roi) is not inside the \(depth.width)x\(depth.height) depth map")
        }
        if resources?.width != roi.width || resources?.height != roi.height {
            resources = nil
            resources = try Resources(context: context, layout: layout, width: roi.width, height: roi.height)
        }
        guard let r = resources, let inPtr = r.input.mapped else {
            throw RenderError.notPrepared("planeMoments")
        }
        let start = DispatchTime.now()
        for y in 0..<roi.height {
            (inPtr + y * roi.width * 4).copyMemory(from: depth.row(roi.y + y) + roi.x * 4, byteCount: roi.width * 4)
        }
        var dispatchMs: Double? = 0
        let first = try pass(r, roi: roi, k, centroid: .zero, mode: 0, dispatchMs: &dispatchMs)
        let n = first.count
        guard n > 0 else { return PlaneMoments(count: 0, centroid: .zero) }
        let c = SIMD3<Float>(Float(first.sums[0] / Double(n)), Float(first.sums[1] / Double(n)), Float(first.sums[2] / Double(n)))
        let second = try pass(r, roi: roi, k, centroid: c, mode: 1, dispatchMs: &dispatchMs)
        let s = second.sums
        lastTiming = GPUTiming(endToEndMs: milliseconds(since: start), dispatchMs: dispatchMs)
        return PlaneMoments(count: n, centroid: c, xx: s[0], xy: s[1], xz: s[2], yy: s[3], yz: s[4], zz: s[5])
    }

    /// One dispatch over the uploaded ROI, then the partials added on the host.
    private func pass(_ r: Resources, roi: QualityROI, _ k: CameraIntrinsics, centroid c: SIMD3<Float>, mode: UInt32,
                      dispatchMs: inout Double?) throws -> (count: Int, sums: [Double]) {
        let cb = try stream.begin()
        stream.timestamp(0)
        var p = PushWords()
        p.i(roi.x); p.i(roi.y); p.i(roi.width); p.i(roi.height)
        p.f(k.fx); p.f(k.fy); p.f(k.cx); p.f(k.cy)
        p.f(c.x); p.f(c.y); p.f(c.z); p.u(mode)
        kernel.dispatch(cb, sets: DescriptorSets(r.inputSet, r.partialsSet), push: p, threads: (r.slots, 1))
        Barrier.memory(cb, from: Barrier.compute, VK_ACCESS_SHADER_WRITE_BIT.rawValue,
                       to: VK_PIPELINE_STAGE_HOST_BIT.rawValue, VK_ACCESS_HOST_READ_BIT.rawValue)
        stream.timestamp(1)
        let ms = try stream.submitAndWait()
        dispatchMs = ms.flatMap { m in dispatchMs.map { $0 + m } }
        guard let out = r.partials.mapped else { throw RenderError.notPrepared("planeMoments") }
        let words = out.bindMemory(to: Float.self, capacity: r.slots * 8)
        var count = 0
        var sums = [Double](repeating: 0, count: 6)
        for slot in 0..<r.slots {
            let base = slot * 8
            count += Int(words[base].bitPattern)
            for j in 0..<6 { sums[j] += Double(words[base + 1 + j]) }
        }
        return (count, sums)
    }
}
