import DepthKit
import Foundation

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

    /// The factory to run `filter` at this size.
    func factory(for filter: ProcessFilter, width: Int, height: Int) throws -> FilterFactory {
        CPUFilterFactory()
    }
}
