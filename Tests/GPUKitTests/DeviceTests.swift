import XCTest
import Foundation
@testable import GPUKit
import CVulkan

final class DeviceTests: GPUTestCase {
    func testContextHasDeviceAndQueue() throws {
        XCTAssertFalse(context.name.isEmpty)
        XCTAssertTrue(context.deviceInfo.chosen)
        XCTAssertNil(context.deviceInfo.rejectedReason)
        XCTAssertGreaterThanOrEqual(context.properties.apiVersion, Vk.version(1, 1))
    }

    func testListMarksExactlyOneChosenAndEncodesAsJSON() throws {
        let list = try GPUDevices.list(selector: .automatic)
        XCTAssertFalse(list.isEmpty)
        XCTAssertEqual(list.filter(\.chosen).count, 1)
        let data = try JSONEncoder().encode(list)
        let back = try JSONDecoder().decode([GPUDeviceInfo].self, from: data)
        XCTAssertEqual(back, list)
        let json = String(decoding: data, as: UTF8.self)
        XCTAssertTrue(json.contains("\"apiVersion\""))
    }

    func testSelectByIndexAndName() throws {
        let list = try GPUDevices.list(selector: .automatic)
        let chosen = try XCTUnwrap(list.first(where: \.chosen))
        let byIndex = try GPUDevices.list(selector: .index(chosen.index))
        XCTAssertEqual(byIndex.first(where: \.chosen)?.name, chosen.name)
        let byName = try GPUDevices.list(selector: .name(String(chosen.name.prefix(4)).uppercased()))
        XCTAssertEqual(byName.first(where: \.chosen)?.name, chosen.name)
    }

    func testBadSelectorsSayWhy() throws {
        XCTAssertThrowsError(try GPUContext(deviceSelector: .index(999), options: .init(validation: false))) { e in
            XCTAssertTrue("\(e)".contains("no Vulkan device 999"), "\(e)")
        }
        XCTAssertThrowsError(try GPUContext(deviceSelector: .name("no-such-gpu"), options: .init(validation: false))) { e in
            XCTAssertTrue("\(e)".contains("no-such-gpu"), "\(e)")
        }
        XCTAssertEqual(GPUDeviceSelector.parse("2"), .index(2))
        XCTAssertEqual(GPUDeviceSelector.parse("llvmpipe"), .name("llvmpipe"))
    }

    func testQueueFilterRejectionIsReported() throws {
        let opts = GPUContextOptions(queueFamilyFilter: { _, _, _ in false }, validation: false)
        XCTAssertThrowsError(try GPUContext(deviceSelector: .automatic, options: opts)) { e in
            XCTAssertTrue("\(e)".contains("presentation"), "\(e)")
        }
    }

    func testNoDeviceMessageIsOneActionableLine() {
        let text = GPUError.noVulkanDevice.description
        XCTAssertFalse(text.contains("\n"))
        XCTAssertTrue(text.contains("apt-get install mesa-vulkan-drivers"))
    }

    func testVulkanErrorOnlyForNegativeResults() throws {
        XCTAssertEqual(try vkCheck(VK_TIMEOUT, "vkWaitForFences"), VK_TIMEOUT)
        XCTAssertThrowsError(try vkCheck(VK_ERROR_DEVICE_LOST, "vkQueueSubmit")) { e in
            XCTAssertEqual(e as? VulkanError, VulkanError(result: VK_ERROR_DEVICE_LOST, call: "vkQueueSubmit"))
            XCTAssertTrue("\(e)".contains("VK_ERROR_DEVICE_LOST"))
        }
    }
}
