import CShim

/// Which compiled copy of the CPU kernels' inner loops runs (they live in CShim's `kernels.c`,
/// compiled once for baseline x86-64 and once for AVX2). Both give the same bytes; AVX2 is
/// picked when the CPU has it, unless `DEPTHLENS_CPU_PATH=baseline` says otherwise, and tests set
/// `active` to run every path the machine can run.
public enum CPUVectorPath: String, CaseIterable, Sendable {
    case baseline, avx2

    /// The paths this CPU can run, baseline first.
    public static var available: [CPUVectorPath] {
        dl_kernels_avx2_supported() != 0 ? [.baseline, .avx2] : [.baseline]
    }

    /// The path the kernels run now. Setting a path the CPU cannot run leaves `.baseline`.
    public static var active: CPUVectorPath {
        get { dl_kernels_avx2() != 0 ? .avx2 : .baseline }
        set { dl_kernels_set_avx2(newValue == .avx2 ? 1 : 0) }
    }
}
