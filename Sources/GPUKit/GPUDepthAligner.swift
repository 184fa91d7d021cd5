import CVulkan
import DepthKit
import Foundation

/// The GPU port of `DepthAligner` (depth aligned to color, librealsense's `align` to color):
/// alignDepthToColor.comp, one invocation per depth pixel, writing with `atomicMin` on the
/// float bits of a color-sized buffer cleared by `vkCmdFillBuffer`. Depth goes up and the aligned
/// depth comes back through host-visible storage buffers, one synchronous submit per frame.
///
/// Agreement with the CPU: exact, bit for bit (`precise`, the same operations in the same order,
/// the deprojection tables computed on the CPU as align.c computes them, and the projection's
/// division corrected to the correctly rounded quotient in the shader).
public final class GPUDepthAligner {
    public let backendName = "GPU"
    /// Upload + dispatch + readback of the last `align`, and the GPU time of the dispatch.
    public private(set) var lastTiming: GPUTiming?

    let context: GPUContext
    private let stream: CommandStream
    private let layout: DescriptorSetLayout
    private let kernel: ComputeKernel
    private var resources: Resources?
    private var pool: BufferPool?

    private final class Resources {
        let depthWidth: Int, depthHeight: Int, colorWidth: Int, colorHeight: Int
        let depth: GPUBuffer, tables: GPUBuffer, aligned: GPUBuffer
        let sets: (depth: VkDescriptorSet, tables: VkDescriptorSet, aligned: VkDescriptorSet)
        private let descriptorPool: DescriptorPool

        init(context: GPUContext, layout: DescriptorSetLayout, depthWidth: Int, depthHeight: Int,
             colorWidth: Int, colorHeight: Int) throws {
            self.depthWidth = depthWidth; self.depthHeight = depthHeight
            self.colorWidth = colorWidth; self.colorHeight = colorHeight
            let storage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT.rawValue
            depth = try GPUBuffer(context: context, size: depthWidth * depthHeight * 4, usage: storage, hostVisible: true)
            tables = try GPUBuffer(context: context, size: (depthWidth + depthHeight) * 2 * 4, usage: storage, hostVisible: true)
            aligned = try GPUBuffer(context: context, size: colorWidth * colorHeight * 4,
                                    usage: Vk.flags(VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, VK_BUFFER_USAGE_TRANSFER_DST_BIT),
                                    hostVisible: true)
            let dp = try DescriptorPool(context: context, maxSets: 3, sizes: [(VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 3)])
            func set(_ b: GPUBuffer) throws -> VkDescriptorSet {
                let s = try dp.allocate(layout)
                DescriptorWrite.buffer(context.device, set: s, binding: 0, buffer: b)
                return s
            }
            sets = (try set(depth), try set(tables), try set(aligned))
            descriptorPool = dp
        }
    }

    public init(context: GPUContext? = nil, library: ShaderLibrary? = nil) throws {
        let ctx = try context ?? GPUContext.shared()
        let lib = try library ?? ShaderLibrary.shared()
        self.context = ctx
        stream = try CommandStream(context: ctx)
        layout = try DescriptorSetLayout(context: ctx, bindings: [(VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, VK_SHADER_STAGE_COMPUTE_BIT.rawValue)])
        kernel = try ComputeKernel(context: ctx, library: lib, name: "alignDepthToColor.comp",
                                   setLayouts: [layout, layout, layout], pushConstantSize: 84)
    }

    /// `depth` (`.depthFloat32`, meters) aligned to the color camera of `calibration`: a
    /// `.depthFloat32` buffer of the color intrinsics' size, equal bit for bit to
    /// `DepthAligner.align(depth:calibration:)`.
    public func align(depth: PixelBuffer, calibration: RGBDCalibration) throws -> PixelBuffer {
        let c = calibration.color.intrinsics
        return try align(depth: depth, calibration: calibration, colorWidth: c.width, colorHeight: c.height)
    }

    /// As `align(depth:calibration:)`, into a color image of this size (the color intrinsics
    /// scaled to it when they were given for another size).
    public func align(depth: PixelBuffer, calibration: RGBDCalibration, colorWidth cw: Int, colorHeight ch: Int) throws -> PixelBuffer {
        guard depth.width > 0, depth.height > 0, depth.format == .depthFloat32 else {
            throw RenderError.formatMismatch(kernel: "align", expected: "depthFloat32", got: depth.frameFormat)
        }
        guard cw > 0, ch > 0 else { throw RenderError.invalidParameter("align: color image \(cw)x\(ch)") }
        let dw = depth.width, dh = depth.height
        if resources?.depthWidth != dw || resources?.depthHeight != dh || resources?.colorWidth != cw || resources?.colorHeight != ch {
            resources = nil
            resources = try Resources(context: context, layout: layout, depthWidth: dw, depthHeight: dh, colorWidth: cw, colorHeight: ch)
        }
        let format = FrameFormat(width: cw, height: ch, pixelFormat: .depthFloat32)
        if pool?.format != format { pool = BufferPool(format: format, outputRetainedBufferCountHint: 3) }
        guard let r = resources, let pool, let inPtr = r.depth.mapped, let tablePtr = r.tables.mapped,
              let outPtr = r.aligned.mapped else {
            throw RenderError.notPrepared("align")
        }
        let start = DispatchTime.now()
        for y in 0..<dh { (inPtr + y * dw * 4).copyMemory(from: depth.row(y), byteCount: dw * 4) }
        let d = DepthAligner.intrinsics(calibration.depth, width: dw, height: dh)
        let k = DepthAligner.intrinsics(calibration.color, width: cw, height: ch)
        // align.c's tables: (x ∓ 0.5 − cx)/fx and (y ∓ 0.5 − cy)/fy, the same float operations.
        let t = tablePtr.assumingMemoryBound(to: Float.self)
        for x in 0..<dw {
            t[x] = (Float(x) - 0.5 - d.cx) / d.fx
            t[dw + x] = (Float(x) + 0.5 - d.cx) / d.fx
        }
        for y in 0..<dh {
            t[2 * dw + y] = (Float(y) - 0.5 - d.cy) / d.fy
            t[2 * dw + dh + y] = (Float(y) + 0.5 - d.cy) / d.fy
        }
        let cb = try stream.begin()
        vkCmdFillBuffer(cb, r.aligned.buffer, 0, VkDeviceSize(VK_WHOLE_SIZE), 0xFFFF_FFFF)
        Barrier.transferToShaders(cb)
        stream.timestamp(0)
        var p = PushWords()
        p.i(dw); p.i(dh); p.i(cw); p.i(ch)
        p.f(k.fx); p.f(k.fy); p.f(k.cx); p.f(k.cy)
        let rot = calibration.depthToColor.rotation, tr = calibration.depthToColor.translation
        for i in 0..<9 { p.f(rot[i]) }
        p.f(tr.x); p.f(tr.y); p.f(tr.z)
        p.u(DepthAligner.usesBothCorners(depth: d, color: k) ? 1 : 0)
        kernel.dispatch(cb, sets: DescriptorSets(r.sets.depth, r.sets.tables, r.sets.aligned), push: p, threads: (dw, dh))
        Barrier.memory(cb, from: Barrier.compute, VK_ACCESS_SHADER_WRITE_BIT.rawValue,
                       to: VK_PIPELINE_STAGE_HOST_BIT.rawValue, VK_ACCESS_HOST_READ_BIT.rawValue)
        stream.timestamp(1)
        let dispatchMs = try stream.submitAndWait()
        let out = try pool.makeBuffer()
        // 0xFFFFFFFF (no depth pixel reached it) → 0.
        let src = UnsafePointer(outPtr.assumingMemoryBound(to: UInt32.self))
        for y in 0..<ch {
            let o = out.row(y, as: UInt32.self), s = src + y * cw
            for x in 0..<cw { let v = s[x]; o[x] = v == 0xFFFF_FFFF ? 0 : v }
        }
        out.markModified()
        lastTiming = GPUTiming(endToEndMs: milliseconds(since: start), dispatchMs: dispatchMs)
        return out
    }
}
