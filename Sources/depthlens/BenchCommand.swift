import ArgumentParser
import DepthKit
import Foundation
import GPUKit

struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Time every kernel on the CPU and the GPU against a plain copy of the same bytes.",
        discussion: "Ratios are what to compare: cpu/copy says how close a kernel runs to memory speed, gpu/cpu which backend wins here."
    )

    @Option(help: "Comma-separated sizes WxH.")
    var sizes: String = "640x480,1280x720,1920x1080"
    @Option(help: "Comma-separated kernels (default: all): \(BenchKernel.all.map(\.name).joined(separator: ", ")).")
    var kernels: String?
    @Option(help: "cpu, gpu or all (both, with the max difference between them).")
    var backend: String = "all"
    @Option(help: "Minimum timed iterations per measurement.")
    var iterations: Int = 10
    @Flag(help: "Print JSON instead of a table.")
    var json = false
    @Option(help: "Also draw the results as a bar chart PNG (needs gnuplot).")
    var plot: String?
    @Option(help: "Vulkan device: index or part of the name (see `depthlens devices`).")
    var device: String?
    @Flag(name: .customLong("point-cloud-only"), help: "Only the point-cloud rows (raster vs compute vs cpu, 307k and 2M points; they also end a run without --kernels).")
    var pointCloudOnly = false

    func run() throws {
        let parsedSizes = try sizes.split(separator: ",").map { try parseSize(String($0)) }
        let selected = try selectKernels()
        guard iterations >= 1 else { throw DepthKitError.invalidArgument("--iterations must be at least 1") }
        let (useCPU, useGPU) = try backends()
        if plot != nil { _ = try BenchPlot.gnuplot() }
        GPUBackend.select(device: device)
        if pointCloudOnly {
            let (rows, bits, name) = try pointRows(cpu: useCPU, gpu: useGPU)
            if json { return print(try Self.encode(BenchReport(device: name, cpu_path: CPUVectorPath.active.rawValue, results: [], points: rows))) }
            return print(PointCloudBench.table(rows, device: name, atomicBits: bits))
        }
        let gpu: FilterFactory? = useGPU ? GPUBackend.gpuIfAvailable() : nil
        if useGPU && gpu == nil {
            do { _ = try GPUBackend.gpu() } catch { warn("\(error); timing the CPU only") }
        }
        var results: [BenchResult] = []
        for size in parsedSizes {
            let scene = SyntheticScene().render(width: size.0, height: size.1, time: 0)
            for kernel in selected {
                results.append(try measure(kernel, frame: scene, cpu: useCPU, gpu: gpu))
                if !json { FileHandle.standardError.write(Data(".".utf8)) }
            }
        }
        if !json { FileHandle.standardError.write(Data("\n".utf8)) }
        var report = BenchReport(device: gpu?.backendName ?? "none (cpu only)",
                                 cpu_path: CPUVectorPath.active.rawValue, results: results)
        // The point-cloud rows with every kernel (no --kernels), or alone with --point-cloud-only.
        let points = kernels == nil ? try pointRows(cpu: useCPU, gpu: gpu != nil) : nil
        report.points = points?.rows
        if json {
            print(try Self.encode(report))
        } else {
            print(report.table())
            if let points { print(PointCloudBench.table(points.rows, device: points.device, atomicBits: points.bits)) }
        }
        if let plot { try BenchPlot.draw(report, to: plot) }
    }

    /// The point-cloud rows (`PointCloudBench`): the GPU columns where a device is asked for and present.
    private func pointRows(cpu: Bool, gpu: Bool) throws -> (rows: [PointBenchRow], bits: Int?, device: String) {
        var context: GPUContext?
        if gpu {
            do { context = try GPUContext.shared() } catch { warn("\(error); timing the CPU point renderer only") }
        }
        let r = try PointCloudBench.rows(iterations: iterations, gpu: context, cpu: cpu || context == nil)
        return (r.rows, r.atomicBits, context?.name ?? "no GPU")
    }

    private static func encode(_ report: BenchReport) throws -> String {
        let enc = JSONEncoder()
        enc.outputFormatting = [.prettyPrinted, .sortedKeys]
        return String(decoding: try enc.encode(report), as: UTF8.self)
    }

    private func parseSize(_ s: String) throws -> (Int, Int) {
        let p = s.lowercased().split(separator: "x")
        guard p.count == 2, let w = Int(p[0]), let h = Int(p[1]), w > 0, h > 0, w <= 16384, h <= 16384 else {
            throw DepthKitError.invalidArgument("--sizes: '\(s)' is not WIDTHxHEIGHT")
        }
        return (w, h)
    }

    private func selectKernels() throws -> [BenchKernel] {
        guard let kernels else { return BenchKernel.all }
        return try kernels.split(separator: ",").map { name in
            guard let k = BenchKernel.all.first(where: { $0.name == name }) else {
                throw DepthKitError.invalidArgument("--kernels: unknown kernel '\(name)' (expected: \(BenchKernel.all.map(\.name).joined(separator: ", ")))")
            }
            return k
        }
    }

    private func backends() throws -> (Bool, Bool) {
        switch backend.lowercased() {
        case "cpu": return (true, false)
        case "gpu": return (false, true)
        case "all": return (true, true)
        default: throw DepthKitError.invalidArgument("--backend must be cpu, gpu or all, got '\(backend)'")
        }
    }

    private func measure(_ k: BenchKernel, frame: RGBDFrame, cpu: Bool, gpu: FilterFactory?) throws -> BenchResult {
        let input = k.input(frame)
        let copyTarget = PixelBuffer(width: input.width, height: input.height, format: input.format)
        let copyMs = timeMs(iterations) { copyTarget.copy(from: input) }
        var result = BenchResult(kernel: k.name, size: "\(input.width)x\(input.height)", copy_ms: copyMs)
        var cpuOut: PixelBuffer?
        if cpu {
            let kernel = try k.prepare(GPUBackend.cpu, frame)
            cpuOut = try kernel.run()
            result.cpu_ms = try timeThrowing(iterations) { _ = try kernel.run() }
        }
        if let gpu {
            let kernel = try k.prepare(gpu, frame)
            let out = try kernel.run()
            var dispatch: [Double] = []
            result.gpu_ms = try timeThrowing(iterations) {
                _ = try kernel.run()
                if let d = (kernel.renderer as? DispatchTimed)?.lastDispatchMs { dispatch.append(d) }
            }
            result.gpu_dispatch_ms = dispatch.isEmpty ? nil : median(dispatch)
            if let c = cpuOut { result.max_abs_diff = maxAbsDiff(c, out) }
        }
        return result
    }
}

/// One kernel as `bench` runs it: which input it reads and how to run it prepared, in steady state.
struct BenchKernel: Sendable {
    let name: String
    let input: @Sendable (RGBDFrame) -> PixelBuffer
    /// Prepares the renderer(s) once and returns what renders one frame.
    let prepare: @Sendable (FilterFactory, RGBDFrame) throws -> Prepared

    struct Prepared {
        /// The renderer being timed (for its GPU timestamps).
        let renderer: AnyObject
        let run: () throws -> PixelBuffer
    }

    static func filter(_ name: String, _ spec: FilterSpec) -> BenchKernel {
        BenchKernel(name: name, input: { spec.takesDepth ? $0.depth.map : $0.color }) { factory, frame in
            let input = spec.takesDepth ? frame.depth.map : frame.color
            let r = try factory.makeFilter(spec)
            try r.prepare(input: input.frameFormat, outputRetainedBufferCountHint: 2)
            return Prepared(renderer: r) { try r.render(input) }
        }
    }

    static let all: [BenchKernel] = [
        .filter("rosy", .rosy),
        .filter("colorMatrix", .colorMatrix(.rosy)),
        .filter("grayscale", .grayscale(offset: nil, range: nil)),
        // The same with the range given (`process --min/--max`): no pass for the frame's min and max.
        .filter("grayscaleFixed", .grayscale(offset: 0.5, range: 3.5)),
        .filter("jet", .colormap(.jet, .defaultEqualized)),
        .filter("jetFixed", .colormap(.jet, .fixed(min: 0.5, max: 4))),
        .filter("turbo", .colormap(.turbo, .defaultEqualized)),
        BenchKernel(name: "mix", input: { $0.color }) { factory, frame in
            // The JET image is precomputed: this times the mixer alone.
            let jet = try GPUBackend.cpu.makeFilter(.colormap(.jet, .defaultEqualized))
            try jet.prepare(input: frame.depth.map.frameFormat, outputRetainedBufferCountHint: 1)
            let b = try jet.render(frame.depth.map).clone()
            let m = try factory.makeMixer(mixFactor: 0.5)
            try m.prepare(input: frame.color.frameFormat, secondInput: b.frameFormat, outputRetainedBufferCountHint: 2)
            return Prepared(renderer: m) { try m.render(frame.color, b) }
        },
    ] + moreColormapRows + depthEffects + [.smooth, .align, .quality]
}

struct BenchResult: Codable {
    var kernel: String
    var size: String
    var cpu_ms: Double?
    var gpu_ms: Double?
    var gpu_dispatch_ms: Double?
    var max_abs_diff: Int?
    var copy_ms: Double
}

struct BenchReport: Codable {
    var device: String
    /// Which compiled copy of the CPU loops ran (`CPUVectorPath`: baseline, avx2, avx512).
    var cpu_path: String?
    var results: [BenchResult]
    /// The point-cloud rows (raster, compute, cpu into 1280x720).
    var points: [PointBenchRow]? = nil

    func table() -> String {
        func f(_ v: Double?) -> String { v.map { String(format: "%.3f", $0) } ?? "-" }
        func r(_ a: Double?, _ b: Double?) -> String {
            guard let a, let b, b > 0 else { return "-" }
            return String(format: "%.2fx", a / b)
        }
        var lines = ["device: \(device)" + (cpu_path.map { ", cpu loops: \($0)" } ?? ""),
                     pad(["kernel", "size", "copy ms", "cpu ms", "cpu/copy", "gpu ms", "dispatch ms", "gpu/cpu", "max diff"])]
        for x in results {
            lines.append(pad([x.kernel, x.size, f(x.copy_ms), f(x.cpu_ms), r(x.cpu_ms, x.copy_ms),
                              f(x.gpu_ms), f(x.gpu_dispatch_ms), r(x.gpu_ms, x.cpu_ms),
                              x.max_abs_diff.map(String.init) ?? "-"]))
        }
        return lines.joined(separator: "\n")
    }

    private func pad(_ cols: [String]) -> String {
        let widths = [14, 10, 9, 9, 9, 9, 12, 8, 8]
        return zip(cols, widths).map { c, w in c.padding(toLength: max(w, c.count), withPad: " ", startingAt: 0) }
            .joined(separator: " ")
    }
}

/// Median wall time in ms of `body` over at least `n` runs (and at least 0.2 s), after one warm-up.
func timeMs(_ n: Int, _ body: () -> Void) -> Double {
    (try? timeThrowing(n, body)) ?? 0
}

func timeThrowing(_ n: Int, _ body: () throws -> Void) throws -> Double {
    try body()
    var samples: [Double] = []
    let start = DispatchTime.now().uptimeNanoseconds
    while samples.count < n || (samples.count < 200 && DispatchTime.now().uptimeNanoseconds - start < 200_000_000) {
        let t0 = DispatchTime.now().uptimeNanoseconds
        try body()
        samples.append(Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e6)
    }
    return median(samples)
}

func median(_ xs: [Double]) -> Double {
    let s = xs.sorted()
    return s.isEmpty ? 0 : s[s.count / 2]
}

/// Largest per-byte difference between two 8-bit images of the same size and format.
func maxAbsDiff(_ a: PixelBuffer, _ b: PixelBuffer) -> Int {
    guard a.width == b.width, a.height == b.height, a.format == b.format else { return Int.max }
    if a.format == .depthFloat32 { return maxDepthDiffMicrometers(a, b) }
    let n = a.width * a.format.bytesPerPixel
    var m = 0
    for y in 0..<a.height {
        let p = a.row(y, as: UInt8.self), q = b.row(y, as: UInt8.self)
        for i in 0..<n { m = max(m, abs(Int(p[i]) - Int(q[i]))) }
    }
    return m
}
