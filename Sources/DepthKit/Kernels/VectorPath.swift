import CDepthKit

/// Which compiled copy of the CPU kernels' inner loops runs (they live in CDepthKit's `kernels.c`,
/// compiled for baseline x86-64, for AVX2 and for AVX-512). All give the same bytes; the widest
/// path the CPU has is picked, unless `DEPTHLENS_CPU_PATH=baseline|avx2` names a narrower one, and
/// tests set `active` to run every path the machine can run.
public enum CPUVectorPath: String, CaseIterable, Sendable {
    case baseline, avx2, avx512

    private var code: Int32 {
        switch self {
        case .baseline: return Int32(DL_PATH_BASELINE)
        case .avx2: return Int32(DL_PATH_AVX2)
        case .avx512: return Int32(DL_PATH_AVX512)
        }
    }

    private init(code: Int32) {
        switch code {
        case Int32(DL_PATH_AVX512): self = .avx512
        case Int32(DL_PATH_AVX2): self = .avx2
        default: self = .baseline
        }
    }

    /// The paths this CPU can run, baseline first.
    public static var available: [CPUVectorPath] {
        allCases.filter { dl_kernels_path_supported($0.code) != 0 }
    }

    /// The widest path this CPU can run (what runs unless `DEPTHLENS_CPU_PATH` says otherwise).
    public static var best: CPUVectorPath { CPUVectorPath(code: dl_kernels_best_path()) }

    /// The path the kernels run now. Setting a path the CPU cannot run leaves `.baseline`.
    public static var active: CPUVectorPath {
        get { CPUVectorPath(code: dl_kernels_path()) }
        set { dl_kernels_set_path(newValue.code) }
    }
}
