/// Errors of GPUKit that are not a failed Vulkan call. Each description is one line for the user.
public enum GPUError: Error, CustomStringConvertible, Equatable {
    /// No Vulkan implementation or no physical device at all: headless commands fall back to the CPU.
    case noVulkanDevice
    /// Devices exist but none meets depthlens' needs; each with why it was rejected.
    case noSuitableDevice([String])
    /// `--device` named an index or name that does not exist or was rejected.
    case deviceNotFound(String)
    /// A shader file was not found in any of the searched folders.
    case shaderNotFound(name: String, searched: [String])
    /// glslang rejected a shader: lines of the form `Shaders/x.comp:12: error: …`.
    case shaderCompile(String)
    /// The device lacks something a kernel needs, or an input it cannot take.
    case unsupported(String)

    public var description: String {
        switch self {
        case .noVulkanDevice:
            return "no Vulkan device found: install Mesa's lavapipe with `apt-get install mesa-vulkan-drivers`"
        case .noSuitableDevice(let reasons):
            return "no suitable Vulkan device: " + reasons.joined(separator: "; ")
        case .deviceNotFound(let s): return s
        case let .shaderNotFound(name, searched):
            return "shader \(name) not found (searched \(searched.joined(separator: ", ")); set DEPTHLENS_SHADERS to the Shaders folder"
        case .shaderCompile(let s): return s
        case .unsupported(let s): return s
        }
    }
}
