import CVulkan
import Foundation

/// A `VkInstance`, with the validation messenger when asked for; destroyed on deinit.
final class VulkanInstance {
    let handle: VkInstance
    let validation: ValidationLog?
    let apiVersion: UInt32
    private var messenger: VkDebugUtilsMessengerEXT?

    /// - Parameters:
    ///   - extensions: extra instance extensions (a window system's, from GLFW).
    ///   - validation: turn on `VK_LAYER_KHRONOS_validation` and `VK_EXT_debug_utils`.
    /// Vulkan: `vkCreateInstance`, `vkCreateDebugUtilsMessengerEXT`.
    init(extensions: [String], validation: Bool) throws {
        var available: [VkExtensionProperties]
        do {
            available = try Vk.enumerate(VkExtensionProperties(), { vkEnumerateInstanceExtensionProperties(nil, $0, $1) },
                                         name: "vkEnumerateInstanceExtensionProperties")
        } catch {
            throw GPUError.noVulkanDevice
        }
        let availableNames = Set(available.map { Vk.string($0.extensionName) })
        var enabled = extensions
        var flags: VkInstanceCreateFlags = 0
        // MoltenVK and other portability drivers are only listed when asked for.
        if availableNames.contains("VK_KHR_portability_enumeration") {
            enabled.append("VK_KHR_portability_enumeration")
            flags |= VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR.rawValue
        }
        for e in extensions where !availableNames.contains(e) {
            throw GPUError.unsupported("Vulkan instance extension \(e) is not available")
        }
        var layers: [String] = []
        var log: ValidationLog?
        if validation {
            let layerProps = (try? Vk.enumerate(VkLayerProperties(), { vkEnumerateInstanceLayerProperties($0, $1) },
                                                name: "vkEnumerateInstanceLayerProperties")) ?? []
            guard layerProps.contains(where: { Vk.string($0.layerName) == ValidationLog.layerName }) else {
                throw GPUError.unsupported("DEPTHLENS_VALIDATION is set but \(ValidationLog.layerName) is not installed (apt-get install vulkan-validationlayers)")
            }
            layers.append(ValidationLog.layerName)
            if !enabled.contains("VK_EXT_debug_utils") { enabled.append("VK_EXT_debug_utils") }
            log = ValidationLog(echo: true)
        }

        // Ask for the loader's version, at least 1.1 (external memory and properties2 are core there).
        var loaderVersion: UInt32 = Vk.version(1, 0)
        _ = vkEnumerateInstanceVersion(&loaderVersion)
        let api = min(loaderVersion & ~0xFFF, Vk.version(1, 3))
        guard api >= Vk.version(1, 1) else { throw GPUError.noVulkanDevice }
        apiVersion = api

        var instance: VkInstance?
        var messengerInfo = log.map { ValidationLog.messengerCreateInfo(for: $0) } ?? VkDebugUtilsMessengerCreateInfoEXT()
        let result: VkResult = "depthlens".withCString { appName in
            Vk.withCStrings(enabled) { extPtrs in
                Vk.withCStrings(layers) { layerPtrs in
                    var app = VkApplicationInfo()
                    app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO
                    app.pApplicationName = appName
                    app.pEngineName = appName
                    app.apiVersion = api
                    return withUnsafePointer(to: &app) { appPtr in
                        withUnsafePointer(to: &messengerInfo) { mPtr in
                            var info = VkInstanceCreateInfo()
                            info.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO
                            info.flags = flags
                            // Chained so instance creation and destruction are validated too.
                            info.pNext = log == nil ? nil : UnsafeRawPointer(mPtr)
                            info.pApplicationInfo = appPtr
                            info.enabledExtensionCount = UInt32(enabled.count)
                            info.ppEnabledExtensionNames = extPtrs
                            info.enabledLayerCount = UInt32(layers.count)
                            info.ppEnabledLayerNames = layerPtrs
                            return vkCreateInstance(&info, nil, &instance)
                        }
                    }
                }
            }
        }
        if result == VK_ERROR_INCOMPATIBLE_DRIVER { throw GPUError.noVulkanDevice }
        try vkCheck(result, "vkCreateInstance")
        guard let instance else { throw VulkanError(result: VK_ERROR_INITIALIZATION_FAILED, call: "vkCreateInstance") }
        handle = instance
        self.validation = log

        if let log {
            typealias Create = @convention(c) (VkInstance?, UnsafePointer<VkDebugUtilsMessengerCreateInfoEXT>?,
                                               UnsafePointer<VkAllocationCallbacks>?, UnsafeMutablePointer<VkDebugUtilsMessengerEXT?>?) -> VkResult
            if let fn = vkGetInstanceProcAddr(instance, "vkCreateDebugUtilsMessengerEXT") {
                let create = unsafeBitCast(fn, to: Create.self)
                var info = ValidationLog.messengerCreateInfo(for: log)
                var m: VkDebugUtilsMessengerEXT?
                try vkCheck(create(instance, &info, nil, &m), "vkCreateDebugUtilsMessengerEXT")
                messenger = m
            }
        }
    }

    deinit {
        if let messenger {
            typealias Destroy = @convention(c) (VkInstance?, VkDebugUtilsMessengerEXT?, UnsafePointer<VkAllocationCallbacks>?) -> Void
            if let fn = vkGetInstanceProcAddr(handle, "vkDestroyDebugUtilsMessengerEXT") {
                unsafeBitCast(fn, to: Destroy.self)(handle, messenger, nil)
            }
        }
        vkDestroyInstance(handle, nil)
    }

    func physicalDevices() throws -> [VkPhysicalDevice] {
        try Vk.enumerate(VkPhysicalDevice?.none, { vkEnumeratePhysicalDevices(handle, $0, $1) },
                         name: "vkEnumeratePhysicalDevices").compactMap { $0 }
    }
}
