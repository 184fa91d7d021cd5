import ArgumentParser
import Capture
import DepthKit
import Foundation
import GPUKit

struct DevicesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract: "List the Vulkan devices (the one depthlens would choose, and why the others were rejected), the V4L2 cameras with their formats, sizes and frame rates, and the thermal state.",
        discussion: "--json prints one object: {\"vulkan\": [...], \"cameras\": [...], \"thermal\": {\"state\": ..., \"zones\": [...]}}. "
            + "Cameras are V4L2 nodes grouped by bus info (a RealSense's depth, IR, color and metadata nodes are one camera), "
            + "each with the --source that opens it: {\"busInfo\", \"card\", \"driver\", \"source\", \"nodes\": [{\"path\", \"node\", \"formats\", ...}]}. "
            + "Thermal zones are read from /sys/class/thermal, or from DEPTHLENS_THERMAL_DIR when set."
    )

    @Option(help: "Prefer this device (index or part of the name) over automatic choice.")
    var device: String?
    @Flag(help: "Print JSON.")
    var json = false

    /// What `--json` prints.
    struct Listing: Encodable {
        var vulkan: [GPUDeviceInfo]
        /// V4L2 nodes grouped by bus info: one entry per camera, its nodes inside.
        var cameras: [V4L2CameraGroup]
        var thermal: ThermalReading
    }

    func run() throws {
        GPUBackend.select(device: device)
        let listing = Listing(vulkan: try GPUDevices.list(), cameras: V4L2Devices.groups(V4L2Devices.list(paths: V4L2Devices.paths())),
                              thermal: ThermalZones.read())
        if json {
            let enc = JSONEncoder()
            enc.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try enc.encode(listing), as: UTF8.self))
            return
        }
        print("Vulkan devices:")
        for d in listing.vulkan { print(d.description) }
        print("Cameras:")
        if listing.cameras.isEmpty { print("  none (no /dev/video*)") }
        for c in listing.cameras { print(c.description.split(separator: "\n").map { "  " + $0 }.joined(separator: "\n")) }
        print("Thermal: \(listing.thermal.summary)")
        for z in listing.thermal.zones {
            let trips = z.trips.map { String(format: "%@ %.0f", $0.type, $0.celsius) }.joined(separator: ", ")
            print(String(format: "  %@ %@: %.1f °C, %@", z.name, z.type, z.celsius, z.state.rawValue) + (trips.isEmpty ? " (no trip points)" : " (trips: \(trips))"))
        }
        for p in listing.thermal.problems { print("  \(p)") }
    }
}
