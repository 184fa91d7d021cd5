import CVulkan

/// The one error of a failed Vulkan call: the negative `VkResult` and the call that returned it.
///
/// Only negative results are errors. Positive ones (`VK_TIMEOUT`, `VK_NOT_READY`,
/// `VK_INCOMPLETE`, `VK_SUBOPTIMAL_KHR`) go back to the caller from `vkCheck`.
public struct VulkanError: Error, CustomStringConvertible, Equatable {
    public let result: VkResult
    public let call: String

    public init(result: VkResult, call: String) {
        self.result = result
        self.call = call
    }

    public var description: String { "\(call) failed: \(vkResultName(result)) (\(result.rawValue))" }
}

/// Throws `VulkanError` for a negative result; returns the (non-negative) result otherwise.
@discardableResult @inline(__always)
public func vkCheck(_ result: VkResult, _ call: @autoclosure () -> String) throws -> VkResult {
    if result.rawValue < 0 { throw VulkanError(result: result, call: call()) }
    return result
}

/// The name of a `VkResult`, for messages (a switch on raw values: C enums are never force-unwrapped).
public func vkResultName(_ r: VkResult) -> String {
    switch r.rawValue {
    case 0: return "VK_SUCCESS"
    case 1: return "VK_NOT_READY"
    case 2: return "VK_TIMEOUT"
    case 5: return "VK_INCOMPLETE"
    case -1: return "VK_ERROR_OUT_OF_HOST_MEMORY"
    case -2: return "VK_ERROR_OUT_OF_DEVICE_MEMORY"
    case -3: return "VK_ERROR_INITIALIZATION_FAILED"
    case -4: return "VK_ERROR_DEVICE_LOST"
    case -5: return "VK_ERROR_MEMORY_MAP_FAILED"
    case -6: return "VK_ERROR_LAYER_NOT_PRESENT"
    case -7: return "VK_ERROR_EXTENSION_NOT_PRESENT"
    case -8: return "VK_ERROR_FEATURE_NOT_PRESENT"
    case -9: return "VK_ERROR_INCOMPATIBLE_DRIVER"
    case -10: return "VK_ERROR_TOO_MANY_OBJECTS"
    case -11: return "VK_ERROR_FORMAT_NOT_SUPPORTED"
    case -12: return "VK_ERROR_FRAGMENTED_POOL"
    case -13: return "VK_ERROR_UNKNOWN"
    case -1000069000: return "VK_ERROR_OUT_OF_POOL_MEMORY"
    case -1000072003: return "VK_ERROR_INVALID_EXTERNAL_HANDLE"
    case -1000000000: return "VK_ERROR_SURFACE_LOST_KHR"
    case -1000001004: return "VK_ERROR_OUT_OF_DATE_KHR"
    case 1000001003: return "VK_SUBOPTIMAL_KHR"
    default: return "VkResult"
    }
}
