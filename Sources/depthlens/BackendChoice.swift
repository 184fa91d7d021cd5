import DepthKit
import Foundation
import GPUKit

/// `--backend cpu|gpu|auto`: which kernels run.
enum BackendChoice {
    case cpu, gpu, auto

    init(_ s: String) throws {
        switch s.lowercased() {
        case "cpu": self = .cpu
        case "gpu": self = .gpu
        case "auto": self = .auto
        default: throw DepthKitError.invalidArgument("--backend must be cpu, gpu or auto, got '\(s)'")
        }
    }

    /// The factory to run `filter` on `frame`. Machines without a Vulkan device run on the CPU
    /// (and say so once, with how to get a device).
    func factory(for filter: ProcessFilter, frame: LoadedFrame, parameters: ProcessParameters) throws -> FilterFactory {
        switch self {
        case .cpu:
            return GPUBackend.cpu
        case .gpu:
            return GPUBackend.gpuOrCPU()
        case .auto:
            guard let gpu = GPUBackend.gpuIfAvailable() else { return GPUBackend.cpu }
            let selector = BackendSelector(deviceName: gpu.backendName)
            let choice = try selector.choose(kernel: filter.rawValue, width: frame.color.width, height: frame.color.height) { useGPU in
                _ = try runFilter(filter, frame: frame, parameters: parameters, factory: useGPU ? gpu : GPUBackend.cpu)
            }
            return choice.backend == "gpu" ? gpu : GPUBackend.cpu
        }
    }
}

/// The process-wide backends: one CPU factory, and one GPU factory made on first use.
enum GPUBackend {
    static let cpu = CPUFilterFactory()
    /// `nonisolated(unsafe)`: read and written only under `gpuLock`. The factory is not Sendable:
    /// the commands ask for it and use it on the main thread (the viewer makes its own).
    nonisolated(unsafe) private static var gpuResult: Result<GPUFilterFactory, Error>?
    private static let gpuLock = NSLock()
    /// The lines `noteOnce` printed.
    private static let notes = Locked(Set<String>())

    /// The GPU factory, or the error that kept it from being made (no Vulkan device…).
    static func gpu() throws -> GPUFilterFactory {
        try gpuLock.withLock {
            if gpuResult == nil { gpuResult = Result { try GPUFilterFactory(context: GPUContext.shared()) } }
            return try gpuResult!.get()
        }
    }

    static func gpuIfAvailable() -> GPUFilterFactory? { try? gpu() }

    /// The GPU, or the CPU with one line saying why (DESIGN: headless commands fall back).
    static func gpuOrCPU() -> FilterFactory {
        do { return try gpu() } catch {
            noteOnce("\(error); running on the CPU")
            return cpu
        }
    }

    static func noteOnce(_ s: String) {
        if notes.withLock({ $0.insert(s).inserted }) { warn(s) }
    }

    /// `--device INDEX|NAME` is handed to GPUKit through the environment it already reads.
    static func select(device: String?) {
        if let device, !device.isEmpty { setenv("DEPTHLENS_DEVICE", device, 1) }
    }
}

/// The last GPU time of a renderer, for `bench`.
protocol DispatchTimed { var lastDispatchMs: Double? { get } }
extension GPUFilter: DispatchTimed { var lastDispatchMs: Double? { lastTiming?.dispatchMs } }
extension GPUFragmentMixer: DispatchTimed { var lastDispatchMs: Double? { lastTiming?.dispatchMs } }
