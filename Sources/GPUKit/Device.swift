import CVulkan
import Foundation

/// One Vulkan physical device as `depthlens devices` shows it (Codable for `--json`).
public struct GPUDeviceInfo: Codable, Sendable, Equatable, CustomStringConvertible {
    /// Index in `vkEnumeratePhysicalDevices` order (what `--device N` takes).
    public var index: Int
    public var name: String
    /// "discrete", "integrated", "virtual", "cpu" or "other".
    public var type: String
    /// Vulkan API version the device supports, "1.3.230".
    public var apiVersion: String
    public var driverName: String
    public var driverInfo: String
    public var vendorID: UInt32
    public var deviceID: UInt32
    /// True for the device a context with the same selector would use.
    public var chosen: Bool
    /// Why the device cannot be used; nil when it can.
    public var rejectedReason: String?
    /// Host-memory import (`VK_EXT_external_memory_host`) is available: uploads without a copy.
    public var hostMemoryImport: Bool
    /// The chosen queue family can write timestamps (`--bench` dispatch times).
    public var timestamps: Bool

    public var description: String {
        let mark = chosen ? "*" : " "
        let status = rejectedReason.map { "rejected: \($0)" } ?? "ok"
        return "\(mark) \(index): \(name) (\(type), Vulkan \(apiVersion), \(driverName) \(driverInfo)) \(status)"
    }
}

/// Which device a context uses.
public enum GPUDeviceSelector: Sendable, Equatable, CustomStringConvertible {
    /// Discrete > integrated > virtual > CPU, first in enumeration order within a type.
    case automatic
    /// `vkEnumeratePhysicalDevices` index.
    case index(Int)
    /// A case-insensitive substring of the device name.
    case name(String)

    /// `DEPTHLENS_DEVICE` (an index or a name) when set, else automatic.
    public static func fromEnvironment() -> GPUDeviceSelector {
        guard let v = ProcessInfo.processInfo.environment["DEPTHLENS_DEVICE"], !v.isEmpty else { return .automatic }
        return parse(v)
    }

    /// "3" → index 3, anything else → name.
    public static func parse(_ s: String) -> GPUDeviceSelector {
        if let i = Int(s) { return .index(i) }
        return .name(s)
    }

    public var description: String {
        switch self {
        case .automatic: return "automatic"
        case .index(let i): return "device \(i)"
        case .name(let n): return "device \"\(n)\""
        }
    }
}

/// What a context needs from a device beyond depthlens' own needs (a window's presentation support).
public struct GPUContextOptions {
    /// Instance extensions to enable (GLFW's `glfwGetRequiredInstanceExtensions`).
    public var instanceExtensions: [String]
    /// Device extensions to enable (`VK_KHR_swapchain`); a device without them is rejected.
    public var deviceExtensions: [String]
    /// Accepts a queue family (e.g. `glfwGetPhysicalDevicePresentationSupport`); nil accepts any.
    public var queueFamilyFilter: ((VkInstance, VkPhysicalDevice, UInt32) -> Bool)?
    /// Validation layer on or off; nil reads `DEPTHLENS_VALIDATION`.
    public var validation: Bool?

    public init(instanceExtensions: [String] = [], deviceExtensions: [String] = [],
                queueFamilyFilter: ((VkInstance, VkPhysicalDevice, UInt32) -> Bool)? = nil, validation: Bool? = nil) {
        self.instanceExtensions = instanceExtensions
        self.deviceExtensions = deviceExtensions
        self.queueFamilyFilter = queueFamilyFilter
        self.validation = validation
    }
}

/// Lists and ranks the machine's Vulkan devices.
public enum GPUDevices {
    /// Every physical device with the one `selector` would choose marked `chosen`, the others'
    /// rejection reasons filled in. Throws `GPUError.noVulkanDevice` when there is none at all.
    public static func list(selector: GPUDeviceSelector = .fromEnvironment()) throws -> [GPUDeviceInfo] {
        let instance = try VulkanInstance(extensions: [], validation: false)
        let candidates = try evaluate(instance: instance, options: GPUContextOptions())
        return (try? choose(candidates, selector: selector))?.all ?? candidates.map(\.info)
    }

    /// A device with its evaluation.
    struct Candidate {
        var physical: VkPhysicalDevice
        var info: GPUDeviceInfo
        var queueFamily: UInt32?
        var rank: Int
        var hostImport: Bool
    }

    static func evaluate(instance: VulkanInstance, options: GPUContextOptions) throws -> [Candidate] {
        let physicals = try instance.physicalDevices()
        guard !physicals.isEmpty else { throw GPUError.noVulkanDevice }
        return physicals.enumerated().map { i, pd in evaluate(instance: instance, physical: pd, index: i, options: options) }
    }

    static func evaluate(instance: VulkanInstance, physical pd: VkPhysicalDevice, index: Int,
                         options: GPUContextOptions) -> Candidate {
        var props = VkPhysicalDeviceProperties()
        vkGetPhysicalDeviceProperties(pd, &props)
        let extensions = Set(((try? Vk.enumerate(VkExtensionProperties(), { vkEnumerateDeviceExtensionProperties(pd, nil, $0, $1) },
                                                 name: "vkEnumerateDeviceExtensionProperties")) ?? [])
                                .map { Vk.string($0.extensionName) })
        var driverName = "", driverInfo = ""
        if props.apiVersion >= Vk.version(1, 2) || extensions.contains("VK_KHR_driver_properties") {
            var driver = VkPhysicalDeviceDriverProperties()
            driver.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES
            withUnsafeMutablePointer(to: &driver) { dp in
                var p2 = VkPhysicalDeviceProperties2()
                p2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2
                p2.pNext = UnsafeMutableRawPointer(dp)
                vkGetPhysicalDeviceProperties2(pd, &p2)
            }
            driverName = Vk.string(driver.driverName)
            driverInfo = Vk.string(driver.driverInfo)
        }
        let (type, rank): (String, Int)
        switch props.deviceType {
        case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: (type, rank) = ("discrete", 0)
        case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: (type, rank) = ("integrated", 1)
        case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: (type, rank) = ("virtual", 2)
        case VK_PHYSICAL_DEVICE_TYPE_CPU: (type, rank) = ("cpu", 3)
        default: (type, rank) = ("other", 4)
        }

        let families = (try? Vk.enumerate(VkQueueFamilyProperties(), { c, p in
            vkGetPhysicalDeviceQueueFamilyProperties(pd, c, p); return VK_SUCCESS
        }, name: "vkGetPhysicalDeviceQueueFamilyProperties")) ?? []
        let needed = Vk.flags(VK_QUEUE_GRAPHICS_BIT, VK_QUEUE_COMPUTE_BIT)
        let capable = families.indices.filter { families[$0].queueFlags & needed == needed && families[$0].queueCount > 0 }
        let accepted = capable.filter { options.queueFamilyFilter?(instance.handle, pd, UInt32($0)) ?? true }
        let family = accepted.first.map { UInt32($0) }

        var reason: String?
        if props.apiVersion < Vk.version(1, 1) {
            reason = "Vulkan \(Vk.versionString(props.apiVersion)) device, 1.1 required"
        } else if capable.isEmpty {
            reason = families.contains { $0.queueFlags & VK_QUEUE_COMPUTE_BIT.rawValue != 0 }
                ? "no queue family with both graphics and compute" : "no compute queue"
        } else if accepted.isEmpty {
            reason = "no queue family supports presentation"
        } else if let missing = options.deviceExtensions.first(where: { !extensions.contains($0) }) {
            reason = "missing device extension \(missing)"
        } else if let missing = missingFormatFeature(pd) {
            reason = missing
        }
        let hostImport = extensions.contains("VK_EXT_external_memory_host")
        let timestamps = family.map { families[Int($0)].timestampValidBits > 0 && props.limits.timestampPeriod > 0 } ?? false
        let info = GPUDeviceInfo(index: index, name: Vk.string(props.deviceName), type: type,
                                 apiVersion: Vk.versionString(props.apiVersion), driverName: driverName,
                                 driverInfo: driverInfo, vendorID: props.vendorID, deviceID: props.deviceID,
                                 chosen: false, rejectedReason: reason, hostMemoryImport: hostImport,
                                 timestamps: timestamps)
        return Candidate(physical: pd, info: info, queueFamily: family, rank: rank, hostImport: hostImport)
    }

    /// The format features every kernel relies on, or why the device lacks one.
    private static func missingFormatFeature(_ pd: VkPhysicalDevice) -> String? {
        let needs: [(VkFormat, String, [VkFormatFeatureFlagBits])] = [
            (VK_FORMAT_R8G8B8A8_UNORM, "R8G8B8A8_UNORM",
             [VK_FORMAT_FEATURE_SAMPLED_IMAGE_BIT, VK_FORMAT_FEATURE_SAMPLED_IMAGE_FILTER_LINEAR_BIT,
              VK_FORMAT_FEATURE_COLOR_ATTACHMENT_BIT, VK_FORMAT_FEATURE_TRANSFER_SRC_BIT, VK_FORMAT_FEATURE_TRANSFER_DST_BIT]),
            (VK_FORMAT_R32_UINT, "R32_UINT", [VK_FORMAT_FEATURE_STORAGE_IMAGE_BIT]),
            (VK_FORMAT_R32_SFLOAT, "R32_SFLOAT", [VK_FORMAT_FEATURE_SAMPLED_IMAGE_BIT, VK_FORMAT_FEATURE_TRANSFER_DST_BIT]),
        ]
        for (format, name, features) in needs {
            var fp = VkFormatProperties()
            vkGetPhysicalDeviceFormatProperties(pd, format, &fp)
            for f in features where fp.optimalTilingFeatures & f.rawValue == 0 {
                return "\(name) lacks format feature 0x\(String(f.rawValue, radix: 16)) in optimal tiling"
            }
        }
        return nil
    }

    /// The selected candidate, plus all infos with `chosen` set.
    static func choose(_ candidates: [Candidate], selector: GPUDeviceSelector) throws -> (chosen: Candidate, all: [GPUDeviceInfo]) {
        let usable = candidates.filter { $0.info.rejectedReason == nil }
        let pick: Candidate
        switch selector {
        case .automatic:
            guard let best = usable.min(by: { ($0.rank, $0.info.index) < ($1.rank, $1.info.index) }) else {
                throw GPUError.noSuitableDevice(candidates.map { "\($0.info.name): \($0.info.rejectedReason ?? "?")" })
            }
            pick = best
        case .index(let i):
            guard let c = candidates.first(where: { $0.info.index == i }) else {
                throw GPUError.deviceNotFound("no Vulkan device \(i): there are \(candidates.count) (see `depthlens devices`)")
            }
            if let r = c.info.rejectedReason { throw GPUError.deviceNotFound("Vulkan device \(i) (\(c.info.name)) cannot be used: \(r)") }
            pick = c
        case .name(let n):
            let matches = candidates.filter { $0.info.name.localizedCaseInsensitiveContains(n) }
            guard !matches.isEmpty else {
                throw GPUError.deviceNotFound("no Vulkan device named \"\(n)\" (see `depthlens devices`)")
            }
            guard let c = matches.first(where: { $0.info.rejectedReason == nil }) else {
                throw GPUError.deviceNotFound("Vulkan device \(matches[0].info.name) cannot be used: \(matches[0].info.rejectedReason ?? "?")")
            }
            pick = c
        }
        let all = candidates.map { c -> GPUDeviceInfo in
            var info = c.info
            info.chosen = info.index == pick.info.index
            return info
        }
        return (pick, all)
    }
}
