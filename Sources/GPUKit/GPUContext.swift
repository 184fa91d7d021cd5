import CVulkan
import DepthKit
import Foundation

/// The Vulkan instance, the chosen physical device, its logical device and one queue.
///
/// Every GPU object in GPUKit holds its context, so the device outlives what was made from it.
/// A windowed viewer creates its own context with `GPUContextOptions` (GLFW's instance
/// extensions, `VK_KHR_swapchain`, a presentation filter) and uses `instance`, `physicalDevice`,
/// `device`, `queueFamilyIndex` and `queue` for its swapchain.
///
/// `@unchecked Sendable`: every field is a `let` set by `init` (Vulkan handles are C pointers,
/// not Sendable); the device's calls that need external synchronization of the queue
/// (`vkQueueSubmit`, `vkQueuePresentKHR`, `vkDeviceWaitIdle`) are made only under `queueLock`:
/// `withQueue`, `submit`, `present`, `waitIdle` (and ImGui's wait, `ImGuiLayer.setImageCount`).
public final class GPUContext: @unchecked Sendable {
    private let vkInstance: VulkanInstance
    public var instance: VkInstance { vkInstance.handle }
    public let physicalDevice: VkPhysicalDevice
    public let device: VkDevice
    public let queueFamilyIndex: UInt32
    public let queue: VkQueue
    /// The chosen device, as `depthlens devices` lists it.
    public let deviceInfo: GPUDeviceInfo
    /// Every device with why it was or was not chosen.
    public let allDevices: [GPUDeviceInfo]
    public let properties: VkPhysicalDeviceProperties
    /// Warnings and errors of the validation layer; nil when validation is off.
    public var validation: ValidationLog? { vkInstance.validation }
    /// Nanoseconds a timestamp tick; nil when the queue cannot write timestamps.
    public let timestampPeriod: Double?
    /// `VK_EXT_external_memory_host` is enabled; the alignment an imported pointer and size need.
    public let hostImportAlignment: Int?
    /// The `largePoints` feature is enabled (the device has it): point sizes other than 1 work.
    public let largePoints: Bool
    /// `shaderBufferInt64Atomics` is enabled (Vulkan 1.2 device with the feature; lavapipe has it):
    /// the compute point rasterizer's one-pass 64-bit `atomicMin`; without it the 32-bit fallback runs.
    public let bufferInt64Atomics: Bool
    let memoryProperties: VkPhysicalDeviceMemoryProperties
    let getMemoryHostPointerProperties: PFN_vkGetMemoryHostPointerPropertiesEXT?
    /// `vkQueueSubmit` needs external synchronization.
    let queueLock = NSLock()

    /// The device's name: `GPUFilterFactory.backendName`.
    public var name: String { deviceInfo.name }

    /// Creates the instance and device.
    /// - Parameters:
    ///   - deviceSelector: automatic (discrete > integrated > virtual > CPU), an index or a name.
    ///   - options: extra extensions and a queue-family filter for a window; validation override.
    /// - Throws: `GPUError.noVulkanDevice` (one line telling how to get lavapipe) when there is no
    ///   device at all, `GPUError.noSuitableDevice` / `.deviceNotFound`, or `VulkanError`.
    /// Vulkan: `vkCreateInstance`, `vkCreateDevice`, `vkGetDeviceQueue`.
    public init(deviceSelector: GPUDeviceSelector = .fromEnvironment(), options: GPUContextOptions = .init()) throws {
        let validationOn = options.validation ?? ValidationLog.requestedByEnvironment
        let inst = try VulkanInstance(extensions: options.instanceExtensions, validation: validationOn)
        let candidates = try GPUDevices.evaluate(instance: inst, options: options)
        let (pick, all) = try GPUDevices.choose(candidates, selector: deviceSelector)
        guard let family = pick.queueFamily else { throw GPUError.noSuitableDevice(["\(pick.info.name): no queue"]) }

        var props = VkPhysicalDeviceProperties()
        vkGetPhysicalDeviceProperties(pick.physical, &props)
        var memProps = VkPhysicalDeviceMemoryProperties()
        vkGetPhysicalDeviceMemoryProperties(pick.physical, &memProps)

        var extensions = options.deviceExtensions
        var importAlignment: Int?
        if pick.hostImport {
            extensions.append("VK_EXT_external_memory_host")
            var hostProps = VkPhysicalDeviceExternalMemoryHostPropertiesEXT()
            hostProps.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_MEMORY_HOST_PROPERTIES_EXT
            withUnsafeMutablePointer(to: &hostProps) { hp in
                var p2 = VkPhysicalDeviceProperties2()
                p2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2
                p2.pNext = UnsafeMutableRawPointer(hp)
                vkGetPhysicalDeviceProperties2(pick.physical, &p2)
            }
            importAlignment = Int(hostProps.minImportedHostPointerAlignment)
        }

        // The point cloud's gl_PointSize > 1 needs largePoints; enable it only where the device has it.
        var supported = VkPhysicalDeviceFeatures()
        vkGetPhysicalDeviceFeatures(pick.physical, &supported)
        var features = VkPhysicalDeviceFeatures()
        features.largePoints = supported.largePoints
        // The compute point rasterizer's 64-bit atomicMin: core in Vulkan 1.2, enabled only where present.
        var atomics64 = VkPhysicalDeviceShaderAtomicInt64Features()
        atomics64.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_INT64_FEATURES
        if props.apiVersion >= Vk.version(1, 2) && inst.apiVersion >= Vk.version(1, 2) {
            withUnsafeMutablePointer(to: &atomics64) { ap in
                var f2 = VkPhysicalDeviceFeatures2()
                f2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2
                f2.pNext = UnsafeMutableRawPointer(ap)
                vkGetPhysicalDeviceFeatures2(pick.physical, &f2)
            }
        }
        atomics64.pNext = nil
        atomics64.shaderSharedInt64Atomics = 0
        let enable64 = atomics64.shaderBufferInt64Atomics != 0 && supported.shaderInt64 != 0
        if enable64 { features.shaderInt64 = supported.shaderInt64 }   // uint64_t in the shader

        var device: VkDevice?
        var priority: Float = 1
        let result: VkResult = Vk.withCStrings(extensions) { extPtrs in
            withUnsafePointer(to: &features) { fp in
            withUnsafePointer(to: &atomics64) { ap in
            withUnsafePointer(to: &priority) { pp in
                var q = VkDeviceQueueCreateInfo()
                q.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO
                q.queueFamilyIndex = family
                q.queueCount = 1
                q.pQueuePriorities = pp
                return withUnsafePointer(to: &q) { qp in
                    var info = VkDeviceCreateInfo()
                    info.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO
                    info.queueCreateInfoCount = 1
                    info.pQueueCreateInfos = qp
                    info.enabledExtensionCount = UInt32(extensions.count)
                    info.ppEnabledExtensionNames = extPtrs
                    info.pEnabledFeatures = fp
                    info.pNext = enable64 ? UnsafeRawPointer(ap) : nil
                    return vkCreateDevice(pick.physical, &info, nil, &device)
                }
            }
            }
            }
        }
        try vkCheck(result, "vkCreateDevice")
        guard let device else { throw VulkanError(result: VK_ERROR_INITIALIZATION_FAILED, call: "vkCreateDevice") }
        var queue: VkQueue?
        vkGetDeviceQueue(device, family, 0, &queue)
        guard let queue else {
            vkDestroyDevice(device, nil)
            throw VulkanError(result: VK_ERROR_INITIALIZATION_FAILED, call: "vkGetDeviceQueue")
        }

        vkInstance = inst
        physicalDevice = pick.physical
        self.device = device
        self.queue = queue
        queueFamilyIndex = family
        deviceInfo = all[pick.info.index]
        allDevices = all
        properties = props
        memoryProperties = memProps
        largePoints = features.largePoints != 0
        bufferInt64Atomics = enable64
        timestampPeriod = pick.info.timestamps ? Double(props.limits.timestampPeriod) : nil
        if importAlignment != nil, let fn = vkGetDeviceProcAddr(device, "vkGetMemoryHostPointerPropertiesEXT") {
            getMemoryHostPointerProperties = unsafeBitCast(fn, to: PFN_vkGetMemoryHostPointerPropertiesEXT.self)
            hostImportAlignment = importAlignment
        } else {
            getMemoryHostPointerProperties = nil
            hostImportAlignment = nil
        }
    }

    deinit {
        vkDeviceWaitIdle(device)
        vkDestroyDevice(device, nil)
    }

    private static let sharedResult = Locked<Result<GPUContext, Error>?>(nil)

    /// One context for the process, made on first use with `DEPTHLENS_DEVICE` and
    /// `DEPTHLENS_VALIDATION`; a failure is remembered so callers fall back to the CPU once.
    public static func shared() throws -> GPUContext {
        try sharedResult.withLock { shared in
            if let r = shared { return try r.get() }
            let r = Result { try GPUContext() }
            shared = r
            return try r.get()
        }
    }

    /// A memory type among `bits` with `required` properties, preferring those that also have `preferred`.
    func memoryType(bits: UInt32, required: VkMemoryPropertyFlags, preferred: VkMemoryPropertyFlags = 0) -> UInt32? {
        let count = Int(memoryProperties.memoryTypeCount)
        let types = withUnsafeBytes(of: memoryProperties.memoryTypes) { Array($0.bindMemory(to: VkMemoryType.self).prefix(count)) }
        let ok = types.indices.filter { bits & (1 << UInt32($0)) != 0 && types[$0].propertyFlags & required == required }
        let best = ok.first { types[$0].propertyFlags & (required | preferred) == (required | preferred) } ?? ok.first
        return best.map { UInt32($0) }
    }

    /// Waits until the device is idle, holding the queue lock: Vulkan requires every queue of the
    /// device to be externally synchronized for `vkDeviceWaitIdle`, so no other thread may submit
    /// or present meanwhile. Vulkan: `vkDeviceWaitIdle`.
    @discardableResult
    public func waitIdle() -> VkResult {
        queueLock.withLock { vkDeviceWaitIdle(device) }
    }

    /// Runs `body` with the queue while holding the queue lock: `vkQueueSubmit` and
    /// `vkQueuePresentKHR` need the queue externally synchronized, so every use of it goes through here.
    public func withQueue<R>(_ body: (VkQueue) throws -> R) rethrows -> R {
        try queueLock.withLock { try body(queue) }
    }

    /// Submits one command buffer: waits for `wait` (when given) at `waitStages`, signals `signal`
    /// (when given) and then `fence`. Vulkan: `vkQueueSubmit`.
    public func submit(_ commandBuffer: VkCommandBuffer, wait: VkSemaphore? = nil, waitStages: VkPipelineStageFlags = 0,
                       signal: VkSemaphore? = nil, fence: VkFence?) throws {
        var cb: VkCommandBuffer? = commandBuffer
        var waitSem = wait, signalSem = signal, stages = waitStages
        let r: VkResult = withUnsafePointer(to: &cb) { cbp in
            withUnsafePointer(to: &waitSem) { wp in
                withUnsafePointer(to: &signalSem) { sp in
                    withUnsafePointer(to: &stages) { stp in
                        var submit = VkSubmitInfo()
                        submit.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO
                        submit.commandBufferCount = 1
                        submit.pCommandBuffers = cbp
                        if wait != nil {
                            submit.waitSemaphoreCount = 1
                            submit.pWaitSemaphores = wp
                            submit.pWaitDstStageMask = stp
                        }
                        if signal != nil {
                            submit.signalSemaphoreCount = 1
                            submit.pSignalSemaphores = sp
                        }
                        return withQueue { vkQueueSubmit($0, 1, &submit, fence) }
                    }
                }
            }
        }
        try vkCheck(r, "vkQueueSubmit")
    }

    /// Presents `image` of `swapchain` once `wait` is signaled. Returns the result for the caller
    /// to judge (`VK_ERROR_OUT_OF_DATE_KHR` and `VK_SUBOPTIMAL_KHR` ask for a new swapchain).
    /// Vulkan: `vkQueuePresentKHR` (the queue lock held, as for a submit).
    public func present(_ swapchain: VkSwapchainKHR, image: UInt32, wait: VkSemaphore) -> VkResult {
        var waitSem: VkSemaphore? = wait
        var sc: VkSwapchainKHR? = swapchain
        var index = image
        return withUnsafePointer(to: &waitSem) { wp in
            withUnsafePointer(to: &sc) { scp in
                withUnsafePointer(to: &index) { ip in
                    var info = VkPresentInfoKHR()
                    info.sType = VK_STRUCTURE_TYPE_PRESENT_INFO_KHR
                    info.waitSemaphoreCount = 1
                    info.pWaitSemaphores = wp
                    info.swapchainCount = 1
                    info.pSwapchains = scp
                    info.pImageIndices = ip
                    return withQueue { vkQueuePresentKHR($0, &info) }
                }
            }
        }
    }
}
