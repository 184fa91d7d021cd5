import CVulkan
import DepthKit
import Foundation

/// What `VK_LAYER_KHRONOS_validation` reported through `VK_EXT_debug_utils`.
///
/// Turned on by `DEPTHLENS_VALIDATION=1` (or `GPUContextOptions.validation`). Tests read
/// `errorAndWarningCount` before and after a test and fail on any increase.
public final class ValidationLog: Sendable {
    public struct Message: Sendable, CustomStringConvertible {
        public enum Severity: String, Sendable { case verbose, info, warning, error }
        public let severity: Severity
        public let id: String
        public let text: String
        public var description: String { "[\(severity.rawValue)] \(id): \(text)" }
    }

    private struct State {
        var stored: [Message] = []
        var errorsAndWarnings = 0
        var echo: Bool
    }
    /// Written by the layer's callback on whichever thread called Vulkan.
    private let state: Locked<State>

    init(echo: Bool) { state = Locked(State(echo: echo)) }

    /// Also print each warning and error to stderr as it arrives.
    public var echo: Bool {
        get { state.current.echo }
        set { state.withLock { $0.echo = newValue } }
    }
    /// Every warning and error so far (info and verbose messages are dropped).
    public var messages: [Message] { state.current.stored }
    /// Number of warnings and errors so far.
    public var errorAndWarningCount: Int { state.current.errorsAndWarnings }

    func append(_ m: Message) {
        guard m.severity == .warning || m.severity == .error else { return }
        let echo = state.withLock { s -> Bool in
            s.stored.append(m)
            s.errorsAndWarnings += 1
            return s.echo
        }
        if echo { FileHandle.standardError.write(Data("vulkan validation: \(m)\n".utf8)) }
    }

    static let layerName = "VK_LAYER_KHRONOS_validation"

    /// True when the environment asks for validation (`DEPTHLENS_VALIDATION` set and not "0").
    public static var requestedByEnvironment: Bool {
        guard let v = ProcessInfo.processInfo.environment["DEPTHLENS_VALIDATION"] else { return false }
        return !v.isEmpty && v != "0"
    }

    /// The create-info for a messenger that forwards warnings and errors to `log`.
    /// `log` must outlive the messenger (the context holds both).
    static func messengerCreateInfo(for log: ValidationLog) -> VkDebugUtilsMessengerCreateInfoEXT {
        var info = VkDebugUtilsMessengerCreateInfoEXT()
        info.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT
        info.messageSeverity = Vk.flags(VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT,
                                        VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT)
        info.messageType = Vk.flags(VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT,
                                    VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT,
                                    VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT)
        info.pfnUserCallback = validationCallback
        info.pUserData = Unmanaged.passUnretained(log).toOpaque()
        return info
    }
}

/// The C callback of the debug messenger (Vulkan: `PFN_vkDebugUtilsMessengerCallbackEXT`).
private func validationCallback(_ severity: VkDebugUtilsMessageSeverityFlagBitsEXT,
                                _ types: VkDebugUtilsMessageTypeFlagsEXT,
                                _ data: UnsafePointer<VkDebugUtilsMessengerCallbackDataEXT>?,
                                _ user: UnsafeMutableRawPointer?) -> VkBool32 {
    guard let user, let data else { return VkBool32(VK_FALSE) }
    let log = Unmanaged<ValidationLog>.fromOpaque(user).takeUnretainedValue()
    let level: ValidationLog.Message.Severity
    if severity.rawValue & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT.rawValue != 0 { level = .error }
    else if severity.rawValue & VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT.rawValue != 0 { level = .warning }
    else if severity.rawValue & VK_DEBUG_UTILS_MESSAGE_SEVERITY_INFO_BIT_EXT.rawValue != 0 { level = .info }
    else { level = .verbose }
    let id = data.pointee.pMessageIdName.map { String(cString: $0) } ?? "\(data.pointee.messageIdNumber)"
    let text = data.pointee.pMessage.map { String(cString: $0) } ?? ""
    log.append(.init(severity: level, id: id, text: text))
    return VkBool32(VK_FALSE)
}
